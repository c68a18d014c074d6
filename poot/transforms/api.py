"""The public differentiation functions: `grad`, `value_and_grad`, `vjp`, `jvp` (JAX's API).

Each traces the user's function once per call on the differentiated arguments (each behind an
identity equation, poot.transforms.tracing), then records its derivative beside it
(poot.transforms.autodiff). Nothing runs until a result is realized; under @pt.jit the whole
derivative becomes part of the jitted program, and a derivative can be differentiated again.
"""
from __future__ import annotations

import functools

import numpy as np

from poot.errors import ArgumentError, DTypeError, PootError, ShapeError, api_boundary
from poot.trace import context as _dev
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.promote import is_weak

from .autodiff import jvp_pass, vjp_pass
from .prims import convert, zeros_like
from .tracing import Traced, to_node


def _device_of(leaves) -> str:
    for x in leaves:
        if isinstance(x, Array):
            return x.device
    return _dev.current()


def _flatten_values(values, what: str, prefix: str = ""):
    """A pytree of array-likes as (Array leaves, treedef); `prefix` names `values` in messages."""
    leaves, tree = pytree.flatten(values)
    dev = _device_of(leaves)
    paths = pytree.paths(tree, prefix)
    return [x if isinstance(x, Array) else _leaf_array(x, dev, what, p) for x, p in zip(leaves, paths)], tree


def _leaf_array(x, device: str, what: str, path: str) -> Array:
    """A non-Array leaf of the values a transformation takes as an Array: a number or numeric NumPy
    data. Anything else (a string, an object) has no derivative: an ArgumentError naming the
    transformation, the leaf's path and its type (JAX refuses it too), not a dtype error from deep
    inside the conversion."""
    numeric = isinstance(x, (bool, int, float, complex, np.number, np.bool_)) or \
        (isinstance(x, np.ndarray) and x.dtype.kind in "biufc")
    if not numeric:
        other = " or pass it as an argument not listed in argnums" if "grad" in what else ""
        raise ArgumentError(f"{what}: {path or 'the argument'} has type {type(x).__name__} ({x!r:.40}), which "
                            f"is not an array or a number; {what} differentiates pytrees of arrays only. "
                            f"Close over such a value{other} instead")
    return Array(to_node(x, device, what))


