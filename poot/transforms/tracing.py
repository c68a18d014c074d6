"""Tracing a function into its primitive equations.

A transformation needs `f` as a closed set of primitive equations. `Traced(fn, ...)` calls `fn`
inside `lazy.scope()` (nothing is realized meanwhile, and every equation `fn` records is collected)
on its real inputs, each behind a fresh identity equation (a same-shape `reshape`, free): those
identity nodes are the inputs the transformation differentiates with respect to, so the same array
reaching `fn` another way (a closure) stays a constant, as in JAX. The recorded nodes are the real
lazy computation: the passes (poot.transforms.autodiff) read it in place and record the derivative
beside it, and values `fn` closes over are ordinary values everywhere.

User-defined rules (custom_vjp, custom_jvp, checkpoint, stop_gradient) appear in a trace as a
`CustomNode`: an identity equation over each result of the call, whose `call` (a `CustomCall`) holds
the call's argument and residual nodes and its rules. A plain realize treats it as the identity; the
differentiation passes use its rules instead of the equations that computed its value. The marks are
only made while a transformation traces (`transforming()`): elsewhere the user's function runs as
written, at no cost.
"""
from __future__ import annotations

import contextlib
import threading

from poot.errors import NotBuiltError, PootError, TracerError
from poot.trace import lazy, pytree
from poot.trace.array import Array


class _Depth(threading.local):
    def __init__(self):     # per thread
        self.level = 0
        self.scopes: list = []    # the lazy scope (node list) of each differentiation trace, innermost last


_depth = _Depth()


def transforming() -> bool:
    """Is a differentiation trace active on this thread (so custom rules must be marked)?"""
    return _depth.level > 0


@contextlib.contextmanager
def _transforming():
    """A differentiation trace: a lazy scope whose node list is noted, so that `mark` can tell
    whether a mark lands in it or in a nested body (pt.cond, loops, pt.vmap) that will flatten it."""
    _depth.level += 1
    with lazy.scope() as inside:
        _depth.scopes.append(lazy._state.scope)
        try:
            yield inside
        finally:
            _depth.scopes.pop()
            _depth.level -= 1


class ArgumentWriteError(TracerError):
    """A function under pt.vmap or a differentiation writes into an argument in place."""


def refuse_argument_writes(given: list, what: str, hint: str) -> None:
    """Raise ArgumentWriteError where the function wrote into one of its arguments in place
    (`x[i] = v`, `x += y`): `given` holds (the Array it received, its node then). An eager or
    jitted call updates the caller's array so (NumPy's semantics); a transformation calls the function
    on stand-ins (one batch element, or the point it differentiates at), whose new values have no
    meaning for the caller's array, so the update would be lost silently. Each array is put back."""
    changed = [(x, old) for x, old in given if x._node is not old]
    if not changed:
        return
    line = lazy.format_where(changed[0][0]._node.where)
    for y, old in changed:
        y._node = old
    raise ArgumentWriteError(
        f"{what}: the function writes into an argument in place (at {line}); that update is not "
        f"written back to the array passed (pt.vmap and the derivative transformations call the function "
        f"on stand-ins). {hint}")


class CustomCall:
    """One call of a function with user-defined derivative rules.

    args: the argument nodes (flattened); residuals: nodes the rules need (custom_vjp's fwd
    residuals); closed: the values the function read without taking them as arguments (closures),
    which its rules cannot differentiate; vjp(args, residuals, cts) -> arg cts and
    jvp(args, tangents) -> out tangents, over Arrays (None where the rule does not exist: `what`
    names the construct for the error); outs: the marked result nodes, in order."""

    __slots__ = ("args", "residuals", "closed", "vjp", "jvp", "what", "outs")

    def __init__(self, args, residuals, vjp, jvp, what: str, closed=()):
        self.args, self.residuals, self.closed = list(args), list(residuals), list(closed)
        self.vjp, self.jvp, self.what = vjp, jvp, what
        self.outs: list = []


