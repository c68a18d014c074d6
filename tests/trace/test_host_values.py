"""Element reads of realized CPU arrays are 0-d host values (poot/trace/fastpath.py): arithmetic,
in-place operators, comparisons, -x and abs(x) on them run on the host and must give NumPy's results
bit for bit, with Python scalars taking the array's dtype first (NumPy 2's weak scalars)."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from poot.trace import counters

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)
ARITH = [operator.add, operator.sub, operator.mul, operator.truediv]
COMPARE = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype
    assert np.array_equal(got, want, equal_nan=True) and np.signbit(got) == np.signbit(want)


@settings(max_examples=200, deadline=None)
@given(x=FLOATS, c=st.floats(allow_nan=False, width=64, min_value=-1e30, max_value=1e30),
       dtype=st.sampled_from([np.float32, np.float16, np.float64]), op=st.sampled_from(ARITH))
def test_arithmetic_with_python_scalars_rounds_like_numpy(x, c, dtype, op):
    a = np.array([x], dtype)
    xa = pt.asarray(a)[0]
    with np.errstate(all="ignore"):
        _same(op(xa, c).numpy(), op(a[0], c))
        _same(op(c, xa).numpy(), op(c, a[0]))


@settings(max_examples=200, deadline=None)
@given(x=FLOATS, y=FLOATS, c=st.floats(width=64, allow_nan=True), op=st.sampled_from(COMPARE))
def test_comparisons_of_host_values(x, y, c, op):
    a = np.array([x, y], np.float32)
    pa = pt.asarray(a)
    got = op(pa[0], pa[1])
    assert got.dtype == pt.bool and bool(got) == bool(op(a[0], a[1]))
    with np.errstate(over="ignore"):
        assert bool(op(pa[0], c)) == bool(op(a[0], c))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.float16, np.float32])
def test_negation_and_abs_wrap_and_keep_signs_like_numpy(dtype):
    vals = ([np.iinfo(dtype).min, np.iinfo(dtype).max, 0, 3] if np.dtype(dtype).kind in "iu"
            else [-0.0, 1.5, -np.inf, np.nan])
    a = np.array(vals, dtype)
    pa = pt.asarray(a)
    with np.errstate(over="ignore"):
        for i in range(len(vals)):
            _same((-pa[i]).numpy(), -a[i])
            _same(abs(pa[i]).numpy(), abs(a[i]))


def _lu_pivoting(xp, a):
    """LU with partial pivoting, element by element: comparisons and abs decide the pivot."""
    n = a.shape[0]
    a = xp.asarray(a) * 1.0
    perm = list(range(n))
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(a[i, k]) > abs(a[p, k]):
                p = i
        if p != k:
            for j in range(n):
                t = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = t
            perm[k], perm[p] = perm[p], perm[k]
        for i in range(k + 1, n):
            a[i, k] = a[i, k] / a[k, k]
            for j in range(k + 1, n):
                a[i, j] -= a[i, k] * a[k, j]
    return a, perm


def test_pivoting_element_loop_stays_on_the_host():
    m = np.random.default_rng(2).standard_normal((10, 10))
    before = counters.counts.programs
    got, perm = _lu_pivoting(pt, m)
    assert counters.counts.programs - before <= 2
    want, want_perm = _lu_pivoting(np, m)
    assert perm == want_perm
    np.testing.assert_array_equal(got.numpy(), want)
