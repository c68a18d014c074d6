"""Stable sorting and unique for the host ops, at NumPy's unstable speed.

The array API's sort, argsort and unique promise stability (equal elements keep their order; unique's
first indices are first occurrences), and NumPy's stable sorts (timsort, radix for <= 16 bits) are
10-20x slower than its default SIMD quicksort. Stability only shows where elements tie, so:

- sort: NumPy's fast sort, then the ties it may have reordered that can be told apart put back in
  their original order: floats' +0.0/-0.0 and NaNs (their signs and payloads; NumPy's AVX-512 sort
  may even write -0.0 as +0.0). Integer ties are indistinguishable.
- argsort, 32-bit and narrower elements: one fast sort of 64-bit keys (an order-preserving unsigned
  image of the value, shifted up 32 bits, or'ed with the index). The keys are all distinct, so any
  sort of them is stable. -0.0 keys as +0.0 and every NaN as one NaN, which ties them as NumPy does.
- argsort, 64-bit elements: NumPy's fast argsort, then each run of tied values (if any) gets its
  indices in increasing order (one more fast sort of run-number/index keys). One long ascending row
  goes through the parallel sorter's `argsort_into` where `sort_1d` carries one (see SortInto), which
  does that per bucket on every core.

Descending order is the ascending one reversed with ties still in their original order (NaNs first),
as `poot.graph.host` defined it.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

_KEY_BITS = 32           # the index part of a packed argsort key: rows up to 2**32 elements

# sort_1d(src, dst): dst (1-D, C-contiguous, src's dtype and size, apart from src) = src sorted
# ascending, NaNs last, ties in any order. The functions below take one (`sort_1d=`) for their long
# single-row sorts: NumPy's by default, the host's parallel sort (poot.devices.cpu_sort) when a
# program's host step or an eager call passes it. A parallel one may also carry
# `sort_1d.argsort_into(src, dst, stable_argsort)`: dst (int64) = the stable argsort of one row, each of
# its pieces sorted by `stable_argsort` (1-D values -> int64 indices); and
# `sort_1d.map_buckets(src, dst, work)`: src partitioned by value into dst, work(bucket) run on each
# bucket (equal values share one), the results in order (None: not split).
SortInto = Callable[[np.ndarray, np.ndarray], None]


def numpy_sort_into(src: np.ndarray, dst: np.ndarray) -> None:
    """NumPy's (one-core) sort as a SortInto."""
    np.copyto(dst, src)
    dst.sort()


def _one_row(a: np.ndarray, axis: int) -> bool:
    """Sorting `a` along `axis` sorts all of it as one flat row (every other axis has length 1)."""
    return a.ndim >= 1 and a.size == a.shape[axis] and a.flags.c_contiguous


def _rows(a: np.ndarray, axis: int) -> np.ndarray:
    """`a` with `axis` moved last and the rest flattened: (rows, n)."""
    moved = np.moveaxis(a, axis, -1)
    return moved.reshape(-1, moved.shape[-1]) if moved.ndim else moved.reshape(1, 1)


def _unrows(r: np.ndarray, shape: tuple, axis: int) -> np.ndarray:
    moved_shape = tuple(np.delete(np.asarray(shape), axis)) + (shape[axis],)
    return np.moveaxis(r.reshape(moved_shape), -1, axis)


def _restore_float_ties(s: np.ndarray, a: np.ndarray) -> None:
    """Put the zeros and NaNs of sorted rows `s` (the last axis; a view) back in the order they have
    in `a`, in place. Each row holds the same number of them in both, and boolean indexing walks the
    rows in order, so one masked copy does every row. One row (the common case) is checked on the
    sorted values alone (zeros and NaNs are runs there), so `a` is read only when a run needs it."""
    if s.ndim == 1 or s.size == s.shape[-1]:          # one row (a (1, 3, 5) array holds three)
        row, arow = s.reshape(-1), a.reshape(-1)
        zero = row.dtype.type(0)        # the row's own type: another would make NumPy convert the row
        lo, hi = np.searchsorted(row, zero, side="left"), np.searchsorted(row, zero, side="right")
        if hi - lo:          # NumPy's SIMD sort may write a zero's or a NaN's bits anew: copy them
            row[lo:hi] = arow[arow == 0]
        if row.size and np.isnan(row[-1]):                        # NaNs sort last
            first = np.searchsorted(row, row[-1], side="left")
            row[first:] = arow[np.isnan(arow)]
        return
    for test in (lambda v: v == 0, np.isnan):
        where_a = test(a)
        if where_a.any():
            s[test(s)] = a[where_a]


