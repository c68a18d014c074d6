"""cumsum and cumprod against NumPy on every device of POOT_TEST_DEVICES, with lines long enough that GPU
devices scan them in blocks (poot/jit/codegen/gpu_scan.py): around 65535/65536 elements (lavapipe's
loop cap, past which a one-thread scan lost elements), lengths that are no multiple of the block, 2-D
along either axis, eager and under @pt.jit. Integers must match exactly; floats within the dtype's
tolerance (blocked totals round differently from NumPy's sequential sum)."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.jit.codegen.gpu_scan import block_size, blocked
from poot.trace.context import backend, current
from tolerance import assert_close

LOOP_CAP = 65535


def _skip_unsupported(dtype) -> None:
    caps = backend(current()).caps
    if np.dtype(dtype).itemsize == 8 and not (caps.float64 and caps.int64):
        pytest.skip("no 64-bit types on this device")


@pytest.mark.parametrize("n", [1 << 10, 1 << 20, 1 << 30, 65535, 65536, 2**30 + 7])
def test_blocks_keep_every_loop_short(n):
    B = block_size(n)
    assert blocked(n)
    assert B < LOOP_CAP and math.ceil(n / B) < LOOP_CAP


@pytest.mark.parametrize("n", [65535, 65536, 70001])
def test_long_line_int32_exact(device, n):
    a = np.ones(n, np.int32)
    a[::7] = -3
    assert_close(pt.cumulative_sum(pt.asarray(a)).numpy(), np.cumsum(a), np.int32)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_2d_int64_exact_either_axis(device, op, axis):
    """Wrapping products and sums are exact in any grouping; 301 is no multiple of the block."""
    _skip_unsupported(np.int64)
    rng = np.random.default_rng(1)
    shape = (70001, 3) if axis == 0 else (3, 70001)
    x = rng.integers(-3, 4, shape).astype(np.int64)
    got = getattr(pt, op)(pt.asarray(x), axis=axis).numpy()
    assert_close(got, getattr(np, op)(x, axis=axis), np.int64)
    y = rng.integers(-9, 10, (301, 5) if axis == 0 else (5, 301)).astype(np.int32)
    assert_close(getattr(pt, op)(pt.asarray(y), axis=axis).numpy(), getattr(np, op)(y, axis=axis), np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_float_sum_within_tolerance(device, dtype):
    _skip_unsupported(dtype)
    rng = np.random.default_rng(2)
    x = rng.random((2, 66000)).astype(dtype)
    half = dtype in (np.float16, ml_dtypes.bfloat16)
    got = pt.cumsum(pt.asarray(x), axis=1).numpy()
    if half and device == "cpu":
        # the CPU scans one element after another in the 16-bit dtype, rounding each step as NumPy does
        np.testing.assert_array_equal(got.astype(np.float32), np.cumsum(x, axis=1).astype(np.float32))
        return
    want = np.cumsum(x.astype(np.float32) if half else x, axis=1).astype(dtype)
    # a GPU sums 16-bit floats in float32, then rounds once; otherwise the blocked order differs from
    # the sequential one by about sqrt(n) roundings of the running total
    ops = 2 if half else 2 * math.isqrt(66000)
    assert_close(got, want, dtype, ops=ops)


def test_float_product_and_specials(device):
    """Products near 1 stay finite; an inf and a NaN past the first block reach every later element."""
    rng = np.random.default_rng(3)
    x = (1 + (rng.random(70000) - 0.5) * 1e-4).astype(np.float32)
    assert_close(pt.cumprod(pt.asarray(x)).numpy(), np.cumprod(x), np.float32, ops=2 * math.isqrt(70000))
    y = np.ones(70000, np.float32)
    y[40000], y[60000] = np.inf, np.nan
    assert_close(pt.cumsum(pt.asarray(y)).numpy(), np.cumsum(y), np.float32)


def test_bool_counts_and_jit(device):
    rng = np.random.default_rng(4)
    flags = rng.random((2, 65536)) < 0.3

    @pt.jit
    def counts(f):
        return pt.cumsum(f, axis=1), pt.cumsum(f[0] * 2, axis=0)

    a, b = counts(pt.asarray(flags))
    assert_close(a.numpy(), np.cumsum(flags, axis=1), np.int64)
    assert_close(b.numpy(), np.cumsum(flags[0] * 2), np.int64)
    assert_close(pt.cumsum(pt.asarray(flags), axis=1).numpy(), np.cumsum(flags, axis=1), np.int64)
