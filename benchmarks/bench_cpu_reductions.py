"""(b) sum/mean/max over 1e8 float32 and along each axis of 4096x4096; (c) softmax and layer_norm
over the rows of 4096x4096: poot vs NumPy."""
import numpy as np
import pytest

import poot as pt


@pytest.fixture(scope="module")
def flat(rng):
    a = rng.random(100_000_000, dtype=np.float32)
    return a, pt.array(a)


@pytest.fixture(scope="module")
def square(rng):
    a = rng.random((4096, 4096), dtype=np.float32)
    return a, pt.array(a)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_full_reduction(benchmark, flat, op, impl):
    benchmark.group = f"reduce-{op}-1e8-f32"
    a, pa = flat
    run = (lambda: getattr(pa, op)().numpy()) if impl == "poot" else (lambda: getattr(a, op)())
    out = benchmark(run)
    np.testing.assert_allclose(out, getattr(a.astype(np.float64), op)(), rtol=1e-4)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_axis_reduction(benchmark, square, axis, op, impl):
    benchmark.group = f"reduce-{op}-axis{axis}-4096x4096-f32"
    a, pa = square
    run = (lambda: getattr(pa, op)(axis=axis).numpy()) if impl == "poot" else \
        (lambda: getattr(a, op)(axis=axis))
    out = benchmark(run)
    np.testing.assert_allclose(out, getattr(a, op)(axis=axis), rtol=1e-4)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_softmax_rows(benchmark, square, impl):
    benchmark.group = "softmax-rows-4096x4096-f32"
    a, pa = square
    run = (lambda: pt.nn.softmax(pa, axis=-1).numpy()) if impl == "poot" else (lambda: np_softmax(a))
    out = benchmark(run)
    np.testing.assert_allclose(out, np_softmax(a), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_layer_norm_rows(benchmark, square, impl):
    benchmark.group = "layer_norm-rows-4096x4096-f32"
    a, pa = square
    run = (lambda: pt.nn.layer_norm(pa).numpy()) if impl == "poot" else (lambda: np_layer_norm(a))
    out = benchmark(run)
    np.testing.assert_allclose(out, np_layer_norm(a), rtol=1e-3, atol=1e-4)
