"""NumPy's index grids (indices, unravel_index, ravel_multi_index, ix_), choosing and joining (select,
append, compress, extract, flatnonzero), orders (lexsort, partition, argpartition) and the 1-D set
operations (intersect1d, union1d, setdiff1d, setxor1d).

Grids, select, append, lexsort and the partitions are lazy (partition returns the fully sorted array,
which meets np.partition's contract: the k-th element in place, smaller ones before, larger after).
compress with a poot-array condition, extract, flatnonzero and the set operations have results whose
length depends on the values: they realize their inputs and compute on the host (a TracerError inside
@pt.jit, as unique does), unless given JAX's size=n (and fill_value=): then the result has n entries
and is built lazily from sorts, isin and nonzero(size=n), inside @pt.jit too.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.array_api_sets import argsort, searchsorted, sort
from poot.trace.creation import arange, full
from poot.trace.indexing import nonzero, refuse_data_dependent, take
from poot.trace.lazy import check_scalar_fits
from poot.trace.movement import arr, axis_of
from poot.trace.numpy_stats import _leaf
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


# --- index grids ---------------------------------------------------------------------------------
def _indices(dimensions, dtype=int, sparse=False):
    dims = tuple(operator.index(d) for d in dimensions)
    d = dt.as_dtype(dtype)
    grids = []
    for k, n in enumerate(dims):
        g = mv.reshape(arange(n, dtype=d), tuple(n if j == k else 1 for j in range(len(dims))))
        grids.append(g if sparse else mv.broadcast_to(g, dims))
    if sparse:
        return tuple(grids)
    return mv.stack(grids) if grids else arange(0, dtype=d)


def _trapped_if_outside(i: Array, n: int) -> Array:
    """`i` itself, read through a gather from arange(n): an entry outside [0, n) (negative ones
    included) trips the kernel's bounds check, raised as KernelIndexError (a PootIndexError) at the
    next host read. Values held in an array are seen only there; NumPy raises ValueError at the call."""
    return take(arange(n, dtype=dt.int64, device=i.device), where(ew.less(i, 0), n, i))


def _unravel_index(indices, shape, order="C"):
    if order not in ("C", "F"):
        raise ShapeError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(operator.index(s) for s in shape)
    idx = arr(indices)
    if idx.dtype.kind not in "iu":
        raise ShapeError(f"unravel_index: indices must be integers, got {idx.dtype.name}")
    if not isinstance(indices, Array):
        host = np.asarray(indices)
        if host.size and (host.min() < 0 or host.max() >= math.prod(dims)):
            raise ShapeError(f"unravel_index: index {int(host.max() if host.max() >= 0 else host.min())}"
                             f" is out of bounds for an array of size {math.prod(dims)}")
    idx = idx.astype(dt.int64)
    if isinstance(indices, Array):
        idx = _trapped_if_outside(idx, math.prod(dims))
    out = []
    for n in (reversed(dims) if order == "C" else dims):    # the fastest-varying axis first
        out.append(ew.remainder(idx, n) if n else idx)
        idx = ew.floor_divide(idx, n) if n else idx
    return tuple(reversed(out)) if order == "C" else tuple(out)


def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if order not in ("C", "F"):
        raise ShapeError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = tuple(operator.index(s) for s in dims)
    if len(multi_index) != len(dims):
        raise ShapeError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    flat = None
    stride = 1
    axes = list(zip(multi_index, dims, modes))
    for idx, n, m in (reversed(axes) if order == "C" else axes):    # the fastest-varying axis first
        i = arr(idx).astype(dt.int64)
        if m == "wrap":
            i = ew.remainder(i, n)
        elif m == "clip":
            i = ew.minimum(ew.maximum(i, 0), n - 1)
        elif m == "raise":
            if not isinstance(idx, Array):
                host = np.asarray(idx)
                if host.size and (host.min() < 0 or host.max() >= n):
                    raise ShapeError("ravel_multi_index: invalid entry in coordinates array")
            else:
                i = _trapped_if_outside(i, n)
        else:
            raise ShapeError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got {m!r}")
        term = ew.multiply(i, stride)
        flat = term if flat is None else ew.add(flat, term)
        stride *= n
    return flat


def _ix_(*args):
    out = []
    for k, a in enumerate(args):
        x = arr(a)
        if x.ndim != 1:
            raise ShapeError(f"ix_: cross index must be 1-dimensional, got {x.aval}")
        if x.dtype is dt.bool_:
            x = nonzero(x)[0]
        elif x.size == 0:
            x = x.astype(dt.int64)
        out.append(mv.reshape(x, tuple(-1 if j == k else 1 for j in range(len(args)))))
    return tuple(out)


_export("indices", _indices, "The grid of indices of an array of shape `dimensions` (stacked, or "
                             "open with sparse=True). Lazy.")
_export("unravel_index", _unravel_index, "Flat indices as a tuple of coordinate arrays for `shape`. "
                                         "Lazy.")
_export("ravel_multi_index", _ravel_multi_index, "Coordinate arrays as flat indices into `dims` "
                                                 "(mode 'raise', 'wrap' or 'clip'). Lazy.")
_export("ix_", _ix_, "Open-mesh index arrays from 1-D sequences (x[ix_(rows, cols)]). Lazy for "
                     "integer sequences.")


# --- choosing and joining ------------------------------------------------------------------------
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ShapeError("select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ShapeError("select: select with an empty condition list is not possible")
    conds = [arr(c) for c in condlist]
    for c in conds:
        if c.dtype is not dt.bool_:
            raise ShapeError(f"select: invalid entry in condlist: should be boolean ndarray, got "
                             f"{c.dtype.name}")
    choices = [arr(c) for c in choicelist]
    d = dt.result_type(*[c.dtype for c in choices])
    if isinstance(default, (bool, int, float, complex)):     # a weak Python scalar, as NumPy 2
        d = dt.promote_with_scalar(d, default)
    else:
        d = dt.result_type(d, arr(default).dtype)
    out = arr(default).astype(d)
    for c, v in reversed(list(zip(conds, choices))):
        out = where(c, v.astype(d), out)
    shape = mv.broadcast_shapes(*[c.shape for c in conds], *[v.shape for v in choices])
    return mv.broadcast_to(out, shape) if out.shape != shape else out


def _append(arr_, values, axis=None):
    x, v = arr(arr_, "append", (values,)), arr(values, "append", (arr_,))
    if axis is None:
        return mv.concatenate([mv.reshape(x, (-1,)), mv.reshape(v, (-1,))])
    return mv.concatenate([x, v], axis=axis)


def _host(x, op: str) -> np.ndarray:
    """The condition's values on the host. A Python or NumPy condition is a constant, so its length
    is known while tracing too; only a poot array's values are data."""
    if not isinstance(x, Array):
        return np.asarray(x)
    refuse_data_dependent(f"{op}()", "its length depends on the values", "compute it outside the "
                          "traced function")
    return x.numpy()


