"""Shared memory past the 48 KiB a CUDA kernel may declare statically: the PTX entry takes its arrays as
slices of one dynamic block, the artifact says how many bytes a launch must ask for, ptxas accepts it,
and on a GPU (POOT_TEST_DEVICES=cuda) the kernel runs and reads back what it wrote at both ends of the
block. Below the limit nothing changes: static arrays, no dynamic bytes."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import poot as pt
from poot.jit.llvm.compile import compile_kernel
from poot.jit.llvm.targets import target_named
from poot.kernel.shared_memory import device_limit, shared_bytes

from ptxas_tool import PTXAS, SKIP_REASON

WIDE = 16384          # f32 elements of the first array: 64 KiB


@pt.kernel(workgroup=(256, 1, 1))
def wide_shared(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    """y[g] = sum over j of (x[g'] + j) for the mirrored thread g' of the workgroup, plus x[g'] through a
    second array placed after the first (both written, a barrier, then read by another thread)."""
    s = pt.shared(pt.f32, WIDE)
    t = pt.shared(pt.f32, 256)
    i = pt.local_index_x()
    g = pt.group_index_x() * 256 + i
    for j in range(WIDE // 256):
        s[pt.u32(j) * 256 + i] = x[g] + pt.f32(j)
    t[i] = x[g]
    pt.workgroup_barrier()
    acc = pt.f32(0.0)
    for j in range(WIDE // 256):
        acc += s[pt.u32(j) * 256 + (255 - i)]
    y[g] = acc + t[255 - i]


@pt.kernel(workgroup=(256, 1, 1))
def narrow_shared(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    t = pt.shared(pt.f32, 256)
    i = pt.local_index_x()
    g = pt.group_index_x() * 256 + i
    t[i] = x[g]
    pt.workgroup_barrier()
    y[g] = t[255 - i]


def expected(x: np.ndarray) -> np.ndarray:
    mirrored = x.reshape(-1, 256)[:, ::-1].reshape(-1).astype(np.float64)
    n = WIDE // 256
    return (n * mirrored + n * (n - 1) / 2 + mirrored).astype(np.float32)


def test_past_the_static_limit_the_arrays_are_one_dynamic_block():
    art = compile_kernel(wide_shared.kernel_for(), "ptx", arch="sm_90")
    assert art.dynamic_shared_bytes == WIDE * 4 + 256 * 4 > target_named("ptx").static_shared_limit
    assert ".extern .shared .align 16 .b8" in art.data
    small = compile_kernel(narrow_shared.kernel_for(), "ptx", arch="sm_90")
    assert small.dynamic_shared_bytes == 0 and ".extern .shared" not in small.data
    # other targets keep static arrays
    assert compile_kernel(wide_shared.kernel_for(), "llvm").dynamic_shared_bytes == 0


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
def test_ptxas_accepts_the_dynamic_block(tmp_path):
    path = tmp_path / "wide.ptx"
    path.write_text(compile_kernel(wide_shared.kernel_for(), "ptx", arch="sm_90").data)
    r = subprocess.run([PTXAS, "-arch=sm_90", "-v", str(path), "-o", str(tmp_path / "wide.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_emulation_reads_back_both_arrays():
    x = np.random.default_rng(0).standard_normal(512).astype(np.float32)
    y = np.zeros_like(x)
    wide_shared.emulate(x, y, threads=(512, 1, 1))
    np.testing.assert_allclose(y, expected(x), rtol=1e-5)


def test_the_kernel_runs_on_each_device(device):
    if device == "oracle":
        pytest.skip("the oracle runs no kernels")
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    y = np.zeros_like(x)
    ctx = pt.Context(device)
    limit, _ = device_limit(ctx.device.caps)
    if shared_bytes(wide_shared.kir.shared) > limit:       # wgpu/Vulkan promise 16-64 KiB: a clear refusal
        with pytest.raises(pt.KernelImportError, match=r"shared-too-large.*wide_shared.*'s' \(16,384 x float32\)"):
            wide_shared(ctx, x, y)
        return
    wide_shared(ctx, x, y)
    np.testing.assert_allclose(y, expected(x), rtol=1e-5)
