"""The SPIR-V lowering: the shared KIR -> LLVM lowering (lower.py) with what Vulkan compute needs
instead -- resource handles and element pointers, 32-bit words for 8/16-bit storage, traps without early
exits, 16-bit float bits in i32, saturating casts. poot/jit/llvm/targets/spirv/target.py says why for each."""
from __future__ import annotations

import dataclasses

from poot import dtypes as dt
from poot.dtypes import DType
from poot.errors import LoweringError
from poot.jit.kir.model import TRAP_BOUNDS, BufferParam, Trap
from poot.jit.llvm.ir import float_const, int_const, mem_type, reg_type
from poot.jit.llvm.exact_rem import ExactRemLowering
from poot.jit.llvm.lower import Lowering
from poot.jit.llvm.targets.spirv.intrinsics import fused_fma32
from poot.jit.llvm.targets.spirv.widen import WIDE
from poot.jit.llvm.workgroup import has_barrier

PACKED = {dt.bool_: 8, dt.bfloat16: 16, dt.int8: 8, dt.uint8: 8, dt.int16: 16, dt.uint16: 16}  # in i32 words
TRAP_TICKET_WORD = 2
_SFX = {"float": "f32", "double": "f64", "half": "f16", "i32": "i32", "i64": "i64"}



def _handle_type(elem: str, writable: bool) -> str:
    return f'target("spirv.VulkanBuffer", [0 x {elem}], 12, {int(writable)})'


def _mangled(elem: str, writable: bool) -> str:
    return f"tspirv.VulkanBuffer_a0{_SFX[elem]}_12_{int(writable)}t"


def storage_type(dtype: DType) -> str:
    return "i32" if dtype in PACKED else mem_type(dtype)


def walk(node):
    """Every KIR node under `node` (statements, expressions, declarations), depth first."""
    if isinstance(node, (tuple, list)):
        for x in node:
            yield from walk(x)
    elif dataclasses.is_dataclass(node):
        yield node
        for f in dataclasses.fields(node):
            if f.name not in ("traps", "workgroup"):
                yield from walk(getattr(node, f.name))


