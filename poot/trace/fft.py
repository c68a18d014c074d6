"""`pt.fft`: the array API standard's fft extension (2023.12 signatures).

- fftfreq, rfftfreq, fftshift, ifftshift: lazy, recorded from poot's primitives (iota, arithmetic,
  roll), fused like any operation and usable inside @pt.jit. Their values are NumPy's bit for bit
  (the sample frequencies are integers times 1 / (n * d), computed as NumPy computes them).
- fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn: each takes or returns complex
  values, and poot has no complex dtypes yet. Their arguments are checked as the standard asks
  (n, axis, s, axes, norm), then they raise NotBuiltError naming the missing complex support. Once
  poot.dtypes has complex dtypes, they become host steps over NumPy's pocketfft (the mechanism of
  poot.graph.host, which sort and eigh use), with `_check_*` below as their argument rules.
"""
from __future__ import annotations

import operator

from poot import dtypes as dt
from poot.errors import AxisError, DTypeError, NotBuiltError, ShapeError, api_boundary
from poot.trace import context as _dev
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.lazy import record
from poot.trace.selection import where

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

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
def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The discrete Fourier transform's sample frequencies for a window of length `n` and sample
    spacing `d`: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (n*d), as NumPy's fftfreq. Lazy."""
    n = _length(n, "fftfreq")
    out = _freq_dtype(dtype, "fftfreq")
    k = _iota(n, device)
    half = (n - 1) // 2 + 1
    k = where(k < half, k, k - n)
    return (k * (1.0 / (n * d))).astype(out)


@api_boundary
def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
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
def fftshift(x, /, *, axes=None):
    """`x` with the zero-frequency term moved to the middle of each axis in `axes` (all by default):
    a roll by n//2, as NumPy's fftshift. Lazy."""
    return _shift(x, axes, "fftshift", 1)


@api_boundary
def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift: a roll by -(n//2) along each axis in `axes` (all by default). Lazy."""
    return _shift(x, axes, "ifftshift", -1)


# --- transforms (complex values: not built until poot has complex dtypes) ------------------------
def _check_norm(norm, op: str) -> None:
    if norm not in NORMS:
        raise ShapeError(f"fft.{op}: norm must be one of {', '.join(map(repr, NORMS))}, got {norm!r}")


def _check_operand(x, op: str) -> Array:
    x = mv.arr(x)
    if x.dtype.kind not in "biuf":
        raise DTypeError(f"fft.{op}: unsupported dtype {x.dtype.name}")
    if x.ndim == 0:
        raise ShapeError(f"fft.{op}: needs at least one dimension, got {x.aval}")
    return x


def _check_1d(x, n, axis, norm, op: str) -> Array:
    x = _check_operand(x, op)
    _check_norm(norm, op)
    mv.axis_of(axis, x.ndim, f"fft.{op}", x)
    if n is not None:
        _length(n, op)
    return x


def _check_nd(x, s, axes, norm, op: str) -> Array:
    x = _check_operand(x, op)
    _check_norm(norm, op)
    axes_t = tuple(range(x.ndim)) if axes is None else tuple(axes)
    if s is not None:
        s = tuple(s)
        if axes is None:
            axes_t = tuple(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(axes_t):
            raise ShapeError(f"fft.{op}: s {s} and axes {axes_t} must have the same length")
        for m in s:
            if m != -1:
                _length(m, op)
    norm_axes = [mv.axis_of(a, x.ndim, f"fft.{op}", x) for a in axes_t]
    if len(set(norm_axes)) != len(norm_axes):
        raise AxisError(f"fft.{op}: axes {axes_t} repeat an axis")
    return x


def _complex_not_built(op: str, why: str):
    raise NotBuiltError(f"fft.{op}: complex dtypes are not supported yet ({why}); compute it with "
                        f"numpy.fft.{op}(x.numpy()) on the host")


_RESULT = "its result is complex"
_INPUT = "its input is a complex Hermitian spectrum"


@api_boundary
def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform (complex result: not built yet)."""
    _check_1d(x, n, axis, norm, "fft")
    _complex_not_built("fft", _RESULT)


@api_boundary
def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional inverse discrete Fourier transform (complex result: not built yet)."""
    _check_1d(x, n, axis, norm, "ifft")
    _complex_not_built("ifft", _RESULT)


@api_boundary
def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional transform of real input (complex result: not built yet)."""
    _check_1d(x, n, axis, norm, "rfft")
    _complex_not_built("rfft", _RESULT)


@api_boundary
def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft (real result of a complex input: not built yet)."""
    _check_1d(x, n, axis, norm, "irfft")
    _complex_not_built("irfft", _INPUT)


@api_boundary
def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a Hermitian-symmetric signal (real result of a complex input: not built yet)."""
    _check_1d(x, n, axis, norm, "hfft")
    _complex_not_built("hfft", _INPUT)


@api_boundary
def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft (complex result: not built yet)."""
    _check_1d(x, n, axis, norm, "ihfft")
    _complex_not_built("ihfft", _RESULT)


@api_boundary
def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform (complex result: not built yet)."""
    _check_nd(x, s, axes, norm, "fftn")
    _complex_not_built("fftn", _RESULT)


@api_boundary
def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse transform (complex result: not built yet)."""
    _check_nd(x, s, axes, norm, "ifftn")
    _complex_not_built("ifftn", _RESULT)


@api_boundary
def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of real input (complex result: not built yet)."""
    _check_nd(x, s, axes, norm, "rfftn")
    _complex_not_built("rfftn", _RESULT)


@api_boundary
def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn (real result of a complex input: not built yet)."""
    _check_nd(x, s, axes, norm, "irfftn")
    _complex_not_built("irfftn", _INPUT)
