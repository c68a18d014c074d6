"""unique(x, size=n) and argwhere(x, size=n), JAX's fixed-length forms: padded or truncated to n,
lazy, and usable inside @pt.jit (without size= the length depends on the values)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

X = np.array([3, 1, 3, 7, 1, 1, 9])


def test_unique_with_size_pads_with_the_smallest_value_or_fill_value(device):
    with pt.device(device):
        x = pt.asarray(X)
        np.testing.assert_array_equal(pt.unique(x, size=6).numpy(), [1, 3, 7, 9, 1, 1])
        np.testing.assert_array_equal(pt.unique(x, size=2, fill_value=-1).numpy(), [1, 3])
        v, i, inv, c = pt.unique(x, return_index=True, return_inverse=True, return_counts=True, size=5,
                                 fill_value=0)
        wv, wi, winv, wc = np.unique(X, return_index=True, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(v.numpy(), np.r_[wv, 0])
        np.testing.assert_array_equal(i.numpy(), np.r_[wi, 0])
        np.testing.assert_array_equal(inv.numpy(), winv)
        np.testing.assert_array_equal(c.numpy(), np.r_[wc, 0])


def test_fixed_size_forms_trace(device):
    with pt.device(device):
        v, c = pt.jit(lambda x: pt.unique(x, size=4, return_counts=True))(pt.asarray(X))
        np.testing.assert_array_equal(v.numpy(), [1, 3, 7, 9])
        np.testing.assert_array_equal(c.numpy(), [3, 2, 1, 1])
        m = np.array([[0, 1, 0], [2, 0, 3]])
        rows = pt.jit(lambda m: pt.argwhere(m, size=4, fill_value=-1))(pt.asarray(m))
        np.testing.assert_array_equal(rows.numpy(), np.r_[np.argwhere(m), [[-1, -1]]])
        np.testing.assert_array_equal(pt.argwhere(pt.asarray(m), size=2).numpy(), np.argwhere(m)[:2])


def test_without_size_inside_jit_the_error_names_the_fixed_form():
    with pytest.raises(pt.TracerError, match=r"argwhere\(x, size=n\)"):
        pt.jit(lambda m: pt.argwhere(m))(pt.asarray(np.eye(2)))
    with pytest.raises(pt.NotBuiltError, match="size= with axis="):
        pt.unique(pt.asarray(np.eye(2)), axis=0, size=2)
