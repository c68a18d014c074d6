"""NumPy's in-place writes: put, put_along_axis, putmask, place, copyto and fill_diagonal, with the
diagonal index helpers (diag_indices, diag_indices_from).

Each write is lazy and rebinds its first argument, a poot Array, to the updated value, as `x[i] = v`
does (other handles on the old value keep it); each works inside @pt.jit on a traced array.
"""
from __future__ import annotations

import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, PootIndexError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import arange
from poot.trace.indexing import along_axis_index, take
from poot.trace.lazy import check_scalar_fits
from poot.trace.lost_writes import refuses_temporaries
from poot.trace.movement import arr, axis_of
from poot.trace.selection import where
from poot.trace.selection import where as _sel

__all__: list[str] = []
_export = exporter(globals(), __all__)

# --- in-place writes -----------------------------------------------------------------------------
def _target(a, op):
    if not isinstance(a, Array):
        raise ArgumentError(f"{op}: the array to write into must be a poot Array, got {type(a).__name__}")
    return a


def _rebind(a, value):
    """a now holds `value` (as `a[...] = v` rebinds a)."""
    a._node = mv.reshape(value.astype(a.dtype), a.shape)._node


def _python_ints_fit(values, d: dt.DType, op: str) -> None:
    """Python ints written into a `d` array must fit it (NumPy's OverflowError; a DTypeError here),
    where casting them would wrap silently (300 into int8 is 44). Arrays of values are cast, as in
    NumPy."""
    if isinstance(values, (Array, np.ndarray, np.generic)):
        return
    stack = [values]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            check_scalar_fits(v, d, op)


def _cycled(values, n, op):
    """The flattened values repeated to length n, as NumPy repeats a short value list."""
    v = mv.reshape(arr(values), (-1,))
    if v.size == 0:
        raise ShapeError(f"{op}: cannot take values from an empty array")
    return v if v.size == n else take(v, np.arange(n) % v.size)


def _put(a, ind, v, mode="raise"):
    a = _target(a, "put")
    if mode not in ("raise", "wrap", "clip"):
        raise ShapeError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if not isinstance(ind, Array) and np.size(ind) == 0:        # [] writes nothing
        return
    i = mv.reshape(arr(ind), (-1,))
    if i.dtype.kind not in "iu":
        raise PootIndexError(f"put: indices must be integers, got {i.dtype.name}")
    if i.size == 0:
        return
    n = a.size
    if mode == "raise" and not isinstance(ind, Array):
        host = np.asarray(ind)
        if host.min() < -n or host.max() >= n:
            raise PootIndexError(f"put: index {int(host.max() if host.max() >= n else host.min())} is "
                                 f"out of bounds for an array of size {n}")
    i = i.astype(dt.int64)
    if mode == "wrap":
        i = ew.remainder(i, n)
    elif mode == "clip":
        i = ew.minimum(ew.maximum(i, 0), n - 1)
    _python_ints_fit(v, a.dtype, "put")
    flat = mv.reshape(a, (-1,))
    flat[i] = _cycled(v, i.size, "put").astype(a.dtype)
    _rebind(a, flat)


def _put_along_axis(arr_, indices, values, axis):
    a = _target(arr_, "put_along_axis")
    x, ax = (mv.reshape(a, (-1,)), 0) if axis is None else (a, axis_of(axis, a.ndim, "put_along_axis", a))
    x[along_axis_index(x, ax, indices, "put_along_axis")] = values
    _rebind(a, x)


def _putmask(a, mask, values):
    a = _target(a, "putmask")
    m = arr(mask)
    if m.shape != a.shape:
        raise ShapeError(f"putmask: mask {m.aval} and data {a.aval} must be the same size")
    _python_ints_fit(values, a.dtype, "putmask")
    vals = mv.reshape(_cycled(values, a.size, "putmask"), a.shape) if a.size else a
    _rebind(a, where(m.astype(dt.bool_), vals.astype(a.dtype), a))


def _place(arr_, mask, vals):
    a = _target(arr_, "place")
    m = arr(mask)
    if m.size != a.size:
        raise ShapeError(f"place: mask {m.aval} and data {a.aval} must be the same size")
    _python_ints_fit(vals, a.dtype, "place")
    m = mv.reshape(m.astype(dt.bool_), a.shape)
    v = mv.reshape(arr(vals), (-1,))
    if v.size == 0:
        if not isinstance(mask, Array) and np.asarray(mask).any():
            raise ShapeError("place: cannot insert from an empty array")
        return
    if a.size == 0:
        return
    rank = ew.subtract(red.cumsum(mv.reshape(m, (-1,)).astype(dt.int64)), 1)
    picked = mv.reshape(take(v, ew.remainder(ew.maximum(rank, 0), v.size)), a.shape)
    _rebind(a, where(m, picked.astype(a.dtype), a))