def sort(a: np.ndarray, axis: int, descending: bool, sort_1d: SortInto = numpy_sort_into) -> np.ndarray:
    """Stable sort along `axis` (NaNs last; descending: reversed, NaNs first)."""
    if _one_row(a, axis):
        s = np.empty_like(a)
        sort_1d(a.reshape(-1), s.reshape(-1))
    else:
        s = np.sort(a, axis=axis)
    if a.dtype.kind == "f":
        _restore_float_ties(np.moveaxis(s, axis, -1), np.moveaxis(a, axis, -1))
    return np.flip(s, axis=axis) if descending else s


def sort_into(a: np.ndarray, out: np.ndarray, axis: int, descending: bool,
              sort_1d: SortInto = numpy_sort_into) -> None:
    """sort(), written into `out` (a's shape, C-contiguous, apart from a): one copy, sorted in place."""
    if out.dtype != a.dtype:                      # a 16-bit float widened for NumPy
        out[...] = sort(a, axis, descending, sort_1d)
        return
    if _one_row(a, axis):
        sort_1d(a.reshape(-1), out.reshape(-1))
    else:
        np.copyto(out, a)
        out.sort(axis=axis)
    if a.dtype.kind == "f":
        _restore_float_ties(np.moveaxis(out, axis, -1), np.moveaxis(a, axis, -1))
    if descending:
        out[...] = np.flip(out, axis=axis)


def _parallel_argsort(a: np.ndarray, axis: int, descending: bool, sort_1d: SortInto):
    """sort_1d's one-row argsort where it has one and `a` is one long ascending row of 64-bit values."""
    into = getattr(sort_1d, "argsort_into", None)
    if into is None or descending or a.dtype.itemsize <= 4 or not _one_row(a, axis):
        return None
    return into


def argsort_into(a: np.ndarray, out: np.ndarray, axis: int, descending: bool,
                 sort_1d: SortInto = numpy_sort_into) -> None:
    """argsort(), written into `out` (int64, a's shape, C-contiguous): along the last axis of a
    32-bit or narrower array, the packed keys are built and sorted in `out` itself."""
    into = _parallel_argsort(a, axis, descending, sort_1d)
    if into is not None:
        into(a.reshape(-1), out.reshape(-1), _stable_1d)
        return
    if (a.dtype.itemsize > 4 or a.ndim == 0 or a.size == 0 or axis != a.ndim - 1
            or a.shape[-1] >= 1 << _KEY_BITS):
        out[...] = argsort(a, axis, descending, sort_1d)
        return
    rows = a.reshape(-1, a.shape[-1])
    _argsort_packed(rows, descending, out.reshape(rows.shape).view(np.uint64), sort_1d)


def _ordered_u32(a: np.ndarray, out: np.ndarray) -> None:
    """Write into `out` (uint32, a's shape) an unsigned image of `a` (itemsize <= 4) in the same
    order, ties kept as ties: floats' sign-magnitude bits flipped to two's-complement order, with
    -0.0 as +0.0 and every NaN as the largest key (NaNs sort last, tied)."""
    kind = a.dtype.kind
    if kind == "f":
        f = np.add(a, np.float32(0.0), dtype=np.float32)          # -0.0 -> +0.0 (and f16 widened)
        bits = f.view(np.uint32)
        flip = f.view(np.int32) >> np.int32(31)                    # -1 where negative
        np.bitwise_or(flip.view(np.uint32), np.uint32(0x80000000), out=out)
        np.bitwise_xor(out, bits, out=out)
        nan = np.isnan(f)
        if nan.any():
            out[nan] = np.uint32(0xFFFFFFFF)
    elif kind == "i":
        np.bitwise_xor(a.astype(np.int32, copy=False).view(np.uint32), np.uint32(0x80000000), out=out)
    else:
        out[...] = a


