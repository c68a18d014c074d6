"""Checking a written artifact with its target's own tool (`poot compile --check`): spirv-val for SPIR-V,
ptxas for PTX, and for a HSACO a read of its ELF (AMD GPU machine, kernel descriptors, metadata note).
A missing tool is said, not raised: the artifact is still what poot built."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from poot.errors import LoweringError

PTXAS_DEFAULT_ARCH = "sm_90"


def check_spirv(path: Path, arch: str | None = None) -> str:
    tool = shutil.which("spirv-val")
    if tool is None:
        return f"{path}: not validated (spirv-val is not installed; Debian package spirv-tools)"
    out = subprocess.run([tool, "--target-env", "vulkan1.3", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise LoweringError(f"spirv-val rejects {path}:\n{out.stdout}{out.stderr}")
    return f"{path}: spirv-val OK"


def check_ptx(path: Path, arch: str | None = None) -> str:
    tool = shutil.which("ptxas")
    if tool is None:
        return f"{path}: not validated (ptxas is not installed)"
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([tool, f"-arch={arch or PTXAS_DEFAULT_ARCH}", str(path), "-o",
                              os.path.join(tmp, "k.cubin")], capture_output=True, text=True)
    if out.returncode != 0:
        raise LoweringError(f"ptxas rejects {path}:\n{out.stdout}{out.stderr}")
    return f"{path}: ptxas OK"


def check_hsaco(path: Path, arch: str | None = None) -> str:
    from poot.jit.llvm.targets.amdgcn.hsaco import EM_AMDGPU, inspect_hsaco

    info = inspect_hsaco(Path(path).read_bytes())
    if info.machine != EM_AMDGPU or not info.kernel_descriptors or not info.metadata:
        note = "present" if info.metadata else "absent"
        raise LoweringError(f"{path} is no linked HSACO (machine {info.machine}, kernel descriptors "
                            f"{list(info.kernel_descriptors)}, metadata note {note})")
    return f"{path}: HSACO for {info.target}, kernels {', '.join(info.kernel_descriptors)}"


__all__ = ["check_spirv", "check_ptx", "check_hsaco"]
