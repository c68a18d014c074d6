"""`pt.scan`: JAX's `lax.scan`, a loop that carries a value and stacks one output per step.

    carry, ys = pt.scan(f, init, xs)      # f(carry, x) -> (new carry, y), x = row i of xs

Why it is built on `pt.fori_loop` rather than being a primitive of its own: the program already runs a
fori construct as one device-side loop (never unrolled), under @pt.jit and eagerly, and vmap already
batches one. A scan is a fori loop whose carry also holds the stacked outputs (each step writes its
row with `scatter`) and whose body reads row i of `xs` (`take`): the user's `f` is traced once into a
subgraph (`ScanBody`) and that subgraph is called in the loop body.

Differentiating the fori loop itself would store each step's whole carry, stacked outputs included
(memory quadratic in the length), so a scan called directly in a differentiation trace is marked
(poot.transforms.tracing.mark) with its own rules, written with `scan` itself:
- forward mode: one scan over (carry, tangent), producing (ys, tangents of ys);
- reverse mode: a scan that runs the loop again and stacks the carry entering each step, then a scan
  in the opposite direction that applies each step's pullback to the carry's cotangent and stacks the
  cotangents of xs; values the body closes over (weights) accumulate their cotangents in the carry.
Both are scans again, so they are marked in turn and can be differentiated again. Inside a
pt.cond / loop body or a pt.vmap being differentiated a mark cannot be carried, and the scan is then
differentiated as the fori loop it is (correct, with the larger memory): so is a scan nested in
another scan's body.
"""
from __future__ import annotations

from poot.errors import ArgumentError, PootError, ShapeError, api_boundary
from poot.graph import Aval, Graph
from poot.trace import lazy, pytree
from poot.trace import control as _control
from poot.trace.array import Array
from poot.trace.promote import cast

from .control_rules import graph_call, row, set_row
from .flat import filled, jvp_flat, vjp_flat
from .prims import zeros, zeros_like
from .tracing import CustomCall, can_mark, mark, transforming

__all__ = ["scan"]


class ScanBody:
    """The traced step function: `graph` takes (carry..., x row..., captured...) and returns
    (new carry..., y...); `captured` are the outer values it reads; `n_carry`, `n_x` count the
    carry and x leaves; `y_avals` / `y_tree` describe one step's output."""

    __slots__ = ("graph", "captured", "n_carry", "n_x", "y_avals", "y_tree")

    def __init__(self, graph: Graph, captured: list, n_carry: int, n_x: int, y_avals: list, y_tree):
        self.graph, self.captured = graph, captured
        self.n_carry, self.n_x, self.y_avals, self.y_tree = n_carry, n_x, y_avals, y_tree

    def call(self, carry: list, x: list, captured: list, device: str) -> tuple[list, list]:
        """One step recorded on Arrays: (new carry, y)."""
        out = graph_call(self.graph, list(carry) + list(x) + list(captured), device)
        return out[:self.n_carry], out[self.n_carry:]


def _unroll_count(unroll, length: int) -> int:
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    if not isinstance(unroll, int) or unroll < 1:
        raise PootError(f"scan: unroll must be a positive int (or a bool), got {unroll!r}")
    return unroll


def _length(x_nodes: list, x_names: list, length, where) -> int:
    """The number of steps: the leading dimension every leaf of xs shares, and `length` if given."""
    at = lazy.format_where(where)
    for node, name in zip(x_nodes, x_names):
        if node.aval.ndim == 0:
            raise ShapeError(f"scan at {at}: {name} is a 0-d array; every leaf of xs is scanned over "
                             f"its leading axis, so it needs one")
    if x_nodes:
        first, first_name = x_nodes[0].aval.shape[0], x_names[0]
        for node, name in zip(x_nodes[1:], x_names[1:]):
            if node.aval.shape[0] != first:
                raise ShapeError(f"scan at {at}: {name} has leading dimension {node.aval.shape[0]} but "
                                 f"{first_name} has {first}; every leaf of xs must have the same length")
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise PootError(f"scan at {at}: length must be a non-negative int, got {length!r}")
        if x_nodes and length != first:
            raise ShapeError(f"scan at {at}: length={length} but {first_name} has leading dimension "
                             f"{first}")
        return length
    if not x_nodes:
        raise PootError(f"scan at {at}: xs has no arrays (xs=None) and length is not given; pass "
                        f"length= for the number of steps")
    return first


