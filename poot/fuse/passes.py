"""Graph passes run before planning: canonicalize, fold constants, CSE, DCE.

Each pass maps a Graph to a new Graph with the same inputs and outputs (a rewritten output may become
an alias of another variable). None of them reassociates floating-point arithmetic.
"""
from __future__ import annotations

import numpy as np

from poot.graph import Eqn, Graph, Var
from poot.graph.ir import _freeze
from poot.graph.registry import OPS, Fusion
from poot.fuse.attention import claim_attention
from poot.fuse.row_products import read_transposed_in_place

# shapes up to this many elements are folded when every input is a constant
_FOLD_LIMIT = 1


def optimize(graph: Graph) -> Graph:
    """The pipeline the planner runs: canonicalize and fold, then CSE, then DCE."""
    # attention.py: hand-written attention; row_products.py: x @ w.T for one row reads w in place
    return dce(cse(read_transposed_in_place(claim_attention(fold_and_canonicalize(graph)))))


def _rebuild(graph: Graph, eqns: list[Eqn], subst: dict[int, Var]) -> Graph:
    outs = [subst.get(v.id, v) for v in graph.outputs]
    return Graph(graph.inputs, eqns, outs)


def fold_and_canonicalize(graph: Graph) -> Graph:
    """Drop identity movement/casts, collapse movement chains, fold ops whose inputs are constants."""
    subst: dict[int, Var] = {}
    producer: dict[int, Eqn] = {}
    eqns: list[Eqn] = []
    for e in graph.eqns:
        new = Eqn(e.op, tuple(subst.get(v.id, v) for v in e.inputs), e.params, e.out, e.where)
        while True:                        # rewrite until nothing applies
            step = _canonical(new, new.inputs, producer)
            if step is None or isinstance(step, Var):
                break
            new = step
        if isinstance(step, Var):          # the equation is the identity of one of its inputs
            subst[e.out.id] = step
            continue
        folded = _fold(new, producer)
        if folded is not None:
            new = folded
        producer[new.out.id] = new
        eqns.append(new)
    return _rebuild(graph, eqns, subst)


def _canonical(e: Eqn, ins: tuple[Var, ...], producer: dict[int, Eqn]):
    """Return an input Var if `e` is an identity, a rewritten Eqn, or None to keep `e` as is."""
    op, p = e.op, e.params
    x = ins[0] if ins else None
    if op in ("reshape", "broadcast") and x.aval.shape == e.out.aval.shape:
        return x
    if op == "convert" and x.aval.dtype is p["dtype"]:
        return x
    if op == "transpose" and tuple(p["perm"]) == tuple(range(len(p["perm"]))):
        return x
    if op == "slice" and all(s == 0 and st == 1 for s, st in zip(p["starts"], p["steps"])) \
            and tuple(p["sizes"]) == x.aval.shape:
        return x
    if op == "pad" and all(lo == 0 and hi == 0 for lo, hi in p["widths"]):
        return x
    src = producer.get(x.id) if x is not None else None
    if op == "reshape" and src is not None and src.op == "reshape":   # reshape of reshape
        inner = src.inputs[0]
        if inner.aval.shape == e.out.aval.shape:
            return inner
        return Eqn("reshape", (inner,), p, e.out, e.where)
    if op == "transpose" and src is not None and src.op == "transpose":
        inner_perm, perm = src.params["perm"], p["perm"]
        return Eqn("transpose", src.inputs, {"perm": tuple(inner_perm[i] for i in perm)}, e.out, e.where)
    if op == "convert" and src is not None and src.op == "convert":
        # a widening convert followed by another convert: read the original directly when the
        # intermediate type holds every value of the source exactly
        mid, inner = src.out.aval.dtype, src.inputs[0]
        if _exactly_holds(mid, inner.aval.dtype):
            if inner.aval.dtype is p["dtype"]:
                return inner
            return Eqn("convert", (inner,), p, e.out, e.where)
    return None


