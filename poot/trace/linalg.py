"""Linear algebra as compositions of `matmul` with reshape/transpose/broadcast: matmul (batched, with
NumPy's 1-D rules), dot, vdot, inner, outer, tensordot, vecdot, einsum, diagonal and trace."""
from __future__ import annotations

import math
import operator

from poot import dtypes as dt
from poot.errors import ArgumentError, ShapeError, api_boundary
from poot.graph import broadcast_shapes
from poot.trace.complex_values import conj_node
from poot.trace.lazy import constant, record
from poot.trace.numpy_keywords import any_memory_order, refuse_out
from poot.trace.movement import _reshape_node, _transpose_node, arr, axis_of, broadcast_node, slice_node
from poot.trace.promote import cast, finish, promote, wrap

# `trace` is not exported at the top level: `poot.trace` is the package (use x.trace() or np.trace(x))
__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "vecdot", "einsum", "diagonal"]


def _operands(op, *xs):
    """Array operands of one dtype, and the dtype the contraction computes in (bool -> int64)."""
    for x in xs:
        if isinstance(x, (bool, int, float)) and op != "dot":
            raise ShapeError(f"{op}: scalar operands are not allowed; use * to scale an array")
    if op == "dot":     # NumPy's dot makes an array of a Python scalar first: int64, float64, no weak typing
        xs = tuple(arr(x, "dot", xs) if type(x) in (bool, int, float, complex) else x for x in xs)
    items, d, dev = promote(op, xs)
    work = dt.int64 if d.kind == "b" else d
    return finish(op, items, work, dev), d, work


def _result(n, d, work):
    if d is not work:  # bool contraction: any product true
        return record("ne", (n, constant(0, work, n.device)))
    return n


def _matmul_nodes(op, a, b):
    sa, sb = a.aval.shape, b.aval.shape
    if not sa or not sb:
        raise ShapeError(f"{op}: operands need at least 1 dimension, got {a.aval} and {b.aval}; "
                         f"use * to multiply by a scalar")
    a2 = _reshape_node(a, (1,) + sa) if len(sa) == 1 else a
    b2 = _reshape_node(b, sb + (1,)) if len(sb) == 1 else b
    ka, kb = a2.aval.shape[-1], b2.aval.shape[-2]
    if ka != kb:
        raise ShapeError(f"{op}: inner dimensions differ: {a.aval} @ {b.aval} ({ka} != {kb}); the last "
                         f"axis of the first operand must match the {'only' if len(sb) == 1 else 'second-to-last'}"
                         f" axis of the second (transpose one, e.g. b.T, or fix the shapes)")
    try:
        broadcast_shapes(a2.aval.shape[:-2], b2.aval.shape[:-2], op=op)
    except ShapeError:
        raise ShapeError(f"{op}: batch dimensions {a.aval.shape[:-2]} and {b.aval.shape[:-2]} of "
                         f"{a.aval} @ {b.aval} cannot be broadcast together") from None
    r = record("matmul", (a2, b2))
    shape = r.aval.shape
    if len(sb) == 1:
        shape = shape[:-1]
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:] if len(sb) != 1 else shape[:-1]
    return _reshape_node(r, shape)


@api_boundary
def matmul(x1, x2, /, out=None):
    """Matrix product with batch broadcasting; a 1-D operand is a vector (NumPy's rules)."""
    refuse_out("matmul", out, lambda: matmul(x1, x2))
    (a, b), d, work = _operands("matmul", x1, x2)
    return wrap(_result(_matmul_nodes("matmul", a, b), d, work))


def _tensordot_nodes(op, a, b, axes_a, axes_b):
    sa, sb = a.aval.shape, b.aval.shape
    xa, xb = wrap(a), wrap(b)
    axes_a = [axis_of(i, len(sa), op, xa) for i in axes_a]
    axes_b = [axis_of(i, len(sb), op, xb) for i in axes_b]
    if len(axes_a) != len(axes_b):
        raise ShapeError(f"{op}: {len(axes_a)} axes of {a.aval} cannot pair with {len(axes_b)} of {b.aval}")
    for i, j in zip(axes_a, axes_b):
        if sa[i] != sb[j]:
            raise ShapeError(f"{op}: shape mismatch for the sum: axis {i} of {a.aval} has size {sa[i]}, "
                             f"axis {j} of {b.aval} has size {sb[j]}; the summed axes must match")
    free_a = [i for i in range(len(sa)) if i not in axes_a]
    free_b = [j for j in range(len(sb)) if j not in axes_b]
    k = math.prod(sa[i] for i in axes_a)
    fa = math.prod(sa[i] for i in free_a)
    fb = math.prod(sb[j] for j in free_b)
    a2 = _reshape_node(_transpose_node(a, free_a + axes_a), (fa, k))
    b2 = _reshape_node(_transpose_node(b, axes_b + free_b), (k, fb))
    r = record("matmul", (a2, b2))
    return _reshape_node(r, tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b))


