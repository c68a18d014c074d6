"""The array API standard's sorting, searching and set functions: sort, argsort, searchsorted and
unique_all / unique_counts / unique_inverse / unique_values.

`sort`, `argsort`, a long `searchsorted` and the `unique_*` functions given `size=` are host ops
(poot.graph.host): lazy equations that a program runs with NumPy on the host as one step, so they
work inside @pt.jit like any operation. Without `size=`, a `unique_*` result's shape depends on the
values: eagerly it realizes `x` and computes on the host; inside @pt.jit it raises TracerError
(pass `size=`, as in JAX). A short `searchsorted` is a compare-and-count reduction fused into one kernel.

On GPU devices (POOT_GPU_SORT, poot/trace/device_search.py) sort and argsort run as device kernels, and
searchsorted (a binary search) and unique_* (around the sort kernels) are lazy operations, so nothing
goes to the host but, for unique_* without `size=`, the number of distinct values.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from poot import dtypes as dt
from poot.errors import AxisError, DTypeError, ShapeError, api_boundary
from poot.devices import cpu_sort
from poot.graph import host_sort
from poot.trace.array import Array
from poot.trace.device_search import binary_search, runs_device_kernels, unique as device_unique
from poot.trace.lazy import from_numpy, record
from poot.trace.movement import arr, axis_of, reshape

__all__ = ["sort", "argsort", "searchsorted", "unique_all", "unique_counts", "unique_inverse",
           "unique_values"]

# searchsorted compares every query with every element when len(x1) * x2.size is at most this (one
# fused kernel, on the device); above it, NumPy's binary search runs as a host step
SEARCH_FUSED_MAX = 1 << 16


def _leaf(a: np.ndarray, device: str, dtype: dt.DType | None = None) -> Array:
    return Array(from_numpy(np.asarray(a), device, dtype))


class NoSortAxisError(AxisError, ShapeError):
    """Sorting a 0-d array: NumPy's AxisError (axis -1 is out of bounds for dimension 0), and the
    ShapeError poot has always raised for it."""


def _sortable(op: str, x: Array) -> None:
    if x.ndim == 0:
        raise NoSortAxisError(f"{op}: a 0-d array has no axis to sort along ({x.aval}); reshape it to (1,)")


_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _numpy_sort_args(op: str, x, axis, kind, order):
    """NumPy's sort/argsort arguments: axis=None sorts the flattened array; every `kind` gives the
    same (stable) order; `order` needs structured arrays."""
    x = arr(x)
    if kind not in _SORT_KINDS:
        raise ShapeError(f"{op}: kind must be one of {', '.join(map(repr, _SORT_KINDS))}, got {kind!r}")
    if order is not None:
        raise DTypeError(f"{op}: order= needs structured arrays, which poot does not have")
    if axis is None:
        return reshape(x, (-1,)), -1
    return x, axis


@api_boundary
def sort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """`x` sorted along `axis` (ascending, or descending; NaNs sort last when ascending; the
    flattened array when axis is None). Always stable. A host op: lazy, run by the program with
    NumPy on the host (works inside @pt.jit)."""
    x, axis = _numpy_sort_args("sort", x, axis, kind, order)
    _sortable("sort", x)
    ax = axis_of(axis, x.ndim, "sort", x)
    if x.dtype.kind == "c":     # NumPy's lexicographic order, NaNs last
        from poot.trace.complex_order import sort_values

        return sort_values(x, ax, descending)
    return Array(record("sort", (x._node,), {"axis": ax, "descending": bool(descending)}))


@api_boundary
def argsort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """Indices (int64) that sort `x` along `axis` (into the flattened array when axis is None);
    equal elements keep their order (always stable, also when descending). A host op: lazy, run by
    the program with NumPy on the host (works inside @pt.jit)."""
    x, axis = _numpy_sort_args("argsort", x, axis, kind, order)
    _sortable("argsort", x)
    ax = axis_of(axis, x.ndim, "argsort", x)
    if x.dtype.kind == "c":     # NumPy's lexicographic order, NaNs last
        from poot.trace.complex_order import sort_order

        return sort_order(x, ax, descending)
    return Array(record("argsort", (x._node,), {"axis": ax, "descending": bool(descending)}))


def _less(a, v, float_kind: bool):
    """a < v in the order NumPy sorts by (NaN greatest), as lazy arrays."""
    from poot.trace.elementwise import isnan, less, logical_and, logical_not, logical_or

    r = less(a, v)
    return logical_or(r, logical_and(logical_not(isnan(a)), isnan(v))) if float_kind else r


def _less_equal(a, v, float_kind: bool):
    from poot.trace.elementwise import isnan, less_equal, logical_or

    r = less_equal(a, v)
    return logical_or(r, isnan(v)) if float_kind else r


@api_boundary
def searchsorted(x1, x2, /, side="left", sorter=None):     # side, sorter by position too, as NumPy
    """Where each element of `x2` would be inserted into the ascending 1-D `x1` to keep it sorted:
    the count of x1's elements below it (side='left') or not above it (side='right'), int64. NaNs
    count as the greatest values, as they sort. Lazy: one compare-and-count reduction of
    len(x1) * x2.size comparisons when that is at most SEARCH_FUSED_MAX, else a host op (NumPy's
    binary search, run by the program on the host); on GPU devices a binary search of lazy
    operations at every size (one fused kernel). All work inside @pt.jit."""
    from poot.trace.indexing import take
    from poot.trace.promote import promote
    from poot.trace.reductions import sum as sum_

    x1 = arr(x1, "searchsorted", (x2, sorter))
    if x1.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be one-dimensional (sorted ascending), got {x1.aval}")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x1 = take(x1, sorter)
    x2 = arr(x2, "searchsorted", (x1,))
    _, d, _ = promote("searchsorted", (x1, x2))
    if d.kind == "c":         # the sort order's comparison (complex_order.sort_less), fused at every size
        from poot.trace.complex_order import sort_less

        a, v = (x if x.dtype is d else x.astype(d) for x in (x1, x2))
        v = v.reshape(v.shape + (1,))
        return sum_(sort_less(a, v) if side == "left" else ~sort_less(v, a), axis=-1)
    if runs_device_kernels(x2.device):      # a binary search of lazy ops: no host step on a GPU
        a, v = (x if x.dtype is d else x.astype(d) for x in (x1, x2))
        cmp = _less if side == "left" else _less_equal
        return binary_search(a, v, lambda probe, q: cmp(probe, q, d.kind == "f"))
    if x1.shape[0] * x2.size > SEARCH_FUSED_MAX:
        a, v = (x if x.dtype is d else x.astype(d) for x in (x1, x2))
        return Array(record("searchsorted", (a._node, v._node), {"side": side}))
    v = x2.reshape(x2.shape + (1,))
    cmp = _less if side == "left" else _less_equal
    return sum_(cmp(x1, v, d.kind == "f"), axis=-1)


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(x, what: str, size, fill_value, want: tuple):
    """The results `want` (0 values, 1 first indices, 2 inverse, 3 counts) of NumPy's unique over the
    flattened `x`, each NaN distinct (the standard's rule: NaN != NaN). With `size`: the host op, padded
    or truncated to `size` (JAX's rule). Without: realized now on the host (refused while tracing)."""
    from poot.trace.host_results import HostResults
    from poot.trace.indexing import refuse_data_dependent

    x = arr(x)
    if x.dtype.kind not in "biufc":
        raise DTypeError(f"{what}: unsupported dtype {x.dtype.name}")
    if size is not None:
        size = int(size)
        if size < 0:
            raise ShapeError(f"{what}: size must be non-negative, got {size}")
        if fill_value is not None:
            fill_value = {"f": float, "c": complex}.get(x.dtype.kind, int)(fill_value)
        params = {"size": size, "fill_value": fill_value}
        if x.dtype.kind == "c":     # NumPy orders complex values lexicographically (host_complex)
            from poot.trace.complex_values import host_complex_nodes

            nodes = host_complex_nodes("unique", [x], params, 4)
            return [Array(nodes[k]) for k in want]
        if runs_device_kernels(x.device):   # the sort as device kernels, the rest lazy
            return device_unique(x, want, size=size, fill_value=fill_value, equal_nan=False)
        return [Array(record("unique", (x._node,), {**params, "index": k})) for k in want]
    refuse_data_dependent(f"{what}(x)", "its length is the number of distinct values",
                          f"pass size=n (and fill_value=) for a fixed length: {what}(x, size=n)")
    if x.dtype.kind != "c" and runs_device_kernels(x.device):   # reads only the number of values
        return device_unique(x, want, size=None, fill_value=None, equal_nan=False)
    x._realize(f"{what}()")
    a = x.numpy().reshape(-1)
    if x.dtype is dt.bfloat16:      # host_sort orders NumPy's own dtypes: bfloat16 as its float32 values
        a = a.astype(np.float32)
    res = HostResults(x.device)
    got = host_sort.unique(a, index=1 in want, inverse=2 in want, counts=3 in want, equal_nan=False,
                           alloc=res.alloc, sort_1d=cpu_sort.sort_into)
    if x.dtype is dt.bfloat16:
        got[0] = got[0].astype(x.dtype.np)
    if 2 in want:
        got[2] = got[2].reshape(x.shape)
    return [res.array(got[k], x.dtype if k == 0 else None) for k in want]


_SIZE_DOC = ("With size=n the results have n entries (a host op on the CPU, lazy operations on GPU "
             "devices; works inside @pt.jit): fewer distinct values are padded (values with "
             "fill_value, default the smallest value; indices and counts with 0), more are truncated, "
             "as JAX's unique(size=). Without size the shape depends on the values: realizes `x` and "
             "computes on the host with NumPy (inside @pt.jit: TracerError; on GPU devices only the "
             "number of distinct values is read). Each NaN is its own unique value.")


@api_boundary
def unique_all(x, /, *, size=None, fill_value=None):
    """The unique values of `x` (sorted), the index of each value's first occurrence in the flattened
    x, the inverse indices (x's shape) and the counts."""
    return UniqueAllResult(*_unique(x, "unique_all", size, fill_value, (0, 1, 2, 3)))


@api_boundary
def unique_counts(x, /, *, size=None, fill_value=None):
    """The unique values of `x` and how often each occurs."""
    return UniqueCountsResult(*_unique(x, "unique_counts", size, fill_value, (0, 3)))


@api_boundary
def unique_inverse(x, /, *, size=None, fill_value=None):
    """The unique values of `x` and, for each element of x, the index of its value among them
    (x's shape)."""
    return UniqueInverseResult(*_unique(x, "unique_inverse", size, fill_value, (0, 2)))


@api_boundary
def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of `x` (1-D)."""
    return _unique(x, "unique_values", size, fill_value, (0,))[0]


for _f in (unique_all, unique_counts, unique_inverse, unique_values):
    _f.__doc__ += " " + _SIZE_DOC