def _exactly_holds(wide, narrow) -> bool:
    if wide is narrow:
        return True
    if narrow.kind == "b":
        return True
    if wide.kind == "f" and narrow.kind == "f":
        return wide.bits > narrow.bits and not (narrow.name == "bfloat16" and wide.name == "float16")
    if wide.kind in "iu" and narrow.kind in "iu":
        if wide.kind == narrow.kind:
            return wide.bits >= narrow.bits
        return wide.kind == "i" and wide.bits > narrow.bits
    if wide.kind == "f" and narrow.kind in "iu":
        mant = {16: 11, 32: 24, 64: 53}[wide.bits] if wide.name != "bfloat16" else 8
        return narrow.bits <= mant
    return False


def _fold(e: Eqn, producer: dict[int, Eqn]):
    """Fold an elementwise op or a movement of constants (`full` with a scalar value) into a `full`."""
    if e.op == "full" or not e.inputs:
        return None
    srcs = [producer.get(v.id) for v in e.inputs]
    if not all(s is not None and s.op == "full" for s in srcs):
        return None
    fusion = OPS[e.op].fusion
    if fusion not in (Fusion.ELEMENTWISE, Fusion.MOVEMENT):
        return None
    if fusion is Fusion.MOVEMENT:
        # movement rearranges copies of one value; pad and concatenate may bring in others
        # (compared frozen, by bits: a set of the values themselves would take -0.0 for 0.0)
        values = [s.params["value"] for s in srcs] + ([e.params["value"]] if e.op == "pad" else [])
        if len({_freeze(v) for v in values}) != 1:
            return None
        value = srcs[0].params["value"]
    else:
        scalars = [np.full((), s.params["value"], dtype=s.params["dtype"].np) for s in srcs]
        with np.errstate(all="ignore"):
            r = OPS[e.op].oracle(scalars, **e.params)
        value = np.asarray(r).reshape(()).item()
    return Eqn("full", (), {"shape": e.out.aval.shape, "value": value, "dtype": e.out.aval.dtype},
               e.out, e.where)


def cse(graph: Graph) -> Graph:
    """Common-subexpression elimination: one equation per (op, inputs, params)."""
    seen: dict[tuple, Var] = {}
    subst: dict[int, Var] = {}
    eqns = []
    for e in graph.eqns:
        ins = tuple(subst.get(v.id, v) for v in e.inputs)
        key = (e.op, tuple(v.id for v in ins), _freeze(e.params), e.out.aval)
        hit = seen.get(key)
        if hit is not None:
            subst[e.out.id] = hit
            continue
        seen[key] = e.out
        eqns.append(e if ins == e.inputs else Eqn(e.op, ins, e.params, e.out, e.where))
    return _rebuild(graph, eqns, subst)


def dce(graph: Graph) -> Graph:
    """Drop equations whose results no output needs."""
    live = {v.id for v in graph.outputs}
    keep = []
    for e in reversed(graph.eqns):
        if e.out.id in live:
            keep.append(e)
            live.update(v.id for v in e.inputs)
    keep.reverse()
    return Graph(graph.inputs, keep, graph.outputs)


def split_wide_concatenates(graph: Graph, limit: int) -> Graph:
    """Each concatenate of more than `limit` operands becomes a tree of concatenates of at most
    `limit` each (the same values in the same order). A kernel binds one buffer per value it loads,
    and a device may bind only so many: `pt.stack` of the 40 losses a training loop kept would need
    40; as a tree, the planner stores the inner concatenates and every kernel fits."""
    if limit < 2 or not any(e.op == "concatenate" and len(e.inputs) > limit for e in graph.eqns):
        return graph
    eqns: list[Eqn] = []
    for e in graph.eqns:
        ins = list(e.inputs)
        while e.op == "concatenate" and len(ins) > limit:
            groups = [ins[k:k + limit] for k in range(0, len(ins), limit)]
            ins = []
            for grp in groups:
                if len(grp) == 1:
                    ins.append(grp[0])
                    continue
                out = Var(OPS["concatenate"].shape_rule([v.aval for v in grp], **e.params))
                eqns.append(Eqn("concatenate", tuple(grp), e.params, out, e.where))
                ins.append(out)
        eqns.append(Eqn(e.op, tuple(ins), e.params, e.out, e.where) if len(ins) != len(e.inputs) else e)
    return Graph(graph.inputs, eqns, list(graph.outputs))

