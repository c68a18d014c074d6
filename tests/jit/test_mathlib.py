"""Mathlib accuracy against NumPy/SciPy in float64, over wide ranges and special values.

MAX_ULP holds the measured maximum error (in ulps of the result dtype) of each function on these
inputs (seeded); the tests assert it, so a regression fails. The float64 reference is NumPy's in long
double where that is wider (mathcheck.reference), else glibc's (<= 2 ulp).
"""
import warnings
import zlib

import numpy as np
import pytest

from poot.jit.llvm import mathlib

from mathcheck import reference, run_op, ulp_error

UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf"]
BINARY = ["pow", "atan2", "hypot"]
# measured max ulp: float32 / float64
MAX_ULP = {
    "exp": (0.91, 1.0), "exp2": (0.84, 1.0), "expm1": (1.29, 2.0), "log": (0.77, 1.0), "log2": (0.5, 1.0),
    "log10": (0.5, 2.0), "log1p": (0.5, 1.0), "sin": (1.09, 1.0), "cos": (1.07, 1.0), "tan": (0.5, 3.0),
    "asin": (0.5, 3.0), "acos": (0.5, 3.0), "atan": (0.5, 2.0), "sinh": (2.62, 3.0), "cosh": (2.53, 3.0),
    "tanh": (2.1, 3.0), "asinh": (0.5, 1.0), "acosh": (0.5, 1.0), "atanh": (0.5, 2.0), "erf": (2.42, 3.0),
    "pow": (0.5, 1.0), "atan2": (0.5, 2.0), "hypot": (0.5, 2.0),
}
TOL = 0.05   # slack for rounding of the measurement itself


def _specials(dtype):
    fi = np.finfo(dtype)
    return [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, fi.tiny, fi.tiny / 8, -fi.tiny / 8, fi.max, -fi.max,
            0.5, -0.5, 2.0, 1e-30, -1e-30]


def _inputs(op, dtype, rng):
    n = 100_000
    f32 = dtype == np.float32
    big = 90 if f32 else 710
    ranges = {"exp": (-big * 1.2, big * 1.1), "exp2": (-160, 150) if f32 else (-1100, 1050), "expm1": (-big, big),
              "sin": (-1e6, 1e6), "cos": (-1e6, 1e6), "tan": (-1e4, 1e4), "asin": (-1, 1), "acos": (-1, 1),
              "sinh": (-big, big), "cosh": (-big, big), "tanh": (-30, 30), "atanh": (-1, 1), "erf": (-7, 7)}
    if op in ranges:
        x = np.concatenate([rng.uniform(*ranges[op], n), rng.uniform(-2, 2, n)])
    else:   # log-uniform magnitudes over the whole exponent range
        e = rng.uniform(-37 if f32 else -307, 38 if f32 else 308, n)
        x = 10.0 ** e * (rng.choice([1, -1], n) if op in ("atan", "asinh") else 1)
        if op == "log1p":
            x = np.concatenate([x, rng.uniform(-1, 1, n)])
        if op == "acosh":
            x = 1 + x
        if op in ("log", "log2", "log10"):
            x = np.concatenate([x, rng.uniform(0.5, 2, n)])
    with np.errstate(over="ignore"):
        sp = [v for v in _specials(dtype) if op not in ("sin", "cos", "tan") or abs(v) < 1e15]
        return np.concatenate([x, sp]).astype(dtype)


def test_every_listed_function_is_built():
    assert set(mathlib.FUNCTIONS) == set(UNARY + BINARY)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op", UNARY)
def test_unary_accuracy(op, dtype):
    x = _inputs(op, dtype, np.random.default_rng(zlib.crc32(op.encode())))
    got = run_op(op, x)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = reference(op)(x.astype(np.float64))
    err, i = ulp_error(got, ref, dtype)
    bound = MAX_ULP[op][dtype == np.float64]
    assert err <= bound + TOL, f"{op}({x[i]!r}) = {got[i]!r}, reference {ref[i]!r}: {err} ulp"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_accuracy(op, dtype):
    rng = np.random.default_rng(7)
    n = 100_000
    if op == "pow":
        x = np.concatenate([np.abs(rng.standard_normal(n) * 10), -rng.integers(1, 20, n // 4)])
        y = np.concatenate([rng.uniform(-30, 30, n), rng.integers(-20, 20, n // 4)])
    else:
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)
        y = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, 1e-300])
    gx, gy = np.meshgrid(sp, sp)
    x = np.concatenate([x, gx.ravel()]).astype(dtype)
    y = np.concatenate([y, gy.ravel()]).astype(dtype)
    got = run_op(op, x, y)
    with np.errstate(all="ignore"):
        ref = reference(op)(x.astype(np.float64), y.astype(np.float64))
    err, i = ulp_error(got, ref, dtype)
    bound = MAX_ULP[op][dtype == np.float64]
    assert err <= bound + TOL, f"{op}({x[i]!r}, {y[i]!r}) = {got[i]!r}, reference {ref[i]!r}: {err} ulp"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_trig_beyond_the_cody_waite_range(dtype):
    """Accurate up to |x| = 2**50 by Cody-Waite, and beyond it by mathtrig's Payne-Hanek reduction up
    to the largest value (NaN only for inf)."""
    x = (np.random.default_rng(3).uniform(1, 2, 10_000) * 2.0 ** 49).astype(dtype)
    for op in ("sin", "cos"):
        err, _ = ulp_error(run_op(op, x), reference(op)(x.astype(np.float64)), dtype)
        assert err <= 3.05
    beyond = np.array([2.0 ** 51, -1e20, np.finfo(dtype).max, -np.finfo(dtype).max], dtype)
    for op in ("sin", "cos", "tan"):
        err, _ = ulp_error(run_op(op, beyond), reference(op)(beyond.astype(np.float64)), dtype)
        assert err <= 3.05, op
        assert np.all(np.isnan(run_op(op, np.array([np.inf, -np.inf], dtype))))
    assert mathlib.TRIG_LIMIT == 2.0 ** 50


def test_odd_functions_keep_the_sign_of_zero():
    z = np.array([-0.0, 0.0], np.float64)
    for op in ("sin", "tan", "atan", "sinh", "tanh", "asinh", "atanh", "erf", "expm1", "log1p", "asin"):
        r = run_op(op, z)
        assert np.array_equal(np.signbit(r), [True, False]), op
