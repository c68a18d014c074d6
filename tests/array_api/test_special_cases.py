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
