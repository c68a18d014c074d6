"""NumPy's one-dimensional signal functions: correlate, convolve and interp. All lazy: gathers, products
and sums (correlate/convolve), and a sorted search, gathers and a lerp (interp), fused like any
operation and working inside @pt.jit.
"""
from __future__ import annotations


from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.complex_values import conj_of, from_parts, imag_of, real_of
from poot.trace.array_api_sets import argsort as _argsort, searchsorted as _searchsorted
from poot.trace.indexing import take
from poot.trace.lazy import constant, record
from poot.trace.movement import arr
from poot.trace.selection import where as _sel

__all__: list[str] = []
_export = exporter(globals(), __all__)


# --- signals -------------------------------------------------------------------------------------
def window_index(positions: int, width: int, start: int, device: str) -> Array:
    """The (positions, width) int64 table start + i + j of sliding windows, as a lazy sum of two iotas.

    It is never built on the host: a NumPy table would hold positions * width int64s (8 GB for a
    200k x 1001 convolve) and be uploaded on every call. As iotas the gather computes each index in its
    own kernel, so the host and the graph hold O(1) for it, and the shape alone keys the compiled program.
    """
    shape = (positions, width)
    rows = record("iota", (), {"shape": shape, "axis": 0, "dtype": dt.int64}, device)
    cols = record("iota", (), {"shape": shape, "axis": 1, "dtype": dt.int64}, device)
    idx = record("add", (rows, cols))
    if start:
        idx = record("add", (idx, constant(start, dt.int64, device)))
    return Array(idx)


def _corr_long(a: Array, w: Array, mode: str) -> Array:
    """NumPy's correlate of 1-D a and w with len(a) >= len(w): c[k] = sum_j a[k + j - off] * w[j].

    A gather of the windows of a (zero-padded by m - 1 each side) whose index is computed lazily (see
    window_index), times w, reduced along the window: one fused kernel, O(n + m) memory."""
    n, m = a.shape[0], w.shape[0]
    if mode == "full":
        start, count = 0, n + m - 1
    elif mode == "same":
        start, count = (m - 1) - m // 2, n
    else:
        start, count = m - 1, n - m + 1
    pad = m - 1
    ap = mv.pad(a, (pad, pad))
    idx = window_index(count, m, start, a._node.device)       # rows of the padded a
    d = a.dtype
    # half floats: products and sum in float32, one rounding at the end, as NumPy's dot for them
    work = dt.int64 if d is dt.bool_ else dt.float32 if d in (dt.float16, dt.bfloat16) else d
    prod = ew.multiply(take(ap, idx).astype(work), w.astype(work))
    return red.sum(prod, axis=-1, dtype=work).astype(d)


def _signal_operands(op, a, v, mode):
    if mode not in ("full", "same", "valid"):
        raise ShapeError(f"{op}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    x, y = arr(a, op, (v,)), arr(v, op, (a,))
    x = mv.reshape(x, (-1,)) if x.ndim == 0 else x
    y = mv.reshape(y, (-1,)) if y.ndim == 0 else y
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"{op}: object too deep for desired array (needs 1-D, got {x.aval}, {y.aval})")
    if x.size == 0:
        raise ShapeError(f"{op}: a cannot be empty")
    if y.size == 0:
        raise ShapeError(f"{op}: v cannot be empty")
    d = dt.result_type(x.dtype, y.dtype)
    return x.astype(d), y.astype(d)


def _correlate(a, v, mode="valid"):
    x, y = _signal_operands("correlate", a, v, mode)
    if y.dtype.kind == "c":     # NumPy's correlate conjugates v: c[k] = sum_n a[n + k] * conj(v[n])
        y = conj_of(y)
    if x.shape[0] >= y.shape[0]:
        return _corr_long(x, y, mode)
    return mv.flip(_corr_long(y, x, mode))


def _convolve(a, v, mode="full"):
    x, y = _signal_operands("convolve", a, v, mode)
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return _corr_long(x, mv.flip(y), mode)


_export("correlate", _correlate, "Cross-correlation of two 1-D arrays (modes 'valid', 'same', 'full'), "
                                 "as np.correlate. Lazy: a gather of windows and a row reduction.")
