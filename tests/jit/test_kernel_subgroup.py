"""Subgroup operations and the warp-level m16n8k16 multiply-accumulate of `@pt.kernel` (kernel/subgroup.py):
exact emulation against NumPy, PTX that ptxas accepts (shfl.sync, mma.sync for sm_80+), a compile-time
NotBuiltError on targets without them, and parity with emulation on each test device that has them
(POOT_TEST_DEVICES=cuda on an NVIDIA GPU; the others check the error)."""
from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.jit.llvm.targets import target_of
from poot.errors import KernelImportError, NotBuiltError
from poot.jit.llvm.compile import compile_kernel

from ptxas_tool import PTXAS
from subgroup_kernels import mma_bf16, mma_f16, sg

LOW = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}
KERNELS = {"bf16": mma_bf16, "f16": mma_f16}


def _sg_args(rng, n=128):
    x = rng.standard_normal(n).astype(np.float32)
    return [x, np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.float32)]


def _check_sg(args):
    x, y, z, w, u = args
    n = len(x)
    lane = np.arange(n) % 32
    base = np.arange(n) - lane
    np.testing.assert_array_equal(y, x[base + (lane + 3) % 32])
    np.testing.assert_array_equal(u, x[base + (lane ^ 5)])
    np.testing.assert_allclose(z, np.repeat(x.reshape(-1, 32).astype(np.float64).sum(1), 32), rtol=1e-5)
    assert np.all(w == max(v * 7 % 11 for v in range(32)))


def _mma_args(rng, low):
    a = rng.standard_normal((16, 16)).astype(LOW[low])
    b = rng.standard_normal((16, 8)).astype(LOW[low])
    c = rng.standard_normal((16, 8)).astype(np.float32)
    ref = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    return [a, b, c, np.zeros((16, 8), np.float32)], ref


def test_subgroup_operations_emulate_exactly():
    args = _sg_args(np.random.default_rng(0))
    sg.emulate(*args)
    _check_sg(args)
    # the butterfly sum is the same in every lane and follows its order exactly
    z = args[2].reshape(-1, 32)
    assert np.all(z == z[:, :1])


@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_mma_emulates_the_exact_sum_rounded_once(low):
    args, ref = _mma_args(np.random.default_rng(1), low)
    KERNELS[low].emulate(*args, threads=(32, 1, 1), workgroup=(32, 1, 1))
    np.testing.assert_allclose(args[3], ref, rtol=2e-7, atol=1e-6)


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_of_subgroup_kernels_assembles(arch, tmp_path):
    for k, needle in ((sg.kir, "shfl.sync.idx"), (mma_bf16.kir, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
                      (mma_f16.kir, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")):
        art = compile_kernel(k, "ptx", arch=arch)
        assert needle in art.data and art.data.count("mma.sync") <= 1, k.name
        path = tmp_path / f"{k.name}.ptx"
        path.write_text(art.data)
        r = subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr


def test_mma_before_sm_80_is_a_compile_time_error():
    with pytest.raises(NotBuiltError, match="sm_80"):
        compile_kernel(mma_bf16.kir, "ptx", arch="sm_75")


@pytest.mark.parametrize("target", ["cpu", "spirv"])
def test_targets_without_subgroups_or_mma_refuse_them_at_compile_time(target):
    """The CPU has neither; SPIR-V has shuffles (run where a device's subgroups hold their lanes) but no
    mma."""
    try:
        if target == "cpu":
            with pytest.raises(NotBuiltError, match="shuffle"):
                compile_kernel(sg.kir, target)
        else:
            assert compile_kernel(sg.kir, target).data[:4] == b"\x03\x02\x23\x07"
        with pytest.raises(NotBuiltError, match="mma_m16n8k16"):
            compile_kernel(mma_bf16.kir, target)
    except NotBuiltError as e:          # the target itself is not built here
        pytest.skip(str(e))


def test_mma_outside_a_tuple_assignment_is_refused():
    @pt.kernel(workgroup=(32, 1, 1))
    def bad(x: pt.Out[pt.f32]):
        x[0] = pt.mma_m16n8k16(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.0, 0.0, 0.0, 0.0)

    with pytest.raises(KernelImportError, match="tuple assignment"):
        bad.kir


def _subgroup_device(device):
    """Whether `device` runs the subgroup kernel: its subgroups exchange the 32 lanes the kernel does
    (CUDA, ROCm, Vulkan on an NVIDIA GPU); elsewhere (CPU, wgpu, lavapipe's 8 lanes) it is refused."""
    caps = pt.devices.get(device).caps
    return target_of(caps).has_shuffles and caps.subgroup_size >= sg.kir.lane_span


def test_subgroup_kernels_on_each_device(device):
    rng = np.random.default_rng(2)
    args = _sg_args(rng)
    ctx = pt.Context(device)
    if not _subgroup_device(device):
        with pytest.raises(NotBuiltError):
            sg(ctx, *args)
        return
    sg(ctx, *args)
    _check_sg(args)
    want = _sg_args(rng)
    want[0][:] = args[0]
    sg.emulate(*want)
    for got, ref in zip(args[1:], want[1:]):
        np.testing.assert_array_equal(got, ref)     # the same butterfly order: bit for bit


@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_mma_on_each_device(device, low):
    args, ref = _mma_args(np.random.default_rng(3), low)
    ctx = pt.Context(device)
    target = pt.devices.get(device).caps.target
    if target != "ptx" or int(pt.devices.get(device).caps.extra.get("arch", "sm_0")[3:].rstrip("a")) < 80:
        with pytest.raises(NotBuiltError):
            KERNELS[low].launch(ctx, *args, threads=(32, 1, 1), workgroup=(32, 1, 1))
        return
    KERNELS[low].launch(ctx, *args, threads=(32, 1, 1), workgroup=(32, 1, 1))
    np.testing.assert_allclose(args[3], ref, rtol=1e-5, atol=1e-5)


def test_subgroup_kir_round_trips_through_json_and_text():
    from poot.jit.kir.serialize import from_dict, to_dict
    from poot.jit.kir.text import format_kernel

    for k in (sg.kir, mma_bf16.kir):
        assert from_dict(to_dict(k)) == k
        assert "shuffle" in format_kernel(k) or "mma_m16n8k16" in format_kernel(k)
