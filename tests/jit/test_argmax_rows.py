"""argmax / argmin over long CPU rows take each block's maximum, then search the winning block: the
answers stay NumPy's (first of equal values, first NaN, -0.0 equal to 0.0) across block boundaries."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.jit.codegen.rows import ARG_BLOCK


def rows(dtype):
    rng = np.random.default_rng(3)
    n = 3 * ARG_BLOCK + 17
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 40, (9, n)).astype(dtype)
    m = rng.normal(size=(9, n)).astype(dtype)
    m[0, ARG_BLOCK - 1], m[0, ARG_BLOCK] = 50, 50                  # equal maxima either side of a boundary
    m[1, [5, ARG_BLOCK + 3, 2 * ARG_BLOCK + 9]] = np.nan          # the first NaN wins
    m[2] = -np.inf
    m[3] = np.nan
    m[4, 2 * ARG_BLOCK:] = np.inf
    m[5] = 0.0
    m[5, ::3] = -0.0
    m[6, -1] = 99                                                  # in the short last block
    return m


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8])
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_long_rows_match_numpy(fn, dtype):
    m = rows(dtype)
    with pt.device("cpu"):
        x = pt.asarray(m)
        np.testing.assert_array_equal(getattr(pt, fn)(x, axis=1).numpy(), getattr(np, fn)(m, axis=1))
        np.testing.assert_array_equal(getattr(pt, fn)(x[1]).numpy(), getattr(np, fn)(m[1]))
        np.testing.assert_array_equal(pt.jit(lambda v: getattr(pt, fn)(v, axis=-1))(x).numpy(),
                                      getattr(np, fn)(m, axis=-1))
