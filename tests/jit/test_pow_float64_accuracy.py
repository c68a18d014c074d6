"""`x ** y` in float64 where |y * log(x)| is large, on every device in POOT_TEST_DEVICES (lazy arrays),
against NumPy's pow evaluated in long double where that is wider (mathcheck.reference).

pow is exp(y * log(x)) with log(x) as a double-double: its low part, scaled by y, must stay below an ulp
of the high part, or exp's polynomial gets an argument far outside its reduced range (e ** 700 was off by
2.5e8 ulp, 1.4 ** -298 by 4.4e6)."""
import numpy as np
import pytest

import poot as pt

from mathcheck import reference, ulp_error

MAX_ULP_F64 = 1.0          # measured: 1.0 over the sweep below (NumPy: 1.0)
MAX_ULP_F32 = 0.5          # float pow computes in double and rounds once


def _cases():
    points = [(1.400111475507653, -298.2338122223804), (1.5, 300.7), (0.9, 5000.3), (np.e, 700.0),
              (np.e, -700.0), (np.e, 600.0), (np.e, -600.0), (np.e, 709.7), (np.e, -744.0), (2.0, 1023.5),
              (2.0, -1074.0), (10.0, 307.5), (10.0, -320.0), (0.5, 1070.0), (1.0000001, 7e9), (0.999999, 7e8)]
    rng = np.random.default_rng(11)
    x = rng.uniform(0.1, 3.0, 3000)
    y = rng.uniform(-300.0, 300.0, 3000)
    lx = rng.uniform(-300.0, 300.0, 2000)                     # x over the exponent range, |y log x| up to ~700
    xs = 10.0 ** lx
    ys = rng.uniform(-700.0, 700.0, 2000) / np.abs(np.log(xs))
    a = np.concatenate([[p[0] for p in points], x, xs])
    b = np.concatenate([[p[1] for p in points], y, ys])
    return a, b


def _pow(device, a, b):
    with pt.device(device):
        return (pt.asarray(a) ** pt.asarray(b)).numpy()


def test_pow_float64_large_exponents(device):
    a, b = _cases()
    with np.errstate(all="ignore"):
        ref = reference("pow")(a, b)
    err, i = ulp_error(_pow(device, a, b), ref, np.float64)
    assert err <= MAX_ULP_F64, f"{a[i]!r} ** {b[i]!r}: {err} ulp"


def test_pow_float32_large_exponents(device):
    a, b = _cases()
    keep = (a > 1e-37) & (a < 1e38)
    a32, b32 = a[keep].astype(np.float32), (b[keep] / 8).astype(np.float32)
    with np.errstate(all="ignore"):
        ref = reference("pow")(a32.astype(np.float64), b32.astype(np.float64))
    err, i = ulp_error(_pow(device, a32, b32), ref, np.float32)
    assert err <= MAX_ULP_F32 + 0.01, f"{a32[i]!r} ** {b32[i]!r}: {err} ulp"


@pytest.mark.parametrize("y", [250.0, 400.0, 600.0, 700.0, -600.0, -700.0])
def test_pow_of_e_matches_exp(device, y):
    """e ** y against exp(y) in long double (x = e rounded, so the reference is pow's own)."""
    a, b = np.array([np.e]), np.array([y])
    err, _ = ulp_error(_pow(device, a, b), reference("pow")(a, b), np.float64)
    assert err <= MAX_ULP_F64
