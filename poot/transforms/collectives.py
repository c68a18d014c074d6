"""Collectives over a named `pt.vmap` axis (JAX's `vmap(f, axis_name='i')` with `lax.psum(x, 'i')`).

`pt.vmap` traces `f` on one example; inside it, `psum(x, 'i')` stands for the sum of `x` over every
example of the vmap that binds the name 'i'. It is recorded as one equation (poot/graph/collective.py)
naming the axis, and that vmap's batching rule turns it into a reduction over its batch axis: the
result is then the same for every example (unbatched), so `out_axes=None` may return it. A vmap
that binds another name (an inner one) passes the equation on, batched along its own axis, to the
vmap that binds it. `axis_index('i')` is each example's position along the axis (an iota).

A name is checked when the collective is called: one that no enclosing vmap binds raises
AxisNameError (a NameError, as in JAX) naming it and the names that are bound.

Derivatives follow JAX: the transpose of `psum` is `psum` (under `vmap(grad(f), axis_name='i')` each
example's cotangent collects every example's), and `pmax`/`pmin` pass the derivative to the examples
that attain the extreme (ties share it, as `max` does).
"""
from __future__ import annotations

import contextlib
import math
import threading

from poot import dtypes as dt
from poot.errors import ArgumentError, AxisNameError, NotBuiltError, api_boundary
from poot.graph.registry import get
from poot.trace import context as _dev
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.transforms.batching_core import BatchContext, record

from .prims import bind, convert

__all__ = ["psum", "pmean", "pmax", "pmin", "axis_index", "axis_size", "all_gather"]


class _Bound(threading.local):
    def __init__(self):     # per thread: (name, size) of each vmap tracing now, innermost last
        self.axes: list = []


_bound = _Bound()


@contextlib.contextmanager
def binding(axis_name, size: int):
    """While a vmap traces its function: `axis_name` (None: none) names its batch of `size`."""
    if axis_name is None:
        yield
        return
    _bound.axes.append((axis_name, size))
    try:
        yield
    finally:
        _bound.axes.pop()


def _names(axis_name, what: str) -> tuple:
    """`axis_name` (one name or a tuple of names) as a tuple of bound names; each unbound one raises."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise ArgumentError(f"{what}: axis_name is empty; name the vmap axis (pt.vmap(f, axis_name='i'))")
    bound = [n for n, _ in _bound.axes]
    for n in names:
        try:
            hit = n in bound
        except TypeError:
            hit = False
        if not hit:
            where = (f"the enclosing pt.vmap calls bind {', '.join(map(repr, reversed(bound)))}" if bound
                     else "no pt.vmap(..., axis_name=...) encloses this call")
            raise AxisNameError(f"{what}: unbound axis name {n!r}: {where}. A collective reduces over the "
                                f"examples of the vmap whose axis_name it gives")
    return names


def _size_of(name) -> int:
    for n, size in reversed(_bound.axes):
        if n == name:
            return size
    raise AxisNameError(f"unbound axis name {name!r}")   # _names checked it first


def _leaf(x, what: str) -> Array:
    if isinstance(x, Array):
        return x
    from poot.trace.creation import asarray

    return asarray(x)


def _tree_map(fn, tree):
    leaves, treedef = pytree.flatten(tree)
    return pytree.unflatten(treedef, [fn(x) for x in leaves])


def _collective(op: str, x, axis_name, what: str):
    names = _names(axis_name, what)

    def one(leaf):
        if isinstance(leaf, (bool, int, float)) and not (op == "psum" and isinstance(leaf, bool)):
            # a Python number is the same in every example, and stays a weak Python scalar
            return leaf * math.prod(_size_of(n) for n in names) if op == "psum" else leaf
        a = _leaf(leaf, what)
        for n in names:
            a = bind(op, a, axis_name=n, index=0)
        return a

    return _tree_map(one, x)


@api_boundary
def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` (a pytree of arrays) over the examples of the vmap named `axis_name` (a name
    or a tuple of names), the same for every example (jax.lax.psum). `psum(1, 'i')` is the axis size."""
    _no_groups(axis_index_groups, "psum")
    return _collective("psum", x, axis_name, "psum")


@api_boundary
def pmax(x, axis_name, *, axis_index_groups=None):
    """The largest `x` over the examples of the vmap named `axis_name` (jax.lax.pmax)."""
    _no_groups(axis_index_groups, "pmax")
    return _collective("pmax", x, axis_name, "pmax")


@api_boundary
def pmin(x, axis_name, *, axis_index_groups=None):
    """The smallest `x` over the examples of the vmap named `axis_name` (jax.lax.pmin)."""
    _no_groups(axis_index_groups, "pmin")
    return _collective("pmin", x, axis_name, "pmin")


