"""Hopper's warpgroup product in `@pt.kernel` (poot/kernel/warpgroup.py): emulation against NumPy for both
column counts and input dtypes, PTX for sm_90a that ptxas accepts, a compile-time NotBuiltError on every
other target and arch, the importer's refusals, the 1 KiB alignment of its operands' shared arrays, the
arch a launch builds it for, and parity with NumPy on a CUDA device that has it (an H100; POOT_TEST_DEVICES
=cuda), the others checking the refusal."""
from __future__ import annotations

import dataclasses
import re
import subprocess

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.errors import KernelImportError, NotBuiltError, PootError
from poot.jit.llvm.compile import compile_kernel
from poot.jit.runtime.launch import build_arch

from ptxas_tool import PTXAS, SKIP_REASON
from target_caps import CUDA_CAPS
from warpgroup_kernels import tile_kernel

LOW = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


def _args(rng, n, dtype, bt=False):
    a = rng.standard_normal((64, 64)).astype(LOW[dtype])
    b = rng.standard_normal((64, n)).astype(LOW[dtype])
    c = rng.standard_normal((64, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64) + c
    given = np.ascontiguousarray(b.T) if bt else b
    return [a.view(np.uint32).ravel(), given.view(np.uint32).ravel(), c.ravel(), np.zeros(64 * n, np.float32)], ref


@pytest.mark.parametrize("n, bt", [(64, False), (128, False), (256, False), (64, True), (128, True)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_wgmma_emulates_the_product_against_numpy(n, bt, dtype):
    args, ref = _args(np.random.default_rng(n), n, dtype, bt)
    tile_kernel(n, dtype, bt=bt).emulate(*args, threads=(128, 1, 1))
    # four steps of 16 k, each rounded to float32: a few float32 ulps of the partial sums
    np.testing.assert_allclose(args[3].reshape(64, n), ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("n, bt", [(64, True), (128, False), (256, False)])
def test_wgmma_ptx_for_sm_90a(n, bt, tmp_path):
    kernel = tile_kernel(n, bt=bt).kir
    art = compile_kernel(kernel, "ptx", arch="sm_90a")
    assert art.data.count(f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16") == 4
    assert art.data.count(f", p, 1, 1, 0, {0 if bt else 1};") == 4           # trans-b: B's lines of n
    assert "wgmma.wait_group.sync.aligned 0" in art.data and "fence.proxy.async.shared::cta" in art.data
    # the operands' arrays start on 1 KiB: the swizzle is taken from the address bits
    assert len(re.findall(r"\.shared \.align 1024", art.data)) == 2
    if PTXAS is None:
        pytest.skip(SKIP_REASON)
    path = tmp_path / "k.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("target, arch", [("ptx", "sm_90"), ("ptx", "sm_80"), ("cpu", None), ("amdgcn", "gfx942")])
def test_wgmma_elsewhere_is_a_compile_time_error(target, arch):
    if target == "amdgcn":
        pytest.importorskip("ziglang", reason="linking a HSACO needs the ziglang wheel's ld.lld (pip install 'poot[rocm]')")
    with pytest.raises(NotBuiltError, match="sm_90a"):
        compile_kernel(tile_kernel(128).kir, target, arch=arch)


def test_a_launch_builds_wgmma_kernels_for_sm_90a_on_hopper_only():
    sm90 = dataclasses.replace(CUDA_CAPS, extra={**CUDA_CAPS.extra, "arch": "sm_90"})
    sm80 = dataclasses.replace(CUDA_CAPS, extra={**CUDA_CAPS.extra, "arch": "sm_80"})
    wgmma = tile_kernel(128).kir
    assert build_arch(wgmma, sm90) == "sm_90a"
    assert build_arch(wgmma, sm80) == sm80.compile_arch          # refused at compile time there
    from poot.jit.kir import assets

    assert build_arch(assets.load_asset("gemm_bf16_async"), sm90) == sm90.compile_arch


def test_misplaced_operands_are_refused_by_the_emulator():
    args, _ = _args(np.random.default_rng(1), 128, "bfloat16")
    with pytest.raises(PootError, match="multiple of 256 words"):
        tile_kernel(128, a_at=32).emulate(*args, threads=(128, 1, 1))


def test_wgmma_import_errors_name_what_is_wrong():
    @pt.kernel(workgroup=(128, 1, 1))
    def as_value(d: pt.Out[pt.f32]):
        sa = pt.shared(pt.u32, 2048)
        d[0] = pt.wgmma_m64n128k64(pt.bfloat16, sa, 0, sa, 0)

    with pytest.raises(KernelImportError, match="tuple assignment"):
        as_value.kir

    @pt.kernel(workgroup=(128, 1, 1))
    def too_few(d: pt.Out[pt.f32]):
        sa = pt.shared(pt.u32, 8192)
        x, y = pt.wgmma_m64n128k64(pt.bfloat16, sa, 0, sa, 0, 0.0, 0.0)
        d[0] = x + y

    with pytest.raises(KernelImportError, match="returns 64 values"):
        too_few.kir

    @pt.kernel(workgroup=(128, 1, 1))
    def fence_value(d: pt.Out[pt.f32]):
        d[0] = pt.fence_proxy_async()

    with pytest.raises(KernelImportError, match="statement of its own"):
        fence_value.kir


def test_wgmma_kir_round_trips_through_json_and_text():
    from poot.jit.kir.serialize import from_dict, to_dict
    from poot.jit.kir.text import format_kernel

    k = tile_kernel(128).kir
    assert from_dict(to_dict(k)) == k
    text = format_kernel(k)
    assert "wgmma_m64n128k64[bf16]" in text and "fence_proxy_async()" in text


@pytest.mark.parametrize("n, bt", [(64, True), (128, False), (256, False)])
def test_wgmma_on_each_device(device, n, bt):
    args, ref = _args(np.random.default_rng(7), n, "bfloat16", bt)
    kernel = tile_kernel(n, bt=bt)
    caps = pt.devices.get(device).caps
    if caps.target != "ptx" or caps.extra.get("arch") != "sm_90":
        with pytest.raises(NotBuiltError):
            kernel.launch(pt.Context(device), *args, threads=(128, 1, 1))
        return
    kernel.launch(pt.Context(device), *args, threads=(128, 1, 1))
    np.testing.assert_allclose(args[3].reshape(64, n), ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


HOPPER_ASSETS = ["gemm_bf16_wgmma", "gemm_f16_wgmma"] + [f"attention_wg_{t}_d{d}" for t in ("bf16", "f16")
                                                         for d in (64, 128)]


@pytest.mark.parametrize("name", HOPPER_ASSETS)
def test_the_hopper_assets_assemble_for_sm_90a_without_spills(name, tmp_path):
    from poot.jit.kir import assets

    entry = next(e for e in assets.load_manifest() if e.name == name)
    assert entry.builds_for("ptx", "sm_90a") and not entry.builds_for("ptx")
    art = compile_kernel(assets.load_asset(name), "ptx", arch="sm_90a")
    assert art.data.count("wgmma.mma_async") % 4 == 0 and art.data.count("wgmma.mma_async") > 0
    if PTXAS is None:
        pytest.skip(SKIP_REASON)
    path = tmp_path / "k.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in r.stderr, r.stderr
