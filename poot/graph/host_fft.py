"""The `fft` host op: NumPy's pocketfft transforms as one host step of a program (see poot.graph.host
for the mechanism), so `pt.fft.*` is lazy and works inside @pt.jit on every device.

The op computes on real values only, which keeps it out of the complex lowering: a complex operand
or result is passed as its parts, a real array of shape S + (2,) (real, imaginary: NumPy's layout;
poot/trace/fft.py views complex arrays so with `bitcast`). Parameters:
- `fn`: the numpy.fft function (fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft);
- `s`: the transform length along each axis of `axes`, already resolved (NumPy's n / s, with the
  defaults of the inverse real transforms, 2 * (m - 1), filled in);
- `axes`: non-negative axes of the complex (or real) array, not of its parts;
- `norm`: "backward", "ortho" or "forward".
The parts' dtype is float32 or float64, and the result has the operand's precision, as NumPy 2's.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError
from poot.graph.aval import Aval
from poot.graph.host import _host

COMPLEX_IN = frozenset({"fft", "ifft", "fftn", "ifftn", "irfft", "irfftn", "hfft"})
COMPLEX_OUT = frozenset({"fft", "ifft", "fftn", "ifftn", "rfft", "rfftn", "ihfft"})
HALF_OUT = frozenset({"rfft", "rfftn", "ihfft"})      # the last axis keeps n // 2 + 1 frequencies
ONE_AXIS = frozenset({"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"})
FUNCTIONS = COMPLEX_IN | COMPLEX_OUT


def _results(avals, fn, s, axes, norm):
    (a,) = avals
    if fn not in FUNCTIONS:
        raise ShapeError(f"fft: unknown transform {fn!r}")
    if a.dtype not in (dt.float32, dt.float64):
        raise DTypeError(f"fft.{fn}: computes on float32 or float64 parts, got {a.dtype.name}")
    shape = list(a.shape)
    if fn in COMPLEX_IN:
        if shape[-1:] != [2]:
            raise ShapeError(f"fft.{fn}: a complex operand is passed as parts (a last axis of 2), "
                             f"got {a.shape}")
        shape = shape[:-1]
    if len(s) != len(axes) or any(not 0 <= ax < len(shape) for ax in axes):
        raise ShapeError(f"fft.{fn}: lengths {s} and axes {axes} do not fit shape {tuple(shape)}")
    for ax, m in zip(axes, s):
        shape[ax] = m
    if fn in HALF_OUT:
        shape[axes[-1]] = s[-1] // 2 + 1
    if fn in COMPLEX_OUT:
        shape.append(2)
    return [Aval(tuple(shape), a.dtype)]


def _compute(xs, fn, s, axes, norm):
    x = np.ascontiguousarray(xs[0])
    real = x.dtype
    if fn in COMPLEX_IN:
        x = x.reshape(-1).view(np.complex64 if real == np.float32 else np.complex128).reshape(x.shape[:-1])
    f = getattr(np.fft, fn)
    r = f(x, n=s[0], axis=axes[0], norm=norm) if fn in ONE_AXIS else f(x, s=s, axes=axes, norm=norm)
    if fn in COMPLEX_OUT:
        r = np.ascontiguousarray(r, dtype=np.complex64 if real == np.float32 else np.complex128)
        return [r.reshape(-1).view(real).reshape(r.shape + (2,))]
    return [np.ascontiguousarray(r, dtype=real)]


_host("fft", _results, _compute, params=("fn", "s", "axes", "norm"))
