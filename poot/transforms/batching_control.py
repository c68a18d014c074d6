"""Batching rules of the control constructs (poot/graph/control.py): cond, fori and while.

A construct's bodies are subgraphs; batching one re-traces it through `pt.cond`, `pt.fori_loop` or
`pt.while_loop` with Python functions that run the subgraph batched (`BatchContext.eval_graph`), so the
result is again one construct on the device, never unrolled. What cannot stay one construct per batch
is turned into masking, as JAX does:
- `cond` with a batched predicate runs both branches and selects per example (a branch that may trap
  runs an example that does not take it on a taking example's operands, so it cannot trap for it; a
  branch whose derivative may be infinite passes operand cotangents on only for the examples taking it);
- `while` with a batched predicate runs until every example is done; an example that is done keeps
  its carry (the body's result is selected away; a body that may trap runs it on a running example's
  carry instead of its own, as a cond branch does).
Loop carries are batched where the body makes them depend on a batched value (a fixed point over the
body's dependencies), so an unbatched counter stays a scalar.

A construct with k results is k equations (one per `index`); the rule batches the construct once per
application (memoized) and returns the result asked for.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.graph.registry import get
from poot.trace import control, lazy
from poot.trace.array import Array
from poot.transforms.batching_core import (BatchContext, batched_outputs, force, front_if_batched,
                                           names_axis, record, to_front)
from poot.transforms.batching_rules import elementwise

_select = elementwise("select")


def _once(kind: str, batch_all):
    def rule(ctx: BatchContext, nodes, dims, region, index):
        key = (kind, id(region), tuple(map(id, nodes)), dims)
        outs = ctx.memoized(key, lambda: batch_all(ctx, list(nodes), list(dims), region), (region, nodes))
        return outs[index]
    return rule


def _carry_flags(body, carry_flags: list[bool], fixed: list[bool], first: list[bool]) -> list[bool]:
    """The carries a loop body makes batched: start from the batched initial values and add each
    carry whose new value depends on a batched one, until nothing changes."""
    flags = list(carry_flags)
    while True:
        out = batched_outputs(body, first + flags + fixed)
        new = [a or b for a, b in zip(flags, out)]
        if new == flags:
            return flags
        flags = new


def _run(ctx: BatchContext, graph, values, flags):
    """`graph` run batched on `values`, its results shaped as `flags` says (batched at the front
    or unbatched): what a branch or loop body must return so that every trip has one type."""
    return tuple(Array(force(ctx, n, d, f)) for (n, d), f in zip(ctx.eval_graph(graph, values), flags))


def _as_pairs(arrays, flags):
    return [(a._node, 0 if f else None) for a, f in zip(arrays, flags)]


# --- cond ----------------------------------------------------------------------------------------
def _cond_all(ctx, nodes, dims, region):
    false_g, true_g = region.graphs
    pred, pred_dim = nodes[0], dims[0]
    operands = list(zip(nodes[1:], dims[1:]))
    if pred_dim is not None:    # each example takes its own branch: compute both, select
        return _cond_both(ctx, region, to_front(ctx, pred, pred_dim), operands)
    in_flags = [d is not None for d in dims[1:]]
    flags = [a or b for a, b in zip(batched_outputs(false_g, in_flags), batched_outputs(true_g, in_flags))]
    moved = [front_if_batched(ctx, n, d) for n, d in operands]
    arg_flags = [d is not None for _, d in moved]

    def branch(graph):
        return lambda *arrays: _run(ctx, graph, _as_pairs(arrays, arg_flags), flags)

    results = control.cond(Array(pred), branch(true_g), branch(false_g), *[Array(n) for n, _ in moved])
    return _as_pairs(results, flags)


_SAFE_KINDS = frozenset({"elementwise", "source", "reduce", "argreduce", "scan", "movement", "contraction",
                         "attention", "sample", "qmatmul"})


# ops of other kinds that cannot fail: the collectives over a vmap axis are host ops only to fail
# where one escapes its vmap (poot/graph/collective.py); a batched cond must run them on every
# example's own operands, as the sum over the examples they stand for does
_SAFE_OPS = frozenset({"update_slice", "psum", "pmax", "pmin", "axis_index"})


def _may_trap(graph) -> bool:
    """Whether running `graph` can fail on some operand values: an index (`take`, `scatter`) out of
    range, a host op (a factorization of a matrix it does not accept), in a nested body too."""
    for eqn in graph.eqns:
        op = get(eqn.op)
        if op.kind == "control":
            if any(_may_trap(g) for g in eqn.params["region"].graphs):
                return True
        elif op.kind not in _SAFE_KINDS and eqn.op not in _SAFE_OPS:
            return True
    return False


# Elementwise ops whose derivative is finite wherever their operands are: a branch of only these
# cannot turn an untaken example's zero cotangent into NaN (0 * inf) under reverse mode.
_SMOOTH_OPS = frozenset({"abs", "add", "and", "ceil", "convert", "copysign", "cos", "eq", "erf", "floor", "ge",
                         "gt", "isfinite", "isinf", "isnan", "le", "logical_not", "lt", "max", "min", "mul", "ne",
                         "neg", "or", "round", "select", "sign", "sin", "sub", "tanh", "trunc", "xor",
                         "bitwise_not", "shl", "shr", "psum", "pmax", "pmin", "axis_index"})
_SMOOTH_KINDS = frozenset({"source", "argreduce", "movement", "contraction"})


def _may_blow_up(graph) -> bool:
    """Whether `graph` has an op whose derivative can be infinite or NaN at finite operands (log, sqrt,
    div, exp...), in a nested body too. Reverse mode through a per-example select multiplies the
    untaken branch's zero cotangent by that derivative, so such a branch's operand cotangents must be
    selected per example (`_masked`)."""
    for eqn in graph.eqns:
        op = get(eqn.op)
        if op.kind == "control":
            if any(_may_blow_up(g) for g in eqn.params["region"].graphs):
                return True
        elif op.kind == "reduce":
            if eqn.op == "reduce_prod":
                return True
        elif op.kind not in _SMOOTH_KINDS and eqn.op not in _SMOOTH_OPS:
            return True
    return False


def _cond_both(ctx, region, pred, operands):
    """A cond whose predicate differs per example: both branches run for every example and the
    predicate selects. A branch that may trap is guarded (`_guarded`), so an example that does not
    take it cannot raise an error the unbatched cond would not (x[i] guarded by `i < len(x)`). A
    branch whose derivative may be infinite reads its operands through `_masked`, so an example that
    does not take it gets no NaN from it in reverse mode (-p * log(p) guarded by `p > 0`); no device
    cond is added for that, so the batch stays one fused select."""
    false_g, true_g = region.graphs
    not_pred = record("logical_not", (pred,))
    t = _branch(ctx, true_g, pred, operands, region.out_avals)
    f = _branch(ctx, false_g, not_pred, operands, region.out_avals)
    return [_select(ctx, (pred, tn, fn), (0, td, fd)) for (tn, td), (fn, fd) in zip(t, f)]


def _branch(ctx, graph, lanes, operands, out_avals):
    """One branch of `_cond_both` run for every example; `lanes` (bool (B,)) are those taking it.
    A branch with a collective over this vmap's axis runs on every example's own operands: the psum
    it holds adds every example's value, as the select JAX makes of such a cond does."""
    if ctx.axis_name is not None and any(names_axis(e, ctx.axis_name) for e in graph.eqns):
        return ctx.eval_graph(graph, operands)
    if ctx.size and _may_trap(graph):
        return _guarded(ctx, graph, lanes, operands, out_avals)
    if ctx.size and _may_blow_up(graph):
        return ctx.eval_graph(graph, _masked(ctx, lanes, operands))
    return ctx.eval_graph(graph, operands)


