"""`pt.fma` on float32 rounds once (a * b + c exactly, then one rounding to float32) on every device in
POOT_TEST_DEVICES, against an exact rational reference.

A Vulkan driver need not fuse GLSL's Fma (lavapipe rounds the product first), and computing in float64
then rounding to float32 rounds twice: the crafted cases below tell both apart from a fused fma."""
from fractions import Fraction

import numpy as np
import pytest

import poot as pt

MAX_F32 = Fraction(float(np.finfo(np.float32).max))
OVERFLOW = MAX_F32 + Fraction(2) ** 103            # halfway between the largest float32 and 2**128


@pt.kernel
def fma_f32(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.In[pt.f32], o: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(o):
        o[i] = pt.fma(a[i], b[i], c[i])


def _round_f32(x: Fraction) -> np.float32:
    """x rounded to the nearest float32, ties to even (overflow to infinity past the halfway point)."""
    if abs(x) >= OVERFLOW:
        return np.float32(np.inf if x > 0 else -np.inf)
    guess = np.float32(float(x))
    cands = [guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))]
    cands = [c for c in cands if np.isfinite(c)]
    best = min(abs(Fraction(float(c)) - x) for c in cands)
    near = [c for c in cands if abs(Fraction(float(c)) - x) == best]
    return min(near, key=lambda c: int(np.array(c).view(np.uint32)) & 1)


def _exact(a, b, c) -> np.ndarray:
    return np.array([_round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in zip(a, b, c)], np.float32)


def _crafted():
    """(a, b, c) whose product is 2**-24 - 2**-70 (just under half an ulp of 1) or its neighbours: rounded
    first, or through float64, the sum lands on a float32 tie and rounds the wrong way."""
    lo, hi = np.float32(2.0 ** -12 * (1 - 2.0 ** -23)), np.float32(2.0 ** -12 * (1 + 2.0 ** -23))
    rows = []
    for c in (1 + 2.0 ** -23, 1.0, -(1 + 2.0 ** -23), 1 + 3 * 2.0 ** -23, 2.0 ** 10 * (1 + 2.0 ** -23)):
        for s in (1.0, -1.0):
            rows.append((hi, lo * np.float32(s), np.float32(c)))
            rows.append((hi, hi * np.float32(s), np.float32(c)))
    rows += [(np.float32(1.5), np.float32(3e9), np.float32(1.5)),
             (np.float32(1 + 2.0 ** -12), np.float32(1 + 2.0 ** -12), np.float32(-1.0))]
    return [np.array(col, np.float32) for col in zip(*rows)]


def _random(n: int, seed: int):
    """Operands whose product and addend overlap (the case where the rounding of the product shows),
    over a wide range of magnitudes, subnormal results included."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    p = a.astype(np.float64) * b
    c = (-p * (1 + rng.standard_normal(n) * 2.0 ** rng.integers(-30, 0, n))).astype(np.float32)
    tiny = (rng.standard_normal(n // 8) * 2.0 ** -75).astype(np.float32)
    a = np.concatenate([a, tiny, np.float32(2.0 ** 100) * np.ones(4, np.float32)])
    b = np.concatenate([b, tiny[::-1], np.float32([2.0 ** 28, -(2.0 ** 28), 2.0 ** 27, 3.0])])
    c = np.concatenate([c, (tiny * np.float32(2.0 ** -70)).astype(np.float32), np.float32([1.0, 1.0, -1.0, 1e38])])
    return a, b, c


def _check(device, a, b, c):
    o = np.zeros(len(a), np.float32)
    fma_f32(pt.Context(device), a, b, c, o)
    want = _exact(a, b, c)
    bad = np.flatnonzero(o.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, [(a[i], b[i], c[i], o[i], want[i]) for i in bad[:5]]


def test_fma_f32_crafted_ties(device):
    _check(device, *_crafted())


@pytest.mark.parametrize("seed", [1, 2])
def test_fma_f32_random(device, seed):
    _check(device, *_random(1500, seed))


def test_fma_f32_special_values(device):
    sp = np.float32([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e38, 1e-45])
    a, b, c = (g.ravel() for g in np.meshgrid(sp, sp, sp, indexing="ij"))
    o = np.zeros(len(a), np.float32)
    fma_f32(pt.Context(device), a, b, c, o)
    with np.errstate(all="ignore"):
        p = a.astype(np.float64) * b.astype(np.float64)          # exact here; one rounding to float32 below
        want = (p + c.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(o), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(o[ok].view(np.uint32), want[ok].view(np.uint32))