@contextlib.contextmanager
def recorded():
    """Collect the nodes recorded meanwhile in the current scope (a list, filled on exit), to find
    what a user's function read from outside its arguments (`closed_over`)."""
    scope = lazy._state.scope
    start = len(scope) if scope is not None else 0
    got: list = []
    try:
        yield got
    finally:
        if scope is not None:
            got.extend(scope[start:])


def closed_over(body: list, args: list, results: list) -> list:
    """The nodes `body` (recorded nodes) and `results` read that are neither recorded in `body` nor
    in `args`: the values a function closed over (what an argument node itself reads is not)."""
    arg_ids = {id(n) for n in args}
    own = {id(n) for n in body} | arg_ids
    seen: set = set()
    out = []
    for ins in [n.inputs for n in body if id(n) not in arg_ids] + [results]:
        for i in ins:
            # a realized leaf or a placeholder is never differentiated (inputs of a trace are
            # identity equations): only pending equations can carry a derivative
            if id(i) not in own and id(i) not in seen and i.op is not None:
                seen.add(id(i))
                out.append(i)
    return out


class CustomNode(lazy.Node):
    """An identity equation that marks result `index` of a `CustomCall`."""

    __slots__ = ("call", "index")


class RuleInBodyError(NotBuiltError):
    """A custom rule met inside a body that will be flattened into a subgraph (see `mark`); pt.vmap
    catches it and batches the function with rules of its own (batching_custom.py)."""


@contextlib.contextmanager
def suspended():
    """Run without differentiation traces: custom functions run as written, marking nothing. For a
    construct that carries the derivative itself (a vmap with rules of its own) while it records
    its value."""
    level, scopes = _depth.level, _depth.scopes
    _depth.level, _depth.scopes = 0, []
    try:
        yield
    finally:
        _depth.level, _depth.scopes = level, scopes


def can_mark() -> bool:
    """Would a mark land directly in the innermost differentiation trace (not in a pt.cond / loop
    body or a pt.vmap that will flatten it into a subgraph)? Constructs with a fallback (pt.scan)
    ask first; `mark` refuses otherwise."""
    return bool(_depth.scopes) and lazy._state.scope is _depth.scopes[-1]


def mark(call: CustomCall, value: lazy.Node) -> lazy.Node:
    """`value` behind an identity equation marked as result `len(call.outs)` of `call`.

    A mark must be recorded directly in a differentiation trace: the body of a pt.cond, a loop or
    a pt.vmap inside one becomes a subgraph, which keeps equations but not marks, so the rule
    would be silently lost there; that is refused instead."""
    if _depth.scopes and lazy._state.scope is not _depth.scopes[-1]:
        raise RuleInBodyError(f"{call.what} is used inside a pt.cond / pt.fori_loop / pt.while_loop "
                              f"/ pt.scan body that is being differentiated; its rule cannot be "
                              f"carried through such a body yet: call it outside the body")
    plain = lazy.record("reshape", (value,), {"shape": value.aval.shape})
    node = CustomNode(plain.op, plain.inputs, plain.params, plain.aval, plain.device, plain.where,
                      plain.depth)
    node.weak, node.call, node.index = plain.weak, call, len(call.outs)
    scope = lazy._state.scope
    if scope and scope[-1] is plain:    # the marked node replaces the plain one in the trace
        scope[-1] = node
    call.outs.append(node)
    return node


def to_node(x, device: str, what: str) -> lazy.Node:
    """A pytree leaf as a Node (Arrays as they are; NumPy data and Python scalars as constants)."""
    if isinstance(x, Array):
        return x._node
    from poot.trace.creation import asarray

    try:
        return asarray(x, device=device)._node
    except PootError:
        raise
    except Exception:
        raise PootError(f"{what}: a {type(x).__name__} is not an array; the values must be pytrees "
                        f"(tuples, lists, dicts, NamedTuples, dataclasses) of arrays or scalars") from None


