"""In-place operators update the array object itself (as x[i] = v does), with NumPy 2's same-kind
casting back to the left operand's dtype; eagerly and inside @pt.jit."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

OPS = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul), ("/=", operator.itruediv),
       ("//=", operator.ifloordiv), ("%=", operator.imod), ("**=", operator.ipow),
       ("&=", operator.iand), ("|=", operator.ior), ("^=", operator.ixor),
       ("<<=", operator.ilshift), (">>=", operator.irshift)]


def operands(sym, dtype):
    r = np.random.default_rng(0)
    if dtype.kind == "f":
        return r.uniform(0.5, 2.0, (3, 4)).astype(dtype), r.uniform(0.5, 2.0, (4,)).astype(dtype)
    return r.integers(1, 6, (3, 4)).astype(dtype), r.integers(1, 3, (4,)).astype(dtype)


def applicable(sym, dtype):
    if dtype.kind == "f" and sym in ("&=", "|=", "^=", "<<=", ">>=", "//=", "%="):
        return sym in ("//=", "%=")
    if dtype.kind in "iu" and sym == "/=":
        return False
    return True


@pytest.mark.parametrize("sym,op", OPS, ids=[s for s, _ in OPS])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_inplace_updates_the_object(sym, op, dtype, device):
    dtype = np.dtype(dtype)
    if not applicable(sym, dtype):
        pytest.skip("NumPy has no such operation for this dtype")
    a, b = operands(sym, dtype)
    x = pt.asarray(a)
    alias, other = x, x.copy()

    def f(v):
        v2 = op(v, pt.asarray(b))
        return v2

    r = f(x)
    want = op(a.copy(), b)
    assert r is x
    assert_close(alias.numpy(), want, dtype, ops=4)     # the caller's array changed
    assert_close(other.numpy(), a, dtype)               # a copy made before keeps its value
    assert alias.dtype == pt.dtypes.as_dtype(dtype)


def test_function_argument_changes(device):
    def f(x):
        x += 1

    a = pt.asarray(np.arange(4, dtype=np.float32))
    f(a)
    np.testing.assert_array_equal(a.numpy(), np.arange(4) + 1)


def test_matmul_inplace(device):
    m = np.arange(9.0).reshape(3, 3)
    x = pt.asarray(m)
    x @= np.eye(3) * 2
    np.testing.assert_array_equal(x.numpy(), m * 2)


def test_same_kind_casting(device):
    x = pt.asarray(np.arange(3, dtype=np.int64))
    with pytest.raises(pt.DTypeError):
        x += 1.5                                       # NumPy 2: UFuncTypeError (same_kind)
    with pytest.raises(pt.DTypeError):
        x /= 2
    b = pt.asarray(np.array([True, False]))
    with pytest.raises(pt.DTypeError):
        b += 1
    y = pt.asarray(np.arange(3, dtype=np.float32))
    y += np.arange(3, dtype=np.float64)                # float64 -> float32 is same kind
    assert y.dtype == pt.float32
    i = pt.asarray(np.arange(3, dtype=np.int8))
    i += np.arange(3, dtype=np.int64)
    assert i.dtype == pt.int8
    with pytest.raises(pt.ShapeError):
        z = pt.zeros((3,))
        z += pt.zeros((2, 3))                            # cannot change the shape


def test_slices_are_copies(device):
    x = pt.asarray(np.arange(6.0))
    s = x[1:4]
    s += 10
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0))   # documented: no views
    np.testing.assert_array_equal(s.numpy(), np.arange(1.0, 4.0) + 10)


def test_inplace_inside_jit(device):
    @pt.jit
    def f(x, y):
        alias = x
        x += y
        x *= 2
        return alias, x

    a, b = np.arange(4.0, dtype=np.float32), np.ones(4, np.float32)
    for _ in range(2):
        r1, r2 = f(pt.asarray(a), pt.asarray(b))
        np.testing.assert_array_equal(r1.numpy(), (a + b) * 2)
        np.testing.assert_array_equal(r2.numpy(), (a + b) * 2)
    assert f.trace_count == 1
