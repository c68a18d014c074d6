"""The AMDGCN target, without an AMD GPU: every sample kernel, every imported kernel (the assets) and
kernelgen's kernels for the catalog of graphs (tests/jit/test_ptxas_all_kernels.py, planned for an AMD
GPU's capabilities) compile to a linked HSACO that a ROCm loader takes: ELF64 shared object, OS/ABI
AMDGPU_HSA, machine EM_AMDGPU, code-object v5, one kernel descriptor `<entry>.kd` per kernel and the
AMDGPU metadata note naming the target and the kernel. `poot compile --target amdgcn` writes one."""
from __future__ import annotations

import re

import pytest

from poot.errors import LoweringError
from poot.jit.llvm.compile import compile_kernel, get_target, llvm_ir
from poot.jit.llvm.targets.amdgcn.hsaco import ELFOSABI_AMDGPU_HSA, EM_AMDGPU, inspect_hsaco
from poot.jit.llvm.targets.amdgcn.target import parse_arch

from kir_samples import add_kernel, all_kernels, reduce_shared_kernel
from test_ptxas_all_kernels import CASES
from target_caps import ROCM_CAPS

pytest.importorskip("ziglang", reason="linking a HSACO needs the ziglang wheel's ld.lld (pip install 'poot[rocm]')")

ARCHS = ("gfx90a", "gfx942", "gfx1100")


def check_hsaco(art, arch: str) -> None:
    info = inspect_hsaco(art.data)
    what = f"kernel '{art.name}' ({arch})"
    assert (info.elf_type, info.os_abi, info.machine) == (3, ELFOSABI_AMDGPU_HSA, EM_AMDGPU), what
    assert info.abi_version == 3, f"{what}: code object v{info.abi_version + 2}, expected v5"
    assert info.kernel_descriptors == (art.entry,), f"{what}: kernel descriptors {info.kernel_descriptors}"
    assert info.target == f"amdgcn-amd-amdhsa--{arch}", what
    assert art.entry.encode() in info.metadata and b"amdhsa.kernels" in info.metadata, what


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,kernel", all_kernels())
def test_sample_kernels_link_to_hsaco(name, kernel, arch):
    check_hsaco(compile_kernel(kernel, "amdgcn", arch=arch), arch)


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_kernels_link_to_hsaco(case):
    from poot.fuse.plan import plan_fusion
    from poot.jit.codegen import generate

    plan = plan_fusion(CASES[case])
    kernels = [launch.kernel for step in plan.kernel_steps for launch in generate(step, plan, ROCM_CAPS).launches]
    assert kernels or all(s.kind == "alias" for s in plan.steps), f"{case}: no kernel generated"
    for kernel in kernels:
        check_hsaco(compile_kernel(kernel, "amdgcn", arch=ROCM_CAPS.compile_arch), ROCM_CAPS.compile_arch)


def _asset_names():
    from poot.jit.kir import assets

    return [e.name for e in assets.load_manifest() if e.builds_for("amdgcn")]


@pytest.mark.parametrize("arch", ("gfx90a", "gfx1100"))
@pytest.mark.parametrize("name", _asset_names())
def test_imported_kernels_link_to_hsaco(name, arch):
    from poot.jit.kir import assets

    check_hsaco(compile_kernel(assets.load_asset(name), "amdgcn", arch=arch), arch)


def test_locals_live_in_registers_and_barriers_are_s_barrier():
    """Locals are addrspace(5) allocas the optimizer must promote (no scratch memory), and a workgroup
    wider than one wavefront synchronizes with s_barrier between workgroup-scope fences."""
    import llvmlite.binding as llvm

    target = get_target("amdgcn", "gfx942")
    for kernel in (reduce_shared_kernel(wg=256), add_kernel()):
        ir = llvm_ir(kernel, "amdgcn", arch="gfx942")
        assert "alloca" not in ir, kernel.name
        asm = target.assembly(llvm.parse_assembly(ir))
        assert re.search(r"\.amdhsa_private_segment_fixed_size 0\b", asm), kernel.name
        assert ("s_barrier" in asm) == (kernel.name.startswith("rsum")), kernel.name


def test_workgroup_size_is_exact_in_the_metadata():
    info = inspect_hsaco(compile_kernel(reduce_shared_kernel(wg=128), "amdgcn").data)
    assert b".max_flat_workgroup_size" in info.metadata
    assert b"amdgcn-amd-amdhsa--gfx90a" in info.metadata      # the default arch


def test_target_ids_and_bad_archs():
    assert parse_arch("gfx942") == ("gfx942", "")
    assert parse_arch("gfx90a:sramecc+:xnack-") == ("gfx90a", "+sramecc,-xnack")
    check_hsaco(compile_kernel(add_kernel(), "amdgcn", arch="gfx90a:xnack+"), "gfx90a:xnack+")
    for bad in ("sm_90", "gfx90a:fast+", "amdgcn"):
        with pytest.raises(LoweringError, match="must look like gfx90a"):
            compile_kernel(add_kernel(), "amdgcn", arch=bad)
    with pytest.raises(LoweringError, match="LLVM does not know the AMD GPU .gfx999."):
        compile_kernel(add_kernel(), "amdgcn", arch="gfx999", use_cache=False)


def test_disk_cache_returns_the_same_hsaco(tmp_path, monkeypatch):
    from poot.jit.llvm import cache

    monkeypatch.setenv("POOT_CACHE_DIR", str(tmp_path))
    kernel = add_kernel(wg=96)
    first = compile_kernel(kernel, "amdgcn", arch="gfx942")
    cache.cache_clear(disk=False)
    again = compile_kernel(kernel, "amdgcn", arch="gfx942")
    assert isinstance(again.data, bytes) and again.data == first.data


def test_poot_compile_writes_a_checked_hsaco(tmp_path, capsys):
    from poot.cli import main

    src = tmp_path / "k.py"
    src.write_text("import poot as pt\n\n@pt.kernel\ndef scale(x: pt.In[pt.f32], y: pt.Out[pt.f32]):\n"
                   "    i = pt.thread_index()\n    if i < len(y):\n        y[i] = 2.0 * x[i]\n")
    out = tmp_path / "scale.hsaco"
    assert main(["compile", str(src), "--target", "amdgcn", "--arch", "gfx942", "-o", str(out), "--check"]) == 0
    info = inspect_hsaco(out.read_bytes())
    assert info.machine == EM_AMDGPU and len(info.kernel_descriptors) == 1 and info.target.endswith("gfx942")
    assert "HSACO for amdgcn-amd-amdhsa--gfx942" in capsys.readouterr().out
