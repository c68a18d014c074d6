"""sin, cos and tan for arguments of every magnitude (mathlib's Cody-Waite reduction below 2**50,
mathtrig.py's Payne-Hanek beyond, up to the largest float and double) against NumPy."""
import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close

_TOP = {np.float64: 308, np.float32: 38}


def _arguments(dtype):
    rng = np.random.default_rng(7)
    top = _TOP[dtype]
    mags = np.concatenate([10.0 ** rng.uniform(0, top, 600), 10.0 ** np.arange(0, top + 1, dtype=np.float64)])
    x = (mags * rng.choice([-1.0, 1.0], mags.size)).astype(dtype)
    special = [1.1259e15, 2.0 ** 50, np.nextafter(2.0 ** 50, 0), 2.0 ** 52 + 1, 3e38,
               float(np.finfo(dtype).max), -float(np.finfo(dtype).max), 0.0, -0.0, np.inf, -np.inf, np.nan]
    if dtype is np.float64:
        special += [6381956970095103 * 2.0 ** 797, 5.319372648326541e+255, 1e22]
    return np.concatenate([x[np.isfinite(x)], np.array(special, dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_matches_numpy_over_all_magnitudes(device, op, dtype):
    a = _arguments(dtype)
    got = getattr(pt, op)(pt.asarray(a)).numpy()
    with np.errstate(invalid="ignore"):
        want = getattr(np, op)(a)
    assert_close(got, want, dtype, ops=2, err_msg=f"{op} {np.dtype(dtype).name} on {device}")
    if op != "cos":            # odd functions keep the sign of a zero
        assert np.signbit(got[a == 0]).tolist() == np.signbit(a[a == 0]).tolist()


def test_worst_case_double_reduction(device):
    """The double closest to a multiple of pi/2 (Muller's table): r ~ 2**-61 of x mod pi/2."""
    x = np.array([6381956970095103 * 2.0 ** 797])
    np.testing.assert_allclose(pt.sin(pt.asarray(x)).numpy(), np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(pt.cos(pt.asarray(x)).numpy(), np.cos(x), rtol=1e-14)
