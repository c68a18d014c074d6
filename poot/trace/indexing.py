"""Indexing with NumPy's semantics, recorded as `slice`, `reshape`, `transpose` and `take` equations;
`x[i] = v` records `update_slice`, `select` or `scatter` and rebinds `x`.

- ints, slices (any step, negative too), None and ... are basic indexing: one `slice` and a reshape.
- integer arrays (NumPy arrays, lists or poot arrays) are advanced indexing, NumPy's rules included
  (several index arrays broadcast together; their dimensions go first when they are separated by a
  slice, None or ...). It becomes one `take` on an operand reshaped so the indexed axes form one axis.
  Indices in NumPy arrays and lists are bounds-checked now. Indices in a lazy poot array are checked by
  the kernel that gathers with them: an out-of-range one reads as 0 and sets a trap flag, and the next
  host read raises PootIndexError (KernelIndexError) naming the line that indexed. An assignment
  through a realized CPU index array checks it at once, as NumPy does, so a bad one leaves x as it
  was. `take(...,
  mode="clip"|"wrap")` clips or wraps instead, as NumPy's take does.
- boolean masks: the result's shape depends on how many elements are True, so a mask is realized
  right there (its integer positions become the indices); inside @pt.jit that is a TracerError naming
  `pt.where` and `nonzero(mask, size=n)`. `x[mask] = scalar` does not realize: it is a `select`.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DeviceError, PootIndexError, ShapeError, TracerError, api_boundary
from poot.devices.cpu import CpuBuffer
from poot.graph import broadcast_shapes
from poot.jit.runtime.execute import buffer_to_numpy
from poot.trace.array import Array
from poot.trace.lazy import (Node, caller_where, check_scalar_fits, constant, format_where, from_numpy, is_tracing,
                   note_weak_cast, record, scalar_value, shared_constant)
from poot.trace.movement import _reshape_node, _transpose_node, arr, axis_of, broadcast_node, slice_node
from poot.trace.promote import cast, is_weak, promote, wrap

__all__ = ["take", "take_along_axis", "nonzero"]


def refuse_data_dependent(what: str, why: str, fix: str) -> None:
    """While tracing (@pt.jit, a cond/loop body): TracerError for `what`, whose result's shape
    depends on the values (`why`), with `fix`."""
    if is_tracing():
        raise TracerError(f"at {format_where(caller_where())}: {what} has a data-dependent shape "
                          f"({why}), which a traced function (@pt.jit, or a pt.cond/fori_loop/"
                          f"while_loop body) cannot have; {fix}")


def _index_array(it, x):
    """A list/ndarray/poot-array index -> ('adv', node or ndarray) or ('mask', ndarray or poot bool
    array: _expand reads it once its shape is checked against the axes it indexes)."""
    if isinstance(it, Array):
        if it.dtype is dt.bool_:
            return ("mask", it)
        if it.dtype.kind not in "iu":
            raise PootIndexError(f"arrays used as indices must be integer or bool, got {it.aval} "
                                 f"(indexing {x.aval}); convert with .astype(int)")
        return ("adv", it._node)
    a = np.asarray(it)
    if a.dtype == np.bool_:
        return ("mask", a)
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise PootIndexError(f"arrays used as indices must be integer or bool, got {a.dtype} "
                             f"(indexing {x.aval})")
    return ("adv", a.astype(np.int64))


def _scalar_bool(it, x):
    """True/False for a 0-d boolean index (a Python or NumPy bool, a 0-d bool NumPy or poot array),
    None for anything else. A poot one is read now (the result's shape depends on it)."""
    if isinstance(it, (bool, np.bool_)):
        return bool(it)
    if isinstance(it, np.ndarray) and it.ndim == 0 and it.dtype == np.bool_:
        return bool(it)
    if isinstance(it, Array) and it.ndim == 0 and it.dtype is dt.bool_:
        refuse_data_dependent("x[b] with a 0-d boolean b", "it adds an axis of length 1 if b else 0",
                              "use pt.where(b, x, fill) or x[None]")
        return bool(it.numpy())
    return None


def _split_scalar_bools(x, idx):
    """NumPy's 0-d boolean index is an advanced index over a new axis of length 1: True keeps it,
    False empties it. `x[idx]` is then `x[first][second]`, where `first` puts a new axis (None) at each
    0-d boolean and keeps x's axes whole, and `second` indexes that axis with [0] or [] and x's axes as
    idx did (so the advanced indices broadcast and place as NumPy's do). None when idx has no 0-d
    boolean."""
    items = idx if isinstance(idx, tuple) else (idx,)
    flags = [_scalar_bool(it, x) for it in items]
    if all(f is None for f in flags):
        return None
    first, second = [], []
    for it, flag in zip(items, flags):
        if flag is not None:
            first.append(None)
            second.append(np.zeros(1 if flag else 0, np.int64))
        elif it is None:
            first.append(None)
            second.append(slice(None))
        elif it is Ellipsis:
            first.append(Ellipsis)
            second.append(Ellipsis)
        else:
            consumed = getattr(it, "ndim", 1) if _is_bool_array(it) else 1
            first.extend([slice(None)] * consumed)
            second.append(it)
    return tuple(first), tuple(second)


def _is_bool_array(it) -> bool:
    if isinstance(it, Array):
        return it.dtype is dt.bool_
    if isinstance(it, (list, tuple, np.ndarray)):
        return np.asarray(it).dtype == np.bool_
    return False


def _expand(x, idx):
    """Index -> entries, one per result-producing item, with ... expanded to full slices.
    Entries: ('int', i), ('slice', start, step, size), ('none',), ('ell',), ('adv', node|ndarray)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    raw = []
    for it in items:
        if it is None:
            raw.append(("none",))
        elif it is Ellipsis:
            raw.append(("ell",))
        elif isinstance(it, slice):
            raw.append(("slice", it))
        elif isinstance(it, (bool, np.bool_)):
            if not it:
                raise PootIndexError("a scalar False index is not supported; use an empty index array")
            raw.append(("none",))
        elif isinstance(it, (int, np.integer)):
            raw.append(("int", int(it)))
        elif isinstance(it, (Array, list, np.ndarray, tuple, range)):
            raw.append(_index_array(list(it) if isinstance(it, range) else it, x))
        else:
            raise PootIndexError(f"only integers, slices, None, ..., and integer or boolean arrays are "
                                 f"valid indices; got {type(it).__name__} (indexing {x.aval})")
    if sum(1 for r in raw if r[0] == "ell") > 1:
        raise PootIndexError("an index can only have a single ellipsis ('...')")
    used = sum(r[1].ndim if r[0] == "mask" else 1 for r in raw if r[0] in ("int", "slice", "adv", "mask"))
    if used > x.ndim:
        raise PootIndexError(f"too many indices for array: {x.aval} is {x.ndim}-dimensional, but "
                             f"{used} were indexed")
    entries = []
    ax = 0
    for r in raw:
        kind = r[0]
        if kind == "ell":
            entries.append(("ell",))
            for _ in range(x.ndim - used):
                entries.append(_slice_entry(slice(None), x.shape[ax]))
                ax += 1
        elif kind == "none":
            entries.append(r)
        elif kind == "slice":
            entries.append(_slice_entry(r[1], x.shape[ax]))
            ax += 1
        elif kind == "int":
            n = x.shape[ax]
            if not -n <= r[1] < n:
                raise PootIndexError(f"index {r[1]} is out of bounds for axis {ax} with size {n} "
                                     f"(indexing {x.aval})")
            entries.append(("int", r[1] % n))
            ax += 1
        elif kind == "mask":
            m = r[1]
            if m.ndim == 0:
                raise PootIndexError("a 0-d boolean index is not supported; use None to add an axis")
            indexed = x.shape[ax:ax + m.ndim]
            # the array API standard lets a mask axis of size 0 select nothing from any axis (NumPy
            # raises IndexError there); every other size must match the axis
            if len(indexed) != m.ndim or any(ms not in (xs, 0) for ms, xs in zip(m.shape, indexed)):
                raise PootIndexError(f"boolean index of shape {m.shape} does not match the indexed "
                                     f"axes {x.shape[ax:ax + m.ndim]} of {x.aval} (from axis {ax})")
            if isinstance(m, Array):      # a mask that fits: its values now decide the result's shape
                refuse_data_dependent("x[mask] (boolean indexing)", "its length is the number of True "
                                      "elements", "use pt.where(mask, x, fill) to keep x's shape, or "
                                      "x[pt.nonzero(mask, size=n, fill_value=...)] for n positions")
                m = m.numpy()
            for k, pos in enumerate(np.nonzero(m)):
                entries.append(("adv", pos.astype(np.int64)))
            ax += m.ndim
        else:  # adv
            entries.append(r)
            ax += 1
    while ax < x.ndim:
        entries.append(_slice_entry(slice(None), x.shape[ax]))
        ax += 1
    return entries


def _slice_entry(s, n):
    if s.step == 0:
        raise ShapeError("slice step cannot be zero")
    try:
        start, stop, step = s.indices(n)
    except TypeError:
        raise ArgumentError(f"slice indices must be integers or None or have an __index__ method, not "
                             f"{s!r}") from None
    k = len(range(start, stop, step))
    return ("slice", start if k else 0, step, k)


def _norm_index(a, n, axis, x, check_host_indices=False):
    """An index array for an axis of size n as an int64 Node of non-negative positions (NumPy's
    negative indices counted from the end), or as a checked NumPy array. A lazy index still out of
    range is left for the kernel's check (see the module docstring)."""
    dev = x._node.device
    if isinstance(a, np.ndarray):
        _check_in_bounds(a, n, axis, x)
        return None, np.where(a < 0, a + n, a)
    if n == 0 and a.aval.size == 0:          # nothing is indexed: an empty NumPy index does as well
        return None, np.zeros(a.aval.shape, np.int64)
    if n == 0:
        raise PootIndexError(f"cannot index the empty axis {axis} of {x.aval} with a poot index array")
    if check_host_indices:
        _check_host_index(a, n, axis, x)
    t = a.aval.dtype
    if t.kind == "u":                        # no negative indices to count from the end
        return cast(a, dt.int64), None
    # count negatives from the end in the index's own width (int32 at least) when n fits it, then
    # widen: 32-bit arithmetic is cheaper on GPUs, and on lavapipe (wgpu, vulkan) the int64 form of
    # a negative int32 index (widened, then + n) came out wrong, so x[int32 index] read the wrong element
    t = dt.int32 if t.bits <= 32 and n < 2**31 else dt.int64
    a = cast(a, t)
    neg = record("lt", (a, constant(0, t, dev)))
    return cast(record("select", (neg, record("add", (a, constant(n, t, dev))), a)), dt.int64), None


def _check_host_index(a, n: int, axis: int, x) -> None:
    """Bounds-check now, as NumPy does, an index array whose values already sit in host memory (a
    realized CPU array). `x[i] = v` does: it then raises at the assignment and leaves x as it was,
    instead of making x's new value one that raises at every later read. A gather leaves the check to
    its kernel (no host pass over the indices); so does an assignment through a pending index, or one
    on a GPU (reading it here would wait for the device)."""
    b = a.buf
    if type(b) is not CpuBuffer or a.params is not None or is_tracing():
        return
    _check_in_bounds(buffer_to_numpy(b, a.aval), n, axis, x)


def _check_in_bounds(v: np.ndarray, n: int, axis: int, x) -> None:
    """PootIndexError naming the first index of host array `v` outside [-n, n) (NumPy's rule)."""
    if v.size and (v.min() < -n or v.max() >= n):
        bad = v[(v < -n) | (v >= n)].flat[0]
        raise PootIndexError(f"index {bad} is out of bounds for axis {axis} with size {n} "
                             f"(indexing {x.aval})")


def _region(entries, x):
    """Per-axis (starts, steps, sizes) of the basic part, and the basic result shape."""
    starts, steps, sizes, out_shape = [], [], [], []
    for e in entries:
        if e[0] == "int":
            starts.append(e[1]), steps.append(1), sizes.append(1)
        elif e[0] == "slice":
            starts.append(e[1]), steps.append(e[2]), sizes.append(e[3])
            out_shape.append(e[3])
        elif e[0] == "adv":
            starts.append(0), steps.append(1), sizes.append(x.shape[len(sizes)])
        elif e[0] == "none":
            out_shape.append(1)
    return starts, steps, sizes, tuple(out_shape)


def getitem_node(x: Array, idx, check_host_indices: bool = False):
    """The node of `x[idx]`. `check_host_indices`: bounds-check now an index array already in host
    memory, which a gather leaves to its kernel (see _check_host_index)."""
    split = _split_scalar_bools(x, idx)
    if split is not None:
        return getitem_node(Array(getitem_node(x, split[0], check_host_indices)), split[1], check_host_indices)
    entries = _expand(x, idx)
    has_adv = any(e[0] == "adv" for e in entries)
    if has_adv:
        entries = [("adv", np.array(e[1], np.int64)) if e[0] == "int" else e for e in entries]
    if has_adv:
        starts, steps, sizes, out_shape = _region(entries, x)
        return _advanced(x, slice_node(x._node, starts, steps, sizes), entries, tuple(sizes),
                         check_host_indices)
    # Integer indices become `take`s of a 0-d index leaf rather than slice parameters, so x[0], x[1],
    # ... share one graph structure (one compiled program), e.g. when iterating over rows.
    out_shape = _region(entries, x)[3]
    ints = []
    whole = []
    ax = 0
    for e in entries:
        if e[0] == "int":
            ints.append((ax, e[1]))
            whole.append(("slice", 0, 1, x.shape[ax]))
        else:
            whole.append(e)
        if e[0] in ("int", "slice"):
            ax += 1
    starts, steps, sizes, _ = _region(whole, x)
    n = slice_node(x._node, starts, steps, sizes)
    for ax, i in reversed(ints):
        n = record("take", (n, shared_constant(i, dt.int64, n.device)), {"axis": ax})
    return _reshape_node(n, out_shape)


def _check_index_devices(idx, x):
    """Index arrays must live on the indexed array's device: the gather kernel reads both, and a
    mix would otherwise fail only at realize, naming a buffer rather than the indexing line."""
    dev = x._node.device
    for i in idx:
        d = i._node.device if isinstance(i, Array) else i.device if isinstance(i, Node) else dev
        if d != dev:
            raise DeviceError(f"index: the index array is on '{d}' but the indexed array is on "
                              f"'{dev}'; move one first, e.g. index.to('{dev}')")


def _advanced(x, n, entries, shape, check_host_indices=False):
    adv_axes, idx = [], []
    ax = 0
    for e in entries:
        if e[0] == "adv":
            adv_axes.append(ax)
            idx.append(e[1])
        if e[0] in ("slice", "adv"):
            ax += 1
    shapes = [i.shape if isinstance(i, np.ndarray) else i.aval.shape for i in idx]   # host or Node
    try:
        bshape = broadcast_shapes(*shapes, op="index")
    except ShapeError:
        raise PootIndexError("shape mismatch: indexing arrays could not be broadcast together with "
                             "shapes " + " ".join(str(tuple(s)) for s in shapes)
                             + f" (indexing {x.aval})") from None
    others = [a for a in range(len(shape)) if a not in adv_axes]
    dims = [shape[a] for a in adv_axes]
    z = _transpose_node(n, adv_axes + others)
    rest = tuple(shape[a] for a in others)
    z = _reshape_node(z, (math.prod(dims),) + rest)
    dev = x._node.device
    _check_index_devices(idx, x)
    static = None
    lazy = None
    for j, (a, d) in enumerate(zip(idx, dims)):
        stride = math.prod(dims[j + 1:])
        node, arr_ = _norm_index(a, d, adv_axes[j], x, check_host_indices)
        if node is not None and len(idx) > 1:
            # the gather below checks only the combined position: check this axis's index by itself
            # (a take from an iota is the index, bounds-checked, and costs no memory)
            node = record("take", (record("iota", (), {"shape": (d,), "axis": 0, "dtype": dt.int64}, dev),
                                   node), {"axis": 0})
        if arr_ is not None:
            term = np.broadcast_to(arr_, bshape) * stride
            static = term if static is None else static + term
        else:
            term = record("mul", (node, constant(stride, dt.int64, dev))) if stride != 1 else node
            lazy = term if lazy is None else record("add", (lazy, term))
    lin = None if static is None else from_numpy(np.asarray(static, np.int64), dev)
    if lazy is not None:
        lazy = broadcast_node(lazy, bshape)
        lin = lazy if lin is None else record("add", (lazy, lin))
    r = record("take", (z, lin), {"axis": 0})
    # move the broadcast index dimensions where NumPy puts them, and insert the None axes
    pos = [i for i, e in enumerate(entries) if e[0] == "adv"]
    adjacent = pos == list(range(pos[0], pos[0] + len(pos)))
    labels = [("B", k) for k in range(len(bshape))] + [("S", a) for a in others]
    want = [] if adjacent else [("B", k) for k in range(len(bshape))]
    ax = 0
    for e in entries:
        if e[0] == "slice":
            want.append(("S", ax))
        elif e[0] == "none":
            want.append(("N",))
        elif e[0] == "adv" and adjacent and ax == adv_axes[0]:
            want += [("B", k) for k in range(len(bshape))]
        if e[0] in ("slice", "adv"):
            ax += 1
    order = [labels.index(w) for w in want if w[0] != "N"]
    r = _transpose_node(r, order)
    sizes = list(bshape) + list(rest)
    final = [1 if w[0] == "N" else sizes[labels.index(w)] for w in want]
    return _reshape_node(r, tuple(final))


def _value_node(x: Array, value, op="setitem"):
    """The assigned value as a node of x's dtype (NumPy casts it, as `x[i] = v` does)."""
    d = x.dtype
    if is_weak(value):
        check_scalar_fits(value, d, op)
        return constant(scalar_value(value, d), d, x._node.device)
    items, _, _ = promote(op, (x, value))
    v = items[1]
    if isinstance(v, Node) and v.weak == 1 and v.aval.dtype is not d:   # a jitted function's scalar argument
        note_weak_cast(d, v)
    return cast(v, d)


def _is_plain_mask(idx, x):
    m = idx
    if isinstance(m, Array) and m.dtype is dt.bool_:
        return m.ndim >= 1 and m.shape == x.shape[:m.ndim]
    if isinstance(m, np.ndarray) and m.dtype == np.bool_:
        return m.ndim >= 1 and m.shape == x.shape[:m.ndim]
    return False


def setitem_node(x: Array, idx, value, mode="set"):
    """The node of `x` with `x[idx]` set to (or, mode='add', increased by) `value`."""
    v = _value_node(x, value)
    dev = x._node.device
    b = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if mode == "set" and isinstance(b, Array) and b.ndim == 0 and b.dtype is dt.bool_:
        # x[b] = v with a 0-d boolean array b: x[b] is x under a new axis of length 1 or 0, so where
        # v broadcasts to x[True]'s shape the update is where(b, v, x), whose shape does not depend
        # on b: it stays lazy and traces (array API consumers write it, e.g. array-api-extra's
        # at(x)[b].set(v)). A value fitting x[False] only (a leading axis of 0) takes the general
        # path below, which reads b.
        try:
            vb = _reshape_node(broadcast_node(v, (1,) + x.shape), x.shape)
        except ShapeError:
            vb = None
        if vb is not None:
            return record("select", (broadcast_node(b._node, x.shape), vb, x._node))
    scalar_bools = _split_scalar_bools(x, idx) is not None    # the general case below handles them
    if mode == "set" and not scalar_bools and _is_plain_mask(idx, x):
        m = idx._node if isinstance(idx, Array) else from_numpy(idx, dev)
        rest = x.shape[m.aval.ndim:]
        try:
            vb = broadcast_node(v, rest) if v.aval.shape != rest else v
        except ShapeError:
            vb = None
        if vb is not None:
            m = _reshape_node(m, m.aval.shape + (1,) * len(rest))
            return record("select", (broadcast_node(m, x.shape), broadcast_node(vb, x.shape), x._node))
    entries = None if scalar_bools else _expand(x, idx)
    if mode == "set" and entries is not None and not any(e[0] == "adv" for e in entries):
        starts, steps, sizes, out_shape = _region(entries, x)
        if out_shape == () and v.aval.ndim > 0:          # NumPy 2 refuses x[2] = [7.0], even of size 1
            raise ShapeError(f"setting an array element with a sequence: x[...] = value selects one "
                             f"element of {x.aval}, and the value has shape {v.aval.shape}; assign a "
                             f"scalar (value[0], or value.reshape(()))")
        v = _broadcast_value(v, out_shape, x)
        if math.prod(out_shape) == 0:
            return x._node
        v = _reshape_node(v, tuple(sizes))
        return record("update_slice", (x._node, v), {"starts": tuple(starts), "steps": tuple(steps),
                                                      "sizes": tuple(sizes)})
    # general case: gather the flat positions of the indexed elements, then scatter into flat x
    size = x.size
    pos = Array(_reshape_node(record("iota", (), {"shape": (size,), "axis": 0, "dtype": dt.int64}, dev), x.shape))
    try:
        lin = getitem_node(pos, idx, check_host_indices=True)
    except PootIndexError as e:      # it names the positions' aval: name x's
        raise PootIndexError(str(e).replace(f"(indexing {pos.aval})", f"(indexing {x.aval})")) from None
    v = _broadcast_value(v, lin.aval.shape, x)
    k = lin.aval.size
    if k == 0:
        return x._node
    if mode == "set" and _packs_subword_stores(x.dtype, dev):
        flat = _scatter_by_winner(_reshape_node(x._node, (size,)), _reshape_node(lin, (k,)),
                                  _reshape_node(v, (k,)), dev)
    else:
        flat = record("scatter", (_reshape_node(x._node, (size,)), _reshape_node(lin, (k,)),
                                  _reshape_node(v, (k,))), {"mode": mode})
    return _reshape_node(flat, x.shape)


# element types a SPIR-V device stores as fields of 32-bit words (poot/jit/llvm/targets/spirv/lowering.py
# PACKED): two threads writing one element (a scatter's repeated index) leave one of their values, but
# not in the order a CPU scatter's writes land, so such a scatter picks its winner first
_SUBWORD = frozenset({dt.bool_, dt.int8, dt.uint8, dt.int16, dt.uint16, dt.bfloat16})


def _packs_subword_stores(d, dev: str) -> bool:
    if d not in _SUBWORD or dev == "cpu":
        return False
    from poot.jit.llvm.targets import target_of
    from poot.trace.context import backend

    try:
        caps = backend(dev).caps
    except Exception:          # an unknown or unavailable device (or the oracle): it fails later, where used
        return False
    return target_of(caps).packs_narrow


def _scatter_by_winner(flat, lin, v, dev):
    """`flat` with flat[lin[i]] = v[i], no element written twice: a scatter of the update positions
    into a 32-bit array picks one update per target (the last, where the device orders a scatter's
    writes as the CPU does), then every element gathers its winner's value or keeps its own. Only
    whole-word stores race, as a float32 scatter's do."""
    size, k = flat.aval.shape[0], lin.aval.shape[0]
    it = dt.int32 if k < 2**31 else dt.int64
    none = broadcast_node(constant(-1, it, dev), (size,))
    order = record("iota", (), {"shape": (k,), "axis": 0, "dtype": it}, dev)
    winner = record("scatter", (none, lin, order), {"mode": "set"})
    hit = record("ge", (winner, constant(0, it, dev)))
    safe = record("select", (hit, winner, constant(0, it, dev)))
    got = record("take", (v, cast(safe, dt.int64)), {"axis": 0})
    return record("select", (hit, got, flat))


def _broadcast_value(v, shape, x):
    """v broadcast to the indexed shape; leading size-1 axes beyond its rank are dropped first, as
    NumPy's assignment does (`x[1:3] = [[9., 8.]]` into a 1-d x)."""
    extra = 0
    while v.aval.ndim - extra > len(shape) and v.aval.shape[extra] == 1:
        extra += 1
    if extra:
        v = _reshape_node(v, v.aval.shape[extra:])
    try:
        return broadcast_node(v, shape)
    except ShapeError:
        raise ShapeError(f"setitem: could not broadcast a value of shape {v.aval.shape} into the "
                         f"indexed shape {shape} of {x.aval}") from None


_TAKE_MODES = ("raise", "clip", "wrap")


@api_boundary
def take(x, indices, axis=None, mode="raise"):
    """Elements of `x` at `indices` along `axis` (of the flattened array when None). `mode`, as in
    NumPy: "raise" (an out-of-range index raises PootIndexError; for indices held in a poot array,
    at the next host read), "clip" (indices clipped into [0, n-1]: negative ones become 0) or "wrap"
    (indices taken modulo n)."""
    if not isinstance(mode, str) or mode not in _TAKE_MODES:
        raise ShapeError(f"take: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    x = arr(x)
    if axis is None:
        x, axis = Array(_reshape_node(x._node, (x.size,))), 0
    ax = axis_of(axis, x.ndim, "take", x)
    if isinstance(indices, Array):
        if indices.dtype.kind not in "iu":
            raise PootIndexError(f"take: indices must be integers, got {indices.aval}")
    else:
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            if indices.size or indices.dtype.kind != "f":
                raise PootIndexError(f"take: indices must be integers, got {indices.dtype}")
            indices = indices.astype(np.int64)
    if mode != "raise":
        indices = _clip_or_wrap(indices, x.shape[ax], mode, x)
    return wrap(getitem_node(x, (slice(None),) * ax + (indices,)))


def _clip_or_wrap(indices, n, mode, x):
    """`indices` for an axis of size n, clipped into [0, n-1] or wrapped modulo n (NumPy's take)."""
    size = indices.size if isinstance(indices, np.ndarray) else indices.aval.size
    if n == 0:
        if size:
            raise PootIndexError(f"take: cannot take {size} elements from an empty axis of {x.aval} "
                                 f"(mode={mode!r})")
        return indices
    if isinstance(indices, np.ndarray):
        a = indices.astype(np.int64)
        return np.clip(a, 0, n - 1) if mode == "clip" else np.mod(a, n)
    dev = indices._node.device
    a = cast(indices._node, dt.int64)
    if mode == "clip":
        a = record("min", (record("max", (a, constant(0, dt.int64, dev))), constant(n - 1, dt.int64, dev)))
    else:
        a = record("mod", (a, constant(n, dt.int64, dev)))
    return Array(a)


@api_boundary
def take_along_axis(x, indices, axis=-1):
    """`x` gathered along `axis` at `indices` (of x's rank), as np.take_along_axis. axis=None gathers
    from the flattened `x`, and `indices` must then be 1-D (NumPy's rule)."""
    x = arr(x)
    if axis is None:
        shape = indices.shape if isinstance(indices, Array) else np.shape(indices)
        if len(shape) != 1:
            raise ShapeError(f"take_along_axis: when axis=None, indices must have a single dimension, "
                             f"got shape {tuple(shape)}")
        x, axis = wrap(_reshape_node(x._node, (x.size,))), 0
    ax = axis_of(axis, x.ndim, "take_along_axis", x)
    return wrap(getitem_node(x, along_axis_index(x, ax, indices, "take_along_axis")))


def along_axis_index(x: Array, ax: int, indices, what: str) -> tuple:
    """The index of `x` that picks `indices` (of x's rank) along axis `ax` and every position along
    the others, as np.take_along_axis and np.put_along_axis use it."""
    ind = indices if isinstance(indices, Array) else np.asarray(indices)
    if len(ind.shape) != x.ndim:
        raise ShapeError(f"{what}: indices {tuple(ind.shape)} need the rank of {x.aval}")
    grid = []
    for i in range(x.ndim):
        if i == ax:
            grid.append(ind)
        else:
            shape = [1] * x.ndim
            shape[i] = x.shape[i]
            grid.append(np.arange(x.shape[i]).reshape(shape))
    return tuple(grid)


@api_boundary
def nonzero(x, /, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one int64 array per axis. With size=n each has n entries
    (as JAX's nonzero(size=)): fewer nonzeros are padded with fill_value (default 0; an int, or a tuple
    with one per axis), more are truncated; lazy (a host op), works inside @pt.jit. Without size the
    length depends on the values: realizes `x` (inside @pt.jit: TracerError)."""
    x = arr(x)
    if x.ndim == 0:
        raise ShapeError(f"nonzero: a 0-d array has no axes to index ({x.aval}); use "
                         f"nonzero(atleast_1d(x)) or bool(x)")
    if size is not None:
        size = int(size)
        if size < 0:
            raise ShapeError(f"nonzero: size must be non-negative, got {size}")
        fill = 0 if fill_value is None else fill_value
        fill = tuple(int(f) for f in fill) if isinstance(fill, (tuple, list)) else int(fill)
        if isinstance(fill, tuple) and len(fill) != x.ndim:
            raise ShapeError(f"nonzero: fill_value has {len(fill)} entries; give one per axis of {x.aval}")
        params = {"size": size, "fill_value": fill}
        return tuple(Array(record("nonzero", (x._node,), {**params, "index": k})) for k in range(x.ndim))
    refuse_data_dependent("nonzero(x)", "its length is the number of nonzero elements",
                          "use pt.where(x != 0, ...) to keep the shape, or nonzero(x, size=n, "
                          "fill_value=...) for n positions")
    return tuple(Array(from_numpy(p.astype(np.int64), x.device)) for p in np.nonzero(x.numpy()))
