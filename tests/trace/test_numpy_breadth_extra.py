"""NumPy functions completed here, against NumPy: every quantile method (median/percentile/quantile and
their nan forms), `pt.ndarray` as a constructor and a type, and the NumPy ufunc methods called on poot
arrays (np.add.outer, np.maximum.reduce, np.add.accumulate, np.add.at)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import poot as pt
from poot.trace.numpy_stats import METHODS

_FLOATS = st.floats(-1e3, 1e3, allow_nan=False, width=32)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_quantile_methods_match_numpy(method, fn):
    rng = np.random.default_rng(5)
    m = rng.standard_normal((4, 7))
    m[1, 2] = m[3, 0] = np.nan
    m[2, :] = np.nan if fn.startswith("nan") else m[2, :]
    scale = 100 if "percentile" in fn else 1
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) * scale
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if fn.startswith("nan") else _nothing():
        want = getattr(np, fn)(m, q, axis=1, method=method)
    got = getattr(pt, fn)(pt.asarray(m), q, axis=1, method=method).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_on_integers_keep_numpy_dtypes(method):
    a = np.array([7, 1, 4, 4, 9, 2, 0, 3])
    for q in (0.0, 0.3, 0.5, 0.77, 1.0):
        want = np.quantile(a, q, method=method)
        got = pt.quantile(pt.asarray(a), q, method=method).numpy()
        assert got.dtype == want.dtype, (q, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 12), elements=_FLOATS), st.floats(0, 1),
       st.sampled_from(METHODS))
def test_quantile_property(a, q, method):
    np.testing.assert_allclose(pt.quantile(pt.asarray(a), q, method=method).numpy(),
                               np.quantile(a, q, method=method), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("method", ["linear", "hazen", "weibull", "midpoint"])
def test_float32_quantile_with_array_q_rounds_as_numpy(fn, method):
    """An array q makes the result float64, but NumPy subtracts the two order statistics in float32
    (and takes 1 - gamma from the float64 gamma): a float64 subtraction is 1e-8 away from NumPy."""
    rng = np.random.default_rng(7)
    m = rng.standard_normal((7, 9)).astype(np.float32)
    m[0, 0] = np.nan if fn.startswith("nan") else m[0, 0]
    scale = 100 if "percentile" in fn else 1
    for q in ([0.1, 0.5, 0.93], 0.37):
        q = np.asarray(q) * scale if isinstance(q, list) else q * scale
        want = getattr(np, fn)(m, q, axis=0, method=method)
        got = getattr(pt, fn)(pt.asarray(m), q, axis=0, method=method).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_quantile_refuses_unknown_method():
    with pytest.raises(pt.ShapeError, match="not one of NumPy's"):
        pt.quantile(pt.ones(3), 0.5, method="fancy")


def test_ndarray_type_and_constructor():
    assert isinstance(pt.ones(2), pt.ndarray) and issubclass(pt.Array, pt.ndarray)
    assert not isinstance(np.ones(2), pt.ndarray)
    z = pt.ndarray((2, 3))
    assert z.dtype is pt.float64 and z.numpy().tolist() == [[0.0] * 3] * 2
    assert pt.ndarray((4,), dtype=pt.int32).dtype is pt.int32
    raw = np.arange(6, dtype=np.float32).tobytes()
    for kw in ({"offset": 4}, {"strides": (8,)}):
        np.testing.assert_array_equal(pt.ndarray((2,), dtype=np.float32, buffer=raw, **kw).numpy(),
                                      np.ndarray((2,), dtype=np.float32, buffer=raw, **kw))
    with pytest.raises(pt.ShapeError, match="ndarray"):
        pt.ndarray((10,), dtype=np.float32, buffer=raw)


def test_numpy_ufunc_methods_on_poot_arrays():
    a, b = np.arange(3.0), np.arange(4.0) - 1
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(np.add.outer(pt.asarray(a), pt.asarray(b))), np.add.outer(a, b))
    np.testing.assert_array_equal(np.asarray(np.maximum.reduce(pt.asarray(m), axis=1)), np.maximum.reduce(m, axis=1))
    np.testing.assert_array_equal(np.asarray(np.add.accumulate(pt.asarray(m), axis=0)), np.add.accumulate(m, axis=0))
    x, y = pt.asarray(np.zeros(5)), np.zeros(5)
    np.add.at(x, [0, 0, 3], 1.0)
    np.add.at(y, [0, 0, 3], 1.0)
    np.testing.assert_array_equal(x.numpy(), y)
