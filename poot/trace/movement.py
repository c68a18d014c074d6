"""Movement: reshaping, transposing, broadcasting, joining and splitting, as `reshape`, `transpose`,
`broadcast`, `slice`, `concatenate` and `pad` equations (no data-dependent shapes)."""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, AxisError, DTypeError, ShapeError, ShapeTypeError, TracerError, api_boundary
from poot.graph import broadcast_shapes, normalize_axes, normalize_axis
from poot.trace.array import Array
from poot.trace.creation import normalize_shape
from poot.trace.fastpath import host_join
from poot.trace.lazy import constant, is_tracing, record, scalar_value
from poot.trace.numpy_keywords import memory_order, refuse_out
from poot.trace.promote import cast, device_of, promote, wrap

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
           "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "flip", "roll", "concatenate", "concat", "stack", "vstack", "hstack", "split", "array_split",
           "pad", "tile", "repeat", "atleast_1d", "atleast_2d"]


def arr(x, op="array", peers=()) -> Array:
    """`x` as an Array. A NumPy array, list or scalar goes onto the device of the poot Arrays among
    `peers` (the call's other operands), as arithmetic's promote does: `concatenate([a, np.zeros(2)])`
    with `a` on vulkan must not build the NumPy piece on the default device and then refuse the mix."""
    if isinstance(x, Array):
        return x
    from poot.trace.creation import asarray

    return asarray(x, device=peer_device(op, peers))


def peer_device(op: str, xs) -> str | None:
    """The device shared by the poot Arrays among `xs`, for converting the NumPy operands beside them;
    None (the default device) when there are none. Arrays on different devices raise device_of's
    DeviceError naming `op`: which one to move is the caller's choice."""
    if not any(isinstance(x, Array) for x in xs):
        return None
    return device_of(op, xs)


def _axis_hint(ndim):
    return f"pass an axis in [{-ndim}, {ndim - 1}]" if ndim else "a 0-d array has no axes: use axis=None"


def axis_of(axis, ndim: int, op: str, x) -> int:
    if ndim == 0 and hasattr(axis, "__index__"):     # a non-integer axis is a TypeError at any ndim
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of dimension 0 ({x.aval}); "
                        f"{_axis_hint(0)}")
    try:
        return normalize_axis(axis, ndim, op)
    except AxisError as e:          # the same class (AxisTypeError stays a TypeError), with the hint
        raise type(e)(f"{e} ({x.aval}); {_axis_hint(ndim)}") from None


def axes_of(axis, ndim: int, op: str, x) -> tuple[int, ...]:
    try:
        return normalize_axes(axis, ndim, op)
    except AxisError as e:          # the same class (AxisTypeError stays a TypeError), with the hint
        raise type(e)(f"{e} ({x.aval}); {_axis_hint(ndim)}") from None


def _reshape_node(n, shape):
    return n if tuple(shape) == n.aval.shape else record("reshape", (n,), {"shape": tuple(shape)})


def _new_shape(x, shape) -> tuple[int, ...]:
    """`shape` for a reshape of `x`, as a tuple of sizes with its one -1 (if any) inferred."""
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise ShapeTypeError(f"reshape: a shape is a tuple of ints, got {shape!r}") from None
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise ShapeError(f"reshape: {shape} may hold a single -1 and no other negative size")
    if -1 in shape:
        rest = math.prod(s for s in shape if s != -1)
        if rest == 0 or x.size % rest:
            raise ShapeError(f"reshape: cannot reshape {x.aval} ({x.size} elements) into {shape}: "
                             f"the known sizes multiply to {rest}, which does not divide {x.size}")
        shape = tuple(x.size // rest if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x.aval} ({x.size} elements) into {shape} "
                         f"({math.prod(shape)} elements); the new shape must keep {x.size} elements "
                         f"(use -1 for one inferred dimension)")
    return shape


