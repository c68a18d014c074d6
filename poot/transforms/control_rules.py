"""Derivative rules of the control constructs `cond`, `fori` and `while` (poot.graph.control).

A construct carries its bodies as subgraphs; `graph_call` records a subgraph's equations on Arrays,
so a body is an ordinary function the differentiation passes can trace. The derivative of a
construct is a construct of the same kind over the bodies' derivatives, recorded with pt.cond /
pt.fori_loop / pt.while_loop, so it too runs as one device-side branch or loop:

- cond: each branch's jvp (or vjp) in the matching branch;
- fori, forward mode: one loop carrying values and tangents;
- fori, reverse mode: a forward loop (`fori_forward`) that also stores each step's carry in a stack
  (one row per step, written with `scatter`), then a backward loop from the last step to the first
  that reads the carry back (`take`) and applies the body's pullback; the bounds are static, so the
  stack's size is known (the forward runs twice where the loop's own results are also used);
- while: forward mode only (the trip count is unknown when tracing, see nondiff.VJP_UNSUPPORTED).
"""
from __future__ import annotations

from poot.graph import Graph
from poot.trace import lazy
from poot.trace.array import Array
from poot.trace.control import cond as pt_cond
from poot.trace.control import fori_loop, while_loop

from .flat import filled, jvp_flat, vjp_flat
from .prims import bind, reshape, zeros, zeros_like


def graph_call(graph: Graph, arrays: list, device: str) -> list:
    """`graph`'s outputs, its equations recorded on `arrays` (one per graph input)."""
    env = {v.id: a._node for v, a in zip(graph.inputs, arrays)}
    for e in graph.eqns:
        env[e.out.id] = lazy.record(e.op, tuple(env[v.id] for v in e.inputs), e.params, device)
    return [Array(env[v.id]) for v in graph.outputs]


def _device(primals: list) -> str:
    return primals[0].device


# --- cond ---------------------------------------------------------------------------------------
def _cond_jvp(primals, tangents, outs, region):
    pred, ops = primals[0], primals[1:]
    dev = _device(primals)
    t_ops = filled(list(tangents[1:]), ops)

    def branch(g):
        def run(xs, ts):
            res, touts = jvp_flat(lambda *v: graph_call(g, list(v), dev), list(xs), list(ts), "cond")
            return filled(touts, res)
        return run

    f, t = region.graphs
    return list(pt_cond(pred, branch(t), branch(f), ops, t_ops))


def _cond_vjp(cts, primals, outs, region):
    pred, ops = primals[0], primals[1:]
    dev = _device(primals)
    full = filled(cts, outs)

    def branch(g):
        def run(xs, cs):
            _, pull = vjp_flat(lambda *v: graph_call(g, list(v), dev), list(xs), "cond")
            return filled(pull([c if o.dtype.kind == "f" else None for c, o in zip(cs, outs)]), xs)
        return run

    f, t = region.graphs
    return [None] + list(pt_cond(pred, branch(t), branch(f), ops, full))


# --- fori ---------------------------------------------------------------------------------------
def _fori_jvp(primals, tangents, outs, region):
    n = len(region.out_avals)
    carry, captured = list(primals[:n]), list(primals[n:])
    t_carry = filled(list(tangents[:n]), carry)
    t_cap = list(tangents[n:])
    (body,) = region.graphs
    dev = _device(primals)

    def step(i, state):
        c, tc = state
        res, touts = jvp_flat(lambda *v: graph_call(body, [i] + list(v), dev), c + captured,
                              list(tc) + t_cap, "fori_loop")
        return (res, filled(touts, res))

    _, t_final = fori_loop(region.lower, region.upper, step, (carry, t_carry))
    return list(t_final)


def row(stack: Array, k: Array) -> Array:
    """Row `k` (a 0-d int64) of `stack`."""
    got = bind("take", stack, reshape(k, (1,)), axis=0)
    return reshape(got, stack.shape[1:])


def set_row(stack: Array, k: Array, value: Array) -> Array:
    """`stack` with row `k` (a 0-d int64) set to `value`."""
    return bind("scatter", stack, reshape(k, (1,)), reshape(value, (1,) + value.shape), mode="set")


def fori_forward(primals, region):
    """The loop run forward once, storing each step's carry in a stack (one row per step): the
    results, and the stacks the reverse rule reads back."""
    n = len(region.out_avals)
    carry, captured = list(primals[:n]), list(primals[n:])
    lower, upper = region.lower, region.upper
    (body,) = region.graphs
    dev = _device(primals)
    stacks = [zeros((max(upper - lower, 1),) + c.shape, c.dtype, c.device) for c in carry]

    def forward(i, state):
        c, st = state
        st = [set_row(s, i - lower, x) for s, x in zip(st, c)]
        return (graph_call(body, [i] + list(c) + captured, dev), st)

    final, stacks = fori_loop(lower, upper, forward, (carry, stacks))
    return list(final), list(stacks)


def _fori_vjp(cts, primals, outs, region):
    n = len(region.out_avals)
    carry, captured = list(primals[:n]), list(primals[n:])
    lower, upper = region.lower, region.upper
    steps = upper - lower
    if steps <= 0:
        return list(cts) + [None] * len(captured)
    (body,) = region.graphs
    dev = _device(primals)
    stacks = fori_forward(primals, region)[1]
    floats = [c.dtype.kind == "f" for c in carry]

    def backward(j, state):
        ct_c, ct_cap = state
        i = (upper - 1) - j
        xs = [row(s, i - lower) for s in stacks]
        _, pull = vjp_flat(lambda *v: graph_call(body, [i] + list(v), dev), xs + captured, "fori_loop")
        got = pull([c if f else None for c, f in zip(ct_c, floats)])
        new_c = filled(got[:n], xs)
        new_cap = [a if g is None else a + g for a, g in zip(ct_cap, got[n:])]
        return (new_c, new_cap)

    ct_init = filled(list(cts), carry)
    ct_c, ct_cap = fori_loop(0, steps, backward, (ct_init, [zeros_like(c) for c in captured]))
    return list(ct_c) + list(ct_cap)


# --- while --------------------------------------------------------------------------------------
def _while_jvp(primals, tangents, outs, region):
    n = len(region.out_avals)
    carry, captured = list(primals[:n]), list(primals[n:])
    t_carry = filled(list(tangents[:n]), carry)
    t_cap = list(tangents[n:])
    cond_g, body = region.graphs
    dev = _device(primals)

    def keep_going(state):
        return graph_call(cond_g, list(state[0]) + captured, dev)[0]

    def step(state):
        c, tc = state
        res, touts = jvp_flat(lambda *v: graph_call(body, list(v), dev), list(c) + captured,
                              list(tc) + t_cap, "while_loop")
        return (res, filled(touts, res))

    _, t_final = while_loop(keep_going, step, (carry, t_carry))
    return list(t_final)


JVP = {"cond": _cond_jvp, "fori": _fori_jvp, "while": _while_jvp}
VJP = {"cond": _cond_vjp, "fori": _fori_vjp}
