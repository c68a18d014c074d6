"""quantile/percentile/nanquantile with weights= (NumPy 2's method='inverted_cdf'), eager and under
@pt.jit, against NumPy: full-shape and 1-D weights along an axis, leading zero weights, ties, integer
data, keepdims, NaN slices, and NumPy's refusals as poot errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import poot as pt

Q = [0.0, 0.1, 0.5, 0.77, 1.0]


def _both(fn, a, q, w, **kw):
    """The poot result eagerly and with the call jitted (weights as a poot array argument)."""
    call = lambda x, ww: getattr(pt, fn)(x, q, weights=ww, method="inverted_cdf", **kw)   # noqa: E731
    return call(pt.asarray(a), w), pt.jit(call)(pt.asarray(a), pt.asarray(w))


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_full_shape_weights_match_numpy(device, axis, keepdims):
    rng = np.random.default_rng(3)
    a = np.round(rng.normal(size=(4, 6)) * 2)          # ties
    w = rng.integers(1, 4, size=(4, 6)).astype(np.float64)
    w[:2, 0] = 0.0                                      # leading zero weights along either axis
    w[3, 2:4] = 0.0
    want = np.quantile(a, Q, axis=axis, weights=w, method="inverted_cdf", keepdims=keepdims)
    for got in _both("quantile", a, Q, w, axis=axis, keepdims=keepdims):
        assert got.numpy().dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_dimensional_weights_along_an_axis_match_numpy(device, axis):
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 5, 4))
    w = np.array([0.0, 2.0, 0.5, 3.0, 1.0][: a.shape[axis]])
    want = np.percentile(a, [10, 50, 90], axis=axis, weights=w, method="inverted_cdf")
    for got in _both("percentile", a, [10, 50, 90], w, axis=axis):
        np.testing.assert_array_equal(got.numpy(), want)


def test_integer_data_keep_their_dtype_and_a_scalar_q(device):
    a = np.array([5, 1, 4, 4, 2, 9], dtype=np.int16)
    w = np.array([1, 0, 2, 1, 3, 1])
    want = np.quantile(a, 0.3, weights=w, method="inverted_cdf")
    for got in _both("quantile", a, 0.3, w):
        assert got.shape == () and got.dtype == pt.int16
        assert got.item() == want


def test_nan_slices_as_numpy(device):
    a = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 1.0, 2.0, 0.5]])
    w = np.array([[1, 2, 1, 1], [1, 1, 1, 1], [0, 1, 1, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for fn in ("quantile", "nanquantile"):
            want = getattr(np, fn)(a, [0.2, 0.9], axis=1, weights=w, method="inverted_cdf")
            for got in _both(fn, a, [0.2, 0.9], w, axis=1):
                np.testing.assert_array_equal(got.numpy(), want)


def test_numpys_refusals_are_poot_errors(device):
    x = pt.ones((2, 3))
    with pytest.raises(pt.ShapeError, match="only method 'inverted_cdf'"):
        pt.quantile(x, 0.5, weights=np.ones((2, 3)))
    with pytest.raises(pt.ShapeError, match="axis must be specified"):
        pt.quantile(x, 0.5, weights=[1, 1, 1], method="inverted_cdf")
    with pytest.raises(pt.ShapeError, match="not compatible with axis 1"):
        pt.quantile(x, 0.5, axis=1, weights=[1, 1], method="inverted_cdf")
    for w in ([1, -1, 1], pt.asarray([1.0, -1.0, 1.0])):
        with pytest.raises(pt.DomainError, match="non-negative"):
            pt.quantile(x, 0.5, axis=1, weights=w, method="inverted_cdf")
    with pytest.raises(pt.DomainError, match="all zero"):
        pt.quantile(x, 0.5, axis=1, weights=[0, 0, 0], method="inverted_cdf")


def test_q_zero_skips_the_smallest_values_when_they_weigh_nothing(device):
    a, w = np.array([4.0, 1.0, 3.0, 2.0]), np.array([1.0, 0.0, 1.0, 0.0])
    want = np.quantile(a, [0.0, 0.5, 1.0], weights=w, method="inverted_cdf")
    assert want[0] == 3.0
    for got in _both("quantile", a, [0.0, 0.5, 1.0], w):
        np.testing.assert_array_equal(got.numpy(), want)
