"""The SPIR-V target (Vulkan compute, run by poot.devices.wgpu): `spirv1.6-unknown-vulkan1.3-compute`
with HLSL-style resources, then the naga post-pass (poot/jit/llvm/spirv_naga.py).

Entry ABI (poot/jit/abi.py): `void ENTRY()` with "hlsl.numthreads" = the kernel's workgroup; buffer
param j is the storage buffer at (set 0, binding j), then meta at binding n (read-only uint32 words)
and trap at binding n+1. Shared arrays are Workgroup (addrspace 3) globals.

What differs from the other targets, and why:
- Buffers are resource handles (`llvm.spv.resource.handlefrombinding`), an element pointer is
  `llvm.spv.resource.getpointer(handle, i32 index)`: logical SPIR-V has no pointer arithmetic.
  Indices are 32-bit (buffers hold < 2**32 elements), so kernels need no Int64.
- naga (wgpu's translator) has no 8- or 16-bit integers. bool and bfloat16 buffers are therefore
  read as 32-bit words (shift and mask) and written with two word atomics (and, then or: other
  threads own the other bytes of the word); shared arrays of them take a word per element.
  int8/uint8/int16/uint16 are refused by name. float16 is native `half` (the device asks for the
  adapter's shader-f16).
- The grid is folded (poot/devices/wgpu.py fold_grid): the entry linearizes its physical workgroup
  id over NumWorkgroups, leaves at once past the logical group count (uniform per workgroup, before
  any barrier) and unflattens the rest over the logical grid from meta.
- Barriers are `llvm.spv.group.memory.barrier.with.group.sync`; the post-pass gives them workgroup
  and buffer memory semantics. Atomics carry syncscope("device") on buffers, ("workgroup") on shared
  memory (Vulkan forbids the default CrossDevice scope); float add uses SPV_EXT_shader_atomic_float_add.
- `cmpxchg` on a resource pointer aborts LLVM 22's SPIR-V backend, so a trap takes a ticket from a
  counter (trap word 2, `atomicrmw add`); the thread holding ticket 0 writes code and launch id.
  In a kernel without barriers a trap ends the thread (`ret`); in one with barriers the thread
  skips the faulting access and carries on, so every thread still reaches every barrier.
- Float -> int casts saturate with explicit compares: `fptosi.sat` lowers to a decoration Vulkan
  does not have (the post-pass drops the ones mathlib's range reduction emits).
"""
from __future__ import annotations

import dataclasses
import functools

import llvmlite.binding as llvm

from .... import dtypes as dt
from ....dtypes import DType
from ....errors import DTypeError, LoweringError
from ...kir.model import TRAP_BOUNDS, BufferParam
from ..ir import Func, float_const, int_const, mem_type, reg_type
from ..lower import Lowering
from ..spirv_naga import POST_PASS_VERSION, fix_for_naga
from ..workgroup import has_barrier

NAME = "spirv"
TRIPLE = "spirv1.6-unknown-vulkan1.3-compute"
EXTENSIONS = "+SPV_EXT_shader_atomic_float_add"
PACKED = {dt.bool_: 8, dt.bfloat16: 16}            # bits per element, stored in 32-bit words
UNSUPPORTED = (dt.int8, dt.uint8, dt.int16, dt.uint16)
TRAP_TICKET_WORD = 2
_SFX = {"float": "f32", "double": "f64", "half": "f16", "i32": "i32", "i64": "i64"}


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.set_option("", f"--spirv-ext={EXTENSIONS}")


def _handle_type(elem: str, writable: bool) -> str:
    return f'target("spirv.VulkanBuffer", [0 x {elem}], 12, {int(writable)})'


def _mangled(elem: str, writable: bool) -> str:
    return f"tspirv.VulkanBuffer_a0{_SFX[elem]}_12_{int(writable)}t"


def _storage_type(dtype: DType) -> str:
    return "i32" if dtype in PACKED else mem_type(dtype)


