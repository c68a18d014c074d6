"""Reductions and scans with NumPy's axis/keepdims conventions and result dtypes (sum of int8 ->
int64, of uint8 -> uint64, of bool -> int64; mean of integers -> float64). float16 and bfloat16
accumulate in float32 and round once at the end, as every device does."""
from __future__ import annotations

import builtins as _bi
import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ScalarOverflowError, ShapeError, api_boundary, out_error
from poot.trace.lazy import constant, record
from poot.trace.movement import arr, axes_of, axis_of, _reshape_node
from poot.trace.promote import cast, wrap

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
           "any", "all", "cumsum", "cumprod", "count_nonzero"]

_HALF = (dt.float16, dt.bfloat16)


def _ufunc_axes(axis, x, op):
    """Axes of a ufunc-style reduction: like NumPy, axis 0 or -1 of a 0-d array reduces nothing."""
    if x.ndim == 0 and not isinstance(axis, (tuple, list)) and axis is not None and axis in (0, -1):
        return ()
    return axes_of(axis, x.ndim, op, x)


def _acc_dtype(d: dt.DType, dtype) -> dt.DType:
    """NumPy's accumulator for sum/prod/cumsum: small ints widen to int64/uint64, bool to int64."""
    if dtype is not None:
        return dt.as_dtype(dtype)
    if d.kind == "b" or d.kind == "i":
        return dt.int64
    if d.kind == "u":
        return dt.uint64
    return d


def _finish_shape(n, x_shape, axes, keepdims):
    if keepdims:
        return n
    return _reshape_node(n, tuple(s for i, s in enumerate(x_shape) if i not in axes))


def _reduce(prim, n, axes, out_dtype, keepdims):
    """`prim` over `axes` of node `n`, computed in float32 for half types, cast to out_dtype."""
    work = dt.float32 if out_dtype in _HALF else out_dtype
    shape = n.aval.shape
    n = cast(n, work)
    if axes:
        n = record(prim, (n,), {"axes": axes})
    return cast(_finish_shape(n, shape, axes, keepdims), out_dtype)


def _check_out(op, out, result=None):
    """Refuse `out=` (poot arrays are immutable values) with errors.out_error's class: `result` (a
    function giving the lazy result without out=) lets a wrong shape be named (NumPy casts a
    reduction's result to any out dtype, so no dtype is wrong)."""
    if out is not None:
        raise out_error(op, out, result() if result is not None else None, casting="unsafe")


def _masked(x, where, fill):
    """NumPy's where= of a reduction: x with the elements where `where` is false replaced by `fill`
    (the reduction's identity), so reducing the result reduces the selected elements only. `where`
    broadcasts against x; x keeps its dtype."""
    if where is True:
        return arr(x)
    from poot.trace.movement import broadcast_to
    from poot.trace.selection import where as select

    x = arr(x)
    mask = broadcast_to(arr(where).astype(dt.bool_), x.shape)
    return select(mask, x, wrap(constant(fill, x.dtype, x.device))).astype(x.dtype)


def _selected_count(x, where, axes, keepdims, d):
    """How many elements each reduction of mean/var/std with where= covers, as dtype d."""
    from poot.trace.movement import broadcast_to

    mask = broadcast_to(arr(where).astype(dt.bool_), x.shape)
    return wrap(_reduce("reduce_sum", mask._node, axes, d, keepdims))


