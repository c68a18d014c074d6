"""A jitted function's Python scalar arguments: their buffers are kept between calls (a loop passes
the same learning rate every step), keyed by the exact value and dtype."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_each_scalar_value_reaches_the_program(device):
    f = pt.jit(lambda x, s: x * s)
    x = pt.asarray(np.arange(4.0, dtype=np.float32), device=device)
    for s in (0.5, 2.0, 0.5, -0.0, 0.0, float("nan"), 3, True):
        got = f(x, s).numpy()
        want = np.arange(4.0, dtype=np.float32) * np.float32(s)
        assert np.array_equal(got, want, equal_nan=True), s
        assert np.array_equal(np.signbit(got), np.signbit(want)), s


def test_integer_scalars_are_still_checked_against_the_dtype(device):
    f = pt.jit(lambda x, s: x + s)
    small = pt.asarray(np.zeros(3, np.int8), device=device)
    wide = pt.asarray(np.zeros(3, np.int64), device=device)
    assert f(wide, 300).numpy().tolist() == [300, 300, 300]     # the buffer of 300 is kept
    with pytest.raises(pt.DTypeError, match="300"):
        f(small, 300)