def _fortran_reshape_node(n, shape):
    """NumPy's order='F' reshape: elements read and written with the first index changing fastest,
    which is the C-order reshape of the reversed axes into the reversed shape, reversed back."""
    rev = tuple(range(n.aval.ndim))[::-1]
    flipped = _reshape_node(_transpose_node(n, rev), tuple(shape)[::-1])
    return _transpose_node(flipped, tuple(range(len(shape)))[::-1])


def _reshape_in_order(x, shape, order, op: str):
    """The reshape node for NumPy's `order` ('A' is 'C' here: every poot array is C-contiguous)."""
    shape = _new_shape(x, shape)
    if memory_order(op, order) == "F":
        return _fortran_reshape_node(x._node, shape)
    return _reshape_node(x._node, shape)


@api_boundary
def reshape(x, shape, order="C", *, copy=None):
    """`x` with a new shape of the same size; one dimension may be -1 (inferred). order='F' reads and
    places the elements with the first index changing fastest, as NumPy's; 'A' is 'C' (poot arrays are
    C-contiguous); 'K', as in NumPy, is refused."""
    x = arr(x)
    if memory_order("reshape", order) == "K":
        raise ShapeError(f"reshape: order={order!r} is not permitted for reshaping (give 'C', 'F' or 'A')")
    return wrap(_reshape_in_order(x, shape, order, "reshape"))


@api_boundary
def ravel(x, order="C"):
    """`x` as 1-D: in C order, or with the first index changing fastest for order='F' ('A' and 'K'
    are 'C': poot arrays are C-contiguous). Also `x.flatten(order)`."""
    x = arr(x)
    return wrap(_reshape_in_order(x, (x.size,), order, "ravel"))


def _transpose_node(n, perm):
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return n
    return record("transpose", (n,), {"perm": perm})


