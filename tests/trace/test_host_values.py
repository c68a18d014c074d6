"""Element reads of realized CPU arrays are 0-d host values (poot/trace/fastpath.py): arithmetic,
in-place operators, comparisons, -x and abs(x) on them run on the host and must give NumPy's results
bit for bit, with Python scalars taking the array's dtype first (NumPy 2's weak scalars)."""
import operator
import os
import sys
import weakref

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
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))


NUMPY_SCALARS = [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_]


@pytest.mark.parametrize("op", ARITH + [operator.pow])
@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8], ids=str)
def test_numpy_scalars_promote_like_numpy_on_either_side(op, scalar, dtype):
    """`x / np.sqrt(n)`, `np.float32(2) * x`: NumPy's scalars are typed (NumPy 2), on the left (NumPy
    hands the operator to the array) and on the right, on arrays and on element reads alike."""
    xn = np.array([1, 2, 3, 250], dtype=dtype)
    c = scalar(3)
    for x, want_x in ((pt.asarray(xn), xn), (pt.asarray(xn)[1], xn[1])):
        for got_f, want_f in ((lambda: op(x, c), lambda: op(want_x, c)), (lambda: op(c, x), lambda: op(c, want_x))):
            with np.errstate(all="ignore"):
                try:
                    want = want_f()
                except (ZeroDivisionError, ValueError, TypeError):
                    continue
            got = got_f()
            assert isinstance(got, pt.Array)
            if op is operator.pow:            # pow is within an ulp of NumPy's, not bit for bit
                assert got.dtype == np.asarray(want).dtype
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
                continue
            with np.errstate(all="ignore"):
                _same(got.numpy(), np.asarray(want))


@pytest.mark.parametrize("op", ARITH + [operator.pow])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32], ids=str)
def test_a_0d_array_with_an_array_broadcasts_like_numpy(op, dtype):
    """`x / x.sum()`, `x - x.mean()`, `lam * v`: a 0-d array (pending or an element read) on either
    side of an array of its dtype."""
    xn = np.array([[1, 2, 3], [4, 5, 7]], dtype=dtype)
    x = pt.asarray(xn)
    if op is operator.truediv and np.dtype(dtype).kind == "i" or op is operator.pow and dtype is np.int32:
        pytest.skip("another dtype rule (true division of ints, integer powers) than the one tested")
    for s, sn in ((x.sum(), xn.sum()), (x[1, 2], xn[1, 2]), (pt.realize(x.max()), xn.max())):
        for got, want in ((op(s, x), op(sn, xn)), (op(x, s), op(xn, sn))):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


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


def _mixed_loop(a):
    """Reads, host arithmetic (with arrays, weak Python scalars, reflected and in-place) and writes,
    element by element: every step rounds to a's dtype."""
    n = a.shape[0]
    for k in range(n):
        for i in range(n):
            s = a[i, k] * 0.1
            s += a[k, i] / 3
            s -= 1.7 - a[i, i]
            a[i, k] = s * a[k, k] - a[i, k] if i != k else 2 * s
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_element_loop_rounds_every_step_like_numpy(dtype):
    m = np.random.default_rng(5).uniform(-1.5, 1.5, (6, 6)).astype(dtype)
    with np.errstate(all="ignore"):
        want = _mixed_loop(m.copy())
        wide = _mixed_loop(m.astype(np.float64)).astype(dtype)
    _same(_mixed_loop(pt.asarray(m)).numpy(), want)
    if dtype is not np.float64:
        assert not np.array_equal(want, wide)      # rounding each step to dtype shows in the result


def test_integer_element_loop_wraps_like_numpy():
    m = np.arange(-8, 8, dtype=np.int8).reshape(4, 4) * 9
    a, want = pt.asarray(m), m.copy()
    with np.errstate(over="ignore"):
        for i in range(4):
            for j in range(4):
                a[i, j] = a[i, j] * a[j, i] + 100
                want[i, j] = want[i, j] * want[j, i] + np.int8(100)
    _same(a.numpy(), want)


@pytest.mark.parametrize("n", [4, 512])      # 512 x 512 float64 lives in the CPU pool's large memory
def test_element_write_leaves_every_other_view_of_the_value_unchanged(n):
    m = np.random.default_rng(6).standard_normal((n, n))
    a = pt.realize(pt.asarray(m))
    same_value = a.copy()                 # another handle on the same node
    pending = a * 2.0                     # a recorded equation reading it
    seen = a.numpy()                      # a NumPy view of its memory
    before = a[0, 1]                      # a host value read from it
    a[0, 1] = 7.0
    a[n - 1, 0] = before * 3.0
    want = m.copy()
    want[0, 1], want[n - 1, 0] = 7.0, m[0, 1] * 3.0
    np.testing.assert_array_equal(a.numpy(), want)
    np.testing.assert_array_equal(same_value.numpy(), m)
    np.testing.assert_array_equal(pending.numpy(), m * 2.0)
    np.testing.assert_array_equal(seen, m)
    assert float(before) == m[0, 1]
    del same_value, pending, seen
    buf = weakref.ref(a._node.buf)
    a[1, 1] = -1.0                        # nothing else sees a's memory now: written in place
    assert a._node.buf is buf() and a.numpy()[1, 1] == -1.0


def test_element_operators_name_the_users_line():
    """A PootError raised behind a fast path shows the user's call, and an equation a fast path
    records names the user's line."""
    x = pt.asarray(np.zeros((2, 3)))
    line = sys._getframe().f_lineno + 2
    with pytest.raises(pt.PootIndexError) as info:
        x[0, 7] = 1.0
    assert f"{__file__}:{line}" in str(info.value)
    assert not any(os.sep + os.path.join("poot", "trace") in str(t.path) for t in info.traceback)
    y = x * 2.0; line = sys._getframe().f_lineno                         # noqa: E702
    assert y._node.where == (__file__, line)
    y *= 3.0; line = sys._getframe().f_lineno                            # noqa: E702
    assert y._node.where == (__file__, line)
