"""The ufunc methods of poot's binary functions (pt.add.outer, pt.maximum.reduce, pt.add.accumulate,
pt.add.at...) and NumPy's (np.add.outer(x, y) on poot arrays) against NumPy, eager and in @pt.jit."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import assert_close

REORDERABLE = ("add", "multiply", "maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or",
               "bitwise_xor", "logical_and", "logical_or", "logical_xor", "hypot", "logaddexp")
ORDERED = ("subtract", "divide", "floor_divide", "remainder", "power", "arctan2", "copysign")
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")
FLOAT_ONLY = ("hypot", "logaddexp", "arctan2", "copysign", "divide")


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 2).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    lo = 0 if np.dtype(dtype).kind == "u" else -4
    return rng.integers(lo, 5, size=shape).astype(dtype)


def _dtype_for(name, draw):
    if name in BITWISE:
        return draw(st.sampled_from([np.int32, np.uint8, np.int64, np.bool_]))
    if name in FLOAT_ONLY:
        return draw(st.sampled_from([np.float32, np.float64]))
    if name in ("floor_divide", "remainder", "power"):
        return np.float64
    return draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.uint8]))


@st.composite
def _reduce_case(draw):
    name = draw(st.sampled_from(REORDERABLE + ORDERED))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    axes = st.integers(-ndim, ndim - 1)
    if name in REORDERABLE:
        axes = st.one_of(axes, st.none(), st.lists(st.integers(0, ndim - 1), unique=True).map(tuple))
    return name, shape, draw(axes), draw(st.booleans()), _dtype_for(name, draw), draw(st.integers(0, 9))


def _tol_ops(name, n):
    return 4 * n if name in ("hypot", "logaddexp", "add", "multiply", "power", "divide") else 4


@settings(max_examples=40, deadline=None)
@given(_reduce_case())
def test_reduce_matches_numpy(case):
    name, shape, axis, keepdims, dtype, seed = case
    a = _data(shape, dtype, seed)
    if name == "power":
        a = np.abs(a) % 2 + 0.5
    expected = getattr(np, name).reduce(a, axis=axis, keepdims=keepdims)
    if name in ("power", "arctan2"):
        # NumPy 2.4's float power.reduce and arctan2.reduce of a contiguous axis combine only the
        # first and the last element (power.reduce([2., 3., 2.]) is 4.0); the left fold they document
        # is the last element of their accumulate
        expected = np.take(getattr(np, name).accumulate(a, axis=axis), [-1], axis=axis)
        expected = expected if keepdims else np.squeeze(expected, axis=axis)
    got = getattr(pt, name).reduce(pt.asarray(a), axis=axis, keepdims=keepdims).numpy()
    assert got.dtype == np.asarray(expected).dtype, (name, got.dtype, expected.dtype)
    assert_close(got, expected, got.dtype, ops=_tol_ops(name, a.size), err_msg=f"{name} {axis}")


@st.composite
def _accumulate_case(draw):
    name = draw(st.sampled_from(REORDERABLE + ORDERED))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    return name, shape, draw(st.integers(-ndim, ndim - 1)), _dtype_for(name, draw), draw(st.integers(0, 9))


@settings(max_examples=40, deadline=None)
@given(_accumulate_case())
def test_accumulate_matches_numpy(case):
    name, shape, axis, dtype, seed = case
    a = _data(shape, dtype, seed)
    if name == "power":
        a = np.abs(a) % 2 + 0.5
    expected = getattr(np, name).accumulate(a, axis=axis)
    got = getattr(pt, name).accumulate(pt.asarray(a), axis=axis).numpy()
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert_close(got, expected, got.dtype, ops=_tol_ops(name, a.size), err_msg=f"{name} {axis}")


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum", "power",
                                  "greater", "bitwise_xor", "arctan2", "logical_and"])
def test_outer_matches_numpy(name):
    a = _data((2, 3), np.float32, 1)
    b = _data((4,), np.float32, 2)
    if name in ("bitwise_xor", "logical_and"):
        a, b = (a * 3).astype(np.int32), (b * 3).astype(np.int32)
    if name == "power":
        a = np.abs(a)
    expected = getattr(np, name).outer(a, b)
    for got in (getattr(pt, name).outer(pt.asarray(a), pt.asarray(b)),
                getattr(np, name).outer(pt.asarray(a), pt.asarray(b))):      # through __array_ufunc__
        assert isinstance(got, pt.Array) and got.shape == expected.shape
        assert_close(got.numpy(), expected, got.dtype, ops=4)


def test_power_reduce_is_the_left_fold():
    a = np.array([2.0, 3.0, 2.0])
    assert pt.power.reduce(pt.asarray(a)).item() == (2.0 ** 3.0) ** 2.0 == np.power.accumulate(a)[-1]


def test_reduce_options():
    a = _data((3, 4), np.float32, 3)
    assert_close(pt.add.reduce(pt.asarray(a), axis=1, initial=5.0, keepdims=True).numpy(),
                 np.add.reduce(a, axis=1, initial=5.0, keepdims=True), np.float32, ops=8)
    mask = np.array([True, False, True, True])
    assert_close(pt.bitwise_or.reduce(pt.asarray(a > 0), axis=1, where=mask).numpy(),
                 np.bitwise_or.reduce(a > 0, axis=1, where=mask), np.bool_)
    assert_close(pt.maximum.reduce(pt.asarray(a), axis=None, initial=9.0).numpy(),
                 np.maximum.reduce(a, axis=None, initial=9.0), np.float32)
    assert_close(pt.subtract.reduce(pt.asarray(a), axis=0, initial=1.0).numpy(),
                 np.subtract.reduce(a, axis=0, initial=1.0), np.float32, ops=4)
    assert_close(pt.add.reduce(pt.asarray(a.astype(np.int8)), dtype=np.float32).numpy(),
                 np.add.reduce(a.astype(np.int8), dtype=np.float32), np.float32, ops=4)
    empty = np.zeros((0, 3), np.uint8)
    for name in ("add", "multiply", "bitwise_and", "logical_or"):
        got = getattr(pt, name).reduce(pt.asarray(empty)).numpy()
        np.testing.assert_array_equal(got, getattr(np, name).reduce(empty))


def test_reduce_errors():
    x = pt.asarray(np.ones((2, 3)))
    with pytest.raises(pt.ShapeError, match="not reorderable"):
        pt.subtract.reduce(x, axis=None)
    with pytest.raises(pt.ShapeError, match="no identity"):
        pt.maximum.reduce(pt.asarray(np.ones((0,))))
    with pytest.raises(pt.DTypeError, match="comparison"):
        pt.less.reduce(x)
    with pytest.raises(pt.ShapeError, match="out="):
        pt.add.reduce(x, out=np.zeros(3))
    with pytest.raises(pt.PootIndexError, match="out-of-bounds in add.reduceat"):
        pt.add.reduceat(x, [0, 2])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_or",
                                  "power", "floor_divide"])
def test_at_is_unbuffered_with_repeated_indices(name):
    dtype = np.int64 if name in ("bitwise_or", "floor_divide") else np.float64
    base = _data((4, 5), dtype, 4) + (3 if name == "power" else 0)
    idx = (np.array([0, 2, 0, 0, 3, 2]), np.array([1, 4, 1, 1, 0, 4]))
    vals = _data((6,), dtype, 5)
    if name == "floor_divide":
        vals = np.where(vals == 0, 3, vals)
    if name == "power":
        vals = np.abs(vals) % 2
    expected = base.copy()
    getattr(np, name).at(expected, idx, vals)
    x = pt.asarray(base)
    assert getattr(pt, name).at(x, idx, vals) is None
    assert_close(x.numpy(), expected, x.dtype, ops=8)
    y = pt.asarray(base)
    getattr(np, name).at(y, idx, vals)                                # through __array_ufunc__
    assert_close(y.numpy(), expected, y.dtype, ops=8)


def test_add_at_with_poot_indices_and_slices():
    base = np.zeros((3, 4), np.float32)
    idx = np.array([2, 0, 2, 2])
    expected = base.copy()
    np.add.at(expected, idx, 1.5)
    x = pt.asarray(base)
    pt.add.at(x, pt.asarray(idx), 1.5)
    assert_close(x.numpy(), expected, np.float32, ops=4)
    expected2 = base.copy()
    np.maximum.at(expected2, (slice(None), [1, 1, 3]), np.array([1.0, 2.0, -1.0], np.float32))
    y = pt.asarray(base)
    pt.maximum.at(y, (slice(None), [1, 1, 3]), np.array([1.0, 2.0, -1.0], np.float32))
    assert_close(y.numpy(), expected2, np.float32)


def test_methods_inside_jit():
    a = _data((3, 5), np.float32, 6)
    idx = np.array([0, 0, 2])

    @pt.jit
    def f(x):
        m = pt.maximum.reduce(x, axis=1)
        c = pt.add.accumulate(x, axis=1)
        o = pt.multiply.outer(m, m)
        s = pt.subtract.reduce(x, axis=0)
        y = x * 1.0
        pt.add.at(y, idx, 1.0)
        return m, c, o, s, y

    m, c, o, s, y = f(pt.asarray(a))
    y_expected = a.copy()
    np.add.at(y_expected, idx, 1.0)
    em = np.maximum.reduce(a, axis=1)
    for got, expected in ((m, em), (c, np.add.accumulate(a, axis=1)), (o, np.multiply.outer(em, em)),
                          (s, np.subtract.reduce(a, axis=0)), (y, y_expected)):
        assert_close(got.numpy(), expected, np.float32, ops=8)


def test_ufunc_attributes_and_identity():
    for name in ("add", "multiply", "maximum", "logical_and", "bitwise_and", "subtract", "hypot"):
        u, nu = getattr(pt, name), getattr(np, name)
        assert isinstance(u, pt.ufunc) and u.__name__ == nu.__name__
        assert (u.nin, u.nout, u.nargs) == (nu.nin, nu.nout, nu.nargs)
        assert u.identity == nu.identity
    assert pt.mod is pt.remainder and pt.true_divide is pt.divide and pt.atan2 is pt.arctan2
    assert pickle.loads(pickle.dumps(pt.add)) is pt.add and copy.deepcopy(pt.add) is pt.add
    x = pt.asarray(np.arange(4.0))
    np.testing.assert_array_equal(pt.add(x, 1.0).numpy(), np.arange(4.0) + 1.0)
    np.testing.assert_array_equal((x + x).numpy(), np.arange(4.0) * 2)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "multiply", "subtract", "bitwise_or"])
def test_at_with_heavily_repeated_positions(device, name):
    """Many repeats of few positions: reorderable ufuncs combine each position's values by a tree
    (log-depth, not one step a repeat); the others keep NumPy's order. Indices may be poot arrays."""
    rng = np.random.default_rng(7)
    n = 3000 if name != "subtract" else 60
    integer = name == "bitwise_or"
    a = rng.integers(0, 99, 4) if integer else rng.standard_normal(4)
    vals = rng.integers(0, 999, n) if integer else rng.standard_normal(n) * 0.01 + 1.0
    idx = rng.integers(0, 3, n)
    expected = a.copy()
    getattr(np, name).at(expected, idx, vals)
    x = pt.asarray(a)
    getattr(pt, name).at(x, pt.asarray(idx), vals)
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-9 if name == "multiply" else 0)


