"""NumPy's statistics beyond the array API standard: the nan-ignoring reductions (nansum ... nanargmin,
nancumsum, nancumprod), the order statistics (median, percentile, quantile and their nan forms) and
cov/corrcoef, all lazy: recorded from poot's primitives, the order statistics sorting with the `sort`
host op and gathering (they work inside @pt.jit). Also the helpers poot/trace/numpy_more.py shares with them."""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import DomainError, DTypeError, PootIndexError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.array_api_sets import argsort as _argsort
from poot.trace.array_api_sets import sort as _sort
from poot.trace.complex_values import conj_of, from_parts, imag_of, real_of
from poot.trace.creation import full, zeros
from poot.trace.indexing import take_along_axis
from poot.trace.lazy import from_numpy, is_tracing
from poot.trace.movement import arr, axes_of, axis_of
from poot.trace.selection import where as _sel

__all__: list[str] = []
_export = exporter(globals(), __all__)

_HALF = (dt.float16, dt.bfloat16)

def _leaf(a, device, dtype=None) -> Array:
    return Array(from_numpy(np.asarray(a), device, dtype))


def _float_dtype(d: dt.DType) -> dt.DType:
    """The float dtype NumPy's statistics compute in: floats keep theirs, others become float64."""
    return d if d.kind == "f" else dt.float64


def _to_last(x: Array, axis):
    """(x with the reduced axes merged into one last axis, the reduced axes, the kept shape)."""
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = axes_of(axis, x.ndim, "axis", x)
    kept = [i for i in range(x.ndim) if i not in axes]
    y = mv.permute_dims(x, tuple(kept) + tuple(axes)) if x.ndim else x
    n = math.prod(x.shape[a] for a in axes)
    return mv.reshape(y, tuple(x.shape[i] for i in kept) + (n,)), axes, tuple(x.shape[i] for i in kept)


def _keep(r: Array, ndim: int, axes, lead: int = 0) -> Array:
    """Result `r` (lead extra axes first, then the kept axes) with size-1 axes at `axes` (keepdims)."""
    shape = list(r.shape[lead:])
    for a in sorted(axes):
        shape.insert(a, 1)
    return mv.reshape(r, r.shape[:lead] + tuple(shape))


def _nan_safe(x: Array, fill) -> Array:
    """`x` with its NaNs (complex: values with a NaN part) replaced by `fill`; a real infinite fill
    becomes (fill, fill) for complex `x`, the lexicographic extreme."""
    if x.dtype.kind == "c" and isinstance(fill, float) and math.isinf(fill):
        fill = complex(fill, fill)
    return _sel(ew.isnan(x), fill, x) if x.dtype.kind in "fc" else x


# --- nan-ignoring reductions ---------------------------------------------------------------------
def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    x = arr(a)
    return red.sum(_nan_safe(x, 0), axis, dtype, out, keepdims, initial, where)


def _nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    x = arr(a)
    return red.prod(_nan_safe(x, 1), axis, dtype, out, keepdims, initial, where)


def _valid(x: Array, where=True, skip_nan: bool = True) -> Array:
    """The elements a nan-reduction counts: not NaN (skip_nan, float/complex x) and selected by
    `where` (NumPy's where=, broadcast against x), as a bool array of x's shape."""
    ok = ew.logical_not(ew.isnan(x)) if skip_nan and x.dtype.kind in "fc" else \
        mv.broadcast_to(_leaf(True, x.device), x.shape)
    if where is not True:
        w = arr(where, "where", (x,))
        if w.dtype is not dt.bool_:
            w = w.astype(dt.bool_)
        ok = ew.logical_and(ok, mv.broadcast_to(w, x.shape))
    return ok


