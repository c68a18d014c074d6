"""The SPIR-V target (Vulkan compute, run by poot.devices.wgpu): `spirv1.6-unknown-vulkan1.3-compute`
with HLSL-style resources, then the naga post-pass (poot/jit/llvm/spirv_naga.py).

Entry ABI (poot/jit/abi.py): `void ENTRY()` with "hlsl.numthreads" = the kernel's workgroup; buffer
param j is the storage buffer at (set 0, binding j), then meta at binding n (read-only uint32 words)
and trap at binding n+1. Shared arrays are Workgroup (addrspace 3) globals.

What differs from the other targets, and why:
- Buffers are resource handles (`llvm.spv.resource.handlefrombinding`), an element pointer is
  `llvm.spv.resource.getpointer(handle, i32 index)`: logical SPIR-V has no pointer arithmetic.
  Indices are 32-bit (buffers hold < 2**32 elements), so kernels need no Int64.
- naga (wgpu's translator) has no 8- or 16-bit integers. Kernels compute int8/uint8/int16/uint16
  in 32 bits (spirv_widen.py); buffers of them, and of bool and bfloat16, are read as 32-bit words
  (shift and mask) and written with two word atomics (and, then or: other threads own the other
  bytes of the word); shared arrays of them take a word per element. float16 is native `half` (the
  device asks for the adapter's shader-f16).
- The grid is folded (poot/devices/wgpu.py fold_grid): the entry linearizes its physical workgroup
  id over NumWorkgroups, leaves at once past the logical group count (uniform per workgroup, before
  any barrier) and unflattens the rest over the logical grid from meta.
- Barriers are `llvm.spv.group.memory.barrier.with.group.sync`; the post-pass gives them workgroup
  and buffer memory semantics. Atomics carry syncscope("device") on buffers, ("workgroup") on shared
  memory (Vulkan forbids the default CrossDevice scope); float add uses SPV_EXT_shader_atomic_float_add.
- `cmpxchg` on a resource pointer aborts LLVM 22's SPIR-V backend, so a trap takes a ticket from a
  counter (trap word 2, `atomicrmw add`); the thread holding ticket 0 puts code and launch id in.
  In a kernel without barriers a trap ends the thread (`ret`); in one with barriers the thread
  skips the faulting access and carries on, so every thread still reaches every barrier.
- Float -> int casts saturate with explicit compares: `fptosi.sat` lowers to a decoration Vulkan
  does not have (the post-pass drops the ones mathlib's range reduction emits).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import subprocess
from pathlib import Path

import llvmlite.binding as llvm

from .... import dtypes as dt
from ....errors import LoweringError
from ...kir.model import TRAP_BOUNDS, BufferParam, Trap
from ..ir import Func, float_const, int_const, mem_type, reg_type
from ..lower import Lowering
from ..spirv_naga import POST_PASS_VERSION, duplicate_ids, fix_for_naga
from ..spirv_returns import eliminate_returns
from ..spirv_widen import widen_narrow_ints
from ..spirv_worker import EXTENSIONS, TRIPLE, compile_spirv
from ..spirv_worker import restart as restart_worker
from ..workgroup import has_barrier

NAME = "spirv"
PACKED = {dt.bool_: 8, dt.bfloat16: 16, dt.int8: 8, dt.uint8: 8, dt.int16: 16, dt.uint16: 16}  # in i32 words
TRAP_TICKET_WORD = 2
_SFX = {"float": "f32", "double": "f64", "half": "f16", "i32": "i32", "i64": "i64"}


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def _handle_type(elem: str, writable: bool) -> str:
    return f'target("spirv.VulkanBuffer", [0 x {elem}], 12, {int(writable)})'


def _mangled(elem: str, writable: bool) -> str:
    return f"tspirv.VulkanBuffer_a0{_SFX[elem]}_12_{int(writable)}t"


def _storage_type(dtype: DType) -> str:
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


class SpirvLowering(Lowering):
    def __init__(self, kernel, module):
        super().__init__(kernel, module, as_global=11, as_shared=3)
        self.handles: dict[str, tuple[str, str, bool]] = {}     # name -> (handle, element type, writable)
        self.barriers = any(map(has_barrier, kernel.body))
        self.traps = kernel.checks or any(isinstance(n, Trap) for n in walk(kernel.body))
        self.trapped = None

    # -- traps without early exits ----------------------------------------------------------------
    # LLVM's SPIR-V structurizer emits invalid SPIR-V (merge blocks out of place) for early returns out
    # of nested selections, and for the flag-guarded chains that would emulate them. So a trap does not
    # end the thread: it records the trap and sets `trapped`, and from then on the thread's stores and
    # atomics are skipped (each sits in a one-armed `if`, the shape the structurizer handles). The
    # thread runs on with no effect, reaching every barrier; loads stay in bounds (index clamped).
    def init_flags(self) -> None:
        if self.traps:
            self.trapped = self.f.entry_op("alloca i1", hint="trapped")
            self.f.emit(f"store i1 false, ptr {self.trapped}")

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
            p = self.op(f"getelementptr inbounds [{decl.size} x {_storage_type(decl.dtype)}], "
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

    def _e_Cast(self, e) -> str:
        x = e.x
        if type(x).__name__ == "Read" and x.dtype in PACKED and x.name in self.scalar_words:
            return self.extend(self.meta_word(self.scalar_words[x.name][0]), x.dtype)  # a narrow scalar
        return super()._e_Cast(e)

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
            else:                                   # two word atomics: other threads own the other bits
                low = (1 << PACKED[t]) - 1
                mask = self.op(f"xor i32 {self.op(f'shl i32 {low}, {shift}')}, -1")
                val = self.op(f"shl i32 {self.op(f'and i32 {self.pack(v, t)}, {low}')}, {shift}")
                self.op(f'atomicrmw and ptr addrspace(11) {p}, i32 {mask} syncscope("device") monotonic')
                self.op(f'atomicrmw or ptr addrspace(11) {p}, i32 {val} syncscope("device") monotonic')
        self.effect_checked(ok, store)

    def _s_AtomicAdd(self, s) -> None:
        t, sp = self.decl[s.buffer].dtype, self.space(s.buffer)
        if t not in (dt.int32, dt.uint32, dt.int64, dt.uint64, dt.float32):
            raise LoweringError(f"kernel '{self.k.name}': atomic add on {t.name} has no SPIR-V lowering "
                                "(int32, uint32, int64, uint64 and float32 have)")
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
        """Ticket 0 of word 2 or-s code and launch id into words 0 and 1 (others or in zeros): no
        `cmpxchg` (it aborts the SPIR-V backend) and no branch."""
        def rmw(op: str, word: int, value: str) -> str:
            return self.op(f'atomicrmw {op} ptr addrspace(11) {self.pointer("$trap", str(word))}, i32 {value} '
                           f'syncscope("device") monotonic')
        first = self.op(f"icmp eq i32 {rmw('add', TRAP_TICKET_WORD, '1')}, 0")
        rmw("or", 0, self.op(f"select i1 {first}, i32 {code}, i32 0"))
        rmw("or", 1, self.op(f"select i1 {first}, i32 {self.meta_word(self.layout.launch_id)}, i32 0"))
        self.on_trap_exit()

    def on_barrier(self) -> None:
        fn = self.m.intrinsic("llvm.spv.group.memory.barrier.with.group.sync", "void", "")
        self.f.emit(f"call void {fn}()")

    def cast(self, v: str, src, dst) -> str:
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


def _copysign(ty: str, bits: int) -> str:
    return f"""  %ia = bitcast {ty} %a to i{bits}
  %ib = bitcast {ty} %b to i{bits}
  %m = and i{bits} %ia, {int_const((1 << (bits - 1)) - 1, bits)}
  %s = and i{bits} %ib, {int_const(1 << (bits - 1), bits)}
  %r = or i{bits} %m, %s
  %res = bitcast i{bits} %r to {ty}"""


def _min_max(ty: str, bits: int, which: str) -> str:
    """IEEE minimum/maximum: NaN from either side, -0 below +0 (the GPU's FMin/FMax promise neither)."""
    cmp, join = ("olt", "or") if which == "minimum" else ("ogt", "and")
    return f"""  %lt = fcmp {cmp} {ty} %a, %b
  %m = select i1 %lt, {ty} %a, {ty} %b
  %eq = fcmp oeq {ty} %a, %b
  %ia = bitcast {ty} %a to i{bits}
  %ib = bitcast {ty} %b to i{bits}
  %o = {join} i{bits} %ia, %ib
  %z = bitcast i{bits} %o to {ty}
  %r = select i1 %eq, {ty} %z, {ty} %m
  %nan = fcmp uno {ty} %a, %b
  %s = fadd {ty} %a, %b
  %res = select i1 %nan, {ty} %s, {ty} %r"""


def _fma64() -> str:
    """fma for doubles from exact pieces: drivers need not fuse a float64 Fma (lavapipe does not), and
    mathlib's exact products depend on it. Masked splits (a = ah + al, al = alh + alr; b = bh + bl)
    make every partial product exact, and a TwoSum chain adds them into the exact a*b - round(a*b);
    so fma(a, b, -a*b) is exact, other results are within an ulp, and a driver that contracts mul+add
    cannot change anything (every product it could fuse is exact)."""
    def split(x: str, src: str) -> str:
        return (f"  %{x}i = bitcast double %{src} to i64\n  %{x}hi = and i64 %{x}i, -134217728\n"
                f"  %{x}h = bitcast i64 %{x}hi to double\n  %{x}l = fsub double %{src}, %{x}h\n")

    def two_sum(s: str, x: str, y: str) -> str:       # s + t == x + y exactly
        return (f"  %{s} = fadd double %{x}, %{y}\n  %{s}v = fsub double %{s}, %{x}\n"
                f"  %{s}u = fsub double %{s}, %{s}v\n  %{s}x = fsub double %{x}, %{s}u\n"
                f"  %{s}y = fsub double %{y}, %{s}v\n  %{s}t = fadd double %{s}x, %{s}y\n")
    return (f"  %p = fmul double %a, %b\n{split('a', 'a')}{split('b', 'b')}{split('x', 'al')}"
            "  %hh = fmul double %ah, %bh\n  %hl = fmul double %ah, %bl\n  %lh = fmul double %al, %bh\n"
            "  %l1 = fmul double %xh, %bl\n  %l2 = fmul double %xl, %bl\n  %e0 = fsub double %hh, %p\n"
            + two_sum("s1", "e0", "hl") + two_sum("s2", "s1", "lh") + two_sum("s3", "s2", "l1")
            + two_sum("s4", "s3", "l2")
            + """  %r1 = fadd double %s1t, %s2t
  %r2 = fadd double %r1, %s3t
  %r3 = fadd double %r2, %s4t
  %e = fadd double %s4, %r3
""" + two_sum("s", "p", "c") + """  %lo = fadd double %st, %e
  %r = fadd double %s, %lo
  %ap = call double @llvm.fabs.f64(double %p)
  %fin = fcmp olt double %ap, 0x7FF0000000000000
  %res = select i1 %fin, double %r, double %s""")


def _roundeven64() -> str:
    """Half-to-even rounding of a double from floor (lavapipe's float64 RoundEven rounds halves toward
    zero): x - floor(x) is exact, ties go to the even neighbour, zeros keep x's sign."""
    return """  %f = call double @llvm.floor.f64(double %a)
  %d = fsub double %a, %f
  %half = fmul double %f, 0x3FE0000000000000
  %hf = call double @llvm.floor.f64(double %half)
  %odd = fcmp une double %half, %hf
  %up1 = fcmp ogt double %d, 0x3FE0000000000000
  %tie = fcmp oeq double %d, 0x3FE0000000000000
  %up2 = and i1 %tie, %odd
  %up = or i1 %up1, %up2
  %f1 = fadd double %f, 1.0
  %r = select i1 %up, double %f1, double %f
  %ir = bitcast double %r to i64
  %ix = bitcast double %a to i64
  %sx = and i64 %ix, -9223372036854775808
  %iz = or i64 %ir, %sx
  %z = bitcast i64 %iz to double
  %zero = fcmp oeq double %r, 0.0
  %res = select i1 %zero, double %z, double %r"""


def redirect_intrinsics(module) -> None:
    """Intrinsics LLVM's SPIR-V backend cannot select under Vulkan (copysign), or selects as GLSL
    instructions weaker than LLVM's meaning (minimum/maximum: FMin/FMax ignore NaN; float64 Fma: not
    always fused; float64 RoundEven: wrong on lavapipe), become internal definitions -- for the
    lowering and for mathlib alike."""
    plain = module.intrinsic

    def intrinsic(name: str, ret: str, args: str) -> str:
        kind = name.split(".")[1] if name.startswith("llvm.") else ""
        bits = {"double": 64, "float": 32}.get(ret)
        if bits is None or kind not in ("copysign", "minimum", "maximum", "fma", "roundeven") or \
                (kind in ("fma", "roundeven") and bits != 64):
            return plain(name, ret, args)
        fn = f"poot.spv.{kind}.f{bits}"
        body = {"fma": _fma64, "roundeven": _roundeven64}[kind]() if kind in ("fma", "roundeven") else \
            _copysign(ret, bits) if kind == "copysign" else _min_max(ret, bits, kind)
        params = ", ".join(f"{ret} %{x}" for x in ("abc" if kind == "fma" else "a" if kind == "roundeven" else "ab"))
        if kind == "fma":
            plain("llvm.fabs.f64", "double", "double")
        if kind == "roundeven":
            plain("llvm.floor.f64", "double", "double")
        module.declare(fn, f"define internal {ret} @{fn}({params}) #1 {{\n{body}\n  ret {ret} %res\n}}")
        return "@" + fn
    module.intrinsic = intrinsic


@functools.lru_cache(maxsize=None)
def _sources_digest() -> str:
    here = Path(__file__).resolve()
    files = [here, *(here.parent.parent / f for f in ("spirv_naga.py", "spirv_widen.py", "spirv_returns.py",
                                                      "spirv_worker.py"))]
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]


