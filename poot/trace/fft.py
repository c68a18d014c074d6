"""`pt.fft`: the array API standard's fft extension (2023.12 signatures), with NumPy's arguments.

- fftfreq, rfftfreq, fftshift, ifftshift: lazy, recorded from poot's primitives (iota, arithmetic,
  roll), fused like any operation and usable inside @pt.jit. Their values are NumPy's bit for bit
  (the sample frequencies are integers times 1 / (n * d), computed as NumPy computes them).
- fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn: the `fft` host op
  (poot/graph/host_fft.py), NumPy's pocketfft run as one host step of the program: lazy, usable
  inside @pt.jit, on every device (a GPU program copies the operand to the host and the result
  back). Arguments are checked here as the standard and NumPy ask (n, axis, s, axes, norm), and the
  defaults resolved, so the graph holds the exact lengths. Precision is NumPy 2's: float32 and
  complex64 operands give complex64 (or float32), everything else complex128 (or float64).
"""
from __future__ import annotations

import operator

from poot import dtypes as dt
from poot.errors import AxisError, DTypeError, ShapeError, api_boundary
from poot.trace import context as _dev
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.complex_values import parts
from poot.trace.lazy import record
from poot.trace.selection import where

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

NORMS = ("backward", "ortho", "forward")


# --- frequencies and shifts (lazy) ---------------------------------------------------------------
def _length(n, op: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise DTypeError(f"fft.{op}: n must be an integer, got {type(n).__name__}") from None
    if n <= 0:
        raise ShapeError(f"fft.{op}: n must be positive, got {n}")
    return n


def _freq_dtype(dtype, op: str) -> dt.DType:
    d = dt.float64 if dtype is None else dt.as_dtype(dtype)
    if d.kind != "f":
        raise DTypeError(f"fft.{op}: dtype must be a real floating dtype, got {d.name}")
    return d


def _iota(n: int, device) -> Array:
    dev = _dev.current() if device is None else _dev.canonical(device)
    return Array(record("iota", (), {"shape": (n,), "axis": 0, "dtype": dt.int64}, dev))


@api_boundary
def fftfreq(n, /, d=1.0, *, dtype=None, device=None):     # d positional too, as NumPy's
    """The discrete Fourier transform's sample frequencies for a window of length `n` and sample
    spacing `d`: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (n*d), as NumPy's fftfreq. Lazy."""
    n = _length(n, "fftfreq")
    out = _freq_dtype(dtype, "fftfreq")
    k = _iota(n, device)
    half = (n - 1) // 2 + 1
    k = where(k < half, k, k - n)
    return (k * (1.0 / (n * d))).astype(out)


@api_boundary
def rfftfreq(n, /, d=1.0, *, dtype=None, device=None):     # d positional too, as NumPy's
    """The sample frequencies of rfft for a window of length `n`: [0, 1, ..., n//2] / (n*d), as
    NumPy's rfftfreq. Lazy."""
    n = _length(n, "rfftfreq")
    out = _freq_dtype(dtype, "rfftfreq")
    return (_iota(n // 2 + 1, device) * (1.0 / (n * d))).astype(out)


def _shift_axes(x: Array, axes, op: str) -> tuple:
    if axes is None:
        return tuple(range(x.ndim))
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    return tuple(mv.axis_of(a, x.ndim, f"fft.{op}", x) for a in axes)


def _shift(x, axes, op: str, sign: int):
    x = mv.arr(x)
    ax = _shift_axes(x, axes, op)
    if not ax:
        return x
    return mv.roll(x, tuple(sign * (x.shape[a] // 2) for a in ax), ax)


@api_boundary
def fftshift(x, /, axes=None):
    """`x` with the zero-frequency term moved to the middle of each axis in `axes` (all by default):
    a roll by n//2, as NumPy's fftshift. Lazy."""
    return _shift(x, axes, "fftshift", 1)


@api_boundary
def ifftshift(x, /, axes=None):
    """The inverse of fftshift: a roll by -(n//2) along each axis in `axes` (all by default). Lazy."""
    return _shift(x, axes, "ifftshift", -1)


# --- transforms (host steps over NumPy's pocketfft) ---------------------------------------------
def _check_norm(norm, op: str) -> str:
    """The normalization by name; None is NumPy's spelling of "backward"."""
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ShapeError(f"fft.{op}: norm must be one of {', '.join(map(repr, NORMS))}, got {norm!r}")
    return norm


def _check_operand(x, op: str) -> Array:
    x = mv.arr(x)
    if x.dtype.kind not in "biufc":
        raise DTypeError(f"fft.{op}: unsupported dtype {x.dtype.name}")
    if x.ndim == 0:
        raise ShapeError(f"fft.{op}: needs at least one dimension, got {x.aval}")
    if x.dtype.kind == "c" and op in ("rfft", "rfftn", "ihfft"):
        raise DTypeError(f"fft.{op}: transforms real input, got {x.dtype.name}; take pt.real(x) "
                         f"first, or use fft.{op.replace('rfft', 'fft').replace('ihfft', 'ifft')}")
    return x


def _parts_dtype(d: dt.DType) -> dt.DType:
    """The real dtype the transform computes in: float32 for float32/float16/bfloat16/complex64
    operands, float64 otherwise (NumPy 2's precision rule)."""
    r = dt.real_dtype(d)
    return dt.float32 if r in (dt.float32, dt.float16, dt.bfloat16) else dt.float64


def _transform(x: Array, fn: str, s: tuple, axes: tuple, norm: str) -> Array:
    from poot.graph.host_fft import COMPLEX_IN, COMPLEX_OUT

    work = _parts_dtype(x.dtype)
    if fn in COMPLEX_IN:
        operand = parts(x.astype(dt.complex_dtype(work)))
    else:
        operand = x.astype(work)
    out = record("fft", (operand._node,), {"fn": fn, "s": tuple(s), "axes": tuple(axes), "norm": norm,
                                          "index": 0})
    if fn in COMPLEX_OUT:
        out = record("bitcast", (out,), {"dtype": dt.complex_dtype(work)})
    return Array(out)


def _points(m: int, op: str, x: Array, axis: int) -> int:
    if m < 1:
        raise ShapeError(f"fft.{op}: invalid number of data points ({m}) along axis {axis} of {x.aval}")
    return m


def _inverse_real_length(m: int) -> int:
    """The default output length of irfft and hfft: an input of m frequencies comes from 2 * (m - 1)
    points."""
    return 2 * (m - 1)


def _one_axis(x, n, axis, norm, op: str, fn: str | None = None) -> Array:
    x = _check_operand(x, op)
    norm = _check_norm(norm, op)
    ax = mv.axis_of(axis, x.ndim, f"fft.{op}", x)
    if n is None:
        m = x.shape[ax]
        n = _inverse_real_length(m) if op in ("irfft", "hfft") else m
    else:
        n = _length(n, op)
    return _transform(x, fn or op, (_points(n, op, x, ax),), (ax,), norm)


def _many_axes(x, s, axes, norm, op: str) -> Array:
    x = _check_operand(x, op)
    norm = _check_norm(norm, op)
    axes_t = tuple(range(x.ndim)) if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    if s is not None:
        s = tuple(s)
        if axes is None:
            if len(s) > x.ndim:
                raise ShapeError(f"fft.{op}: s {s} has more entries than {x.aval} has axes")
            axes_t = tuple(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(axes_t):
            raise ShapeError(f"fft.{op}: s {s} and axes {axes_t} must have the same length")
        for m in s:
            if m != -1:
                _length(m, op)
    norm_axes = tuple(mv.axis_of(a, x.ndim, f"fft.{op}", x) for a in axes_t)
    if len(set(norm_axes)) != len(norm_axes):
        raise AxisError(f"fft.{op}: axes {axes_t} repeat an axis")
    if not norm_axes:
        if op in ("fftn", "ifftn"):       # no axis to transform: the operand as complex
            return x.astype(dt.complex_dtype(_parts_dtype(x.dtype)))
        raise AxisError(f"fft.{op}: needs at least one axis to transform")
    lengths = []
    for k, ax in enumerate(norm_axes):
        m = -1 if s is None else s[k]
        if m == -1:
            m = x.shape[ax]
            if op == "irfftn" and k == len(norm_axes) - 1:
                m = _inverse_real_length(m)
        lengths.append(_points(m, op, x, ax))
    return _transform(x, op, tuple(lengths), norm_axes, norm)


@api_boundary
def fft(x, /, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform (complex result), as numpy.fft.fft."""
    return _one_axis(x, n, axis, norm, "fft")


@api_boundary
def ifft(x, /, n=None, axis=-1, norm="backward"):
    """The one-dimensional inverse discrete Fourier transform, as numpy.fft.ifft."""
    return _one_axis(x, n, axis, norm, "ifft")


@api_boundary
def rfft(x, /, n=None, axis=-1, norm="backward"):
    """The transform of real input: the n // 2 + 1 non-negative frequencies, as numpy.fft.rfft."""
    return _one_axis(x, n, axis, norm, "rfft")


@api_boundary
def irfft(x, /, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: n real points (default 2 * (m - 1)), as numpy.fft.irfft."""
    return _one_axis(x, n, axis, norm, "irfft")


@api_boundary
def hfft(x, /, n=None, axis=-1, norm="backward"):
    """The transform of a Hermitian-symmetric signal given by its first half (real result), as
    numpy.fft.hfft."""
    return _one_axis(x, n, axis, norm, "hfft")


@api_boundary
def ihfft(x, /, n=None, axis=-1, norm="backward"):
    """The inverse of hfft (n // 2 + 1 complex values of a real input), as numpy.fft.ihfft."""
    return _one_axis(x, n, axis, norm, "ihfft")


@api_boundary
def fftn(x, /, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform, as numpy.fft.fftn."""
    return _many_axes(x, s, axes, norm, "fftn")


@api_boundary
def ifftn(x, /, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse transform, as numpy.fft.ifftn."""
    return _many_axes(x, s, axes, norm, "ifftn")


@api_boundary
def rfftn(x, /, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of real input (the last axis halved), as numpy.fft.rfftn."""
    return _many_axes(x, s, axes, norm, "rfftn")


@api_boundary
def irfftn(x, /, s=None, axes=None, norm="backward"):
    """The inverse of rfftn (real result), as numpy.fft.irfftn."""
    return _many_axes(x, s, axes, norm, "irfftn")


# NumPy's two-dimensional spellings
@api_boundary
def fft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """fftn over the last two axes, as numpy.fft.fft2."""
    return _many_axes(x, s, axes, norm, "fftn")


@api_boundary
def ifft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """ifftn over the last two axes, as numpy.fft.ifft2."""
    return _many_axes(x, s, axes, norm, "ifftn")


@api_boundary
def rfft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """rfftn over the last two axes, as numpy.fft.rfft2."""
    return _many_axes(x, s, axes, norm, "rfftn")


@api_boundary
def irfft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """irfftn over the last two axes, as numpy.fft.irfft2."""
    return _many_axes(x, s, axes, norm, "irfftn")


def __dir__():
    """The public names (`__all__`), not the modules and helpers this file imports (what tab
    completion offers)."""
    return sorted(__all__)