def kernel_dtypes(node, out: set | None = None) -> set:
    """Every dtype a kernel mentions (params, locals, shared arrays, expressions)."""
    out = set() if out is None else out
    if isinstance(node, (tuple, list)):
        for x in node:
            kernel_dtypes(x, out)
    elif dataclasses.is_dataclass(node):
        d = getattr(node, "dtype", None)
        if isinstance(d, DType):
            out.add(d)
        for f in dataclasses.fields(node):
            if f.name not in ("traps", "workgroup"):
                kernel_dtypes(getattr(node, f.name), out)
    return out


class SpirvLowering(Lowering):
    def __init__(self, kernel, module):
        super().__init__(kernel, module, as_global=11, as_shared=3)
        self.handles: dict[str, tuple[str, str, bool]] = {}     # name -> (handle, element type, writable)
        self.barriers = any(map(has_barrier, kernel.body))

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

    def guarded(self, ok, access, ty: str | None = None):
        """Run `access()` where `ok` holds; elsewhere trap (the value, if any, is then zero)."""
        if ok is None:
            return access()
        good, bad, join = self.f.label("inb"), self.f.label("oob"), self.f.label("acc")
        self.f.cbr(ok, good, bad)
        self.f.start(bad)
        self.write_trap(TRAP_BOUNDS)
        bad_end, reaches = self.f.blocks[-1][0], not self.f.terminated
        if reaches:
            self.f.br(join)
        self.f.start(good)
        v = access()
        good_end = self.f.blocks[-1][0]
        self.f.br(join)
        self.f.start(join)
        if ty is None or not reaches:
            return v
        zero = "false" if ty == "i1" else float_const(0.0) if ty in ("float", "double") else "0"
        return self.op(f"phi {ty} [ {v}, %{good_end} ], [ {zero}, %{bad_end} ]")

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
        if dtype is dt.bool_:
            return self.op(f"icmp ne i32 {self.op(f'and i32 {w}, 255')}, 0")
        return self.op(f"bitcast i32 {self.op(f'shl i32 {w}, 16')} to float")      # bfloat16

    def pack(self, v: str, dtype) -> str:
        if dtype is dt.bool_:
            return self.op(f"zext i1 {v} to i32")
        return self.op(f"lshr i32 {self.bf16_bits32(v)}, 16")

    def _e_Load(self, e) -> str:
        t = self.decl[e.buffer].dtype
        i, ok = self.checked(e.buffer, e.index)

        def access():
            p, shift = self.slot(e.buffer, i)
            if t not in PACKED:
                return self.from_mem(self.op(f"load {mem_type(t)}, ptr addrspace({self.space(e.buffer)}) {p}"), t)
            w = self.op(f"load i32, ptr addrspace({self.space(e.buffer)}) {p}")
            return self.unpack(self.op(f"lshr i32 {w}, {shift}") if shift else w, t)
        return self.guarded(ok, access, reg_type(t))

    def space(self, name: str) -> int:
        return 11 if isinstance(self.decl[name], BufferParam) else 3

    def _s_Store(self, s) -> None:
        t = self.decl[s.buffer].dtype
        i, ok = self.checked(s.buffer, s.index)
        v = self.expr(s.value)

        def access():
            p, shift = self.slot(s.buffer, i)
            sp = self.space(s.buffer)
            if t not in PACKED:
                self.f.emit(f"store {mem_type(t)} {self.to_mem(v, t)}, ptr addrspace({sp}) {p}")
            elif shift is None:
                self.f.emit(f"store i32 {self.pack(v, t)}, ptr addrspace({sp}) {p}")
            else:
                mask = self.op(f"xor i32 {self.op(f'shl i32 {(1 << PACKED[t]) - 1}, {shift}')}, -1")
                val = self.op(f"shl i32 {self.pack(v, t)}, {shift}")
                self.op(f'atomicrmw and ptr addrspace(11) {p}, i32 {mask} syncscope("device") monotonic')
                self.op(f'atomicrmw or ptr addrspace(11) {p}, i32 {val} syncscope("device") monotonic')
        self.guarded(ok, access)

    def _s_AtomicAdd(self, s) -> None:
        t = self.decl[s.buffer].dtype
        if t in PACKED or t not in (dt.int32, dt.uint32, dt.int64, dt.uint64, dt.float32):
            raise LoweringError(f"kernel '{self.k.name}': atomic add on {t.name} has no SPIR-V lowering "
                                "(int32, uint32, int64, uint64 and float32 have)")
        i, ok = self.checked(s.buffer, s.index)
        v, ty = self.expr(s.value), reg_type(t)
        scope = "device" if self.space(s.buffer) == 11 else "workgroup"

        def access():
            p, _ = self.slot(s.buffer, i)
            kind = "fadd" if t is dt.float32 else "add"
            return self.op(f'atomicrmw {kind} ptr addrspace({self.space(s.buffer)}) {p}, {ty} {v} '
                           f'syncscope("{scope}") monotonic')
        old = self.guarded(ok, access, ty)
        if s.result is not None:
            self.f.emit(f"store {ty} {old}, ptr {self.local_ptr(s.result)}")

    # -- traps, barriers, casts -----------------------------------------------------------------
    def write_trap(self, code: int) -> None:
        ticket = self.op(f'atomicrmw add ptr addrspace(11) {self.pointer("$trap", str(TRAP_TICKET_WORD))}, '
                         f'i32 1 syncscope("device") monotonic')
        won, after = self.f.label("trapwon"), self.f.label("trapexit")
        self.f.cbr(self.op(f"icmp eq i32 {ticket}, 0"), won, after)
        self.f.start(won)
        for word, value in ((0, str(code)), (1, self.meta_word(self.layout.launch_id))):
            self.f.emit(f'store atomic i32 {value}, ptr addrspace(11) {self.pointer("$trap", str(word))} '
                        f'syncscope("device") monotonic, align 4')
        self.f.br(after)
        self.f.start(after)
        self.on_trap_exit()

    def on_trap_exit(self) -> None:
        if not self.barriers:
            self.f.term("ret void")

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


