"""Comparing poot results with NumPy: tolerances derived from the dtype's machine epsilon.

`assert_close(actual, expected, dtype, ops=1)`: integers and bools must match exactly; floats must
satisfy |actual - expected| <= k * eps * (1 + |expected|) with k = 4 * ops (ops: how many roundings the
computation may accumulate, e.g. the length of a sum); infinities must match exactly; NaN positions
must match (a NaN where NumPy is finite always fails, and so does a number where NumPy has NaN).
"""
from __future__ import annotations

import numpy as np

import poot as pt
from poot import dtypes as dt


def eps(dtype) -> float:
    return float(dt.finfo(dtype).eps)


def tolerance(dtype, ops: float = 1) -> float:
    """The relative (and absolute, at scale 1) tolerance for `ops` roundings in `dtype`."""
    return 4.0 * max(ops, 1) * eps(dtype)


def assert_close(actual, expected, dtype, ops: float = 1, err_msg: str = "") -> None:
    d = dt.as_dtype(dtype)
    a = np.asarray(actual)
    e = np.asarray(expected)
    where = f" ({err_msg})" if err_msg else ""
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}{where}"
    if d.kind == "c" or np.iscomplexobj(e):     # each part at the tolerance of the real dtype
        real = dt.real_dtype(d) if d.kind == "c" else d
        assert_close(np.real(a), np.real(e), real, ops, f"{err_msg} (real part)")
        assert_close(np.imag(a), np.imag(e), real, ops, f"{err_msg} (imaginary part)")
        return
    if d.kind in "biu":
        assert np.array_equal(a, e), f"{d.name} values differ{where}:\n{a}\nexpected\n{e}"
        return
    a = a.astype(np.float64)
    e = e.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    assert not (nan_a & ~nan_e).any(), f"NaN where NumPy is not NaN{where}:\n{a}\nexpected\n{e}"
    assert not (nan_e & ~nan_a).any(), f"a number where NumPy has NaN{where}:\n{a}\nexpected\n{e}"
    inf_e = np.isinf(e)
    assert np.array_equal(a[inf_e], e[inf_e]), f"infinities differ{where}:\n{a}\nexpected\n{e}"
    fin = ~nan_e & ~inf_e
    tol = tolerance(d, ops)
    err = np.abs(a[fin] - e[fin])
    bound = tol * (1.0 + np.abs(e[fin]))
    bad = err > bound
    assert not bad.any(), (f"{d.name} values differ beyond {tol:.3g} (ops={ops}){where}: worst error "
                           f"{(err - bound).max():.3g}\nactual\n{a}\nexpected\n{e}")


def as_numpy(x) -> np.ndarray:
    return x.numpy() if isinstance(x, pt.Array) else np.asarray(x)
