"""KIR -> LLVM IR: the one lowering every target shares.

`lower_to_llvm(kernel, target) -> str` verifies the kernel, then asks the target to write its entry
function(s); the target drives a `Lowering`, which turns expressions and statements into IR inside
whatever function the target is building. What differs per target arrives through the `Lowering`'s
hooks (set by the target): how group/local ids are read, where buffer, shared, meta and trap pointers
come from, what `return` and a barrier become.

Rules the IR follows (KIR semantics, model.py):
- mutable locals are allocas (mem2reg promotes them); control flow is structured (if/loop/merge),
  the shape the SPIR-V structurizer needs;
- integer div/rem never fault: a zero divisor or INT_MIN / -1 gives 0;
- shifts by >= the width give 0 (or the sign for an arithmetic right shift);
- float -> int casts saturate (`llvm.fptosi.sat`, NaN -> 0); min/max propagate NaN
  (`llvm.minimum/maximum`);
- f16/bf16 values compute in float and are rounded once per operation; bf16 rounding and
  conversions are integer bit operations (round to nearest even, NaN kept quiet);
- float add/sub/mul carry `contract` (the backend may fuse them into FMAs) except `add_nocontract`, on
  GPU targets only (`Lowering.contracts`): on the CPU every operation rounds on its own, as NumPy's
  do, so a*b + c, x*x - y*y and a singular determinant give NumPy's numbers to the last bit;
- with `kernel.checks`, an index outside 0..len-1 writes the trap word and ends the thread.
"""
from __future__ import annotations

from dataclasses import replace

from poot import dtypes as dt
from poot.errors import LoweringError, NotBuiltError
from poot.jit.kir.model import (Assign, AtomicAdd, Barrier, Binary, Bitcast, Break, BufferParam, Cast, Const,
                         Continue, Fma, For, If, Index, Kernel, Len, Load, MMA_SHAPES, Mma, Read, Return, Select,
                         Shuffle, ShuffleXor, Store, StoreX4, Trap, TRAP_BOUNDS, Unary, While)
from poot.jit.llvm import mathlib
from poot.jit.llvm.convert import Conversions, _sfx
from poot.jit.llvm.ir import Func, Module, const, float_const, int_const, mem_type, reg_type
from poot.jit.llvm.targets import REGISTRY, BinaryFormat
from poot.jit.llvm.wide_memory import WideMemoryLowering

_FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_ICMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_FARITH = {"add": "fadd contract", "sub": "fsub contract", "mul": "fmul contract", "div": "fdiv",
           "rem": "frem", "add_nocontract": "fadd"}
