"""The CPU rounds every float operation on its own, as NumPy does: no multiply-add is fused, so
elementwise chains match NumPy to the last bit."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multiply_add_matches_numpy_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(20000).astype(dtype) for _ in range(3))
    with pt.device("cpu"):
        got = (pt.asarray(a) * pt.asarray(b) + pt.asarray(c)).numpy()
        got2 = (pt.asarray(c) - pt.asarray(a) * pt.asarray(b)).numpy()
    np.testing.assert_array_equal(got, a * b + c)
    np.testing.assert_array_equal(got2, c - a * b)


def test_overflowing_difference_of_squares_is_nan_as_in_numpy():
    x = np.array([1e200, 3e300])
    with pt.device("cpu"):
        got = (pt.asarray(x) * pt.asarray(x) - pt.asarray(x) * pt.asarray(x)).numpy()
    assert np.isnan(got).all()


def test_singular_determinant_is_exactly_zero():
    m = np.array([[0.1, 0.2], [0.3, 0.6]])
    with pt.device("cpu"):
        a = pt.asarray(m)
        det2 = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]).numpy()
    assert det2 == m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0] == 0.0
