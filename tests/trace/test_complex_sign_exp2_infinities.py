"""Complex sign and exp2 at infinite parts, as NumPy 2 gives them on every device.

sign(z) = z / |z| is inf / inf = NaN when a part is infinite; NumPy returns the unit along the
infinite part (NaN only when both are). exp2(z) taken as 2 ** z multiplies z by ln 2 + 0j, and
inf * 0 puts a NaN in exp2(inf + 0j); NumPy scales z's parts as reals, giving inf."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import poot as pt

VALUES = np.array([np.inf, -np.inf, complex(np.inf, 1), complex(-np.inf, -2), complex(1, np.inf),
                   complex(1, -np.inf), complex(np.nan, np.inf), complex(np.inf, np.inf),
                   complex(np.nan, 0), 0j, 3 - 4j, complex(-1.5, 0.25), complex(1e30, -1e30)])


def _numpy(fn, v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(v)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("jit", [False, True])
def test_sign_of_infinite_parts(device, dtype, jit):
    v = VALUES.astype(dtype)
    fn = pt.jit(pt.sign) if jit else pt.sign
    got = fn(pt.array(v)).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, _numpy(np.sign, v), rtol=1e-6, equal_nan=True)
    assert got[0] == 1 and got[3] == -1 and got[5] == -1j


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("jit", [False, True])
def test_exp2_of_infinite_parts(device, dtype, jit):
    v = VALUES.astype(dtype)
    fn = pt.jit(pt.exp2) if jit else pt.exp2
    got = fn(pt.array(v)).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, _numpy(np.exp2, v), rtol=1e-5, equal_nan=True)
    assert got[0] == np.inf and not np.isnan(got[0].imag)
