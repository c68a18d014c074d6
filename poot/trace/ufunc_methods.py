"""The work of the ufunc methods (poot/trace/ufunc.py): outer, reduce, accumulate, at and reduceat,
built from poot's lazy operations so that they also run inside @pt.jit.

- reduce/accumulate of add, multiply, maximum, minimum, logical_and, logical_or use poot's own
  reductions and scans (sum, prod, max, min, all, any, cumsum, cumprod), which give NumPy's dtypes
  (small integers add in int64).
- other reorderable ufuncs (fmax, bitwise_and, logaddexp...) reduce in a log-depth tree of
  elementwise steps and accumulate in a log-depth scan: Hillis-Steele (n log n work, log n steps)
  for short axes, the work-efficient pairwise scan (O(n) work, 2 log n steps) for long ones;
- the rest (subtract, divide, power...) go left to right, one recorded step per element, which is
  NumPy's order: `subtract.reduce([a, b, c])` is `(a - b) - c`.
- `at` with repeated indices applies f once per occurrence (unbuffered): add (and subtract, as
  adding the negation) is one scatter-add; other ufuncs group the positions on the host (NumPy
  arrays, lists, ints, slices, or a realized poot array) and run a log-depth tree per position
  (reorderable f) or one gather-combine-scatter round per repetition of an index; indices traced in
  @pt.jit are grouped on the device by a stable argsort (`_traced_at`).
- unary `at` (`negative.at(x, i)`) applies f once per occurrence: idempotent f (abs, floor...) once
  where named, involutions (negative, invert) where named an odd number of times, others one round
  per repetition; traced indices count occurrences with a scatter-add.
- `reduceat` is in ufunc_reduceat.py.
"""
from __future__ import annotations

import warnings

import numpy as np

from poot import dtypes as dt
from poot.errors import (ArgumentError, ArgumentValueError, DTypeError, NotBuiltError, PootIndexError, ShapeError,
                         out_error)
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import arange, asarray, full
from poot.trace.indexing import setitem_node, take
from poot.trace.lazy import is_tracing
from poot.trace.selection import where as _where

_REDUCTIONS = {"add": red.sum, "multiply": red.prod, "maximum": red.max, "minimum": red.min,
               "logical_and": red.all, "logical_or": red.any}
_SCANS = {"add": red.cumsum, "multiply": red.cumprod}
_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _no_out(uf, method, out, result=None):
    """Refuse out= as every poot function does (errors.out_error); `result` gives the lazy result
    without it, to name a wrong shape or dtype (reduce, accumulate and reduceat cast to any out dtype,
    as NumPy's do; outer is a ufunc call, same_kind)."""
    if out is not None:
        raise out_error(f"{uf.__name__}.{method}", out, result() if result is not None else None,
                        casting="same_kind" if method == "outer" else "unsafe")


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
    out = kwargs.pop("out", None)
    _no_out(uf, "outer", out, lambda: outer(uf, A, B, dtype, **kwargs))
    if set(kwargs) - {"casting", "order", "subok", "where"}:
        raise NotBuiltError(f"{uf.__name__}.outer: arguments {sorted(kwargs)} are not built")
    a, b = _as_array(A), _as_array(B)
    if dtype is not None:       # the ufunc's call keyword (a comparison's dtype=bool is its result's)
        kwargs["dtype"] = dtype
    return uf(mv.reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)


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
    _no_out(uf, "reduce", out, lambda: reduce(uf, array, axis, dtype, None, keepdims, initial, where))
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


_DOUBLING_UP_TO = 64
_PAIRWISE_FROM = 16384


def _pairwise_scan(uf, x: Array) -> Array:
    """Inclusive running f over the last axis of a reorderable f in O(n) work and 2 log2(n) levels
    (the work-efficient scan): the scan of the pair totals f(x[2i], x[2i+1]) gives every odd place,
    and each even place is one more step from the odd place before it."""
    n = x.shape[-1]
    if n <= _DOUBLING_UP_TO:       # few elements: fewer, wider steps cost less than more levels
        return _doubling_scan(uf, x)
    m = n // 2
    even, odd = x[..., 0:2 * m:2], x[..., 1:2 * m:2]
    s = _pairwise_scan(uf, uf(even, odd).astype(x.dtype))      # s[i] = f(x[0], ..., x[2i+1])
    ev = mv.concatenate([x[..., :1], uf(s[..., :-1], even[..., 1:]).astype(x.dtype)], axis=-1)
    out = mv.reshape(mv.stack([ev, s], axis=-1), x.shape[:-1] + (2 * m,))
    if n % 2:
        out = mv.concatenate([out, uf(s[..., -1:], x[..., -1:]).astype(x.dtype)], axis=-1)
    return out


