"""The PTX target (NVIDIA): `nvptx64-nvidia-cuda`, cpu `sm_XY` (default sm_80), an explicit PTX ISA
feature (+ptx80, or what newer SMs need), assembly text loaded later with cuModuleLoadData.

Entry ABI (poot/jit/llvm/abi.py):

    ptx_kernel void ENTRY(ptr addrspace(1) b0, ..., ptr addrspace(1) meta, ptr addrspace(1) trap)

launched with blockDim = the kernel's workgroup and a physical grid of at least the logical number of
workgroups (poot/devices/grid.py fold_grid). The entry linearizes its physical block id, returns at once when it is
past the logical grid (uniform per block, before any barrier), and otherwise decomposes it over the
logical grid read from meta. Buffers are `noalias` global pointers (written buffers must not alias
other params), shared arrays are addrspace(3) globals, barriers are `bar.sync 0`
(`llvm.nvvm.barrier0`: it orders shared and global memory for the block), atomics are LLVM
`atomicrmw`/`cmpxchg` on global or shared pointers.
"""
from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm

from poot import dtypes as dt
from poot.jit.llvm.gpu_entry import dynamic_shared_bytes, emit_gpu_kernel
from poot.jit.llvm.ir import Func
from poot.jit.llvm.exact_rem import ExactRemLowering
from poot.jit.llvm.lower import Lowering
from poot.jit.llvm.targets import target_named
from poot.jit.llvm.wide_memory import wgmma_result

NAME = "ptx"
TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = target_named(NAME).default_arch   # the registry's
_MIN_PTX = {100: 86, 101: 86, 103: 88, 120: 87, 121: 88}   # SM -> lowest PTX ISA that knows it (x10)


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def ptx_feature(arch: str) -> str:
    m = re.fullmatch(r"sm_(\d+)a?", arch)
    if not m:
        from poot.errors import LoweringError

        raise LoweringError(f"PTX arch '{arch}' must look like sm_80 or sm_90a")
    return f"+ptx{max(80, _MIN_PTX.get(int(m.group(1)), 80))}"


def _sm(arch: str) -> int:
    return int(re.match(r"sm_(\d+)", arch).group(1))


