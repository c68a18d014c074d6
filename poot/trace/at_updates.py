"""`x.at[idx]`: JAX's functional indexed updates (`.set`, `.add`, `.multiply`, `.min`, `.max`,
`.apply`, `.get`...), each returning a new array and leaving `x` as it was.

The index semantics are JAX's, not NumPy's bounds checking, because code ported from JAX relies on
them: a negative index counts from the end once (i + n), and one still out of range is dropped by an
update and clamped by a `.get` (mode='clip' clamps updates too, mode='fill' gets `fill_value`).
Indices are first normalized here so every one poot sees is in range: a dropped update is sent to an
extra row appended to each indexed axis (a constant pad), and that row is sliced off afterwards, so
nothing reaches poot's kernel bounds check and traced indices work under @pt.jit and pt.vmap. A
`set`/`add` whose only possibly-out-of-range indices are traced scalars (`cache.at[:, pos].set(k)`)
needs no pad: the position is clamped and a dropped update writes back what is there
(`_scatter_scalar_drop`), so a donated cache is updated in place.

`set` and `add` are one scatter (indexing.setitem_node): repeated indices add up, and `set` leaves one
of them. `multiply`, `min`, `max` with repeated indices combine every update of a target first: the
flat target positions are sorted (a stable argsort) and a log-depth segmented scan folds each run of
equal positions, whose last element is then combined with the target and scattered once. It is all
lazy poot operations, so it differentiates and batches like the rest.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, PootIndexError, TracerError, api_boundary
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.array_api_sets import argsort
from poot.trace.creation import arange, asarray, ones_like, zeros
from poot.trace.indexing import nonzero, setitem_node
from poot.trace.lazy import check_scalars_fit, is_tracing, note_weak_cast
from poot.trace.selection import where

_GET_MODES = (None, "promise_in_bounds", "clip", "fill", "drop")
_SET_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _check_mode(mode, allowed, op):
    if not (mode is None or isinstance(mode, str)) or mode not in allowed:
        raise ArgumentError(f"at[...].{op}: mode must be one of {[m for m in allowed if m]}, got {mode!r}")


def _items(x: Array, idx) -> list:
    """The index as a list of per-axis items: lists become NumPy arrays, boolean masks their integer
    positions (a poot mask through nonzero, which refuses under @pt.jit as x[mask] does), ... expanded."""
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    items = []
    for it in raw:
        if isinstance(it, (list, range)):
            it = np.asarray(it)
        if isinstance(it, (bool, np.bool_)):
            raise PootIndexError("at[...]: a scalar boolean index is not supported; use None or an array")
        if isinstance(it, np.ndarray) and it.dtype == np.bool_:
            items += [p.astype(np.int64) for p in np.nonzero(it)]
        elif isinstance(it, Array) and it.dtype is dt.bool_:
            items += list(nonzero(it))
        elif isinstance(it, np.ndarray) and it.dtype.kind not in "iu":
            raise PootIndexError(f"at[...]: index arrays must be integers, got {it.dtype}")
        elif isinstance(it, Array) and not dt.is_int(it.dtype):
            raise PootIndexError(f"at[...]: index arrays must be integers, got {it.dtype.name}")
        else:
            items.append(it)
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise PootIndexError("at[...]: an index can only have a single ellipsis ('...')")
    if used > x.ndim:
        raise PootIndexError(f"at[...]: too many indices for a {x.ndim}-d array ({used} given)")
    if Ellipsis in [it for it in items if not isinstance(it, (Array, np.ndarray))]:
        k = next(i for i, it in enumerate(items) if it is Ellipsis and not isinstance(it, (Array, np.ndarray)))
        items[k:k + 1] = [slice(None)] * (x.ndim - used)
    return items


def _is_scalar_bool(it) -> bool:
    return isinstance(it, (bool, np.bool_)) or (isinstance(it, (np.ndarray, Array)) and it.ndim == 0
                                                 and it.dtype in (np.bool_, dt.bool_))


def _scalar_bools(x: Array, index, concrete: bool):
    """JAX's (and NumPy's) 0-d boolean index: `x.at[True]` names all of x under a new axis of
    length 1, `x.at[False]` nothing (a new axis of length 0), alone or beside other indices. As JAX
    does, each one becomes a length-1 axis inserted into x where it stands, indexed by `arange(1)` or
    `arange(0)`; the caller squeezes those axes out of an update's result. A poot array condition
    (traced under @pt.jit, or pending) is indexed as True and returned in `conds`: the update is kept
    where it holds (`where(cond, updated, x)`), so it needs no value on the host. `concrete`: read
    every condition's value instead (a `.get`, whose shape depends on it).
    None when the index has no 0-d boolean; else (x with the new axes, the index, their axes, conds)."""
    raw = list(index) if isinstance(index, tuple) else [index]
    if not any(_is_scalar_bool(it) for it in raw):
        return None

    def consumed(it) -> int:
        if it is None or it is Ellipsis or _is_scalar_bool(it):
            return 0
        if isinstance(it, (np.ndarray, Array)) and it.dtype in (np.bool_, dt.bool_):
            return it.ndim
        return 1

    rest = x.ndim - sum(consumed(it) for it in raw)
    items, dims, conds, ax = [], [], [], 0
    for it in raw:
        if _is_scalar_bool(it):
            if isinstance(it, Array) and not concrete:
                conds.append(it)
                it = True
            elif isinstance(it, Array):
                try:
                    it = bool(it)
                except TracerError:
                    raise TracerError("at[...].get: a 0-d boolean index decides the result's shape (a new "
                                      "axis of length 1 or 0), so it needs a concrete value, and this one is "
                                      "traced; use pt.where(b, x[None], ...) or an update (.set, .add), which "
                                      "take a traced one") from None
            dims.append(ax)
            items.append(np.arange(int(bool(it))))
            ax += 1
        else:
            items.append(it)
            ax += max(rest, 0) if it is Ellipsis else consumed(it)
    return mv.expand_dims(x, tuple(dims)), tuple(items), tuple(dims), conds


def _slice(s: slice, n: int) -> slice:
    """`s` with explicit bounds inside [0, n), so it selects the same elements of an axis padded past n."""
    start, stop, step = s.indices(n)
    if not len(range(start, stop, step)):
        return slice(0, 0, 1)
    return slice(start, None if stop < 0 else stop, step)


def _normalize(x: Array, idx, clip: bool):
    """(index, padded axes): the index with every integer in range; out-of-range ones are clamped
    (clip) or point at row n of their axis (to be dropped: the caller pads those axes by one row)."""
    out, padded, ax = [], [], 0
    for it in _items(x, idx):
        if it is None:
            out.append(None)
            continue
        n = x.shape[ax]
        if isinstance(it, slice):
            out.append(_slice(it, n))
        elif isinstance(it, (int, np.integer, np.ndarray)):
            a = np.asarray(it, dtype=np.int64)
            a = np.where(a < 0, a + n, a)
            if clip:
                a = np.clip(a, 0, max(n - 1, 0))
            else:
                bad = (a < 0) | (a >= n)
                if bad.any():
                    padded.append(ax)
                a = np.where(bad, n, a)
            out.append(int(a) if a.ndim == 0 and not isinstance(it, np.ndarray) else a)
        elif isinstance(it, Array):
            a = it.astype(dt.int64)
            a = where(a < 0, a + n, a)
            if clip:
                a = ew.minimum(ew.maximum(a, 0), max(n - 1, 0))
            else:
                a = where((a >= 0) & (a < n), a, n)
                padded.append(ax)
            out.append(a)
        else:
            raise PootIndexError(f"at[...]: only integers, slices, None, ..., and integer or boolean arrays "
                                 f"are valid indices; got {type(it).__name__}")
        ax += 1
    return tuple(out), sorted(set(padded))


def _pad(x: Array, axes, value=0):
    if not axes:
        return x
    width = [(0, 1 if a in axes else 0) for a in range(x.ndim)]
    return mv.pad(x, width, constant_values=value)


def _unpad(x: Array, shape) -> Array:
    if x.shape == tuple(shape):
        return x
    return x[tuple(slice(0, n) for n in shape)]


def _fill_default(d):
    if d.kind == "f" or d.kind == "c":
        return math.nan
    if d.kind == "b":
        return True
    if d.kind == "u":
        return int(np.iinfo(d.name).max)
    return int(np.iinfo(d.name).min)


def _values(x: Array, v, op: str = "set") -> Array:
    """The update values as an array of x's dtype (JAX casts them, as NumPy's x[i] = v does). A
    Python int that does not fit an integer x is refused, as NumPy 2 refuses `u8[0] = 300` (JAX
    would store 44): ScalarOverflowError, like every other place a Python int meets a poot array."""
    check_scalars_fit(v, x.dtype, f"at[...].{op}")
    if isinstance(v, Array) and v._node.weak == 1:       # a jitted function's Python int argument
        note_weak_cast(x.dtype, v._node)
    a = v if isinstance(v, Array) else asarray(v, device=x.device)
    return a if a.dtype is x.dtype else a.astype(x.dtype)


def _scatter(x: Array, idx, values, mode: str, clip: bool) -> Array:
    if not clip:
        out = _scatter_scalar_drop(x, idx, values, mode)
        if out is not None:
            return out
    norm, padded = _normalize(x, idx, clip)
    xp = _pad(x, padded)
    return _unpad(Array(setitem_node(xp, norm, _values(x, values, mode), mode=mode)), x.shape)


def _scatter_scalar_drop(x: Array, idx, values, mode: str) -> Array | None:
    """`_scatter` where the only indices that may be out of range are traced scalars (a decoder's
    `cache.at[:, pos].set(k)`): each is clamped into its axis, and an update it drops writes back the
    values already there (set) or adds 0 (add). A scalar index names one position, so the clamped
    writes never collide with kept ones. This spares the padded copy of x and the slice back (two
    copies of a whole KV cache per step), and the scatter then updates a donated cache in place.
    None where the index has anything else (index arrays, static indices out of range)."""
    out, valid, ax = [], None, 0
    for it in _items(x, idx):
        if it is None:
            out.append(None)
            continue
        n = x.shape[ax]
        if isinstance(it, slice):
            out.append(_slice(it, n))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            i = int(it) + n if it < 0 else int(it)
            if not 0 <= i < n:
                return None
            out.append(i)
        elif isinstance(it, Array) and it.ndim == 0 and n > 0:
            a = it.astype(dt.int64)
            a = where(a < 0, a + n, a)
            ok = (a >= 0) & (a < n)
            valid = ok if valid is None else valid & ok
            out.append(ew.minimum(ew.maximum(a, 0), n - 1))
        else:
            return None
        ax += 1
    if valid is None:
        return None
    norm = tuple(out)
    v = _values(x, values, mode)
    v = where(valid, v, x[norm] if mode == "set" else 0).astype(x.dtype)
    return Array(setitem_node(x, norm, v, mode=mode))


def _segment_scan(vs: Array, s: Array, op) -> Array:
    """Inclusive scan of `op` over each run of equal keys `s` (sorted), in log2(k) steps."""
    k = vs.shape[0]
    d = 1
    while d < k:
        same = s[d:] == s[:-d]
        tail = where(same, op(vs[d:], vs[:-d]), vs[d:])
        vs = mv.concatenate([vs[:d], tail])
        d *= 2
    return vs


_METHOD = {"minimum": "min", "maximum": "max"}     # the .at method that combines with each op


def _combine(x: Array, idx, values, op, clip: bool) -> Array:
    """x with op(x[p], op-fold of every update aimed at p) at each target p (scatter-multiply/min/max)."""
    norm, padded = _normalize(x, idx, clip)
    xp = _pad(x, padded)
    size = math.prod(xp.shape)
    positions = arange(size, dtype=dt.int64, device=x.device).reshape(xp.shape)
    lin = positions[norm]
    k = math.prod(lin.shape)
    if k == 0:
        return x
    vals = mv.broadcast_to(_values(x, values, _METHOD.get(op.__name__, op.__name__)), lin.shape).reshape((k,))
    lin = lin.reshape((k,))
    order = argsort(lin, stable=True)
    s = lin[order]
    folded = _segment_scan(vals[order], s, op)
    last = mv.concatenate([s[:-1] != s[1:], asarray([True], device=x.device)])
    flat = mv.concatenate([xp.reshape((size,)), zeros((1,), dtype=x.dtype, device=x.device)])
    target = where(last, s, size)                       # all but each run's last go to the trash slot
    combined = op(flat[s], folded).astype(x.dtype)
    flat = Array(setitem_node(flat, target, combined, mode="set"))
    return _unpad(flat[:size].reshape(xp.shape), x.shape)


def _host_counts(x: Array, norm, padded):
    """Per-element counts of how often a static index names each element, or None if it is traced."""
    if any(isinstance(it, Array) for it in norm):
        return None
    shape = tuple(n + (1 if a in padded else 0) for a, n in enumerate(x.shape))
    pos = np.arange(math.prod(shape)).reshape(shape)[norm].reshape(-1)
    return np.bincount(pos, minlength=math.prod(shape)), shape


def _apply(x: Array, idx, func, clip: bool) -> Array:
    """func applied to each indexed element once per time the index names it (JAX's scatter_apply)."""
    norm, padded = _normalize(x, idx, clip)
    xp = _pad(x, padded)
    host = _host_counts(x, norm, padded)
    if host is not None:
        counts, shape = host
        flat = xp.reshape((-1,))
        for r in range(int(counts.max()) if counts.size else 0):
            sel = np.flatnonzero(counts > r)
            flat = Array(setitem_node(flat, sel, asarray(func(flat[sel])).astype(x.dtype)))
        return _unpad(flat.reshape(shape), x.shape)
    counts = Array(setitem_node(zeros(xp.shape, dtype=dt.int32, device=x.device), norm, 1, mode="add"))
    if is_tracing():
        from poot.trace.control import while_loop

        top = counts.max()

        def body(c):
            r, v = c
            return r + 1, where(counts > r, asarray(func(v)).astype(x.dtype), v)

        _, xp = while_loop(lambda c: c[0] < top, body, (asarray(0, dtype=dt.int32, device=x.device), xp))
    else:
        for r in range(int(counts.max())):
            xp = where(counts > r, asarray(func(xp)).astype(x.dtype), xp)
    return _unpad(xp, x.shape)


class _Ref:
    """`x.at[idx]`: the update methods, each returning a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index):
        self.array, self.index = array, index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array.aval}, {self.index!r})"

    def _update(self, values, mode, op, how):
        _check_mode(mode, _SET_MODES, op)
        clip = mode in ("clip", "promise_in_bounds")
        bools = _scalar_bools(self.array, self.index, concrete=False)
        if bools is None:
            return how(self.array, self.index, values, clip)
        xe, index, dims, conds = bools
        out = mv.squeeze(how(xe, index, values, clip), dims)
        if conds:
            keep = conds[0]
            for c in conds[1:]:
                keep = keep & c
            out = where(keep, out, self.array)
        return out

    @api_boundary
    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """x[idx], with out-of-range indices clamped (mode None, 'clip', 'promise_in_bounds') or
        reading `fill_value` (mode 'fill'/'drop'; default NaN, or the dtype's extreme for integers)."""
        _check_mode(mode, _GET_MODES, "get")
        x, index = self.array, self.index
        bools = _scalar_bools(x, index, concrete=True)
        if bools is not None:
            x, index = bools[0], bools[1]
        if mode in ("fill", "drop"):
            norm, padded = _normalize(x, index, clip=False)
            fill = _fill_default(x.dtype) if fill_value is None else fill_value
            return _pad(x, padded, fill)[norm]
        norm, _ = _normalize(x, index, clip=True)
        return x[norm]

    @api_boundary
    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = values (of repeated indices one update is kept)."""
        return self._update(values, mode, "set", lambda x, i, v, c: _scatter(x, i, v, "set", c))

    @api_boundary
    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with values added at idx (repeated indices add up)."""
        if self.array.dtype is dt.bool_:
            raise DTypeError("at[...].add: boolean arrays have no scatter-add; use .max (logical or)")
        return self._update(values, mode, "add", lambda x, i, v, c: _scatter(x, i, v, "add", c))

    @api_boundary
    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with values subtracted at idx (repeated indices add up)."""
        return self.add(-_values(self.array, values, "subtract"), mode=mode)

    @api_boundary
    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] multiplied by values (repeated indices multiply up)."""
        return self._update(values, mode, "multiply", lambda x, i, v, c: _combine(x, i, v, ew.multiply, c))

    @api_boundary
    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x / (ones with values multiplied in at idx), as JAX computes x[idx] /= values."""
        x = self.array
        return ew.divide(x, _Ref(ones_like(x), self.index).multiply(values, mode=mode))

    @api_boundary
    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x ** (ones with values multiplied in at idx), as JAX computes x[idx] **= values."""
        x = self.array
        return ew.power(x, _Ref(ones_like(x), self.index).multiply(values, mode=mode))

    @api_boundary
    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = minimum(x[idx], values), over every repeated index."""
        return self._update(values, mode, "min", lambda x, i, v, c: _combine(x, i, v, ew.minimum, c))

    @api_boundary
    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = maximum(x[idx], values), over every repeated index."""
        return self._update(values, mode, "max", lambda x, i, v, c: _combine(x, i, v, ew.maximum, c))

    @api_boundary
    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with the unary `func` applied at idx, once per occurrence of an index."""
        if not callable(func):
            raise ArgumentError(f"at[...].apply: func must be callable, got {type(func).__name__}")
        return self._update(func, mode, "apply", lambda x, i, f, c: _apply(x, i, f, c))


class AtIndexer:
    """`x.at`: index it (`x.at[idx]`) for the update methods."""

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, index) -> _Ref:
        return _Ref(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array.aval})"