_FARITH_EXACT = {op: inst.replace(" contract", "") for op, inst in _FARITH.items()}
_REASSOC = {f"{op}_reassoc": op for op in ("add", "mul", "min", "max")}
# Mma shape -> (the hardware, the targets whose lowering builds it), for the NotBuiltError elsewhere
MMA_BUILT_FOR = {
    "m16n8k16": ("tensor cores", "the PTX target (sm_80 and newer)"),
    "mfma_16x16x16": ("AMD CDNA matrix cores", "the AMDGCN target on gfx90a, gfx942 and gfx950"),
    "wmma_16x16x16": ("AMD RDNA3 matrix cores", "the AMDGCN target on gfx11 GPUs (gfx1100 ...)"),
}
_LLVM_UNARY = {"sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "roundeven"}


class Lowering(Conversions, WideMemoryLowering):
    """Lowers statements and expressions of one kernel into the current function `self.f`.

    Hooks a target sets before calling `stmts`: `as_global`, `as_shared` (address-space numbers),
    `buffers` (name -> ptr value), `shared_ptrs`, `meta`, `trap` (ptr values), `ids` ((kind, axis) ->
    i32 value for 'group' and 'local'), `local_ptr(name)`, `on_return()`, `on_trap_exit()`,
    `on_barrier()`; the 16-byte memory operations' hooks are in wide_memory.py."""

    contracts = True        # float add/sub/mul may fuse into FMAs (the module docstring says where not)

    def __init__(self, kernel: Kernel, module: Module, as_global: int = 0, as_shared: int = 0):
        self.k, self.m = kernel, module
        self.as_global, self.as_shared = as_global, as_shared
        self.f: Func | None = None
        self.mma_cache: dict = {}
        self.frag_cache: dict = {}
        self.buffers: dict[str, str] = {}
        self.shared_ptrs: dict[str, str] = {}
        self.meta = self.trap = None
        self.ids: dict = {}
        self.local_ptrs: dict[str, str] = {}
        self.loops: list[tuple[str, str]] = []
        self.meta_cache: dict = {}
        self.decl = {p.name: p for p in kernel.params} | {s.name: s for s in kernel.shared}
        self.local_types = {v.name: v.dtype for v in kernel.locals}
        from poot.jit.llvm.abi import meta_layout

        self.layout = meta_layout(kernel)
        self.scalar_words = {name: (w, t) for name, w, t in self.layout.scalars}

    # -- hooks (targets override by assignment or subclassing) ------------------------------------
    def ptr(self, space: int) -> str:
        return "ptr" if space == 0 else f"ptr addrspace({space})"

    def local_ptr(self, name: str) -> str:
        return self.local_ptrs[name]

    def alloca(self, ty: str, hint: str) -> str:
        """A stack slot for a `ty` value in the entry block, as a pointer in the default address space
        (AMDGPU overrides it: its stack is addrspace(5))."""
        return self.f.entry_op(f"alloca {ty}", hint=hint)

    def alloca_locals(self) -> None:
        for v in self.k.locals:
            self.local_ptrs[v.name] = self.alloca(reg_type(v.dtype), f"l.{v.name}.")

    def on_return(self) -> None:
        self.f.term("ret void")

    def on_trap_exit(self) -> None:
        self.f.term("ret void")

    def on_barrier(self) -> None:
        raise LoweringError("this target has no workgroup barrier")

    def shuffle_word(self, w: str, mask: int) -> str:
        """The i32 `w` of the thread whose local x index is this one's ^ `mask` (ShuffleXor)."""
        raise NotBuiltError("shuffle_xor (a subgroup exchange) is built for the GPU targets (PTX, AMDGCN, SPIR-V) "
                            "only; kernel generation uses it only there (poot/jit/codegen/gpu_lanes.py `shuffles`)")

    def shuffle_lane_word(self, w: str, lane: str) -> str:
        """The i32 `w` of the thread at lane `lane % 32` (an i32 value) of this thread's 32-lane run (Shuffle)."""
        raise NotBuiltError("shuffle / subgroup_sum / subgroup_max (subgroup exchanges) are built for the GPU "
                            "targets (PTX, AMDGCN, SPIR-V) only; this target has none")

    # the Mma shapes this lowering's mma_call takes (PTX's, whose lowering overrides mma_call; the AMDGCN
    # lowering names its own); any other shape raises the base mma_call's NotBuiltError
    mma_shapes: tuple = ("m16n8k16",)

    def mma_call(self, e) -> str:
        """The result of one matrix multiply-accumulate instruction (Mma): an aggregate or vector of the
        lane's D elements, which `mma_element` reads."""
        shape = MMA_SHAPES[e.shape]
        raise NotBuiltError(f"{shape.op} (a matrix multiply-accumulate on {MMA_BUILT_FOR[e.shape][0]}) is built for "
                            f"{MMA_BUILT_FOR[e.shape][1]} only; use a SIMT kernel on this target")

    def mma_element(self, result: str, e) -> str:
        """Element `e.elem` of an `mma_call` result: a { float, ... } aggregate here (PTX's form)."""
        n = MMA_SHAPES[e.shape].c
        return self.op(f"extractvalue {{ {', '.join(['float'] * n)} }} {result}, {e.elem}")

    # -- helpers --------------------------------------------------------------------------------
    def op(self, text: str) -> str:
        return self.f.op(text)

    def call(self, fn: str, ret: str, args: list[tuple[str, str]], flags: str = "") -> str:
        a = ", ".join(f"{t} {v}" for t, v in args)
        return self.op(f"call {flags + ' ' if flags else ''}{ret} {fn}({a})")

    def intr(self, name: str, ret: str, args: list[tuple[str, str]], flags: str = "") -> str:
        fn = self.m.intrinsic(name, ret, ", ".join(t for t, _ in args))
        return self.call(fn, ret, args, flags)

    def meta_word(self, word: int, ty: str = "i32") -> str:
        key = (word, ty)
        if key not in self.meta_cache:
            p = self.f.entry_op(f"getelementptr i32, {self.ptr(self.as_global)} {self.meta}, i64 {word}")
            align = 8 if ty in ("i64", "double") else 4
            self.meta_cache[key] = self.f.entry_op(f"load {ty}, {self.ptr(self.as_global)} {p}, align {align}",
                                                   hint="meta")
        return self.meta_cache[key]

    def reset_function(self, f: Func) -> None:
        self.f, self.meta_cache, self.local_ptrs, self.mma_cache, self.frag_cache = f, {}, {}, {}, {}

    # -- expressions ----------------------------------------------------------------------------
    def expr(self, e) -> str:
        return getattr(self, "_e_" + type(e).__name__)(e)

    def _e_Const(self, e: Const) -> str:
        return const(e.value, e.dtype)

    def _e_Read(self, e: Read) -> str:
        if e.name in self.local_types:
            return self.op(f"load {reg_type(e.dtype)}, ptr {self.local_ptr(e.name)}")
        word, t = self.scalar_words[e.name]
        if t.bits == 64:
            v = self.meta_word(word, "i64")
            return self.op(f"bitcast i64 {v} to double") if t is dt.float64 else v
        w = self.meta_word(word)
        if t is dt.bool_:
            return self.op(f"icmp ne i32 {w}, 0")
        if t.bits < 32:
            w = self.op(f"trunc i32 {w} to i{t.bits}")
            return self.from_bits(w, t) if dt.is_float(t) else w
        return self.op(f"bitcast i32 {w} to float") if t is dt.float32 else w

    def _e_Len(self, e: Len) -> str:
        return self.meta_word(self.layout.lengths[self.k.buffers.index(self.decl[e.buffer])])

    def _e_Index(self, e: Index) -> str:
        if e.kind in ("group", "local"):
            return self.ids[(e.kind, e.axis)]
        if e.kind == "group_size":
            return str(self.k.workgroup[e.axis])
        if e.kind == "num_groups":
            return self.meta_word(self.layout.grid + e.axis)
        g = self.ids[("group", e.axis)]
        base = self.op(f"mul i32 {g}, {self.k.workgroup[e.axis]}")
        return self.op(f"add i32 {base}, {self.ids[('local', e.axis)]}")

    def element_ptr(self, buffer: str, index) -> tuple[str, str]:
        """(pointer, address space string) of buffer[index], bounds-checked when kernel.checks."""
        decl = self.decl[buffer]
        idx = self.expr(index)
        it = index.dtype
        i64 = idx if it.bits == 64 else self.op(f"{'sext' if dt.is_signed(it) else 'zext'} {reg_type(it)} {idx} to i64")
        if isinstance(decl, BufferParam):
            base, space = self.buffers[buffer], self.as_global
            n = self.op(f"zext i32 {self._e_Len(Len(buffer))} to i64") if self.k.checks else None
        else:
            base, space = self.shared_ptrs[buffer], self.as_shared
            n = str(decl.size)
        if self.k.checks:
            self.trap_unless(self.op(f"icmp ult i64 {i64}, {n}"))
        p = self.op(f"getelementptr inbounds {mem_type(decl.dtype)}, {self.ptr(space)} {base}, i64 {i64}")
        return p, self.ptr(space)

    def _e_Load(self, e: Load) -> str:
        p, pty = self.element_ptr(e.buffer, e.index)
        mt = mem_type(e.dtype)
        return self.from_mem(self.op(f"load {mt}, {pty} {p}"), e.dtype)

    def _e_Select(self, e: Select) -> str:
        c, a, b = self.expr(e.cond), self.expr(e.a), self.expr(e.b)
        return self.op(f"select i1 {c}, {reg_type(e.dtype)} {a}, {reg_type(e.dtype)} {b}")

    def _e_Fma(self, e: Fma) -> str:
        ty = reg_type(e.dtype)
        args = [(ty, self.expr(x)) for x in (e.a, e.b, e.c)]
        return self.round_to(self.intr(f"llvm.fma.{_sfx(ty)}", ty, args), e.dtype)

    def _e_Cast(self, e: Cast) -> str:
        return self.cast(self.expr(e.x), e.x.dtype, e.dtype)

    def _e_Bitcast(self, e: Bitcast) -> str:
        v, src, dst = self.expr(e.x), e.x.dtype, e.dtype
        bits = self.to_bits(v, src) if dt.is_float(src) else v
        return self.from_bits(bits, dst) if dt.is_float(dst) else bits

    def _e_ShuffleXor(self, e: ShuffleXor) -> str:
        return self._exchange(self.expr(e.x), e.dtype, lambda w: self.shuffle_word(w, e.mask))

    def _e_Shuffle(self, e: Shuffle) -> str:
        lane = self.cast(self.expr(e.index), e.index.dtype, dt.int32)
        return self._exchange(self.expr(e.x), e.dtype, lambda w: self.shuffle_lane_word(w, lane))

    def _exchange(self, v: str, dtype, word) -> str:
        """Exchanged as i32 words: 16-bit floats live in float registers, narrow ints and bools widen."""
        ty = reg_type(dtype)
        if ty in ("double", "i64"):
            w = self.op(f"bitcast double {v} to i64") if ty == "double" else v
            lo = word(self.op(f"trunc i64 {w} to i32"))
            hi = word(self.op(f"trunc i64 {self.op(f'lshr i64 {w}, 32')} to i32"))
            hi = self.op(f"shl i64 {self.op(f'zext i32 {hi} to i64')}, 32")
            r = self.op(f"or i64 {hi}, {self.op(f'zext i32 {lo} to i64')}")
            return self.op(f"bitcast i64 {r} to double") if ty == "double" else r
        if ty == "float":
            return self.op(f"bitcast i32 {word(self.op(f'bitcast float {v} to i32'))} to float")
        if ty == "i32":
            return word(v)
        return self.op(f"trunc i32 {word(self.op(f'zext {ty} {v} to i32'))} to {ty}")

    def _e_Mma(self, e: Mma) -> str:
        """One instruction per distinct operand tuple in a basic block; each Mma node extracts its element.
        A shape outside `mma_shapes` gets the NotBuiltError naming the targets that build it."""
        if e.shape not in self.mma_shapes:
            Lowering.mma_call(self, e)
        key = (e.shape, e.a, e.b, e.c, id(self.f), len(self.f.blocks))
        cached = self.mma_cache.get(key)
        if cached is None:
            cached = self.mma_cache[key] = self.mma_call(e)
        return self.mma_element(cached, e)

    def _e_Unary(self, e: Unary) -> str:
        x, t = self.expr(e.x), e.x.dtype
        ty = reg_type(t)
        op = e.op
        if op in ("isnan", "isinf", "isfinite"):
            if op == "isnan":
                return self.op(f"fcmp uno {ty} {x}, {x}")
            a = self.intr(f"llvm.fabs.{_sfx(ty)}", ty, [(ty, x)])
            return self.op(f"fcmp {'oeq' if op == 'isinf' else 'olt'} {ty} {a}, {float_const(float('inf'))}")
        if op in ("not", "bitnot"):
            return self.op(f"xor {ty} {x}, {'true' if t is dt.bool_ else -1}")
        if dt.is_int(t):
            if op == "neg":
                return self.op(f"sub {ty} 0, {x}")
            if op == "abs":
                return x if dt.is_unsigned(t) else self.intr(f"llvm.abs.{ty}", ty, [(ty, x), ("i1", "false")])
            if op == "sign":
                gt = self.op(f"icmp {'ugt' if dt.is_unsigned(t) else 'sgt'} {ty} {x}, 0")
                pos = self.op(f"zext i1 {gt} to {ty}")
                if dt.is_unsigned(t):
                    return pos
                neg = self.op(f"zext i1 {self.op(f'icmp slt {ty} {x}, 0')} to {ty}")
                return self.op(f"sub {ty} {pos}, {neg}")
        if op == "neg":
            return self.op(f"fneg {ty} {x}")
        if op == "abs":
            return self.intr(f"llvm.fabs.{_sfx(ty)}", ty, [(ty, x)])
        if op == "sign":
            # NumPy's: -1, +1, +0.0 for either zero (never x itself: sign(-0.0) is +0.0), NaN for NaN.
            # The +-1/0 comes from an integer (gt - lt, converted): a select between float constants
            # is rewritten by GPU compilers (Mesa's NIR: bcsel(c, -1.0, 0.0) -> fneg(b2f(c))) into
            # one giving -0.0 for a zero
            zero = float_const(0.0)
            gt = self.op(f"zext i1 {self.op(f'fcmp ogt {ty} {x}, {zero}')} to i32")
            lt = self.op(f"zext i1 {self.op(f'fcmp olt {ty} {x}, {zero}')} to i32")
            s = self.op(f"sitofp i32 {self.op(f'sub i32 {gt}, {lt}')} to {ty}")
            nan = self.op(f"fcmp uno {ty} {x}, {x}")
            return self.op(f"select i1 {nan}, {ty} {x}, {ty} {s}")
        if op == "rsqrt":
            s = self.intr(f"llvm.sqrt.{_sfx(ty)}", ty, [(ty, x)])
            return self.round_to(self.op(f"fdiv {ty} {float_const(1.0)}, {s}"), t)
        if op in _LLVM_UNARY:
            return self.round_to(self.intr(f"llvm.{_LLVM_UNARY[op]}.{_sfx(ty)}", ty, [(ty, x)]), t)
        if op == "fast_exp2":
            return self.round_to(self.fast_exp2(x, ty), t)
        return self.round_to(self.math(op, ty, [x]), t)

    def fast_exp2(self, x: str, ty: str) -> str:
        """2**x for the `fast_exp2` op: the accurate exp2 unless the target has a faster instruction."""
        return self.math("exp2", ty, [x])

    def math(self, op: str, ty: str, args: list[str]) -> str:
        fn = mathlib.require(self.m, op, ty)
        return self.call(fn, ty, [(ty, a) for a in args])

    def _e_Binary(self, e: Binary) -> str:
        return self.binary(e.op, self.expr(e.a), self.expr(e.b), e.a.dtype)

    def binary(self, op: str, a: str, b: str, t) -> str:
        """`a op b` on lowered operands of dtype `t`."""
        ty = reg_type(t)
        if op in _REASSOC:
            return self.reassociable(_REASSOC[op], a, b, t)
        if op in _FCMP:
            if dt.is_float(t):
                return self.op(f"fcmp {_FCMP[op]} {ty} {a}, {b}")
            sign = "" if op in ("eq", "ne") else ("s" if dt.is_signed(t) else "u")
            return self.op(f"icmp {sign}{_ICMP[op]} {ty} {a}, {b}")
        if dt.is_float(t):
            if op in _FARITH:
                inst = (_FARITH if self.contracts else _FARITH_EXACT)[op]
                return self.round_to(self.op(f"{inst} {ty} {a}, {b}"), t)
            if op in ("min", "max"):
                fn = f"llvm.{'minimum' if op == 'min' else 'maximum'}.{_sfx(ty)}"
                return self.intr(fn, ty, [(ty, a), (ty, b)])
            if op == "copysign":
                return self.intr(f"llvm.copysign.{_sfx(ty)}", ty, [(ty, a), (ty, b)])
            if op == "nextafter":
                return self.nextafter(a, b, t)
            return self.round_to(self.math(op, ty, [a, b]), t)
        if op in ("add", "sub", "mul", "and", "or", "xor"):
            return self.op(f"{op} {ty} {a}, {b}")
        if op in ("min", "max"):
            fn = f"llvm.{'s' if dt.is_signed(t) else 'u'}{op}.{ty}"
            return self.intr(fn, ty, [(ty, a), (ty, b)])
        if op in ("div", "rem"):
            return self.int_divrem(op, a, b, t)
        if op in ("shl", "shr"):
            w = t.bits
            big = self.op(f"icmp uge {ty} {b}, {w}")
            if op == "shl":
                r = self.op(f"shl {ty} {a}, {b}")
                return self.op(f"select i1 {big}, {ty} 0, {ty} {r}")
            if dt.is_signed(t):
                amt = self.op(f"select i1 {big}, {ty} {w - 1}, {ty} {b}")
                return self.op(f"ashr {ty} {a}, {amt}")
            r = self.op(f"lshr {ty} {a}, {b}")
            return self.op(f"select i1 {big}, {ty} 0, {ty} {r}")
        raise LoweringError(f"binary op {op} on {t.name} has no lowering")

    def reassociable(self, op: str, a: str, b: str, t) -> str:
        """An accumulator combine the backend may reorder (`reassoc`: the loop vectorizer keeps
        several partial accumulators); integers are associative already."""
        ty = reg_type(t)
        if not dt.is_float(t):
            return self.binary(op, a, b, t)
        if op in ("min", "max"):
            fn = f"llvm.{'minimum' if op == 'min' else 'maximum'}.{_sfx(ty)}"
            return self.intr(fn, ty, [(ty, a), (ty, b)], flags="reassoc")
        inst = _FARITH[op].replace("contract", "reassoc contract" if self.contracts else "reassoc")
        return self.round_to(self.op(f"{inst} {ty} {a}, {b}"), t)

    def int_divrem(self, op: str, a: str, b: str, t) -> str:
        ty = reg_type(t)
        bad = self.op(f"icmp eq {ty} {b}, 0")
        if dt.is_signed(t):
            ovf = self.op(f"and i1 {self.op(f'icmp eq {ty} {a}, {int_const(1 << (t.bits - 1), t.bits)}')}, "
                          f"{self.op(f'icmp eq {ty} {b}, -1')}")
            bad = self.op(f"or i1 {bad}, {ovf}")
        safe = self.op(f"select i1 {bad}, {ty} 1, {ty} {b}")
        instr = ("s" if dt.is_signed(t) else "u") + ("div" if op == "div" else "rem")
        r = self.op(f"{instr} {ty} {a}, {safe}")
        return self.op(f"select i1 {bad}, {ty} 0, {ty} {r}")

    # -- statements -----------------------------------------------------------------------------
    def stmts(self, body) -> None:
        for s in body:
            if not isinstance(s, Assign):
                self.forget_fragments()         # it may write memory an LdMatrix / LoadX4 read
            getattr(self, "_s_" + type(s).__name__)(s)

    def _s_Assign(self, s: Assign) -> None:
        v = self.expr(s.value)
        if self.mma_cache:                      # an Mma operand reassigned: its cached result is stale
            self.mma_cache = {k: r for k, r in self.mma_cache.items()
                              if not any(isinstance(x, Read) and x.name == s.name for x in k[1] + k[2] + k[3])}
        self.forget_fragments(s.name)
        self.f.emit(f"store {reg_type(s.value.dtype)} {v}, ptr {self.local_ptr(s.name)}")

    def _s_Store(self, s: Store) -> None:
        p, pty = self.element_ptr(s.buffer, s.index)
        t = self.decl[s.buffer].dtype
        v = self.to_mem(self.expr(s.value), t)
        self.f.emit(f"store {mem_type(t)} {v}, {pty} {p}")

    def _s_AtomicAdd(self, s: AtomicAdd) -> None:
        p, pty = self.element_ptr(s.buffer, s.index)
        t = self.decl[s.buffer].dtype
        v = self.expr(s.value)
        kind = "fadd" if dt.is_float(t) else "add"
        old = self.op(f"atomicrmw {kind} {pty} {p}, {reg_type(t)} {v} monotonic")
        if s.result is not None:
            self.f.emit(f"store {reg_type(t)} {old}, ptr {self.local_ptr(s.result)}")

    def _s_If(self, s: If) -> None:
        c = self.expr(s.cond)
        then, other, done = self.f.label("then"), self.f.label("else"), self.f.label("endif")
        self.f.cbr(c, then, other if s.orelse else done)
        self.f.start(then)
        self.stmts(s.then)
        self.f.br(done)
        if s.orelse:
            self.f.start(other)
            self.stmts(s.orelse)
            self.f.br(done)
        self.f.start(done)

    def for_header(self, s: For):
        """Emit the trip count of `s` and return (T, count, store_var(k)) for a counted loop."""
        t = self.local_types[s.var]
        ty = reg_type(t)
        start, stop = self.expr(s.start), self.expr(s.stop)
        sg = "s" if dt.is_signed(t) else "u"
        up = s.step > 0
        ok = self.op(f"icmp {sg}{'lt' if up else 'gt'} {ty} {start}, {stop}")
        diff = self.op(f"sub {ty} {stop}, {start}" if up else f"sub {ty} {start}, {stop}")
        mag = abs(s.step)
        if mag == 1:
            n = diff
        else:
            dm1 = self.op(f"sub {ty} {diff}, 1")
            n = self.op(f"add {ty} {self.op(f'udiv {ty} {dm1}, {mag}')}, 1")
        count = self.op(f"select i1 {ok}, {ty} {n}, {ty} 0")
        flag = "nsw" if dt.is_signed(t) else "nuw"

        def var_at(k: str) -> str:
            off = k if mag == 1 else self.op(f"mul nuw {ty} {k}, {mag}")
            return self.op(f"{'add' if up else 'sub'} {flag} {ty} {start}, {off}")
        return ty, count, var_at

    def _s_For(self, s: For) -> None:
        ty, count, var_at = self.for_header(s)
        kp = self.alloca(ty, "k")
        self.f.emit(f"store {ty} 0, ptr {kp}")
        head, body, latch, done = (self.f.label(x) for x in ("for", "body", "latch", "endfor"))
        self.f.br(head)
        self.f.start(head)
        k = self.op(f"load {ty}, ptr {kp}")
        self.f.cbr(self.op(f"icmp ult {ty} {k}, {count}"), body, done)
        self.f.start(body)
        self.f.emit(f"store {ty} {var_at(k)}, ptr {self.local_ptr(s.var)}")
        self.loops.append((done, latch))
        self.stmts(s.body)
        self.loops.pop()
        self.f.br(latch)
        self.f.start(latch)
        k2 = self.op(f"load {ty}, ptr {kp}")
        self.f.emit(f"store {ty} {self.op(f'add nuw {ty} {k2}, 1')}, ptr {kp}")
        self.f.br(head)
        self.f.start(done)

    def _s_While(self, s: While) -> None:
        head, body, done = self.f.label("while"), self.f.label("wbody"), self.f.label("endwhile")
        self.f.br(head)
        self.f.start(head)
        self.f.cbr(self.expr(s.cond), body, done)
        self.f.start(body)
        self.loops.append((done, head))
        self.stmts(s.body)
        self.loops.pop()
        self.f.br(head)
        self.f.start(done)

    def _s_Break(self, s: Break) -> None:
        self.f.br(self.loops[-1][0])

    def _s_Continue(self, s: Continue) -> None:
        self.f.br(self.loops[-1][1])

    def _s_Return(self, s: Return) -> None:
        self.on_return()

    def _s_Barrier(self, s: Barrier) -> None:
        self.on_barrier()

    def _s_Trap(self, s: Trap) -> None:
        self.write_trap(s.code)

    def trap_unless(self, ok: str) -> None:
        """A failed bounds check (i1 `ok` false) traps with TRAP_BOUNDS and ends the thread."""
        good, bad = self.f.label("inb"), self.f.label("oob")
        self.f.cbr(ok, good, bad)
        self.f.start(bad)
        self.write_trap(TRAP_BOUNDS)
        self.f.start(good)

    def write_trap(self, code: int) -> None:
        """trap[0]: 0 -> code (first trap wins); the winner writes its launch id to trap[1]; then exit."""
        pty = self.ptr(self.as_global)
        res = self.op(f"cmpxchg {pty} {self.trap}, i32 0, i32 {code} monotonic monotonic")
        won = self.op(f"extractvalue {{ i32, i1 }} {res}, 1")
        yes, after = self.f.label("trapwon"), self.f.label("trapexit")
        self.f.cbr(won, yes, after)
        self.f.start(yes)
        p = self.op(f"getelementptr i32, {pty} {self.trap}, i64 1")
        lid = self.meta_word(self.layout.launch_id)
        self.f.emit(f"store atomic i32 {lid}, {pty} {p} monotonic, align 4")
        self.f.br(after)
        self.f.start(after)
        self.on_trap_exit()


# --- stores into shared arrays (SPIR-V) ------------------------------------------------------------
# LLVM's SPIR-V backend aborts on a store or atomic whose pointer is a shared array's global itself
# ("Unsupported ptrcast use in store", "Unsupported ptrcast user"): what the element pointer at an index
# that folds to the constant 0 becomes (`s[0] = v`, `j = 0; s[j] = v`, an unrolled `for k in range(4)`;
# loads are fine). gpu_sort.py's MIN_TILE avoids the same abort.
_WRITES = (Store, AtomicAdd, StoreX4)


def opaque_zero(dtype):
    """0 of integer `dtype` that LLVM cannot fold: `num_groups_z == 0`, a launch's meta word, is false in
    every thread that runs (a launch has at least one workgroup). Not x or y: the SPIR-V entry divides by
    those (group ids from the linear workgroup id), which tells LLVM they are not 0."""
    return Cast(Binary("eq", Index("num_groups", 2), Const(0, dt.uint32), dt.bool_), dtype)


def _unfolded_write(s, shared: frozenset):
    """Statement `s` with its shared-array writes (its own and those nested in it) at `index + opaque_zero`."""
    if isinstance(s, _WRITES) and s.buffer in shared:
        t = s.index.dtype
        return replace(s, index=Binary("add", s.index, opaque_zero(t), t))
    if isinstance(s, If):
        return replace(s, then=_unfolded_writes(s.then, shared), orelse=_unfolded_writes(s.orelse, shared))
    if isinstance(s, (For, While)):
        return replace(s, body=_unfolded_writes(s.body, shared))
    return s


def _unfolded_writes(body, shared: frozenset) -> tuple:
    return tuple(_unfolded_write(s, shared) for s in body)


def _emits_spirv(target) -> bool:
    """Whether `target` (a lowering object) is the registry's SPIR-V target: LLVM's SPIR-V backend is the one
    with the abort above."""
    known = REGISTRY.get(getattr(target, "name", None))
    return known is not None and known.binary_format is BinaryFormat.SPIRV_WORDS


def unfolded_shared_writes(kernel: Kernel) -> Kernel:
    """`kernel` with every store, atomic add and 16-byte store into a shared array at an index LLVM cannot
    fold to a constant (one add of `opaque_zero`): the SPIR-V target's input."""
    shared = frozenset(a.name for a in kernel.shared)
    return replace(kernel, body=_unfolded_writes(kernel.body, shared)) if shared else kernel


def lower_to_llvm(kernel: Kernel, target, symbol: str | None = None, *, verified: bool = False) -> str:
    """The LLVM IR module text of `kernel` for `target` (a targets.* object), entry `@symbol`
    (default: the kernel's name). Verifies the kernel first unless `verified`."""
    if not verified:
        from poot.jit.kir.verify import verify

        verify(kernel, max_workgroup_size=getattr(target, "max_workgroup_size", 1024))
    if _emits_spirv(target):
        kernel = unfolded_shared_writes(kernel)
    module = Module(target.triple, target.datalayout)
    target.build_module(kernel, module, symbol or kernel.name)
    return module.render()


__all__ = ["Lowering", "lower_to_llvm"]