class _PtxLowering(ExactRemLowering, Lowering):
    def on_barrier(self) -> None:
        self.f.emit(f"call void {self.m.intrinsic('llvm.nvvm.barrier0', 'void', '')}()")

    arch = DEFAULT_ARCH

    def _needs(self, sm: int, what: str) -> None:
        if _sm(self.arch) < sm:
            from poot.errors import NotBuiltError

            raise NotBuiltError(f"{what} needs sm_{sm} or newer; this kernel is compiled for {self.arch}")

    # -- 16-byte memory operations (poot/jit/llvm/wide_memory.py) --------------------------------------
    def load_words(self, buffer: str, index) -> list[str]:
        """One ld.global.v4 / ld.shared.v4 (buffers and shared arrays are 16-byte aligned)."""
        p, pty = self.span_ptr(buffer, index)
        v = self.op(f"load <4 x i32>, {pty} {p}, align 16")
        return [self.op(f"extractelement <4 x i32> {v}, i32 {i}") for i in range(4)]

    def store_words(self, s) -> None:
        vals = [self.expr(x) for x in s.values]
        p, pty = self.span_ptr(s.buffer, s.index)
        v = "poison"
        for i, w in enumerate(vals):
            v = self.op(f"insertelement <4 x i32> {v}, i32 {w}, i32 {i}")
        self.f.emit(f"store <4 x i32> {v}, {pty} {p}, align 16")

    def ldmatrix_call(self, e) -> str:
        """ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 (LLVM's NVVM intrinsic)."""
        self._needs(75, f"ldmatrix_x4{'_trans' if e.trans else ''}")
        p, pty = self.span_ptr(e.shared, e.index)
        name = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4." + ("trans.b16" if e.trans else "b16")
        return self.intr(name, "{ i32, i32, i32, i32 }", [(pty, p)])

    def copy_async(self, s) -> None:
        """cp.async.cg.shared.global [dst], [src], 16, src_size: src_size 0 (zero-fill, no read) when not ok.
        The source pointer is formed without `inbounds`: where ok is false it may lie outside the buffer."""
        self._needs(80, "copy_async")
        ok = self.expr(s.ok)
        dst, dty = self.span_ptr(s.dst, s.dst_index)
        src, sty = self.span_ptr(s.src, s.src_index, guard=ok, inbounds=False)
        size = self.op(f"select i1 {ok}, i32 16, i32 0")
        fn = self.m.intrinsic("llvm.nvvm.cp.async.cg.shared.global.16.s", "void", f"{dty}, {sty}, i32")
        self.f.emit(f"call void {fn}({dty} {dst}, {sty} {src}, i32 {size})")

    def copy_async_commit(self) -> None:
        self._needs(80, "copy_async_commit")
        self.f.emit(f"call void {self.m.intrinsic('llvm.nvvm.cp.async.commit.group', 'void', '')}()")

    def copy_async_wait(self, pending: int) -> None:
        self._needs(80, "copy_async_wait")
        self.f.emit(f"call void {self.m.intrinsic('llvm.nvvm.cp.async.wait.group', 'void', 'i32')}(i32 {pending})")

    def shuffle_word(self, w: str, mask: int) -> str:
        """shfl.sync.bfly.b32 over the whole warp (membermask -1, clamp 31: the 32-lane segment)."""
        return self.intr("llvm.nvvm.shfl.sync.bfly.i32", "i32",
                         [("i32", "-1"), ("i32", w), ("i32", str(mask)), ("i32", "31")])

    def shuffle_lane_word(self, w: str, lane: str) -> str:
        """shfl.sync.idx.b32 over the whole warp: source lane = lane & 31."""
        return self.intr("llvm.nvvm.shfl.sync.idx.i32", "i32",
                         [("i32", "-1"), ("i32", w), ("i32", lane), ("i32", "31")])

    # -- narrow-float rounding: one cvt instruction (sm_80+ for bf16) instead of integer sequences ---------
    def _narrow_hw(self, v: str, ty: str) -> str:
        """float -> i16 bits of `ty` (bfloat or half), rounded to nearest even by one cvt.rn: the GEMM
        epilogues convert 64 values at full register pressure (1 instruction a value against 9 for bf16's
        integer rounding). A NaN comes out as the canonical NaN, positive: IEEE 754 leaves a NaN's sign
        and payload unspecified, and the GPU's own float arithmetic gives the canonical NaN anyway."""
        return self.op(f"bitcast {ty} {self.op(f'fptrunc float {v} to {ty}')} to i16")

    def round_to(self, v: str, dtype) -> str:
        if dtype is dt.bfloat16 and _sm(self.arch) >= 80:
            bits = self._narrow_hw(v, "bfloat")
            w = self.op(f"shl i32 {self.op(f'zext i16 {bits} to i32')}, 16")
            return self.op(f"bitcast i32 {w} to float")
        if dtype is dt.float16:
            h = self.op(f"bitcast i16 {self._narrow_hw(v, 'half')} to half")
            return self.op(f"fpext half {h} to float")
        return super().round_to(v, dtype)

    def to_mem(self, v: str, dtype) -> str:
        if dtype is dt.bfloat16 and _sm(self.arch) >= 80:
            return self._narrow_hw(v, "bfloat")
        if dtype is dt.float16:
            return self.op(f"bitcast i16 {self._narrow_hw(v, 'half')} to half")
        return super().to_mem(v, dtype)

    def fast_exp2(self, x: str, ty: str) -> str:
        """ex2.approx.ftz.f32 for float (one MUFU instruction); the accurate exp2 for double."""
        if ty != "float":
            return super().fast_exp2(x, ty)
        return self.intr("llvm.nvvm.ex2.approx.ftz.f", "float", [("float", x)])

    def mma_call(self, e) -> str:
        """mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32: A as 4 and B as 2 registers of two 16-bit
        elements each (the lower-indexed element in the low half), C and D 4 floats."""
        self._needs(80, f"mma_{e.shape}")
        t = e.a[0].dtype
        f16 = t is dt.float16
        word_t = "<2 x half>" if f16 else "i32"

        def bits(x):
            # a bf16 register holds an exact bf16 value in a float: its bits are the float's high half (no
            # re-rounding, so a word unpacked into two elements packs back into the same word)
            if f16:
                return self.op(f"zext i16 {self.to_bits(self.expr(x), t)} to i32")
            return self.op(f"lshr i32 {self.op(f'bitcast float {self.expr(x)} to i32')}, 16")

        def pack(lo, hi):
            lo16, hi16 = bits(lo), bits(hi)
            w = self.op(f"or i32 {lo16}, {self.op(f'shl i32 {hi16}, 16')}")
            return self.op(f"bitcast i32 {w} to <2 x half>") if f16 else w

        a = [pack(e.a[2 * i], e.a[2 * i + 1]) for i in range(4)]
        b = [pack(e.b[2 * i], e.b[2 * i + 1]) for i in range(2)]
        c = [self.expr(x) for x in e.c]
        # LLVM's names: the bf16 form always accumulates in f32; the f16 form names its D and C types
        name = "llvm.nvvm.mma.m16n8k16.row.col." + ("f32.f32" if f16 else "bf16")
        return self.intr(name, "{ float, float, float, float }",
                         [(word_t, v) for v in a + b] + [("float", v) for v in c])

    # -- Hopper's warpgroup matrix product (KIR Wgmma): 4 x wgmma.mma_async m64nNk16, then a wait -----------
    def _smem_desc(self, shared: str, index, leading: int, stride: int) -> str:
        """The 64-bit shared-memory matrix descriptor of the operand at word `index` of `shared`: start
        address / 16, leading and stride byte offsets / 16, the 128-byte swizzle (mode 1, bits 62-63)."""
        idx = self.op(f"zext i32 {self.expr(index)} to i64")
        p = self.op(f"getelementptr inbounds i32, {self.ptr(self.as_shared)} {self.shared_ptrs[shared]}, i64 {idx}")
        addr = self.op(f"ptrtoint {self.ptr(self.as_shared)} {p} to i64")
        start = self.op(f"lshr i64 {self.op(f'and i64 {addr}, 262143')}, 4")
        fixed = (leading >> 4) << 16 | (stride >> 4) << 32 | 1 << 62
        return self.op(f"or i64 {start}, {fixed}")

    def wgmma_call(self, e) -> str:
        """One asm block: wgmma.fence, four m64nNk16 products over the operands' four 16-k steps (A: 32
        bytes further along its 128-byte lines; B: 16 lines further, or 32 bytes along them for bt), commit,
        wait for all. A is K-major (lines of k; the leading offset unused), B MN-major (trans-b 1: lines of
        n, blocks of 64 columns 64 lines apart, 8 KiB) or with bt K-major like A; 8-line groups 1 KiB apart
        in both."""
        if self.arch != "sm_90a":
            from poot.errors import NotBuiltError

            raise NotBuiltError(f"wgmma_m64n{e.n}k64 needs sm_90a (Hopper, PTX wgmma); this kernel is compiled "
                                f"for {self.arch}")
        a = self._smem_desc(e.a_shared, e.a_index, 16, 1024)
        b = self._smem_desc(e.b_shared, e.b_index, 16 if e.bt else 8192, 1024)
        descs = []
        for s in range(4):      # B's next 16 k: 32 bytes along its lines (bt), else 16 lines further
            descs += [self.op(f"add i64 {a}, {2 * s}"), self.op(f"add i64 {b}, {2 * s if e.bt else 128 * s}")]
        n = len(e.c)
        d = ", ".join(f"${i}" for i in range(n))
        t = e.inputs
        steps = " ".join(f"wgmma.mma_async.sync.aligned.m64n{e.n}k16.f32.{t}.{t} {{{d}}}, ${2 * n + 2 * s}, "
                         f"${2 * n + 2 * s + 1}, p, 1, 1, 0, {0 if e.bt else 1};" for s in range(4))
        text = (f"{{ .reg .pred p; setp.ne.b32 p, ${2 * n + 8}, 0; wgmma.fence.sync.aligned; {steps} "
                "wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0; }")
        cons = ",".join(["=f"] * n + [str(i) for i in range(n)] + ["l"] * 8 + ["r", "~{memory}"])
        args = ", ".join([f"float {self.expr(x)}" for x in e.c] + [f"i64 {x}" for x in descs] + ["i32 1"])
        return self.op(f'call {wgmma_result(e.n)} asm sideeffect "{text}", "{cons}"({args})')

    def fence_proxy_async(self) -> None:
        self.f.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')


