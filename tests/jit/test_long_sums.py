"""Long float sums keep NumPy's accuracy: a row of millions of values folds in blocks into a compensated
total (codegen/rows.py SUM_BLOCK), so a variance or a z-score of values far from zero is right, whichever
schedule the row takes (one row per thread, several rows in lockstep, a row cut into parts)."""
import numpy as np
import pytest

import poot as pt


def _far_from_zero(shape, dtype, offset):
    return (np.random.default_rng(0).random(shape) + offset).astype(dtype)


@pytest.mark.parametrize("dtype, offset, rtol", [(np.float32, 1000.0, 1e-3), (np.float64, 1.7e12, 1e-6)])
def test_variance_of_a_long_row_far_from_zero(dtype, offset, rtol):
    x = _far_from_zero(1 << 21, dtype, offset)
    want = x.astype(np.float64).var()
    assert float(pt.asarray(x).var()) == pytest.approx(want, rel=rtol)
    assert float((pt.asarray(x) - pt.asarray(x).mean()).mean()) == pytest.approx(0.0, abs=offset * 1e-7)


def test_z_score_of_two_long_rows():
    x = _far_from_zero((2, 1 << 21), np.float32, 1000.0)
    p = pt.asarray(x)
    got = ((p - p.mean(-1, keepdims=True)) / p.std(-1, keepdims=True)).numpy()
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / x64.std(-1, keepdims=True)
    np.testing.assert_allclose(got, want, atol=2e-3)


@pytest.mark.parametrize("shape, axis", [((4, 1 << 20), 1), ((1 << 22,), 0), ((3, 1 << 20, 2), 1)])
def test_row_sums_against_float64(shape, axis):
    x = _far_from_zero(shape, np.float32, 1000.0)
    got = pt.asarray(x).sum(axis=axis).numpy()
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=axis), rtol=1e-6)
