"""Every elementwise function on the standard's special values (signed zeros, infinities, NaN of
either sign, +-1, halves, the largest and the smallest normal number), checked rule by rule against
the 2023.12 text transcribed in special_rules.py, for float32 and float64."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import poot as pt

from .special_rules import BINARY_RULES, UNARY_RULES

FLOATS = ["float32", "float64"]


def special_values(dtype: str) -> np.ndarray:
    info = np.finfo(dtype)
    vals = [math.nan, -math.nan, 0.0, -0.0, math.inf, -math.inf, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0,
            -2.0, 2.5, -2.5, 3.0, -3.0, float(info.max), -float(info.max), float(info.smallest_normal),
            -float(info.smallest_normal)]
    out = np.array(vals, dtype=dtype)
    out[1] = -np.abs(out[1])  # a NaN with its sign bit set (np.array(-nan) keeps it, made sure here)
    return out


def _expected_failures(fn_name, operands, results, rules, dtype):
    bad = []
    for x, r in zip(operands, results):
        x = tuple(float(v) for v in x)
        for cond, check in rules:
            if cond(x):
                if not check(float(r) if not isinstance(r, (bool, np.bool_)) else bool(r), x, dtype):
                    bad.append((x, r))
                break
    return bad


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY_RULES))
def test_unary_special_cases(name, dtype, device):
    x = special_values(dtype)
    r = getattr(pt, name)(pt.asarray(x)).numpy()
    assert r.dtype == (np.bool_ if name in ("isfinite", "isinf", "isnan", "signbit") else x.dtype)
    bad = _expected_failures(name, [(v,) for v in x], r, UNARY_RULES[name], x.dtype)
    assert not bad, f"{name}({dtype}): the standard's special cases fail for (input, result): {bad}"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(BINARY_RULES))
def test_binary_special_cases(name, dtype, device):
    v = special_values(dtype)
    pairs = np.array(list(itertools.product(v, v)), dtype=dtype)
    a, b = pairs[:, 0].copy(), pairs[:, 1].copy()
    if name == "pow":  # huge exponents: see test_pow_of_huge_exponents
        keep = ~(np.isfinite(b) & (np.abs(b) > 1e30))
        a, b = a[keep], b[keep]
    a[np.isnan(a)] = np.copysign(np.nan, [-1 if np.signbit(t) else 1 for t in a[np.isnan(a)]])
    r = getattr(pt, name)(pt.asarray(a), pt.asarray(b)).numpy()
    bad = _expected_failures(name, list(zip(a, b)), r, BINARY_RULES[name], np.dtype(dtype))
    assert not bad, (f"{name}({dtype}): the standard's special cases fail for ((x1, x2), result): "
                     f"{bad[:8]} ({len(bad)} in all)")


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_cases_hold_through_scalars_and_operators(dtype, device):
    """x / 0.0, -x, x ** 0 and friends: the same rules when one operand is a Python scalar."""
    x = pt.asarray(np.array([1.0, -1.0, 0.0, -0.0, np.nan], dtype))
    r = (x / 0.0).numpy()
    assert r[0] == np.inf and r[1] == -np.inf and np.isnan(r[2:]).all()
    assert (x ** 0).numpy().tolist() == [1.0] * 5
    neg = (-x).numpy()
    assert np.signbit(neg[2]) and not np.signbit(neg[3])
    assert np.signbit((x * -1.0).numpy()[2])


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_of_huge_exponents(dtype, device):
    big = float(np.finfo(dtype).max)
    x = np.array([0.5, 1.5, -1.5, 2.0, 2.0, 0.5], dtype)
    y = np.array([big, big, big, -1e30, 1e30, -1e30], dtype)
    r = pt.pow(pt.asarray(x), pt.asarray(y)).numpy()
    np.testing.assert_array_equal(r, np.array([0.0, np.inf, np.inf, 0.0, np.inf, np.inf], dtype))
    assert not np.signbit(r).any()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["atanh", "atan"])
def test_complex_inverse_tangent_with_a_nan_part(name, dtype, device):
    """atanh(finite + NaN j) is NaN + NaN j for every finite nonzero real part, huge ones included
    (where |z| is huge atanh is 1/z + i pi/2 sign(b), which must not hide the NaN); atan follows."""
    big = float(np.finfo(dtype).max) / 2
    nan, inf = math.nan, math.inf
    z = np.array([complex(big, nan), complex(-big, nan), complex(1e20, nan), complex(1.0, nan),
                  complex(0.0, nan), complex(nan, big), complex(nan, -1e20), complex(nan, 2.0),
                  complex(inf, nan), complex(nan, inf), complex(big, 2.0), complex(-big, -3.0)], dtype)
    r = getattr(pt, name)(pt.asarray(z)).numpy()
    want = getattr(np, "arc" + name[1:])(z)
    np.testing.assert_array_equal(np.isnan(r.real), np.isnan(want.real))
    np.testing.assert_array_equal(np.isnan(r.imag), np.isnan(want.imag))
    np.testing.assert_allclose(r, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_log1p_far_from_zero(dtype, device):
    """log1p(z) where |1 + z|^2 overflows (|z| near sqrt of the largest float) or where 1 + z is a
    tiny b j: the real part is log|1 + z| there, as NumPy's, not inf or -inf."""
    root = math.sqrt(float(np.finfo(dtype).max))
    z = np.array([complex(3.1e16, 0.9999 * root), complex(root, 3e16), complex(-root, 1.0),
                  complex(float(np.finfo(dtype).max) / 2, 1e30), complex(-1.0, 1e-30), complex(-1.0, 0.0),
                  complex(3.0, 4.0), complex(-3.0, -4.0), complex(0.5, 0.25), complex(-0.5, -0.25)], dtype)
    r = pt.log1p(pt.asarray(z)).numpy()
    with np.errstate(divide="ignore"):              # log1p(-1 + 0j) is -inf + 0j
        want = np.log1p(z)
    np.testing.assert_allclose(r, want, rtol=1e-6, atol=0)
