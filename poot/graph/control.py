"""Control-flow primitives: `cond`, `while` and `fori`, each carrying its bodies as subgraphs.

A control construct has several results but an equation has one output, so a construct with k
results is k equations that share one `Region` (its subgraphs) and differ in `index`: equation i
yields result i. The planner runs the equations of one region as one step; dead results are dropped
by DCE like any value (the step still runs the whole construct). The operands of every equation are
the same:
- cond:  (pred, *operands)  -> branches[int(pred)](*operands); `graphs` = (false_branch, true_branch)
- while: (*carry, *captured) -> carry while cond(*carry, *captured); `graphs` = (cond, body)
- fori:  (*carry, *captured) -> body(i, *carry, *captured) for i in range(lower, upper), bounds static;
         `graphs` = (body,), whose first input is the 0-d int64 index
Each subgraph takes the construct's operands (after the predicate) as its inputs, in order; a body
returns the new carry, a while's cond a 0-d bool.
"""
from __future__ import annotations

import numpy as np

from poot.errors import ShapeError
from poot.graph.aval import Aval
from poot.graph.ir import Graph
from poot.graph.ops import _register

KINDS = ("cond", "while", "fori")


class Region:
    """The subgraphs and static parameters of one control construct (immutable, compared by
    structure so that equal constructs share compiled programs and CSE)."""

    __slots__ = ("kind", "graphs", "out_avals", "lower", "upper", "_key")

    def __init__(self, kind: str, graphs: tuple[Graph, ...], out_avals: tuple[Aval, ...],
                 lower: int = 0, upper: int = 0):
        assert kind in KINDS, kind
        self.kind, self.graphs, self.out_avals = kind, tuple(graphs), tuple(out_avals)
        self.lower, self.upper = lower, upper
        self._key = None

    def key(self) -> tuple:
        if self._key is None:
            self._key = (self.kind, self.lower, self.upper, self.out_avals,
                         tuple(g.key() for g in self.graphs))
        return self._key

    def __eq__(self, other) -> bool:
        return isinstance(other, Region) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __str__(self) -> str:
        sizes = "/".join(str(len(g.eqns)) for g in self.graphs)
        bounds = f" range({self.lower}, {self.upper})" if self.kind == "fori" else ""
        return f"<{self.kind}{bounds}: {sizes} eqns>"

    __repr__ = __str__


def _rule(avals, region: Region, index: int) -> Aval:
    if not 0 <= index < len(region.out_avals):
        raise ShapeError(f"{region.kind}: result {index} of {len(region.out_avals)}")
    return region.out_avals[index]


def evaluate_region(region: Region, xs: list[np.ndarray]) -> list[np.ndarray]:
    """The NumPy semantics of a construct (the oracle)."""
    from poot.graph.oracle import evaluate

    if region.kind == "cond":
        branch = region.graphs[1 if bool(np.asarray(xs[0])) else 0]
        return evaluate(branch, xs[1:])
    n = len(region.out_avals)
    carry, extra = list(xs[:n]), list(xs[n:])
    if region.kind == "while":
        cond, body = region.graphs
        while bool(evaluate(cond, carry + extra)[0]):
            carry = evaluate(body, carry + extra)
        return carry
    (body,) = region.graphs
    for i in range(region.lower, region.upper):
        carry = evaluate(body, [np.asarray(i, dtype=np.int64)] + carry + extra)
    return carry


def _oracle(xs, region: Region, index: int):
    return evaluate_region(region, list(xs))[index]


for _kind in KINDS:   # operands: cond's predicate and operands, or the carry and captured values
    _register(_kind, "control", _rule, _oracle, arity=None, params=("region", "index"))