class SpirvLowering(ExactRemLowering, Lowering):
    def __init__(self, kernel, module):
        super().__init__(kernel, module, as_global=11, as_shared=3)
        self.handles: dict[str, tuple[str, str, bool]] = {}     # name -> (handle, element type, writable)
        self.barriers = any(map(has_barrier, kernel.body))
        self.traps = kernel.checks or any(isinstance(n, Trap) for n in walk(kernel.body))
        self.trapped = self.trap_code = None

    # -- traps without early exits ----------------------------------------------------------------
    # LLVM's SPIR-V structurizer emits invalid SPIR-V (merge blocks out of place) for early returns out
    # of nested selections, and for the flag-guarded chains that would emulate them. So a trap does not
    # end the thread: it records the trap and sets `trapped`, and from then on the thread's stores and
    # atomics are skipped (each sits in a one-armed `if`, the shape the structurizer handles). The
    # thread runs on with no effect, reaching every barrier; loads stay in bounds (index clamped).
    # A trap site only keeps the thread's first code in a local; the thread reports it to the trap
    # buffer once, at the end of the kernel (report_trap). Atomics at every site made lavapipe's
    # compiler (llvmpipe, which compiles at the first dispatch, in every process) take ~20 s on a
    # gather kernel with a few hundred bound checks; local stores are folded into selects.
    def init_flags(self) -> None:
        if self.traps:
            self.trapped = self.f.entry_op("alloca i1", hint="trapped")
            self.trap_code = self.f.entry_op("alloca i32", hint="trapcode")
            self.f.emit(f"store i1 false, ptr {self.trapped}")
            self.f.emit(f"store i32 0, ptr {self.trap_code}")

    def on_trap_exit(self) -> None:
        self.f.emit(f"store i1 true, ptr {self.trapped}")

    # -- resources ------------------------------------------------------------------------------
    def bind(self, name: str, binding: int, elem: str, writable: bool) -> None:
        t, m = _handle_type(elem, writable), _mangled(elem, writable)
        fn = self.m.intrinsic(f"llvm.spv.resource.handlefrombinding.{m}", t, "i32, i32, i32, i32, ptr")
        label = f"b{binding}"                       # the resource name: must differ per binding
        self.m.globals.append(f'@.str.{label} = private unnamed_addr constant [{len(label) + 1} x i8] c"{label}\\00"')
        h = self.f.entry_op(f"call {t} {fn}(i32 0, i32 {binding}, i32 1, i32 0, ptr @.str.b{binding})", hint="h")
        self.handles[name] = (h, elem, writable)

    def pointer(self, name: str, index: str, at_entry: bool = False) -> str:
        h, elem, w = self.handles[name]
        t, m = _handle_type(elem, w), _mangled(elem, w)
        fn = self.m.intrinsic(f"llvm.spv.resource.getpointer.p11.{m}", "ptr addrspace(11)", f"{t}, i32")
        text = f"call ptr addrspace(11) {fn}({t} {h}, i32 {index})"
        return self.f.entry_op(text, hint="p") if at_entry else self.op(text)

    def meta_word(self, word: int, ty: str = "i32") -> str:
        key = (word, ty)
        if key not in self.meta_cache:
            if ty == "i32":
                p = self.pointer("$meta", str(word), at_entry=True)
                v = self.f.entry_op(f"load i32, ptr addrspace(11) {p}, align 4", hint="meta")
            else:                                   # i64 / double: two words, little-endian
                lo, hi = (self.f.entry_op(f"zext i32 {self.meta_word(word + k)} to i64") for k in (0, 1))
                v = self.f.entry_op(f"or i64 {lo}, {self.f.entry_op(f'shl i64 {hi}, 32')}")
                if ty == "double":
                    v = self.f.entry_op(f"bitcast i64 {v} to double")
            self.meta_cache[key] = v
        return self.meta_cache[key]

    # -- checked element access -----------------------------------------------------------------
    def index32(self, index):
        """(i32 index value, i1 'not representable as an index' or None)."""
        v, t = self.expr(index), index.dtype
        if t.bits == 64:
            bad = self.op(f"icmp ugt i64 {v}, 4294967295")
            return self.op(f"trunc i64 {v} to i32"), bad
        if t.bits < 32:
            v = self.op(f"{'sext' if dt.is_signed(t) else 'zext'} {reg_type(t)} {v} to i32")
        return v, (self.op(f"icmp slt i32 {v}, 0") if dt.is_signed(t) else None)

    def checked(self, name: str, index):
        decl = self.decl[name]
        i, bad = self.index32(index)
        if not self.k.checks:
            return i, None
        n = self._e_Len_of(name) if isinstance(decl, BufferParam) else str(decl.size)
        ok = self.op(f"icmp ult i32 {i}, {n}")
        if bad is not None:
            ok = self.op(f"and i1 {ok}, {self.op(f'xor i1 {bad}, true')}")
        return i, ok

    def _e_Len_of(self, name: str) -> str:
        return self.meta_word(self.layout.lengths[self.k.buffers.index(self.decl[name])])

    def trap_unless(self, ok) -> None:
        """The base lowering's bounds trap, except that the invocation goes on after writing the trap word
        (load_checked then reads zero, effect_checked skips the store)."""
        trap, fine = self.f.label("oob"), self.f.label("inb")
        self.f.cbr(ok, fine, trap)
        self.f.start(trap)
        self.write_trap(TRAP_BOUNDS)
        self.f.br(fine)
        self.f.start(fine)

    def load_checked(self, ok, i: str, load, ty: str) -> str:
        """`load(index)` with a failed bound trapping and reading zero (at a clamped, valid index)."""
        if ok is None:
            return load(i)
        self.trap_unless(ok)
        v = load(self.op(f"select i1 {ok}, i32 {i}, i32 0"))
        zero = "false" if ty == "i1" else float_const(0.0) if ty in ("float", "double") else "0"
        return self.op(f"select i1 {ok}, {ty} {v}, {ty} {zero}")

    def effect_checked(self, ok, effect, ty: str | None = None):
        """`effect()` (a store or atomic) where in bounds and not trapped; a failed bound traps."""
        if ok is not None:
            self.trap_unless(ok)
        cond = ok
        if self.trapped is not None:
            live = self.op(f"xor i1 {self.op(f'load i1, ptr {self.trapped}')}, true")
            cond = live if ok is None else self.op(f"and i1 {ok}, {live}")
        if cond is None:
            return effect()
        go, done = self.f.label("do"), self.f.label("done")
        start = self.f.blocks[-1][0]
        self.f.cbr(cond, go, done)
        self.f.start(go)
        v = effect()
        end = self.f.blocks[-1][0]
        self.f.br(done)
        self.f.start(done)
        if ty is None:
            return None
        zero = float_const(0.0) if ty in ("float", "double") else "0"
        return self.op(f"phi {ty} [ {v}, %{end} ], [ {zero}, %{start} ]")

    def slot(self, name: str, i: str) -> tuple[str, str | None]:
        """(pointer, shift) of element i: the word holding it and its bit offset when packed."""
        decl = self.decl[name]
        bits = PACKED.get(decl.dtype)
        if not isinstance(decl, BufferParam):
            p = self.op(f"getelementptr inbounds [{decl.size} x {storage_type(decl.dtype)}], "
                        f"ptr addrspace(3) {self.shared_ptrs[name]}, i32 0, i32 {i}")
            return p, None
        if bits is None:
            return self.pointer(name, i), None
        per = 32 // bits
        p = self.pointer(name, self.op(f"lshr i32 {i}, {per.bit_length() - 1}"))
        return p, self.op(f"mul i32 {self.op(f'and i32 {i}, {per - 1}')}, {bits}")

    def unpack(self, w: str, dtype) -> str:
        """The register value of a `dtype` element held in the low bits of i32 `w` (ints: extended)."""
        if dtype is dt.bool_:
            return self.op(f"icmp ne i32 {self.op(f'and i32 {w}, 255')}, 0")
        if dtype is dt.bfloat16:
            return self.op(f"bitcast i32 {self.op(f'shl i32 {w}, 16')} to float")
        return self.extend(w, dtype)

    def extend(self, w: str, dtype) -> str:
        """Sign- or zero-extend the low dtype.bits of i32 `w`."""
        if dt.is_signed(dtype):
            up = self.op(f"shl i32 {w}, {32 - dtype.bits}")
            return self.op(f"ashr i32 {up}, {32 - dtype.bits}")
        return self.op(f"and i32 {w}, {(1 << dtype.bits) - 1}")

    def pack(self, v: str, dtype) -> str:
        if dtype is dt.bool_:
            return self.op(f"zext i1 {v} to i32")
        if dtype is dt.bfloat16:
            return self.op(f"lshr i32 {self.bf16_bits32(v)}, 16")
        return v                                    # a narrow int, computed in i32 (spirv_widen.py)

    def _e_Fma(self, e) -> str:
        """A float32 fma with one rounding (spirv_intrinsics.fused_fma32). The 16-bit floats' fma computes in
        float, where their product is exact, so the native Fma gives what the shared lowering does."""
        if e.dtype is not dt.float32:
            return super()._e_Fma(e)
        return self.call(fused_fma32(self.m), "float", [("float", self.expr(x)) for x in (e.a, e.b, e.c)])

    def _e_Cast(self, e) -> str:
        """`Cast(Read(narrow int scalar), wide int)`, spirv_widen's spelling of a narrow scalar param, is its
        extended word; every other cast (a bool or bfloat16 scalar's included: their reads give an i1 and a
        float) converts the value the read gives."""
        x = e.x
        if type(x).__name__ == "Read" and x.dtype in WIDE and x.name in self.scalar_words and \
                dt.is_int(e.dtype) and e.dtype.bits == 32:
            return self.extend(self.meta_word(self.scalar_words[x.name][0]), x.dtype)  # a narrow scalar
        return super()._e_Cast(e)

    def binary(self, op: str, a: str, b: str, t) -> str:
        """Signed 64-bit ordering as unsigned ordering of the values with their sign bits flipped:
        lavapipe evaluates a signed 64-bit compare of two widened 32-bit values wrongly (`i64(j) <=
        i64(i)` always true: a causal mask written with int64 iotas masked nothing), while unsigned
        64-bit compares are right."""
        if op in ("lt", "le", "gt", "ge") and dt.is_int(t) and dt.is_signed(t) and t.bits == 64:
            flip = -(1 << 63)
            a, b = self.op(f"xor i64 {a}, {flip}"), self.op(f"xor i64 {b}, {flip}")
            return self.op(f"icmp u{op} i64 {a}, {b}")
        return super().binary(op, a, b, t)

    def round_to(self, v: str, dtype) -> str:
        """f16 rounding in integer operations: NVIDIA's Vulkan compiler drops the f32 -> f16 -> f32
        conversion pair the shared lowering rounds with, so an f16 intermediate kept f32 precision
        there (and nowhere else)."""
        if dtype is dt.float16:
            return self.f16_round(v)
        return super().round_to(v, dtype)

    def f16_round(self, v: str) -> str:
        """`v` rounded to the nearest float16 (ties to even; past 65504 to infinity; f16 subnormals
        as multiples of 2**-24; NaN kept and quieted), still a float."""
        o = self.op
        b = o(f"bitcast float {v} to i32")
        a = o(f"and i32 {b}, 2147483647")
        sign = o(f"and i32 {b}, -2147483648")
        odd = o(f"and i32 {o(f'lshr i32 {a}, 13')}, 1")                    # normal: keep 10 bits
        bias = o(f"add i32 {odd}, 4095")
        normal = o(f"and i32 {o(f'add i32 {a}, {bias}')}, -8192")
        too_big = o(f"icmp ugt i32 {normal}, 1199562752")                   # past 65504
        normal = o(f"select i1 {too_big}, i32 2139095040, i32 {normal}")
        shift = o(f"sub i32 126, {o(f'lshr i32 {a}, 23')}")                  # subnormal: to 2**-24
        shift = o(f"select i1 {o(f'icmp ugt i32 {shift}, 31')}, i32 31, i32 {shift}")
        m = o(f"or i32 {o(f'and i32 {a}, 8388607')}, 8388608")
        half = o(f"shl i32 1, {o(f'sub i32 {shift}, 1')}")
        m_odd = o(f"and i32 {o(f'lshr i32 {m}, {shift}')}, 1")
        m_bias = o(f"add i32 {half}, {o(f'sub i32 {m_odd}, 1')}")
        q = o(f"lshr i32 {o(f'add i32 {m}, {m_bias}')}, {shift}")
        tiny = o(f"fmul float {o(f'uitofp i32 {q} to float')}, {float_const(2.0 ** -24)}")
        r = o(f"select i1 {o(f'icmp ult i32 {a}, 947912704')}, i32 {o(f'bitcast float {tiny} to i32')}, "
              f"i32 {normal}")                                               # below 2**-14
        nan = o(f"icmp ugt i32 {a}, 2139095040")
        r = o(f"select i1 {nan}, i32 {o(f'or i32 {a}, 4194304')}, i32 {r}")
        return o(f"bitcast i32 {o(f'or i32 {r}, {sign}')} to float")

    def f32_round_odd(self, v: str) -> str:
        """double `v` rounded to float32 towards zero, the last bit set where that was inexact (round to
        odd): rounding that to float16 (f16_round) rounds `v` itself correctly, as 24 bits are more than
        11 + 2. Vulkan's (and naga's) double -> half conversion goes through a round-to-nearest float32
        and rounded twice: 65519.99999 became inf, 1 + 2**-11 + 2**-40 became 1, 2**-25 + 2**-60 0."""
        o = self.op
        near = o(f"fptrunc double {v} to float")
        back = o(f"fpext float {near} to double")
        b = o(f"bitcast float {near} to i32")
        abs_v, abs_back = (self.intr("llvm.fabs.f64", "double", [("double", x)]) for x in (v, back))
        b = o(f"select i1 {o(f'fcmp ogt double {abs_back}, {abs_v}')}, i32 {o(f'sub i32 {b}, 1')}, i32 {b}")
        b = o(f"select i1 {o(f'fcmp one double {back}, {v}')}, i32 {o(f'or i32 {b}, 1')}, i32 {b}")
        return o(f"bitcast i32 {b} to float")

    # 16-bit floats move through i32 (naga has no i16): their bits are the low half of a word
    def bits16(self, v: str, dtype) -> str:
        """The 16 bits of a bf16/f16 register value (exactly representable: it was rounded) in an i32."""
        if dtype is dt.bfloat16:
            return self.op(f"lshr i32 {self.bf16_bits32(v)}, 16")
        o = self.op
        b = o(f"bitcast float {v} to i32")
        sign = o(f"and i32 {o(f'lshr i32 {b}, 16')}, 32768")
        e32 = o(f"and i32 {o(f'lshr i32 {b}, 23')}, 255")
        mant = o(f"and i32 {b}, 8388607")
        e16 = o(f"shl i32 {o(f'sub i32 {e32}, 112')}, 10")
        normal = o(f"or i32 {e16}, {o(f'lshr i32 {mant}, 13')}")
        full = o(f"or i32 {mant}, 8388608")
        sub = o(f"lshr i32 {full}, {o(f'sub i32 126, {e32}')}")
        quiet = o(f"select i1 {o(f'icmp ne i32 {mant}, 0')}, i32 512, i32 0")
        special = o(f"or i32 31744, {quiet}")
        r = o(f"select i1 {o(f'icmp ugt i32 {e32}, 112')}, i32 {normal}, i32 {sub}")
        r = o(f"select i1 {o(f'icmp ult i32 {e32}, 103')}, i32 0, i32 {r}")      # zero (f32 exponent 0..102)
        r = o(f"select i1 {o(f'icmp eq i32 {e32}, 255')}, i32 {special}, i32 {r}")
        return o(f"or i32 {sign}, {r}")

    def from_bits16(self, w: str, dtype) -> str:
        """The float register value of bf16/f16 bits in the low half of i32 `w`."""
        if dtype is dt.bfloat16:
            return self.op(f"bitcast i32 {self.op(f'shl i32 {w}, 16')} to float")
        o = self.op
        sign = o(f"shl i32 {o(f'and i32 {w}, 32768')}, 16")
        e = o(f"and i32 {o(f'lshr i32 {w}, 10')}, 31")
        m = o(f"and i32 {w}, 1023")
        e32 = o(f"shl i32 {o(f'add i32 {e}, 112')}, 23")
        normal = o(f"or i32 {e32}, {o(f'shl i32 {m}, 13')}")
        special = o(f"or i32 2139095040, {o(f'shl i32 {m}, 13')}")
        bits = o(f"select i1 {o(f'icmp eq i32 {e}, 31')}, i32 {special}, i32 {normal}")
        scaled = o(f"fmul float {o(f'uitofp i32 {m} to float')}, {float_const(2.0 ** -24)}")  # subnormal
        tiny = o(f"bitcast float {scaled} to i32")
        bits = o(f"select i1 {o(f'icmp eq i32 {e}, 0')}, i32 {tiny}, i32 {bits}")
        return o(f"bitcast i32 {o(f'or i32 {bits}, {sign}')} to float")

    def _e_Bitcast(self, e) -> str:
        src, dst = e.x.dtype, e.dtype
        if not any(d.bits == 16 and dt.is_float(d) for d in (src, dst)):
            return super()._e_Bitcast(e)
        v = self.expr(e.x)
        w = self.bits16(v, src) if dt.is_float(src) else v     # 16-bit ints arrive as i32 (spirv_widen)
        return self.from_bits16(w, dst) if dt.is_float(dst) else w

    def _e_Read(self, e) -> str:
        if e.dtype in (dt.float16, dt.bfloat16) and e.name in self.scalar_words:
            return self.from_bits16(self.meta_word(self.scalar_words[e.name][0]), e.dtype)
        return super()._e_Read(e)

    def nextafter(self, a: str, b: str, t) -> str:
        """As the shared lowering's, with 16-bit floats' bits in i32."""
        if t.bits != 16:
            return super().nextafter(a, b, t)
        ia, ib = self.bits16(a, t), self.bits16(b, t)
        nan = self.op(f"fcmp uno float {a}, {b}")
        eq = self.op(f"fcmp oeq float {a}, {b}")
        zero = self.op(f"fcmp oeq float {a}, {float_const(0.0)}")
        tiny = self.op(f"or i32 {self.op(f'and i32 {ib}, 32768')}, 1")
        up = self.op(f"xor i1 {self.op(f'fcmp olt float {a}, {b}')}, "
                     f"{self.op(f'fcmp olt float {a}, {float_const(0.0)}')}")
        moved = self.op(f"add i32 {ia}, {self.op(f'select i1 {up}, i32 1, i32 -1')}")
        r = self.from_bits16(self.op(f"select i1 {zero}, i32 {tiny}, i32 {moved}"), t)
        r2 = self.op(f"select i1 {eq}, float {b}, float {r}")
        return self.op(f"select i1 {nan}, float {self.op(f'fadd float {a}, {b}')}, float {r2}")

    def space(self, name: str) -> int:
        return 11 if isinstance(self.decl[name], BufferParam) else 3

    def _e_Load(self, e) -> str:
        t, sp = self.decl[e.buffer].dtype, self.space(e.buffer)
        i, ok = self.checked(e.buffer, e.index)

        def load(index: str) -> str:
            p, shift = self.slot(e.buffer, index)
            if t not in PACKED:
                return self.from_mem(self.op(f"load {mem_type(t)}, ptr addrspace({sp}) {p}"), t)
            w = self.op(f"load i32, ptr addrspace({sp}) {p}")
            return self.unpack(self.op(f"lshr i32 {w}, {shift}") if shift else w, t)
        return self.load_checked(ok, i, load, reg_type(e.dtype))

    def _s_Store(self, s) -> None:
        t, sp = self.decl[s.buffer].dtype, self.space(s.buffer)
        i, ok = self.checked(s.buffer, s.index)
        v = self.expr(s.value)

        def store() -> None:
            p, shift = self.slot(s.buffer, i)
            if t not in PACKED:
                self.f.emit(f"store {mem_type(t)} {self.to_mem(v, t)}, ptr addrspace({sp}) {p}")
            elif shift is None:
                self.f.emit(f"store i32 {self.pack(v, t)}, ptr addrspace({sp}) {p}")
            else:
                self.packed_store(p, shift, self.pack(v, t), PACKED[t])
        self.effect_checked(ok, store)

    def packed_store(self, p: str, shift: str, bits: str, width: int) -> None:
        """Element bits `bits` into their `width`-bit field at `shift` of the buffer word at `p`; other
        threads own the word's other fields, and several threads may store to the same element.

        An atomic `and` clears the field's bits that are 0 in `bits`, then an atomic `or` sets those
        that are 1: both are idempotent, so threads storing one value to one element (a flag, a
        "seen" mark) all leave that value, where a plain load and an xor of the difference let two
        such stores cancel. Both masks are computed from the stored value: SPIR-V lets a driver
        assume two bindings never alias (no Aliased decoration), while the runtime binds one buffer
        twice for an in-place update (a donated KV cache: the scatter's copy reads binding 0 and
        writes binding 3 of one buffer), and a driver may move an atomic above a load of another
        binding it does not depend on. A mask independent of the value (clear the whole field, then
        or) could clear the field before the copy reads it: an NVIDIA GPU's raw Vulkan device then
        zeroed the bfloat16 KV cache of every decode step (tests/devices/spirv_alias_schedule.py
        applies that schedule on lavapipe).

        The `or` returns the word before it; if its field held bits outside `bits`, another thread's
        `or` of a different value came between this thread's two atomics, and the pair is repeated
        (packed_store_retry) so that racing stores of different values leave one of them, not a mix."""
        low = (1 << width) - 1
        field = self.op(f"shl i32 {low}, {shift}")
        moved = self.op(f"shl i32 {self.op(f'and i32 {bits}, {low}')}, {shift}")   # narrow ints arrive extended
        stray = self.op(f"xor i32 {field}, {moved}")           # the field's bits that are 0 in `bits`
        landed = self._and_or(p, stray, moved)
        self.packed_store_retry(p, stray, moved, landed)

    def _and_or(self, p: str, stray: str, moved: str) -> str:
        """The atomic and/or pair of packed_store; i1: the field held exactly the stored bits after it."""
        clear = self.op(f"xor i32 {stray}, -1")
        self.op(f'atomicrmw and ptr addrspace(11) {p}, i32 {clear} syncscope("device") monotonic')
        before = self.op(f'atomicrmw or ptr addrspace(11) {p}, i32 {moved} syncscope("device") monotonic')
        return self.op(f"icmp eq i32 {self.op(f'and i32 {before}, {stray}')}, 0")

    def packed_store_retry(self, p: str, stray: str, moved: str, landed: str, tries: int = 64) -> None:
        """Repeat the and/or pair until it lands unmixed, at most `tries` times: in lockstep execution the
        first lane's pair always lands, so contending lanes finish in as many rounds as there are
        values; the bound keeps an adversarial schedule from spinning. A loop whose only exit is its
        header's test, the shape LLVM's SPIR-V structurizer handles."""
        f = self.f
        entry, head, body, done = f.blocks[-1][0], f.label("pst"), f.label("pstb"), f.label("pstd")
        f.br(head)
        f.start(head)
        phis = f.lines                          # filled in once the body's values exist
        ok, n = f.tmp(), f.tmp()
        again = self.op(f"and i1 {self.op(f'xor i1 {ok}, true')}, {self.op(f'icmp ult i32 {n}, {tries}')}")
        f.cbr(again, body, done)
        f.start(body)
        ok_next = self._and_or(p, stray, moved)
        n_next = self.op(f"add i32 {n}, 1")
        latch = f.blocks[-1][0]
        f.br(head)
        f.start(done)
        phis[:0] = [f"  {ok} = phi i1 [ {landed}, %{entry} ], [ {ok_next}, %{latch} ]",
                    f"  {n} = phi i32 [ 0, %{entry} ], [ {n_next}, %{latch} ]"]

    def _s_AtomicAdd(self, s) -> None:
        t, sp = self.decl[s.buffer].dtype, self.space(s.buffer)
        if t in (dt.int64, dt.uint64):      # LLVM would abort: "Unable to meet SPIR-V requirements"
            raise LoweringError(f"kernel '{self.k.name}': atomic add on {t.name} needs the SPIR-V capability "
                                "Int64Atomics, which LLVM's SPIR-V backend does not offer for Vulkan; add into an "
                                "int32/uint32 buffer, or run the kernel on the cpu, cuda or rocm device")
        if t not in (dt.int32, dt.uint32, dt.float32):
            raise LoweringError(f"kernel '{self.k.name}': atomic add on {t.name} has no SPIR-V lowering "
                                "(int32, uint32 and float32 have)")
        i, ok = self.checked(s.buffer, s.index)
        v, ty = self.expr(s.value), reg_type(t)

        def add() -> str:
            p, _ = self.slot(s.buffer, i)
            return self.op(f'atomicrmw {"fadd" if t is dt.float32 else "add"} ptr addrspace({sp}) {p}, {ty} {v} '
                           f'syncscope("{"device" if sp == 11 else "workgroup"}") monotonic')
        old = self.effect_checked(ok, add, ty)
        if s.result is not None:
            self.f.emit(f"store {ty} {old}, ptr {self.local_ptr(s.result)}")

    # -- traps, barriers, casts -----------------------------------------------------------------
    def write_trap(self, code: int) -> None:
        """The thread's first trap code is kept (reported by report_trap)."""
        before = self.op(f"load i1, ptr {self.trapped}")
        kept = self.op(f"load i32, ptr {self.trap_code}")
        self.f.emit(f"store i32 {self.op(f'select i1 {before}, i32 {kept}, i32 {code}')}, ptr {self.trap_code}")
        self.on_trap_exit()

    def report_trap(self) -> None:
        """At the end of the kernel, a thread that trapped takes a ticket from word 2; ticket 0 or-s its
        code and the launch id into words 0 and 1 (others or in zeros): no `cmpxchg` (it aborts the
        SPIR-V backend)."""
        if self.trapped is None:
            return
        def rmw(op: str, word: int, value: str) -> str:
            return self.op(f'atomicrmw {op} ptr addrspace(11) {self.pointer("$trap", str(word))}, i32 {value} '
                           f'syncscope("device") monotonic')
        report, done = self.f.label("report"), self.f.label("reported")
        self.f.cbr(self.op(f"load i1, ptr {self.trapped}"), report, done)
        self.f.start(report)
        first = self.op(f"icmp eq i32 {rmw('add', TRAP_TICKET_WORD, '1')}, 0")
        code = self.op(f"load i32, ptr {self.trap_code}")
        rmw("or", 0, self.op(f"select i1 {first}, i32 {code}, i32 0"))
        rmw("or", 1, self.op(f"select i1 {first}, i32 {self.meta_word(self.layout.launch_id)}, i32 0"))
        self.f.br(done)
        self.f.start(done)

    def on_barrier(self) -> None:
        fn = self.m.intrinsic("llvm.spv.group.memory.barrier.with.group.sync", "void", "")
        self.f.emit(f"call void {fn}()")

    # subgroup exchanges: OpGroupNonUniformShuffle from a computed lane of the subgroup. A 1-D workgroup's
    # subgroups are runs of consecutive local indices (on the drivers poot runs on), so lane ^ mask is the
    # thread whose local x index is this one's ^ mask; a device loads a kernel only where its subgroups
    # hold the lanes the kernel exchanges across (poot/jit/llvm/compile.py `lane_span`)
    def _subgroup_lane(self) -> str:
        return self.intr("llvm.spv.subgroup.local.invocation.id", "i32", [])

    def shuffle_word(self, w: str, mask: int) -> str:
        lane = self.op(f"xor i32 {self._subgroup_lane()}, {mask}")
        return self.intr("llvm.spv.wave.readlane.i32", "i32", [("i32", w), ("i32", lane)])

    def shuffle_lane_word(self, w: str, lane: str) -> str:
        """From lane (own lane & ~31) | (lane & 31): the 32-lane run inside a subgroup of 32 or more."""
        own = self._subgroup_lane()
        src = self.op(f"or i32 {self.op(f'and i32 {own}, -32')}, {self.op(f'and i32 {lane}, 31')}")
        return self.intr("llvm.spv.wave.readlane.i32", "i32", [("i32", w), ("i32", src)])

    def cast(self, v: str, src, dst) -> str:
        if src is dt.float64 and dst is dt.float16:
            return self.f16_round(self.f32_round_odd(v))
        if not (dt.is_float(src) and dt.is_int(dst)):
            return super().cast(v, src, dst)
        st, tt, signed = reg_type(src), reg_type(dst), dt.is_signed(dst)
        lo = -(2.0 ** (dst.bits - 1)) if signed else 0.0
        hi = 2.0 ** (dst.bits - 1) if signed else 2.0 ** dst.bits           # exclusive, exact
        info = dt.iinfo(dst)
        above = self.op(f"fcmp oge {st} {v}, {float_const(hi)}")
        below = self.op(f"fcmp olt {st} {v}, {float_const(lo)}")
        inside = self.op(f"and i1 {self.op(f'fcmp oge {st} {v}, {float_const(lo)}')}, "
                         f"{self.op(f'fcmp olt {st} {v}, {float_const(hi)}')}")         # false for NaN
        safe = self.op(f"select i1 {inside}, {st} {v}, {st} {float_const(0.0)}")
        r = self.op(f"{'fptosi' if signed else 'fptoui'} {st} {safe} to {tt}")
        r = self.op(f"select i1 {above}, {tt} {int_const(info.max, dst.bits)}, {tt} {r}")
        return self.op(f"select i1 {below}, {tt} {int_const(info.min, dst.bits)}, {tt} {r}")


__all__ = ["SpirvLowering", "PACKED", "walk", "storage_type"]
