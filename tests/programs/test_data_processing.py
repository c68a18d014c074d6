"""Data-processing scripts written the NumPy way: a sales table grouped with argsort/bincount/add.at,
binned with histogram and digitize, smoothed with cumsum and convolve windows, ranked with argsort of
argsort, with NaN-aware statistics, calendar arithmetic on negative day numbers and mixed integer
dtypes; then the fixed-size forms JAX users write inside @pt.jit (flatnonzero/where/extract/compress
and the set operations with size=), and NumPy's ufunc call keywords (dtype=, casting=). Each runs as
NumPy, eagerly and with the step jitted (tests/programs/harness.py), or against NumPy's own results."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

from .harness import check_program


def _bincount(xp, x, weights, n):
    """bincount with n bins: poot's length= keeps the shape static inside @pt.jit."""
    if xp is np:
        return np.bincount(x, weights=weights, minlength=n)
    return xp.bincount(x, weights=weights, length=n)


def sales_step(xp, store, day, qty, price):
    week, dow = day // 7, day % 7                        # floor division of negative day numbers
    rev = qty * price                                    # int32 * float64 (NaN prices)
    ok = ~xp.isnan(rev)
    rev0 = xp.where(ok, rev, 0.0)
    order = xp.lexsort((day, store))                     # by store, then day
    ks = store[order]
    first = xp.concatenate([xp.ones(1, dtype=bool), ks[1:] != ks[:-1]])
    gid = xp.cumsum(first) - 1
    total = _bincount(xp, gid, rev0[order], 6)
    count = _bincount(xp, store, ok.astype(xp.float64), 6)
    mean = total / xp.maximum(count, 1.0)
    by_dow = xp.zeros((6, 7))
    if xp is np:
        np.add.at(by_dow, (store, dow), rev0)
    else:
        by_dow = by_dow.at[store, dow].add(rev0)
    z = (rev - xp.nanmean(rev)) / xp.nanstd(rev)
    band = xp.digitize(price, xp.asarray([5.0, 10.0, 20.0]), right=True)
    hist, edges = xp.histogram(rev0, bins=8, range=(0.0, 400.0))
    c = xp.cumsum(xp.concatenate([xp.zeros(1), rev0]))
    rolling = (c[7:] - c[:-7]) / 7
    smooth = xp.convolve(rev0, xp.ones(5) / 5, mode="valid")
    rank = xp.argsort(xp.argsort(-rev0, kind="stable"), kind="stable")
    steps = xp.diff(xp.sort(day), prepend=day.min())
    small = xp.clip(qty, 1, 15).astype(xp.uint8) + xp.uint8(200)       # wraps in uint8
    return (week, dow, gid, total, mean, by_dow, z, band, hist, edges, rolling, smooth, rank, steps,
            small, xp.round(rev0 / 3, 2), xp.nanpercentile(rev, [5, 50, 95]), xp.nanmedian(price))


def sales_run(xp, step, *inputs):
    return step(xp, *inputs)


def sales_inputs():
    r = np.random.default_rng(49)
    n = 120
    store = r.integers(0, 6, n)
    store[:6] = np.arange(6)
    day = r.integers(-40, 400, n)
    qty = r.integers(0, 20, n).astype(np.int32)
    price = np.round(r.uniform(0.5, 30.0, n), 2)
    price[r.random(n) < 0.05] = np.nan
    return store, day, qty, price


def test_sales_table_grouping_binning_and_rolling_windows(device):
    check_program(device, sales_run, sales_step, sales_inputs(), ops=200)


# --- JAX's fixed-size forms: the same values NumPy gives, cut or padded to size -------------------
def _padded(values, size, fill):
    values = np.asarray(values)
    out = np.full(size, fill, dtype=values.dtype)
    out[:min(size, len(values))] = values[:size]
    return out


def _eager_and_jit(fn, *args):
    xs = [pt.asarray(a) for a in args]
    return fn(*xs), pt.jit(fn)(*xs)


@pytest.mark.parametrize("size", [0, 3, 12])
def test_nonzero_family_with_size_inside_jit(device, size):
    r = np.random.default_rng(3)
    x = r.normal(size=(3, 4))
    m = x > 0
    cases = [
        (lambda x: pt.flatnonzero(x > 0, size=size, fill_value=-1), _padded(np.flatnonzero(m), size, -1)),
        (lambda x: pt.where(x.ravel() > 0, size=size)[0], _padded(np.flatnonzero(m), size, 0)),
        (lambda x: pt.extract(x > 0, x * 2, size=size, fill_value=np.nan),
         _padded(np.extract(m, x * 2), size, np.nan)),
        (lambda x: pt.compress(x[0] > 0, x, axis=1, size=min(size, 4) or 1, fill_value=7.0),
         np.concatenate([np.compress(m[0], x, axis=1)[:, :min(size, 4) or 1],
                         np.full((3, max(0, (min(size, 4) or 1) - m[0].sum())), 7.0)], axis=1)),
    ]
    for fn, expected in cases:
        for got in _eager_and_jit(fn, x):
            assert got.dtype == expected.dtype
            assert_close(got.numpy(), expected, pt.float64)
    with pytest.raises(pt.ShapeError):
        pt.where(pt.asarray(x) > 0, 1.0, 0.0, size=3)
    empty = np.zeros(0)
    for got in _eager_and_jit(lambda e: pt.extract(e > 0, e, size=size, fill_value=-2.0), empty):
        assert got.numpy().tolist() == [-2.0] * size


