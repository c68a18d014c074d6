"""`ufunc.reduceat`, the unary ufuncs' `at` (pt.negative.at, pt.sqrt.at...), `ufunc.at` with indices
traced in @pt.jit, the long-axis accumulate and the loop attributes (`types`, `ntypes`), against
NumPy over int, float, float16 and bool, eager and jitted."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close

DTYPES = (np.int8, np.int32, np.uint8, np.float16, np.float32, np.float64, np.bool_)
REDUCEAT = ("add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
            "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "hypot", "logaddexp",
            "subtract", "divide", "floor_divide", "remainder", "power", "arctan2")
# slices NumPy's rules make of these for an axis of 11: increasing, a last slice of one element,
# indices[i] >= indices[i+1] (one element), repeats, overlapping slices, one index
INDEX_SETS = ([0, 3, 7], [10], [0], [2, 2, 5], [6, 1, 9, 0], [4, 10, 3, 3, 8], [0, 10], [1, 5, 2, 9])


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d.kind == "f":
        return (rng.random(shape) * 1.5 + 0.25).astype(dtype)
    if d.kind == "b":
        return rng.random(shape) < 0.6
    lo = 0 if d.kind == "u" else -3
    return rng.integers(lo, 4, size=shape).astype(dtype)


def _numpy(fn):
    """NumPy's answer, or the exception type it raises."""
    try:
        with np.errstate(all="ignore"):
            return fn()
    except (TypeError, ValueError, ZeroDivisionError) as e:
        return e


def _ops(name, n):
    return 8 * n if name in ("add", "multiply", "hypot", "logaddexp", "divide", "power", "arctan2") else 4


def _reduceat(name, a, idx, axis=0):
    """NumPy's reduceat; for power and arctan2 the left fold NumPy documents, from its accumulate
    (NumPy 2.4's float power.reduce of a contiguous run combines only its first and last elements)."""
    ufunc = getattr(np, name)
    if name not in ("power", "arctan2"):
        return ufunc.reduceat(a, idx, axis=axis)
    n = a.shape[axis]
    parts = []
    for i, start in enumerate(idx):
        stop = n if i == len(idx) - 1 else idx[i + 1] if idx[i + 1] > start else start + 1
        seg = np.take(a, np.arange(start, stop), axis=axis)
        parts.append(np.take(ufunc.accumulate(seg, axis=axis), [-1], axis=axis))
    return np.concatenate(parts, axis=axis)


def _check(got, expected, name, note=""):
    got = got.numpy() if isinstance(got, pt.Array) else got
    assert got.dtype == expected.dtype, (name, note, got.dtype, expected.dtype)
    if name in ("floor_divide", "remainder") and got.dtype.kind == "f":
        # one rounding apart can move a floor by one near an integer quotient
        np.testing.assert_allclose(got, expected, rtol=0.05, atol=1.0, err_msg=f"{name} {note}")
        return
    assert_close(got, expected, got.dtype, ops=_ops(name, 11), err_msg=f"{name} {note}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", REDUCEAT)
def test_reduceat_matches_numpy_eager(name, dtype):
    a = _data((11,), dtype, 1)
    if name == "power" and a.dtype.kind == "i":
        a = np.abs(a)
    pufunc = getattr(pt, name)
    for idx in INDEX_SETS:
        expected = _numpy(lambda: _reduceat(name, a, idx))
        if isinstance(expected, Exception):
            with pytest.raises((pt.PootError, TypeError)):
                pufunc.reduceat(pt.asarray(a), idx).numpy()
            return
        _check(pufunc.reduceat(pt.asarray(a), idx), expected, name, f"{np.dtype(dtype)} {idx}")
        _check(pufunc.reduceat(pt.asarray(a), pt.asarray(np.array(idx))), expected, name, "poot indices")


@pytest.mark.parametrize("name", ["add", "maximum", "multiply", "subtract", "logical_or", "bitwise_xor",
                                  "power", "logaddexp"])
