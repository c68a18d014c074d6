"""ShuffleXor, KIR's subgroup exchange: the verifier's rules, the JSON and text forms, its lowering (PTX
shfl.sync.bfly assembled by ptxas, AMDGCN ds_bpermute, SPIR-V OpGroupNonUniformShuffle, NotBuiltError on
the CPU), which devices kernel generation uses it on, and the GEMV schedule knob. On a CUDA GPU and on
Vulkan (lavapipe's 8-lane subgroups in CI) the exchange itself is checked; a device refuses a kernel that
exchanges across more lanes than its subgroups hold."""
from __future__ import annotations

import numpy as np
import pytest

from poot import dtypes as dt
from poot.devices.base import Capabilities
from poot.errors import DeviceUnavailableError, KIRError, NotBuiltError, PootError
from poot.fuse.plan import plan_fusion
from poot.jit.llvm.compile import compile_kernel
from poot.jit.codegen import generate
from poot.jit.codegen.gpu_lanes import shuffles
from poot.jit.kir.builder import KernelBuilder, binary, cast, shuffle_xor
from poot.jit.kir.model import Access, Index, ShuffleXor
from poot.jit.kir.serialize import from_json, to_json
from poot.jit.kir.text import format_kernel
from poot.jit.kir.verify import verify

from ptxas_tool import PTXAS, SKIP_REASON
from test_ptxas_all_kernels import CASES, CUDA_CAPS, _assemble

DTYPES = (dt.float32, dt.float64, dt.bfloat16, dt.float16, dt.int64, dt.int32, dt.uint8, dt.bool_)


def exchange_kernel(dtype=dt.float32, mask=5, workgroup=(64, 1, 1), divergent=False):
    """out[i] = x[i ^ mask] within each 32 threads, by one ShuffleXor."""
    kb = KernelBuilder("exchange", workgroup=workgroup)
    x = kb.buffer("x", dtype, Access.READ)
    out = kb.buffer("out", dtype, Access.WRITE)
    i = kb.let("i", Index("thread", 0))
    if divergent:
        with kb.if_(binary("lt", cast(Index("local", 0), dt.uint32), 7)):
            kb.store(out, i, shuffle_xor(kb.load(x, i, dtype), mask))
    else:
        kb.store(out, i, shuffle_xor(kb.load(x, i, dtype), mask))
    return kb.build()


def test_a_shuffle_kernel_verifies_and_round_trips():
    for dtype in DTYPES:
        k = exchange_kernel(dtype)
        verify(k)
        assert from_json(to_json(k)) == k
        assert to_json(from_json(to_json(k))) == to_json(k)
    assert "out[i] = shuffle_xor(x[i], 5)" in format_kernel(exchange_kernel())


@pytest.mark.parametrize("kwargs,kind", [
    ({"mask": 0}, "bad-shuffle"), ({"mask": 32}, "bad-shuffle"), ({"mask": True}, "bad-shuffle"),
    ({"workgroup": (48, 1, 1)}, "shuffle-workgroup"), ({"workgroup": (32, 2, 1)}, "shuffle-workgroup"),
    ({"divergent": True}, "shuffle-divergent")])
def test_the_verifier_refuses_a_misused_shuffle(kwargs, kind):
    with pytest.raises(KIRError) as e:
        verify(exchange_kernel(**kwargs))
    assert e.value.kind == kind


def test_a_shuffle_of_the_wrong_type_or_after_a_divergent_return_is_refused():
    k = exchange_kernel()
    bad = k.body[:-1] + (type(k.body[-1])(k.body[-1].buffer, k.body[-1].index,
                                          ShuffleXor(k.body[-1].value.x, 5, dt.int32)),)
    with pytest.raises(KIRError, match="shuffle_xor result"):
        verify(type(k)(k.name, k.params, bad, k.locals, workgroup=k.workgroup))
    kb = KernelBuilder("late", workgroup=(32, 1, 1))
    x = kb.buffer("x", dt.float32, Access.READ_WRITE)
    with kb.if_(binary("eq", cast(Index("local", 0), dt.uint32), 3)):
        kb.ret()
    kb.store(x, Index("local", 0), shuffle_xor(kb.load(x, Index("local", 0), dt.float32), 1))
    with pytest.raises(KIRError) as e:
        verify(kb.build())
    assert e.value.kind == "shuffle-divergent"


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_ptx_shuffles_are_shfl_sync_bfly_and_assemble(dtype, tmp_path):
    k = exchange_kernel(dtype, mask=17)
    ptx = compile_kernel(k, "ptx", arch="sm_80").data
    assert ptx.count("shfl.sync.bfly.b32") == (2 if dtype.bits == 64 else 1), ptx
    for arch in ("sm_80", "sm_90"):
        _assemble(k, arch, tmp_path)


def test_amdgcn_shuffles_are_ds_bpermute():
    pytest.importorskip("ziglang", reason="linking a HSACO needs the ziglang wheel's ld.lld (pip install 'poot[rocm]')")
    from poot.jit.llvm.lower import lower_to_llvm
    from poot.jit.llvm.targets.amdgcn.target import AmdgcnTarget

    assert "llvm.amdgcn.ds.bpermute" in lower_to_llvm(exchange_kernel(), AmdgcnTarget("gfx942"))
    compile_kernel(exchange_kernel(dt.float64), "amdgcn", arch="gfx942")     # links to a code object


def test_the_cpu_target_has_no_shuffle_lowering_and_says_so():
    with pytest.raises(NotBuiltError, match="shuffle_xor"):
        compile_kernel(exchange_kernel(), "cpu")


