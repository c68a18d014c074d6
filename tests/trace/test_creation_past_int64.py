"""arange and full with Python ints past int64, against NumPy: arange's values were computed in
int64 and wrapped silently (arange(2**63, 2**63 + 3) gave -2**63...), and full(n, 2**63) refused
what NumPy makes a uint64 array."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("args, dtype", [((2**63, 2**63 + 3), None), ((-1, 2**63 + 1, 2**62), None),
                                         ((2**63, 2**63 + 3), np.uint64), ((2**64 - 3, 2**64), np.uint64),
                                         ((2**63 - 3, 2**63 - 1), None), ((1, 10, 3), np.uint8)])
def test_arange_with_bounds_near_and_past_int64_matches_numpy(device, args, dtype):
    want = np.arange(*args, dtype=dtype)
    got = pt.arange(*args, dtype=dtype)
    assert got.dtype == pt.dtype(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def test_arange_refuses_bounds_no_64_bit_dtype_holds(device):
    with pytest.raises(OverflowError, match="more than 64 bits"):
        pt.arange(0, 2**64, 2**62)         # NumPy: an object array
    with pytest.raises(OverflowError, match="does not fit int64"):
        pt.arange(2**63, 2**63 + 3, dtype=pt.int64)     # NumPy: OverflowError


@pytest.mark.parametrize("value", [2**63, 2**64 - 1, 5, -1])
def test_full_infers_numpys_dtype_for_big_python_ints(device, value):
    want = np.full(3, value)
    got = pt.full(3, value)
    assert got.dtype == pt.dtype(want.dtype)
    assert got.numpy().tolist() == want.tolist()
