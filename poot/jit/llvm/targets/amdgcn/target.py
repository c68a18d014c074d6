"""The AMDGCN target (ROCm): `amdgcn-amd-amdhsa`, cpu `gfxNNN` (default gfx90a, or a full target ID such
as `gfx90a:sramecc+:xnack-`), code-object v5, an ELF object linked to a HSACO with LLD (hsaco.py),
loaded later with hipModuleLoadData.

Entry ABI (poot/jit/llvm/abi.py): the one PTX has too (poot/jit/llvm/gpu_entry.py), as an `amdgpu_kernel`
with eight bytes of kernel arguments per pointer, launched with the kernel's workgroup over a physical
grid that may be folded.

What differs from PTX, and why:
- the physical grid size comes from the HSA dispatch packet (`llvm.amdgcn.dispatch.ptr`: grid_size_x/y
  in work items at bytes 12/16, so groups = grid_size / workgroup), which every code-object version has;
- the stack is addrspace(5): locals are allocas there, cast to flat pointers (the optimizer promotes
  them to registers);
- a barrier is `s_barrier` between workgroup-scope release and acquire fences (what __syncthreads is);
- "amdgpu-flat-work-group-size" is the kernel's exact workgroup size, so the backend may use all the
  registers that size allows;
- matrix multiply-accumulates (KIR Mma) are AMD's own: MFMA on CDNA, WMMA on RDNA3 (matrix_cores.py); PTX's
  m16n8k16 is not built here.
Code objects are not forward compatible: a HSACO runs only on the ISA it was built for, so the ROCm
device asks for its own arch (Capabilities.compile_arch). An arch LLVM does not know is refused
before any codegen (LLVM would only warn, then abort on the first atomic).
"""
from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import llvmlite.binding as llvm

from poot.errors import LoweringError
from poot.jit.llvm.targets.amdgcn.hsaco import inspect_hsaco, link_hsaco, linker
from poot.jit.llvm.targets.amdgcn.matrix_cores import MatrixCoreLowering
from poot.jit.llvm.gpu_entry import emit_gpu_kernel
from poot.jit.llvm.exact_rem import ExactRemLowering
from poot.jit.llvm.lower import Lowering
from poot.jit.llvm.targets import target_named

NAME = "amdgcn"
TRIPLE = "amdgcn-amd-amdhsa"
DEFAULT_ARCH = target_named(NAME).default_arch   # the registry's
CODE_OBJECT_VERSION = 500
_EF_AMDGPU_MACH = 0xFF


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def parse_arch(arch: str) -> tuple[str, str]:
    """('gfx90a', '+sramecc,-xnack') from a target ID 'gfx90a:sramecc+:xnack-' (features may be absent:
    then the code runs with either setting)."""
    cpu, *settings = arch.strip().split(":")
    if not re.fullmatch(r"gfx[0-9a-f]{3,4}", cpu) or any(not re.fullmatch(r"(xnack|sramecc)[+-]", s)
                                                           for s in settings):
        raise LoweringError(f"AMDGPU arch '{arch}' must look like gfx90a, gfx942, gfx1100 or a target ID "
                            "such as gfx90a:sramecc+:xnack-")
    return cpu, ",".join(s[-1] + s[:-1] for s in settings)


@functools.lru_cache(maxsize=None)
def _sources_digest() -> str:
    here = Path(__file__).resolve()
    parts = [here.read_bytes()] + [(here.parent / f).read_bytes() for f in ("hsaco.py", "matrix_cores.py")]
    return hashlib.sha256(b"".join(parts)).hexdigest()[:16]


class _AmdgcnLowering(MatrixCoreLowering, ExactRemLowering, Lowering):
    def alloca(self, ty: str, hint: str) -> str:
        slot = self.f.entry_op(f"alloca {ty}, align 4, addrspace(5)", hint=hint)
        return self.f.entry_op(f"addrspacecast ptr addrspace(5) {slot} to ptr", hint=hint)

    def shuffle_word(self, w: str, mask: int) -> str:
        """ds_bpermute from lane (lane ^ mask) of the wave (a 32-aligned partner stays in a wave32/64)."""
        lo = self.intr("llvm.amdgcn.mbcnt.lo", "i32", [("i32", "-1"), ("i32", "0")])
        lane = self.intr("llvm.amdgcn.mbcnt.hi", "i32", [("i32", "-1"), ("i32", lo)])
        addr = self.op(f"shl i32 {self.op(f'xor i32 {lane}, {mask}')}, 2")
        return self.intr("llvm.amdgcn.ds.bpermute", "i32", [("i32", addr), ("i32", w)])

    def shuffle_lane_word(self, w: str, lane: str) -> str:
        """ds_bpermute from lane (own lane & ~31) | (lane & 31): the 32-lane run inside a wave32/64."""
        lo = self.intr("llvm.amdgcn.mbcnt.lo", "i32", [("i32", "-1"), ("i32", "0")])
        own = self.intr("llvm.amdgcn.mbcnt.hi", "i32", [("i32", "-1"), ("i32", lo)])
        src = self.op(f"or i32 {self.op(f'and i32 {own}, -32')}, {self.op(f'and i32 {lane}, 31')}")
        return self.intr("llvm.amdgcn.ds.bpermute", "i32", [("i32", self.op(f"shl i32 {src}, 2")), ("i32", w)])

    def on_barrier(self) -> None:
        self.f.emit('fence syncscope("workgroup") release')
        self.f.emit(f"call void {self.m.intrinsic('llvm.amdgcn.s.barrier', 'void', '')}()")
        self.f.emit('fence syncscope("workgroup") acquire')


