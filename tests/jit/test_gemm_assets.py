"""The tiled GEMM assets (kernels/contraction/gemm_f32.py, gemm_bf16_tc.py) and the matmul steps they take
over (kernelgen/gpu_gemm.py): which steps route to them, their PTX through ptxas, emulation against NumPy,
and matmul parity through poot arrays on each test device (POOT_TEST_DEVICES=cpu,wgpu,vulkan,cuda: the
CPU keeps BLAS; wgpu and vulkan the generic schedule; CUDA sm_80+ runs
the tensor-core kernels for them)."""
from __future__ import annotations

import dataclasses
import subprocess

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.fuse.plan import plan_fusion
from poot.jit.llvm.compile import compile_kernel
from poot.jit.kir import assets
from poot.kernel import assets as kernel_assets
from poot.jit.codegen import generate, gpu_gemm

from ptxas_tool import PTXAS, SKIP_REASON
from target_caps import ROCM_CAPS
from test_ptxas_all_kernels import BF16, CUDA_CAPS, F16, F32, _G

SM80 = dataclasses.replace(CUDA_CAPS, compile_arch="sm_80")
SM90 = dataclasses.replace(CUDA_CAPS, compile_arch="sm_90")
SPIRV = dataclasses.replace(CUDA_CAPS, name="wgpu", target="spirv", subgroup_size=1)
LOW = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def _entry(name):
    return next(e for e in assets.load_manifest() if e.name == name)


def _kernels(a_shape, b_shape, dtype, caps):
    g = _G()
    plan = plan_fusion(g.graph(g.op("matmul", g.input(a_shape, dtype), g.input(b_shape, dtype))))
    return [(ln.kernel.name, ln.groups, ln.scalars) for st in plan.kernel_steps for ln in generate(st, plan, caps).launches]


