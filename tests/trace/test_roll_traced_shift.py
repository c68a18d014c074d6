"""pt.roll by a shift traced under @pt.jit (as jnp.roll takes one): one program for every shift,
NumPy's values for positive, negative and out-of-range shifts, on every axis form."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_traced_shift_matches_numpy(device):
    x = np.arange(12.0).reshape(3, 4)
    with pt.device(device):
        along = pt.jit(lambda x, s: pt.roll(x, s, axis=1))
        flat = pt.jit(lambda x, s: pt.roll(x, s))
        pair = pt.jit(lambda x, s: pt.roll(x, (s, 1), axis=(0, 1)))
        for s in (0, 1, 3, 4, 5, -1, -7, 13):
            np.testing.assert_array_equal(along(pt.asarray(x), s).numpy(), np.roll(x, s, axis=1))
            np.testing.assert_array_equal(flat(pt.asarray(x), s).numpy(), np.roll(x, s))
            np.testing.assert_array_equal(pair(pt.asarray(x), s).numpy(), np.roll(x, (s, 1), axis=(0, 1)))


def test_traced_shift_differentiates():
    g = pt.jit(pt.grad(lambda x, s: (pt.roll(x, s) * pt.arange(4.0)).sum()))
    np.testing.assert_array_equal(g(pt.asarray([1.0, 2.0, 3.0, 4.0]), 1).numpy(), [1.0, 2.0, 3.0, 0.0])


def test_a_traced_shift_must_be_a_0d_integer():
    with pytest.raises(pt.DTypeError, match="traced shift must be a 0-d integer"):
        pt.jit(lambda x, s: pt.roll(x, s))(pt.arange(4.0), 1.5)