@api_boundary
def sum(x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Sum over `axis` (int, tuple, None for all; negative counts from the end)."""
    _check_out("sum", out, lambda: sum(x, axis, dtype, None, keepdims, initial, where))
    x = _masked(x, where, 0)
    axes = _ufunc_axes(axis, x, "sum")
    d = _acc_dtype(x.dtype, dtype)
    r = _reduce("reduce_sum", x._node, axes, d, keepdims)
    if initial is not None:
        r = record("add", (r, constant(initial, d, r.device)))
    return wrap(r)


@api_boundary
def prod(x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    _check_out("prod", out, lambda: prod(x, axis, dtype, None, keepdims, initial, where))
    x = _masked(x, where, 1)
    axes = _ufunc_axes(axis, x, "prod")
    d = _acc_dtype(x.dtype, dtype)
    r = _reduce("reduce_prod", x._node, axes, d, keepdims)
    if initial is not None:
        r = record("mul", (r, constant(initial, d, r.device)))
    return wrap(r)


def _count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def _divide(s, n, work):
    """`s / n` in `work`. An integer `work` (mean or var with dtype=int) divides in float64 and casts
    back, truncating toward zero, as NumPy does: it sums in the integer dtype (wrapping) and divides
    with an unsafe cast into that dtype. `n` is a Python number (a count, less a possibly fractional
    ddof) or a node of dtype `work`."""
    host = isinstance(n, (int, float, np.number))
    if work.kind in "fc":
        return record("div", (s, constant(n, work, s.device) if host else n))
    n = constant(n, dt.float64, s.device) if host else cast(n, dt.float64)
    return cast(record("div", (cast(s, dt.float64), n)), work)


def _mean_node(x, axes, dtype, keepdims):
    d = dt.as_dtype(dtype) if dtype is not None else (x.dtype if x.dtype.kind in "fc" else dt.float64)
    work = dt.float32 if d in _HALF else d
    s = _reduce("reduce_sum", x._node, axes, work, keepdims)
    m = _divide(s, _count(x.shape, axes), work)
    return m, d, work


@api_boundary
def mean(x, axis=None, dtype=None, out=None, keepdims=False, where=True):
    """Arithmetic mean (float64 for integer input; NaN for an empty reduction, as in NumPy)."""
    _check_out("mean", out, lambda: mean(x, axis, dtype, None, keepdims, where))
    x = arr(x)
    axes = axes_of(axis, x.ndim, "mean", x)
    if where is not True:
        return _masked_mean(x, where, axes, dtype, keepdims)
    m, d, work = _mean_node(x, axes, dtype, keepdims)
    return wrap(cast(m, d))


def _masked_mean(x, where, axes, dtype, keepdims):
    """mean(x, where=mask): the sum of the selected elements over their count (NaN where none is)."""
    d = dt.as_dtype(dtype) if dtype is not None else (x.dtype if x.dtype.kind in "fc" else dt.float64)
    work = dt.float32 if d in _HALF else d
    s = _reduce("reduce_sum", _masked(x, where, 0)._node, axes, work, keepdims)
    count = _selected_count(x, where, axes, keepdims, dt.real_dtype(work) if work.kind == "c" else work)
    return wrap(cast(_divide(s, cast(count._node, work), work), d))


def _var_node(x, axis, dtype, ddof, keepdims, correction, op, where=True):
    if correction is not None:
        ddof = correction
    axes = axes_of(axis, x.ndim, op, x)
    if where is not True:
        return _masked_var_node(x, where, axes, dtype, ddof, keepdims)
    m, d, work = _mean_node(x, axes, dtype, True)
    diff = record("sub", (cast(x._node, work), m))
    if work.kind == "c":    # NumPy's variance of complex values: the mean of |x - mean|^2, real
        from poot.trace.complex_values import abs2_node

        sq, work, d = abs2_node(diff), dt.real_dtype(work), dt.real_dtype(d)
    else:
        sq = record("mul", (diff, diff))
    s = _reduce("reduce_sum", sq, axes, work, keepdims)
    v = _divide(s, _bi.max(_count(x.shape, axes) - ddof, 0), work)
    return v, d


def _masked_var_node(x, where, axes, dtype, ddof, keepdims):
    """var(x, where=mask): the mean of |x - mean|^2 over the selected elements, divided by
    (count - ddof)."""
    m = _masked_mean(x, where, axes, dtype, True)
    d = m.dtype
    work = dt.float32 if d in _HALF else d
    diff = record("sub", (cast(x._node, work), cast(m._node, work)))
    if work.kind == "c":
        from poot.trace.complex_values import abs2_node

        sq, work, d = abs2_node(diff), dt.real_dtype(work), dt.real_dtype(d)
    else:
        sq = record("mul", (diff, diff))
    s = _reduce("reduce_sum", _masked(wrap(sq), where, 0)._node, axes, work, keepdims)
    count = _selected_count(x, where, axes, keepdims, work)
    denom = record("max", (record("sub", (count._node, constant(ddof, work, s.device))),
                           constant(0, work, s.device)))
    return _divide(s, denom, work), d


@api_boundary
def var(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Variance: sum((x - mean)**2) / (N - correction); `ddof` is NumPy's name for correction; `mean`
    (NumPy's) a precomputed mean, broadcast against x (as keepdims=True gives it)."""
    _check_out("var", out, lambda: var(x, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                                                  correction=correction))
    if mean is not None:
        from poot.trace.numpy_stats import var_with_mean

        return var_with_mean(x, axis, dtype, ddof, keepdims, where, mean, correction)
    v, d = _var_node(arr(x), axis, dtype, ddof, keepdims, correction, "var", where)
    return wrap(cast(v, d))


@api_boundary
def std(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Standard deviation: sqrt(var(...)); `mean` as var's."""
    _check_out("std", out, lambda: std(x, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                                                  correction=correction))
    if mean is not None:
        from poot.trace.numpy_stats import var_with_mean

        return var_with_mean(x, axis, dtype, ddof, keepdims, where, mean, correction, std=True)
    v, d = _var_node(arr(x), axis, dtype, ddof, keepdims, correction, "std", where)
    v = v if v.aval.dtype.kind in "fc" else cast(v, dt.float64)    # std(dtype=int): sqrt, truncated
    return wrap(cast(record("sqrt", (v,)), d))


def _check_initial(op, x, initial):
    """NumPy raises OverflowError for an integer `initial` its integer dtype cannot hold; a silent wrap
    (max of int8 with initial=1000 being -24) would be a wrong answer, so say so, as the same
    OverflowError (ScalarOverflowError, as for `int8_array + 1000`)."""
    d = arr(x).dtype
    if d.kind not in "iu" or isinstance(initial, bool) or not isinstance(initial, (int, np.integer)):
        return
    info = dt.iinfo(d)
    if not info.min <= int(initial) <= info.max:
        raise ScalarOverflowError(f"{op}: initial={int(initial)} is out of bounds for {d.name} "
                                  f"[{info.min}, {info.max}]; pass an initial the dtype can hold or "
                                  f"cast the array first")


def _extreme(op, prim, x, axis, keepdims, out, initial, where):
    _check_out(op, out, lambda: _extreme(op, prim, x, axis, keepdims, None, initial, where))
    if initial is not None:
        _check_initial(op, x, initial)
    if where is not True:
        if initial is None:
            raise ShapeError(f"{op}: reduction operation '{op}imum' does not have an identity, so to "
                             f"use a where mask one has to specify 'initial' (as NumPy)")
        x = _masked(x, where, initial)
    x = arr(x)
    axes = _ufunc_axes(axis, x, op)
    if initial is None and _bi.any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"{op}: zero-size reduction over axes {axes} of {x.aval} has no identity; "
                         f"check the array is non-empty or pass initial=")
    n = x._node
    if _bi.any(x.shape[a] == 0 for a in axes):  # empty with `initial`: the result is just `initial`
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        r = constant(initial, x.dtype, n.device, shape)
        return wrap(_finish_shape(r, x.shape, axes, keepdims))
    if x.dtype.kind == "c":     # lexicographic on (real, imaginary), as NumPy
        from poot.trace.complex_order import extreme, reduce_extreme

        larger = prim == "reduce_max"
        r = reduce_extreme(x, axes, keepdims, larger) if axes else x.copy()
        if initial is not None:
            r = extreme(r, wrap(constant(initial, x.dtype, n.device)), larger)
        return r
    r = record(prim, (n,), {"axes": axes}) if axes else n
    if initial is not None:
        r = record("max" if prim == "reduce_max" else "min", (r, constant(initial, x.dtype, n.device)))
    return wrap(_finish_shape(r, x.shape, axes, keepdims))


@api_boundary
def max(x, axis=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Maximum over `axis` (NaN propagates; an empty reduction is an error unless `initial`)."""
    return _extreme("max", "reduce_max", x, axis, keepdims, out, initial, where)


@api_boundary
def min(x, axis=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Minimum over `axis` (NaN propagates; an empty reduction is an error unless `initial`)."""
    return _extreme("min", "reduce_min", x, axis, keepdims, out, initial, where)


amax, amin = max, min


def _arg(op, x, axis, keepdims, out):
    _check_out(op, out, lambda: _arg(op, x, axis, keepdims, None))
    x = arr(x)
    if x.ndim == 0 and axis is not None and not isinstance(axis, (tuple, list)) and axis in (0, -1):
        axis = None  # NumPy: the one element of a 0-d array
    if x.dtype.kind == "c" and x.size:      # lexicographic on (real, imaginary), as NumPy
        from poot.trace.complex_order import arg_reduce

        return arg_reduce(x, axis, keepdims, op == "argmax")
    if axis is None:
        flat = _reshape_node(x._node, (x.size,))
        if x.size == 0:
            raise ShapeError(f"{op}: attempt to get {op} of an empty sequence ({x.aval})")
        r = record(op, (flat,), {"axis": 0})
        return wrap(_reshape_node(r, (1,) * x.ndim if keepdims else ()))
    ax = axis_of(axis, x.ndim, op, x)
    if x.shape[ax] == 0:
        raise ShapeError(f"{op}: attempt to get {op} of an empty sequence (axis {ax} of {x.aval})")
    r = record(op, (x._node,), {"axis": ax})
    return wrap(_finish_shape(r, x.shape, (ax,), keepdims))


@api_boundary
def argmax(x, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum along `axis` (of the flattened array when None), as int64."""
    return _arg("argmax", x, axis, keepdims, out)


@api_boundary
def argmin(x, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum along `axis` (of the flattened array when None), as int64."""
    return _arg("argmin", x, axis, keepdims, out)


def _logical(op, prim, empty_value, x, axis, keepdims, out, where):
    _check_out(op, out, lambda: _logical(op, prim, empty_value, x, axis, keepdims, None, where))
    x = arr(x) if where is True else _masked(arr(x).astype(dt.bool_), where, empty_value)
    axes = _ufunc_axes(axis, x, op)
    n = cast(x._node, dt.bool_)
    if _bi.any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        return wrap(_finish_shape(constant(empty_value, dt.bool_, n.device, shape), x.shape, axes,
                                  keepdims))
    r = record(prim, (n,), {"axes": axes}) if axes else n
    return wrap(_finish_shape(r, x.shape, axes, keepdims))


@api_boundary
def any(x, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Is any element true (nonzero) along `axis`? False for an empty reduction."""
    return _logical("any", "reduce_max", False, x, axis, keepdims, out, where)


@api_boundary
def all(x, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Are all elements true (nonzero) along `axis`? True for an empty reduction."""
    return _logical("all", "reduce_min", True, x, axis, keepdims, out, where)


@api_boundary
def count_nonzero(x, axis=None, *, keepdims=False):
    """How many elements are nonzero (as int64)."""
    x = arr(x)
    return sum(wrap(cast(x._node, dt.bool_)), axis=axis, keepdims=keepdims)


def _scan(op, x, axis, dtype, out):
    _check_out(op, out, lambda: _scan(op, x, axis, dtype, None))
    x = arr(x)
    n = x._node
    if axis is None or (x.ndim == 0 and not isinstance(axis, (tuple, list)) and axis in (0, -1)):
        n, ax = _reshape_node(n, (x.size,)), 0
    else:
        ax = axis_of(axis, x.ndim, op, x)
    d = _acc_dtype(x.dtype, dtype)
    # A float16/bfloat16 scan on the CPU runs in its own dtype, one element after another: NumPy
    # rounds the running value after every step (a float16 cumsum of ones stops at 2048), and so does
    # the CPU's sequential scan. A GPU scans in blocks, whose half-precision partial totals would
    # match neither NumPy nor the true sums: there it runs in float32 and rounds once.
    work = dt.int64 if d.kind == "b" else dt.float32 if d in _HALF and n.device != "cpu" else d
    n = cast(n, work)
    if op == "cumprod" and work.kind == "c":    # the running complex product, on the parts
        from poot.trace.complex_order import running_product

        return wrap(cast(running_product(wrap(n), ax)._node, d))
    r = record(op, (n,), {"axis": ax})
    return wrap(cast(r, d))


@api_boundary
def cumsum(x, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when None); NumPy's result dtypes."""
    return _scan("cumsum", x, axis, dtype, out)


@api_boundary
def cumprod(x, axis=None, dtype=None, out=None):
    """Cumulative product along `axis` (of the flattened array when None); NumPy's result dtypes."""
    return _scan("cumprod", x, axis, dtype, out)