def _device_of(*xs):
    from poot.trace import context

    for x in xs:
        if isinstance(x, Array):
            return x.device
    return context.current()


def _padded_selection(op: str, condition, x: Array, ax: int, size, fill_value) -> Array:
    """The slices of `x` along `ax` where the 1-D `condition` is true, as exactly `size` of them (JAX's
    size=/fill_value=): the first `size` selected ones, then slices of `fill_value` (cast to x's dtype).
    The shape no longer depends on the values, so this stays lazy and works inside @pt.jit."""
    size = operator.index(size)
    if size < 0:
        raise ShapeError(f"{op}: size must be non-negative, got {size}")
    cond = arr(condition, op, (x,))
    if cond.ndim != 1:
        raise ShapeError(f"{op}: condition must be a 1-d array, got shape {cond.shape}")
    if cond.shape[0] > x.shape[ax]:    # NumPy reads the extra entries to check they are False
        raise ShapeError(f"{op}: condition of length {cond.shape[0]} is longer than axis {ax} of "
                         f"{x.aval}; with size= it must be at most as long")
    cond = ew.not_equal(cond, 0) if cond.dtype != dt.bool_ else cond
    check_scalar_fits(fill_value, x.dtype, op)
    if x.shape[ax] == 0:        # nothing to select: every slot is fill_value
        shape = x.shape[:ax] + (size,) + x.shape[ax + 1:]
        return full(shape, fill_value, dtype=x.dtype, device=x.device)
    (idx,) = nonzero(cond, size=size, fill_value=0)
    picked = take(x, idx, axis=ax)
    shape = [1] * x.ndim
    shape[ax] = size
    kept = mv.reshape(ew.less(arange(size, device=x.device), cond.astype(dt.int64).sum()), tuple(shape))
    return where(kept, picked, fill_value).astype(x.dtype)


def _compress(condition, a, axis=None, *, size=None, fill_value=0):
    x = arr(a)
    if size is not None:
        if axis is None:
            return _padded_selection("compress", condition, mv.reshape(x, (-1,)), 0, size, fill_value)
        return _padded_selection("compress", condition, x, axis_of(axis, x.ndim, "compress", x), size,
                                 fill_value)
    cond = np.asarray(_host(condition, "compress"), dtype=bool)
    if cond.ndim != 1:
        raise ShapeError(f"compress: condition must be a 1-d array, got shape {cond.shape}")
    if axis is None:
        x, ax = mv.reshape(x, (-1,)), 0
    else:
        ax = axis_of(axis, x.ndim, "compress", x)
    if cond.shape[0] > x.shape[ax] and cond[x.shape[ax]:].any():    # NumPy ignores extra False entries
        raise ShapeError(f"compress: condition of length {cond.shape[0]} is longer than axis {ax} of "
                         f"{x.aval} and selects past its end")
    return take(x, np.flatnonzero(cond[: x.shape[ax]]), axis=ax)