@api_boundary
def transpose(x, axes=None):
    """Permute the axes (reverse them when `axes` is None)."""
    x = arr(x)
    if axes is None:
        perm = tuple(range(x.ndim))[::-1]
    else:
        perm = tuple(axis_of(a, x.ndim, "transpose", x) for a in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise AxisError(f"transpose: axes {tuple(axes)} are not a permutation of the {x.ndim} axes "
                            f"of {x.aval}")
    return wrap(_transpose_node(x._node, perm))


@api_boundary
def permute_dims(x, axes):
    return transpose(x, axes)


@api_boundary
def matrix_transpose(x):
    """Swap the last two axes (`x.mT`)."""
    x = arr(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs 2 or more dimensions, got {x.aval}")
    return swapaxes(x, -1, -2)


@api_boundary
def swapaxes(x, axis1, axis2):
    x = arr(x)
    a, b = axis_of(axis1, x.ndim, "swapaxes", x), axis_of(axis2, x.ndim, "swapaxes", x)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return wrap(_transpose_node(x._node, perm))


@api_boundary
def moveaxis(x, source, destination):
    x = arr(x)
    src = (source,) if not isinstance(source, (tuple, list)) else tuple(source)
    dst = (destination,) if not isinstance(destination, (tuple, list)) else tuple(destination)
    if len(src) != len(dst):
        raise AxisError(f"moveaxis: source {src} and destination {dst} differ in length")
    src = [axis_of(a, x.ndim, "moveaxis", x) for a in src]
    dst = [axis_of(a, x.ndim, "moveaxis", x) for a in dst]
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return wrap(_transpose_node(x._node, order))


@api_boundary
def expand_dims(x, axis=0):
    """Insert size-1 axes at `axis` (an int or a tuple, positions in the result; 0 by default, as
    in the array API standard)."""
    x = arr(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    pos = axes_of(tuple(axes), nd, "expand_dims", x)
    it = iter(x.shape)
    shape = tuple(1 if i in pos else next(it) for i in range(nd))
    return wrap(_reshape_node(x._node, shape))


@api_boundary
def squeeze(x, axis=None):
    """Remove size-1 axes (all of them, or those in `axis`, which must have size 1)."""
    x = arr(x)
    if axis is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        axes = axes_of(axis, x.ndim, "squeeze", x)
        bad = [a for a in axes if x.shape[a] != 1]
        if bad:
            raise ShapeError(f"squeeze: cannot remove axis {bad[0]} of {x.aval}: its size is "
                             f"{x.shape[bad[0]]}, not 1")
    return wrap(_reshape_node(x._node, tuple(s for i, s in enumerate(x.shape) if i not in axes)))


def broadcast_node(n, shape):
    shape = tuple(shape)
    if n.aval.shape == shape:
        return n
    try:
        out = broadcast_shapes(n.aval.shape, shape, op="broadcast_to")
    except ShapeError:
        out = None
    if out != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast {n.aval} to shape {shape}; each dimension "
                         f"must equal the target's or be 1, counting from the right")
    return record("broadcast", (n,), {"shape": shape})


@api_boundary
def broadcast_to(x, shape):
    x = arr(x)
    return wrap(broadcast_node(x._node, normalize_shape(shape, "broadcast_to")))


@api_boundary
def broadcast_arrays(*arrays):
    xs = _arrays(arrays, "broadcast_arrays")
    device_of("broadcast_arrays", xs)
    try:
        shape = broadcast_shapes(*(a.shape for a in xs), op="broadcast_arrays")
    except ShapeError as e:
        raise ShapeError(f"{e}; operands are " + ", ".join(str(a.aval) for a in xs)) from None
    return [wrap(broadcast_node(a._node, shape)) for a in xs]


def slice_node(n, starts, steps, sizes):
    # plain ints: a NumPy integer (np.trace(x, offset=np.int64(1)), Dask's offsets) has no place in
    # a slice's params, which the planner's index algebra takes apart
    starts, steps, sizes = (tuple(int(v) for v in vs) for vs in (starts, steps, sizes))
    if tuple(starts) == (0,) * len(starts) and tuple(steps) == (1,) * len(steps) \
            and tuple(sizes) == n.aval.shape:
        return n
    return record("slice", (n,), {"starts": tuple(starts), "steps": tuple(steps), "sizes": tuple(sizes)})


def _slice_axis(n, axis, start, stop, step=1):
    shape = n.aval.shape
    starts, steps, sizes = [0] * len(shape), [1] * len(shape), list(shape)
    k = len(range(start, stop, step))
    starts[axis], steps[axis], sizes[axis] = (start if k else 0), step, k
    return slice_node(n, starts, steps, sizes)


@api_boundary
def flip(x, axis=None):
    """Reverse the order of elements along `axis` (all axes when None)."""
    x = arr(x)
    axes = axes_of(axis, x.ndim, "flip", x)
    starts = [s - 1 if i in axes and s > 0 else 0 for i, s in enumerate(x.shape)]
    steps = [-1 if i in axes else 1 for i in range(x.ndim)]
    return wrap(slice_node(x._node, starts, steps, x.shape))


@api_boundary
def roll(x, shift, axis=None):
    """Shift elements along `axis` cyclically (over the flattened array when axis is None)."""
    x = arr(x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: shift {shift} and axis {axis} must have the same length")
    n = x._node
    for s, a in zip(shifts, axes):
        a = axis_of(a, x.ndim, "roll", x)
        size = x.shape[a]
        if isinstance(s, Array) and is_tracing() and size:
            n = _roll_by_traced(n, s, a, size)
            continue
        s = operator.index(s) % size if size else 0
        if s:
            n = record("concatenate", (_slice_axis(n, a, size - s, size), _slice_axis(n, a, 0, size - s)),
                       {"axis": a})
    return wrap(n)


def _roll_by_traced(n, shift: Array, axis: int, size: int):
    """`n` rolled along `axis` by a shift known only when the traced function runs (JAX's jnp.roll
    takes one): a gather of positions (i - shift) mod size, one program for every shift."""
    if shift.ndim != 0 or shift.dtype.kind not in "iu":
        raise DTypeError(f"roll: a traced shift must be a 0-d integer, got {shift.aval}")
    i = record("iota", (), {"shape": (size,), "axis": 0, "dtype": dt.int64}, n.device)
    s = record("mod", (cast(shift._node, dt.int64), constant(size, dt.int64, n.device)))
    src = record("mod", (record("add", (i, record("sub", (constant(size, dt.int64, n.device), s)))),
                         constant(size, dt.int64, n.device)))
    return record("take", (n, src), {"axis": axis})


def _arrays(xs, op="array") -> list:
    """Each of `xs` as an Array (a join's list of pieces, often long: no call for an Array); NumPy
    pieces go onto the device of the poot pieces among them (peer_device)."""
    xs = list(xs)
    if all(type(x) is Array for x in xs):
        return xs
    from poot.trace.creation import asarray

    dev = peer_device(op, xs)
    return [x if isinstance(x, Array) else asarray(x, device=dev) for x in xs]


def _join(op, xs, axis):
    items, d, dev = promote(op, xs)
    nodes = [n if n.aval.dtype is d else cast(n, d) for n in items]
    return wrap(_join_nodes(op, nodes, axis_of(axis, nodes[0].aval.ndim, op, Array(nodes[0]))))


def _join_nodes(op, nodes, ax):
    """The concatenation of `nodes` (one dtype) along axis `ax`: on the host at once where all are
    small realized CPU leaves (fastpath.host_join), else one recorded equation."""
    s0 = nodes[0].aval.shape
    before, after = s0[:ax], s0[ax + 1:]
    for n in nodes[1:]:
        s = n.aval.shape
        if len(s) != len(s0) or s[:ax] != before or s[ax + 1:] != after:   # sizes off axis ax differ
            raise ShapeError(f"{op}: shapes differ outside axis {ax}: "
                             + ", ".join(str(m.aval) for m in nodes)
                             + f"; every input needs the same size on all axes but {ax}")
    if len(nodes) == 1:
        return nodes[0]
    return host_join(nodes, ax, False) or record("concatenate", tuple(nodes), {"axis": ax})


@api_boundary
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (flattened first when axis is None)."""
    refuse_out("concatenate", out, lambda: concatenate(arrays, axis, dtype=dtype, casting=casting))
    xs = _arrays(arrays, "concatenate")
    if not xs:
        raise ShapeError("concatenate: needs at least one array")
    if axis is None:
        xs = [reshape(a, (-1,)) for a in xs]
        axis = 0
    if any(a.ndim == 0 for a in xs):
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated; "
                         "use stack, or reshape them to (1,)")
    out = _join("concatenate", xs, axis)
    return out if dtype is None else wrap(cast(out._node, _cast_target("concatenate", out, dtype, casting)))


concat = concatenate


def _cast_target(op: str, x, dtype, casting: str) -> dt.DType:
    """The dtype= of a join, which NumPy allows only where `casting` allows x's dtype to become it."""
    d = dt.as_dtype(dtype)
    if casting not in dt.CASTINGS:
        raise ArgumentError(f"{op}: casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', "
                            f"got {casting!r}")
    if not np.can_cast(x.dtype.np, d.np, casting=casting):
        raise DTypeError(f"{op}: cannot cast {x.dtype.name} to dtype={d.name} under casting={casting!r} "
                         f"(pass casting='unsafe' to allow it)")
    return d


@api_boundary
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays of one shape along a new axis."""
    refuse_out("stack", out, lambda: stack(arrays, axis, dtype=dtype, casting=casting))
    xs = _arrays(arrays, "stack")
    xs = xs if dtype is None else [a.astype(_cast_target("stack", a, dtype, casting)) for a in xs]
    if not xs:
        raise ShapeError("stack: needs at least one array")
    shape = xs[0].shape
    for a in xs:
        if a._node.aval.shape != shape:
            raise ShapeError("stack: all input arrays must have the same shape, got "
                             + ", ".join(str(a.aval) for a in xs))
    ax = axis_of(axis, xs[0].ndim + 1, "stack", xs[0])
    items, d, _ = promote("stack", xs)
    nodes = [n if n.aval.dtype is d else cast(n, d) for n in items]
    joined = host_join(nodes, ax, True) if len(nodes) > 1 else None
    if joined is not None:
        return wrap(joined)
    shape = xs[0].shape[:ax] + (1,) + xs[0].shape[ax:]
    return wrap(_join_nodes("stack", [_reshape_node(n, shape) for n in nodes], ax))


def _at_least(arys, ndim: int, op: str):
    """np.atleast_{1,2}d: each array with leading unit axes up to `ndim`; several arrays give a tuple
    (NumPy's variadic form), one gives the array."""
    if not arys:
        raise ShapeError(f"{op}: needs at least one array")
    out = []
    for x in _arrays(arys, op):
        out.append(x if x.ndim >= ndim else reshape(x, (1,) * (ndim - x.ndim) + x.shape))
    return out[0] if len(out) == 1 else tuple(out)


@api_boundary
def atleast_1d(*arys):
    return _at_least(arys, 1, "atleast_1d")


@api_boundary
def atleast_2d(*arys):
    return _at_least(arys, 2, "atleast_2d")


@api_boundary
def vstack(arrays, *, dtype=None, casting="same_kind"):
    return concatenate([atleast_2d(a) for a in _arrays(arrays, "vstack")], axis=0, dtype=dtype, casting=casting)


@api_boundary
def hstack(arrays, *, dtype=None, casting="same_kind"):
    xs = [atleast_1d(a) for a in _arrays(arrays, "hstack")]
    return concatenate(xs, axis=0 if xs and xs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def _split_points(ios, op):
    """A poot array of split points (or a section count) as NumPy data. The pieces' shapes come
    from its values, so they are read on the host as NumPy does (`np.split(v, np.flatnonzero(
    np.diff(g)) + 1)`); a value traced inside @pt.jit has none to read, so it is refused by name."""
    if ios.dtype.kind not in "iu":
        raise DTypeError(f"{op}: split points must be integers, got {ios.aval}")
    if ios.ndim > 1:
        raise ShapeError(f"{op}: split points must be a 1-D array of indices (or one section count), "
                         f"got {ios.aval}")
    try:
        return ios.numpy()
    except TracerError:
        raise TracerError(f"{op}: split points must be concrete: the pieces' shapes depend on them, and "
                          f"this {ios.aval} array is traced inside @pt.jit; pass them as a list or NumPy "
                          f"array, or mark the argument static (pt.jit(f, static_argnums=...))") from None


def _split(x, indices_or_sections, axis, op, even):
    x = arr(x)
    ax = axis_of(axis, x.ndim, op, x)
    n = x.shape[ax]
    if isinstance(indices_or_sections, Array):
        indices_or_sections = _split_points(indices_or_sections, op)
        if indices_or_sections.ndim == 0:
            indices_or_sections = int(indices_or_sections)
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)):
        cuts = [operator.index(i) for i in indices_or_sections]
        bounds = [0] + [min(max(c + n if c < 0 else c, 0), n) for c in cuts] + [n]
    else:
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ShapeError(f"{op}: the number of sections must be positive, got {k}")
        if even and n % k:
            raise ShapeError(f"{op}: an axis of size {n} ({x.aval}, axis {ax}) does not split into "
                             f"{k} equal sections; use array_split for unequal parts")
        base, extra = divmod(n, k)
        sizes = [base + 1] * extra + [base] * (k - extra)
        bounds = [0] + list(np.cumsum(sizes))
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        hi = max(hi, lo)
        out.append(wrap(_slice_axis(x._node, ax, int(lo), int(hi))))
    return out


@api_boundary
def split(x, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices (a list)."""
    return _split(x, indices_or_sections, axis, "split", True)


@api_boundary
def array_split(x, indices_or_sections, axis=0):
    return _split(x, indices_or_sections, axis, "array_split", False)


@api_boundary
def pad(x, pad_width, mode="constant", constant_values=None, **kwargs):
    """Pad with a constant (mode='constant'), or with mode 'edge', 'reflect', 'symmetric', 'wrap'
    (gathers at indices NumPy's np.pad computes for each axis; lazy). As in NumPy, a keyword the
    mode does not take (constant_values with mode='edge', reflect_type with 'constant') raises
    rather than being ignored."""
    x = arr(x)
    if mode != "constant":
        from poot.trace.padding import pad_gather

        if constant_values is not None:
            kwargs["constant_values"] = constant_values
        return pad_gather(x, pad_width, mode, **kwargs)
    from poot.trace.padding import pad_constant_pairs, pad_widths

    if kwargs:
        raise ShapeError(f"pad: mode='constant' takes no arguments {sorted(kwargs)} (only "
                         f"constant_values)")
    constant_values = 0 if constant_values is None else constant_values

    widths = tuple(pad_widths(x, pad_width))
    if not widths:
        return x
    if isinstance(constant_values, Array) and constant_values.ndim == 0 and is_tracing():
        # a traced fill value stays lazy (cast to x's dtype, unchecked): zero padding, then the
        # value where padded; outside a trace the value is read and checked as a number
        padded = record("pad", (x._node,), {"widths": widths, "value": scalar_value(0, x.dtype)})
        inside = record("broadcast", (constant(True, dt.bool_, x._node.device),), {"shape": x.shape})
        inside = record("pad", (inside,), {"widths": widths, "value": False})
        return wrap(record("select", (inside, padded, cast(constant_values._node, x.dtype))))
    if isinstance(constant_values, Array):
        constant_values = constant_values.numpy()
    if np.ndim(constant_values) != 0:     # a value per axis and side
        return pad_constant_pairs(x, widths, constant_values)
    value = scalar_value(constant_values, x.dtype)
    return wrap(record("pad", (x._node,), {"widths": widths, "value": value}))


@api_boundary
def tile(x, reps):
    """Repeat the whole array `reps` times along each axis."""
    x = arr(x)
    if isinstance(reps, Array) and reps.ndim == 1:
        reps = list(reps)
    reps = normalize_shape(reps, "tile", "repetition count")   # a traced count: TracerError (the shape needs it)
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    inter = []
    target = []
    for r, s in zip(reps, shape):
        inter += [1, s]
        target += [r, s]
    n = _reshape_node(x._node, inter)
    n = record("broadcast", (n,), {"shape": tuple(target)}) if tuple(target) != tuple(inter) else n
    return wrap(_reshape_node(n, tuple(r * s for r, s in zip(reps, shape))))


@api_boundary
def repeat(x, repeats, axis=None):
    """Repeat each element `repeats` times along `axis` (flattened when None). Per-element repeat
    counts must be known now: a poot array of counts is realized (the result's shape depends on it)."""
    x = arr(x)
    if axis is None or x.ndim == 0:  # NumPy repeats a 0-d array as a 1-d one
        x, axis = reshape(x, (-1,)), 0 if axis is None else axis
    ax = axis_of(axis, x.ndim, "repeat", x)
    if isinstance(repeats, Array):
        from poot.trace.indexing import refuse_data_dependent

        refuse_data_dependent("repeat(x, repeats) with an array of counts", "its length is the sum of "
                              "the counts", "give the counts as a Python int, a list or a NumPy array "
                              "(or a static argument: pt.jit(f, static_argnums=...))")
        repeats = repeats.numpy()
    reps = np.asarray(repeats)
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(()))
        if r < 0:
            raise ShapeError(f"repeat: repeats must be non-negative, got {r}")
        shape = x.shape
        n = _reshape_node(x._node, shape[:ax + 1] + (1,) + shape[ax + 1:])
        n = record("broadcast", (n,), {"shape": shape[:ax + 1] + (r,) + shape[ax + 1:]})
        return wrap(_reshape_node(n, shape[:ax] + (shape[ax] * r,) + shape[ax + 1:]))
    if reps.shape != (x.shape[ax],):
        raise ShapeError(f"repeat: repeats of shape {reps.shape} do not match axis {ax} of {x.aval} "
                         f"(give one non-negative count per element)")
    if (reps < 0).any():
        raise ShapeError(f"repeat: repeats must be non-negative, got {int(reps.min())} "
                         f"(at position {int(np.argmin(reps))})")
    from poot.trace.indexing import take

    return take(x, np.repeat(np.arange(x.shape[ax]), reps), axis=ax)