@pytest.mark.parametrize("dtype", (np.float32, np.int32, np.bool_, np.float16), ids=lambda d: np.dtype(d).name)
def test_reduceat_in_jit_with_traced_indices(name, dtype):
    a = _data((3, 11, 2), dtype, 2)
    if name == "power" and a.dtype.kind == "i":
        a = np.abs(a)
    pufunc = getattr(pt, name)

    @pt.jit
    def f(x, i):
        return pufunc.reduceat(x, i, axis=1)

    for idx in INDEX_SETS:
        expected = _numpy(lambda: _reduceat(name, a, idx, axis=1))
        if isinstance(expected, Exception):
            with pytest.raises((pt.PootError, TypeError)):
                f(pt.asarray(a), pt.asarray(np.array(idx))).numpy()
            return
        _check(f(pt.asarray(a), pt.asarray(np.array(idx))), expected, name, f"jit {idx}")

    @pt.jit
    def g(x):                       # host indices inside a traced function
        return pufunc.reduceat(x, [6, 1, 9, 0], axis=-2)

    _check(g(pt.asarray(a)), _reduceat(name, a, [6, 1, 9, 0], axis=1), name, "jit host indices")


def test_reduceat_long_slices_use_the_loop():
    """Non-reorderable f over slices longer than the unrolled steps (a fori_loop, traced bound in jit)."""
    a = _data((4, 40), np.float64, 3)
    idx = [0, 30, 5, 39]
    for name in ("subtract", "divide"):
        expected = getattr(np, name).reduceat(a, idx, axis=1)
        _check(getattr(pt, name).reduceat(pt.asarray(a), idx, axis=1), expected, name, "eager")
        f = pt.jit(lambda x, i, name=name: getattr(pt, name).reduceat(x, i, axis=1))
        _check(f(pt.asarray(a), pt.asarray(np.array(idx))), expected, name, "jit")


def test_reduceat_axes_and_dtype():
    a = _data((5, 6, 7), np.int8, 4)
    for axis in (0, 1, 2, -1, -3):
        n = a.shape[axis]
        idx = [0, n - 1, 1]
        for name in ("add", "maximum", "bitwise_or"):
            _check(getattr(pt, name).reduceat(pt.asarray(a), idx, axis=axis),
                   getattr(np, name).reduceat(a, idx, axis=axis), name, f"axis {axis}")
    got = pt.add.reduceat(pt.asarray(a), [0, 3], axis=1, dtype=np.float32)
    _check(got, np.add.reduceat(a, [0, 3], axis=1, dtype=np.float32), "add", "dtype=float32")
    big = np.full(600, 100, np.int8)     # add of int8 is int64 in NumPy: no wrap-around
    _check(pt.add.reduceat(pt.asarray(big), [0, 599]), np.add.reduceat(big, [0, 599]), "add", "int8")
    half = np.ones(3000, np.float16)     # float16 sums beyond 2048 stay exact (float32 accumulation)
    _check(pt.add.reduceat(pt.asarray(half), [0, 1000]), np.add.reduceat(half, [0, 1000]), "add", "f16")


def test_reduceat_empty_and_errors():
    a = np.arange(8.0)
    x = pt.asarray(a)
    got = pt.add.reduceat(x, np.array([], np.int64))
    assert got.shape == (0,) and got.dtype == pt.float64
    got2 = pt.maximum.reduceat(pt.asarray(np.ones((2, 3), np.int32)), [], axis=1)
    assert got2.shape == (2, 0) and got2.dtype == pt.int32
    for bad in ([8], [-1], [0, 9]):
        with pytest.raises(pt.PootIndexError, match="out-of-bounds in add.reduceat"):
            pt.add.reduceat(x, bad)
        with pytest.raises(IndexError):
            np.add.reduceat(a, bad)
    with pytest.raises(pt.PootIndexError):
        pt.add.reduceat(pt.asarray(np.zeros(0)), [0])
    f = pt.jit(lambda v, i: pt.maximum.reduceat(v, i))
    for bad in ([0, 8], [-1]):
        with pytest.raises(pt.PootIndexError):
            f(x, pt.asarray(np.array(bad))).numpy()
    with pytest.raises(pt.DTypeError, match="integers"):
        pt.add.reduceat(x, [0.5])
    with pytest.raises(pt.ShapeError, match="1-D"):
        pt.add.reduceat(x, [[0, 1]])
    with pytest.raises(pt.ShapeError, match="0-d"):
        pt.add.reduceat(pt.asarray(1.0), [0])
    with pytest.raises(pt.DTypeError, match="comparison"):
        pt.less.reduceat(x, [0])
    with pytest.raises(pt.ShapeError, match="out="):
        pt.add.reduceat(x, [0], out=np.zeros(1))
    with pytest.raises(ValueError, match="only supported for binary"):
        pt.negative.reduceat(x, [0])