def _extract(condition, arr_, *, size=None, fill_value=0):
    x = mv.reshape(arr(arr_), (-1,))
    if size is not None:
        return _padded_selection("extract", mv.reshape(arr(condition, "extract", (x,)), (-1,)), x, 0, size,
                                 fill_value)
    cond = np.asarray(_host(condition, "extract")).reshape(-1) != 0
    return take(x, np.flatnonzero(cond[: x.shape[0]]))


def _flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(mv.reshape(arr(a), (-1,)), size=size, fill_value=fill_value)[0]


_export("select", _select, "choicelist[i] where condlist[i] is the first true condition, else "
                           "default. Lazy.")
_export("append", _append, "values joined after arr (both flattened when axis is None). Lazy.")
_export("compress", _compress, "The slices of `a` along `axis` where the 1-D condition is true "
                               "(realizes a poot-array condition; with size=n, JAX's, the first n "
                               "padded with fill_value: lazy, works inside @pt.jit).")
_export("extract", _extract, "The elements of the flattened array where condition is nonzero "
                             "(realizes the condition; with size=n, JAX's, the first n padded with "
                             "fill_value: lazy, works inside @pt.jit).")
_export("flatnonzero", _flatnonzero, "Indices of the nonzero elements of the flattened array "
                                     "(realizes, as nonzero; with size=n and fill_value=, as JAX's, "
                                     "lazy and works inside @pt.jit).")


# --- orders --------------------------------------------------------------------------------------
def _lexsort(keys, axis=-1):
    ks = [arr(k) for k in keys] if not isinstance(keys, Array) else [keys[i] for i in range(keys.shape[0])]
    if not ks:
        raise ShapeError("lexsort: need sequence of keys with len > 0")
    order = argsort(ks[0], axis=axis, stable=True)
    for k in ks[1:]:      # the last key is the primary one: sort by it last, stably
        from poot.trace.indexing import take_along_axis

        order = take_along_axis(order, argsort(take_along_axis(k, order, axis=axis), axis=axis,
                                               stable=True), axis=axis)
    return order


def _check_kth(x: Array, kth, axis, op: str) -> None:
    ax = axis_of(axis, x.ndim, op, x)
    n = x.shape[ax]
    for k in np.atleast_1d(np.asarray(kth)).tolist():
        if not -n <= operator.index(k) < n:
            raise ShapeError(f"{op}: kth(={k}) out of bounds ({n})")


def _partition(a, kth, axis=-1, kind="introselect", order=None):
    x = arr(a)
    if axis is None:
        x, axis = mv.reshape(x, (-1,)), -1
    _check_kth(x, kth, axis, "partition")
    return sort(x, axis=axis, order=order)


def _argpartition(a, kth, axis=-1, kind="introselect", order=None):
    x = arr(a)
    if axis is None:
        x, axis = mv.reshape(x, (-1,)), -1
    _check_kth(x, kth, axis, "argpartition")
    return argsort(x, axis=axis, order=order)


_export("lexsort", _lexsort, "Indices that sort by several keys, the last key primary (stable). "
                             "Lazy: one stable argsort per key.")
_export("partition", _partition, "np.partition's contract (k-th element in place, smaller before, "
                                 "larger after), met by the sorted array. Lazy.")
_export("argpartition", _argpartition, "Indices that partition (the sorting indices). Lazy.")


# --- 1-D set operations --------------------------------------------------------------------------
def _first_of_runs(s: Array) -> Array:
    """True at the first element of each run of equal values of the sorted 1-D `s` (NaNs, sorted
    last, make one run, as NumPy's unique collapses them)."""
    if s.shape[0] == 0:
        return ew.not_equal(s, s)
    new = ew.not_equal(s[1:], s[:-1])
    if s.dtype.kind in "fc":
        new = ew.logical_and(new, ew.logical_not(ew.logical_and(ew.isnan(s[1:]), ew.isnan(s[:-1]))))
    return mv.concatenate([full((1,), True, dtype=dt.bool_, device=s.device), new])