@api_boundary
def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the examples of the vmap named `axis_name` (jax.lax.pmean): psum over
    the axis size, so integers give floats, as true division does."""
    _no_groups(axis_index_groups, "pmean")
    n = math.prod(_size_of(name) for name in _names(axis_name, "pmean"))
    return _tree_map(lambda s: s / n, _collective("psum", x, axis_name, "pmean"))


@api_boundary
def axis_size(axis_name) -> int:
    """The number of examples of the vmap named `axis_name` (a Python int; jax.lax.axis_size)."""
    return math.prod(_size_of(n) for n in _names(axis_name, "axis_size"))


@api_boundary
def axis_index(axis_name):
    """Each example's position (int32) along the vmap axis `axis_name` (jax.lax.axis_index); for a
    tuple of names, the position in their row-major product, the first name outermost."""
    names = _names(axis_name, "axis_index")
    out = None
    for n in names:
        i = Array(lazy.record("axis_index", (), {"axis_name": n, "index": 0}, _dev.current()))
        out = i if out is None else out * _size_of(n) + i
    return out


@api_boundary
def all_gather(x, axis_name, *, axis=0, tiled=False, axis_index_groups=None):
    """Every example's `x` stacked along a new axis `axis` (concatenated along it when `tiled`),
    the same for every example (jax.lax.all_gather). Each example places its value in its own row of
    a zero array and a psum adds the rows (an axis-size times larger sum than the gather itself)."""
    from poot.trace import creation, movement, selection

    _no_groups(axis_index_groups, "all_gather")
    names = _names(axis_name, "all_gather")
    if len(names) != 1:
        raise NotBuiltError("all_gather: gathering over several axis names at once is not built; nest "
                            "one all_gather per name")
    name, size = names[0], axis_size(names[0])

    def one(leaf):
        a = _leaf(leaf, "all_gather")
        rows = creation.arange(size, device=a.device) == axis_index(name)
        wide = movement.reshape(rows, (size,) + (1,) * a.ndim)
        kind = a.dtype
        work = a.astype(dt.int32) if kind.kind == "b" else a
        g = psum(selection.where(wide, work[None], 0).astype(work.dtype), name)
        g = g.astype(kind) if kind.kind == "b" else g
        ax = axis % (a.ndim + 1)
        if ax:
            g = movement.moveaxis(g, 0, ax)
        if tiled:
            shape = list(a.shape)
            if not shape:
                raise ArgumentError("all_gather: tiled=True needs an operand with at least one axis")
            shape[ax] *= size
            g = movement.reshape(g, tuple(shape))
        return g

    return _tree_map(one, x)


def _no_groups(groups, what: str) -> None:
    if groups is not None:
        raise NotBuiltError(f"{what}: axis_index_groups is not built; reduce over the whole vmap axis")


# --- batching: the vmap binding the name reduces over its batch axis -------------------------------
_REDUCE = {"psum": "reduce_sum", "pmax": "reduce_max", "pmin": "reduce_min"}


def _reduce_rule(op: str):
    def rule(ctx: BatchContext, nodes, dims, axis_name, index):
        (x,), (d,) = nodes, dims
        if axis_name != ctx.axis_name:        # an outer vmap's axis: batched along ours, passed on
            return record(op, (x,), axis_name=axis_name, index=index), d
        if d is None:                         # the same value in every example
            if op != "psum":
                return x, None
            n = lazy.constant(ctx.size, x.aval.dtype, x.device, ())
            return record("mul", (x, n)), None
        r = record(_REDUCE[op], (x,), axes=(d,))
        return record("reshape", (r,), shape=x.aval.shape[:d] + x.aval.shape[d + 1:]), None
    return rule


def _axis_index_rule(ctx: BatchContext, nodes, dims, axis_name, index):
    if axis_name != ctx.axis_name:
        return lazy.record("axis_index", (), {"axis_name": axis_name, "index": index}, ctx.device), None
    return lazy.record("iota", (), {"shape": (ctx.size,), "axis": 0, "dtype": dt.int32}, ctx.device), 0


for _op in _REDUCE:
    get(_op).register(batch=_reduce_rule(_op))
get("axis_index").register(batch=_axis_index_rule)


# --- derivatives ------------------------------------------------------------------------------------
def _psum_jvp(primals, tangents, out, axis_name, index):
    return bind("psum", tangents[0], axis_name=axis_name, index=0)


def _psum_vjp(ct, primals, out, axis_name, index):
    return [bind("psum", ct, axis_name=axis_name, index=0)]


def _share(x: Array, out: Array, axis_name) -> Array:
    """Where this example attains the extreme, its share of the derivative (ties split it evenly)."""
    hit = convert(bind("eq", x, out), x.dtype)
    return hit / bind("psum", hit, axis_name=axis_name, index=0)


def _extreme_jvp(primals, tangents, out, axis_name, index):
    return bind("psum", tangents[0] * _share(primals[0], out, axis_name), axis_name=axis_name, index=0)


def _extreme_vjp(ct, primals, out, axis_name, index):
    return [bind("psum", ct, axis_name=axis_name, index=0) * _share(primals[0], out, axis_name)]


JVP = {"psum": _psum_jvp, "pmax": _extreme_jvp, "pmin": _extreme_jvp}
VJP = {"psum": _psum_vjp, "pmax": _extreme_vjp, "pmin": _extreme_vjp}