def _trace(f, carry_nodes, carry_tree, x_nodes, x_tree, device, where):
    """`f` traced once on placeholders: (ScanBody, the carry nodes, retyped where a weak Python
    scalar carry meets a typed body result, as fori_loop does)."""
    at = lazy.format_where(where)
    names = pytree.paths(carry_tree, "carry")
    n_carry = len(carry_nodes)
    x_rows = [Aval(n.aval.shape[1:], n.aval.dtype) for n in x_nodes]
    got: dict = {}

    def step(*arrays):
        result = f(pytree.unflatten(carry_tree, list(arrays[:n_carry])),
                   pytree.unflatten(x_tree, list(arrays[n_carry:])))
        if not (isinstance(result, tuple) and len(result) == 2):
            raise PootError(f"scan at {at}: f must return a pair (new carry, y); it returned a "
                            f"{type(result).__name__}")
        got_tree = pytree.flatten(result[0])[1]
        if got_tree != carry_tree:
            raise ShapeError(f"scan at {at}: f returns a carry of another structure than init: "
                             f"{_control.structure(got_tree)} for init {_control.structure(carry_tree)}")
        got["y_tree"] = pytree.flatten(result[1])[1]
        return result

    # the retyping rule of fori_loop (control._retype): a weak carry takes a strong result's dtype,
    # or a weak result's wider kind (`c = 0; c + 0.5` is a float, never truncated back to 0)
    for attempt in range(n_carry + 2):
        params = _control._placeholders(carry_nodes, where)
        params += [lazy.placeholder(a, device, where) for a in x_rows]
        t = _control._Traced(step, params, lambda arrays: arrays, "scan", device)
        outs = t.outs[:n_carry]
        retype = [i for i, (n, o) in enumerate(zip(carry_nodes, outs)) if _control._retype(n, o)]
        if not retype or attempt > n_carry:
            break
        carry_nodes = list(carry_nodes)
        for i in retype:
            _control.check_retype(carry_nodes[i], outs[i], "scan", at, names[i])
            carry_nodes[i] = cast(carry_nodes[i], outs[i].aval.dtype)
            carry_nodes[i].weak = 1 if outs[i].weak else 0
    t.fit([n.aval for n in carry_nodes], names, at)
    graph, captured = t.graph()
    y_avals = [n.aval for n in t.outs[n_carry:]]
    return ScanBody(graph, captured, n_carry, len(x_nodes), y_avals, got["y_tree"]), carry_nodes


def _loop(body: ScanBody, carry: list, xs: list, captured: list, length: int, reverse: bool,
          unroll: int, device: str) -> tuple[list, list]:
    """The scan as fori loops over (carry, stacked ys): `unroll` steps per trip, then the rest."""
    ys = [zeros((length,) + a.shape, a.dtype, device) for a in body.y_avals]
    if length == 0:
        return list(carry), ys

    def steps(first: Array, count: int, state):
        c, stacks = state
        for j in range(count):
            i = first + j
            k = (length - 1) - i if reverse else i
            c, y = body.call(c, [row(x, k) for x in xs], captured, device)
            stacks = [set_row(s, k, v) for s, v in zip(stacks, y)]
        return (list(c), list(stacks))

    trips, rest = divmod(length, unroll)
    state = (list(carry), ys)
    if trips:
        state = _control.fori_loop(0, trips, lambda i, s: steps(i * unroll, unroll, s), state)
    if rest:
        state = _control.fori_loop(trips * unroll, length, lambda i, s: steps(i, 1, s), state)
    c, stacks = state
    return list(c), list(stacks)