def _sized_set_op(name: str, ar1, ar2, assume_unique, return_indices, size, fill_value):
    """JAX's set operations with a static `size`: the first `size` values of NumPy's result, padded
    with `fill_value` (setdiff1d's default 0; the others' the result's smallest value, as JAX's), and
    for intersect1d's return_indices the first positions in each input, padded with its length. Built
    from sorts, isin and nonzero(size=): lazy, works inside @pt.jit."""
    from poot.trace.numpy_more import isin

    size = operator.index(size)
    if size < 0:
        raise ShapeError(f"{name}: size must be non-negative, got {size}")
    a, b = mv.reshape(arr(ar1, name, (ar2,)), (-1,)), mv.reshape(arr(ar2, name, (ar1,)), (-1,))
    both = mv.concatenate([a, b])                     # NumPy's common dtype (setdiff1d keeps ar1's)
    if name != "setdiff1d":
        a, b = both[: a.shape[0]], both[a.shape[0]:]
    order_a = argsort(a, stable=True)
    sa = take(a, order_a)
    first_a = _first_of_runs(sa)
    if name == "union1d":
        cand = sort(both)
        keep = _first_of_runs(cand)
    elif name == "intersect1d":
        cand, keep = sa, ew.logical_and(first_a, isin(sa, b))
    elif name == "setdiff1d" and assume_unique:       # NumPy keeps ar1's order then
        cand, keep = a, isin(a, b, invert=True)
    elif name == "setdiff1d":
        cand, keep = sa, ew.logical_and(first_a, isin(sa, b, invert=True))
    else:                                             # setxor1d: each side's values missing from the other
        sb = sort(b)
        cand = mv.concatenate([sa, sb])
        keep = mv.concatenate([ew.logical_and(first_a, isin(sa, b, invert=True)),
                               ew.logical_and(_first_of_runs(sb), isin(sb, a, invert=True))])
        order = _lexsort((cand, ew.logical_not(keep)))   # the kept values first, ascending
        cand, keep = take(cand, order), take(keep, order)
    (pos,) = nonzero(keep, size=size, fill_value=0)
    values = take(cand, pos) if cand.shape[0] else full((size,), 0, dtype=cand.dtype, device=cand.device)
    count = keep.astype(dt.int64).sum()
    kept = ew.less(arange(size, device=cand.device), count)
    if fill_value is None:
        fill_value = 0 if name == "setdiff1d" or size == 0 else where(ew.greater(count, 0), values[0], 0)
    check_scalar_fits(fill_value, cand.dtype, name)
    out = where(kept, values, fill_value).astype(cand.dtype)
    if not return_indices:
        return out
    ind1 = where(kept, take(order_a, pos) if a.shape[0] else 0, a.shape[0])
    order_b = argsort(b, stable=True)
    sb = take(b, order_b)
    at_b = ew.minimum(searchsorted(sb, values), max(b.shape[0] - 1, 0))     # the first equal one
    ind2 = where(kept, take(order_b, at_b) if b.shape[0] else 0, b.shape[0])
    return out, ind1.astype(dt.int64), ind2.astype(dt.int64)


def _set_op(name: str, fn):
    def op(ar1, ar2, *args, size=None, fill_value=None, **kwargs):
        if size is not None:
            names = {"intersect1d": ("assume_unique", "return_indices"), "union1d": ()}.get(
                name, ("assume_unique",))
            if len(args) > len(names):
                raise ArgumentError(f"{name}: takes at most {2 + len(names)} positional arguments")
            given = dict(zip(names, args), **kwargs)
            unknown = set(given) - set(names)
            if unknown:
                raise ArgumentError(f"{name}: got an unexpected keyword argument {sorted(unknown)[0]!r}")
            return _sized_set_op(name, ar1, ar2, given.get("assume_unique", False),
                                 given.get("return_indices", False), size, fill_value)
        if fill_value is not None:
            raise ArgumentError(f"{name}: fill_value= pads a result of size=n; give size too")
        a, b = _host(ar1, name), _host(ar2, name)
        got = fn(a, b, *args, **kwargs)
        dev = _device_of(ar1, ar2)
        if isinstance(got, tuple):
            return tuple(_leaf(g, dev) for g in got)
        return _leaf(got, dev)

    return op


_SIZED = (" With size=n (JAX's) the first n values, padded with fill_value: lazy, works inside "
          "@pt.jit.")
_export("intersect1d", _set_op("intersect1d", np.intersect1d),
        "Sorted unique values in both arrays (return_indices= as NumPy). Realizes its inputs." + _SIZED)
_export("union1d", _set_op("union1d", np.union1d), "Sorted unique values in either array. Realizes."
        + _SIZED)
_export("setdiff1d", _set_op("setdiff1d", np.setdiff1d),
        "Sorted unique values of ar1 not in ar2. Realizes its inputs." + _SIZED)
_export("setxor1d", _set_op("setxor1d", np.setxor1d),
        "Sorted unique values in exactly one of the arrays. Realizes its inputs." + _SIZED)