@api_boundary
def tensordot(a, b, axes=2):
    """Sum products over the given axes: an int k (a's last k with b's first k) or two sequences."""
    (x, y), d, work = _operands("tensordot", a, b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(x.aval.ndim, y.aval.ndim):
            raise ShapeError(f"tensordot: axes={axes} does not fit {x.aval} and {y.aval}")
        aa = list(range(x.aval.ndim - axes, x.aval.ndim))
        bb = list(range(axes))
    else:
        aa, bb = axes
        aa = [aa] if isinstance(aa, int) else list(aa)
        bb = [bb] if isinstance(bb, int) else list(bb)
    return wrap(_result(_tensordot_nodes("tensordot", x, y, aa, bb), d, work))


@api_boundary
def dot(a, b, out=None):
    """NumPy's dot: scalar product for 0-d, inner product of vectors, matrix product, and for N-d the
    sum over a's last axis and b's second-to-last."""
    refuse_out("dot", out, lambda: dot(a, b))
    (x, y), d, work = _operands("dot", a, b)
    if x.aval.ndim == 0 or y.aval.ndim == 0:
        return wrap(_result(record("mul", (x, y)), d, work))
    if y.aval.ndim == 1 and x.aval.shape[-1] != y.aval.shape[0] or \
            y.aval.ndim > 1 and x.aval.shape[-1] != y.aval.shape[-2]:
        raise ShapeError(f"dot: shapes {x.aval} and {y.aval} are not aligned: the last axis of the "
                         f"first ({x.aval.shape[-1]}) must match the "
                         f"{'only' if y.aval.ndim == 1 else 'second-to-last'} axis of the second")
    if x.aval.ndim <= 2 and y.aval.ndim <= 2:
        return wrap(_result(_matmul_nodes("dot", x, y), d, work))
    bb = [0] if y.aval.ndim == 1 else [y.aval.ndim - 2]
    return wrap(_result(_tensordot_nodes("dot", x, y, [x.aval.ndim - 1], bb), d, work))


@api_boundary
def vdot(a, b):
    """The dot product of the flattened arrays."""
    (x, y), d, work = _operands("vdot", a, b)
    if x.aval.size != y.aval.size:
        raise ShapeError(f"vdot: {x.aval} and {y.aval} differ in size ({x.aval.size} != {y.aval.size})")
    x, y = _reshape_node(x, (x.aval.size,)), _reshape_node(y, (y.aval.size,))
    if x.aval.dtype.kind == "c":    # NumPy's vdot conjugates its first argument
        x = conj_node(x)
    return wrap(_result(_tensordot_nodes("vdot", x, y, [0], [0]), d, work))


@api_boundary
def inner(a, b):
    """Sum of products over the last axes."""
    (x, y), d, work = _operands("inner", a, b)
    if x.aval.ndim == 0 or y.aval.ndim == 0:
        return wrap(_result(record("mul", (x, y)), d, work))
    return wrap(_result(_tensordot_nodes("inner", x, y, [-1], [-1]), d, work))


@api_boundary
def outer(a, b):
    """The outer product of the flattened arrays: out[i, j] = a[i] * b[j]."""
    (x, y), d, work = _operands("outer", a, b)
    x = _reshape_node(x, (x.aval.size, 1))
    y = _reshape_node(y, (1, y.aval.size))
    return wrap(_result(record("mul", (x, y)), d, work))


def _shape_of(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else ()


def _check_contracted(op, shape1, shape2, neg_axis) -> None:
    """The contracted axis has one size in both operands (the standard forbids broadcasting it: NumPy
    raises too); an operand without that axis counts as size 1."""
    n1 = shape1[neg_axis] if len(shape1) >= -neg_axis else 1
    n2 = shape2[neg_axis] if len(shape2) >= -neg_axis else 1
    if n1 != n2:
        raise ShapeError(f"{op}: the contracted axis {neg_axis} has size {n1} in x1 {shape1} but {n2} in "
                         f"x2 {shape2}; it must be the same in both (it is not broadcast)")


@api_boundary
def vecdot(x1, x2, axis=-1):
    """Sum of products along `axis` (after broadcasting), the array API's vecdot."""
    shape1, shape2 = _shape_of(x1), _shape_of(x2)
    ndim = max(len(shape1), len(shape2))
    if isinstance(axis, int) and -ndim <= axis < ndim:    # before broadcasting, which would say less
        _check_contracted("vecdot", shape1, shape2, axis - ndim if axis >= 0 else axis)
    (x, y), d, work = _operands("vecdot", x1, x2)
    if x.aval.dtype.kind == "c":    # the standard's vecdot conjugates x1
        x = conj_node(x)
    p = record("mul", (x, y))
    ax = axis_of(axis, p.aval.ndim, "vecdot", wrap(p))
    from poot.trace.reductions import _reduce

    return wrap(_result(_reduce("reduce_sum", p, (ax,), work, False), d, work))


def _diagonal_node(n, offset, axis1, axis2):
    shape = n.aval.shape
    others = [i for i in range(len(shape)) if i not in (axis1, axis2)]
    n1, n2 = shape[axis1], shape[axis2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    t = _transpose_node(n, others + [axis1, axis2])
    lead = tuple(shape[i] for i in others)
    flat = _reshape_node(t, lead + (n1 * n2,))
    start = offset if offset >= 0 else -offset * n2
    starts = [0] * len(lead) + [start if length else 0]
    return slice_node(flat, starts, [1] * len(lead) + [n2 + 1], list(lead) + [length])


@api_boundary
def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal of the (axis1, axis2) planes, as the last axis of the result (like NumPy)."""
    x = arr(x)
    try:
        offset = operator.index(offset)
    except TypeError:
        raise ArgumentError(f"diagonal: offset must be an integer, got {offset!r}") from None
    a1, a2 = axis_of(axis1, x.ndim, "diagonal", x), axis_of(axis2, x.ndim, "diagonal", x)
    if a1 == a2:
        raise ShapeError(f"diagonal: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    return wrap(_diagonal_node(x._node, offset, a1, a2))


@api_boundary
def trace(x, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum along diagonals."""
    from poot.trace.reductions import sum as sum_

    return sum_(diagonal(x, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- einsum ----------------------------------------------------------------------------------------
def _parse_einsum(subscripts, nds):
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(nds):
        raise ShapeError(f"einsum: '{subscripts}' names {len(terms)} operands, got {len(nds)}")
    ell_nd = max((nd - len(t.replace("...", "")) for t, nd in zip(terms, nds) if "..." in t), default=0)
    ell = [chr(0x100 + i) for i in range(ell_nd)]  # labels no user can type
    out_terms = []
    for t, nd in zip(terms, nds):
        if "..." in t:
            k = nd - len(t.replace("...", ""))
            head, _, tail = t.partition("...")
            labels = list(head) + ell[ell_nd - k:] + list(tail)
        else:
            labels = list(t)
        if len(labels) != nd:
            raise ShapeError(f"einsum: term '{t}' has {len(labels)} labels for an operand of "
                             f"{nd} dimensions")
        for c in labels:
            if not (c.isalpha() or ord(c) >= 0x100):
                raise ShapeError(f"einsum: invalid label {c!r} in '{subscripts}'")
        out_terms.append(labels)
    if arrow:
        head, _, tail = rhs.partition("...")
        out = list(head) + (ell if "..." in rhs else []) + list(tail)
    else:
        counts = {}
        for labels in out_terms:
            for c in labels:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and ord(c) < 0x100)
    return out_terms, out


def _sublist_label(s) -> str:
    """One label of NumPy's sublist form as a subscripts letter: 0-25 are 'A'-'Z' and 26-51 'a'-'z' (as
    NumPy's C parser maps them, so the implicit output keeps the labels' numeric order); Ellipsis is '...'."""
    if s is Ellipsis:
        return "..."
    try:
        k = operator.index(s)
    except TypeError:
        raise ArgumentError(f"einsum: each subscript must be either an integer or an ellipsis, got {s!r}") from None
    if not 0 <= k < 52:
        raise ShapeError(f"einsum: subscript {k} is not within the valid range [0, 52)")
    return chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26)


def _sublist_subscripts(args):
    """NumPy's sublist form, einsum(op0, sublist0, op1, sublist1, ..., [sublistout]), as the subscripts
    string and the operands."""
    if len(args) < 2:
        raise ArgumentError("einsum: the first argument must be a subscripts string like 'ij,jk->ik', or an "
                            "operand followed by its sublist of integer subscripts")
    out = args[-1] if len(args) % 2 else None      # an odd count ends with the output sublist
    args = args[:-1] if len(args) % 2 else args
    ops, terms = args[0::2], args[1::2]
    for t in terms + (() if out is None else (out,)):
        if isinstance(t, str) or not hasattr(t, "__iter__"):
            raise ArgumentError(f"einsum: in the sublist form, each operand is followed by a list of "
                                f"integer subscripts, got {t!r}")
    lhs = ",".join("".join(_sublist_label(s) for s in t) for t in terms)
    rhs = "" if out is None else "->" + "".join(_sublist_label(s) for s in out)
    return lhs + rhs, tuple(ops)


def _sum_out(n, labels, drop):
    from poot.trace.reductions import _reduce

    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return n, labels
    return _reduce("reduce_sum", n, axes, n.aval.dtype, False), [c for c in labels if c not in drop]


@api_boundary
def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation for the forms that reduce to diagonals, sums, transposes, broadcasting and
    matrix products (which is every form of plain labels and '...'); contracts left to right
    (NumPy's `optimize` only picks a contraction order, so it is accepted and not needed). NumPy's
    sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]), is turned into the subscripts string first."""
    refuse_out("einsum", out, lambda: einsum(subscripts, *operands, dtype=dtype, order=order,
                                                casting=casting, optimize=optimize))
    any_memory_order("einsum", order)
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts((subscripts,) + operands)
    if dtype is not None:
        operands = tuple(arr(o).astype(dtype) for o in operands)
    nodes, d, work = _operands("einsum", *operands)
    terms, out = _parse_einsum(subscripts, [n.aval.ndim for n in nodes])
    sizes: dict[str, int] = {}
    ops = []
    for n, labels in zip(nodes, terms):
        while len(set(labels)) != len(labels):  # repeated label in one term: take the diagonal
            c = next(c for c in labels if labels.count(c) > 1)
            i = labels.index(c)
            j = labels.index(c, i + 1)
            if n.aval.shape[i] != n.aval.shape[j]:
                raise ShapeError(f"einsum: label '{c}' has sizes {n.aval.shape[i]} and {n.aval.shape[j]}")
            n = _diagonal_node(n, 0, i, j)
            labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [c]
        for c, s in zip(labels, n.aval.shape):
            if sizes.get(c, 1) not in (1, s) and s != 1:
                raise ShapeError(f"einsum: label '{c}' has sizes {sizes[c]} and {s} in '{subscripts}'")
            sizes[c] = s if sizes.get(c, 1) == 1 else sizes[c]    # a size-1 axis broadcasts (0 stays 0)
        ops.append((n, labels))
    if any(c not in sizes for c in out):
        raise ShapeError(f"einsum: output label not in the inputs of '{subscripts}'")
    # broadcast size-1 dimensions to the label's size
    ops = [(broadcast_node(n, tuple(sizes[c] for c in labels)), labels) for n, labels in ops]
    n, labels = ops[0]
    for k in range(1, len(ops) + 1):
        # the labels needed after contracting with operand k: the output's and those of the operands
        # after it (not operand k's own: a label shared with it and needed nowhere later is summed by
        # the matmul, where counting it as needed made it a batch axis of outer products)
        later = set(out).union(*(set(lb) for _, lb in ops[k + 1:]))
        if k == len(ops):
            n, labels = _sum_out(n, labels, set(labels) - later)
            break
        m, mlabels = ops[k]
        n, labels = _sum_out(n, labels, {c for c in labels if c not in mlabels and c not in later})
        m, mlabels = _sum_out(m, mlabels, {c for c in mlabels if c not in labels and c not in later})
        batch = [c for c in labels if c in mlabels and c in later]
        summed = [c for c in labels if c in mlabels and c not in later]
        fa = [c for c in labels if c not in mlabels]
        fb = [c for c in mlabels if c not in labels]
        pa = [labels.index(c) for c in batch + fa + summed]
        pb = [mlabels.index(c) for c in batch + summed + fb]
        bs, ks = math.prod(sizes[c] for c in batch), math.prod(sizes[c] for c in summed)
        a3 = _reshape_node(_transpose_node(n, pa), (bs, math.prod(sizes[c] for c in fa), ks))
        b3 = _reshape_node(_transpose_node(m, pb), (bs, ks, math.prod(sizes[c] for c in fb)))
        r = record("matmul", (a3, b3))
        labels = batch + fa + fb
        n = _reshape_node(r, tuple(sizes[c] for c in labels))
    n = _transpose_node(n, [labels.index(c) for c in out])
    return wrap(cast(_result(n, d, work), d))