def _count_valid(x: Array, axis, keepdims, where=True):
    return red.sum(_valid(x, where), axis=axis, keepdims=keepdims)


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    x = arr(a)
    if x.dtype.kind not in "fc":    # complex values have NaNs too (either part): they are skipped
        return red.mean(x, axis, dtype, out, keepdims, where=where)
    d = dt.as_dtype(dtype) if dtype is not None else x.dtype
    tot = red.sum(_nan_safe(x, 0), axis, d, out, keepdims, where=where)
    cnt = _count_valid(x, axis, keepdims, where)
    return ew.divide(tot, cnt.astype(d))


def _var_parts(x, axis, dtype, ddof, keepdims, correction, where=True, mean=None, nan_aware=True):
    """(variance, result dtype) of the elements of x selected by `where` (and not NaN, nan_aware),
    about `mean` when given (NumPy's mean=: a precomputed mean, broadcast against x, as
    keepdims=True gives it) else about their mean. nan_aware gives NaN where the degrees of freedom
    are <= 0 (np.nanvar); otherwise the sum is divided by max(count - ddof, 0) (np.var)."""
    if correction is not None:
        ddof = correction
    d = dt.as_dtype(dtype) if dtype is not None else _float_dtype(x.dtype) if x.dtype.kind != "c" \
        else x.dtype
    work = dt.float32 if d in _HALF else d
    ok = _valid(x, where, nan_aware)
    xv = _sel(ok, x, 0).astype(work)
    # the count stays real: complex deviations are measured by |dev|**2, a real variance (NumPy's)
    cnt = red.sum(ok, axis=axis, keepdims=True).astype(dt.real_dtype(work))
    if mean is None:
        avg = ew.divide(red.sum(xv, axis=axis, keepdims=True), cnt)
    else:
        avg = arr(mean, "mean", (x,))
        avg = avg.astype(work) if avg.dtype is not work else avg
    dev = _sel(ok, ew.subtract(xv, avg), 0)
    if dev.dtype.kind == "c":
        re, im = real_of(dev), imag_of(dev)
        sq = ew.add(ew.multiply(re, re), ew.multiply(im, im))
    else:
        sq = ew.multiply(dev, dev)
    s = red.sum(sq, axis=axis, keepdims=keepdims)
    dof = ew.subtract(cnt if keepdims else mv.reshape(cnt, s.shape), ddof)
    if nan_aware:
        v = _sel(ew.less_equal(dof, 0), math.nan, ew.divide(s, dof))
    else:
        v = ew.divide(s, ew.maximum(dof, 0))
    return v, dt.real_dtype(d)


def _nanvar_parts(x, axis, dtype, ddof, keepdims, correction, where=True, mean=None):
    return _var_parts(x, axis, dtype, ddof, keepdims, correction, where, mean, x.dtype.kind in "fc")


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
            correction=None):
    red._check_out("nanvar", out, lambda: _nanvar(a, axis, dtype, None, ddof, keepdims, where=where,
                                                        mean=mean, correction=correction))
    x = arr(a)
    if x.dtype.kind not in "fc" and mean is None:
        return red.var(x, axis, dtype, None, ddof, keepdims, where=where, correction=correction)
    v, d = _nanvar_parts(x, axis, dtype, ddof, keepdims, correction, where, mean)
    return v.astype(d)


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
            correction=None):
    red._check_out("nanstd", out, lambda: _nanstd(a, axis, dtype, None, ddof, keepdims, where=where,
                                                        mean=mean, correction=correction))
    x = arr(a)
    if x.dtype.kind not in "fc" and mean is None:
        return red.std(x, axis, dtype, None, ddof, keepdims, where=where, correction=correction)
    v, d = _nanvar_parts(x, axis, dtype, ddof, keepdims, correction, where, mean)
    return ew.sqrt(v).astype(d)


