"""More of NumPy's everyday functions, each built from poot's lazy operations (so all of them fuse
and work inside @pt.jit): statistics (ptp, average), elementwise functions (nan_to_num, divmod, modf,
fmod, fabs, heaviside, sinc, isposinf, isneginf), binning (digitize), differences and sums (ediff1d,
trapezoid), matrices (diag, diagflat, tri, vander, kron, cross), flips and splits (rot90, fliplr,
flipud, hsplit, vsplit, dsplit), spaced values (logspace, geomspace) and the signal windows
(hanning, hamming, blackman, bartlett).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, exporter
from poot.graph import broadcast_shapes
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.array_api_sets import searchsorted
from poot.trace.creation import arange, full, linspace, zeros
from poot.trace.indexing import take
from poot.trace.lazy import is_tracing
from poot.trace.linalg import diagonal
from poot.trace.movement import arr, axis_of
from poot.trace.promote import float_of, promote
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


# --- statistics ----------------------------------------------------------------------------------
def _ptp(a, axis=None, out=None, keepdims=False):
    x = arr(a)
    return ew.subtract(red.max(x, axis=axis, keepdims=keepdims), red.min(x, axis=axis, keepdims=keepdims))


def _average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    x = arr(a)
    if weights is None:
        avg = red.mean(x, axis=axis, keepdims=keepdims)
        count = x.size // max(avg.size, 1) if x.size else 0
        return (avg, full(avg.shape, count, dtype=avg.dtype)) if returned else avg
    w = arr(weights)
    kinds = [x.dtype] if x.dtype.kind in "fc" else [x.dtype, dt.float64]
    d = dt.result_type(*kinds, w.dtype)
    if w.shape != x.shape:
        if axis is None:
            raise ShapeError(f"average: weights {w.aval} differ from a {x.aval}; give axis= with 1-D "
                             f"weights")
        if isinstance(axis, (tuple, list)) or w.ndim != 1:
            raise ShapeError(f"average: 1-D weights need one axis, got axis={axis!r} and {w.aval}")
        ax = axis_of(axis, x.ndim, "average", x)
        if w.shape[0] != x.shape[ax]:
            raise ShapeError(f"average: length of weights {w.shape[0]} differs from axis {ax} of {x.aval}")
        w = mv.reshape(w, tuple(w.shape[0] if k == ax else 1 for k in range(x.ndim)))
        w = mv.broadcast_to(w, x.shape)
    w = w.astype(d)
    scale = red.sum(w, axis=axis, keepdims=keepdims)
    avg = ew.divide(red.sum(ew.multiply(x.astype(d), w), axis=axis, keepdims=keepdims), scale)
    return (avg, mv.broadcast_to(scale, avg.shape)) if returned else avg


_export("ptp", _ptp, "Range of values (maximum - minimum) along `axis`, as np.ptp. Lazy.")
_export("average", _average, "Weighted average along `axis` (np.average: 1-D weights along one axis, "
                             "returned=True also gives the sum of weights). Lazy.")


# --- elementwise functions -------------------------------------------------------------------------
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = arr(x)
    if x.dtype.kind in "biu":
        return x
    if x.dtype.kind == "c":
        from poot.trace.complex_values import from_parts, imag_of, real_of

        parts = [_nan_to_num(p, True, nan, posinf, neginf) for p in (real_of(x), imag_of(x))]
        return from_parts(*parts).astype(x.dtype)
    info = dt.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    y = where(ew.isnan(x), nan, x)
    y = where(ew.logical_and(ew.isinf(x), ew.greater(x, 0)), hi, y)
    return where(ew.logical_and(ew.isinf(x), ew.less(x, 0)), lo, y).astype(x.dtype)


def _divmod(x1, x2):
    return ew.floor_divide(x1, x2), ew.remainder(x1, x2)


def _modf(x):
    x = arr(x)
    if x.dtype.kind == "c":
        raise DTypeError("modf: complex input is not supported (as NumPy)")
    x = x.astype(float_of(x.dtype))
    whole = ew.trunc(x)
    frac = where(ew.isinf(x), 0.0, ew.subtract(x, whole)).astype(x.dtype)
    return ew.copysign(frac, x), whole


def _magnitude(v, d):
    """|v|, keeping a Python scalar weak (so it does not widen the other operand's dtype); an array is
    cast to the result dtype `d` first, as |INT_MIN| overflows its own integer dtype."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return abs(v)
    return ew.abs(arr(v).astype(d))


def _fmod(x1, x2):
    r = ew.remainder(x1, x2)
    if r.dtype.kind == "c":
        raise DTypeError("fmod: complex input is not supported (as NumPy)")
    negative_dividend = ew.less(x1, 0)
    if r.dtype.kind in "iu":     # truncated division: the remainder takes the dividend's sign
        flip = ew.logical_and(ew.not_equal(r, 0), ew.not_equal(ew.less(r, 0), negative_dividend))
        return where(flip, ew.subtract(r, x2), r).astype(r.dtype)
    m = ew.remainder(_magnitude(x1, r.dtype), _magnitude(x2, r.dtype)).astype(r.dtype)   # both non-negative: exact
    return where(ew.logical_or(negative_dividend, ew.signbit(arr(x1).astype(r.dtype))), ew.negative(m), m)


def _fabs(x):
    x = arr(x)
    if x.dtype.kind == "c":
        raise DTypeError("fabs: complex input is not supported (use pt.abs)")
    return ew.abs(x.astype(float_of(x.dtype)))


def _heaviside(x1, x2):
    d = ew.float_pair(*promote("heaviside", (x1, x2))[:2], "heaviside")     # a Python scalar x2 stays weak
    x, h0 = arr(x1), arr(x2)
    step = where(ew.less(x, 0), 0.0, 1.0).astype(d)
    return where(ew.isnan(x), x.astype(d), where(ew.equal(x, 0), h0.astype(d), step))


def _sinc(x):
    x = arr(x)
    # NumPy computes where(x == 0, 1e-20, x): a Python float makes bools and integers float64
    x = x.astype(dt.float64) if x.dtype.kind in "biu" else x
    y = ew.multiply(x, math.pi)
    safe = where(ew.equal(y, 0), 1.0e-20, y).astype(y.dtype)
    return where(ew.equal(y, 0), 1.0, ew.divide(ew.sin(safe), safe)).astype(y.dtype)


def _isposinf(x, out=None):
    x = arr(x)
    return ew.logical_and(ew.isinf(x), ew.logical_not(ew.signbit(x)))


def _isneginf(x, out=None):
    x = arr(x)
    return ew.logical_and(ew.isinf(x), ew.signbit(x))


_export("nan_to_num", _nan_to_num, "NaN -> `nan`, +inf -> `posinf`, -inf -> `neginf` (the dtype's "
                                   "largest finite values by default); complex parts each. Lazy.")
_export("divmod", _divmod, "(floor_divide(x1, x2), remainder(x1, x2)). Lazy.")
_export("modf", _modf, "(fractional part, integral part), both with the sign of x. Lazy.")
_export("fmod", _fmod, "C's fmod: the remainder with the sign of the dividend x1. Lazy.")
_export("fabs", _fabs, "Absolute value of real numbers as floats. Lazy.")
_export("heaviside", _heaviside, "0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays). Lazy.")
_export("sinc", _sinc, "sin(pi x) / (pi x), 1 at 0. Lazy.")
_export("isposinf", _isposinf, "Whether each element is +inf. Lazy.")
_export("isneginf", _isneginf, "Whether each element is -inf. Lazy.")


# --- binning, differences and sums ---------------------------------------------------------------
def _digitize(x, bins, right=False):
    x, b = arr(x), arr(bins)
    if x.dtype.kind == "c":      # NumPy refuses: bins of complex values have no order to place them in
        raise DTypeError(f"digitize: x may not be complex, got {x.dtype}")
    if b.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-dimensional, got {b.aval}")
    if not isinstance(bins, Array):
        steps = np.diff(np.asarray(bins))
        if not ((steps >= 0).all() or (steps <= 0).all()):
            raise ShapeError("digitize: bins must be monotonically increasing or decreasing")
    if b.shape[0] == 0:
        return zeros(x.shape, dtype=dt.int64)
    side = "left" if right else "right"
    rising = searchsorted(b, x, side=side)
    if b.shape[0] == 1:
        return rising
    falling = ew.subtract(b.shape[0], searchsorted(mv.flip(b), x, side=side))
    return where(_bins_fall(b), falling, rising)


def _bins_fall(b: Array) -> Array:
    """Whether digitize's bins decrease, decided as NumPy decides it: by the first two neighbours that
    differ (NaN differs from everything), rising only where the first is less than the second. So
    bins rising to NaNs at the end, the order searchsorted keeps, still rise, where comparing the
    first and last bin would call them falling."""
    prev, nxt = b[:-1], b[1:]
    differ = ew.not_equal(nxt, prev)
    first = red.argmax(differ)
    rises = ew.less(take(prev, first), take(nxt, first))
    return ew.logical_and(red.any(differ), ew.logical_not(rises))


def _ediff1d(ary, to_end=None, to_begin=None):
    x = mv.reshape(arr(ary), (-1,))
    d = ew.subtract(x[1:], x[:-1]) if x.shape[0] > 1 else x[:0]
    pieces = [mv.reshape(arr(v).astype(d.dtype), (-1,)) for v in (to_begin,) if v is not None]
    pieces += [d] + [mv.reshape(arr(v).astype(d.dtype), (-1,)) for v in (to_end,) if v is not None]
    return mv.concatenate(pieces) if len(pieces) > 1 else d


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    y = arr(y)
    ax = axis_of(axis, y.ndim, "trapezoid", y)
    n = y.shape[ax]

    def part(v, start, stop):
        return take(v, np.arange(start, stop), axis=ax if v.ndim == y.ndim else 0)

    if x is None:
        widths = dx
    else:
        xs = arr(x)
        widths = ew.subtract(part(xs, 1, n), part(xs, 0, n - 1))
        if xs.ndim == 1 and y.ndim > 1:
            widths = mv.reshape(widths, tuple(n - 1 if k == ax else 1 for k in range(y.ndim)))
    mids = ew.divide(ew.add(part(y, 1, n), part(y, 0, n - 1)), 2.0)
    return red.sum(ew.multiply(widths, mids), axis=ax)


_export("digitize", _digitize, "The index of the bin each x falls in (np.digitize: increasing or "
                               "decreasing bins, right=). Lazy: a sorted search.")
_export("ediff1d", _ediff1d, "Differences of the flattened array, with to_begin/to_end joined. Lazy.")
_export("trapezoid", _trapezoid, "Integral along `axis` by the trapezoidal rule (sample points x or "
                                 "spacing dx). Lazy.")


# --- matrices ------------------------------------------------------------------------------------
def _diag(v, k=0):
    x = arr(v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, offset=k)
    if x.ndim != 1:
        raise ShapeError(f"diag: input must be 1- or 2-D, got {x.aval}")
    n = x.shape[0] + abs(k)
    rows = mv.reshape(arange(n), (n, 1))
    cols = mv.reshape(arange(n), (1, n))
    pick = rows if k >= 0 else cols
    vals = take(x, pick, mode="clip") if x.shape[0] else zeros((n, n), dtype=x.dtype)
    return where(ew.equal(ew.subtract(cols, rows), k), vals, zeros((), dtype=x.dtype))


def _diagflat(v, k=0):
    return _diag(mv.reshape(arr(v), (-1,)), k)


def _tri(N, M=None, k=0, dtype=float, *, like=None):
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    rows = mv.reshape(arange(n), (n, 1))
    return ew.less_equal(mv.reshape(arange(m), (1, m)), ew.add(rows, operator.index(k))).astype(
        dt.as_dtype(dtype))


def _vander(x, N=None, increasing=False):
    x = arr(x)
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional array or sequence, got {x.aval}")
    n = x.shape[0] if N is None else operator.index(N)
    powers = arange(n) if increasing else arange(n - 1, -1, -1)
    if x.dtype is dt.bool_:
        x = x.astype(dt.int64)
    return ew.power(mv.reshape(x, (-1, 1)), powers.astype(x.dtype if x.dtype.kind in "iu" else dt.int64))


def _kron(a, b):
    x, y = arr(a), arr(b)
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    xr = mv.reshape(x, tuple(v for s in xs for v in (s, 1)))
    yr = mv.reshape(y, tuple(v for s in ys for v in (1, s)))
    return mv.reshape(ew.multiply(xr, yr), tuple(p * q for p, q in zip(xs, ys)))


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x, y = arr(a), arr(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = mv.moveaxis(x, axis_of(axisa, x.ndim, "cross", x), -1)
    y = mv.moveaxis(y, axis_of(axisb, y.ndim, "cross", y), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ShapeError(f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), "
                         f"got {x.aval} and {y.aval}")
    a0, a1 = x[..., 0], x[..., 1]
    b0, b1 = y[..., 0], y[..., 1]
    z = ew.subtract(ew.multiply(a0, b1), ew.multiply(a1, b0))
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return z
    a2 = x[..., 2] if x.shape[-1] == 3 else zeros((), dtype=x.dtype)
    b2 = y[..., 2] if y.shape[-1] == 3 else zeros((), dtype=y.dtype)
    cx = ew.subtract(ew.multiply(a1, b2), ew.multiply(a2, b1))
    cy = ew.subtract(ew.multiply(a2, b0), ew.multiply(a0, b2))
    c = mv.stack(mv.broadcast_arrays(cx, cy, z), axis=-1)
    return mv.moveaxis(c, -1, axis_of(axisc, c.ndim, "cross", c))


_export("diag", _diag, "The k-th diagonal of a 2-D array, or a 2-D array with 1-D v on its k-th "
                       "diagonal. Lazy.")
_export("diagflat", _diagflat, "A 2-D array with the flattened input on its k-th diagonal. Lazy.")
_export("tri", _tri, "Ones at and below the k-th diagonal of an (N, M) array. Lazy.")
_export("vander", _vander, "The Vandermonde matrix of x (decreasing powers unless increasing). Lazy.")
_export("kron", _kron, "Kronecker product of two arrays. Lazy.")
_export("cross", _cross, "Cross product of 3-vectors (or 2-vectors: the z component) along an axis. "
                         "Lazy.")


# --- flips and splits ----------------------------------------------------------------------------
def _rot90(m, k=1, axes=(0, 1)):
    x = arr(m)
    if len(axes) != 2:
        raise ShapeError(f"rot90: axes must name two axes, got {axes!r}")
    a0, a1 = (axis_of(a, x.ndim, "rot90", x) for a in axes)
    if a0 == a1:
        raise ShapeError(f"rot90: axes must be different, got {axes!r}")
    k = operator.index(k) % 4
    if k == 0:
        return x.copy()
    if k == 2:
        return mv.flip(mv.flip(x, axis=a0), axis=a1)
    if k == 1:
        return mv.swapaxes(mv.flip(x, axis=a1), a0, a1)
    return mv.flip(mv.swapaxes(x, a0, a1), axis=a1)


def _flip_axis(name: str, axis: int, least: int):
    def flip(m):
        x = arr(m)
        if x.ndim < least:
            raise ShapeError(f"{name}: input must be at least {least}-d, got {x.aval}")
        return mv.flip(x, axis=axis)

    return flip


def _split_along(name: str, axis_for, least: int):
    def split(ary, indices_or_sections):
        x = arr(ary)
        if x.ndim < least:
            raise ShapeError(f"{name} only works on arrays of {least} or more dimensions, got {x.aval}")
        return mv.split(x, indices_or_sections, axis=axis_for(x))

    return split


_export("rot90", _rot90, "Rotate by 90 degrees k times in the plane of `axes`. Lazy.")
_export("fliplr", _flip_axis("fliplr", 1, 2), "Reverse the order of columns (axis 1). Lazy.")
_export("flipud", _flip_axis("flipud", 0, 1), "Reverse the order of rows (axis 0). Lazy.")
_export("hsplit", _split_along("hsplit", lambda x: 1 if x.ndim > 1 else 0, 1),
        "Split along axis 1 (axis 0 for 1-D arrays), as np.split. Lazy.")
_export("vsplit", _split_along("vsplit", lambda x: 0, 2), "Split along axis 0, as np.split. Lazy.")
_export("dsplit", _split_along("dsplit", lambda x: 2, 3), "Split along axis 2, as np.split. Lazy.")


# --- spaced values -------------------------------------------------------------------------------
def _scalar(v, op: str, name: str) -> float:
    if isinstance(v, Array) or np.ndim(v) != 0:
        raise ShapeError(f"{op}: only scalar {name} is supported (a 1-D result), got {v!r}")
    if np.iscomplexobj(v):
        raise DTypeError(f"{op}: complex {name} is not supported")
    return float(v)


def _is_real_scalar(v) -> bool:
    return not isinstance(v, Array) and np.ndim(v) == 0 and not np.iscomplexobj(v)


def _ndmin(v, ndim: int) -> Array:
    """`v` as an array with at least `ndim` axes (NumPy's array(v, ndmin=ndim))."""
    a = v if isinstance(v, Array) else arr(np.asarray(v))
    return a.reshape((1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a


def _logspace_arrays(start, stop, num, endpoint, base, axis):
    """NumPy's logspace for array (or complex) start, stop or base: base ** linspace(start, stop),
    the samples along `axis`. An array `base` broadcasts against the ends (all three become arrays
    of one rank, base gaining the samples' axis); a scalar base stays a weak Python number."""
    shapes = [v.shape if isinstance(v, Array) else np.shape(v) for v in (start, stop, base)]
    broadcast_shapes(*shapes, op="logspace")         # names the call when start, stop, base don't fit
    if isinstance(base, Array) or np.ndim(base):
        ndim = max(np.ndim(v) if not isinstance(v, Array) else v.ndim for v in (start, stop, base))
        start, stop, base = (_ndmin(v, ndim) for v in (start, stop, base))
        y = linspace(start, stop, num, endpoint=endpoint, axis=axis)
        base = mv.expand_dims(base, axis_of(axis, y.ndim, "logspace", y))
    else:
        y = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return ew.power(base, y)


def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not all(_is_real_scalar(v) for v in (start, stop, base)):
        y = _logspace_arrays(start, stop, operator.index(num), endpoint, base, axis)
        return y if dtype is None else y.astype(dtype)
    start, stop = _scalar(start, "logspace", "start"), _scalar(stop, "logspace", "stop")
    y = ew.power(_scalar(base, "logspace", "base"), linspace(start, stop, num, endpoint=endpoint))
    return y if dtype is None else y.astype(dtype)


def _geomspace_arrays(start, stop, num, endpoint, dtype, axis):
    """NumPy's geomspace for array (or complex) ends: the samples run along `axis`, computed as
    sign * 10 ** linspace(log10(start / sign), log10(stop / sign)) with sign = sign(start) (so
    negative and complex ends work), the ends set exactly. A zero end raises, as NumPy's does, when the
    ends are host values or eager arrays (read once here); a traced zero end gives NaN or infinity, as
    NumPy's formula would."""
    for v in (start, stop):
        if isinstance(v, Array):
            zero = not is_tracing() and bool(red.any(ew.equal(v, 0)))
        else:
            zero = bool(np.any(np.asarray(v) == 0))
        if zero:
            raise ShapeError("geomspace: geometric sequence cannot include zero")
    a, b = (ew.multiply(_ndmin(v, 0), 1.0) for v in (start, stop))
    broadcast_shapes(a.shape, b.shape, op="geomspace")
    work = dt.result_type(a.dtype, b.dtype, dt.float64)   # NumPy: at least float64 (complex128)
    a, b = a.astype(work), b.astype(work)
    sign = ew.sign(a)
    a, b = ew.divide(a, sign), ew.divide(b, sign)
    y = _logspace_arrays(ew.log10(a), ew.log10(b), num, endpoint, 10.0, 0)
    if num > 0:                  # NumPy sets the ends exactly
        pos = arange(num).reshape((num,) + (1,) * (y.ndim - 1))
        y = where(ew.equal(pos, 0), a, y)
        if endpoint and num > 1:
            y = where(ew.equal(pos, num - 1), b, y)
    y = ew.multiply(y, sign)
    y = mv.moveaxis(y, 0, axis) if axis != 0 else y
    return y.astype(work if dtype is None else dtype)


def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if not all(_is_real_scalar(v) for v in (start, stop)):
        return _geomspace_arrays(start, stop, operator.index(num), endpoint, dtype, axis)
    start, stop = _scalar(start, "geomspace", "start"), _scalar(stop, "geomspace", "stop")
    if start == 0 or stop == 0:
        raise ShapeError("geomspace: geometric sequence cannot include zero")
    sign = 1.0
    if start < 0 and stop < 0:
        sign, start, stop = -1.0, -start, -stop
    elif start < 0 or stop < 0:
        raise DTypeError("geomspace: start and stop of opposite signs need complex numbers, which "
                         "geomspace does not build")
    y = ew.power(10.0, linspace(math.log10(start), math.log10(stop), num, endpoint=endpoint))
    n = operator.index(num)
    if n > 0:                    # NumPy sets the ends exactly
        pos = arange(n)
        y = where(ew.equal(pos, 0), start, y)
        if endpoint and n > 1:
            y = where(ew.equal(pos, n - 1), stop, y)
    y = ew.multiply(y, sign)
    return y if dtype is None else y.astype(dtype)


_export("logspace", _logspace, "`num` values spaced evenly on a log scale: base ** linspace(start, "
                               "stop); array ends or base broadcast (the samples along axis). Lazy.")
_export("geomspace", _geomspace, "`num` values spaced evenly on a log scale from start to stop (ends "
                                 "exact); array or complex ends broadcast (the samples along axis). Lazy.")


# --- signal windows ------------------------------------------------------------------------------
def _window(name: str, shape_of):
    """A window of M points from n = 1-M, 3-M, ..., M-1 (NumPy's formulas, float64)."""
    def window(M):
        m = operator.index(M)
        if m < 1:
            return zeros((0,), dtype=dt.float64)
        if m == 1:
            return full((1,), 1.0, dtype=dt.float64)
        n = arange(1 - m, m, 2, dtype=dt.float64)
        return shape_of(n, float(m - 1)).astype(dt.float64)

    window.__name__ = name
    return window


def _cosines(*coefs):
    def shape_of(n, span):
        out = coefs[0]
        for k, c in enumerate(coefs[1:], start=1):
            out = ew.add(out, ew.multiply(c, ew.cos(ew.multiply(n, k * math.pi / span))))
        return out

    return shape_of


_export("hanning", _window("hanning", _cosines(0.5, 0.5)), "The Hann window of M points. Lazy.")
_export("hamming", _window("hamming", _cosines(0.54, 0.46)), "The Hamming window of M points. Lazy.")
_export("blackman", _window("blackman", _cosines(0.42, 0.5, 0.08)), "The Blackman window of M points. "
                                                                     "Lazy.")
def _triangle(n, span):
    return where(ew.less_equal(n, 0), ew.add(1.0, ew.divide(n, span)), ew.subtract(1.0, ew.divide(n, span)))


_export("bartlett", _window("bartlett", _triangle), "The Bartlett (triangular) window of M points. Lazy.")


def _as_ufuncs() -> None:
    """fmod and heaviside are NumPy ufuncs (np.fmod.reduce, np.heaviside.outer): poot Ufuncs too."""
    from poot.trace.ufunc import Ufunc

    for name in ("fmod", "heaviside"):
        globals()[name] = Ufunc(globals()[name], name, None, False)


_as_ufuncs()
