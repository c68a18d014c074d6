"""Comparing an integer array with a Python int outside its dtype's range, against NumPy: every element
lies on one side of the int, so the answer is the same bool everywhere. Converting the int instead
rounds it onto the range's edge (float64(2**63) equals int64's largest value), which made
`x < 2**63` False for x = 2**63 - 1."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import poot as pt

OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
CASES = [(np.int64, 2**63 - 1, 2**63), (np.int64, -2**63, -2**63 - 1), (np.uint64, 2**64 - 1, 2**64),
         (np.int64, 2**62, 2**63 + 5), (np.uint64, 0, -1), (np.int8, 127, 128), (np.uint8, 0, -1),
         (np.int32, 5, 2**40), (np.int64, 5, 2**70)]


@pytest.mark.parametrize("dtype, edge, n", CASES)
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_array_against_an_int_just_outside_its_range(device, dtype, edge, n, op):
    a = np.array([[edge, 1], [0, edge]], dtype)
    x = pt.asarray(a)
    for got, want in ((op(x, n), op(a, n)), (op(n, x), op(n, a)),
                      (pt.jit(lambda v: op(v, n))(x), op(a, n)), (pt.jit(lambda v: op(n, v))(x), op(n, a))):
        assert got.dtype == pt.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype, edge, n", CASES[:4])
def test_a_0d_element_and_the_named_functions_agree(device, dtype, edge, n):
    a = np.array([edge, 3], dtype)
    x = pt.asarray(a)
    x.numpy()
    assert bool(x[0] < n) == bool(a[0] < n)
    assert bool(x[0] == n) is False and bool(x[0] != n) is True
    for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
        np.testing.assert_array_equal(getattr(pt, name)(x, n).numpy(), getattr(np, name)(a, n))
        np.testing.assert_array_equal(getattr(np, name)(x, n).numpy(), getattr(np, name)(a, n))


# --- signed against uint64 arrays: exact, not through float64 --------------------------------------
@pytest.mark.parametrize("signed", [np.int64, np.int32, np.int8])
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_signed_against_uint64_compares_exactly(device, signed, op):
    info = np.iinfo(signed)
    a = np.array([info.max, -1, 5, info.min, 0, 2**53 + 1 if signed is np.int64 else 7], signed)
    b = np.array([2**63, 2**64 - 1, 5, 0, 0, 2**53], np.uint64)
    pairs = ((a, b), (b, a), (a[:, None], b[None]), (a[:1], b))
    for x, y in pairs:
        want = op(x, y)
        got = op(pt.asarray(x), pt.asarray(y))
        assert got.dtype == pt.bool_
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(pt.jit(op)(pt.asarray(x), pt.asarray(y)).numpy(), want)


def test_isin_of_int64_against_a_value_past_int64(device):
    a = np.array([2**63 - 1, 5, 2**53 + 1], np.int64)
    for values in ([2**63], np.array([2**63, 2**53], np.uint64)):
        np.testing.assert_array_equal(pt.isin(pt.asarray(a), values).numpy(), np.isin(a, values))


# --- a Python int argument of @pt.jit compares as eager code does -----------------------------------
@pytest.mark.parametrize("dtype, values", [(np.int8, [1, 100, -5, 127, -128]), (np.uint8, [0, 5, 255]),
                                           (np.uint64, [0, 5, 2**64 - 1]), (np.uint32, [0, 2**32 - 1])])
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_jitted_comparison_with_a_python_int_argument_outside_the_dtype(device, dtype, values, op):
    a = np.array(values, dtype)
    x = pt.asarray(a)
    left = pt.jit(lambda v, n: op(v, n))
    right = pt.jit(lambda v, n: op(n, v))
    for n in (1000, -1, 5, 256, -129, 2**40, 2**63 - 1, -2**63):
        np.testing.assert_array_equal(left(x, n).numpy(), op(a, n))
        np.testing.assert_array_equal(right(x, n).numpy(), op(n, a))
    assert left.trace_count == 1 and right.trace_count == 1


def test_jitted_arithmetic_with_an_int_argument_outside_the_dtype_still_refuses(device):
    x = pt.asarray(np.array([1, 100], np.int8))
    with pytest.raises(pt.DTypeError, match="out of bounds for int8"):
        pt.jit(lambda v, n: v + n)(x, 1000)