def _doubling_scan(uf, x: Array) -> Array:
    """Inclusive running f over the last axis in log2(n) steps of n work each (Hillis-Steele)."""
    n = x.shape[-1]
    d = 1
    while d < n:
        x = mv.concatenate([x[..., :d], uf(x[..., :n - d], x[..., d:])], axis=-1)
        d *= 2
    return x


def _scan(uf, x: Array) -> Array:
    """Inclusive running f over the last axis: log-depth for reorderable f, else left to right."""
    n = x.shape[-1]
    if uf.reorderable:       # short axes: the doubling scan records fewer steps, which costs less
        return _pairwise_scan(uf, x) if n > _PAIRWISE_FROM else _doubling_scan(uf, x)
    acc = x[..., 0]
    outs = [acc]
    for i in range(1, n):
        acc = uf(acc, x[..., i])
        outs.append(acc)
    return mv.stack(outs, axis=-1)


def accumulate(uf, array, axis, dtype, out):
    _no_out(uf, "accumulate", out, lambda: accumulate(uf, array, axis, dtype, None))
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


def _traced_at(uf, a: Array, indices, b) -> Array:
    """ufunc.at with indices traced in @pt.jit: the flat positions are a gather of arange (NumPy's
    bounds rule, checked when the program runs), sorted by a stable argsort. A reorderable f folds
    each run of equal positions in a log-depth segmented scan and meets its target once; any other f
    takes one round per repetition (a while_loop), the r-th occurrence of every position in round r,
    so each target sees its values in index order, as NumPy's loop does."""
    from poot.trace.array_api_sets import argsort
    from poot.trace.at_updates import _segment_scan
    from poot.trace.control import while_loop

    name = uf.__name__
    size = a.size
    positions = mv.reshape(arange(size, dtype=dt.int64, device=a.device), a.shape)[indices]
    k = positions.size
    if k == 0:
        return a
    lin = mv.reshape(positions, (k,))
    values = mv.reshape(_values_at(name, b, positions.shape), (k,))
    # one extra slot past the end takes the writes that must not land (a run's non-final elements)
    flat = mv.concatenate([mv.reshape(a, (size,)), full((1,), 0, a.dtype, device=a.device)])
    order = argsort(lin, stable=True)
    s = take(lin, order)
    new_run = mv.concatenate([full((1,), True, dt.bool_, device=a.device), s[1:] != s[:-1]])
    if uf.reorderable:
        folded = _segment_scan(take(values, order), s, uf)
        last = mv.concatenate([s[:-1] != s[1:], full((1,), True, dt.bool_, device=a.device)])
        combined = uf(take(flat, s), folded).astype(a.dtype)
        flat = Array(setitem_node(flat, _where(last, s, size), combined))
        return mv.reshape(flat[:size], a.shape)
    from poot.trace.elementwise import maximum

    at = arange(k, dtype=dt.int64, device=a.device)
    run_start = _scan(maximum, _where(new_run, at, 0))      # where each element's run begins
    rank_sorted = at - run_start
    rank = Array(setitem_node(full((k,), 0, dt.int64, device=a.device), order, rank_sorted))
    rounds = red.max(rank) + 1

    def body(c):
        r, v = c
        targets = _where(rank == r, lin, size)
        combined = uf(take(v, lin), values).astype(a.dtype)
        return r + 1, Array(setitem_node(v, targets, combined))

    _, flat = while_loop(lambda c: c[0] < rounds, body, (full((), 0, dt.int64, device=a.device), flat))
    return mv.reshape(flat[:size], a.shape)


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
    parts = indices if isinstance(indices, tuple) else (indices,)
    if is_tracing() and any(isinstance(p, Array) for p in parts):
        a._node = _traced_at(uf, a, indices, b)._node
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


