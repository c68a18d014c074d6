"""One SPIR-V, two consumers: the SPIR-V target's kernel suite (test_wgpu_spirv.py: every op, dtype, cast,
loop shape, barrier, atomic, scalar, folded grid and trap, against the CPU target) runs again here on the
raw Vulkan device, which takes LLVM's SPIR-V without the naga post-pass. And every kernel -- the
samples, the imported assets and kernelgen's kernels for the catalog of graphs, planned for this
device -- compiles for the "vulkan1.3" consumer to SPIR-V that `spirv-val --target-env vulkan1.3` takes."""
from __future__ import annotations

import inspect
import shutil
import subprocess

import pytest

from poot import devices
from poot.errors import DeviceUnavailableError
from poot.jit.llvm.compile import compile_kernel

import test_wgpu_spirv as suite
from test_ptxas_all_kernels import CASES

# the wgpu suite's tests that take the device; the naga-specific one stays with wgpu
_WGPU_ONLY = {"test_without_the_barrier_fix_a_shared_memory_reduction_goes_wrong"}
for _name, _fn in vars(suite).copy().items():
    if _name.startswith("test_") and "dev" in inspect.signature(_fn).parameters and _name not in _WGPU_ONLY:
        globals()[_name] = _fn


@pytest.fixture(scope="module")
def dev():
    try:
        return devices.get("vulkan")
    except DeviceUnavailableError as e:
        pytest.skip(f"no Vulkan 1.3 device here: {e}")


def spirv_val(spv: bytes, what: str) -> None:
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed (Debian: spirv-tools)")
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", "-"], input=spv, capture_output=True)
    assert r.returncode == 0, f"{what}: {r.stderr.decode()}{r.stdout.decode()}"


def test_the_spirv_consumers_are_named():
    from poot.errors import LoweringError

    with pytest.raises(LoweringError, match="the consumers are '' \\(wgpu, naga post-pass\\) and 'vulkan1.3'"):
        compile_kernel(suite.S.add_kernel(), "spirv", arch="vulkan1.2")


@pytest.mark.parametrize("kernel", [k for _, k in suite.SAMPLES], ids=[n for n, _ in suite.SAMPLES])
def test_sample_kernels_are_valid_vulkan_spirv(kernel):
    spirv_val(compile_kernel(kernel, "spirv", arch="vulkan1.3").data, kernel.name)


def _asset_names():
    from poot.jit.kir import assets

    return [e.name for e in assets.load_manifest() if e.builds_for("spirv")]


@pytest.mark.parametrize("name", _asset_names())
def test_imported_kernels_are_valid_vulkan_spirv(name):
    from poot.jit.kir import assets

    spirv_val(compile_kernel(assets.load_asset(name), "spirv", arch="vulkan1.3").data, name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_kernels_are_valid_vulkan_spirv(case, dev):
    from poot.fuse.plan import plan_fusion
    from poot.jit.codegen import generate

    plan = plan_fusion(CASES[case])
    kernels = [launch.kernel for step in plan.kernel_steps for launch in generate(step, plan, dev.caps).launches]
    assert kernels or all(s.kind == "alias" for s in plan.steps), f"{case}: no kernel generated"
    for kernel in kernels:
        spirv_val(compile_kernel(kernel, "spirv", arch=dev.caps.compile_arch).data, f"{case}: {kernel.name}")


@pytest.mark.parametrize("arch", ["", "vulkan1.3"], ids=["naga", "vulkan1.3"])
def test_a_64_bit_atomic_add_is_refused_naming_the_missing_capability(arch):
    """LLVM's SPIR-V backend offers Vulkan no Int64Atomics (it aborted: "Unable to meet SPIR-V
    requirements"): poot refuses the kernel before LLVM runs and says what is missing; 32-bit still compiles."""
    from poot import dtypes as dt
    from poot.errors import LoweringError

    for dtype in (dt.int64, dt.uint64):
        with pytest.raises(LoweringError, match=f"atomic add on {dtype.name} needs the SPIR-V capability Int64Atomics"):
            compile_kernel(suite.S.atomic_sum_kernel(dtype), "spirv", arch=arch)
    assert compile_kernel(suite.S.atomic_sum_kernel(dt.int32), "spirv", arch=arch).data[:4] == b"\x03\x02\x23\x07"


def test_the_consumers_share_llvms_emission_and_each_module_names_its_entry(tmp_path, monkeypatch):
    """Both consumers lower a kernel to the same LLVM IR: the second one (here, or in another process on
    the same POOT_CACHE_DIR) takes LLVM's SPIR-V from the disk cache and applies only its post-pass."""
    from poot.jit.llvm import cache
    from poot.jit.llvm.targets.spirv.naga import OP_ENTRY_POINT, _string, opcode, parse
    from poot.jit.llvm.targets.spirv import target as spirv

    monkeypatch.setenv("POOT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("POOT_DISK_CACHE", raising=False)
    cache.cache_clear(memory=True, disk=False)
    calls = []
    worker = spirv.compile_spirv
    monkeypatch.setattr(spirv, "compile_spirv", lambda ir, name="?": calls.append(name) or worker(ir, name))
    kernel = suite.S.reduce_shared_kernel(64)
    naga, raw = compile_kernel(kernel, "spirv"), compile_kernel(kernel, "spirv", arch="vulkan1.3")
    assert len(calls) == 1 and naga.entry != raw.entry
    for art in (naga, raw):
        names = [_string(ins, 3) for ins in parse(art.data)[1] if opcode(ins) == OP_ENTRY_POINT]
        assert names == [art.entry.encode()]
    spirv_val(raw.data, kernel.name)
    cache.cache_clear(memory=True, disk=False)
