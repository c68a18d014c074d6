"""np.pad's value modes ('linear_ramp', 'mean', 'median', 'maximum', 'minimum', 'empty') against
NumPy: random shapes, widths, stat_length and end_values, eager and inside @pt.jit."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import assert_close

STAT_MODES = ("mean", "median", "maximum", "minimum")
DTYPES = (np.float32, np.float64, np.int32, np.int8, np.uint8)


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 4).astype(dtype)
    lo = 0 if np.dtype(dtype).kind == "u" else -20
    return rng.integers(lo, 21, size=shape).astype(dtype)


def _widths(draw, ndim):
    return tuple((draw(st.integers(0, 4)), draw(st.integers(0, 4))) for _ in range(ndim))


@st.composite
def _stat_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    mode = draw(st.sampled_from(STAT_MODES))
    length = draw(st.one_of(st.none(), st.integers(1, 6),
                            st.tuples(st.integers(1, 6), st.integers(1, 6))))
    return shape, _widths(draw, ndim), mode, length, draw(st.sampled_from(DTYPES)), draw(st.integers(0, 9))


@st.composite
def _ramp_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    ends = draw(st.one_of(st.integers(-30, 30), st.tuples(st.integers(-30, 30), st.integers(-30, 30)),
                          st.floats(-30, 30, allow_nan=False)))
    return shape, _widths(draw, ndim), ends, draw(st.sampled_from(DTYPES)), draw(st.integers(0, 9))


@settings(max_examples=25, deadline=None)
@given(_stat_case())
def test_stat_modes_match_numpy(case):
    shape, widths, mode, length, dtype, seed = case
    a = _data(shape, dtype, seed)
    if np.dtype(dtype).kind == "u" and isinstance(length, int):
        length = min(length, 3)
    expected = np.pad(a, widths, mode=mode, stat_length=length)
    got = pt.pad(pt.asarray(a), widths, mode=mode, stat_length=length).numpy()
    assert got.dtype == expected.dtype
    assert_close(got, expected, got.dtype, ops=8, err_msg=f"{mode} {widths} {length}")


@settings(max_examples=25, deadline=None)
@given(_ramp_case())
def test_linear_ramp_matches_numpy(case):
    shape, widths, ends, dtype, seed = case
    a = _data(shape, dtype, seed)
    if np.dtype(dtype).kind == "u":
        ends = np.abs(np.asarray(ends)).round().astype(np.int64)
    expected = np.pad(a, widths, mode="linear_ramp", end_values=ends)
    got = pt.pad(pt.asarray(a), widths, mode="linear_ramp", end_values=ends).numpy()
    assert got.dtype == expected.dtype
    assert_close(got, expected, got.dtype, ops=4, err_msg=f"{widths} {ends}")


def test_per_axis_end_values_and_stat_lengths():
    a = _data((4, 5), np.float64, 3)
    ends = ((1.5, -2.0), (7.0, 0.25))
    assert_close(pt.pad(pt.asarray(a), ((3, 2), (2, 4)), mode="linear_ramp", end_values=ends).numpy(),
                 np.pad(a, ((3, 2), (2, 4)), mode="linear_ramp", end_values=ends), np.float64)
    lengths = ((1, 3), (2, 5))
    for mode in STAT_MODES:
        assert_close(pt.pad(pt.asarray(a), ((2, 1), (3, 2)), mode=mode, stat_length=lengths).numpy(),
                     np.pad(a, ((2, 1), (3, 2)), mode=mode, stat_length=lengths), np.float64, ops=4)


def test_integer_mean_rounds_half_to_even():
    a = np.array([1, 2, 2, 5], np.int32)          # means 2.5 (first two: 1.5) round to even
    for length in (2, 4):
        np.testing.assert_array_equal(pt.pad(pt.asarray(a), 2, mode="mean", stat_length=length).numpy(),
                                      np.pad(a, 2, mode="mean", stat_length=length))


@pytest.mark.parametrize("mode,kwargs", [("linear_ramp", {"end_values": (3, -4)}),
                                         ("mean", {"stat_length": 2}), ("median", {}),
                                         ("maximum", {"stat_length": (1, 3)}), ("minimum", {})])
def test_value_modes_under_jit(mode, kwargs):
    a = _data((3, 4), np.float32, 1)

    @pt.jit
    def padded(x):
        return pt.pad(x, ((1, 2), (3, 1)), mode=mode, **kwargs) * 2.0

    expected = np.pad(a, ((1, 2), (3, 1)), mode=mode, **kwargs) * np.float32(2)
    assert_close(padded(pt.asarray(a)).numpy(), expected, np.float32, ops=4)


def test_lazy_until_read():
    x = pt.asarray(_data((6,), np.float32, 2))
    y = pt.pad(x, 3, mode="mean")
    assert y.shape == (12,) and not y.is_realized


def test_empty_mode_has_the_padded_shape():
    a = _data((2, 3), np.int32, 0)
    got = pt.pad(pt.asarray(a), ((1, 0), (2, 2)), mode="empty").numpy()
    assert got.shape == (3, 7) and got.dtype == a.dtype
    np.testing.assert_array_equal(got[1:, 2:5], a)


def test_errors_name_the_problem():
    x = pt.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(pt.ShapeError, match="stat_length of 0"):
        pt.pad(x, 1, mode="maximum", stat_length=0)
    with pytest.raises(pt.ShapeError, match="unsupported keyword arguments"):
        pt.pad(x, 1, mode="mean", end_values=3)
    with pytest.raises(pt.ShapeError, match="non-negative"):
        pt.pad(x, 1, mode="median", stat_length=-1)
    with pytest.raises(pt.ShapeError, match="not a padding mode"):
        pt.pad(x, 1, mode="mirror")
    with pytest.raises(pt.ShapeError, match="empty axis"):
        pt.pad(pt.asarray(np.ones((0, 3), np.float32)), 1, mode="mean")