_KIND_ORDER = "biufc"


def _copyto(dst, src, casting="same_kind", where=True):  # noqa: F811 (NumPy's keyword)
    a = _target(dst, "copyto")
    weak = isinstance(src, (bool, int, float, complex)) and not isinstance(src, Array)
    s_dtype = dt.scalar_dtype(src) if weak else arr(src).dtype
    if casting not in dt.CASTINGS:
        raise ShapeError(f"copyto: casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', "
                         f"got {casting!r}")
    if casting == "unsafe":
        ok = True
    elif weak:      # a Python scalar only has to fit the destination's kind (NumPy 2)
        ok = _KIND_ORDER.index(s_dtype.kind) <= _KIND_ORDER.index(a.dtype.kind.replace("u", "i"))
    else:
        ok = bool(np.can_cast(s_dtype.np, a.dtype.np, casting))
    if not ok:
        raise DTypeError(f"copyto: cannot cast from {s_dtype.name} to {a.dtype.name} under casting="
                         f"{casting!r}")
    _python_ints_fit(src, a.dtype, "copyto")
    s = arr(src)
    try:
        s = mv.broadcast_to(s.astype(a.dtype), a.shape)
        w = mv.broadcast_to(arr(where).astype(dt.bool_), a.shape)
    except ShapeError:
        raise ShapeError(f"copyto: src {s.aval} (and where) cannot broadcast into dst {a.aval}") from None
    _rebind(a, _sel(w, s, a))


def _fill_diagonal(a, val, wrap=False):
    a = _target(a, "fill_diagonal")
    if a.ndim < 2:
        raise ShapeError(f"fill_diagonal: array must be at least 2-d, got {a.aval}")
    if a.ndim == 2:
        step, end = a.shape[1] + 1, None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ShapeError(f"fill_diagonal: all dimensions of input must be of equal length, got {a.aval}")
        step, end = 1 + int(np.cumprod(a.shape[:-1]).sum()), None
    _python_ints_fit(val, a.dtype, "fill_diagonal")
    pos = np.arange(a.size)[:end:step]
    if pos.size == 0:
        return
    flat = mv.reshape(a, (-1,))
    flat[pos] = _cycled(val, pos.size, "fill_diagonal").astype(a.dtype)
    _rebind(a, flat)


def _diag_indices(n, ndim=2):
    idx = arange(operator.index(n))
    return (idx,) * operator.index(ndim)


def _diag_indices_from(arr_):
    x = arr(arr_)
    if x.ndim < 2:
        raise ShapeError(f"diag_indices_from: input array must be at least 2-d, got {x.aval}")
    if len(set(x.shape)) != 1:
        raise ShapeError(f"diag_indices_from: all dimensions of input must be of equal length, got {x.aval}")
    return _diag_indices(x.shape[0], x.ndim)


_export("put", _put, "Sets a.flat[ind] = v in place (v repeated to the indices' length; mode 'raise', "
                     "'wrap' or 'clip'). Lazy; rebinds `a` to the new value.")
_export("put_along_axis", _put_along_axis, "Sets the values at `indices` along `axis` in place, as "
                                           "np.put_along_axis. Lazy; rebinds `arr`.")
_export("putmask", _putmask, "Sets a where mask is true to values[i % len(values)] of each flat "
                             "position i, in place. Lazy; rebinds `a`.")
_export("place", _place, "Sets the masked elements of arr in place to vals taken in order (repeated "
                         "when short). Lazy; rebinds `arr`.")
_export("copyto", _copyto, "Copies src into dst in place where `where` is true, broadcasting and "
                           "checking the `casting` rule. Lazy; rebinds `dst`.")
_export("fill_diagonal", _fill_diagonal, "Fills the main diagonal in place (val repeated; `wrap` for tall "
                                         "matrices). Lazy; rebinds `a`.")
# a temporary nothing holds (pt.put(a.T, ...)) would lose the write: refused (lost_writes.py)
for _name in ("put", "put_along_axis", "putmask", "place", "copyto", "fill_diagonal"):
    globals()[_name] = refuses_temporaries(_name)(globals()[_name])
_export("diag_indices", _diag_indices, "The index arrays of the main diagonal of an n x ... x n array. Lazy.")
_export("diag_indices_from", _diag_indices_from, "diag_indices for an array with equal dimensions. Lazy.")
