"""Recipes: the equations a public function records for one kind of call, replayed for later calls.

Why: recording an operation eagerly runs NumPy's rules in Python (argument parsing, promotion,
broadcasting, index normalization, the op's shape rule), 3 to 30 microseconds for `x[1:-1]`,
`pt.roll`, `pt.concatenate`, `x.sum()`, `x @ y`. A loop calls the same functions with the same shapes
on every step, and everything those rules decide depends only on the arguments' shapes, dtypes and
static values. So the first call of a kind records normally, with the nodes it records captured; the
recipe (each equation's op, operands, params and aval) is kept under the call's key, and the next
call with that key makes the same nodes directly: a dictionary lookup and one object per equation.

A call's key: the function, then per argument an Array's (shape, dtype, device, its op (a pending
constant's value included), weak) or a static value in an exact form (floats by their bits), the same for keyword arguments, and
the current device when no Array is passed. Anything else (NumPy arrays, lists of numbers, callables)
is not keyed: such calls always run the function.

A recipe is kept only where replaying it is certain to give what the function would: the recording call
passed no array twice (`concatenate([x, x])`: its equations read one node for both places, which a
later call with two arrays must not inherit; that call records its own recipe, which also serves the
aliased form); every captured
equation takes its operands from the arguments, from earlier captured equations, or from the shared
constant leaves of Python scalars (immutable); the call realized nothing and read no value; no 0-d
realized array was passed (the fast paths compute on such values on the host). Otherwise the key is
marked and later calls run the function. Nothing is captured or replayed while tracing (@jit, grad,
vmap record their own graphs) or inside another captured call.
"""
from __future__ import annotations

import struct
import types
from sys import _getframe

from poot.errors import api_boundary_via
from poot.graph.ir import eqn_signature
from poot.trace import context as _dev
from poot.trace import counters as _counters
from poot.trace.array import Array
from poot.trace.lazy import (MAX_PENDING_DEPTH, Node, _internal_code, _state, is_internal, lazy_where_from,
                             realize_nodes)
from poot.trace.promote import wrap

MAX_RECIPES = 8192
_recipes: dict = {}
_new = object.__new__
_UNKEYED = object()   # an argument without a key: the call runs the function
_NEVER = object()     # a key whose calls cannot be replayed
_STATICS = frozenset({int, bool, str, type(None)})


class _Recipe:
    __slots__ = ("consts", "steps", "outs", "kind")

    def __init__(self, consts, steps, outs, kind):
        self.consts, self.steps, self.outs, self.kind = consts, steps, outs, kind


def _static(v):
    """An exact, hashable form of a static argument, or _UNKEYED."""
    t = type(v)
    if t in _STATICS:
        return v if t is not int else (v,)      # (1,) apart from True
    if t is float:
        return ("f", struct.pack("<d", v))
    if t is slice:
        return _slice_key(v)
    if t is tuple or t is list:
        parts = [t.__name__]
        for x in v:
            tx = type(x)
            # an index's ints and slices inline (x[1:-1, 0], a shape): no call a part
            k = (x,) if tx is int else _slice_key(x) if tx is slice else _static(x) if tx is not Array \
                else _UNKEYED
            if k is _UNKEYED:
                return _UNKEYED
            parts.append(k)
        return tuple(parts)
    if v is Ellipsis:
        return "..."
    if t is type or getattr(v, "short", None) is not None:     # float, np.float32, a poot DType
        return ("t", v)
    return _UNKEYED


_INT_OR_NONE = frozenset({int, type(None)})


def _slice_key(v: slice):
    """_static of a slice. The usual one (bounds that are ints or None: `x[1:-1]`, `x[::2]`) is keyed
    by its bounds themselves under its own tag "S": exact, since no bool or float is among them (True
    == 1 and 1.0 == 1 only under the general form "s", which wraps each bound)."""
    a, b, c = v.start, v.stop, v.step
    if type(a) in _INT_OR_NONE and type(b) in _INT_OR_NONE and type(c) in _INT_OR_NONE:
        return ("S", a, b, c)
    parts = ["s"]
    for x in (a, b, c):
        k = (x,) if type(x) is int else x if x is None else _static(x)
        if k is _UNKEYED:
            return _UNKEYED
        parts.append(k)
    return tuple(parts)


