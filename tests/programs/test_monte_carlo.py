"""Monte-Carlo programs on pt.random: estimating pi, pricing a European option, a random walk
whose key is split every step. poot's generator is Threefry-2x32 over a counter, so its words are
checked exactly against a NumPy implementation of Threefry; the estimates are checked against the
quantities they estimate, within their statistical error, and NumPy runs the same programs on
poot's own samples."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt

from .harness import compare

M32 = np.uint64(0xFFFFFFFF)


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds (Salmon et al. 2011), on NumPy uint32 arrays."""
    def rotl(x, r):
        return ((x << np.uint32(r)) | (x >> np.uint32(32 - r))).astype(np.uint32)

    k0, k1 = np.uint32(k0), np.uint32(k1)
    ks = (k0, k1, np.uint32(k0 ^ k1 ^ np.uint32(0x1BD11BDA)))
    x0, x1 = (x0 + ks[0]).astype(np.uint32), (x1 + ks[1]).astype(np.uint32)
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    for i in range(5):
        for r in rotations[i % 2]:
            x0 = (x0 + x1).astype(np.uint32)
            x1 = rotl(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]).astype(np.uint32)
        x1 = (x1 + ks[(i + 2) % 3] + np.uint32(i + 1)).astype(np.uint32)
    return x0, x1


def reference_bits(seed, count):
    k0, k1 = (seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF
    half = (count + 1) // 2
    ctr = np.arange(2 * half, dtype=np.uint32)
    y0, y1 = threefry2x32(k0, k1, ctr[:half], ctr[half:])
    return np.concatenate([y0, y1])[:count]


def reference_uniform_f32(seed, count):
    words = (reference_bits(seed, count) >> np.uint32(9)) | np.uint32(0x3F800000)
    return words.view(np.float32) - np.float32(1.0)


def test_threefry_known_answer():
    # the Random123 known-answer vector for threefry2x32_20 with zero key and counter
    y0, y1 = threefry2x32(0, 0, np.zeros(1, np.uint32), np.zeros(1, np.uint32))
    assert (int(y0[0]), int(y1[0])) == (0x6B200159, 0x99BA4EFE)


def test_random_words_match_threefry(device):
    key = pt.random.key(2024)
    assert np.array_equal(pt.random.bits(key, (1001,)).numpy(), reference_bits(2024, 1001))
    got = pt.random.uniform(key, (257,), dtype=pt.float32).numpy()
    assert np.array_equal(got, reference_uniform_f32(2024, 257))


# -- 12. pi by rejection sampling -------------------------------------------------------------------
N = 200_000


def estimate_pi(xp, xy):
    inside = (xy * xy).sum(axis=0) < 1.0
    return 4.0 * inside.astype(xy.dtype).mean()


def sample_pi(key):
    return estimate_pi(pt, pt.random.uniform(key, (2, N), dtype=pt.float32))


def test_monte_carlo_pi(device):
    key = pt.random.key(7)
    eager = sample_pi(key)
    jitted = pt.jit(sample_pi)(key)
    xy = pt.random.uniform(key, (2, N), dtype=pt.float32)
    compare((eager, jitted), (estimate_pi(np, xy.numpy()),) * 2, device, ops=N, label="pi")
    sigma = 4.0 * math.sqrt((math.pi / 4) * (1 - math.pi / 4) / N)
    assert abs(float(jitted) - math.pi) < 5 * sigma


# -- European call option under geometric Brownian motion -------------------------------------------
S0, STRIKE, RATE, VOL, T = 100.0, 105.0, 0.03, 0.2, 1.0


def call_price(xp, z):
    st = S0 * xp.exp((RATE - 0.5 * VOL**2) * T + VOL * math.sqrt(T) * z)
    payoff = xp.maximum(st - STRIKE, 0.0) * math.exp(-RATE * T)
    return payoff.mean(), payoff.std()


def black_scholes():
    d1 = (math.log(S0 / STRIKE) + (RATE + 0.5 * VOL**2) * T) / (VOL * math.sqrt(T))
    d2 = d1 - VOL * math.sqrt(T)
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    return S0 * phi(d1) - STRIKE * math.exp(-RATE * T) * phi(d2)


@pytest.mark.parametrize("dtype", [pt.float32, pt.float64], ids=["f32", "f64"])
def test_option_price(device, dtype):
    def price(key):
        return call_price(pt, pt.random.normal(key, (N,), dtype=dtype))

    key = pt.random.key(11)
    z = pt.random.normal(key, (N,), dtype=dtype)
    expected = call_price(np, z.numpy())
    compare(price(key), expected, device, ops=1024, label="eager")
    mean, std = pt.jit(price)(key)
    compare((mean, std), expected, device, ops=1024, label="jit")
    assert abs(float(mean) - black_scholes()) < 5 * float(std) / math.sqrt(N)
    zn = z.numpy().astype(np.float64)
    assert abs(zn.mean()) < 5 / math.sqrt(N) and abs(zn.std() - 1) < 5 / math.sqrt(2 * N)


# -- a random walk: the key is split every step inside the jitted step ------------------------------
WALKERS, STEPS = 4096, 25


def walk_step(key, x, hits):
    key, sub = pt.random.split(key)
    x = x + pt.random.normal(sub, x.shape, dtype=x.dtype)
    return key, x, hits + (pt.abs(x) > 3.0).astype(hits.dtype)


def walk(step, key):
    x = pt.zeros(WALKERS, dtype=pt.float32)
    hits = pt.zeros(WALKERS, dtype=pt.int32)
    for _ in range(STEPS):
        key, x, hits = step(key, x, hits)
    return x, hits


def test_random_walk(device):
    key = pt.random.key(3)
    x, hits = walk(walk_step, key)
    jstep = pt.jit(walk_step)
    xj, hitsj = walk(jstep, key)
    assert jstep.trace_count == 1
    compare((xj, hitsj), (x.numpy(), hits.numpy()), device, ops=STEPS, label="jit")
    # the same walk in NumPy, on the same steps' samples
    k, xn = key, np.zeros(WALKERS, np.float32)
    for _ in range(STEPS):
        k, sub = pt.random.split(k)
        xn = xn + pt.random.normal(sub, (WALKERS,), dtype=pt.float32).numpy()
    compare((x,), (xn,), device, ops=STEPS, label="eager")
    var = float((x.numpy().astype(np.float64) ** 2).mean())
    assert abs(var - STEPS) < 5 * STEPS * math.sqrt(2 / WALKERS)