def var_with_mean(a, axis=None, dtype=None, ddof=0, keepdims=False, where=True, mean=None,
                  correction=None, std=False):
    """np.var / np.std with mean= (a precomputed mean): what reductions.var/std can hand the call
    to when `mean` is given (NumPy's division by max(count - ddof, 0), no NaN skipping)."""
    x = arr(a)
    if x.dtype.kind not in "biufc":
        raise DTypeError(f"{'std' if std else 'var'}: needs a numeric array, got {x.dtype.name}")
    v, d = _var_parts(x, axis, dtype, ddof, keepdims, correction, where, mean, nan_aware=False)
    return (ew.sqrt(v) if std else v).astype(d)


def _nanextreme(fn, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        x = arr(a)
        if x.dtype.kind not in "fc":
            return fn(x, axis, out, keepdims, initial, where)
        r = fn(_nan_safe(x, fill), axis, out, keepdims, initial, where)
        all_nan = red.all(ew.isnan(x), axis=axis, keepdims=keepdims)
        return _sel(all_nan, math.nan, r)
    return f


def _nanarg(fn, fill):
    def f(a, axis=None, out=None, *, keepdims=False):
        x = arr(a)
        if x.dtype.kind not in "fc":
            return fn(x, axis, out, keepdims=keepdims)
        r = fn(_nan_safe(x, fill), axis, out, keepdims=keepdims)
        if axis is None:
            all_nan = red.all(ew.isnan(x), keepdims=keepdims)
        else:
            all_nan = red.all(ew.isnan(x), axis=axis, keepdims=keepdims)
        return _sel(all_nan, -1, r)
    return f


def _nancumsum(a, axis=None, dtype=None, out=None):
    return red.cumsum(_nan_safe(arr(a), 0), axis, dtype, out)


def _nancumprod(a, axis=None, dtype=None, out=None):
    return red.cumprod(_nan_safe(arr(a), 1), axis, dtype, out)


_export("nansum", _nansum, "Sum treating NaN as zero. Lazy.")
_export("nanprod", _nanprod, "Product treating NaN as one. Lazy.")
_export("nanmean", _nanmean, "Mean of the non-NaN elements (NaN where a slice has none). Lazy.")
_export("nanvar", _nanvar, "Variance of the non-NaN elements (NaN where fewer than ddof + 1). Lazy.")
_export("nanstd", _nanstd, "Standard deviation of the non-NaN elements. Lazy.")
_export("nanmax", _nanextreme(red.max, -math.inf),
        "Maximum ignoring NaN (NaN for an all-NaN slice). Lazy.")
_export("nanmin", _nanextreme(red.min, math.inf),
        "Minimum ignoring NaN (NaN for an all-NaN slice). Lazy.")
_export("nanargmax", _nanarg(red.argmax, -math.inf),
        "Index of the maximum ignoring NaN. Lazy; an all-NaN slice gives -1 (NumPy raises "
        "ValueError, which a lazy value cannot: check with pt.isnan(x).all(axis) where it matters).")
_export("nanargmin", _nanarg(red.argmin, math.inf),
        "Index of the minimum ignoring NaN. Lazy; an all-NaN slice gives -1 (NumPy raises "
        "ValueError).")
_export("nancumsum", _nancumsum, "Cumulative sum treating NaN as zero. Lazy.")
_export("nancumprod", _nancumprod, "Cumulative product treating NaN as one. Lazy.")


# --- order statistics ----------------------------------------------------------------------------
def _q_array(q, scale, op, device):
    """(q / scale as a float64 Array, q's shape, q's dtype when it is strong else None)."""
    if isinstance(q, Array):
        return ew.divide(q.astype(dt.float64), scale) if scale != 1 else q.astype(dt.float64), q.shape, q.dtype
    qa = np.asarray(q, dtype=np.float64)
    if np.isnan(qa).any() or ((qa / scale) < 0).any() or ((qa / scale) > 1).any():
        rng = "[0, 100]" if scale == 100 else "[0, 1]"
        raise ShapeError(f"{op}: q must be in the range {rng}, got {q!r}")
    strong = None if isinstance(q, (int, float)) and not isinstance(q, np.generic) else \
        dt.as_dtype(np.asarray(q).dtype if np.asarray(q).dtype.kind == "f" else np.float64)
    return _leaf(qa / scale, device), qa.shape, strong


def _gather_last(s: Array, idx: Array) -> Array:
    """s[..., idx] with idx of shape s.shape[:-1] + (k,) (integer Array)."""
    return take_along_axis(s, idx, axis=-1)


def _lerp(a, b, t, rest=None):
    """NumPy's _lerp: a + (b - a) * t, computed from b for t >= 0.5 (monotone and exact at t = 1).
    `rest` is 1 - t where NumPy rounds it from a wider gamma than t's own dtype."""
    d = ew.subtract(b, a)
    lo = ew.add(a, ew.multiply(d, t))
    hi = ew.subtract(b, ew.multiply(d, ew.subtract(1, t) if rest is None else rest))
    return _sel(ew.greater_equal(t, 0.5), hi, lo)


# NumPy's quantile methods (Hyndman & Fan): the continuous ones by their (alpha, beta) plotting
# positions; the discontinuous ones pick an order statistic (DISCRETE) and keep the input's dtype
CONTINUOUS = {"linear": None, "hazen": (0.5, 0.5), "weibull": (0.0, 0.0), "median_unbiased": (1 / 3, 1 / 3),
              "normal_unbiased": (3 / 8, 3 / 8), "interpolated_inverted_cdf": (0.0, 1.0),
              "averaged_inverted_cdf": None, "midpoint": None}
DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
METHODS = tuple(CONTINUOUS) + DISCRETE


def _discrete_index(method, qf, cnt):
    """The (float) order statistic a discontinuous method picks, as NumPy computes it."""
    if method in ("lower", "higher", "nearest"):
        v = ew.multiply(ew.subtract(cnt, 1), qf)
        return {"lower": ew.floor, "higher": ew.ceil, "nearest": ew.round}[method](v)
    shift = 1.5 if method == "closest_observation" else 1.0
    idx = ew.subtract(ew.multiply(cnt, qf), shift)
    prev = ew.floor(idx)
    take_prev = ew.equal(ew.subtract(idx, prev), 0)
    if method == "closest_observation":   # the even order statistic (1-based) at gamma = 0
        take_prev = ew.logical_and(take_prev, ew.equal(ew.remainder(prev, 2), 1))
    return ew.maximum(_sel(take_prev, prev, ew.add(prev, 1)), 0)


def _continuous_index(method, qf, cnt):
    """(virtual index, a function fixing gamma or None) of a continuous method."""
    if method == "linear":
        return ew.multiply(ew.subtract(cnt, 1), qf), None
    if method == "midpoint":
        v = ew.multiply(ew.subtract(cnt, 1), qf)
        vi = ew.multiply(0.5, ew.add(ew.floor(v), ew.ceil(v)))
        return vi, lambda g: _sel(ew.equal(ew.remainder(vi, 1), 0), 0.0, 0.5)
    if method == "averaged_inverted_cdf":
        return ew.subtract(ew.multiply(cnt, qf), 1), lambda g: _sel(ew.equal(g, 0), 0.5, 1.0)
    alpha, beta = CONTINUOUS[method]
    return ew.subtract(ew.add(ew.multiply(cnt, qf), ew.add(alpha, ew.multiply(qf, 1 - alpha - beta))), 1), None


def _quantile(a, q, axis, keepdims, method, scale, op, nan_aware, median=False):
    if method not in METHODS:
        raise ShapeError(f"{op}: method={method!r} is not one of NumPy's: {', '.join(METHODS)}")
    x = arr(a)
    # a complex median is NumPy's too: the middle of the lexicographic sort (NaNs last), averaged
    if x.dtype.kind not in ("biufc" if median else "iuf"):   # NumPy's median of bools is float64
        raise DTypeError(f"{op}: needs a {'numeric' if median else 'real'} array, got {x.dtype.name}")
    discrete = method in DISCRETE and not median
    d = x.dtype if discrete or x.dtype.kind == "c" else _float_dtype(x.dtype)
    if median:
        qa, qshape, qdt = None, (), None
    else:
        qa, qshape, qdt = _q_array(q, scale, op, x.device)
    if qdt is not None and d.kind == "f" and not discrete:
        d = dt.result_type(d, qdt if qdt.kind == "f" else dt.float64)
    work = dt.float32 if d in _HALF else d
    y, axes, kept = _to_last(x, axis)
    n = y.shape[-1]
    if n == 0:
        if not median:
            raise PootIndexError(f"{op}: cannot take a quantile of an empty array ({x.aval})")
        r = full(kept, math.nan, dtype=d, device=x.device)
        return _keep(r, x.ndim, axes) if keepdims else r
    if discrete and work.kind != "f":
        nan_aware = False                      # integers hold no NaN to skip
    # NumPy interpolates between order statistics of the input's own dtype: with a float64 q on
    # float32 data, b - a is rounded in float32 before it meets gamma, so sort in that dtype too
    sorted_dt = x.dtype if x.dtype.kind == "f" and x.dtype not in _HALF else work
    s = _sort(y.astype(sorted_dt), axis=-1)
    rows = kept
    if nan_aware and work.kind in "fc":
        c = red.sum(ew.logical_not(ew.isnan(y)), axis=-1, keepdims=True)   # (rows..., 1) int64
    else:
        c = None
    cnt = c.astype(dt.float64) if c is not None else float(n)
    if median:
        if c is None:
            lo = _leaf(np.full(rows + (1,), (n - 1) // 2, np.int64), x.device)
            hi = _leaf(np.full(rows + (1,), n // 2, np.int64), x.device)
        else:
            cm = ew.maximum(c, 1)
            lo, hi = ew.floor_divide(ew.subtract(cm, 1), 2), ew.floor_divide(cm, 2)
        va, vb = _gather_last(s, lo), _gather_last(s, hi)
        r = ew.divide(ew.add(va, vb), 2)        # NumPy's mean of the middle two
        k_shape = ()
    else:
        qf = mv.reshape(qa, (-1,))                                # (k,)
        full_shape = rows + (qf.shape[0],)
        last = ew.subtract(cnt, 1)
        if discrete:
            idx = ew.minimum(_discrete_index(method, qf, cnt), last)
            idx = ew.minimum(ew.maximum(idx, 0), n - 1).astype(dt.int64)
            r = _gather_last(s, mv.broadcast_to(idx, full_shape))
        else:
            vi, fix_gamma = _continuous_index(method, qf, cnt)   # (rows..., k) or (k,)
            prev = ew.floor(vi)
            gamma = ew.subtract(vi, prev)
            if fix_gamma is not None:
                gamma = fix_gamma(gamma)
            above = ew.greater_equal(vi, last)
            below = ew.less(vi, 0)
            prev_i = _sel(above, last, _sel(below, 0, prev))
            next_i = _sel(above, last, _sel(below, 0, ew.add(prev, 1)))
            prev_i = mv.broadcast_to(ew.maximum(prev_i, 0).astype(dt.int64), full_shape)
            next_i = mv.broadcast_to(ew.minimum(ew.maximum(next_i, 0), n - 1).astype(dt.int64), full_shape)
            va, vb = _gather_last(s, prev_i), _gather_last(s, next_i)
            g = mv.broadcast_to(gamma, full_shape).astype(work)
            rest = mv.broadcast_to(ew.subtract(1, gamma), full_shape).astype(work)
            r = _lerp(va, vb, g, rest)
        k_shape = qshape
    if work.kind in "fc":
        if c is None:
            bad = ew.isnan(s[..., n - 1:])                        # NaN sorts last: any NaN -> NaN
        else:
            bad = ew.equal(c, 0)
        r = _sel(bad, math.nan, r)
    r = r.astype(d)
    # (rows..., k) -> q's shape first, then the kept axes (NumPy's layout)
    if not median:
        r = mv.moveaxis(r, -1, 0) if rows else r
        r = mv.reshape(r, k_shape + rows)
    else:
        r = mv.reshape(r, rows)
    return _keep(r, x.ndim, axes, len(k_shape)) if keepdims else r


def _quantile_weights(x: Array, weights, axis, op: str) -> Array:
    """NumPy's checks of quantile weights, and the weights broadcast to x's shape (1-D weights lie
    along the single `axis`). Negative weights are refused where their values are at hand."""
    w = weights if isinstance(weights, Array) else _leaf(np.asarray(weights), x.device)
    if w.dtype.kind not in "biuf":
        raise DTypeError(f"{op}: weights must be real numbers, got {w.dtype.name}")
    if w.shape != x.shape:
        if axis is None:
            raise ShapeError(f"{op}: axis must be specified when shapes of a and weights differ")
        if w.ndim != 1:
            raise ShapeError(f"{op}: 1D weights expected when shapes of a and weights differ")
        if not isinstance(axis, (int, np.integer)):
            raise ShapeError(f"{op}: 1D weights need a single axis, got axis={axis!r}")
        ax = axis_of(axis, x.ndim, op, x)
        if w.shape[0] != x.shape[ax]:
            raise ShapeError(f"{op}: length of weights ({w.shape[0]}) not compatible with axis {ax} of "
                             f"{x.aval}")
        w = mv.moveaxis(mv.broadcast_to(w, x.shape[:ax] + x.shape[ax + 1:] + (w.shape[0],)), -1, ax)
    if not isinstance(weights, Array) and (np.asarray(weights) < 0).any() or \
            isinstance(weights, Array) and not is_tracing() and bool(red.any(ew.less(w, 0))):
        raise DomainError(f"{op}: weights must be non-negative")
    return w


def _weighted_quantile(a, q, axis, keepdims, method, weights, scale, op, nan_aware):
    """NumPy's weighted quantile (method 'inverted_cdf' only): along each sorted slice, the first
    value whose normalized cumulative weight reaches q. Under the nan forms a NaN weighs nothing
    (it sorts last, so the cumulative weight is already 1 before it)."""
    if method != "inverted_cdf":
        raise ShapeError(f"{op}: only method 'inverted_cdf' supports weights, got method={method!r}")
    x = arr(a)
    if x.dtype.kind not in "iuf":
        raise DTypeError(f"{op}: needs a real array, got {x.dtype.name}")
    w = _quantile_weights(x, weights, axis, op)
    qa, qshape, qdt = _q_array(q, scale, op, x.device)
    y, axes, rows = _to_last(x, axis)
    wy = _to_last(w, axis)[0].astype(dt.float64)
    n = y.shape[-1]
    if n == 0:
        raise PootIndexError(f"{op}: cannot take a quantile of an empty array ({x.aval})")
    nan = ew.isnan(y) if x.dtype.kind == "f" else None
    if nan_aware and nan is not None:
        wy = _sel(nan, 0.0, wy)
    order = _argsort(y, axis=-1, stable=True)
    s, ws = take_along_axis(y, order, axis=-1), take_along_axis(wy, order, axis=-1)
    cdf = red.cumsum(ws, axis=-1)
    total = cdf[..., n - 1:]
    if not is_tracing():
        ok = ew.logical_and(ew.isfinite(total), ew.greater(total, 0))
        if nan_aware and nan is not None:          # an all-NaN slice gives NaN, as NumPy's
            ok = ew.logical_or(ok, red.all(nan, axis=-1, keepdims=True))
        if not bool(red.all(ok)):
            raise DomainError(f"{op}: weights included NaN, inf or were all zero along a slice")
    cdf = ew.divide(cdf, total)
    cdf = _sel(ew.equal(cdf, 0), -1.0, cdf)     # leading zero weights: q = 0 picks the first weighted value
    qf = mv.reshape(qa, (-1,))
    if qdt is not None and qdt.kind == "f":            # NumPy compares in q's float type
        cdf, qf = cdf.astype(qdt), qf.astype(qdt)
    below = ew.less(mv.expand_dims(cdf, -2), mv.reshape(qf, (-1, 1)))      # (rows..., k, n)
    idx = ew.minimum(red.sum(below, axis=-1), n - 1).astype(dt.int64)       # searchsorted 'left'
    r = take_along_axis(s, idx, axis=-1)                                     # (rows..., k)
    if nan is not None:
        bad = red.all(nan, axis=-1, keepdims=True) if nan_aware else red.any(nan, axis=-1, keepdims=True)
        r = _sel(bad, math.nan, r).astype(x.dtype)
    r = mv.moveaxis(r, -1, 0) if rows else r
    r = mv.reshape(r, qshape + rows)
    return _keep(r, x.ndim, axes, len(qshape)) if keepdims else r


_check_out = red._check_out


def _method(method, interpolation):
    return interpolation if interpolation is not None else method


def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _check_out("median", out, lambda: _median(a, axis, None, overwrite_input, keepdims))
    return _quantile(a, None, axis, keepdims, "linear", 1, "median", False, median=True)


def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _check_out("nanmedian", out, lambda: _nanmedian(a, axis, None, overwrite_input, keepdims))
    return _quantile(a, None, axis, keepdims, "linear", 1, "nanmedian", True, median=True)


def _make_quantile(op, scale, nan_aware):
    def f(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
          weights=None, interpolation=None):
        _check_out(op, out, lambda: f(a, q, axis, None, overwrite_input, method, keepdims, weights=weights,
                                      interpolation=interpolation))
        if weights is not None:
            return _weighted_quantile(a, q, axis, keepdims, _method(method, interpolation), weights,
                                      scale, op, nan_aware)
        return _quantile(a, q, axis, keepdims, _method(method, interpolation), scale, op, nan_aware)
    return f


_ORDER_DOC = (" Lazy: sorts along the axis with the `sort` host op, then gathers and interpolates "
              "(every NumPy method: 'linear', the default, and the other continuous and discontinuous "
              "ones); works inside @pt.jit.")
_export("median", _median, "Median along `axis` (NaN where a slice holds NaN; NaN for an empty "
                           "array)." + _ORDER_DOC)
_export("nanmedian", _nanmedian, "Median ignoring NaN (NaN for an all-NaN slice)." + _ORDER_DOC)
_export("percentile", _make_quantile("percentile", 100, False),
        "The q-th percentiles (q in [0, 100]) along `axis`; q's dimensions come first." + _ORDER_DOC)
_export("quantile", _make_quantile("quantile", 1, False),
        "The q-th quantiles (q in [0, 1]) along `axis`; q's dimensions come first." + _ORDER_DOC)
_export("nanpercentile", _make_quantile("nanpercentile", 100, True),
        "percentile ignoring NaN." + _ORDER_DOC)
_export("nanquantile", _make_quantile("nanquantile", 1, True), "quantile ignoring NaN." + _ORDER_DOC)


# --- covariance ----------------------------------------------------------------------------------
def _cov_dtype(d: dt.DType) -> dt.DType:
    """cov computes in floating point, complex kept (np.result_type(m, float64))."""
    return d if d.kind == "c" else _float_dtype(d)


def _conj(x: Array) -> Array:
    return conj_of(x) if x.dtype.kind == "c" else x


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    from poot.trace.linalg import matmul

    x = arr(m)
    if x.ndim > 2:
        raise ShapeError("cov: m has more than 2 dimensions")
    d = dt.as_dtype(dtype) if dtype is not None else dt.result_type(_cov_dtype(x.dtype), dt.float64)
    if y is not None:
        yy = arr(y)
        if yy.ndim > 2:
            raise ShapeError("cov: y has more than 2 dimensions")
        if dtype is None:
            d = dt.result_type(d, _cov_dtype(yy.dtype))
    X = mv.atleast_2d(x).astype(d)
    if not rowvar and x.ndim != 1:   # NumPy 2 turns every 2-D m, a single row too (one observation)
        X = X.T
    if X.shape[0] == 0:
        return zeros((0, 0), dtype=d, device=x.device)
    if y is not None:
        Y = mv.atleast_2d(yy).astype(d)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = mv.concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = aw = None
    if fweights is not None:
        w = _cov_weights(fweights, "fweights", x.device)
    if aweights is not None:
        aw = _cov_weights(aweights, "aweights", x.device)
        w = aw if w is None else ew.multiply(w, aw)
    n = X.shape[1]
    if w is None:
        avg = red.mean(X, axis=1, keepdims=True)
        fact = float(n - ddof)
        Xc = ew.subtract(X, avg)
        c = ew.divide(matmul(Xc, _conj(Xc).T), fact if fact > 0 else 0.0)
    else:
        if w.ndim != 1 or w.shape[0] != n:
            raise ShapeError(f"cov: incompatible numbers of samples and weights ({n} samples, weights "
                             f"of shape {w.shape})")
        # lazy throughout, so traced weights work inside @pt.jit: the sums stay 0-d arrays
        w_sum = red.sum(w)
        wa = w.astype(d)
        avg = ew.divide(red.sum(ew.multiply(X, wa), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = ew.subtract(w_sum, ddof)
        else:
            fact = ew.subtract(w_sum, ew.divide(ew.multiply(ddof, red.sum(ew.multiply(w, aw))), w_sum))
        Xc = ew.subtract(X, avg)
        c = ew.divide(matmul(ew.multiply(Xc, wa), _conj(Xc).T), _sel(ew.greater(fact, 0), fact, 0.0))
    return mv.squeeze(c) if c.shape[0] == 1 else c


def _cov_weights(v, name: str, device) -> Array:
    """cov's fweights or aweights as a lazy float64 array on `device` (a poot array stays lazy, so a
    traced one works in @pt.jit). fweights must hold integers: checked where the values are at hand
    (NumPy input, or a concrete poot array of floats)."""
    a = v if isinstance(v, Array) else _leaf(np.asarray(v), device)
    if name == "fweights" and a.dtype.kind == "f" and not is_tracing():
        if not bool(red.all(ew.equal(a, ew.round(a)))):
            raise DTypeError("cov: fweights must be integer")
    elif name == "fweights" and a.dtype.kind not in "biuf":
        raise DTypeError(f"cov: fweights must be integer, got {a.dtype}")
    return a.astype(dt.float64)


def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = _cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ew.divide(c, c)
    from poot.trace.linalg import diagonal

    s = ew.sqrt(real_of(diagonal(c)) if c.dtype.kind == "c" else diagonal(c))
    c = ew.divide(ew.divide(c, mv.reshape(s, (-1, 1))), mv.reshape(s, (1, -1)))
    if c.dtype.kind == "c":     # NumPy clips each part to [-1, 1]
        clipped = [ew.minimum(ew.maximum(p, -1), 1) for p in (real_of(c), imag_of(c))]
        return from_parts(*clipped).astype(c.dtype)
    return ew.minimum(ew.maximum(c, -1), 1)


_export("cov", _cov, "Covariance matrix of the variables in the rows (rowvar) of m and y, as np.cov "
                     "(bias, ddof, fweights, aweights; float64 at least). Lazy: a mean and a matmul.")
_export("corrcoef", _corrcoef, "Pearson correlation coefficients, as np.corrcoef (clipped to [-1, 1]). "
                               "Lazy.")
