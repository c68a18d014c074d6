"""pt.round / pt.around / x.round with `decimals`, positive and negative, on float and integer dtypes,
eager and inside @pt.jit, against NumPy 2 (which scales, rints and unscales; integers with negative
decimals compute in float64 and keep their dtype)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import assert_close

FLOAT_VALUES = np.array([1.25, 2.35, -3.45, 0.5, -0.5, 1234.5678, -987.6543, 2.5, 15.0, 0.0],
                        np.float64)
INT_VALUES = np.array([15, 25, -35, 44, -46, 0, 99, -100, 5, 125], np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 2, 3])
def test_float_decimals_eager_and_jit(dtype, decimals):
    a = FLOAT_VALUES.astype(dtype)
    expected = np.round(a, decimals)

    @pt.jit
    def rounded(x):
        return pt.round(x, decimals)

    for got in (pt.round(pt.asarray(a), decimals), pt.around(pt.asarray(a), decimals),
                pt.asarray(a).round(decimals), rounded(pt.asarray(a))):
        assert got.dtype == expected.dtype
        # one rounding of the scaled value may land on the other side of a tie: one step of 10**-d
        assert_close(got.numpy(), expected, dtype, ops=2)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 2])
def test_integer_decimals_eager_and_jit(dtype, decimals):
    a = INT_VALUES.astype(dtype) if np.dtype(dtype).kind == "i" else np.abs(INT_VALUES).astype(dtype)
    expected = np.round(a, decimals)

    @pt.jit
    def rounded(x):
        return x.round(decimals) + 0

    for got in (pt.round(pt.asarray(a), decimals), rounded(pt.asarray(a))):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_integer_rounded_past_its_range_wraps_as_numpy(dtype):
    # NumPy rounds in float64 and casts back through its integer conversion: 127 at -1 is 130,
    # stored in int8 as -126 (a cast of the float alone would saturate at 127)
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max - 1, 5], dtype)
    with np.errstate(over="ignore"):     # NumPy warns of the wrap it does
        expected = np.round(a, -1)
    for got in (pt.round(pt.asarray(a), -1), pt.jit(lambda x: pt.round(x, -1))(pt.asarray(a))):
        np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, allow_nan=False, width=32), min_size=1, max_size=8),
       st.integers(-3, 4))
def test_random_floats_match_numpy(values, decimals):
    a = np.array(values, np.float64)
    got = pt.round(pt.asarray(a), decimals).numpy()
    expected = np.round(a, decimals)
    # the scale-rint-unscale algorithm is NumPy's; both may differ only by float rounding
    np.testing.assert_allclose(got, expected, rtol=4e-16, atol=0)


def test_bool_decimals():
    b = np.array([True, False])
    assert_close(pt.round(pt.asarray(b)).numpy(), np.round(b), np.float16)
    with pytest.raises(pt.DTypeError, match="bool"):
        pt.round(pt.asarray(b), 1)


def test_decimals_must_be_an_integer():
    with pytest.raises(pt.DTypeError, match="decimals must be an integer"):
        pt.round(pt.asarray(np.ones(3)), 1.5)