class Traced:
    """`fn` traced on `in_nodes`. params: the identity node standing for each input (and, after
    them, the nodes of `closed`: values `fn` reads from outside that are to be differentiated too,
    used as they are); eqns: the recorded equations (`Step`s) in an order where inputs come first
    (params excluded); outs: the result nodes (flattened, a Python scalar result as a constant
    node); out_tree: the results' structure; aux: anything else `fn` returned (has_aux), as is."""

    def __init__(self, fn, in_nodes: list, in_tree, what: str, has_aux: bool = False, closed=()):
        self.what = what
        device = in_nodes[0].device if in_nodes else None
        with _transforming() as inside:
            self.params = [lazy.record("reshape", (n,), {"shape": n.aval.shape}) for n in in_nodes]
            given = [Array(p) for p in self.params]
            try:
                result = fn(*pytree.unflatten(in_tree, given))
            except TracerError as e:
                _refuse_in_place_kernel(e, what)
                raise
        refuse_argument_writes(list(zip(given, self.params)), what,
                               "Compute the new value out of place (y = x + 1, y = pt.where(mask, v, x)) "
                               "and return it, or copy the argument first (x = x.copy())")
        self.params += list(closed)
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise PootError(f"{what} with has_aux=True: the function must return a pair "
                                f"(output, aux); it returned a {type(result).__name__}")
            result, self.aux = result
        else:
            self.aux = None
        if device is None:
            from poot.trace import context

            device = context.current()
        leaves, self.out_tree = pytree.flatten(result)
        self.outs = [to_node(x, device, what) for x in leaves]
        roots = list(self.outs)
        for x in pytree.flatten(self.aux)[0]:
            if isinstance(x, Array):
                roots.append(x._node)
        mine = {id(p) for p in self.params}
        self.eqns = [Step(n) for n in _topological(roots, inside) if id(n) not in mine]


def _refuse_in_place_kernel(error: TracerError, what: str) -> None:
    """A @pt.kernel launched in place (`kernel(ctx, *arrays)`) on a traced value fails to realize
    it; say what to do instead, naming the kernel."""
    from .batching import _kernel_in

    kernel = _kernel_in(error)
    if kernel is not None:
        raise NotBuiltError(
            f"{what}: kernel '{kernel}' is launched in place inside the function being "
            f"differentiated; a @pt.kernel has no derivative of its own. Call it with "
            f"pt.kernel_call(kernel, ...) inside a pt.custom_vjp function and pair it with its "
            f"backward kernel through defvjp(fwd, bwd) (docs/transforms.md)") from None


class Step:
    """One traced equation as it was recorded: its node (the value) and the node's op, operands
    and parameters, kept here because realizing turns a node into a leaf that forgets them (the
    user may realize results between `pt.vjp` and calling its pullback)."""

    __slots__ = ("node", "op", "inputs", "params")

    def __init__(self, node: lazy.Node):
        self.node, self.op, self.inputs, self.params = node, node.op, tuple(node.inputs), node.params


def sibling(s: Step, index: int) -> lazy.Node:
    """Result `index` of the multi-result equation of `s` (recorded again: the planner runs the
    results of one construct on the same operands as one step)."""
    return lazy.record(s.op, s.inputs, {**s.params, "index": index}, s.node.device)


def dependencies(n: lazy.Node):
    """The nodes `n` depends on: its inputs, and for a custom mark the call's arguments and
    residuals (the rules read them, so they must be ordered before it)."""
    if isinstance(n, CustomNode):
        return tuple(n.inputs) + tuple(n.call.args) + tuple(n.call.residuals)
    return n.inputs


def _topological(roots, inside: set) -> list:
    """The nodes of `inside` below `roots`, each after everything it depends on (iterative DFS)."""
    order: list = []
    done: set = set()
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        n, expanded = stack.pop()
        k = id(n)
        if k in done or k not in inside or n.op is None:
            continue
        if expanded:
            done.add(k)
            order.append(n)
            continue
        stack.append((n, True))
        for d in reversed(dependencies(n)):
            if id(d) not in done:
                stack.append((d, False))
    return order