def test_numpy_reduceat_on_poot_arrays_stays_lazy():
    a = _data((4, 9), np.float32, 5)
    got = np.maximum.reduceat(pt.asarray(a), [0, 4, 2], axis=1)
    assert isinstance(got, pt.Array)
    _check(got, np.maximum.reduceat(a, [0, 4, 2], axis=1), "maximum")


UNARY = ("negative", "positive", "absolute", "sign", "sqrt", "square", "exp", "log1p", "floor", "ceil",
         "rint", "trunc", "logical_not", "invert", "isnan", "reciprocal", "sin", "tanh")
# repeats (a position named 1, 2, 3 times), negative positions and a tuple of axes
UNARY_INDICES = ([0, 0, 1, 3, 3, 3, -1], (np.array([1, 1, 0, 2]), np.array([0, 0, 2, -1])), [], 2,
                 slice(1, 3))


def _unary_case(name, dtype, idx, seed):
    base = _data((4, 3), dtype, seed)
    if name in ("sqrt", "log1p") and base.dtype.kind in "iu":
        base = np.abs(base) + 1
    if name == "reciprocal" and base.dtype.kind in "iu":
        base = np.where(base % 2 == 0, 1, -1 if base.dtype.kind == "i" else 1).astype(base.dtype)
    if name in ("exp", "square") and base.dtype.kind == "f":
        base = base * 0.5               # three exps in float16 stay finite
    expected = base.copy()
    outcome = _numpy(lambda: getattr(np, name).at(expected, idx))
    return base, expected, outcome


def _unary_ops(name):
    return 64 if name in ("exp", "square", "reciprocal", "log1p", "sin", "tanh", "sqrt") else 1


