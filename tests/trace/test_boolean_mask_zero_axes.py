"""Boolean masks with a size-0 axis select nothing, as the array API standard says (found by the
public array-API test suite); any other mismatched size still raises IndexError."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("mask_shape,expected_shape", [((0,), (0, 3)), ((2, 0), (0,)), ((0, 0), (0,)),
                                                       ((0, 3), (0,))])
def test_zero_size_mask_axes_select_nothing(mask_shape, expected_shape):
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    for mask in (np.zeros(mask_shape, bool), pt.asarray(np.zeros(mask_shape, bool))):
        out = x[mask]
        assert out.shape == expected_shape and out.dtype == x.dtype
        assert out.numpy().size == 0


def test_mismatched_nonzero_mask_axes_still_raise():
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="does not match"):
        x[np.zeros((1,), bool)]
    with pytest.raises(IndexError):
        x[np.zeros((2, 3, 1), bool)]


def test_full_masks_keep_numpys_result():
    a = np.arange(6.0).reshape(2, 3)
    mask = a > 2
    np.testing.assert_array_equal(pt.asarray(a)[mask].numpy(), a[mask])
    np.testing.assert_array_equal(pt.asarray(a)[mask[:, 0]].numpy(), a[mask[:, 0]])
