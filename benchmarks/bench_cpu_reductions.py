"""(b) sum/mean/max over 1e8 float32 and along each axis of 4096x4096; (c) softmax and layer_norm
over the rows of 4096x4096: poot vs NumPy (and, for (c), Numba loops parallel over rows). The
reductions also run as plain C loops on every core (ceiling.c, `c-ceiling`): what the memory gives,
since a reduction reads each element once and computes almost nothing."""
import numpy as np
import pytest

import poot as pt

from conftest import need_ceiling, need_numba


@pytest.fixture(scope="module")
def flat(rng):
    a = rng.random(100_000_000, dtype=np.float32)
    return a, pt.array(a)


@pytest.fixture(scope="module")
def square(rng):
    a = rng.random((4096, 4096), dtype=np.float32)
    return a, pt.array(a)


def _c_full(a, op):
    lib = need_ceiling()
    return lambda: lib.full_reduce(a.ctypes.data, a.size, op == "max") / (a.size if op == "mean" else 1)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("impl", ["poot", "numpy", "c-ceiling"])
def test_full_reduction(benchmark, flat, op, impl):
    benchmark.group = f"reduce-{op}-1e8-f32"
    a, pa = flat
    run = (lambda: getattr(pa, op)().numpy()) if impl == "poot" else (lambda: getattr(a, op)()) \
        if impl == "numpy" else _c_full(a, op)
    out = benchmark(run)
    np.testing.assert_allclose(out, getattr(a.astype(np.float64), op)(), rtol=1e-4)


@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_copy_bandwidth_reference(benchmark, flat, impl):
    """What memory gives: -a over the same 1e8 float32 (read 400 MB, write 400 MB; poot streams the
    store, NumPy writes into one preallocated array). GB/s = 0.8 / median; a reduction reads 0.4 GB."""
    benchmark.group = "copy-neg-1e8-f32 (bandwidth reference)"
    a, pa = flat
    out = np.empty_like(a)
    run = (lambda: (-pa).numpy()) if impl == "poot" else (lambda: np.negative(a, out=out))
    np.testing.assert_array_equal(benchmark(run), -a)


def _c_axis(a, axis, op):
    lib, out = need_ceiling(), np.empty(a.shape[1 - axis], np.float32)

    def run():
        lib.axis_reduce(a.ctypes.data, a.shape[0], a.shape[1], axis, op == "max", out.ctypes.data)
        return out
    return run


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("impl", ["poot", "numpy", "c-ceiling"])
def test_axis_reduction(benchmark, square, axis, op, impl):
    benchmark.group = f"reduce-{op}-axis{axis}-4096x4096-f32"
    a, pa = square
    run = (lambda: getattr(pa, op)(axis=axis).numpy()) if impl == "poot" else \
        (lambda: getattr(a, op)(axis=axis)) if impl == "numpy" else _c_axis(a, axis, op)
    out = benchmark(run)
    np.testing.assert_allclose(out, getattr(a, op)(axis=axis), rtol=1e-4)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


def numba_rows(kind):
    """Softmax / layer_norm of each row as a Numba loop parallel over rows (compiled once)."""
    numba = need_numba()

    @numba.njit(parallel=True)
    def softmax(x, out):
        for r in numba.prange(x.shape[0]):
            row = x[r]
            e = np.exp(row - row.max())
            out[r] = e / e.sum()

    @numba.njit(parallel=True)
    def layer_norm(x, out):
        for r in numba.prange(x.shape[0]):
            row = x[r]
            m = row.mean()
            d = row - m
            out[r] = d / np.sqrt((d * d).mean() + np.float32(1e-5))
    return softmax if kind == "softmax" else layer_norm


def _row_run(kind, impl, a, pa):
    if impl == "poot":
        fn = pt.nn.softmax if kind == "softmax" else pt.nn.layer_norm
        return (lambda: fn(pa, axis=-1).numpy()) if kind == "softmax" else (lambda: fn(pa).numpy())
    if impl == "numpy":
        return (lambda: np_softmax(a)) if kind == "softmax" else (lambda: np_layer_norm(a))
    kernel, out = numba_rows(kind), np.empty_like(a)
    kernel(a, out)                                         # compile outside the timing
    return lambda: (kernel(a, out), out)[1]


@pytest.mark.parametrize("impl", ["poot", "numpy", "numba"])
def test_softmax_rows(benchmark, square, impl):
    benchmark.group = "softmax-rows-4096x4096-f32"
    a, pa = square
    out = benchmark(_row_run("softmax", impl, a, pa))
    np.testing.assert_allclose(out, np_softmax(a), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("impl", ["poot", "numpy", "numba"])
def test_layer_norm_rows(benchmark, square, impl):
    benchmark.group = "layer_norm-rows-4096x4096-f32"
    a, pa = square
    out = benchmark(_row_run("layer_norm", impl, a, pa))
    np.testing.assert_allclose(out, np_layer_norm(a), rtol=1e-3, atol=1e-4)
