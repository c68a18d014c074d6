"""Inputs for the parity tests: values per dtype and the layouts every op is checked over (0-d, empty,
plain, broadcast, and non-contiguous: sliced, transposed, negative-step, NumPy views)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt

ALL = list(dt.ALL_DTYPES)
HALF = (dt.float16, dt.bfloat16)
FLOATS = [d for d in ALL if d.kind == "f"]
INTS = [d for d in ALL if d.kind in "iu"]


def ids(d) -> str:
    return d.name


def values(dtype, shape, seed=0, domain=None) -> np.ndarray:
    """Deterministic test values of `dtype`: small integers, bools, or floats around +-2."""
    return np.asarray(_values(dtype, shape, seed, domain))


def _values(dtype, shape, seed, domain):
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 10, size=shape).astype(dtype.np)
    if dtype.kind == "i":
        return rng.integers(-5, 6, size=shape).astype(dtype.np)
    x = rng.standard_normal(shape) * 2.0
    if domain == "pos":
        x = np.abs(x) + 0.1
    elif domain == "unit":
        x = np.clip(x / 3, -0.95, 0.95)
    elif domain == "ge1":
        x = np.abs(x) + 1.0
    elif domain == "small":
        x = x / 2
    return x.astype(dtype.np)


# layout name -> (base shape, how to view it); the view is applied to NumPy and to poot alike
LAYOUTS = {
    "0d": ((), lambda a: a),
    "empty": ((0, 3), lambda a: a),
    "plain": ((3, 4), lambda a: a),
    "sliced": ((6, 8), lambda a: a[::2, 1::2]),
    "transposed": ((4, 3), lambda a: a.T),
    "negstep": ((3, 8), lambda a: a[::-1, ::-2]),
}


def layout_pair(dtype, layout, seed=0, domain=None):
    """(NumPy view, poot view) of the same values in `layout`."""
    if layout == "numpy_view":  # a non-contiguous NumPy array handed to poot directly
        base = values(dtype, (4, 6), seed, domain)
        view = base[:, ::2].T
        return view, pt.asarray(view)
    shape, fn = LAYOUTS[layout]
    base = values(dtype, shape, seed, domain)
    return fn(base), fn(pt.asarray(base))


ALL_LAYOUTS = list(LAYOUTS) + ["numpy_view"]


def reference_input(a: np.ndarray, dtype) -> np.ndarray:
    """What NumPy computes the expected answer on: float32 for half types (bf16 is compared against
    NumPy in float32, rounded to bf16)."""
    return a.astype(np.float32) if dtype in HALF else a


def round_to(expected, dtype):
    e = np.asarray(expected)
    if dtype in HALF and e.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return e.astype(dtype.np)
    return e


def numpy_dtype_for(dtype):
    """The NumPy dtype whose result type predicts poot's (bf16 behaves like float16)."""
    return np.dtype(np.float16) if dtype is dt.bfloat16 else dtype.np


def expected_result_dtype(np_result_dtype, in_dtype):
    d = dt.as_dtype(np_result_dtype)
    if in_dtype is dt.bfloat16 and d is dt.float16:
        return dt.bfloat16
    return d


def bf16():
    return ml_dtypes.bfloat16


def skip_unless(cond, reason):
    if not cond:
        pytest.skip(reason)