class AmdgcnTarget:
    name = NAME
    max_workgroup_size = target_named(NAME).max_workgroup_size   # the registry's limit
    as_global, as_shared = 1, 3

    def __init__(self, arch: str | None = None):
        _init()
        self.arch = arch or DEFAULT_ARCH
        self.cpu, self.features = parse_arch(self.arch)
        self.triple = TRIPLE
        self.tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=self.cpu, features=self.features, opt=3)
        self.datalayout = str(self.tm.target_data)
        self._check_known()

    def _check_known(self) -> None:
        """Refuse an arch LLVM does not know: it only warns, then aborts the process selecting code for
        no GPU in particular. An empty kernel's object says: its EF_AMDGPU_MACH is 0 for such an arch."""
        probe = llvm.parse_assembly(f'target triple = "{TRIPLE}"\n'
                                    "define amdgpu_kernel void @probe() {\n  ret void\n}\n")
        if inspect_hsaco(self.tm.emit_object(probe)).flags & _EF_AMDGPU_MACH == 0:
            raise LoweringError(f"LLVM does not know the AMD GPU '{self.cpu}'; use an arch such as gfx90a, gfx942 "
                                "or gfx1100")

    @property
    def identity(self) -> str:
        """Part of the artifact cache key: triple, arch, code-object version, the linker, and a digest of
        this target's sources."""
        return f"{TRIPLE}/{self.arch}/cov{CODE_OBJECT_VERSION // 100}/{linker()[1]}/{_sources_digest()}"

    def build_module(self, kernel, module, symbol: str) -> None:
        def intrinsic(f, name: str, axis: int) -> str:
            fn = module.intrinsic(f"llvm.amdgcn.{name}.{'xyz'[axis]}", "i32", "")
            return f.op(f"call i32 {fn}()")

        def physical(f):
            packet = f.op(f"call ptr addrspace(4) {module.intrinsic('llvm.amdgcn.dispatch.ptr', 'ptr addrspace(4)', '')}()")
            n = []
            for a in range(2):                   # grid_size_x/y (work items) -> workgroups
                p = f.op(f"getelementptr i8, ptr addrspace(4) {packet}, i64 {12 + 4 * a}")
                items = f.op(f"load i32, ptr addrspace(4) {p}, align 4")
                n.append(f.op(f"zext i32 {f.op(f'udiv i32 {items}, {kernel.workgroup[a]}')} to i64"))
            return [f.op(f"zext i32 {intrinsic(f, 'workgroup.id', a)} to i64") for a in range(3)], n

        lw = _AmdgcnLowering(kernel, module, as_global=1, as_shared=3)
        lw.cpu = self.cpu
        f, params = emit_gpu_kernel(lw, symbol, physical, lambda f, a: intrinsic(f, "workitem.id", a))
        size = kernel.workgroup[0] * kernel.workgroup[1] * kernel.workgroup[2]
        module.attributes.append(f'attributes #2 = {{ nounwind "amdgpu-flat-work-group-size"="{size},{size}" '
                                 f'"uniform-work-group-size"="true" }}')
        module.attributes.append(f'!llvm.module.flags = !{{!0}}\n'
                                 f'!0 = !{{i32 1, !"amdhsa_code_object_version", i32 {CODE_OBJECT_VERSION}}}')
        module.functions.append(f.render(f"define amdgpu_kernel void @{symbol}({params}) #2"))

    def optimize(self, mod) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def emit(self, mod) -> bytes:
        entry = re.search(r"define amdgpu_kernel void @([\w.$]+)\(", str(mod))
        return link_hsaco(self.tm.emit_object(mod), entry.group(1) if entry else "?")

    def assembly(self, mod) -> str:
        return self.tm.emit_assembly(mod)


__all__ = ["AmdgcnTarget", "parse_arch", "TRIPLE", "DEFAULT_ARCH"]