def _masked(ctx, lanes, pairs):
    """`pairs` for a branch whose derivative may be infinite: each example outside `lanes` reads a
    lane's operands (`_on_lanes`), so the branch's derivatives for it are a lane's (finite where the
    lane's are: d/dw sqrt(w * x) of an unbatched w), and each batched float operand is read as
    `select(lanes, x, cut(that))`, `cut` a same-type bitcast (the value, no derivative): in reverse
    mode the select passes a cotangent on only for the examples taking the branch (as JAX, which
    transposes the cond first and selects the cotangents). Forward values of the lanes are unchanged."""
    moved = [front_if_batched(ctx, n, d) for n, d in pairs]
    subs = _on_lanes(ctx, lanes, moved)
    out = []
    for (n, d), (sub, _) in zip(moved, subs):
        if d is not None and n.aval.dtype.kind == "f":
            sub = _select(ctx, (lanes, n, record("bitcast", (sub,), dtype=n.aval.dtype)), (0, 0, 0))[0]
        out.append((sub, d))
    return out


def _guarded(ctx, graph, lanes, operands, out_avals):
    """`graph` run only on examples that take it (`lanes`, bool (B,)): the others run it on a
    taking example's operands (`_on_lanes`); when no example takes the branch, a device cond skips
    it. The selected examples still trap on a genuinely bad index."""
    anyone = record("reshape", (record("reduce_max", (lanes,), axes=(0,)),), shape=())
    moved = _on_lanes(ctx, lanes, operands)
    flags = [True] * len(out_avals)

    def run(*arrays):
        return _run(ctx, graph, _as_pairs(arrays, [d is not None for _, d in moved]), flags)

    def skip(*arrays):
        return tuple(Array(lazy.constant(0, a.dtype, lanes.device, (ctx.size,) + a.shape)) for a in out_avals)

    return _as_pairs(control.cond(Array(anyone), run, skip, *[Array(n) for n, _ in moved]), flags)