def _node_key(n):
    """What a recording may read of an argument's node: its aval, device, weakness and whether it is
    realized; for a pending constant (`full`), its value too (promote.cast folds a constant into a
    new constant of the converted value rather than recording a conversion). None for a realized 0-d
    value: the fast paths compute on such values on the host, so a recording could hold the number."""
    op = n.op
    if op is None and not n.aval.shape and n.buf is not None:
        return None
    if op == "full":
        op = ("full", _static(n.params["value"]))
    return (n.aval.shape, n.aval.dtype.name, n.device, op, n.weak)


def _key_and_nodes(fn, args, kwargs):
    """(key, argument nodes in order) of a call, or (None, None) where it cannot be keyed."""
    key = [fn]
    nodes = []
    for group in (args, kwargs.values()) if kwargs else (args,):
        for a in group:
            t = type(a)
            if t is Array:              # the commonest argument: one array (_node_key, inline)
                n = a._node
                op = n.op
                av = n.aval
                if op is None:
                    if not av.shape and n.buf is not None:
                        return None, None
                elif op == "full":
                    op = ("full", _static(n.params["value"]))
                key.append((av.shape, av.dtype.name, n.device, op, n.weak))
                nodes.append(n)
            elif (t is list or t is tuple) and a and type(a[0]) is Array:
                part = []
                for x in a:
                    k = _node_key(x._node) if type(x) is Array else None
                    if k is None:
                        return None, None
                    part.append(k)
                    nodes.append(x._node)
                key.append((t.__name__, *part))
            else:
                k = _static(a)
                if k is _UNKEYED:
                    return None, None
                key.append(k)
    if kwargs:
        key.append(tuple(kwargs))
    if not nodes:
        key.append(_dev.current())
    return tuple(key), nodes


def _capture(fn, args, kwargs, nodes):
    """Run the call with its records captured; (result, recipe or _NEVER)."""
    st = _state
    captured: list = []
    st.capture = captured
    counts = _counters.counts
    before = (counts.programs, counts.host_reads)
    try:
        out = fn(*args, **kwargs)
    finally:
        st.capture = None
    if (counts.programs, counts.host_reads) != before:
        return out, _NEVER
    return out, _recipe(captured, nodes, out)


def _recipe(captured, nodes, out):
    position = {id(n): i for i, n in enumerate(nodes)}
    consts: list = []
    steps = []
    first = len(nodes)
    for n in captured:
        if n.op is None:          # realized by its own record (a depth limit): not replayable
            return _NEVER
        refs = []
        for i in n.inputs:
            k = position.get(id(i))
            if k is None:
                if i.op is not None or i.buf is None or i.weak != 2:
                    return _NEVER   # a node made outside record(), or a value read on the host
                k = position[id(i)] = ~len(consts)
                consts.append(i)
            refs.append(k)
        position[id(n)] = first + len(steps)
        steps.append((n.op, tuple(refs), n.params, n.aval, n.device, eqn_signature(n.op, n.params, n.aval)))
    if type(out) is Array:
        kind, leaves = "one", (out,)
    elif type(out) in (tuple, list) and all(type(x) is Array for x in out):
        kind, leaves = type(out), out
    else:
        return _NEVER
    outs = []
    for x in leaves:
        k = position.get(id(x._node))
        if k is None:
            return _NEVER
        outs.append(k)
    # constants are numbered after the arguments and before the steps' results
    n_const = len(consts)
    fix = lambda k: first + ~k if k < 0 else (k + n_const if k >= first else k)  # noqa: E731
    steps = [(op, tuple(map(fix, refs)), *rest) for op, refs, *rest in steps]
    return _Recipe(consts, steps, tuple(map(fix, outs)), kind)


