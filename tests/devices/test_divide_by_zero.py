"""IEEE results of dividing by zero (and multiplying zero by inf) on every device of POOT_TEST_DEVICES.

The planner turns a `full` operand into a literal in the kernel, so `zeros(n) / 0.0` divides a literal
zero by a loaded one and `x / 0.0` divides by a literal zero. lavapipe's compiler folded both to 0 (a
product with a literal zero is zero to it); the SPIR-V worker hides such literals
(poot/jit/llvm/targets/spirv/worker.py). Every case is checked with the zero as a literal on either
side and as data in a buffer."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.trace.context import backend, current

VALUES = np.array([0.0, 1.5, -2.0, np.inf, -np.inf, np.nan])


def _dtype_or_skip(name: str):
    if name == "float64" and not backend(current()).caps.float64:
        pytest.skip("no float64 on this device")
    return np.dtype(name)


def _same(got, want) -> None:
    """Equal, NaN positions included, and signed infinities exact."""
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_constant_zeros_over_zero(device, dtype):
    d = _dtype_or_skip(dtype)
    with np.errstate(all="ignore"):
        want = np.zeros(5, d) / d.type(0.0)
        _same((pt.zeros(5, dtype=d) / 0.0).numpy(), want)
        _same((pt.zeros(5, dtype=d) / pt.asarray(np.zeros((), d))).numpy(), want)
        _same((pt.zeros(5, dtype=d) * np.inf).numpy(), np.zeros(5, d) * np.inf)
    assert np.isnan(want).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_over_zero(device, dtype):
    """0/0 and nan/0 are NaN, x/0 and -x/0 signed infinities; so also over -0.0."""
    d = _dtype_or_skip(dtype)
    x = VALUES.astype(d)
    with np.errstate(all="ignore"):
        for zero in (0.0, -0.0):
            want = x / d.type(zero)
            _same((pt.asarray(x) / zero).numpy(), want)                      # a literal divisor
            _same((pt.asarray(x) / pt.asarray(np.full(6, zero, d))).numpy(), want)   # divisor as data
            _same((pt.full(6, zero, dtype=d) / pt.asarray(x)).numpy(), d.type(zero) / x)   # a literal dividend
            _same((pt.asarray(x) * zero).numpy(), x * d.type(zero))