_LOOP_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64", "complex64", "complex128")
_LOOP_TYPES: dict = {}


def loop_types(uf) -> tuple[str, ...]:
    """('ff->f', ...): for each dtype with a NumPy type character, the function on empty operands of
    it, recorded (never run); a dtype it refuses is left out. Written as NumPy's loops are: where the
    operands are converted to the result's type first (sqrt of int16 computes in float32) the loop is
    that type's ('f->f'), as NumPy lists it; a bool result of other operands stays ('ff->?')."""
    key = getattr(uf, "_key", uf.__name__)
    found = _LOOP_TYPES.get(key)
    if found is not None:
        return found
    from poot.errors import PootError

    loops = []
    for name in _LOOP_DTYPES:
        d = dt.as_dtype(name)
        probe = full((0,), 0, d)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")       # a probe's conversions warn about no values
                r = uf(*([probe] * uf.nin))
        except (PootError, TypeError, ValueError):
            continue
        rs = r if isinstance(r, tuple) else (r,)
        outs = "".join(o.dtype.np.char for o in rs)
        first = rs[0].dtype
        ins = first.np.char if first is not d and first.kind != "b" else d.np.char
        loop = ins * uf.nin + "->" + outs
        if loop not in loops:
            loops.append(loop)
    found = _LOOP_TYPES[key] = tuple(loops)
    return found


# --- unary at ------------------------------------------------------------------------------------
# f(f(x)) == f(x) in any dtype: one application wherever an index names the element
_IDEMPOTENT = ("positive", "absolute", "floor", "ceil", "trunc", "rint", "sign")
# f(f(x)) == x: an application wherever an index names the element an odd number of times
_INVOLUTIONS = ("negative", "invert")


def _applied(uf, v: Array, d: dt.DType) -> Array:
    r = uf(v)
    return r if r.dtype is d else r.astype(d)


def unary_at(uf, a, indices):
    """a[indices] = f(a[indices]), f applied once per occurrence of an index, the result cast to a's
    dtype each time (NumPy's unary ufunc.at). Host indices: the positions and their counts are
    NumPy's; traced indices: the counts are a scatter-add, and f is applied where they ask."""
    name = uf.__name__
    if not isinstance(a, Array):
        raise DTypeError(f"{name}.at: the target must be a poot array (it is updated in place); for a "
                         f"NumPy array use np.{name}.at")
    d = a.dtype
    kind = "idempotent" if name in _IDEMPOTENT else "involution" if name in _INVOLUTIONS else None
    if name == "logical_not" and d is dt.bool_:
        kind = "involution"
    parts = indices if isinstance(indices, tuple) else (indices,)
    if is_tracing() and any(isinstance(p, Array) for p in parts):
        counts = Array(setitem_node(full(a.shape, 0, dt.int32, device=a.device), indices, 1, mode="add"))
        if kind == "idempotent":
            a._node = _where(counts > 0, _applied(uf, a, d), a)._node
        elif kind == "involution":
            a._node = _where((counts & 1) == 1, _applied(uf, a, d), a)._node
        else:
            from poot.trace.control import while_loop

            top = red.max(counts) if a.size else full((), 0, dt.int32, device=a.device)

            def body(c):
                r, v = c
                return r + 1, _where(counts > r, _applied(uf, v, d), v)

            _, v = while_loop(lambda c: c[0] < top, body, (full((), 0, dt.int32, device=a.device), a))
            a._node = v._node
        return
    lin = _host_positions(a, indices, name).reshape(-1)
    if lin.size == 0:
        _applied(uf, a.reshape(-1)[:0], d)      # a dtype f refuses is refused with no index too
        return
    counts = np.bincount(lin, minlength=a.size)
    flat = mv.reshape(a, (a.size,))
    if kind == "idempotent":
        rounds = [np.flatnonzero(counts)]
    elif kind == "involution":
        rounds = [np.flatnonzero(counts & 1)]
    else:
        rounds = [np.flatnonzero(counts > r) for r in range(int(counts.max()))]
    for sel in rounds:
        if sel.size:
            flat = Array(setitem_node(flat, sel, _applied(uf, take(flat, sel), d)))
    a._node = mv.reshape(flat, a.shape)._node


