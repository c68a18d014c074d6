"""The array API standard's sorting, searching and set functions: sort, argsort, searchsorted and
unique_all / unique_counts / unique_inverse / unique_values.

poot has no sort primitive, so `sort`, `argsort` and the `unique_*` family are host fallbacks: they
realize their input, compute with NumPy on the host and return new arrays on the input's device (each
docstring says so). `unique_*` results have data-dependent shapes, so they could not stay lazy anyway.
`searchsorted` stays lazy: it is a compare-and-count reduction, fused into one kernel.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes as dt
from ..errors import DTypeError, ShapeError, api_boundary
from .array import Array
from .lazy import from_numpy
from .movement import arr, axis_of

__all__ = ["sort", "argsort", "searchsorted", "unique_all", "unique_counts", "unique_inverse",
           "unique_values"]


def _host(x: Array, what: str) -> np.ndarray:
    """x's value on the host (realizing it; inside @pt.jit this raises TracerError)."""
    x._realize(what)
    return x.numpy()


def _leaf(a: np.ndarray, device: str, dtype: dt.DType | None = None) -> Array:
    return Array(from_numpy(np.asarray(a), device, dtype))


def _sortable(op: str, x: Array) -> None:
    if x.ndim == 0:
        raise ShapeError(f"{op}: a 0-d array has no axis to sort along ({x.aval}); reshape it to (1,)")


@api_boundary
def sort(x, /, *, axis=-1, descending=False, stable=True):
    """`x` sorted along `axis` (ascending, or descending; NaNs sort last when ascending). A host
    fallback: realizes `x`, sorts with NumPy on the host and returns a new array on x's device."""
    x = arr(x)
    _sortable("sort", x)
    ax = axis_of(axis, x.ndim, "sort", x)
    out = np.sort(_host(x, "sort()"), axis=ax, kind="stable")
    return _leaf(np.flip(out, axis=ax) if descending else out, x.device, x.dtype)


@api_boundary
def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices (int64) that sort `x` along `axis`; equal elements keep their order (always stable,
    also when descending). A host fallback: realizes `x` and sorts with NumPy on the host."""
    x = arr(x)
    _sortable("argsort", x)
    ax = axis_of(axis, x.ndim, "argsort", x)
    a = _host(x, "argsort()")
    if not descending:
        idx = np.argsort(a, axis=ax, kind="stable")
    else:  # stable descending: sort the reversed array, reverse back, map positions back
        idx = np.flip(np.argsort(np.flip(a, axis=ax), axis=ax, kind="stable"), axis=ax)
        idx = a.shape[ax] - 1 - idx
    return _leaf(idx.astype(np.int64), x.device)


def _less(a, v, float_kind: bool):
    """a < v in the order NumPy sorts by (NaN greatest), as lazy arrays."""
    from .elementwise import isnan, less, logical_and, logical_not, logical_or

    r = less(a, v)
    return logical_or(r, logical_and(logical_not(isnan(a)), isnan(v))) if float_kind else r


def _less_equal(a, v, float_kind: bool):
    from .elementwise import isnan, less_equal, logical_or

    r = less_equal(a, v)
    return logical_or(r, isnan(v)) if float_kind else r


@api_boundary
def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where each element of `x2` would be inserted into the ascending 1-D `x1` to keep it sorted:
    the count of x1's elements below it (side='left') or not above it (side='right'), int64. NaNs
    count as the greatest values, as they sort. Lazy: one compare-and-count reduction of
    len(x1) * x2.size comparisons (no sort, nothing realized)."""
    from .indexing import take
    from .promote import promote
    from .reductions import sum as sum_

    x1 = arr(x1)
    if x1.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be one-dimensional (sorted ascending), got {x1.aval}")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x1 = take(x1, sorter)
    x2 = arr(x2)
    _, d, _ = promote("searchsorted", (x1, x2))
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


def _unique(x, what: str):
    """NumPy's unique over the flattened `x`, each NaN distinct (the standard's rule: NaN != NaN)."""
    x = arr(x)
    if x.dtype.kind not in "biuf":
        raise DTypeError(f"{what}: unsupported dtype {x.dtype.name}")
    a = _host(x, f"{what}()").reshape(-1)
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    return x, values, index, inverse.reshape(x.shape), counts


@api_boundary
def unique_all(x, /):
    """The unique values of `x` (sorted), the index of each value's first occurrence in the flattened
    x, the inverse indices (x's shape) and the counts. Data-dependent shape: realizes `x` and
    computes on the host with NumPy (each NaN is its own unique value)."""
    x, v, i, inv, c = _unique(x, "unique_all")
    dev = x.device
    return UniqueAllResult(_leaf(v, dev, x.dtype), _leaf(i.astype(np.int64), dev),
                           _leaf(inv.astype(np.int64), dev), _leaf(c.astype(np.int64), dev))


@api_boundary
def unique_counts(x, /):
    """The unique values of `x` and how often each occurs. Data-dependent shape: realizes `x`
    and computes on the host with NumPy (each NaN is its own unique value)."""
    x, v, _, _, c = _unique(x, "unique_counts")
    return UniqueCountsResult(_leaf(v, x.device, x.dtype), _leaf(c.astype(np.int64), x.device))


@api_boundary
def unique_inverse(x, /):
    """The unique values of `x` and, for each element of x, the index of its value among them
    (x's shape). Data-dependent shape: realizes `x` and computes on the host with NumPy."""
    x, v, _, inv, _ = _unique(x, "unique_inverse")
    return UniqueInverseResult(_leaf(v, x.device, x.dtype), _leaf(inv.astype(np.int64), x.device))


@api_boundary
def unique_values(x, /):
    """The sorted unique values of `x` (1-D). Data-dependent shape: realizes `x` and computes on
    the host with NumPy (each NaN is its own unique value)."""
    x, v, _, _, _ = _unique(x, "unique_values")
    return _leaf(v, x.device, x.dtype)
