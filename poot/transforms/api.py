"""The public differentiation functions: `grad`, `value_and_grad`, `vjp`, `jvp` (JAX's API).

Each traces the user's function once per call on the differentiated arguments (each behind an
identity equation, poot.transforms.tracing), then records its derivative beside it
(poot.transforms.autodiff). Nothing runs until a result is realized; under @pt.jit the whole
derivative becomes part of the jitted program, and a derivative can be differentiated again.
"""
from __future__ import annotations

import functools

import numpy as np

from poot.errors import ArgumentError, DTypeError, NotBuiltError, PootError, ShapeError, api_boundary
from poot.trace import context as _dev
from poot.trace import creation as _creation
from poot.trace import movement as _movement
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.promote import is_weak

from . import batching as _batching
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
    """argnums (an int or a sequence of ints) as a tuple of non-negative positions; an ArgumentError
    (a PootError) names what is wrong with it."""
    if isinstance(argnums, (bool, np.bool_)) or not isinstance(argnums, (int, np.integer, tuple, list)):
        raise ArgumentError(f"{what}: argnums must be an int or a tuple of ints; got "
                            f"{type(argnums).__name__} {argnums!r:.40}")
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    if not nums:
        raise ArgumentError(f"{what}: argnums is empty; name at least one argument to differentiate")
    for n in nums:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise ArgumentError(f"{what}: argnums {argnums!r} holds {type(n).__name__} {n!r:.40}; "
                                f"argnums are ints (positions of the arguments)")
        if not -nargs <= n < nargs:
            raise ArgumentError(f"{what}: argnums {argnums!r} does not fit a call with {nargs} "
                                f"positional arguments")
    out = tuple(int(n) % nargs for n in nums)
    if len(set(out)) != len(out):
        raise ArgumentError(f"{what}: argnums {argnums!r} names an argument twice; list each "
                            f"argument to differentiate once")
    return out


def _require_float(arrays: list, tree, what: str, prefix: str) -> None:
    for path, a in zip(pytree.paths(tree, prefix), arrays):
        if a.dtype.kind != "f":
            raise DTypeError(f"{what} requires floating-point arguments to differentiate, but "
                             f"{path} is {a.dtype.name}; convert it (x.astype(pt.float32)) or pass "
                             f"it as an argument not listed in argnums")


def _refuse_complex(arrays: list, tree, what: str, prefix: str) -> None:
    """Complex derivatives are not built: a complex primal given a tangent (or a complex result given
    a cotangent) raises instead of passing on a zero derivative, which would be silently wrong."""
    for path, a in zip(pytree.paths(tree, prefix), arrays):
        if a.dtype.kind == "c":
            raise NotBuiltError(f"{what}: {path} is {a.dtype.name}: complex derivatives are not built; "
                                f"differentiate a formulation on the real and imaginary parts "
                                f"(pass z.real and z.imag as float arguments)")


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


