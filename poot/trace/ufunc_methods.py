"""The work of the ufunc methods (poot/trace/ufunc.py): outer, reduce, accumulate and at, built from
poot's lazy operations so that they also run inside @pt.jit.

- reduce/accumulate of add, multiply, maximum, minimum, logical_and, logical_or use poot's own
  reductions and scans (sum, prod, max, min, all, any, cumsum, cumprod), which give NumPy's dtypes
  (small integers add in int64).
- other reorderable ufuncs (fmax, bitwise_and, logaddexp...) reduce in a log-depth tree of
  elementwise steps and accumulate in a log-depth (Hillis-Steele) scan;
- the rest (subtract, divide, power...) go left to right, one recorded step per element, which is
  NumPy's order: `subtract.reduce([a, b, c])` is `(a - b) - c`.
- `at` with repeated indices applies f once per occurrence (unbuffered): add (and subtract, as
  adding the negation) is one scatter-add; other ufuncs need the indices on the host (NumPy arrays,
  lists, ints, slices) and run one gather-combine-scatter round per repetition of an index.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, NotBuiltError, PootIndexError, ShapeError
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import asarray, full
from poot.trace.indexing import setitem_node, take
from poot.trace.lazy import is_tracing
from poot.trace.selection import where as _where

_REDUCTIONS = {"add": red.sum, "multiply": red.prod, "maximum": red.max, "minimum": red.min,
               "logical_and": red.all, "logical_or": red.any}
_SCANS = {"add": red.cumsum, "multiply": red.cumprod}
_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _no_out(uf, method, out):
    if out is not None:
        raise ShapeError(f"{uf.__name__}.{method}: out= is not supported (poot arrays are immutable "
                         f"values); assign the result instead")


def _as_array(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _result_dtype(uf, x: Array) -> dt.DType:
    """The dtype f gives for two operands like x's elements (recorded on empty slices, never run)."""
    probe = mv.reshape(x, (-1,))[:0]
    return uf(probe, probe).dtype


def _axes(uf, axis, x: Array) -> tuple[int, ...]:
    ndim = x.ndim
    if axis is None:
        axes = tuple(range(ndim))
    else:
        raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(mv.axis_of(a, ndim, f"{uf.__name__}.reduce", x) for a in raw)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{uf.__name__}.reduce: duplicate value in axis {axis!r}")
    if len(axes) > 1 and not uf.reorderable:
        raise ShapeError(f"{uf.__name__}.reduce: reduction operation '{uf.__name__}' is not "
                         f"reorderable, so at most one axis may be specified (got axis={axis!r})")
    return axes


def outer(uf, A, B, dtype=None, **kwargs):
    _no_out(uf, "outer", kwargs.pop("out", None))
    if kwargs:
        raise NotBuiltError(f"{uf.__name__}.outer: arguments {sorted(kwargs)} are not built")
    a, b = _as_array(A), _as_array(B)
    if dtype is not None:
        a, b = a.astype(dtype), b.astype(dtype)
    return uf(mv.reshape(a, a.shape + (1,) * b.ndim), b)


def _identity_in(value, d: dt.DType):
    """A ufunc identity (or initial) as a scalar of `d`: bitwise_and's -1 is all ones in uint8."""
    if isinstance(value, Array):
        return value
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(d.np).item() if d.kind in "biu" else value


def _tree(uf, x: Array) -> Array:
    """f over the last axis in a log-depth tree of elementwise steps (reorderable f only)."""
    while x.shape[-1] > 1:
        n = x.shape[-1]
        h = n // 2
        y = uf(x[..., :h], x[..., h:2 * h])
        x = mv.concatenate([y, x[..., 2 * h:]], axis=-1) if n % 2 else y
    return x[..., 0]


def _fold(uf, x: Array, start) -> Array:
    """f over the last axis left to right, from `start` (or the first element when None)."""
    n = x.shape[-1]
    acc, first = (x[..., 0], 1) if start is None else (start, 0)
    for i in range(first, n):
        acc = uf(acc, x[..., i])
    return acc