_export("convolve", _convolve, "Discrete linear convolution of two 1-D arrays (modes 'full', 'same', "
                               "'valid'), as np.convolve. Lazy: a gather of windows and a row reduction.")


def _interp(x, xp, fp, left=None, right=None, period=None):
    x, xp, fp = (arr(v, "interp", (x, xp, fp)) for v in (x, xp, fp))
    for name, v in (("x", x), ("xp", xp)):
        if v.dtype.kind == "c":
            raise DTypeError(f"interp: {name} must be real, got {v.dtype.name} (only fp may be complex)")
    if fp.dtype.kind == "c":
        # NumPy interpolates the real and imaginary parts independently (complex128 result)
        re = _interp(x, xp, real_of(fp), _part(left, 0), _part(right, 0), period)
        im = _interp(x, xp, imag_of(fp), _part(left, 1), _part(right, 1), period)
        return from_parts(re, im)
    x = x.astype(dt.float64)
    xp = xp.astype(dt.float64)
    fp = fp.astype(dt.float64)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ShapeError("interp: data points must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise ShapeError("interp: fp and xp are not of the same length")
    if xp.shape[0] == 0:
        raise ShapeError("interp: array of sample points is empty")
    if period is not None:
        if isinstance(period, Array):   # kept lazy (a traced period works); a zero one gives NaN
            if period.ndim != 0:
                raise ShapeError(f"interp: period must be a scalar, got {period.aval}")
            period = ew.abs(period.astype(dt.float64))
        else:
            period = abs(float(period))
            if period == 0:
                raise ShapeError("interp: period must be a non-zero value")
        left = right = None
        x = ew.remainder(x, period)
        xp = ew.remainder(xp, period)
        order = _argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = mv.concatenate([ew.subtract(xp[-1:], period), xp, ew.add(xp[0:1], period)])
        fp = mv.concatenate([fp[-1:], fp, fp[0:1]])
    n = xp.shape[0]
    first, last = xp[0], xp[n - 1]
    left = fp[0] if left is None else left
    right = fp[n - 1] if right is None else right
    if n == 1:
        r = mv.broadcast_to(fp[0], x.shape)
    else:
        j = ew.subtract(_searchsorted(xp, x, side="right"), 1)
        j = ew.minimum(ew.maximum(j, 0), n - 2)
        x0, x1 = take(xp, j), take(xp, ew.add(j, 1))
        y0, y1 = take(fp, j), take(fp, ew.add(j, 1))
        slope = ew.divide(ew.subtract(y1, y0), ew.subtract(x1, x0))
        r = ew.add(ew.multiply(slope, ew.subtract(x, x0)), y0)
        r = _sel(ew.isnan(r), ew.add(ew.multiply(slope, ew.subtract(x, x1)), y1), r)
        r = _sel(ew.logical_and(ew.isnan(r), ew.equal(y0, y1)), y0, r)
        r = _sel(ew.equal(x, x0), _at_knot(y0, slope, x, x0), r)
        r = _sel(ew.equal(x, last), _at_knot(y1, slope, x, x1), r)
    r = _sel(ew.less(x, first), left, r)
    r = _sel(ew.greater(x, last), right, r)
    return r.astype(dt.float64)


def _at_knot(y, slope, x, knot):
    """`y`, interp's exact value at a sample point `x == knot`, written `y + slope * (x - knot)`: the
    added term is zero there, but keeps the value's derivative in `x` (the segment's slope, as JAX
    gives) instead of cutting it. Where the term is not finite (a zero-width segment's infinite
    slope, an infinite knot), the value is `y` alone."""
    term = ew.multiply(slope, ew.subtract(x, knot))
    return _sel(ew.isfinite(term), ew.add(y, term), y)


def _part(value, k: int):
    """The real (k=0) or imaginary (k=1) part of interp's left/right (None stays None)."""
    if value is None:
        return None
    if isinstance(value, Array):
        return real_of(value) if k == 0 else imag_of(value)
    c = complex(value)
    return c.real if k == 0 else c.imag


_export("interp", _interp, "One-dimensional linear interpolation of (xp, fp) at x (float64), as "
                           "np.interp (left, right, period). Lazy: searchsorted, gathers and a lerp.")