# --- calling a ufunc with NumPy's keywords -------------------------------------------------------
_BOOL_RESULTS = frozenset(_COMPARISONS + ("logical_and", "logical_or", "logical_xor", "logical_not",
                                          "isnan", "isinf", "isfinite", "signbit"))
_SCALAR_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _check_input_cast(uf, k: int, x, to: dt.DType, casting: str) -> None:
    """NumPy's check that input `k` may be converted to the loop's dtype `to` under `casting`. A Python
    scalar is weak: only its kind counts (an int may go to any integer dtype; whether its value fits is
    checked where it meets the array), as NumPy 2 treats it."""
    if isinstance(x, Array):
        ok = np.can_cast(x.dtype.np, to.np, casting)
        name = x.dtype.name
    else:
        kind = _SCALAR_KINDS.get(type(x))
        if kind is None:                    # a NumPy scalar, list or array: its own dtype
            frm = np.asarray(x).dtype
            ok, name = np.can_cast(frm, to.np, casting), frm.name
        else:
            ok = casting == "unsafe" or _KIND_RANK[kind] <= _KIND_RANK[to.kind]
            name = f"Python {type(x).__name__}"
    if not ok:
        where = "input" if uf.nin == 1 else f"input {k}"
        raise DTypeError(f"{uf.__name__}: cannot cast ufunc {where} from {name} to {to.name} with "
                         f"casting rule {casting!r}")


def call_with_keywords(uf, fn, args, kwargs):
    """`f(*args, dtype=..., casting=..., ...)`, NumPy's ufunc call keywords, for poot's ufunc `uf` whose
    public function is `fn`: `dtype` is the loop's dtype (the inputs are converted to it, as NumPy's
    `np.add(u8, u8, dtype=np.int16)` adds in int16; a function with a bool result takes only
    dtype=bool), `casting` the rule those conversions (and, without dtype, the promotion to the
    common dtype) must meet; `order` and `subok` change nothing for poot arrays. `where=` is refused:
    it keeps out='s old values where false, and poot has no out=. Other keywords (out=) go to `fn`,
    which reports them as it does for any call."""
    kw = dict(kwargs)
    dtype = kw.pop("dtype", None)
    casting = kw.pop("casting", "same_kind")
    where = kw.pop("where", True)
    order = kw.pop("order", "K")
    kw.pop("subok", None)
    name = uf.__name__
    if casting not in dt.CASTINGS:
        raise ArgumentValueError(f"{name}: casting must be one of {dt.CASTINGS}, got {casting!r}")
    if order not in ("K", "A", "C", "F"):
        raise ArgumentValueError(f"{name}: order must be one of 'K', 'A', 'C', 'F', got {order!r}")
    if where is not True:
        raise ArgumentError(f"{name}: where= keeps out='s old values where it is False, and poot arrays "
                            f"have no out=; write pt.where(mask, pt.{name}(...), fallback)")
    if len(args) != uf.nin:             # fn names the mistake
        return fn(*args, **kw)
    if dtype is None:
        if casting not in ("same_kind", "unsafe"):      # the promotion itself must meet the rule
            loop = fn(*args).dtype
            if name in _BOOL_RESULTS:                   # the loop's dtype is the inputs' common one
                from poot.trace.promote import promote

                loop = promote(name, tuple(args))[1]
            for k, a in enumerate(args):
                _check_input_cast(uf, k, a, loop, casting)
        return fn(*args, **kw)
    d = dt.as_dtype(dtype)
    if name in _BOOL_RESULTS:
        if d.kind != "b":
            raise DTypeError(f"{name}: no loop gives {d.name}: its result is bool (dtype= names the "
                             f"result's dtype; convert the inputs with .astype first)")
        return fn(*args, **kw)
    for k, a in enumerate(args):
        _check_input_cast(uf, k, a, d, casting)
    cast = [a.astype(d) if isinstance(a, Array) else     # a Python number of d's kind or below stays weak
            a if _KIND_RANK[_SCALAR_KINDS.get(type(a), "c")] <= _KIND_RANK[d.kind] else asarray(a).astype(d)
            for a in args]
    r = fn(*cast, **kw)
    if r.dtype != d:
        raise DTypeError(f"{name}: no loop computes in {d.name} (for {d.name} operands it gives "
                         f"{r.dtype.name})")
    return r