def _argsort_packed(rows: np.ndarray, descending: bool, keys: np.ndarray | None = None,
                    sort_1d: SortInto = numpy_sort_into) -> np.ndarray:
    """One sort of 64-bit keys: the value's ordered image in the high word, the index in the low one
    (written through a uint32 view, little- or big-endian alike); in `keys` (uint64, rows' shape)
    when given. One row goes through `sort_1d` (built apart, sorted into `keys`)."""
    keys = np.empty(rows.shape, np.uint64) if keys is None else keys
    one_row = rows.shape[0] == 1 and sort_1d is not numpy_sort_into
    built = np.empty_like(keys) if one_row else keys
    words = built.view(np.uint32).reshape(rows.shape + (2,))
    hi, lo = (1, 0) if np.little_endian else (0, 1)
    _ordered_u32(rows, words[..., hi])
    if descending:
        np.invert(words[..., hi], out=words[..., hi])
    words[..., lo] = np.arange(rows.shape[-1], dtype=np.uint32)
    if one_row:
        sort_1d(built.reshape(-1), keys.reshape(-1))
        words = keys.view(np.uint32).reshape(rows.shape + (2,))
    else:
        keys.sort(axis=-1)
    words[..., hi] = 0                  # the index alone: an int64 once viewed so
    return keys.view(np.int64)


def _argsort_tie_fixed(rows: np.ndarray, descending: bool) -> np.ndarray:
    """NumPy's fast argsort of each row, each run of tied values (NaNs tie) put back in index order."""
    idx = np.argsort(rows, axis=-1)
    if descending:
        idx = idx[:, ::-1]
    s = np.sort(rows, axis=-1)          # = rows[idx] up to ties (a sequential pass, not a gather)
    if descending:
        s = s[:, ::-1]
    return _ties_in_index_order(idx, s)


def _ties_in_index_order(idx: np.ndarray, s: np.ndarray) -> np.ndarray:
    """`idx` (rows of an argsort; int64) with each run of equal values of `s` (the rows sorted by it;
    NaNs equal) put back in increasing index order."""
    same = s[:, 1:] == s[:, :-1]
    if s.dtype.kind == "f":
        same |= np.isnan(s[:, 1:]) & np.isnan(s[:, :-1])
    if not same.any():
        return idx.astype(np.int64, copy=False)
    keys = np.empty(idx.shape, np.uint64)        # (number of the run of ties, index)
    words = keys.view(np.uint32).reshape(idx.shape + (2,))
    hi, lo = (1, 0) if np.little_endian else (0, 1)
    words[:, 0, hi] = 0
    np.cumsum(~same, axis=-1, dtype=np.uint32, out=words[:, 1:, hi])
    words[..., lo] = idx
    keys.sort(axis=-1)
    words[..., hi] = 0
    return keys.view(np.int64)


def _stable_1d(values: np.ndarray) -> np.ndarray:
    """The stable ascending argsort of a short 1-D row (a parallel sort's bucket, in cache): its
    sorted values are gathered rather than sorted a second time."""
    idx = np.argsort(values)
    return _ties_in_index_order(idx[None], values[idx][None])[0]


def argsort(a: np.ndarray, axis: int, descending: bool, sort_1d: SortInto = numpy_sort_into) -> np.ndarray:
    """Stable argsort (int64) along `axis` (NaNs last; descending: NaNs first, ties in order)."""
    if a.ndim == 0 or a.size == 0:
        return np.zeros(a.shape, np.int64)
    n = a.shape[axis]
    if n >= 1 << _KEY_BITS:
        idx = np.argsort(np.flip(a, axis=axis) if descending else a, axis=axis, kind="stable")
        return (n - 1 - np.flip(idx, axis=axis) if descending else idx).astype(np.int64)
    into = _parallel_argsort(a, axis, descending, sort_1d)
    if into is not None:
        idx = np.empty(a.shape, np.int64)
        into(a.reshape(-1), idx.reshape(-1), _stable_1d)
        return idx
    rows = _rows(a, axis)
    if a.dtype.itemsize <= 4:
        idx = _argsort_packed(rows, descending, sort_1d=sort_1d)
    else:
        idx = _argsort_tie_fixed(rows, descending)
    return _unrows(idx, a.shape, axis)


