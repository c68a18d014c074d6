"""float16 and bfloat16 values are rounded after every operation, as NumPy rounds them, on every
device, also where a fused kernel keeps them in float32 registers: a fused chain gives the bits an
unfused one (and NumPy) gives."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt


def _same_bits(got: np.ndarray, expected: np.ndarray, nan_sign: bool) -> None:
    """Equal values with equal signs (zeros and infinities included); a NaN where NumPy has one, with its
    sign where `nan_sign`: IEEE 754 leaves a NaN's sign unspecified, and GPU float arithmetic returns the
    positive canonical NaN where x86 keeps the operand's."""
    nan = np.isnan(expected)
    same = np.where(nan, np.isnan(got), (got == expected) & (np.signbit(got) == np.signbit(expected)))
    if nan_sign:
        same &= np.signbit(got) == np.signbit(expected)
    assert same.all(), (f"{(~same).sum()} differ; inputs first differing: got {got[~same][:4]}, "
                        f"expected {expected[~same][:4]}")


def test_a_float16_intermediate_is_rounded_inside_a_fused_reduction(device):
    x = (np.random.default_rng(0).normal(size=(64, 33)) * 3).astype(np.float16)
    got = (pt.asarray(x) * 2 + 1).astype(pt.float32).sum(axis=1).numpy()
    h = x * np.float16(2) + np.float16(1)
    # the sums of the same float32 addends, in poot's order and NumPy's, differ by rounding only
    np.testing.assert_allclose(got, h.astype(np.float32).sum(axis=1), rtol=2e-6, atol=1e-5)
    assert not np.allclose(got, (x.astype(np.float32) * 2 + 1).sum(axis=1), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_rounding_to_a_narrow_float_matches_numpy_bit_for_bit(device, dtype):
    rng = np.random.default_rng(1)
    scale = np.float32(10) ** rng.integers(-9, 6, 4000).astype(np.float32)
    edges = [65504, 65519.99, 65520, 65536, 1e9, -65520, 2**-24, 2**-25, 2**-25 * 1.0001, 3 * 2**-25,
             2**-14, 2**-14 * (1 - 2**-12), 0.0, -0.0, np.inf, -np.inf, np.nan, 1 + 2**-11,
             1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, 2**-30, -(2**-25) * 1.5]
    nans = np.array([0xFFC00000, 0x7FA00001, 0xFF800001], np.uint32).view(np.float32)   # -NaN, payloads
    v = np.concatenate([rng.normal(size=4000).astype(np.float32) * scale, np.array(edges, np.float32), nans])
    one = np.ones((), dtype)
    with np.errstate(over="ignore"):
        expected = (v.astype(dtype) * one).astype(np.float32)
    got = ((pt.asarray(v) * 1.0).astype(pt.dtypes.as_dtype(dtype)) * pt.asarray(one)).astype(pt.float32)
    _same_bits(got.numpy(), expected, nan_sign=device.split(":")[0] in ("cpu", "oracle"))