def _argnums(argnums, nargs: int, what: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise PootError(f"{what}: argnums is empty; name at least one argument to differentiate")
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise PootError(f"{what}: argnums {argnums!r} does not fit a call with {nargs} "
                            f"positional arguments")
    out = tuple(n % nargs for n in nums)
    if len(set(out)) != len(out):
        raise PootError(f"{what}: argnums {argnums!r} names an argument twice; list each "
                        f"argument to differentiate once")
    return out


def _require_float(arrays: list, tree, what: str, prefix: str) -> None:
    for path, a in zip(pytree.paths(tree, prefix), arrays):
        if a.dtype.kind != "f":
            raise DTypeError(f"{what} requires floating-point arguments to differentiate, but "
                             f"{path} is {a.dtype.name}; convert it (x.astype(pt.float32)) or pass "
                             f"it as an argument not listed in argnums")


def _value_and_grad_call(fn, argnums, has_aux, what, args, kwargs):
    nums = _argnums(argnums, len(args), what)
    diff = tuple(args[n] for n in nums)
    names = [f"argument {n}" for n in nums]
    for k, n in enumerate(nums):
        sub, sub_tree = _flatten_values(diff[k], what, names[k])
        _require_float(sub, sub_tree, what, names[k])
    arrays, tree = _flatten_values(diff, what)

    def partial_fn(*values):
        full = list(args)
        for n, v in zip(nums, values):
            full[n] = v
        return fn(*full, **kwargs)

    nodes = [a._node for a in arrays]
    traced = Traced(partial_fn, nodes, tree, what, has_aux)
    if traced.out_tree != pytree.LEAF or len(traced.outs) != 1:
        raise ShapeError(f"{what}: the function must return one scalar array"
                         f"{' (and the aux value, has_aux=True)' if has_aux else ''}; it returned a "
                         f"structure of {len(traced.outs)} arrays (use pt.vjp or pt.jvp for those)")
    out = traced.outs[0]
    if out.aval.shape != () or out.aval.dtype.kind != "f":
        raise ShapeError(f"{what}: the function must return a floating-point scalar (shape ()); it "
                         f"returned {out.aval}; reduce it (.sum(), .mean()) or use pt.vjp")
    pull = vjp_pass(traced, [True] * len(nodes))
    value = Array(out)
    seed = Array(lazy.constant(1.0, out.aval.dtype, value.device, ()))
    cts = pull([seed])
    grads = pytree.unflatten(tree, [c if c is not None else zeros_like(a) for c, a in zip(cts, arrays)])
    grads = grads[0] if isinstance(argnums, int) else tuple(grads)
    if has_aux:
        return (value, traced.aux), grads
    return value, grads


def value_and_grad(fn, argnums=0, has_aux=False):
    """`fn` and its gradient: a function returning `(fn(*args), gradient)`, the gradient with respect
    to argument `argnums` (an int: its pytree structure; a tuple: a tuple of them). `fn` must return
    a floating-point scalar; with `has_aux=True` it returns `(scalar, aux)` and the function returns
    `((value, aux), gradient)`."""
    if not callable(fn):
        raise PootError(f"value_and_grad needs a function; got {type(fn).__name__}")

    @functools.wraps(fn)
    @api_boundary
    def wrapped(*args, **kwargs):
        return _value_and_grad_call(fn, argnums, has_aux, "value_and_grad", args, kwargs)

    return wrapped


def grad(fn, argnums=0, has_aux=False):
    """The gradient of `fn` (which returns a floating-point scalar) with respect to argument
    `argnums` (an int, or a tuple for a tuple of gradients); with `has_aux=True`, `fn` returns
    `(scalar, aux)` and the gradient function returns `(gradient, aux)`. Composes with @pt.jit and
    with itself (`grad(grad(f))`)."""
    if not callable(fn):
        raise PootError(f"grad needs a function; got {type(fn).__name__}")

    @functools.wraps(fn)
    @api_boundary
    def wrapped(*args, **kwargs):
        value, grads = _value_and_grad_call(fn, argnums, has_aux, "grad", args, kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapped


@api_boundary
def vjp(fn, *primals, has_aux=False):
    """`(fn(*primals), vjp_fn)`: `vjp_fn(cotangent)` (a pytree shaped like the result) returns a tuple
    with one cotangent per primal (zeros for integer primals). With `has_aux=True` `fn` returns
    `(result, aux)` and this returns `(result, vjp_fn, aux)`."""
    arrays, tree = _flatten_values(tuple(primals), "vjp", "primals")
    nodes = [a._node for a in arrays]
    traced = Traced(fn, nodes, tree, "vjp", has_aux)
    pull = vjp_pass(traced, [True] * len(nodes))
    out_arrays = [Array(o) for o in traced.outs]
    result = pytree.unflatten(traced.out_tree, out_arrays)

    @api_boundary
    def vjp_fn(cotangent):
        leaves, ct_tree = pytree.flatten(cotangent)
        if ct_tree != traced.out_tree:
            raise ShapeError("vjp: the cotangent must have the structure of the function's result")
        cts = []
        for path, o, c in zip(pytree.paths(ct_tree, "cotangent"), out_arrays, leaves):
            cts.append(_cotangent(c, o, path))
        got = pull(cts)
        filled = [g if g is not None else zeros_like(a) for g, a in zip(got, arrays)]
        return tuple(pytree.unflatten(tree, filled))

    return (result, vjp_fn, traced.aux) if has_aux else (result, vjp_fn)


def _cotangent(given, out: Array, path: str) -> Array | None:
    """The cotangent `given` for result `out` (None for a non-float result). A float result's
    cotangent is of its dtype, as JAX requires and as pt.jvp requires of tangents: a float32
    cotangent of a float64 result is a mistake a silent conversion would hide; a Python scalar
    takes the result's dtype."""
    c = given if isinstance(given, Array) else Array(to_node(given, out.device, "vjp"))
    if c.shape != out.shape:
        raise ShapeError(f"vjp: {path} has shape {c.shape}; the result there has {out.shape}")
    if out.dtype.kind in "fc" and c.dtype is not out.dtype and not is_weak(given):
        raise DTypeError(f"vjp: {path} is {c.dtype.name}; the result there is {out.dtype.name}. Pass a "
                         f"cotangent of the result's dtype (ct.astype({out.dtype.name}))")
    return convert(c, out.dtype) if out.dtype.kind == "f" else None


@api_boundary
def jvp(fn, primals, tangents, has_aux=False):
    """`(fn(*primals), tangent of the result)` along `tangents` (forward mode). `primals` and
    `tangents` are tuples (or lists) of the same structure and shapes. With `has_aux=True` `fn`
    returns `(result, aux)` and this returns `(result, result tangent, aux)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise PootError("jvp: primals and tangents must be tuples (or lists) of the arguments")
    arrays, tree = _flatten_values(tuple(primals), "jvp", "primals")
    t_leaves = pytree.flatten(tuple(tangents))[0]
    t_arrays, t_tree = _flatten_values(tuple(tangents), "jvp", "tangents")
    if t_tree != tree:
        raise ShapeError("jvp: tangents must have the structure of primals")
    tans = []
    for path, p, t, given in zip(pytree.paths(tree, "primals"), arrays, t_arrays, t_leaves):
        if t.shape != p.shape:
            raise ShapeError(f"jvp: the tangent of {path} has shape {t.shape}; the primal {p.shape}")
        # a float primal's tangent is of its dtype (as JAX requires): a float64 tangent of a float32
        # primal is a mistake that a silent conversion would hide; a Python scalar takes the dtype
        if p.dtype.kind in "fc" and t.dtype is not p.dtype and not is_weak(given):
            raise DTypeError(f"jvp: the tangent of {path} is {t.dtype.name}; the primal is {p.dtype.name}. "
                             f"Pass a tangent of the primal's dtype (t.astype({p.dtype.name}))")
        tans.append(convert(t, p.dtype) if p.dtype.kind == "f" else None)
    nodes = [a._node for a in arrays]
    traced = Traced(fn, nodes, tree, "jvp", has_aux)
    touts = jvp_pass(traced, tans)
    out_arrays = [Array(o) for o in traced.outs]
    t_out = [t if t is not None else zeros_like(o) for t, o in zip(touts, out_arrays)]
    result = pytree.unflatten(traced.out_tree, out_arrays)
    tangent = pytree.unflatten(traced.out_tree, t_out)
    return (result, tangent, traced.aux) if has_aux else (result, tangent)


__all__ = ["grad", "value_and_grad", "vjp", "jvp"]