# exp applied four times to an integer leaves its range, and a float cast to an integer out of range
# is undefined (NumPy wraps, poot saturates): integers meet exp in test_unary_at_in_jit, once each
@pytest.mark.parametrize("name,dtype", [(n, d) for n in UNARY for d in DTYPES
                                        if not (n == "exp" and np.dtype(d).kind in "iu")],
                         ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_unary_at_matches_numpy(name, dtype):
    for k, idx in enumerate(UNARY_INDICES):
        base, expected, outcome = _unary_case(name, dtype, idx, k)
        x = pt.asarray(base)
        if isinstance(outcome, Exception):
            with pytest.raises((pt.PootError, TypeError)):
                getattr(pt, name).at(x, idx)
                x.numpy()
            continue
        assert getattr(pt, name).at(x, idx) is None
        got = x.numpy()
        assert got.dtype == expected.dtype
        if expected.dtype.kind in "biu" and name not in ("negative", "positive", "absolute", "sign",
                                                         "square", "logical_not", "invert", "floor",
                                                         "ceil", "rint", "trunc", "isnan"):
            # a float result cast back to an integer: one rounding may move it across an integer
            np.testing.assert_allclose(got, expected, atol=1, err_msg=f"{name} {idx}")
        else:
            assert_close(got, expected, expected.dtype, ops=_unary_ops(name), err_msg=f"{name} {idx}")


@pytest.mark.parametrize("name", ["negative", "absolute", "sqrt", "logical_not", "invert", "floor", "exp"])
@pytest.mark.parametrize("dtype", (np.float32, np.int32, np.bool_, np.float16), ids=lambda d: np.dtype(d).name)
def test_unary_at_in_jit(name, dtype):
    rows, cols = np.array([0, 0, 2, 3, 3, 3, -1]), np.array([1, 1, 0, 2, 2, 2, 0])
    base, expected, outcome = _unary_case(name, dtype, (rows, cols), 6)

    @pt.jit
    def traced(x, i, j):
        getattr(pt, name).at(x, (i, j))
        return x

    @pt.jit
    def host(x):
        getattr(pt, name).at(x, (rows, cols))
        return x

    for f, args in ((traced, (pt.asarray(rows), pt.asarray(cols))), (host, ())):
        if isinstance(outcome, Exception):
            with pytest.raises((pt.PootError, TypeError)):
                f(pt.asarray(base), *args).numpy()
            continue
        got = f(pt.asarray(base), *args).numpy()
        assert got.dtype == expected.dtype
        if expected.dtype.kind in "iu" and name in ("sqrt", "exp"):
            np.testing.assert_allclose(got, expected, atol=1, err_msg=name)
        else:
            assert_close(got, expected, expected.dtype, ops=_unary_ops(name), err_msg=name)


def test_unary_at_errors_and_numpy_dispatch():
    x = pt.asarray(np.arange(4.0))
    with pytest.raises(pt.PootIndexError):
        pt.negative.at(x, [4])
    with pytest.raises(IndexError):
        pt.sqrt.at(x, [-5])
    with pytest.raises(ValueError, match="second operand"):
        pt.negative.at(x, [0], 1.0)
    with pytest.raises(pt.DTypeError, match="poot array"):
        pt.negative.at(np.arange(3.0), [0])
    with pytest.raises(pt.PootError):
        pt.negative.at(pt.asarray(np.array([True, False])), [0])    # NumPy refuses bool negative too
    f = pt.jit(lambda v, i: (pt.negative.at(v, i), v)[1])
    with pytest.raises(pt.PootIndexError):
        f(x, pt.asarray(np.array([0, 7]))).numpy()
    y = pt.asarray(np.arange(4.0))
    np.negative.at(y, [0, 1, 1, 3])                   # NumPy's ufunc reaches poot's, in place
    np.testing.assert_array_equal(y.numpy(), [-0.0, 1.0, 2.0, -3.0])
    z = pt.asarray(np.array([4.0, 9.0]))
    np.sqrt.at(z, [1, 1])
    np.testing.assert_allclose(z.numpy(), [4.0, np.sqrt(3.0)])


@pytest.mark.parametrize("name", ["negative", "absolute", "sqrt", "logical_not", "invert", "sign", "exp"])
def test_unary_ufunc_objects(name):
    u, nu = getattr(pt, name), getattr(np, name)
    assert isinstance(u, pt.ufunc) and u.__name__ == nu.__name__
    assert (u.nin, u.nout, u.nargs, u.identity, u.signature) == (nu.nin, nu.nout, nu.nargs, nu.identity,
                                                                 nu.signature)
    assert pickle.loads(pickle.dumps(u)) is u
    x = pt.asarray(np.array([1.0, 4.0]))
    for method, args in (("reduce", (x,)), ("accumulate", (x,)), ("outer", (x, x)), ("reduceat", (x, [0]))):
        with pytest.raises(ValueError, match="only supported for binary"):
            getattr(u, method)(*args)
    assert set(u.types) <= set(nu.types) and u.ntypes == len(u.types) > 0


def test_operators_and_aliases_of_unary_ufuncs():
    a = np.array([-2, 3], np.int32)
    x = pt.asarray(a)
    np.testing.assert_array_equal((-x).numpy(), -a)
    np.testing.assert_array_equal((+x).numpy(), +a)
    np.testing.assert_array_equal(abs(x).numpy(), abs(a))
    np.testing.assert_array_equal((~x).numpy(), ~a)
    assert pt.abs.__name__ == "absolute" and pt.bitwise_not.__name__ == "invert"
    assert pt.asin.__name__ == "arcsin"

    class Layer:                        # a ufunc held by a class is not a method (NumPy's too)
        act = pt.tanh

    np.testing.assert_allclose(Layer().act(pt.asarray(np.array([0.5]))).numpy(), np.tanh([0.5]))


@pytest.mark.parametrize("name,float_loop", [("add", "ff->f"), ("maximum", "ff->f"), ("logical_and", "ff->?"),
                                             ("bitwise_xor", None), ("hypot", "ff->f"), ("subtract", "ff->f"),
                                             ("less", "ff->?")])
def test_binary_loop_types_are_numpys(name, float_loop):
    u, nu = getattr(pt, name), getattr(np, name)
    assert u.types and set(u.types) <= set(nu.types)
    assert u.ntypes == len(u.types)
    assert any(t.startswith("ff->") for t in u.types) == (float_loop is not None)
    assert float_loop is None or float_loop in u.types


AT_NAMES = ("maximum", "minimum", "multiply", "subtract", "divide", "power", "bitwise_or", "floor_divide",
            "fmax", "logaddexp", "logical_and", "remainder")


@pytest.mark.parametrize("name", AT_NAMES)
def test_binary_at_with_traced_indices(name):
    """Indices traced in @pt.jit: grouped on the device (argsort); every occurrence counts, in order."""
    rng = np.random.default_rng(8)
    integer = name in ("bitwise_or", "floor_divide", "remainder")
    boolean = name == "logical_and"
    base = rng.integers(1, 50, (4, 5)) if integer else rng.random((4, 5)) > 0.3 if boolean \
        else rng.random((4, 5)) + 0.5
    rows, cols = np.array([0, 2, 0, 0, 3, 2, -1, 0]), np.array([1, 4, 1, 1, 0, 4, 2, 1])
    vals = rng.integers(1, 9, 8) if integer else rng.random(8) > 0.2 if boolean else rng.random(8) + 0.5
    expected = base.copy()
    getattr(np, name).at(expected, (rows, cols), vals)

    @pt.jit
    def f(x, i, j, v):
        getattr(pt, name).at(x, (i, j), v)
        return x

    got = f(pt.asarray(base), pt.asarray(rows), pt.asarray(cols), pt.asarray(vals)).numpy()
    assert got.dtype == expected.dtype
    assert_close(got, expected, got.dtype, ops=16, err_msg=name)


def test_binary_at_traced_out_of_range_and_empty():
    f = pt.jit(lambda x, i: (pt.maximum.at(x, i, 5.0), x)[1])
    with pytest.raises(pt.PootIndexError):
        f(pt.asarray(np.zeros(4)), pt.asarray(np.array([1, 4]))).numpy()
    got = f(pt.asarray(np.zeros(4)), pt.asarray(np.zeros(0, np.int64))).numpy()
    np.testing.assert_array_equal(got, np.zeros(4))


@pytest.mark.parametrize("n", [16385, 20001, 40000])
@pytest.mark.parametrize("name,dtype", [("maximum", np.float32), ("minimum", np.int16), ("fmax", np.float64),
                                        ("logical_or", np.bool_), ("bitwise_xor", np.uint8),
                                        ("logaddexp", np.float64)])
def test_long_accumulate_matches_numpy(name, dtype, n):
    """Long axes take the work-efficient pairwise scan: odd lengths, NaN, 2-D along either axis."""
    a = _data((n,), dtype, n)
    if np.dtype(dtype).kind == "f":
        a = np.where(np.arange(n) % 977 == 5, np.nan, a).astype(dtype) if name == "fmax" else a
        a[n // 3] = np.nan if name == "maximum" else a[n // 3]
    u, nu = getattr(pt, name), getattr(np, name)
    expected = nu.accumulate(a)
    _check(u.accumulate(pt.asarray(a)), expected, name, "1-D")
    if name in ("maximum", "logical_or"):
        m = a[: (n // 2) * 2].reshape(2, -1)
        _check(u.accumulate(pt.asarray(m), axis=1), nu.accumulate(m, axis=1), name, "axis 1")
        f = pt.jit(lambda x: u.accumulate(x, axis=0))
        _check(f(pt.asarray(m.T.copy())), nu.accumulate(m.T, axis=0), name, "jit axis 0")