def reduce(uf, array, axis, dtype, out, keepdims, initial, where):
    """ufunc.reduce; `initial` is a 1-tuple holding the value, or None when not given."""
    _no_out(uf, "reduce", out)
    name = uf.__name__
    if name in _COMPARISONS:
        raise DTypeError(f"{name}.reduce: a comparison gives bool, not its operands' type, so it has "
                         f"no reduction (NumPy refuses it too); compare, then use all/any")
    x = _as_array(array)
    if x.ndim == 0 and axis not in (None, ()):
        raise ShapeError(f"{name}.reduce: cannot reduce a 0-d array along axis {axis!r}")
    axes = _axes(uf, axis, x)
    dedicated = _REDUCTIONS.get(name)
    if dedicated is not None and not (initial is not None and name.startswith("logical")):
        kw = {"axis": axes, "keepdims": keepdims}
        if name in ("add", "multiply"):
            kw["dtype"] = dtype
        elif dtype is not None:
            x = x.astype(dtype)
        if initial is not None:
            kw["initial"] = initial[0]
        if where is not True:
            kw["where"] = where
        return dedicated(x, **kw)
    if dtype is not None:
        x = x.astype(dtype)
    rd = _result_dtype(uf, x)
    x = x.astype(rd) if x.dtype is not rd else x
    if where is not True:
        fill = initial[0] if initial is not None else uf.identity
        if fill is None or not uf.reorderable:
            raise NotBuiltError(f"{name}.reduce: where= needs a reorderable ufunc and an identity or "
                                f"initial= (reduction operation '{name}' has neither)")
        x = _where(where, x, full((), _identity_in(fill, rd), rd))
    kept = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    moved = mv.reshape(mv.moveaxis(x, axes, tuple(range(-len(axes), 0))), kept + (-1,)) if axes \
        else mv.reshape(x, x.shape + (1,))
    if moved.shape[-1] == 0:
        fill = initial[0] if initial is not None else uf.identity
        if fill is None:
            raise ShapeError(f"{name}.reduce: zero-size array to reduction operation {name} which has "
                             f"no identity (give initial=)")
        r = full(kept, _identity_in(fill, rd), rd)
    elif uf.reorderable:
        r = _tree(uf, moved)
        start = initial[0] if initial is not None else uf.identity
        if start is not None:           # NumPy starts from the identity: hypot.reduce([-1.0]) is 1.0
            r = uf(full((), _identity_in(start, rd), rd), r)
    else:
        r = _fold(uf, moved, None if initial is None else full((), initial[0], rd))
    r = r.astype(rd) if r.dtype is not rd else r
    if keepdims:
        r = mv.reshape(r, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
    return r


def _scan(uf, x: Array) -> Array:
    """Inclusive running f over the last axis: log-depth for reorderable f, else left to right."""
    n = x.shape[-1]
    if uf.reorderable:
        d = 1
        while d < n:
            x = mv.concatenate([x[..., :d], uf(x[..., :n - d], x[..., d:])], axis=-1)
            d *= 2
        return x
    acc = x[..., 0]
    outs = [acc]
    for i in range(1, n):
        acc = uf(acc, x[..., i])
        outs.append(acc)
    return mv.stack(outs, axis=-1)


def accumulate(uf, array, axis, dtype, out):
    _no_out(uf, "accumulate", out)
    name = uf.__name__
    x = _as_array(array)
    if x.ndim == 0:
        raise ShapeError(f"{name}.accumulate: cannot accumulate on a 0-d array")
    if axis is None or not isinstance(axis, (int, np.integer)):
        raise ShapeError(f"{name}.accumulate: axis must be one integer, got {axis!r}")
    ax = mv.axis_of(axis, x.ndim, f"{name}.accumulate", x)
    scan = _SCANS.get(name)
    if scan is not None:
        return scan(x, axis=ax, dtype=dtype)
    if name in _COMPARISONS:
        raise DTypeError(f"{name}.accumulate: a comparison has no accumulation (NumPy refuses it too)")
    if dtype is not None:
        x = x.astype(dtype)
    rd = _result_dtype(uf, x)
    x = x.astype(rd) if x.dtype is not rd else x
    if x.shape[ax] == 0:
        return x
    r = _scan(uf, mv.moveaxis(x, ax, -1))
    return mv.moveaxis(r.astype(rd) if r.dtype is not rd else r, -1, ax)


def _host_positions(a: Array, indices, name: str) -> np.ndarray:
    """The flat positions `a[indices]` selects, computed with NumPy (the indices are host values)."""
    parts = indices if isinstance(indices, tuple) else (indices,)
    if any(isinstance(p, Array) for p in parts):
        if is_tracing():
            raise NotBuiltError(f"{name}.at with traced indices is not built (add.at and subtract.at take "
                                f"them): the grouping of repeated positions needs their values")
        parts = tuple(p.numpy() if isinstance(p, Array) else p for p in parts)
        indices = parts if isinstance(indices, tuple) else parts[0]
    try:
        return np.arange(a.size, dtype=np.int64).reshape(a.shape)[indices]
    except IndexError as e:
        raise PootIndexError(f"{name}.at: {e} (array of shape {a.shape})") from None


def _at_by_tree(uf, flat, vals, sorted_pos, group_start, rank, group_size):
    """ufunc.at for a reorderable ufunc: the values of each target (sorted by target) are combined by a
    log-depth tree within their group (element r takes r + step when r is a multiple of 2 * step), so
    a target repeated n times costs log2(n) steps, not n; then each group's total meets its target."""
    step = 1
    while step < int(group_size.max()):
        left = np.flatnonzero((rank % (2 * step) == 0) & (rank + step < group_size))
        vals = Array(setitem_node(vals, left, uf(take(vals, left), take(vals, left + step))))
        step *= 2
    targets = sorted_pos[group_start]
    combined = uf(take(flat, targets), take(vals, group_start)).astype(flat.dtype)
    return Array(setitem_node(flat, targets, combined))


def _renamed(e: ShapeError, inner: str, outer: str) -> ShapeError:
    """The ShapeError `e` of the function `inner` that `outer` called, as `outer`'s own (the user's line
    is added again at outer's boundary)."""
    message = str(e.args[0]).split("\n  (at ", 1)[0]
    return ShapeError(f"{outer}: {message.removeprefix(inner + ': ')}")


def _added_at(name, a, indices, v):
    """The node of `a` with `v` added at `indices`; a value that does not broadcast to the indexed
    elements is refused under the name the user called (`add.at`), not the setitem that does the work."""
    try:
        return setitem_node(a, indices, v, mode="add")
    except ShapeError as e:
        raise _renamed(e, "setitem", f"{name}.at") from None


def _values_at(name, b, shape):
    """b broadcast to the indexed elements' shape, refused under the ufunc's `at` name if it does not fit."""
    try:
        return mv.broadcast_to(_as_array(b), shape)
    except ShapeError as e:
        raise _renamed(e, "broadcast_to", f"{name}.at") from None


def at(uf, a, indices, b):
    name = uf.__name__
    if not isinstance(a, Array):
        raise DTypeError(f"{name}.at: the target must be a poot array (it is updated in place); for a "
                         f"NumPy array use np.{name}.at")
    if b is None:
        raise DTypeError(f"{name}.at: a binary ufunc needs the second operand b")
    if name in ("add", "subtract"):
        if name == "subtract" and a.dtype.kind == "b":
            raise DTypeError("subtract.at: boolean subtract is not defined (NumPy refuses it too)")
        if a.dtype.kind == "b":           # NumPy's bool add is logical or: count the Trues each target gets
            counts = full(a.shape, 0, dtype=dt.int32, device=a.device)
            counts._node = setitem_node(counts, indices, _as_array(b).astype(dt.int32), mode="add")
            a._node = (a | (counts > 0))._node
            return
        v = _as_array(b).astype(a.dtype)
        if name == "subtract":
            v = -v
        a._node = _added_at(name, a, indices, v)   # a rebinds: poot values are immutable
        return
    lin = _host_positions(a, indices, name)
    if lin.size == 0:
        return
    flat_pos = lin.reshape(-1)
    values = mv.reshape(_values_at(name, b, lin.shape), (-1,))
    order = np.argsort(flat_pos, kind="stable")
    sorted_pos = flat_pos[order]
    group_start = np.r_[0, np.flatnonzero(np.diff(sorted_pos)) + 1]
    sizes = np.diff(np.r_[group_start, order.size])
    rank = np.arange(order.size) - np.repeat(group_start, sizes)      # place in its group, sorted order
    flat = mv.reshape(a, (a.size,))
    if uf.reorderable:
        flat = _at_by_tree(uf, flat, take(values, order), sorted_pos, group_start, rank, np.repeat(sizes, sizes))
    else:
        by_input = np.empty_like(rank)
        by_input[order] = rank
        for r in range(int(sizes.max())):    # one round per repetition, in index order: positions distinct
            sel = np.flatnonzero(by_input == r)
            targets = flat_pos[sel]
            combined = uf(take(flat, targets), take(values, sel)).astype(a.dtype)
            flat = Array(setitem_node(flat, targets, combined))
    a._node = mv.reshape(flat, a.shape)._node
