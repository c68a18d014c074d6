"""Float remainders and float64 -> float16 casts against NumPy on every device of POOT_TEST_DEVICES.

The SPIR-V lowering computes fmod itself (poot/jit/llvm/targets/spirv/lowering.py, float_rem): Vulkan's
OpFRem rounds its product, so it was wrong past a quotient of 2**24 (float32) or 2**53 (float64) --
`1e9 % 7` gave 64 -- and a literal zero divisor gave x instead of NaN. Vulkan's double -> half rounds
through float32 (twice), so 65519.99999 became inf; the lowering rounds to odd in float32 first."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.trace.context import backend, current

SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, 7.0, np.inf, -np.inf, np.nan])


def _dtype_or_skip(name: str):
    if name == "float64" and not backend(current()).caps.float64:
        pytest.skip("no float64 on this device")
    return np.dtype(name)


def _large_pairs(dtype, n=400):
    """Dividends up to 1e30 times their divisors (either sign), divisors over many decades."""
    rng = np.random.default_rng(7)
    b = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-6, 6, n) * rng.uniform(1, 10, n)
    q = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-1, 30, n)
    a = (b * q).astype(dtype)
    b = b.astype(dtype)
    tiny = np.array([3.0, 7.0, 0.7, 1e-30, np.finfo(dtype).tiny, np.finfo(dtype).smallest_subnormal], dtype)
    huge = np.array([np.finfo(dtype).max, 1e30, 1e9, 123456789.0, -np.finfo(dtype).max, 1e20], dtype)
    a2, b2 = np.meshgrid(huge, np.concatenate([tiny, -tiny]))
    return np.concatenate([a, a2.ravel()]), np.concatenate([b, b2.ravel()])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_quotients_exact(device, dtype):
    with pt.device(device):
        dt = _dtype_or_skip(dtype)
        a, b = _large_pairs(dt)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(pt.fmod(pt.asarray(a), pt.asarray(b)).numpy(), np.fmod(a, b))
            np.testing.assert_array_equal((pt.asarray(a) % pt.asarray(b)).numpy(), a % b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_literal_divisor(device, dtype):
    """A scalar divisor is a literal in the kernel: `x % 7` and `x % 3.0` past the mantissa."""
    with pt.device(device):
        dt = _dtype_or_skip(dtype)
        x = np.array([1e9, 123456789.0, -1e9, 1e20, 1.7e18, -1e30, 2.5], dt)
        for d in (7, 3.0, -3.0, 0.7):
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal((pt.asarray(x) % d).numpy(), x % dt.type(d))
                np.testing.assert_array_equal(pt.fmod(pt.asarray(x), d).numpy(), np.fmod(x, dt.type(d)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_operands(device, dtype):
    """Zero divisors give NaN (also as a literal: zeros, full, a scalar), as do infinite dividends;
    x % inf is x for fmod and follows the divisor's sign for %."""
    with pt.device(device):
        dt = _dtype_or_skip(dtype)
        a, b = (v.ravel().astype(dt) for v in np.meshgrid(SPECIAL, SPECIAL))
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(pt.fmod(pt.asarray(a), pt.asarray(b)).numpy(), np.fmod(a, b))
            np.testing.assert_array_equal((pt.asarray(a) % pt.asarray(b)).numpy(), a % b)
            x = SPECIAL.astype(dt)
            for zero in (pt.zeros(len(x), dtype=dt), pt.full(len(x), 0.0, dtype=dt), 0.0):
                want = np.full(len(x), np.nan, dt)
                np.testing.assert_array_equal((pt.asarray(x) % zero).numpy(), want)
                np.testing.assert_array_equal(pt.fmod(pt.asarray(x), zero).numpy(), want)
                np.testing.assert_array_equal(pt.divmod(pt.asarray(x), zero)[1].numpy(), want)
            np.testing.assert_array_equal(pt.fmod(pt.asarray(x), np.inf).numpy(), np.fmod(x, dt.type(np.inf)))


def test_float64_to_float16(device):
    with pt.device(device):
        _dtype_or_skip("float64")
        rng = np.random.default_rng(3)
        h = rng.integers(0, 0x7C00, 3000).astype(np.uint16).view(np.float16).astype(np.float64)
        up = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float64)
        mid = (h + up) / 2                                      # halfway cases, and just either side
        x = np.concatenate([mid, np.nextafter(mid, 0), np.nextafter(mid, np.inf), h,
                            rng.standard_normal(2000) * 10.0 ** rng.uniform(-9, 6, 2000),
                            [65504.0, 65519.99999, 65520.0, 65520.0 - 2**-40, 1 + 2**-11 + 2**-40, 2**-25,
                             2**-25 + 2**-60, 2**-24, 1.5 * 2**-24, 2**-14 - 2**-40, 1e-300, 1e300,
                             np.inf, np.nan, 0.0]])
        x = np.concatenate([x, -x])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(pt.asarray(x).astype(pt.float16).numpy(), x.astype(np.float16))
