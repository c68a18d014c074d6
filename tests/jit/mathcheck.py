"""Helpers for the mathlib accuracy tests: run one KIR op elementwise on the CPU, measure ulp errors."""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.jit.runtime.launch import launch
from poot import devices

from kir_samples import binary_kernel, unary_kernel

NP = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
      "atanh": np.arctanh, "atan2": np.arctan2, "pow": np.power}


EXTENDED = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant   # x86's 80-bit long double


def reference(op):
    """The float64 reference of `op`: NumPy's ufunc evaluated in long double where that is wider (then
    rounded once to float64), as glibc's float64 functions are off by up to 2 ulps at some inputs
    (acosh(1.0077428062900178): 1.9 ulps); erf comes from SciPy in float64."""
    if op == "erf":
        from scipy.special import erf
        return erf
    fn = NP.get(op) or getattr(np, op)
    if not EXTENDED:
        return fn

    def wide(*args):
        with np.errstate(all="ignore"):
            return fn(*(np.asarray(a, np.float64).astype(np.longdouble) for a in args)).astype(np.float64)
    return wide


def run_op(op, *args):
    dtype = dt.as_dtype(args[0].dtype)
    dev = devices.get("cpu")
    k = unary_kernel(op, dtype) if len(args) == 1 else binary_kernel(op, dtype)
    out = np.zeros_like(args[0])
    launch(dev, k, [dev.wrap(np.ascontiguousarray(a)) for a in args] + [dev.wrap(out)], (), (out.size + 63) // 64)
    return out


def ulp_error(got, ref64, dtype):
    """Max error in ulps of `dtype` between `got` and the float64 reference (special values must match)."""
    got = got.astype(np.float64)
    nan_ref, nan_got = np.isnan(ref64), np.isnan(got)
    if np.any(nan_ref != nan_got):
        i = np.flatnonzero(nan_ref != nan_got)[0]
        return np.inf, i
    ok = ~nan_ref
    with np.errstate(over="ignore"):
        ref_t = ref64.astype(dtype)   # reference rounded to the dtype: ulp measured there
    inf_mismatch = ok & (np.isinf(ref_t) | np.isinf(got)) & (got != ref_t.astype(np.float64))
    if np.any(inf_mismatch):
        # a result that overflows in one and not the other: count it as 1 ulp if they are adjacent
        i = np.flatnonzero(inf_mismatch)
        fin = np.where(np.isinf(got[i]), ref64[i], got[i])
        if np.any(np.abs(fin) < float(np.finfo(dtype).max) * (1 - 2 * float(np.finfo(dtype).eps))):
            return np.inf, i[0]
    finite = ok & np.isfinite(ref_t) & np.isfinite(got)
    sp = np.spacing(np.abs(ref_t[finite]).astype(dtype)).astype(np.float64)
    err = np.abs(got[finite] - ref64[finite]) / sp
    if err.size == 0:
        return 0.0, None
    j = int(np.argmax(err))
    return float(err[j]), int(np.flatnonzero(finite)[j])
