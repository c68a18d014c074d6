"""A tiny graph-building helper for fuse/jit tests that must not depend on the trace layer."""
from __future__ import annotations

from poot import dtypes as dt
from poot.graph import Aval, Eqn, Graph, Var
from poot.graph.ops import OPS


class G:
    def __init__(self):
        self.inputs, self.eqns = [], []

    def input(self, shape, dtype=dt.float32) -> Var:
        v = Var(Aval(tuple(shape), dtype))
        self.inputs.append(v)
        return v

    def op(self, name, *ins, **params) -> Var:
        out = Var(OPS[name].shape_rule([v.aval for v in ins], **params))
        self.eqns.append(Eqn(name, ins, params, out))
        return out

    def const(self, value, dtype=dt.float32, shape=()) -> Var:
        return self.op("full", shape=tuple(shape), value=value, dtype=dtype)

    def graph(self, *outs) -> Graph:
        g = Graph(self.inputs, self.eqns, list(outs))
        g.validate()
        return g


def softmax(g: G, x: Var, axis: int = -1) -> Var:
    ax = axis % x.aval.ndim
    m = g.op("reduce_max", x, axes=(ax,))
    e = g.op("exp", g.op("sub", x, m))
    s = g.op("reduce_sum", e, axes=(ax,))
    return g.op("div", e, s)


def layer_norm(g: G, x: Var, eps: float = 1e-5) -> Var:
    ax = x.aval.ndim - 1
    n = x.aval.shape[ax]
    mean = g.op("mul", g.op("reduce_sum", x, axes=(ax,)), g.const(1.0 / n))
    d = g.op("sub", x, mean)
    var = g.op("mul", g.op("reduce_sum", g.op("mul", d, d), axes=(ax,)), g.const(1.0 / n))
    rstd = g.op("div", g.const(1.0), g.op("sqrt", g.op("add", var, g.const(eps))))
    return g.op("mul", d, rstd)
