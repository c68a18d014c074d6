"""The target registry: one object per compilation target, declaring what the rest of poot may ask of it.

A device describes itself by a target *name* (`Capabilities.target`: devices import nothing of jit), and
code in jit turns that name into the target's object here (`target_of(caps)`, `target_named(name)`),
then asks the object the fact it needs -- does this target exchange values across a subgroup, does its
code run in host memory, what shape do its kernels take -- instead of comparing names. A new target is
one more entry below (and its `targets/<name>/` lowering), not a hunt for `== "ptx"` through the tree.

Importing this module imports no LLVM: a target's lowering class is loaded on the first `lowering()`.
"""
from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass, field

from poot.devices.llvm_lock import LLVM_LOCK as _LLVM_LOCK
from poot.errors import LoweringError


class KernelStyle(enum.Enum):
    """The shape of the kernels code generation builds for a target."""
    CPU = "cpu"   # a workgroup is one thread that walks a block of elements in loops LLVM vectorizes
    GPU = "gpu"   # workgroups of many threads, each taking an element (or one vector of them) per step


class BinaryFormat(enum.Enum):
    """What an artifact's `data` holds (poot/jit/llvm/compile.py Artifact)."""
    OBJECT_CODE = "object code"       # an ELF object for this machine, linked by the CPU device's JIT
    PTX_TEXT = "PTX text"             # NVIDIA's virtual ISA, assembled by the CUDA driver at load
    SPIRV_WORDS = "SPIR-V words"      # a Vulkan compute module (little-endian 32-bit words)
    HSACO = "HSACO"                   # a linked AMD GPU code object for one ISA
    LLVM_IR_TEXT = "LLVM IR text"     # the lowered module before optimization, for inspection only

    @property
    def is_text(self) -> bool:
        """Whether the artifact's data is a str (written as text, cached with the `text` flag)."""
        return self in (BinaryFormat.PTX_TEXT, BinaryFormat.LLVM_IR_TEXT)


@dataclass(frozen=True)
class Target:
    """One compilation target: its facts, and the lowering hook (`lowering(arch)`) compile.py drives."""
    name: str
    binary_format: BinaryFormat
    style: KernelStyle
    lowering_class: str             # "module:Class" of the LLVM lowering (targets/<name>/target.py)
    file_extension: str             # of a written artifact (`poot compile`)
    is_host: bool = False           # kernels run on the calling thread, in host memory (buffers are host arrays)
    has_shuffles: bool = False      # lowers shuffle_xor / subgroup exchanges (a device's subgroups say how wide)
    has_mma: bool = False           # lowers warp-level matrix fragments (mma_*: tensor cores, sm_80 and newer)
    runs_gemm_assets: bool = False  # the hand-written GEMM assets lower for it (SPIR-V's backend fails on gemm_f32)
    folds_grid: bool = False        # its kernels rebuild a logical grid from a folded physical one (meta words)
    vector_store_bytes: int = 0     # widest store a thread's consecutive elements merge into (0: CPU loops
                                    # vectorize instead); a device may narrow it (Capabilities.vector_store_bytes)
    packs_narrow: bool = False      # keeps 8- and 16-bit buffer elements in 32-bit words (a load and a shift;
                                    # a store an atomic) and merges no accesses (gpu_lanes.access_bytes)
    max_workgroup_size: int = 1024  # work items per workgroup the lowering accepts (the KIR verifier's limit)
    static_shared_limit: int = 0    # bytes of shared arrays a kernel may declare statically; past it they are
                                    # one dynamic block sized at launch (0: no such limit)
    default_arch: str = ""          # the arch compiled for when neither caller nor device names one
    inspection_only: bool = False   # compile stops at the LLVM IR text (no optimization, no code emitted)
    validator: str = ""             # "module:function" checking a written artifact with the target's own tool
    _lowerings: dict = field(default_factory=dict, repr=False, compare=False)

    def lowering(self, arch: str | None = None):
        """The target's lowering object for `arch` (created once per arch; loads LLVM on first use)."""
        hit = self._lowerings.get(arch)
        if hit is None:
            with LLVM_LOCK:
                hit = self._lowerings.get(arch)
                if hit is None:
                    hit = self._lowerings[arch] = _load(self.lowering_class)(arch)
        return hit

    def validate(self, path, arch: str | None = None) -> str:
        """Check a written artifact with the target's own tool; a line saying what was done."""
        if not self.validator:
            return f"{path}: verified KIR (no external validator for target '{self.name}')"
        return _load(self.validator)(path, arch)


# LLVM's global context is not thread-safe: lowerings are built, and modules parsed, optimized and emitted
# (poot/jit/llvm/compile.py), under this one lock (shared with the CPU device's engines)
LLVM_LOCK = _LLVM_LOCK
_TARGETS = "poot.jit.llvm.targets"


def _load(spec: str):
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


REGISTRY: dict[str, Target] = {t.name: t for t in (
    Target("cpu", BinaryFormat.OBJECT_CODE, KernelStyle.CPU, f"{_TARGETS}.cpu.target:CpuTarget", ".o",
           is_host=True),
    Target("ptx", BinaryFormat.PTX_TEXT, KernelStyle.GPU, f"{_TARGETS}.ptx.target:PtxTarget", ".ptx",
           has_shuffles=True, has_mma=True, runs_gemm_assets=True, folds_grid=True, vector_store_bytes=16,
           static_shared_limit=48 * 1024, default_arch="sm_80", validator=f"{_TARGETS}.validate:check_ptx"),
    Target("spirv", BinaryFormat.SPIRV_WORDS, KernelStyle.GPU, f"{_TARGETS}.spirv.target:SpirvTarget", ".spv",
           has_shuffles=True, folds_grid=True, vector_store_bytes=16, packs_narrow=True,
           validator=f"{_TARGETS}.validate:check_spirv"),
    Target("amdgcn", BinaryFormat.HSACO, KernelStyle.GPU, f"{_TARGETS}.amdgcn.target:AmdgcnTarget", ".hsaco",
           has_shuffles=True, runs_gemm_assets=True, folds_grid=True, vector_store_bytes=16,
           default_arch="gfx90a", validator=f"{_TARGETS}.validate:check_hsaco"),
    # not a device's target: the CPU lowering's module as text, for reading (`poot compile --target llvm`)
    Target("llvm", BinaryFormat.LLVM_IR_TEXT, KernelStyle.CPU, f"{_TARGETS}.cpu.target:CpuTarget", ".ll",
           is_host=True, inspection_only=True),
)}


def target_named(name: str) -> Target:
    """The registered target called `name`; LoweringError naming the known ones otherwise."""
    t = REGISTRY.get(name)
    if t is None:
        raise LoweringError(f"unknown target '{name}'; poot compiles for " + ", ".join(REGISTRY))
    return t


def target_of(caps) -> Target:
    """The target a device with Capabilities `caps` runs (its `caps.target` name, looked up)."""
    return target_named(caps.target)


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


__all__ = ["LLVM_LOCK", "Target", "KernelStyle", "BinaryFormat", "REGISTRY", "target_named", "target_of", "names"]