def test_matmul_steps_route_to_the_gemm_assets():
    ((name, groups, scalars),) = _kernels((4096, 4096), (4096, 4096), F32, SM90)
    assert name == "gemm_f32" and groups == (32, 32, 1) and scalars == (4096, 4096, 4096, 0, 0, 4096 * 4096)
    # 16-bit operands whose rows split into aligned 16-byte chunks (K and N multiples of 8) take the
    # asynchronous-copy kernel; the others the register-staged one
    # large products take the 128 x 256 x 64 form (two waves of its tiles, K of four steps or more)
    assert _kernels((4096, 4096), (4096, 4096), BF16, SM80)[0][:2] == ("gemm_bf16_async_wide", (16 * 32, 1, 1))
    assert _kernels((2048, 2048), (2048, 2048), BF16, SM80)[0][0] == "gemm_bf16_async"       # one wave
    assert _kernels((32, 1024, 128), (32, 128, 1024), BF16, SM80)[0][0] == "gemm_bf16_async"   # short K
    bm, bn = gpu_gemm.ASYNC_TILE           # one row of tiles (the kernel rasters them)
    assert _kernels((1000, 1024), (1024, 520), F16, SM80)[0][:2] == ("gemm_f16_async", (-(-1000 // bm) * -(-520 // bn), 1, 1))
    assert _kernels((64, 1028), (1028, 64), BF16, SM80)[0][0] == "gemm_bf16_tc"
    assert _kernels((37, 29), (29, 53), F16, SM80)[0][:2] == ("gemm_f16_tc", (1, 1, 1))
    # Hopper (sm_90): the warpgroup kernel where the async ones would run, one row of 128 x 128 tiles; the
    # unaligned shapes keep the register-staged kernel
    wm, wn = gpu_gemm.WGMMA_TILE
    assert _kernels((4096, 4096), (4096, 4096), BF16, SM90)[0][:2] == ("gemm_bf16_wgmma", (32 * 32, 1, 1))
    assert _kernels((32, 1024, 128), (32, 128, 1024), BF16, SM90)[0][:2] == ("gemm_bf16_wgmma", (64, 1, 32))
    assert _kernels((1000, 1024), (1024, 520), F16, SM90)[0][:2] == ("gemm_f16_wgmma", (-(-1000 // wm) * -(-520 // wn), 1, 1))
    assert _kernels((64, 1028), (1028, 64), BF16, SM90)[0][0] == "gemm_bf16_tc"
    # a batch on grid z; a broadcast operand has stride 0
    ((name, groups, scalars),) = _kernels((3, 20, 40), (40, 130), BF16, SM90)
    assert name == "gemm_bf16_tc" and groups == (2, 1, 3) and scalars == (20, 130, 40, 800, 0, 2600)
    assert _kernels((2, 1, 20, 40), (1, 3, 40, 130), F32, SM90)[0][0] != "gemm_f32"   # no single batch stride
    # 16-bit floats on tensor cores only where mma is (PTX sm_80+); GEMV shapes keep the GEMV schedules
    assert _kernels((256, 256), (256, 256), BF16, CUDA_CAPS)[0][0] != "gemm_bf16_tc"
    assert _kernels((256, 256), (256, 256), BF16, SPIRV)[0][0] != "gemm_bf16_tc"
    assert _kernels((256, 256), (256, 256), F32, SPIRV)[0][0] != "gemm_f32"       # see gpu_gemm.py
    assert _kernels((512, 4096), (4096, 1), F32, SM90)[0][0] != "gemm_f32"
    assert _kernels((1, 4096), (4096, 512), F32, SM90)[0][0] != "gemm_f32"


def test_the_codegen_knows_the_async_kernels_tiles():
    module = kernel_assets.load_source(_entry("gemm_bf16_async"))
    assert gpu_gemm.ASYNC_TILE == (module.BM, module.BN)
    hopper = kernel_assets.load_source(_entry("gemm_bf16_wgmma"))
    assert gpu_gemm.WGMMA_TILE == (hopper.BM, hopper.BN)
    wide = kernel_assets.load_source(_entry("gemm_bf16_async_wide"))
    assert gpu_gemm.WIDE_TILE == (wide.BM, wide.BN, wide.BK)


def test_a_forced_generated_path_keeps_the_generic_schedule(monkeypatch):
    monkeypatch.setenv("POOT_GPU_GEMM", "generated")
    assert _kernels((256, 256), (256, 256), F32, SM90)[0][0] != "gemm_f32"
    monkeypatch.setenv("POOT_GPU_GEMM", "fast")
    with pytest.raises(pt.PootError, match="POOT_GPU_GEMM"):
        _kernels((256, 256), (256, 256), F32, SM90)


ASSETS = ["gemm_f32", "gemm_bf16_tc", "gemm_f16_tc", "gemm_bf16_async", "gemm_f16_async", "gemm_bf16_async_wide",
          "gemm_f16_async_wide"]


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
@pytest.mark.parametrize("name", ASSETS)
def test_gemm_assets_assemble_for_sm_90(name, tmp_path):
    art = compile_kernel(assets.load_asset(name), "ptx", arch="sm_90")
    if "_async" in name:
        assert art.data.count("cp.async.cg.shared.global") >= 2 and "ldmatrix.sync.aligned.m8n8.x4.trans" in art.data
    if "_tc" in name or "_async" in name:
        assert art.data.count("mma.sync.aligned.m16n8k16") >= 16      # a warp's 4 x 4 tiles per k16 step
    else:
        assert "ld.shared.v4" in art.data                                # 16-byte shared loads
    path = tmp_path / f"{name}.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, "-arch=sm_90", "-v", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert " 0 bytes spill stores" in r.stderr, r.stderr


@pytest.mark.parametrize("name", ["gemm_bf16_tc", "gemm_bf16_async"])
def test_tensor_core_gemm_is_not_built_for_spirv(name):
    with pytest.raises(pt.NotBuiltError):
        compile_kernel(assets.load_asset(name), "spirv")


@pytest.mark.parametrize("name", ASSETS)
def test_gemm_kernels_emulate_numpy(name):
    entry = _entry(name)
    module = kernel_assets.load_source(entry)
    fn = kernel_assets.entry_function(entry, module)
    for ex in getattr(module, f"example_{entry.entry}")(np.random.default_rng(0)):
        args = ex.fresh_args()
        fn.emulate(*args, threads=ex.threads)
        out = next(a for a, p in zip(args, fn.kir.params) if getattr(p, "name", None) == "c")
        want = ex.expected["c"]
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=ex.rtol, atol=ex.atol)


def _check(got, a, b, dtype, what):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    k = a.shape[-1]
    eps = float(ml_dtypes.finfo(dtype).eps) if dtype is not np.float32 else 0.0
    bound = eps * np.abs(ref) + 2 * np.finfo(np.float32).eps * k * (np.abs(a64) @ np.abs(b64)) + 1e-30
    got = np.asarray(got).astype(np.float64)
    assert got.shape == ref.shape, what
    bad = np.abs(got - ref) > bound
    assert not bad.any(), f"{what}: {int(bad.sum())} of {bad.size} elements off, max {np.abs(got - ref).max()}"


SHAPES = [((37, 29), (29, 53)), ((128, 64), (64, 128)), ((130, 40), (40, 257)), ((3, 20, 40), (3, 40, 130)),
          ((3, 20, 40), (40, 130)), ((2, 33, 17), (1, 17, 9)),
          ((130, 40), (40, 136)), ((2, 70, 24), (2, 24, 264)), ((3, 20, 48), (48, 8))]   # the async kernel's edges


@pytest.mark.parametrize("low", ["f32", "bf16", "f16"])
def test_matmul_parity_on_each_device(device, low):
    dtype = LOW[low]
    rng = np.random.default_rng(5)
    for sa, sb in SHAPES:
        a = rng.standard_normal(sa).astype(np.float32).astype(dtype)
        b = rng.standard_normal(sb).astype(np.float32).astype(dtype)
        _check((pt.array(a) @ pt.array(b)).numpy(), a, b, dtype, f"{low} {sa} @ {sb} on {device}")
    # transposed operands (materialized by the planner before the matmul)
    at = rng.standard_normal((45, 70)).astype(np.float32).astype(dtype)       # A = at.T: [70, 45]
    bt = rng.standard_normal((66, 45)).astype(np.float32).astype(dtype)       # B = bt.T: [45, 66]
    _check((pt.array(at).T @ pt.array(bt).T).numpy(), at.T, bt.T, dtype, f"{low} transposed on {device}")


def test_a_large_product_takes_the_wide_tiles_and_matches_numpy(device):
    """2100 x 264 @ 264 x 4104: partial tiles in M, N and K on the 128 x 256 x 64 kernel (on CUDA before
    Hopper; an H100 takes the warpgroup kernel, the other devices their own paths for the same product)."""
    a_shape, b_shape = (2100, 264), (264, 4104)
    assert _kernels(a_shape, b_shape, BF16, SM80)[0][0] == "gemm_bf16_async_wide"
    assert _kernels(a_shape, b_shape, BF16, SM90)[0][0] == "gemm_bf16_wgmma"
    rng = np.random.default_rng(8)
    a = rng.standard_normal(a_shape).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(b_shape).astype(np.float32).astype(ml_dtypes.bfloat16)
    _check((pt.array(a) @ pt.array(b)).numpy(), a, b, ml_dtypes.bfloat16, f"bf16 {a_shape} @ {b_shape} on {device}")


def test_amd_gpus_with_matrix_cores_take_their_gemm():
    """bf16 products on CDNA (gfx942: MFMA) and RDNA3 (gfx1100: WMMA) take the matrix-core GEMMs, one
    row of 64 x 64 tiles; a GPU without either (gfx908) keeps the generic schedule."""
    cdna = _kernels((300, 64), (64, 130), BF16, ROCM_CAPS)
    assert cdna == [("gemm_bf16_mfma", (5 * 3, 1, 1), (300, 130, 64, 0, 0, 300 * 130))]
    rdna = dataclasses.replace(ROCM_CAPS, compile_arch="gfx1100", subgroup_size=32)
    assert _kernels((2, 70, 32), (32, 40), BF16, rdna)[0][:2] == ("gemm_bf16_wmma", (2, 1, 2))
    older = dataclasses.replace(ROCM_CAPS, compile_arch="gfx908")
    assert not _kernels((300, 64), (64, 130), BF16, older)[0][0].startswith("gemm_")
    for name in gpu_gemm.AMD_MATRIX[BF16]:
        module = kernel_assets.load_source(_entry(name))
        assert gpu_gemm.AMD_TILE == (module.BM, module.BN)