class PtxTarget:
    name = NAME
    max_workgroup_size = target_named(NAME).max_workgroup_size   # the registry's limit
    as_global, as_shared = 1, 3

    def __init__(self, arch: str | None = None):
        _init()
        self.arch = arch or DEFAULT_ARCH
        self.features = ptx_feature(self.arch)
        self.triple = TRIPLE
        self.tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=self.arch, features=self.features, opt=3)
        self.datalayout = str(self.tm.target_data)

    @property
    def identity(self) -> str:
        return f"{TRIPLE}/{self.arch}/{self.features}"

    def _sreg(self, f: Func, m, name: str) -> str:
        fn = m.intrinsic(f"llvm.nvvm.read.ptx.sreg.{name}", "i32", "")
        return f.op(f"call i32 {fn}()")

    def build_module(self, kernel, module, symbol: str) -> None:
        def physical(f):
            return ([f.op(f"zext i32 {self._sreg(f, module, 'ctaid.' + a)} to i64") for a in "xyz"],
                    [f.op(f"zext i32 {self._sreg(f, module, 'nctaid.' + a)} to i64") for a in "xy"])

        lw = _PtxLowering(kernel, module, as_global=1, as_shared=3)
        lw.arch = self.arch
        f, params = emit_gpu_kernel(lw, symbol, physical, lambda f, a: self._sreg(f, module, "tid." + "xyz"[a]),
                                    dynamic_shared=dynamic_shared_bytes(kernel, NAME) > 0)
        wx, wy, wz = kernel.workgroup
        module.attributes.append(f'attributes #2 = {{ nounwind "nvvm.maxntid"="{wx},{wy},{wz}" }}')
        module.functions.append(f.render(f"define ptx_kernel void @{symbol}({params}) #2"))

    def optimize(self, mod) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def emit(self, mod) -> str:
        return self.tm.emit_assembly(mod)

    assembly = emit


__all__ = ["PtxTarget", "ptx_feature", "TRIPLE", "DEFAULT_ARCH"]
