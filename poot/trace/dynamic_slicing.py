"""`pt.dynamic_slice` (jax.lax.dynamic_slice) and `pt.top_k` (jax.lax.top_k).

dynamic_slice reads a window of fixed `slice_sizes` at start indices that may be traced: a start
known now becomes a plain slice; a traced one a `take` of `size` consecutive positions along its
axis, computed from the start, so one compiled program serves every start. As in JAX 0.10, a
negative start counts from the end once, and every start is then clamped so that the window fits:
the result always has `slice_sizes` and no index check can fail.

top_k is a stable descending argsort of the last axis cut to k, so ties keep the lower index first
(JAX's order); values are gathered with those indices, which differentiates to a scatter-add.
"""
from __future__ import annotations

import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace.array import Array
from poot.trace.array_api_sets import argsort
from poot.trace.creation import arange
from poot.trace.indexing import take, take_along_axis
from poot.trace.movement import arr, moveaxis
from poot.trace.selection import where

__all__ = ["dynamic_slice", "top_k"]


def _starts(start_indices, ndim: int, op: str) -> list:
    if isinstance(start_indices, (tuple, list)):
        starts = list(start_indices)
    else:
        s = start_indices if isinstance(start_indices, Array) else np.asarray(start_indices)
        if s.ndim != 1:
            raise ShapeError(f"{op}: start_indices must be a sequence or a 1-d array, got shape {s.shape}")
        starts = [s[i] for i in range(s.shape[0])]
    if len(starts) != ndim:
        raise ShapeError(f"{op}: {len(starts)} start indices for a {ndim}-d operand")
    return starts


def _clamped_start(start, n: int, size: int, wrap: bool, op: str):
    """The start as JAX uses it: wrapped once if negative (when `wrap`), clamped to [0, n - size]."""
    if isinstance(start, (int, np.integer)) and not isinstance(start, bool):
        s = int(start)
        s = s + n if wrap and s < 0 else s
        return min(max(s, 0), n - size)
    a = arr(start)
    if a.ndim != 0 or not dt.is_int(a.dtype):
        raise DTypeError(f"{op}: each start index must be an integer scalar, got {a.aval}")
    a = a.astype(dt.int64)
    if wrap:
        a = where(a < 0, a + n, a)
    return ew.minimum(ew.maximum(a, 0), n - size)


@api_boundary
def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[s0:s0+k0, s1:s1+k1, ...] for `slice_sizes` (k0, k1, ...) at `start_indices` (ints or
    traced integer scalars, one per axis), as jax.lax.dynamic_slice: a negative start counts from the
    end, then each start is clamped to [0, n - k] so the window fits. Works under @pt.jit (traced
    starts), pt.vmap and pt.grad."""
    x = arr(operand)
    try:
        sizes = tuple(operator.index(k) for k in slice_sizes)
    except TypeError:
        raise ArgumentError(f"dynamic_slice: slice_sizes must be a sequence of ints, got {slice_sizes!r}") from None
    if len(sizes) != x.ndim or any(not 0 <= k <= n for k, n in zip(sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: slice_sizes {sizes} must give a size in [0, n] for each axis of "
                         f"{x.shape}")
    starts = _starts(start_indices, x.ndim, "dynamic_slice")
    wraps = allow_negative_indices if isinstance(allow_negative_indices, (tuple, list)) \
        else [allow_negative_indices] * x.ndim
    out, static = x, []
    for axis, (start, k, n) in enumerate(zip(starts, sizes, x.shape)):
        s = _clamped_start(start, n, k, bool(wraps[axis]), "dynamic_slice")
        if isinstance(s, int):
            static.append(slice(s, s + k))
            continue
        static.append(slice(None))
        pos = arange(k, dtype=dt.int64, device=x.device) + s
        out = take(out, pos, axis=axis)
    return out[tuple(static)]


@api_boundary
def top_k(operand, k, *, axis=-1):
    """(values, indices) of the k largest elements along `axis` (the last by default), largest first,
    ties by lower index first, as jax.lax.top_k; indices are int32, as JAX's."""
    x = arr(operand)
    try:
        k = operator.index(k)
    except TypeError:
        raise ArgumentError(f"top_k: k must be an int, got {k!r}") from None
    if x.ndim == 0:
        raise ShapeError("top_k: the operand must have at least one axis")
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise ShapeError(f"top_k: axis {axis} out of range for a {x.ndim}-d operand")
    if not 0 <= k <= x.shape[ax]:
        raise ShapeError(f"top_k: k={k} must be in [0, {x.shape[ax]}] (the size of axis {axis})")
    last = moveaxis(x, ax, -1) if ax != x.ndim - 1 else x
    order = argsort(last, axis=-1, descending=True, stable=True)   # NaN first: the largest, as in JAX
    idx = order[..., :k]
    values = take_along_axis(last, idx, axis=-1)
    idx = idx.astype(dt.int32)
    if ax != x.ndim - 1:
        values, idx = moveaxis(values, -1, ax), moveaxis(idx, -1, ax)
    return values, idx