def _replay(recipe: _Recipe, nodes: list, where):
    """The recipe's equations made anew on the argument nodes `nodes`, each with the signature the
    recipe keeps for it (the walk of a later realize then need not make one). Each node is made here
    by slot stores, as lazy.pending_node makes one, and the one result's Array as promote.wrap makes
    it: a replayed step is little more than those stores, and the two calls cost a third of it."""
    vals = nodes + recipe.consts if recipe.consts else nodes
    append = vals.append
    for op, refs, params, aval, dev, sig in recipe.steps:
        if len(refs) == 1:
            i = vals[refs[0]]
            inputs = (i,)
            depth = i.depth
        else:
            inputs = tuple([vals[k] for k in refs])
            depth = 0
            for i in inputs:
                if i.depth > depth:
                    depth = i.depth
        n = _new(Node)
        n.op = op
        n.inputs = inputs
        n.params = params
        n.aval = aval
        n.device = dev
        n._where = where
        n.depth = depth + 1
        n.buf = None
        n.weak = 0
        n.sig = sig
        append(n)
    if recipe.kind == "one":
        out = vals[recipe.outs[0]]
        if out.depth >= MAX_PENDING_DEPTH:
            realize_nodes([out])
        r = _new(Array)
        r._node = out
        return r
    outs = [vals[k] for k in recipe.outs]
    if any(n.depth >= MAX_PENDING_DEPTH for n in outs):
        realize_nodes([n for n in outs if n.op is not None])
    return recipe.kind([wrap(n) for n in outs])


def memoize(fn):
    """`fn` (a public function recording equations) with its recipes kept and replayed, behind an API
    boundary of its own (errors.api_boundary_via)."""
    from poot.trace.ufunc import UnaryUfunc

    if isinstance(fn, UnaryUfunc):      # pt.exp, pt.negative...: the function under the ufunc keeps them
        return fn.calling(memoize(fn.func))
    if not isinstance(fn, types.FunctionType) or getattr(fn, "_poot_recipes", False):
        return fn

    def call(boundary, args, kwargs):
        st = _state
        if st.tracing or st.capture is not None:
            return fn(*args, **kwargs)
        key, nodes = _key_and_nodes(boundary, args, kwargs)
        if key is None:
            return fn(*args, **kwargs)
        recipe = _recipes.get(key)
        if recipe is None:
            return _first_call(fn, key, args, kwargs, nodes)
        if recipe is _NEVER:
            return fn(*args, **kwargs)
        # the caller of the boundary (lazy.lazy_where_from, its commonest case inline: the user's
        # own frame; no frame object is built for this frame or the boundary's, and the line is
        # found when asked for)
        f = _getframe(2)
        code = f.f_code
        inside = _internal_code.get(id(code))
        if inside is None:
            inside = is_internal(code)
        return _replay(recipe, nodes, lazy_where_from(f) if inside else (code, f.f_lasti))

    outer = api_boundary_via(fn, call)
    outer._poot_recipes = True
    return outer


def _first_call(fn, key, args, kwargs, nodes):
    """The first call of a kind: run with its records captured, and keep the recipe it gives."""
    out, recipe = _capture(fn, args, kwargs, nodes)
    if len({id(n) for n in nodes}) < len(nodes):
        return out      # one array passed twice: its recipe would read one node for both places
    if len(_recipes) >= MAX_RECIPES:
        _recipes.clear()
    _recipes[key] = recipe
    return out


def memoize_module(module, names=None) -> None:
    """Replace the public functions of `module` (its __all__, or `names`) by memoized ones."""
    for name in names if names is not None else module.__all__:
        fn = getattr(module, name, None)
        if fn is not None:
            setattr(module, name, memoize(fn))


def clear() -> None:
    _recipes.clear()


__all__ = ["memoize", "memoize_module", "clear", "MAX_RECIPES"]