class SpirvTarget:
    name = NAME
    max_workgroup_size = 1024
    as_global, as_shared = 11, 3

    def __init__(self, arch: str | None = None):
        _init()
        self.arch = arch or ""
        self.triple = TRIPLE
        self.datalayout = str(self.machine().target_data)

    @property
    def identity(self) -> str:
        """Part of the artifact cache key: the triple, and a digest of this target's own sources (the
        SPIR-V lowering, the widening, the worker and the naga post-pass), so a change to any of them
        recompiles instead of loading stale SPIR-V."""
        return f"{TRIPLE}/{EXTENSIONS}/naga-post-pass-{POST_PASS_VERSION}/{_sources_digest()}"

    def build_module(self, kernel, module, symbol: str) -> None:
        kernel = eliminate_returns(widen_narrow_ints(kernel))
        redirect_intrinsics(module)
        lw = SpirvLowering(kernel, module)
        f = Func()
        lw.reset_function(f)
        nb = len(kernel.buffers)
        for j, p in enumerate(kernel.buffers):
            lw.bind(p.name, j, _storage_type(p.dtype), p.access.writable)
        lw.bind("$meta", nb, "i32", False)
        lw.bind("$trap", nb + 1, "i32", True)
        for s in kernel.shared:
            g = f"@sh.{s.name}"
            module.globals.append(f"{g} = internal addrspace(3) global [{s.size} x {_storage_type(s.dtype)}] poison")
            lw.shared_ptrs[s.name] = g
        lw.alloca_locals()

        def builtin(name: str, axis: int) -> str:
            fn = module.intrinsic(f"llvm.spv.{name}.i32", "i32", "i32")
            return f.op(f"call i32 {fn}(i32 {axis})")
        # linear physical workgroup -> logical group ids; workgroups past the logical grid leave at once
        c = [builtin("group.id", a) for a in range(3)]
        n = [builtin("num.workgroups", a) for a in range(2)]
        yz = f.op(f"add i32 {c[1]}, {f.op(f'mul i32 {n[1]}, {c[2]}')}")
        lin = f.op(f"add i32 {c[0]}, {f.op(f'mul i32 {n[0]}, {yz}')}")
        g = [lw.meta_word(lw.layout.grid + a) for a in range(3)]
        gxy = f.op(f"mul i32 {g[0]}, {g[1]}")
        f.cbr(f.op(f"icmp ult i32 {lin}, {f.op(f'mul i32 {gxy}, {g[2]}')}"), "run", "exit")
        f.start("run")
        lw.init_flags()
        q = f.op(f"udiv i32 {lin}, {g[0]}")
        ids = [f.op(f"urem i32 {lin}, {g[0]}"), f.op(f"urem i32 {q}, {g[1]}"), f.op(f"udiv i32 {lin}, {gxy}")]
        for a in range(3):
            lw.ids[("group", a)] = ids[a]
            lw.ids[("local", a)] = builtin("thread.id.in.group", a) if kernel.workgroup[a] > 1 else "0"
        lw.stmts(kernel.body)
        f.br("exit")
        f.start("exit")
        f.term("ret void")
        wx, wy, wz = kernel.workgroup
        module.attributes.append(f'attributes #2 = {{ convergent nounwind "hlsl.shader"="compute" '
                                 f'"hlsl.numthreads"="{wx},{wy},{wz}" }}')
        module.functions.append(f.render(f"define void @{symbol}() #2"))

    def machine(self):
        return llvm.Target.from_triple(TRIPLE).create_target_machine(opt=2)

    def optimize(self, mod) -> None:
        """Nothing here: the SPIR-V worker process optimizes (spirv_worker.py says why)."""

    def emit(self, mod) -> bytes:
        ir = str(mod)
        entry = re.search(r"define void @([\w.$]+)\(\)", ir)
        name = entry.group(1) if entry else "?"
        for _ in (0, 1):
            raw = compile_spirv(ir, name)
            dups = duplicate_ids(raw)
            if not dups:
                return fix_for_naga(raw)
            restart_worker()                    # a worker gone bad: try once more in a fresh one
        raise LoweringError(f"kernel '{name}': LLVM's SPIR-V backend defined ids {sorted(dups)[:5]} twice")

    def assembly(self, mod) -> str:
        spv = self.emit(mod)
        try:
            return subprocess.run(["spirv-dis", "-"], input=spv, capture_output=True, check=True).stdout.decode()
        except (OSError, subprocess.CalledProcessError) as e:
            return f"; spirv-dis unavailable ({e}); {len(spv)} bytes of SPIR-V"


__all__ = ["SpirvTarget", "SpirvLowering", "TRIPLE", "PACKED"]