class SpirvTarget:
    name = NAME
    max_workgroup_size = 1024
    as_global, as_shared = 11, 3

    def __init__(self, arch: str | None = None):
        _init()
        self.arch = arch or ""
        self.triple = TRIPLE
        self.tm = llvm.Target.from_triple(TRIPLE).create_target_machine(opt=2)
        self.datalayout = str(self.tm.target_data)

    @property
    def identity(self) -> str:
        return f"{TRIPLE}/{EXTENSIONS}/naga-post-pass-{POST_PASS_VERSION}"

    def build_module(self, kernel, module, symbol: str) -> None:
        bad = sorted(d.name for d in kernel_dtypes((kernel.params, kernel.locals, kernel.shared, kernel.body))
                     if d in UNSUPPORTED)
        if bad:
            raise DTypeError(f"kernel '{kernel.name}' uses {', '.join(bad)}: the wgpu/SPIR-V target has no 8- or "
                             "16-bit integers (naga, wgpu's shader translator, rejects them); use int32/uint32")
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
        f.cbr(f.op(f"icmp uge i32 {lin}, {f.op(f'mul i32 {gxy}, {g[2]}')}"), "surplus", "run")
        f.start("surplus")
        f.term("ret void")
        f.start("run")
        q = f.op(f"udiv i32 {lin}, {g[0]}")
        ids = [f.op(f"urem i32 {lin}, {g[0]}"), f.op(f"urem i32 {q}, {g[1]}"), f.op(f"udiv i32 {lin}, {gxy}")]
        for a in range(3):
            lw.ids[("group", a)] = ids[a]
            lw.ids[("local", a)] = builtin("thread.id.in.group", a) if kernel.workgroup[a] > 1 else "0"
        lw.stmts(kernel.body)
        if not f.terminated:
            f.term("ret void")
        wx, wy, wz = kernel.workgroup
        module.attributes.append(f'attributes #2 = {{ convergent nounwind "hlsl.shader"="compute" '
                                 f'"hlsl.numthreads"="{wx},{wy},{wz}" }}')
        module.functions.append(f.render(f"define void @{symbol}() #2"))

    def optimize(self, mod) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=2)
        pto.loop_vectorization = pto.slp_vectorization = False
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def emit(self, mod) -> bytes:
        return fix_for_naga(self.tm.emit_object(mod))

    def assembly(self, mod) -> str:
        return self.tm.emit_assembly(mod)


__all__ = ["SpirvTarget", "SpirvLowering", "TRIPLE", "PACKED", "kernel_dtypes"]
