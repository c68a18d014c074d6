"""GPU-only schedules, checked against NumPy on each real GPU device present (wgpu and Vulkan: lavapipe in
CI; CUDA and Vulkan on an NVIDIA GPU combine with warp shuffles): column reductions cut into pieces
(kernelgen/gpu_columns.py), split reductions, grid-stride pointwise kernels and matrix-vector products
with lanes per output (kernelgen/gpu_gemv.py), also under each forced GEMV schedule."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.fuse.plan import plan_fusion
from poot.jit.codegen import generate

from test_ptxas_all_kernels import CASES, CUDA_CAPS


def _launches(case):
    plan = plan_fusion(CASES[case])
    return [launch for step in plan.kernel_steps for launch in generate(step, plan, CUDA_CAPS).launches]


def test_a_wide_column_sum_is_cut_into_pieces_and_a_row_sum_is_not():
    part, comb = _launches("reduce_sum_16k_axis0")
    assert part.kernel.name.endswith("_cols") and part.groups[0] * 256 == 16 * 16384
    assert comb.kernel.name.endswith("_comb") and comb.groups[0] * 256 == 16384
    assert not any(launch.kernel.name.endswith("_cols") for launch in _launches("reduce_sum_16k_axis1"))
    assert not any(launch.kernel.name.endswith("_cols") for launch in _launches("softmax_columns"))


@pytest.mark.parametrize("shape,axis", [((4096, 37), 0), ((5, 300, 64), 1), ((20000, 3), 0)])
def test_column_reductions_match_numpy(gpu, shape, axis):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    a[(2,) + (0,) * (len(shape) - 1)] = np.nan        # the first NaN wins argmax, in every piece order
    ai = rng.integers(-50, 50, shape).astype(np.int32)  # many ties: the first index wins
    with gpu:
        x, xi = pt.array(a), pt.array(ai)
        got = pt.realize(x.sum(axis=axis), x.argmax(axis=axis), xi.sum(axis=axis), xi.argmin(axis=axis),
                         x.mean(axis=axis))
        got = [g.numpy() for g in got]
    n = shape[axis]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got[0], a.sum(axis=axis), rtol=4 * n ** 0.5 * np.finfo(np.float32).eps, atol=1e-4)
        np.testing.assert_allclose(got[4], a.mean(axis=axis), rtol=4 * n ** 0.5 * np.finfo(np.float32).eps, atol=1e-6)
    np.testing.assert_array_equal(got[1], a.argmax(axis=axis))
    np.testing.assert_array_equal(got[2], ai.sum(axis=axis))
    np.testing.assert_array_equal(got[3], ai.argmin(axis=axis))


def test_a_long_matrix_vector_product_gets_lanes_per_output():
    (gemv,) = _launches("gemv_long")                   # K = 4096 f32: a row per 256 lanes, 4 loads of 16 bytes each
    assert gemv.groups[0] == 512 and gemv.kernel.shared          # 8 warps per row: a shared round
    (narrow,) = _launches("gemv_bf16_long")            # bf16 rows of 4096: a row per 256 lanes too
    assert narrow.groups[0] == 512 and narrow.kernel.shared
    (naive,) = _launches("gemv")                       # K = 256: one thread per output
    assert naive.groups[0] * 256 >= 512 and not naive.kernel.shared


def test_long_rows_get_a_warp_each_where_lanes_combine_through_shared_memory():
    """A SPIR-V device whose subgroups exchange fewer than 32 lanes (lavapipe's 8) combines a row's lanes by
    a shared-memory tree of barrier rounds: a warp a row, 8 rows a workgroup (a 256-lane row would take 8
    rounds)."""
    import dataclasses

    spirv = dataclasses.replace(CUDA_CAPS, name="vulkan", target="spirv", subgroup_size=8)
    for case in ("gemv_long", "gemv_bf16_long"):
        plan = plan_fusion(CASES[case])
        (gemv,) = [launch for step in plan.kernel_steps for launch in generate(step, plan, spirv).launches]
        assert gemv.groups[0] == 512 // 8 and gemv.kernel.workgroup[0] == 256, case


@pytest.mark.parametrize("n, k, groups", [(1152, 896, 1152 // 2),        # few short rows: 128 lanes each
                                           (9728, 896, 9728 // 32)])      # many: warps of 4 rows
def test_short_bf16_rows_get_lanes_by_how_many_rows_there_are(n, k, groups):
    from poot import dtypes as dt
    from test_ptxas_all_kernels import _G

    g = _G()
    graph = g.graph(g.op("matmul", g.input((n, k), dt.bfloat16), g.input((k, 1), dt.bfloat16)))
    plan = plan_fusion(graph)
    (gemv,) = [launch for step in plan.kernel_steps for launch in generate(step, plan, CUDA_CAPS).launches]
    assert gemv.groups[0] == groups


def test_a_vector_operand_gets_the_same_gemv_kernel_as_a_column():
    """`w @ x` with a 1-D x plans reshape (alias) -> matmul -> reshape (alias): the matmul step is the GEMV
    schedule (named k1_matmul like any matmul step), the same launch as for an [K, 1] column."""
    from test_ptxas_all_kernels import BF16, _G

    def launches(vector):
        g = _G()
        w, x = g.input((14336, 4096), BF16), g.input((4096,) if vector else (4096, 1), BF16)
        xr = g.op("reshape", x, shape=(4096, 1)) if vector else x
        y = g.op("matmul", w, xr)
        plan = plan_fusion(g.graph(g.op("reshape", y, shape=(14336,)) if vector else y))
        return [launch for step in plan.kernel_steps for launch in generate(step, plan, CUDA_CAPS).launches]

    (vec,), (col,) = launches(True), launches(False)
    assert vec.groups == col.groups == (14336, 1, 1) and vec.kernel.shared
    assert vec.kernel.body == col.kernel.body


def check_gemv(gpu, rng, shape, dtype, what=""):
    """w @ x on `gpu` for random w of `shape`, within a few float32 roundings of each term of NumPy's."""
    w = rng.standard_normal(shape).astype(np.float32).astype(dtype)
    x = rng.standard_normal(shape[-1]).astype(np.float32).astype(dtype)
    with gpu:
        got = (pt.array(w) @ pt.array(x)).numpy().astype(np.float64)
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    bound = float(ml_dtypes.finfo(dtype).eps) * np.abs(w64 @ x64) + 4 * np.finfo(np.float32).eps * (np.abs(w64) @ np.abs(x64))
    assert got.shape == shape[:-1] and np.all(np.abs(got - w64 @ x64) <= bound), (what, shape)


@pytest.mark.parametrize("shape,dtype", [((300, 1000), np.float32), ((2, 3, 700), np.float32),
                                         ((64, 1030), ml_dtypes.bfloat16), ((37, 8192), np.float32),
                                         ((3, 5, 4100), ml_dtypes.bfloat16)])
def test_matrix_vector_products_match_numpy(gpu, shape, dtype):
    check_gemv(gpu, np.random.default_rng(2), shape, dtype)


@pytest.mark.parametrize("k,schedule", list(enumerate(["32,8,2", "32,4,4", "64,4,2", "128,2,1", "256,1,3", "32,1,1",
                                                        "32,4,2,3", "64,2,1,4"])))
def test_each_forced_gemv_schedule_matches_numpy(monkeypatch, gpu, k, schedule):
    """POOT_GPU_GEMV_SCHEDULE: rows past the last whole workgroup, K not a multiple of a step; a shape
    per schedule, as compiled programs are cached by graph."""
    monkeypatch.setenv("POOT_GPU_GEMV_SCHEDULE", schedule)
    rng = np.random.default_rng(k)
    check_gemv(gpu, rng, (301 + k, 1000 + 8 * k), np.float32, schedule)
    check_gemv(gpu, rng, (37 + k, 8200 + 8 * k), ml_dtypes.bfloat16, schedule)


def test_gemv_assets_take_matrix_vector_products_when_asked(monkeypatch, gpu):
    monkeypatch.setenv("POOT_GPU_GEMV", "asset")
    (launch,) = _launches("gemv_long")
    assert launch.kernel.name == "gemv_f32" and launch.groups[0] * launch.kernel.workgroup[1] == 512
    rng = np.random.default_rng(3)
    check_gemv(gpu, rng, (77, 1500), np.float32, "asset")           # shapes no other test plans
    check_gemv(gpu, rng, (33, 700), ml_dtypes.bfloat16, "asset")


def test_a_bad_gemv_path_is_named(monkeypatch):
    from poot.errors import PootError
    from poot.jit.codegen import gemv_path

    monkeypatch.setenv("POOT_GPU_GEMV", "fastest")
    with pytest.raises(PootError, match="POOT_GPU_GEMV is 'fastest'"):
        gemv_path()


@pytest.mark.parametrize("n", [1, 7, 1024, 4099, 300001])
def test_grid_stride_pointwise_kernels_match_numpy(gpu, n):
    """Vector steps, the scalar tail, strided (transposed) and 16-bit inputs, each past a grid's worth."""
    rng = np.random.default_rng(n)
    a, b, c = (rng.random(n, dtype=np.float32) for _ in range(3))
    m = rng.random((n, 3), dtype=np.float32)
    h = rng.random(n).astype(np.float16)
    with gpu:
        A, B, C = pt.array(a), pt.array(b), pt.array(c)
        got = pt.realize(2 * A + B * C - pt.exp(A) / (1 + B * B), pt.array(m).T * 2 + 1, pt.array(h) * 3)
        got = [g.numpy() for g in got]
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    terms = 2 * a64 + b64 * c64 + np.exp(a64)              # the error bound: a few roundings of the terms
    np.testing.assert_array_less(np.abs(got[0] - (2 * a64 + b64 * c64 - np.exp(a64) / (1 + b64 * b64))),
                                 4 * np.finfo(np.float32).eps * terms)
    np.testing.assert_array_equal(got[1], m.T * 2 + 1)
    np.testing.assert_array_equal(got[2], h * np.float16(3))


@pytest.mark.parametrize("n", [5, 4 * 65536 + 3, 3 * 2**20 + 17])
def test_split_sums_match_numpy(gpu, n):
    """Long rows: whole 16-byte blocks, the last partial piece, the per-row combine; arg-reductions too."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    a[n // 3] = 50.0
    with gpu:
        x = pt.array(a)
        got = [g.numpy() for g in pt.realize(x.sum(), x.max(), x.argmax(), (x * x).sum())]
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(got[0], a.astype(np.float64).sum(), rtol=4 * eps * n ** 0.5, atol=4 * eps * n ** 0.5)
    assert got[1] == a.max() and got[2] == a.argmax()
    np.testing.assert_allclose(got[3], (a.astype(np.float64) ** 2).sum(), rtol=4 * eps * n ** 0.5)
