"""KV-cache updates: `pt.dynamic_update_slice` (JAX's semantics, traced start indices allowed) and
`pt.paged_update` (rows scattered into a paged cache through a page table).

Both record one `scatter` (mode "set") into a flat view of the cache: the positions to write are
computed from the (possibly traced) indices, so one compiled program serves every position. Inside
`@pt.jit(donate_argnums=...)`, a donated cache is updated in place: the program gives the scatter's
result the donated buffer (poot/jit/runtime/inplace.py), so a decode loop allocates no new cache
per step (the device's `fresh_allocations` stays flat and the result is the same buffer). So do
`cache.at[:, pos].set(k)` and `cache[:, pos] = k`, and a stack of layers each writing its rows into
the cache the layer before returned (a scatter into a dying intermediate takes its buffer too).
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace.array import Array
from poot.trace.lazy import record
from poot.trace.movement import arr

__all__ = ["dynamic_update_slice", "paged_update"]


def _index(x, what: str, device: str) -> Array:
    """An int64 Array of an index argument (a Python int, a NumPy or poot integer scalar/array)."""
    a = arr(x)
    if not dt.is_int(a.dtype):
        raise DTypeError(f"{what} must be integers, got {a.dtype.name}")
    return a.astype(dt.int64)


@api_boundary
def dynamic_update_slice(operand, update, start_indices):
    """`operand` with `update` written at `start_indices` (one per axis, ints or traced scalars), as
    jax.lax.dynamic_update_slice: each start is clamped to [0, operand.shape[i] - update.shape[i]], so
    the update always fits. Returns a new array (in place for a donated operand in @pt.jit)."""
    x, u = arr(operand), arr(update)
    if u.ndim != x.ndim or any(a > b for a, b in zip(u.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {u.shape} must have the operand's rank and fit in "
                         f"its shape {x.shape}")
    starts = list(start_indices) if isinstance(start_indices, (tuple, list)) else None
    if starts is None:
        s = arr(start_indices)
        if s.ndim != 1:
            raise ShapeError(f"dynamic_update_slice: start_indices must be a sequence or a 1-d array, got {s.shape}")
        starts = [s[i] for i in range(s.shape[0])]
    if len(starts) != x.ndim:
        raise ShapeError(f"dynamic_update_slice: {len(starts)} start indices for a {x.ndim}-d operand")
    if u.dtype is not x.dtype:
        u = u.astype(x.dtype)
    if u.size == 0:
        return x
    from poot.trace.creation import arange

    flat = None
    stride = 1
    for axis in reversed(range(x.ndim)):
        start = _index(starts[axis], "dynamic_update_slice: start indices", x.device)
        start = ew.minimum(ew.maximum(start, 0), x.shape[axis] - u.shape[axis])
        pos = (arange(u.shape[axis], dtype=dt.int64, device=x.device) + start) * stride
        pos = pos.reshape((u.shape[axis],) + (1,) * (x.ndim - 1 - axis))
        flat = pos if flat is None else pos + flat
        stride *= x.shape[axis]
    idx = flat.reshape((u.size,))
    out = record("scatter", (x.reshape((x.size,))._node, idx._node, u.reshape((u.size,))._node), {"mode": "set"})
    return Array(out).reshape(x.shape)


@api_boundary
def paged_update(cache, update, page_table, positions):
    """`cache` [num_pages, page_size, ...] with rows `update` [n, ...] written at logical token
    `positions` [n]: token p lives in physical page page_table[p // page_size], row p % page_size
    (vLLM's paged KV cache). Positions must be in [0, len(page_table) * page_size) (a gather that
    traps otherwise, negative positions included, with KernelIndexError); two tokens at one slot
    leave an unspecified one of them. In place for a donated cache in @pt.jit."""
    c, u = arr(cache), arr(update)
    if c.ndim < 2:
        raise ShapeError(f"paged_update: the cache must be [num_pages, page_size, ...], got {c.shape}")
    pages, size = c.shape[:2]
    row = c.shape[2:]
    pos = _index(positions, "paged_update: positions", c.device).reshape((-1,))
    table = _index(page_table, "paged_update: the page table", c.device).reshape((-1,))
    if u.shape != (pos.shape[0],) + row:
        raise ShapeError(f"paged_update: update {u.shape} must be [n, *{row}] for {pos.shape[0]} positions")
    if u.dtype is not c.dtype:
        u = u.astype(c.dtype)
    if pos.shape[0] == 0:
        return c
    from poot.trace.indexing import take
    from poot.trace.selection import where

    # take wraps a negative page index (NumPy's rule), which would write another page: a negative
    # position reads past the page table instead, so the gather traps as for one past the end
    pos = where(pos < 0, table.shape[0] * size, pos)
    slots = take(table, pos // size) * size + pos % size
    flat = c.reshape((pages * size,) + row)
    out = record("scatter", (flat._node, slots._node, u._node), {"mode": "set"})
    return Array(out).reshape(c.shape)
