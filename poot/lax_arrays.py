"""jax.lax's array functions with XLA's own semantics, for `pt.lax` (poot/lax.py re-exports them):
`sort` over several operands with `num_keys`, `sort_key_val`, `pad` with interior and negative padding,
`full`/`full_like`, and `gather` with XLA's dimension numbers. Each is written over poot's functions."""
from __future__ import annotations

import builtins
import enum
import typing

import numpy as np

import poot.trace as _t
from poot import dtypes as _dt
from poot.errors import ArgumentError, AxisError, DTypeError, ShapeError, api_boundary
from poot.graph import normalize_axis as _normalize_axis
from poot.trace.array import Array
from poot.trace.lazy import check_scalar_fits
from poot.trace.movement import arr as _arr

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "full",
    "full_like",
    "gather",
    "pad",
    "sort",
    "sort_key_val",
]


@api_boundary
def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort: `operand` (an array, or a sequence of arrays of one shape) sorted along
    `dimension`. With several operands the first `num_keys` are the keys, compared in order
    (lexicographically), and every operand is put in their order; a sequence gives a tuple back.
    NaNs sort last and equal keys keep their order (the sort is always stable, which `is_stable=False`
    allows too)."""
    single = not isinstance(operand, (tuple, list))
    xs = [_arr(operand)] if single else [_arr(x) for x in operand]
    if not xs:
        raise ArgumentError("lax.sort: operand must be an array or a non-empty sequence of arrays")
    if isinstance(num_keys, bool) or not isinstance(num_keys, (int, np.integer)) or \
            not 1 <= num_keys <= len(xs):
        raise ArgumentError(f"lax.sort: num_keys must be an integer from 1 to the number of operands "
                            f"({len(xs)}); got {num_keys!r}")
    if any(tuple(x.shape) != tuple(xs[0].shape) for x in xs):
        raise ShapeError(f"lax.sort: the operands must have one shape; got "
                         f"{', '.join(str(tuple(x.shape)) for x in xs)}")
    if xs[0].ndim == 0:
        raise AxisError(f"lax.sort: dimension {dimension} is out of bounds for a 0-d operand")
    axis = _normalize_axis(dimension, xs[0].ndim, "lax.sort")
    if single:
        return _t.sort(xs[0], axis=axis, stable=True)
    order = None               # stable sorts from the last key to the first: a lexicographic order
    for key in reversed(xs[:num_keys]):
        k = key if order is None else _t.take_along_axis(key, order, axis=axis)
        step = _t.argsort(k, axis=axis, stable=True)
        order = step if order is None else _t.take_along_axis(order, step, axis=axis)
    return tuple(_t.take_along_axis(x, order, axis=axis) for x in xs)


@api_boundary
def pad(operand, padding_value, padding_config):
    """jax.lax.pad: `operand` with `padding_config[i] = (lo, hi, interior)` on axis i: `interior`
    values between neighbouring elements, then `lo` before and `hi` after; a negative lo or hi
    removes elements from that end (of the interior-padded axis). `padding_value` is a scalar of the
    operand's dtype (a Python int also for a float operand, as JAX's weak scalars). One scatter of
    the kept elements into a filled array, so it differentiates and batches as `.at[...].set`."""
    x = _arr(operand)
    config = [tuple(c) for c in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 for c in config):
        raise ArgumentError(f"lax.pad: padding_config must have one (lo, hi, interior) triple per axis of the "
                            f"operand {x.aval}; got {config}")
    for c in config:
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in c):
            raise ArgumentError(f"lax.pad: padding_config holds integers; got {config}")
        if c[2] < 0:
            raise ArgumentError(f"lax.pad: interior padding must be non-negative; got {config}")
    value = _pad_value(x, padding_value)
    shape, dest, src = [], [], []
    for n, (lo, hi, interior) in zip(x.shape, config):
        lo, hi, step = int(lo), int(hi), int(interior) + 1
        m = lo + n + builtins.max(n - 1, 0) * (step - 1) + hi
        if m < 0:
            raise ShapeError(f"lax.pad: padding {config} makes an axis of length {n} negative ({m}) "
                             f"in the operand {x.aval}")
        first = builtins.max(0, -(lo // step))                  # the elements landing in [0, m)
        last = builtins.min(n, (m - 1 - lo) // step + 1) if m - 1 - lo >= 0 else 0
        shape.append(m)
        src.append(builtins.slice(first, builtins.max(first, last)))
        dest.append(builtins.slice(lo + first * step, lo + builtins.max(first, last - 1) * step + 1, step))
    out = _t.full(tuple(shape), value, dtype=x.dtype)
    if any(sl.stop <= sl.start for sl in src):          # nothing of the operand is kept
        return out
    return out.at[tuple(dest)].set(x[tuple(src)])


def _pad_value(x: Array, v) -> Array:
    """lax.pad's padding value as a 0-d array of x's dtype: JAX refuses another dtype; a Python
    scalar of x's kind (an int for any number) is converted, one that does not fit refused."""
    if isinstance(v, (builtins.bool, int, float, builtins.complex)) and not isinstance(v, np.generic):
        rank = 3 if isinstance(v, builtins.complex) else 2 if isinstance(v, float) else \
            0 if isinstance(v, builtins.bool) else 1
        if rank > {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[x.dtype.kind]:
            raise DTypeError(f"lax.pad: the padding value {v!r} is not of the operand's dtype "
                             f"{x.dtype.name}; convert one of them")
        check_scalar_fits(v, x.dtype, "lax.pad")
        return _t.full((), v, dtype=x.dtype)
    a = _arr(v)
    if a.ndim != 0:
        raise ShapeError(f"lax.pad: padding_value must be a scalar; got {a.aval}")
    if a.dtype != x.dtype:
        raise DTypeError(f"lax.pad: the operand ({x.dtype.name}) and padding_value ({a.dtype.name}) must "
                         f"have one dtype")
    return a


@api_boundary
def full(shape, fill_value, dtype=None, *, sharding=None):
    """jax.lax.full: an array of `shape` (an int is a length) filled with the scalar `fill_value`, of
    `dtype` or else fill_value's (a Python scalar's as in `pt.full`)."""
    _scalar_fill("full", fill_value)
    return _t.full(shape, fill_value, dtype=dtype)


@api_boundary
def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """jax.lax.full_like: like `x` (its dtype unless `dtype`, its shape unless `shape`), filled
    with the scalar `fill_value`."""
    _scalar_fill("full_like", fill_value)
    return _t.full_like(_arr(x), fill_value, dtype=dtype, shape=shape)


def _scalar_fill(name: str, v) -> None:
    if np.ndim(v) if not isinstance(v, Array) else v.ndim:
        raise ShapeError(f"lax.{name}: fill_value must be a scalar; got shape {np.shape(v) if not isinstance(v, Array) else v.shape}")


class GatherDimensionNumbers(typing.NamedTuple):
    """jax.lax.GatherDimensionNumbers: how `lax.gather` reads slices (see `gather`)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """jax.lax.GatherScatterMode: what `lax.gather` does with a slice that does not fit."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"


@api_boundary
def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """jax.lax.gather (XLA's Gather): for each index vector `start_indices[b, :]` (the last axis),
    the slice of `slice_sizes` of `operand` that starts at it (its k-th entry the start on axis
    start_index_map[k], 0 elsewhere; on an operand batching axis, b's coordinate along the paired
    start_indices batching axis). The slice's collapsed and batching axes (of size 1) are dropped, its
    other axes go to positions `offset_dims` of the result, the batch axes of b fill the rest in order.
    A slice that does not fit is moved inside (mode None, 'clip', 'promise_in_bounds') or read as
    `fill_value` (mode 'fill': NaN, or the dtype's extreme for integers, by default). One advanced
    index of `operand`, so it differentiates and batches as indexing does."""
    x, idx = _arr(operand), _arr(start_indices)
    dn = GatherDimensionNumbers(*(tuple(int(d) for d in getattr(dimension_numbers, f))
                                  for f in GatherDimensionNumbers._fields))
    sizes = tuple(int(n) for n in slice_sizes)
    if isinstance(mode, enum.Enum):     # poot's GatherScatterMode, or JAX's own (by its member's name)
        mode = GatherScatterMode[mode.name].value if mode.name in GatherScatterMode.__members__ else mode
    if mode not in (None, "clip", "fill", "drop", "promise_in_bounds"):
        raise ArgumentError(f"lax.gather: mode must be 'clip', 'fill' or 'promise_in_bounds'; got {mode!r}")
    if not _dt.is_int(idx.dtype) or idx.ndim == 0:
        raise DTypeError(f"lax.gather: start_indices must be an integer array whose last axis holds the "
                         f"index vectors; got {idx.aval}")
    batch = tuple(idx.shape[:-1])
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    keep = [d for d in range(x.ndim) if d not in dropped]
    rank = len(batch) + len(keep)
    if len(sizes) != x.ndim or any(not 0 <= n <= m for n, m in zip(sizes, x.shape)) or \
            any(sizes[d] != 1 for d in dropped) or idx.shape[-1] != len(dn.start_index_map) or \
            len(dn.offset_dims) != len(keep) or any(not 0 <= p < rank for p in dn.offset_dims) or \
            len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims) or \
            set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise ArgumentError(f"lax.gather: {dn} with slice_sizes {sizes} does not fit the operand {x.aval} "
                            f"and start_indices {idx.aval}")
    starts = [0] * x.ndim
    out_of_range = None
    for k, d in enumerate(dn.start_index_map):
        s_k = idx[..., k].astype(_dt.int64)
        top = x.shape[d] - sizes[d]
        if mode in ("fill", "drop"):
            bad = (s_k < 0) | (s_k > top)
            out_of_range = bad if out_of_range is None else out_of_range | bad
        starts[d] = _t.clip(s_k, 0, top)
    index = []                  # per operand axis, an index array over (batch axes, slice axes)
    for d in range(x.ndim):
        base = starts[d]
        if d in dn.operand_batching_dims:
            j = dn.start_indices_batching_dims[dn.operand_batching_dims.index(d)]
            base = _t.arange(batch[j], dtype=_dt.int64).reshape((-1,) + (1,) * (len(batch) - 1 - j))
        if isinstance(base, Array):
            base = base.reshape(tuple(base.shape) + (1,) * x.ndim)
        offset = _t.arange(sizes[d], dtype=_dt.int64).reshape((-1,) + (1,) * (x.ndim - 1 - d))
        index.append(base + offset)
    shape = batch + tuple(sizes)
    g = x[tuple(_t.broadcast_to(i, shape) for i in index)].reshape(batch + tuple(sizes[d] for d in keep))
    spots = [p for p in range(rank) if p not in dn.offset_dims]
    perm = [0] * rank
    for i, p in enumerate(spots):
        perm[p] = i
    for j, p in enumerate(dn.offset_dims):
        perm[p] = len(batch) + j
    g = _t.transpose(g, perm)
    if out_of_range is None:
        return g
    from poot.trace.at_updates import _fill_default
    fill = _fill_default(x.dtype) if fill_value is None else fill_value
    mask = _t.transpose(out_of_range.reshape(batch + (1,) * len(keep)), perm)
    return _t.where(mask, _t.full((), fill, dtype=x.dtype), g)


@api_boundary
def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """`keys` sorted along `dimension`, and `values` put in the same order (a stable sort)."""
    k, v = _arr(keys), _arr(values)
    if tuple(k.shape) != tuple(v.shape):
        raise ShapeError(f"lax.sort_key_val: keys {tuple(k.shape)} and values {tuple(v.shape)} differ in shape")
    order = _t.argsort(k, axis=dimension, kind="stable")
    return _t.take_along_axis(k, order, axis=dimension), _t.take_along_axis(v, order, axis=dimension)
