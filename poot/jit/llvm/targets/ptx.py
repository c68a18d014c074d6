"""The PTX target (NVIDIA): `nvptx64-nvidia-cuda`, cpu `sm_XY` (default sm_80), an explicit PTX ISA
feature (+ptx80, or what newer SMs need), assembly text loaded later with cuModuleLoadData.

Entry ABI (poot/jit/abi.py):

    ptx_kernel void ENTRY(ptr addrspace(1) b0, ..., ptr addrspace(1) meta, ptr addrspace(1) trap)

launched with blockDim = the kernel's workgroup and a physical grid of at least the logical number of
workgroups (abi.fold_grid). The entry linearizes its physical block id, returns at once when it is
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

from ..ir import Func, mem_type
from ..lower import Lowering

NAME = "ptx"
TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
_MIN_PTX = {100: 86, 101: 86, 103: 88, 120: 87, 121: 88}   # SM -> lowest PTX ISA that knows it (x10)


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def ptx_feature(arch: str) -> str:
    m = re.fullmatch(r"sm_(\d+)a?", arch)
    if not m:
        from ....errors import LoweringError

        raise LoweringError(f"PTX arch '{arch}' must look like sm_80 or sm_90a")
    return f"+ptx{max(80, _MIN_PTX.get(int(m.group(1)), 80))}"


class _PtxLowering(Lowering):
    def on_barrier(self) -> None:
        self.f.emit(f"call void {self.m.intrinsic('llvm.nvvm.barrier0', 'void', '')}()")


class PtxTarget:
    name = NAME
    max_workgroup_size = 1024
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
        lw = _PtxLowering(kernel, module, as_global=1, as_shared=3)
        f = Func()
        lw.reset_function(f)
        lw.meta, lw.trap = "%meta", "%trap"
        for j, p in enumerate(kernel.buffers):
            lw.buffers[p.name] = f"%b{j}"
        for s in kernel.shared:
            g = f"@{symbol}.sh.{s.name}"
            module.globals.append(f"{g} = internal addrspace(3) global [{s.size} x {mem_type(s.dtype)}] poison, align 16")
            lw.shared_ptrs[s.name] = g
        lw.alloca_locals()
        # linear physical block id -> logical group ids; blocks past the logical grid leave at once
        c = [f.op(f"zext i32 {self._sreg(f, module, 'ctaid.' + a)} to i64") for a in "xyz"]
        n = [f.op(f"zext i32 {self._sreg(f, module, 'nctaid.' + a)} to i64") for a in "xy"]
        yz = f.op(f"add i64 {c[1]}, {f.op(f'mul i64 {n[1]}, {c[2]}')}")
        lin = f.op(f"add i64 {c[0]}, {f.op(f'mul i64 {n[0]}, {yz}')}")
        g = [f.op(f"zext i32 {lw.meta_word(lw.layout.grid + a)} to i64") for a in range(3)]
        gxy = f.op(f"mul i64 {g[0]}, {g[1]}")
        total = f.op(f"mul i64 {gxy}, {g[2]}")
        f.cbr(f.op(f"icmp uge i64 {lin}, {total}"), "surplus", "run")
        f.start("surplus")
        f.term("ret void")
        f.start("run")
        q = f.op(f"udiv i64 {lin}, {g[0]}")
        ids = [f.op(f"urem i64 {lin}, {g[0]}"), f.op(f"urem i64 {q}, {g[1]}"), f.op(f"udiv i64 {lin}, {gxy}")]
        for a in range(3):
            lw.ids[("group", a)] = f.op(f"trunc i64 {ids[a]} to i32")
            lw.ids[("local", a)] = self._sreg(f, module, "tid." + "xyz"[a]) if kernel.workgroup[a] > 1 else "0"
        lw.stmts(kernel.body)
        f.term("ret void")
        params = ", ".join([f"ptr addrspace(1) noalias %b{j}" for j in range(len(kernel.buffers))]
                           + ["ptr addrspace(1) noalias readonly %meta", "ptr addrspace(1) noalias %trap"])
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
