"""`ufunc.reduceat` (poot/trace/ufunc.py) built from poot's lazy operations, for host or traced indices
alike (so it also runs inside @pt.jit): NumPy's slices [idx[i], idx[i+1]) (a single element where
idx[i] >= idx[i+1], the last slice to the end). A reorderable f combines each slice's blocks of
doubling width (log-depth, any overlap of slices); the others fold each slice left to right, as NumPy
orders them.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, PootIndexError, ShapeError
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import asarray, full
from poot.trace.indexing import take
from poot.trace.lazy import is_tracing
from poot.trace.selection import where as _where
from poot.trace.ufunc_methods import _COMPARISONS, _as_array, _no_out


def _reduceat_indices(name: str, indices, n: int):
    """The indices as a 1-D int64 NumPy array (host values, bounds-checked as NumPy does), or as a
    1-D int64 poot array when they are traced (checked when the first elements are gathered)."""
    if isinstance(indices, Array) and not is_tracing():
        indices = indices.numpy()
    if isinstance(indices, Array):
        if indices.ndim != 1:
            raise ShapeError(f"{name}.reduceat: indices must be 1-D, got {indices.aval}")
        if indices.dtype.kind not in "biu":
            raise DTypeError(f"{name}.reduceat: indices must be integers, got {indices.dtype.name}")
        return indices.astype(dt.int64)
    idx = np.asarray(indices)
    if idx.ndim != 1:
        raise ShapeError(f"{name}.reduceat: indices must be 1-D, got shape {idx.shape}")
    if idx.dtype.kind not in "biu":
        if idx.size:
            raise DTypeError(f"{name}.reduceat: indices must be integers, got {idx.dtype}")
    idx = idx.astype(np.int64)
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise PootIndexError(f"index {int(bad[0])} out-of-bounds in {name}.reduceat [0, {n})")
    return idx


def _segment_lengths(idx, n: int):
    """NumPy's reduceat slices: slice i is [idx[i], idx[i+1]) where idx[i] < idx[i+1], the one
    element idx[i] where not, and [idx[-1], n) for the last."""
    if isinstance(idx, np.ndarray):
        nxt = np.r_[idx[1:], n]
        last = np.arange(idx.size) == idx.size - 1
        return np.where(last | (idx < nxt), nxt - idx, 1)
    nxt = mv.concatenate([idx[1:], full((1,), n, dt.int64, device=idx.device)])
    last = mv.concatenate([full((idx.shape[0] - 1,), False, dt.bool_, device=idx.device),
                           full((1,), True, dt.bool_, device=idx.device)])
    return _where(last | (idx < nxt), nxt - idx, 1)


def _clamped(pos, hi: int):
    """Positions clipped into [0, hi] (they are only read where a slice needs them)."""
    if isinstance(pos, np.ndarray):
        return np.clip(pos, 0, hi)
    return _where(pos > hi, hi, _where(pos < 0, 0, pos))


def _reduceat_blocks(uf, x: Array, starts, lens, rd: dt.DType, top: int) -> Array:
    """Reorderable f over each slice [starts[i], starts[i] + lens[i]) of the last axis, from its first
    element through blocks of doubling width: level b holds f over x[j:j + 2**b] for every j (one
    elementwise step from level b-1), and the slice's remaining length picks, bit by bit from the
    lowest, the blocks that tile it left to right. log2(top) levels of the whole axis and one gather of
    the k results each: O(n log top) work and memory of one level at a time, however the slices overlap."""
    acc = take(x, starts, axis=-1)              # NumPy copies a one-element slice: hypot([-1.]) is -1.
    rem = lens - 1
    pos = starts + 1
    block = x
    b = 0
    while (1 << b) <= top - 1:
        if b:
            half = 1 << (b - 1)
            block = uf(block[..., :-half], block[..., half:]).astype(rd)
        bit = (rem >> b) & 1
        bit = bit.astype(bool) if isinstance(bit, np.ndarray) else bit.astype(dt.bool_)
        got = take(block, _clamped(pos, block.shape[-1] - 1), axis=-1)
        acc = _where(bit, uf(acc, got).astype(rd), acc)
        pos = pos + (rem & (1 << b))
        b += 1
    return acc


_UNROLLED_STEPS = 8


def _reduceat_fold(uf, x: Array, starts, lens, rd: dt.DType, top) -> Array:
    """f over each slice left to right (NumPy's order, for subtract, divide, power...): step j combines
    element j of every slice still that long. Up to 8 steps are recorded one by one; more run as a
    fori_loop, whose bound may be traced (the longest slice)."""
    acc = take(x, starts, axis=-1)
    n = x.shape[-1]

    def step(j, acc):
        got = take(x, _clamped(starts + j, n - 1), axis=-1)
        return _where(j < lens, uf(acc, got).astype(rd), acc)

    if isinstance(top, int) and top <= _UNROLLED_STEPS:
        for j in range(1, top):
            acc = step(j, acc)
        return acc
    from poot.trace.control import fori_loop

    if isinstance(starts, np.ndarray):
        starts, lens = asarray(starts, device=x.device), asarray(lens, device=x.device)
    return fori_loop(1, top, step, acc)


def reduceat(uf, array, indices, axis, dtype, out):
    _no_out(uf, "reduceat", out, lambda: reduceat(uf, array, indices, axis, dtype, None))
    name = uf.__name__
    if name in _COMPARISONS:
        raise DTypeError(f"{name}.reduceat: a comparison gives bool, not its operands' type, so it has "
                         f"no reduction (NumPy refuses it too); compare, then use all/any")
    x = _as_array(array)
    if x.ndim == 0:
        raise ShapeError(f"{name}.reduceat: cannot reduceat on a 0-d array")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ShapeError(f"{name}.reduceat: axis must be one integer, got {axis!r}")
    ax = mv.axis_of(axis, x.ndim, f"{name}.reduceat", x)
    n = x.shape[ax]
    idx = _reduceat_indices(name, indices, n)
    # the dtype of f's reduction (add and multiply of small integers give int64, as in NumPy)
    rd = uf.reduce(full((1,), 0, x.dtype, device=x.device), axis=0, dtype=dtype).dtype
    moved = mv.moveaxis(x, ax, -1).astype(rd)
    k = idx.shape[0]
    if k == 0:
        return mv.moveaxis(full(moved.shape[:-1] + (0,), 0, rd, device=x.device), -1, ax)
    if isinstance(idx, Array) and n == 0:
        raise PootIndexError(f"{name}.reduceat: indices into an empty axis {ax} of {x.aval}")
    lens = _segment_lengths(idx, n)
    starts = idx
    if isinstance(idx, Array):       # a negative index is out of range here (NumPy: no wrapping)
        starts = _where(idx < 0, n, idx)
        top = n if uf.reorderable else red.max(lens)
    else:
        top = int(lens.max())
    work = moved
    if name == "add" and rd in (dt.float16, dt.bfloat16):
        work = moved.astype(dt.float32)      # NumPy sums half floats in float32 and rounds once
    wd = work.dtype
    if uf.reorderable:
        r = _reduceat_blocks(uf, work, starts, lens, wd, top)
    else:
        r = _reduceat_fold(uf, work, starts, lens, wd, top)
    return mv.moveaxis(r.astype(rd), -1, ax)


# --- types ---------------------------------------------------------------------------------------