def _on_lanes(ctx, lanes, pairs):
    """`pairs` with every batched value front-batched and each example outside `lanes` (bool (B,))
    given the first lane's value: what runs for it is what a lane runs, so it fails only where a
    lane genuinely fails, and its result is selected away. Needs at least one lane (else: example 0)."""
    first = record("argmax", (record("convert", (lanes,), dtype=dt.int32),), axis=0)
    rows = lazy.record("iota", (), {"shape": (ctx.size,), "axis": 0, "dtype": dt.int64}, lanes.device)
    src = record("select", (lanes, rows, first))
    moved = [front_if_batched(ctx, n, d) for n, d in pairs]
    return [(n if d is None else record("take", (n, src), axis=0), d) for n, d in moved]


# --- fori ----------------------------------------------------------------------------------------
def _fori_all(ctx, nodes, dims, region):
    (body,) = region.graphs
    n = len(region.out_avals)
    captured = [front_if_batched(ctx, c, d) for c, d in zip(nodes[n:], dims[n:])]
    flags = _carry_flags(body, [d is not None for d in dims[:n]], [d is not None for _, d in captured], [False])
    init = tuple(Array(force(ctx, c, d, f)) for c, d, f in zip(nodes[:n], dims[:n], flags))

    def step(i, carry):
        return _run(ctx, body, [(i._node, None)] + _as_pairs(carry, flags) + captured, flags)

    return _as_pairs(control.fori_loop(region.lower, region.upper, step, init), flags)


# --- while ---------------------------------------------------------------------------------------
def _while_all(ctx, nodes, dims, region):
    cond_g, body = region.graphs
    n = len(region.out_avals)
    captured = [front_if_batched(ctx, c, d) for c, d in zip(nodes[n:], dims[n:])]
    fixed = [d is not None for _, d in captured]
    flags = _carry_flags(body, [d is not None for d in dims[:n]], fixed, [])
    pred_batched = batched_outputs(cond_g, flags + fixed)[0]
    if pred_batched:            # examples finish at different trips: every carry is per example
        flags = [True] * n
    init = tuple(Array(force(ctx, c, d, f)) for c, d, f in zip(nodes[:n], dims[:n], flags))
    if pred_batched and ctx.size == 0:      # an empty batch: no example runs a trip
        return _as_pairs(init, flags)

    def pred_of(carry):
        (p, pd), = ctx.eval_graph(cond_g, _as_pairs(carry, flags) + captured)
        return p, pd

    def cond_fun(carry):
        p, pd = pred_of(carry)
        if not pred_batched:
            return Array(p)
        anyone = record("reduce_max", (to_front(ctx, p, pd),), axes=(0,))
        return Array(record("reshape", (anyone,), shape=()))

    def body_fun(carry):
        if not pred_batched:
            return _run(ctx, body, _as_pairs(carry, flags) + captured, flags)
        p = to_front(ctx, *pred_of(carry))
        ins = _as_pairs(carry, flags) + captured
        if _may_trap(body):          # a finished example must not trap: it runs a running one's trip
            ins = _on_lanes(ctx, p, ins)
        new = _run(ctx, body, ins, flags)   # a finished example keeps its carry
        return tuple(Array(_select(ctx, (p, nw._node, old._node), (0, 0, 0))[0]) for nw, old in zip(new, carry))

    return _as_pairs(control.while_loop(cond_fun, body_fun, init), flags)


for _kind, _all in (("cond", _cond_all), ("fori", _fori_all), ("while", _while_all)):
    get(_kind).register(batch=_once(_kind, _all))