@api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`, as JAX's `lax.scan`:
    returns `(final carry, ys)` with the `y`s stacked along a new leading axis.

    `init` (the carry), `xs` and each `y` are pytrees of arrays; `xs=None` with `length=n` runs n
    steps with `x = None`; `reverse=True` walks xs from the last row to the first (and stores each
    y at its x's row); `unroll=k` runs k steps per trip of the device loop (`True`: all of them).
    `f` is traced once; the loop runs on the device, eagerly or under @pt.jit, and differentiates
    (pt.grad, pt.vjp, pt.jvp) and batches (pt.vmap)."""
    if not callable(f):
        raise ArgumentError(f"scan needs a function f(carry, x) -> (carry, y); got {type(f).__name__}")
    where = lazy.caller_where()
    x_leaves, x_tree = pytree.flatten(xs)
    # the loop runs where its arrays live: a carry of Python scalars takes the device of xs
    device = _control._device_of(pytree.flatten(init)[0] + x_leaves)
    carry_nodes, carry_tree, device, _ = _control._carry(init, "scan", device)
    x_nodes = [_control._leaf_node(x, device, "scan") for x in x_leaves]
    n = _length(x_nodes, pytree.paths(x_tree, "xs"), length, where)
    steps_per_trip = _unroll_count(unroll, n)
    body, carry_nodes = _trace(f, carry_nodes, carry_tree, x_nodes, x_tree, device, where)
    arrays = lambda nodes: [Array(x) for x in nodes]  # noqa: E731
    captured = list(body.captured)
    c, ys = _loop(body, arrays(carry_nodes), arrays(x_nodes), arrays(captured), n, bool(reverse),
                  steps_per_trip, device)
    if transforming() and can_mark():
        rules = _Rules(body, n, bool(reverse), steps_per_trip, device)
        call = CustomCall(carry_nodes + x_nodes + captured, [], rules.vjp, rules.jvp, "pt.scan")
        c = [Array(mark(call, a._node)) for a in c]
        ys = [Array(mark(call, a._node)) for a in ys]
    return pytree.unflatten(carry_tree, c), pytree.unflatten(body.y_tree, ys)


def _is_float(x) -> bool:
    return x.dtype.kind == "f"


class _Rules:
    """The derivative rules of one scan call (see the module docstring), over the call's
    arguments: carry leaves, xs leaves, then the captured values."""

    def __init__(self, body: ScanBody, length: int, reverse: bool, unroll: int, device: str):
        self.body, self.length, self.reverse, self.unroll, self.device = body, length, reverse, unroll, device

    def _split(self, values: list) -> tuple[list, list, list]:
        nc, nx = self.body.n_carry, self.body.n_x
        return list(values[:nc]), list(values[nc:nc + nx]), list(values[nc + nx:])

    def _scan(self, f, init, xs):
        return scan(f, init, xs, length=self.length, reverse=self.reverse, unroll=self.unroll)

    def jvp(self, args: list, tangents: list) -> list:
        body, dev = self.body, self.device
        carry, xs, cap = self._split(args)
        t_carry, t_xs, t_cap = self._split(tangents)
        t_carry, t_xs = filled(t_carry, carry), filled(t_xs, xs)
        nc = body.n_carry

        def step(state, inp):
            (c, tc), (x, tx) = state, inp
            res, touts = jvp_flat(lambda *v: _flat_step(body, v, dev), list(c) + list(x) + cap,
                                  list(tc) + list(tx) + t_cap, "scan")
            touts = filled(touts, res)
            return (res[:nc], touts[:nc]), (res[nc:], touts[nc:])

        (_, t_final), (_, t_ys) = self._scan(step, (carry, t_carry), (xs, t_xs))
        return list(t_final) + list(t_ys)

    def vjp(self, args: list, residuals: list, cts: list) -> list:
        body, dev = self.body, self.device
        carry, xs, cap = self._split(args)
        nc, nx = body.n_carry, body.n_x

        def forward(c, x):          # the carry entering each step, stacked
            return body.call(c, x, cap, dev)[0], list(c)

        _, entering = self._scan(forward, carry, xs)
        ct_carry = filled(list(cts[:nc]), carry)
        ct_ys = [ct if ct is not None else zeros((self.length,) + a.shape, a.dtype, dev)
                 for ct, a in zip(cts[nc:], body.y_avals)]
        y_float = [_is_float(a) for a in body.y_avals]
        diff = [_is_float(v) for v in carry + xs + cap]

        def backward(state, inp):
            ct_c, ct_cap = state
            c, x, ct_y = inp
            _, pull = vjp_flat(lambda *v: _flat_step(body, v, dev), list(c) + list(x) + cap, "scan", diff)
            got = pull([g if _is_float(v) else None for g, v in zip(ct_c, c)]
                       + [g if f else None for g, f in zip(ct_y, y_float)])
            new_c = filled(got[:nc], c)
            ct_x = filled(got[nc:nc + nx], x)
            new_cap = [a if g is None else a + g for a, g in zip(ct_cap, got[nc + nx:])]
            return (new_c, new_cap), ct_x

        rev = _Rules(body, self.length, not self.reverse, self.unroll, dev)
        (ct_init, ct_cap), ct_xs = rev._scan(backward, (ct_carry, [zeros_like(v) for v in cap]),
                                             (entering, xs, ct_ys))
        return list(ct_init) + list(ct_xs) + list(ct_cap)


def _flat_step(body: ScanBody, values, device: str) -> list:
    """One step over a flat list (carry, x, captured): the new carry and y, flat."""
    nc, nx = body.n_carry, body.n_x
    c, y = body.call(values[:nc], values[nc:nc + nx], values[nc + nx:], device)
    return list(c) + list(y)