@api_boundary
def value_and_grad(fn, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """`fn` and its gradient: a function returning `(fn(*args), gradient)`, the gradient with respect
    to argument `argnums` (an int: its pytree structure; a tuple: a tuple of them). `fn` must return
    a floating-point scalar; with `has_aux=True` it returns `(scalar, aux)` and the function returns
    `((value, aux), gradient)`. JAX's `holomorphic` and `allow_int` are taken (code passing their
    defaults runs) and refused with NotBuiltError when true, as jacrev does."""
    _check_jac_options(fn, "value_and_grad", holomorphic, allow_int)

    @functools.wraps(fn)
    @api_boundary
    def wrapped(*args, **kwargs):
        return _value_and_grad_call(fn, argnums, has_aux, "value_and_grad", args, kwargs)

    return wrapped


@api_boundary
def grad(fn, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of `fn` (which returns a floating-point scalar) with respect to argument
    `argnums` (an int, or a tuple for a tuple of gradients); with `has_aux=True`, `fn` returns
    `(scalar, aux)` and the gradient function returns `(gradient, aux)`. Composes with @pt.jit and
    with itself (`grad(grad(f))`). `holomorphic` and `allow_int` as in value_and_grad."""
    _check_jac_options(fn, "grad", holomorphic, allow_int)

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
    _refuse_complex(arrays, tree, "vjp", "primals")
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
        _refuse_complex(out_arrays, ct_tree, "vjp", "result")
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
        raise ArgumentError("jvp: primals and tangents must be tuples (or lists) of the arguments")
    arrays, tree = _flatten_values(tuple(primals), "jvp", "primals")
    t_leaves = pytree.flatten(tuple(tangents))[0]
    t_arrays, t_tree = _flatten_values(tuple(tangents), "jvp", "tangents")
    if t_tree != tree:
        raise ShapeError("jvp: tangents must have the structure of primals")
    _refuse_complex(arrays, tree, "jvp", "primals")
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


# --- Jacobians, Hessians, linearize (JAX's jacrev, jacfwd, hessian, linearize) ---------------------------
# Built on vjp/jvp above and pt.vmap: one pullback (or pushforward) per vector of the standard basis of
# the results (inputs), batched into one program by vmap. The Jacobian of a pytree-valued function of
# pytree arguments is nested as in JAX: the result's structure outside, the arguments' inside, and
# each block has shape result leaf's shape + argument leaf's shape.

def _check_jac_options(fun, what: str, holomorphic, allow_int) -> None:
    if not callable(fun):
        raise ArgumentError(f"{what} needs a function; got {type(fun).__name__}")
    if holomorphic:
        raise NotBuiltError(f"{what}: holomorphic=True (complex Jacobians) is not built; poot "
                            f"differentiates real floating-point functions")
    if allow_int:
        raise NotBuiltError(f"{what}: allow_int=True is not built; differentiate floating-point "
                            f"arguments only (close over the integer ones)")


def _diff_args(fun, argnums, args, kwargs, what: str):
    """(the differentiated arguments as a tuple of pytrees of Arrays, their flat Arrays, the tree of
    that tuple, the tree a Jacobian nests inside (the argument's own for an int argnums), the function
    of those arguments alone) for a Jacobian of `fun` at `args`."""
    nums = _argnums(argnums, len(args), what)
    diff = []
    for n in nums:
        leaves, tree = _flatten_values(args[n], what, f"argument {n}")
        _require_float(leaves, tree, what, f"argument {n}")
        diff.append(pytree.unflatten(tree, leaves) if leaves else args[n])
    arrays, tree = pytree.flatten(tuple(diff))
    if not arrays:
        raise ArgumentError(f"{what}: the arguments {argnums!r} hold no arrays to differentiate")

    def partial_fn(*values):
        full = list(args)
        for n, v in zip(nums, values):
            full[n] = v
        return fun(*full, **kwargs)

    inner = pytree.flatten(diff[0])[1] if isinstance(argnums, (int, np.integer)) else tree
    return tuple(diff), arrays, tree, inner, partial_fn


def _basis(arrays: list) -> list:
    """The standard basis of the space of `arrays` (flattened and concatenated, n numbers in all), one
    leaf per array: leaf j has shape (n, *arrays[j].shape) and holds the identity's columns of it."""
    sizes = [int(np.prod(a.shape, dtype=np.int64)) for a in arrays]
    n, out, offset = sum(sizes), [], 0
    for a, size in zip(arrays, sizes):
        block = _creation.eye(n, size, k=-offset, dtype=a.dtype, device=a.device)
        out.append(block.reshape((n, *a.shape)))
        offset += size
    return out


def _offsets(arrays: list) -> list[tuple[int, int]]:
    spans, offset = [], 0
    for a in arrays:
        size = int(np.prod(a.shape, dtype=np.int64))
        spans.append((offset, offset + size))
        offset += size
    return spans


def _nest(out_tree, in_tree, blocks) -> object:
    """blocks[i][j] (result leaf i, argument leaf j) as the result's structure of the arguments'."""
    return pytree.unflatten(out_tree, [pytree.unflatten(in_tree, row) for row in blocks])


def _result_arrays(result, what: str) -> tuple[list, object]:
    leaves, tree = pytree.flatten(result)
    for path, y in zip(pytree.paths(tree, "the result"), leaves):
        if not isinstance(y, Array):
            raise ArgumentError(f"{what}: {path or 'the result'} is a {type(y).__name__}, not an array; "
                                f"the function must return arrays (or pytrees of them)")
    return leaves, tree


@api_boundary
def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` with respect to argument `argnums` (an int, or a tuple of ints for a
    tuple of Jacobians), by reverse mode: one vjp per result element, batched with pt.vmap (JAX's
    `jax.jacrev`). For a result leaf of shape S and an argument leaf of shape T the block has shape
    S + T; pytree results and arguments nest as JAX nests them (result structure outside). With
    `has_aux=True` `fun` returns `(result, aux)` and the Jacobian function `(jacobian, aux)`.
    Arguments and results must be floating-point."""
    _check_jac_options(fun, "jacrev", holomorphic, allow_int)

    @functools.wraps(fun)
    @api_boundary
    def jacfun(*args, **kwargs):
        diff, arrays, _, in_tree, partial_fn = _diff_args(fun, argnums, args, kwargs, "jacrev")
        got = vjp(partial_fn, *diff, has_aux=has_aux)
        ys, out_tree = _result_arrays(got[0], "jacrev")
        for path, y in zip(pytree.paths(out_tree, "the result"), ys):
            if y.dtype.kind != "f":
                raise DTypeError(f"jacrev requires floating-point results, but {path or 'the result'} is "
                                 f"{y.dtype.name}; convert it (y.astype(pt.float32)) or use pt.jacfwd")
        pullback = got[1]
        cts = _batching.vmap(pullback)(pytree.unflatten(out_tree, _basis(ys)))
        g_leaves = pytree.flatten(cts)[0]          # per argument leaf: shape (m, *argument shape)
        blocks = [[g[lo:hi].reshape((*y.shape, *a.shape)) for g, a in zip(g_leaves, arrays)]
                  for y, (lo, hi) in zip(ys, _offsets(ys))]
        jac = _nest(out_tree, in_tree, blocks)
        return (jac, got[2]) if has_aux else jac

    return jacfun


@api_boundary
def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` with respect to argument `argnums` by forward mode: one jvp per argument
    element, batched with pt.vmap (JAX's `jax.jacfwd`). Same result structure and shapes as
    `pt.jacrev`; cheaper when the arguments have fewer elements than the results. With
    `has_aux=True` `fun` returns `(result, aux)` and the Jacobian function `(jacobian, aux)`."""
    _check_jac_options(fun, "jacfwd", holomorphic, False)

    @functools.wraps(fun)
    @api_boundary
    def jacfun(*args, **kwargs):
        diff, arrays, args_tree, in_tree, partial_fn = _diff_args(fun, argnums, args, kwargs, "jacfwd")

        def push(*tangents):
            got = jvp(partial_fn, diff, tangents, has_aux=has_aux)
            return (got[1], got[2]) if has_aux else got[1]

        basis = pytree.unflatten(args_tree, _basis(arrays))
        got = _batching.vmap(push, out_axes=(0, None) if has_aux else 0)(*basis)
        touts, aux = got if has_aux else (got, None)
        ts, out_tree = _result_arrays(touts, "jacfwd")    # per result leaf: shape (n, *result shape)
        blocks = [[_movement.moveaxis(t[lo:hi], 0, -1).reshape((*t.shape[1:], *a.shape))
                   for a, (lo, hi) in zip(arrays, _offsets(arrays))] for t in ts]
        jac = _nest(out_tree, in_tree, blocks)
        return (jac, aux) if has_aux else jac

    return jacfun


@api_boundary
def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of scalar-valued `fun`: `jacfwd(jacrev(fun, argnums), argnums)` (JAX's
    `jax.hessian`); for an argument of shape T the result has shape T + T, and pytree arguments nest
    as for the Jacobians. With `has_aux=True` `fun` returns `(value, aux)` and this `(hessian, aux)`."""
    _check_jac_options(fun, "hessian", holomorphic, False)
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """`(fun(*primals), f_jvp)` (JAX's `jax.linearize`): `f_jvp(*tangents)`, one tangent per primal of
    its shape and dtype, returns the tangent of the result, `pt.jvp(fun, primals, tangents)[1]`. poot
    records the derivative again on each call of `f_jvp` (nothing runs until a result is realized).
    With `has_aux=True` `fun` returns `(result, aux)` and this returns `(result, f_jvp, aux)`."""
    if not callable(fun):
        raise ArgumentError(f"linearize needs a function; got {type(fun).__name__}")
    arrays, tree = _flatten_values(tuple(primals), "linearize", "primals")
    fixed = tuple(pytree.unflatten(tree, arrays))
    zeros = tuple(pytree.unflatten(tree, [zeros_like(a) for a in arrays]))
    got = jvp(fun, fixed, zeros, has_aux=has_aux)

    @api_boundary
    def f_jvp(*tangents):
        if len(tangents) != len(fixed):
            raise ArgumentError(f"linearize: f_jvp takes one tangent per primal ({len(fixed)}); got "
                                f"{len(tangents)}")
        return jvp(fun, fixed, tangents, has_aux=has_aux)[1]

    return (got[0], f_jvp, got[2]) if has_aux else (got[0], f_jvp)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]