SET_INPUTS = [
    (np.array([5, 1, 3, 3, 9, 1, 7]), np.array([3, 4, 5, 5, 11])),
    (np.array([2.5, np.nan, 1.0, np.nan, 2.5]), np.array([np.nan, 1.0, 4.0])),
    (np.array([3, 1, 1], np.int32), np.array([1.0, 8.0], np.float32)),
    (np.array([4, 4], np.uint8), np.array([], np.int16)),
    (np.array([], np.int64), np.array([6, 2, 6])),
]


@pytest.mark.parametrize("op", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
@pytest.mark.parametrize("k", range(len(SET_INPUTS)))
def test_set_operations_with_size_inside_jit(device, op, k):
    a, b = SET_INPUTS[k]
    exact = getattr(np, op)(a, b)
    for size in (len(exact), len(exact) + 2, 1):
        expected = _padded(exact, size, 0 if op == "setdiff1d" else (exact[0] if len(exact) else 0))
        for got in _eager_and_jit(lambda x, y: getattr(pt, op)(x, y, size=size), a, b):
            assert got.dtype == exact.dtype, f"{op}: {got.dtype}, NumPy gives {exact.dtype}"
            assert_close(got.numpy(), expected, pt.dtypes.as_dtype(exact.dtype))
    expected = _padded(exact, len(exact) + 2, 42)
    for got in _eager_and_jit(lambda x, y: getattr(pt, op)(x, y, size=len(exact) + 2, fill_value=42), a, b):
        assert_close(got.numpy(), expected, pt.dtypes.as_dtype(exact.dtype))


def test_intersect1d_indices_and_ordered_setdiff_with_size(device):
    a, b = np.array([5, 1, 3, 3, 9, 1, 7]), np.array([3, 4, 5, 5, 11, 9])
    values, ia, ib = np.intersect1d(a, b, return_indices=True)
    for got in _eager_and_jit(lambda x, y: pt.intersect1d(x, y, return_indices=True, size=5), a, b):
        assert got[0].numpy().tolist() == values.tolist() + [3, 3]
        assert got[1].numpy().tolist() == ia.tolist() + [7, 7]          # padded past the end, as JAX
        assert got[2].numpy().tolist() == ib.tolist() + [6, 6]
    u = np.array([9, 2, 7, 4])                                             # unique, not sorted
    expected = np.setdiff1d(u, [7], assume_unique=True)                    # keeps ar1's order
    for got in _eager_and_jit(lambda x, y: pt.setdiff1d(x, y, assume_unique=True, size=3), u, np.array([7])):
        assert got.numpy().tolist() == expected.tolist()


# --- NumPy's ufunc call keywords --------------------------------------------------------------------
def test_ufunc_dtype_and_casting_keywords(device):
    u = np.array([200, 100, 255], np.uint8)
    f = np.array([1.5, -2.5, 3.0])
    calls = [
        lambda m, u, f: m.add(u, u, dtype=m.int16),                 # no uint8 wrap-around
        lambda m, u, f: m.multiply(u, u, dtype=m.uint16),
        lambda m, u, f: m.add(u, 300, dtype=m.int16),
        lambda m, u, f: m.divide(u, 3, dtype=m.float32),
        lambda m, u, f: m.maximum(u, f, dtype=m.float32),
        lambda m, u, f: m.add(f, f, dtype=m.int64, casting="unsafe"),
        lambda m, u, f: m.sqrt(u, dtype=m.float32),
        lambda m, u, f: m.negative(u, dtype=m.int16),
        lambda m, u, f: m.less(u, f, dtype=bool),
        lambda m, u, f: m.add(u, f, casting="safe"),
        lambda m, u, f: m.less.outer(u, u, dtype=bool),            # the result's dtype, not the inputs'
        lambda m, u, f: m.add.outer(u, u, dtype=m.int16),
    ]
    for i, call in enumerate(calls):
        expected = call(np, u, f)
        for got in _eager_and_jit(lambda a, b: call(pt, a, b), u, f):
            assert got.dtype == expected.dtype, f"call {i}: {got.dtype}, NumPy gives {expected.dtype}"
            assert_close(got.numpy(), expected, pt.dtypes.as_dtype(expected.dtype), err_msg=f"call {i}")
    x, y = pt.asarray(u), pt.asarray(f)
    for bad in (lambda: pt.add(y, y, dtype=pt.int64),                # same_kind refuses float -> int
                lambda: pt.add(x, 1.5, dtype=pt.int16),
                lambda: pt.less(x, x, dtype=pt.float64),
                lambda: pt.divide(x, x, dtype=pt.int16),
                lambda: pt.add(x, x.astype(pt.int16), casting="no")):
        with pytest.raises(pt.DTypeError):
            bad()
    with pytest.raises(pt.ArgumentError, match="pt.where"):
        pt.add(x, x, where=x > 100)
    for call in (lambda m, a: m.add(a, a, dtype=np.int16), lambda m, a: m.less(a, a[::-1], dtype=bool),
                 lambda m, a: m.add(a, 1.5, casting="unsafe", dtype=np.int16)):    # NumPy's ufuncs on poot arrays
        got, expected = call(np, x), call(np, u)
        assert isinstance(got, pt.Array) and got.dtype == expected.dtype
        assert np.array_equal(got.numpy(), expected)


# --- NumPy's own functions on poot arrays, and NumPy's edge dtypes ----------------------------------
def test_numpy_sliding_window_view_of_a_poot_array_stays_lazy(device):
    x = np.random.default_rng(5).normal(size=16)

    def rolling(v):
        w = np.lib.stride_tricks.sliding_window_view(v, 4)
        return w.mean(axis=1), np.lib.stride_tricks.sliding_window_view(v.reshape(4, 4), 2, axis=0).sum(-1)

    expected = rolling(x)
    for got in _eager_and_jit(rolling, x):
        for g, e in zip(got, expected):
            assert isinstance(g, pt.Array)
            assert_close(g.numpy(), e, pt.float64, ops=4)


def test_histogram2d_edges_from_a_python_range_are_float64(device):
    r = np.random.default_rng(6)
    x, y = r.normal(size=30).astype(np.float32), r.uniform(0, 5, 30).astype(np.float32)
    for kw in ({"bins": 3, "range": [[-2, 2], [0, 5]]}, {"bins": 3}, {"bins": [2, 4], "range": [[1, 1], [0, 5]]}):
        expected = np.histogram2d(x, y, **kw)
        got = pt.histogram2d(pt.asarray(x), pt.asarray(y), **kw)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype, f"{kw}: {g.dtype}, NumPy gives {e.dtype}"
            assert_close(g.numpy(), e, pt.dtypes.as_dtype(e.dtype))


def test_histogram_over_a_range_held_in_arrays_inside_jit(device):
    r = np.random.default_rng(7)
    for x in (r.normal(size=40), r.normal(size=40).astype(np.float32), r.integers(0, 9, 40), np.full(5, 2.0)):
        w = np.arange(x.size) % 3
        for make_range in (lambda v: (v.min(), v.max()), lambda v: (0, v.max())):
            expected = np.histogram(x, bins=5, range=make_range(x), weights=w)
            for got in _eager_and_jit(lambda v, w: pt.histogram(v, bins=5, range=make_range(v), weights=w), x, w):
                for g, e in zip(got, expected):
                    assert g.dtype == e.dtype, f"{x.dtype}: {g.dtype}, NumPy gives {e.dtype}"
                    assert_close(g.numpy(), e, pt.dtypes.as_dtype(e.dtype), ops=4)


def test_round_far_decimals_matches_numpy_exactly(device):
    r = np.random.default_rng(8)
    for d in (np.float64, np.float32):
        x = (r.normal(size=30) * 10.0 ** r.integers(-30, 30, 30)).astype(d)
        for decimals in (2, 23, 30, 40, -23, 309, -400):        # past 1e22 NumPy's scale is its own double
            expected = np.round(x, decimals)
            for got in _eager_and_jit(lambda v: pt.round(v, decimals), x):
                assert got.dtype == expected.dtype
                assert np.array_equal(got.numpy(), expected, equal_nan=True), f"{d.__name__}, decimals={decimals}"


def test_histogram2d_over_ranges_held_in_arrays_inside_jit(device):
    r = np.random.default_rng(9)
    for d in (np.float64, np.float32, np.int64):
        x, y = (r.normal(size=40) * 3).astype(d), r.uniform(0, 5, 40).astype(d)
        for make_range in (lambda a, b: [(a.min(), a.max()), (b.min(), b.max())],
                           lambda a, b: [(0, a.max()), (b.min(), 5.5)]):
            expected = np.histogram2d(x, y, bins=[3, 4], range=make_range(x, y))
            for got in _eager_and_jit(lambda a, b: pt.histogram2d(a, b, bins=[3, 4], range=make_range(a, b)), x, y):
                for g, e in zip(got, expected):
                    assert g.dtype == e.dtype, f"{d.__name__}: {g.dtype}, NumPy gives {e.dtype}"
                    assert_close(g.numpy(), e, pt.dtypes.as_dtype(e.dtype), ops=4)