def test_spirv_shuffles_are_group_non_uniform_shuffles_the_module_declares():
    from poot.devices.wgpu_adapter import SUBGROUP_SHUFFLE, spirv_capabilities

    for dtype in DTYPES:
        k = exchange_kernel(dtype, mask=17)
        assert k.lane_span == 32
        assert SUBGROUP_SHUFFLE in spirv_capabilities(compile_kernel(k, "spirv", arch="vulkan1.3").data)
    assert exchange_kernel(mask=5).lane_span == 8 and exchange_kernel(mask=1).lane_span == 2


def test_kernel_generation_shuffles_where_subgroups_exchange_32_lanes():
    """CUDA and ROCm always; a Vulkan device whose subgroups exchange 32 lanes (an NVIDIA GPU); not
    lavapipe's 8-lane subgroups, nor wgpu (no subgroup feature: its caps say 1), nor the CPU."""
    vulkan_32 = Capabilities("vulkan", "spirv", subgroup_size=32)
    assert shuffles(CUDA_CAPS) and shuffles(Capabilities("rocm:0", "amdgcn", subgroup_size=64)) and shuffles(vulkan_32)
    assert not shuffles(Capabilities("wgpu", "spirv", subgroup_size=1)) and not shuffles(Capabilities("cpu", "cpu"))
    lavapipe = Capabilities("vulkan", "spirv", subgroup_size=8)
    assert not shuffles(lavapipe)
    for case in ("softmax_rows", "reduce_sum_long_row", "argmax", "gemv_long"):
        plan = plan_fusion(CASES[case])
        for caps, want in ((CUDA_CAPS, True), (vulkan_32, True), (lavapipe, False)):
            kernels = [launch.kernel for step in plan.kernel_steps for launch in generate(step, plan, caps).launches]
            assert any("shuffle_xor(" in format_kernel(k) for k in kernels) is want, (case, caps.target)


def _gemv_kernel(monkeypatch, value, case="gemv_long"):
    monkeypatch.setenv("POOT_GPU_GEMV_SCHEDULE", value)
    plan = plan_fusion(CASES[case])
    (launch,) = [launch for step in plan.kernel_steps for launch in generate(step, plan, CUDA_CAPS).launches]
    return launch


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
@pytest.mark.parametrize("value", ["32,8,2", "32,4,4", "64,4,2", "256,1,2", "128,2,1", "32,4,2,4", "64,2,1,3"])
def test_forced_gemv_schedules_assemble(monkeypatch, value, tmp_path):
    lanes, teams, _, per = ([int(v) for v in value.split(",")] + [1])[:4]
    launch = _gemv_kernel(monkeypatch, value)
    assert launch.kernel.workgroup == (lanes * teams, 1, 1) and launch.groups[0] == -(-512 // (teams * per))
    text = format_kernel(launch.kernel)
    assert ("barrier()" in text) is (lanes > 32), text     # a warp per row combines without a barrier
    _assemble(launch.kernel, "sm_90", tmp_path)


@pytest.mark.parametrize("value", ["32", "16,8,2", "48,2,2", "64,32,2", "32,8,0", "32,8,2,9", "32,8,2,1,1", "fast"])
def test_a_bad_gemv_schedule_is_named(monkeypatch, value):
    with pytest.raises(PootError, match="POOT_GPU_GEMV_SCHEDULE"):
        _gemv_kernel(monkeypatch, value)


@pytest.fixture(scope="module", params=["cuda", "vulkan"])
def gpu(request):
    from poot import devices

    try:
        return devices.get(request.param)
    except DeviceUnavailableError as e:
        pytest.skip(f"no {request.param} device here: {e}")


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64, dt.bfloat16, dt.int64, dt.uint8, dt.int16, dt.bool_],
                         ids=lambda d: d.name)
def test_the_exchange_on_a_gpu(gpu, dtype):
    """Within runs of as many lanes as the device's subgroups exchange (CUDA 32, lavapipe 8)."""
    from poot.jit.runtime.launch import launch, synchronize

    if gpu.caps.subgroup_size < 2:
        pytest.skip(f"{gpu.name}'s subgroups exchange no values")
    mask = 13 if gpu.caps.subgroup_size >= 16 else gpu.caps.subgroup_size - 3
    x = ((np.arange(256) * 3 + 1) % (2 if dtype is dt.bool_ else 250)).astype(dtype.np)
    bx, bout = gpu.allocate(x.nbytes), gpu.allocate(x.nbytes)
    gpu.write(bx, x)
    launch(gpu, exchange_kernel(dtype, mask=mask, workgroup=(128, 1, 1)), [bx, bout], groups=2)
    synchronize(gpu)
    got = gpu.read(bout)[:x.nbytes].view(x.dtype)
    np.testing.assert_array_equal(got, x[np.arange(256) ^ mask])


def test_a_kernel_exchanging_more_lanes_than_the_subgroups_hold_is_refused_by_name():
    from poot import devices
    from poot.jit.runtime.launch import launch

    for kind in ("vulkan", "wgpu"):
        try:
            dev = devices.get(kind)
        except DeviceUnavailableError:
            continue
        if dev.caps.subgroup_size >= 32:
            continue
        b = dev.allocate(256 * 4)
        with pytest.raises(NotBuiltError, match="exchange"):
            launch(dev, exchange_kernel(mask=17, workgroup=(128, 1, 1)), [b, b], groups=2)
