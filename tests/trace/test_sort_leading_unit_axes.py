"""Sorting float rows behind a leading size-1 axis ((1, rows, n)): each row is sorted on its own
(the tie-restoring step once took such an array for a single row), and so are median and
np.pad(mode='median'), which sort."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

ROWS = np.array([[16, 11, 15, -18, -2], [0, -3, 12, -13, 17], [3, 4, 1, 13, 16]], np.float32)


@pytest.mark.parametrize("shape", [(1, 3, 5), (1, 1, 3, 5), (3, 1, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sort_each_row(shape, dtype):
    a = ROWS.astype(dtype).reshape(shape)
    np.testing.assert_array_equal(pt.sort(pt.asarray(a), axis=-1).numpy(), np.sort(a, axis=-1))
    np.testing.assert_array_equal(pt.argsort(pt.asarray(a), axis=-1).numpy(),
                                  np.argsort(a, axis=-1, kind="stable"))


def test_signed_zeros_keep_their_order_in_each_row():
    a = np.array([[[0.0, -0.0, 1.0], [-0.0, 0.0, -1.0]]], np.float32)
    got = pt.sort(pt.asarray(a), axis=-1).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array([[[0.0, -0.0, 1.0],
                                                                           [-1.0, -0.0, 0.0]]])))


def test_median_and_median_pad_of_a_transposed_block():
    a = np.transpose(ROWS.reshape(1, 3, 5), (2, 0, 1)).astype(np.int32)     # (5, 1, 3)
    np.testing.assert_array_equal(pt.median(pt.asarray(a), axis=0).numpy(), np.median(a, axis=0))
    widths = ((0, 2), (1, 4), (5, 3))
    np.testing.assert_array_equal(pt.pad(pt.asarray(a), widths, mode="median").numpy(),
                                  np.pad(a, widths, mode="median"))
