"""Statistical, utility, searching, sorting and set functions of the standard: result dtypes, axis and
keepdims, 0-d and empty inputs, NaN handling, against the standard's text."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close


@pytest.mark.parametrize("name,want", [("int8", "int64"), ("int32", "int64"), ("uint8", "uint64"),
                                       ("bool", "int64"), ("float32", "float32"), ("float64", "float64")])
def test_sum_prod_cumulative_sum_dtypes(name, want, device):
    """Signed ints sum in the default integer, unsigned in the unsigned integer of its width, floats
    keep their dtype; dtype= overrides."""
    x = pt.ones((2, 3), dtype=getattr(pt, name))
    for fn in (pt.sum, pt.prod):
        assert fn(x).dtype is getattr(pt, want)
        assert fn(x, dtype=pt.float64).dtype is pt.float64
    assert pt.cumulative_sum(x, axis=1).dtype is getattr(pt, want)
    assert int(pt.sum(x)) == 6


def test_reductions_axes_keepdims_empty(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = pt.asarray(a)
    for fn, ref in ((pt.sum, np.sum), (pt.prod, np.prod), (pt.max, np.max), (pt.min, np.min),
                    (pt.mean, np.mean)):
        for axis in (None, 0, -1, (0, 2)):
            for keepdims in (False, True):
                r = fn(x, axis=axis, keepdims=keepdims)
                assert_close(r.numpy(), ref(a, axis=axis, keepdims=keepdims), pt.float64, ops=24)
    e = pt.ones((0, 3))
    np.testing.assert_array_equal(pt.sum(e, axis=0).numpy(), [0, 0, 0])
    np.testing.assert_array_equal(pt.prod(e, axis=0).numpy(), [1, 1, 1])
    assert np.isnan(pt.mean(e).numpy())  # the standard: the mean of nothing is NaN
    with pytest.raises(pt.ShapeError, match="zero-size reduction"):
        pt.max(e)
    z = pt.asarray(3.0)
    assert float(pt.sum(z)) == 3.0 and pt.max(z).shape == () and float(pt.mean(z)) == 3.0


def test_var_std_correction(device):
    a = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    x = pt.asarray(a)
    for c in (0, 1, 1.5):
        assert_close(pt.var(x, correction=c).numpy(), np.var(a, ddof=c), pt.float64, ops=8)
        assert_close(pt.std(x, axis=1, correction=c).numpy(), np.std(a, axis=1, ddof=c), pt.float64, ops=8)
    assert pt.var(pt.ones((3,), dtype=pt.float32)).dtype is pt.float32
    assert pt.std(x, axis=0, keepdims=True).shape == (1, 3)


def test_nan_propagates_in_max_min(device):
    x = pt.asarray([1.0, np.nan, 3.0])
    assert np.isnan(float(pt.max(x))) and np.isnan(float(pt.min(x)))
    assert np.isnan(float(pt.sum(x)))


def test_cumulative_sum(device):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int16)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.cumulative_sum(x, axis=1).numpy(), np.cumsum(a, 1))
    np.testing.assert_array_equal(pt.cumulative_sum(x, axis=0, include_initial=True).numpy(),
                                  np.vstack([np.zeros((1, 3)), np.cumsum(a, 0)]))
    np.testing.assert_array_equal(pt.cumulative_sum(pt.asarray([1.5, 2.0])).numpy(), [1.5, 3.5])
    r = pt.cumulative_sum(pt.ones((0,)), include_initial=True)
    assert r.shape == (1,) and float(r[0]) == 0.0
    with pytest.raises(pt.AxisError, match="axis is required"):
        pt.cumulative_sum(x)
    np.testing.assert_array_equal(pt.cumulative_sum(pt.asarray(1.0)).numpy(), [1.0])   # NumPy 2: a 0-d is 1 element


def test_all_any(device):
    x = pt.asarray([[True, False], [True, True]])
    assert not bool(pt.all(x)) and bool(pt.any(x))
    np.testing.assert_array_equal(pt.all(x, axis=1).numpy(), [False, True])
    assert pt.any(x, axis=0, keepdims=True).shape == (1, 2)
    assert bool(pt.all(pt.ones((0,)))) and not bool(pt.any(pt.ones((0,))))
    assert bool(pt.any(pt.asarray([0.0, np.nan])))  # NaN is nonzero, so True
    assert bool(pt.all(pt.asarray(5)))


def test_argmax_argmin(device):
    a = np.array([[3, 9, 9], [7, 1, 1]])
    x = pt.asarray(a)
    assert int(pt.argmax(x)) == 1 and int(pt.argmin(x)) == 4  # first occurrence, flattened
    np.testing.assert_array_equal(pt.argmax(x, axis=1).numpy(), [1, 0])
    np.testing.assert_array_equal(pt.argmin(x, axis=1, keepdims=True).numpy(), [[0], [1]])
    assert pt.argmax(x).dtype is pt.int64
    with pytest.raises(pt.ShapeError, match="empty"):
        pt.argmax(pt.ones((0,)))


def test_nonzero_and_where(device):
    a = np.array([[0, 2], [3, 0]])
    idx = pt.nonzero(pt.asarray(a))
    assert isinstance(idx, tuple) and all(i.dtype is pt.int64 for i in idx)
    for got, want in zip(idx, np.nonzero(a)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert pt.nonzero(pt.zeros((0, 2)))[0].shape == (0,)
    with pytest.raises(pt.ShapeError, match="0-d array has no axes"):
        pt.nonzero(pt.asarray(1))
    r = pt.where(pt.asarray([True, False]), pt.asarray([1, 2], dtype=pt.int8), pt.asarray(0.5))
    np.testing.assert_array_equal(r.numpy(), [1.0, 0.5])
    assert pt.where(pt.asarray([[True], [False]]), pt.ones(3), pt.zeros(3)).shape == (2, 3)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side, device):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
    v = np.array([[0.0, 2.0], [3.5, np.nan]])
    r = pt.searchsorted(pt.asarray(a), pt.asarray(v), side=side)
    assert r.dtype is pt.int64 and not r.is_realized  # lazy: a fused compare-and-count
    np.testing.assert_array_equal(r.numpy(), np.searchsorted(a, v, side=side))
    unsorted = np.array([3, 1, 2])
    order = np.argsort(unsorted)
    r = pt.searchsorted(pt.asarray(unsorted), pt.asarray([2]), side=side, sorter=pt.asarray(order))
    np.testing.assert_array_equal(r.numpy(), np.searchsorted(unsorted, [2], side=side, sorter=order))
    assert int(pt.searchsorted(pt.ones((0,)), pt.asarray(1.0))) == 0
    with pytest.raises(pt.ShapeError, match="one-dimensional"):
        pt.searchsorted(pt.ones((2, 2)), pt.ones(1))


def test_sort_argsort(device):
    a = np.array([[3.0, 1.0, np.nan, 1.0], [2.0, -0.0, 0.0, -5.0]])
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.sort(x).numpy(), np.sort(a))
    np.testing.assert_array_equal(pt.sort(x, axis=0).numpy(), np.sort(a, axis=0))
    np.testing.assert_array_equal(pt.argsort(x).numpy(), np.argsort(a, kind="stable"))
    d = pt.sort(x, descending=True).numpy()
    np.testing.assert_array_equal(d[1], [2.0, 0.0, 0.0, -5.0])
    ties = pt.asarray([1, 3, 1, 3, 2])
    np.testing.assert_array_equal(pt.argsort(ties, descending=True).numpy(), [1, 3, 4, 0, 2])  # stable
    np.testing.assert_array_equal(pt.argsort(ties).numpy(), [0, 2, 4, 1, 3])
    assert pt.sort(pt.ones((0,))).shape == (0,) and pt.sort(x).dtype is pt.float64
    assert pt.argsort(x).dtype is pt.int64
    with pytest.raises(pt.ShapeError, match="0-d array has no axis"):
        pt.sort(pt.asarray(1.0))


def test_unique_family(device):
    a = np.array([[3.0, 1.0, np.nan], [1.0, np.nan, -0.0], [0.0, 3.0, 3.0]])
    x = pt.asarray(a)
    values, indices, inverse, counts = pt.unique_all(x)
    np.testing.assert_array_equal(values.numpy()[:3], [0.0, 1.0, 3.0])
    assert np.isnan(values.numpy()[3:]).all() and values.shape == (5,)  # each NaN is distinct
    np.testing.assert_array_equal(counts.numpy(), [2, 2, 3, 1, 1])
    assert inverse.shape == x.shape and all(t.dtype is pt.int64 for t in (indices, inverse, counts))
    flat = a.reshape(-1)
    np.testing.assert_array_equal(flat[indices.numpy()][:3], values.numpy()[:3])
    got = values.numpy()[inverse.numpy()]
    np.testing.assert_array_equal(got[~np.isnan(a)], a[~np.isnan(a)])
    r = pt.unique_counts(pt.asarray([2, 2, 1], dtype=pt.uint8))
    assert r.values.dtype is pt.uint8 and r.counts.numpy().tolist() == [1, 2]
    assert r.values.numpy().tolist() == [1, 2]
    inv = pt.unique_inverse(pt.asarray([[5, 4], [4, 5]]))
    assert inv.inverse_indices.numpy().tolist() == [[1, 0], [0, 1]]
    assert pt.unique_values(pt.asarray(7)).shape == (1,)
    assert pt.unique_values(pt.ones((0,))).shape == (0,)
    assert pt.unique_values(pt.asarray([True, False, True])).numpy().tolist() == [False, True]