def unique(flat: np.ndarray, *, index: bool, inverse: bool, counts: bool, equal_nan: bool,
           alloc=None, sort_1d: SortInto = numpy_sort_into) -> list:
    """NumPy's unique of a 1-D array: [values, first indices, inverse, counts] (None where not asked),
    every NaN distinct unless `equal_nan`. `alloc(shape, dtype)` makes the arrays the results are
    written into (default np.empty): a caller passes views of its own buffers to skip a copy."""
    alloc = alloc or np.empty
    n = flat.size
    if n == 0:
        empty = np.zeros(0, np.int64)
        return [flat.copy(), empty, empty, empty]
    if not (index or inverse) and hasattr(sort_1d, "map_buckets"):
        got = _unique_by_bucket(flat, counts, equal_nan, alloc, sort_1d.map_buckets)
        if got is not None:
            return got
    if index or inverse:
        perm = argsort(flat, 0, False, sort_1d)
        s = flat[perm]
    else:
        perm, s = None, np.empty_like(flat)
        sort_1d(np.ascontiguousarray(flat), s)
    new = _firsts(s, equal_nan)

    def into(values: np.ndarray) -> np.ndarray:
        """`values` copied into alloc's array (boolean indexing then a copy beats np.compress(out=)
        several times over)."""
        dst = alloc(values.shape, values.dtype)
        dst[...] = values
        return dst

    out = [into(s[new]), None, None, None]
    k = out[0].size
    if index:
        out[1] = into(perm[new])
    if inverse:
        rank = np.cumsum(new, dtype=np.int64)
        rank -= 1
        inv = out[2] = alloc((n,), np.int64)
        inv[perm] = rank
    if counts:
        starts = np.flatnonzero(new)
        c = out[3] = alloc((k,), np.int64)
        np.subtract(starts[1:], starts[:-1], out=c[:-1])
        c[-1] = n - starts[-1]
    return out


def _firsts(s: np.ndarray, equal_nan: bool) -> np.ndarray:
    """Where each run of equal values of sorted `s` (non-empty; NaNs last, each its own value unless
    `equal_nan`) begins: a boolean mask."""
    new = np.empty(s.size, bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    if equal_nan and s.dtype.kind == "f" and np.isnan(s[-1]):     # NaNs sort last: one value
        new[np.searchsorted(s, s[-1], side="left") + 1:] = False
    return new


def _sorted_distinct(bucket: np.ndarray, counts: bool, equal_nan: bool) -> tuple:
    """`bucket` sorted in place, then its distinct values and, if asked, how often each occurs."""
    if bucket.size == 0:
        return bucket, np.zeros(0, np.int64)
    bucket.sort()
    new = _firsts(bucket, equal_nan)
    if not counts:
        return bucket[new], None
    starts = np.flatnonzero(new)
    return bucket[starts], np.diff(starts, append=bucket.size)


def _unique_by_bucket(flat: np.ndarray, counts: bool, equal_nan: bool, alloc, map_buckets) -> list | None:
    """unique's values (and counts) with the parallel partition: each bucket sorted and reduced to its
    distinct values on its own thread (equal values, and all NaNs, share a bucket, so no value is in
    two), then the buckets' results put together. None where the partition does not split `flat`."""
    scratch = np.empty_like(flat)
    parts = map_buckets(np.ascontiguousarray(flat), scratch, lambda b: _sorted_distinct(b, counts, equal_nan))
    if parts is None:
        return None
    def joined(pieces: list, dtype) -> np.ndarray:
        dst = alloc((sum(p.size for p in pieces),), dtype)
        np.concatenate(pieces, out=dst)
        return dst

    return [joined([p[0] for p in parts], flat.dtype), None, None,
            joined([p[1] for p in parts], np.int64) if counts else None]


__all__ = ["SortInto", "numpy_sort_into", "sort", "argsort", "sort_into", "argsort_into", "unique"]
