"""The host ops' stable sort, argsort and unique (poot/graph/host_sort.py: NumPy's fast sorts with
ties put back in order) against NumPy's stable sorts, with ties, NaNs and signed zeros."""
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import poot as pt
from poot.graph import host_sort

_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16, np.uint32, np.bool_, np.float16]


def _stable_argsort(a, axis, descending):
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)


def _tricky(dtype, shape, rng):
    if np.dtype(dtype).kind == "f":
        pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.5, -1.5, np.inf, -np.inf, 2.0], dtype)
        return rng.choice(pool, size=shape)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.choice(np.array([info.min, info.max, 0, 1, 3], dtype), size=shape)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape,axis", [((50,), 0), ((7, 9), 0), ((7, 9), 1), ((3, 0, 4), 2), ((4, 5, 6), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_matches_numpy_stable(dtype, shape, axis, descending):
    rng = np.random.default_rng(zlib.crc32(repr((np.dtype(dtype).name, shape, axis, descending)).encode()))
    a = _tricky(dtype, shape, rng)
    want = _stable_argsort(a, axis, descending)
    got = host_sort.argsort(a, axis, descending)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    s = host_sort.sort(a, axis, descending)
    ref = np.sort(a, axis=axis, kind="stable")
    ref = np.flip(ref, axis=axis) if descending else ref
    bits = lambda v: v.view(f"u{a.itemsize}") if a.dtype.kind == "f" else v     # noqa: E731
    # bitwise: the signs of zeros and NaNs in their stable order
    np.testing.assert_array_equal(bits(s), bits(ref))
    out = np.empty_like(a)                   # the host step's form: results written into its buffers
    host_sort.sort_into(a, out, axis, descending)
    np.testing.assert_array_equal(bits(out), bits(ref))
    idx = np.empty(a.shape, np.int64)
    host_sort.argsort_into(a, idx, axis, descending)
    np.testing.assert_array_equal(idx, want)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
                  hnp.array_shapes(max_dims=1, min_side=0, max_side=40)),
       st.booleans())
def test_unique_matches_numpy(a, equal_nan):
    got = host_sort.unique(a, index=True, inverse=True, counts=True, equal_nan=equal_nan)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_public_sort_argsort_unique_large():
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, 20_000).astype(np.float64)   # many ties
    a[::97] = np.nan
    a[::101] = -0.0
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.argsort(x).numpy(), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(pt.argsort(x, descending=True).numpy(), _stable_argsort(a, 0, True))
    s = pt.sort(x).numpy()
    np.testing.assert_array_equal(np.signbit(s), np.signbit(np.sort(a, kind="stable")))
    u = pt.unique_all(x)
    w = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for g, ref in zip(u, w):
        np.testing.assert_array_equal(g.numpy(), ref)
    vals, cnt = pt.unique(x, return_counts=True)
    wv, wc = np.unique(a, return_counts=True)
    np.testing.assert_array_equal(vals.numpy(), wv)
    np.testing.assert_array_equal(cnt.numpy(), wc)