@pytest.mark.parametrize("name", ["gcd", "lcm", "logaddexp2", "fmod", "heaviside"])
def test_numpy_ufuncs_built_from_several_steps_have_the_methods(name):
    """np.lcm.reduce(periods) and np.gcd.accumulate(x) are everyday uses: gcd, lcm, logaddexp2, fmod
    and heaviside are Ufuncs with NumPy's identity, not plain functions (an AttributeError before)."""
    f, g = getattr(pt, name), getattr(np, name)
    assert isinstance(f, pt.ufunc) and f.identity == g.identity and f.__name__ == name
    ints = name in ("gcd", "lcm")
    x = np.array([[12, 18, 8], [4, 6, 10]]) if ints else np.array([[7.0, 4.0, 3.0], [-2.5, 0.0, 1.5]])
    X = pt.asarray(x)
    for axis in (0, 1):
        np.testing.assert_allclose(f.reduce(X, axis=axis).numpy(), g.reduce(x, axis=axis), rtol=1e-15)
        np.testing.assert_allclose(f.accumulate(X, axis=axis).numpy(), g.accumulate(x, axis=axis), rtol=1e-15)
    np.testing.assert_allclose(f.outer(X[0], X[1]).numpy(), g.outer(x[0], x[1]), rtol=1e-15)
    np.testing.assert_allclose(pt.jit(lambda v: f.reduce(v, axis=1))(X).numpy(), g.reduce(x, axis=1), rtol=1e-15)
    assert pickle.loads(pickle.dumps(f)) is f and copy.deepcopy(f) is f
