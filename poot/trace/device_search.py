"""searchsorted and unique made of lazy operations, for devices where sort and argsort are kernels.

On the CPU device a long searchsorted and unique are host ops: NumPy runs them on the very buffers the
program uses, which is the fastest there is. On a GPU device the same host ops copy the operands to the
host and the results back, and the program waits for every launch before them. Here they are built from
lazy operations instead, so they fuse into a few kernels, run on the device and work inside @pt.jit:

- searchsorted: a branch-free binary search. Each query's answer is the number of x1's elements that
  precede it in NumPy's sort order (NaN greatest); ceil(log2(n + 1)) rounds each try the next power of
  two down: gather x1[lo + step - 1] (clipped into range), compare, keep lo + step where it still
  precedes. Every round is elementwise over the queries, so the whole search is one fused kernel.
- unique: the sort and argsort run as device kernels (poot/jit/codegen/gpu_sort.py); a flag marks each
  first element of a run of equal values, its running count is the rank of the value, and scatters
  through the rank put the values, first indices and run starts (counts are the differences of starts)
  in place, and the rank through the permutation makes the inverse.

`runs_device_kernels(device)` is the switch, decided as gpu_sort decides for sort itself
(POOT_GPU_SORT: auto = the lazy forms on GPU devices, host = the host ops everywhere, kernels = the lazy
forms everywhere, the CPU included, which is how the CPU's tests check them).
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.jit.codegen.gpu_sort import sort_path
from poot.jit.llvm.targets import KernelStyle, target_of
from poot.trace import elementwise as ew
from poot.trace.array import Array
from poot.trace.context import ORACLE, backend
from poot.trace.creation import _iota, full, zeros
from poot.trace.indexing import setitem_node, take
from poot.trace.selection import where

# int32 positions while they fit (half the bytes of int64 through every gather and compare)
_INT32_LIMIT = 2**31 - 2


def runs_device_kernels(device: str) -> bool:
    """Whether searchsorted, histogram and unique on `device` are built from lazy operations (device
    kernels) rather than recorded as host ops (see the module docstring)."""
    if device == ORACLE:            # the NumPy reference evaluates the host ops themselves
        return False
    mode = sort_path()
    if mode != "auto":
        return mode == "kernels"
    return target_of(backend(device).caps).style is KernelStyle.GPU


def _position_dtype(n: int) -> dt.DType:
    return dt.int32 if n <= _INT32_LIMIT else dt.int64


def binary_search(a: Array, v: Array, precedes) -> Array:
    """For each element of `v`, how many of the sorted 1-D `a`'s elements satisfy `precedes(a_i, v)`
    (a predicate true for a prefix of `a`: NumPy's sort-order `<` for side='left', `<=` for
    side='right'), as int64 of v's shape. `a` and `v` share a dtype."""
    n = a.shape[0]
    if n == 0 or v.size == 0:
        return zeros(v.shape, dtype=dt.int64, device=v.device)
    pos = _position_dtype(n)
    lo = zeros(v.shape, dtype=pos, device=v.device)
    step = 1 << (n.bit_length() - 1)               # the largest power of two <= n
    while step:
        candidate = lo + step
        probe = take(a, candidate - 1, mode="clip")  # a candidate beyond n reads a[n - 1]: refused below
        ok = ew.logical_and(ew.less_equal(candidate, n), precedes(probe, v))
        lo = where(ok, candidate, lo)
        step >>= 1
    return lo.astype(dt.int64)


# --- unique ----------------------------------------------------------------------------------------
def _scatter(target: Array, index: Array, values: Array) -> Array:
    out = Array(target._node)
    out._node = setitem_node(out, index, values)
    return out


def _first_of_runs(s: Array, equal_nan: bool) -> Array:
    """Bool flags over the sorted `s`: True where an element differs from the one before it (the
    first element always). NaN != NaN makes every NaN its own value unless `equal_nan`."""
    differs = ew.not_equal(s[1:], s[:-1])
    if equal_nan and s.dtype.kind == "f":           # NaNs sort last: a NaN after a NaN is no new value
        differs = ew.logical_and(differs, ew.logical_not(ew.logical_and(ew.isnan(s[1:]), ew.isnan(s[:-1]))))
    from poot.trace.movement import concatenate

    return concatenate([full((1,), True, dtype=dt.bool_, device=s.device), differs])


def unique(x: Array, want: tuple, *, size: int | None, fill_value, equal_nan: bool) -> list:
    """The results `want` (0 values, 1 first indices, 2 inverse (x's shape), 3 counts) of unique over
    the flattened real `x`, as the host op `unique` gives them (poot/graph/host.py: values sorted,
    first occurrences, padded with fill_value (default the smallest value) and 0 or truncated to
    `size`). Without `size` the number of distinct values is read from the device (the only host read:
    the results' length depends on it)."""
    from poot.trace.array_api_sets import argsort, sort
    from poot.trace.reductions import sum as sum_

    dev = x.device
    flat = x.reshape(-1)
    n = flat.size
    if n == 0:
        k = 0 if size is None else size
        fill = 0 if fill_value is None else fill_value
        with np.errstate(all="ignore"):
            pad = np.asarray(fill).astype(x.dtype.np).item() if x.dtype.kind != "b" else bool(fill)
        outs = {0: full((k,), pad, dtype=x.dtype, device=dev),
                1: zeros((k,), dtype=dt.int64, device=dev), 2: zeros(x.shape, dtype=dt.int64, device=dev),
                3: zeros((k,), dtype=dt.int64, device=dev)}
        return [outs[w] for w in want]
    need_order = 1 in want or 2 in want
    perm = argsort(flat) if need_order else None
    s = take(flat, perm) if need_order else sort(flat)
    new = _first_of_runs(s, equal_nan)
    from poot.trace.reductions import cumsum

    rank = cumsum(new.astype(dt.int64)) - 1
    k = int(sum_(new)) if size is None else size      # the one host read, when no size is given
    # a value's slot is its rank; the elements that start no run (and ranks past `size`) go to slot k,
    # which is cut off: every written slot below k has exactly one writer
    slot = where(ew.logical_and(new, ew.less(rank, k)), rank, k)
    outs = {}
    if 0 in want:
        if fill_value is None:
            base = full((k + 1,), s[0], device=dev)
        else:
            with np.errstate(all="ignore"):
                pad = np.asarray(fill_value).astype(x.dtype.np)
            base = full((k + 1,), pad.item() if x.dtype.kind != "b" else bool(pad), dtype=x.dtype, device=dev)
        outs[0] = _scatter(base, slot, s)[:k]
    if 1 in want:
        outs[1] = _scatter(zeros((k + 1,), dtype=dt.int64, device=dev), slot, perm)[:k]
    if 2 in want:
        outs[2] = _scatter(zeros((n,), dtype=dt.int64, device=dev), perm, rank).reshape(x.shape)
    if 3 in want:      # counts: differences of the run starts; slots without a run start at n
        start_slot = where(ew.logical_and(new, ew.less_equal(rank, k)), rank, k + 1)
        positions = Array(_iota((n,), 0, dt.int64, dev))
        starts = _scatter(full((k + 2,), n, dtype=dt.int64, device=dev), start_slot, positions)
        outs[3] = starts[1:k + 1] - starts[:k]
    return [outs[w] for w in want]


__all__ = ["binary_search", "runs_device_kernels", "unique"]
