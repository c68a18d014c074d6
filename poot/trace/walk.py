"""The walk of a lazy graph: the pending equations below some roots, numbered in post-order.

Every realize and every trace walks its graph once, so this is on the hot path of an eager program:
the walk builds the structural key a cached program is found by (poot.graph.ir.structural_key)
without building the Graph itself, and counts each equation's operand uses as it goes (what
lazy._live_intermediates needs), so no second pass over the nodes is made.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from poot.graph import Eqn, Graph, Var
from poot.graph.ir import _freeze, eqn_signature, structural_key

if TYPE_CHECKING:
    from poot.trace.lazy import Node


class Walk:
    """The pending equations below some roots, met once each in post-order (inputs first).
    `leaves`: the graph inputs in order (a realized buffer or an abstract placeholder, and, under
    `inside`, any node outside it; leaves sharing one buffer and aval are one input); `nodes`: the
    equation nodes in order; `key`: the structural key of the graph they make (graph.ir.eqn_key:
    input k is numbered ~k, equation j is j), so a cached program is found without building it."""

    __slots__ = ("leaves", "nodes", "key", "uses", "num")

    def __init__(self, roots, inside: set | None = None):
        self.leaves: list[Node] = []
        self.nodes: list[Node] = []
        self.uses: list[int] = []       # per equation: the operand slots of later equations reading it
        num: dict[int, int] = {}
        parts: list = []
        if inside is None:
            try:
                self._recursive(roots, num, {}, parts)
            except RecursionError:      # called from deep inside the user's recursion: start over
                self.leaves, self.nodes, self.uses, num, parts = [], [], [], {}, []
                self._iterative(roots, inside, num, {}, parts)
        else:
            self._iterative(roots, inside, num, {}, parts)
        self.num = num                  # id of a node met -> its number (add_outputs reads it)
        self.key = structural_key([n.aval for n in self.leaves], parts, [num[id(r)] for r in roots])

    def _recursive(self, roots, num: dict, buf_num: dict, parts: list) -> None:
        """The walk as a recursive visit, each node met once: up to twice as fast as the loop. A
        subgraph more than _RECURSIVE_DEPTH calls down is walked by the loop (the same order)."""
        leaves, nodes, uses = self.leaves, self.nodes, self.uses
        num_get = num.get
        iterative = self._iterative
        # the lists' appends bound once, not looked up on every node
        nodes_append, uses_append, parts_append = nodes.append, uses.append, parts.append

        def visit(n: Node, level: int) -> int:
            numbers = []
            for i in n.inputs:
                j = num_get(id(i))
                if j is None:
                    if i.op is None:
                        j = _number_leaf(i, num, buf_num, leaves)
                    elif level < _RECURSIVE_DEPTH:
                        j = visit(i, level + 1)
                    else:
                        iterative([i], None, num, buf_num, parts)
                        j = num[id(i)]
                if j >= 0:
                    uses[j] += 1
                numbers.append(j)
            k = num[id(n)] = len(nodes)
            nodes_append(n)
            uses_append(0)
            sig = n.sig
            if sig is None:         # graph.ir.eqn_signature, built here: see _signature
                params, aval = n.params, n.aval
                sig = n.sig = (n.op, _freeze(params) if params else (), aval.shape, aval.dtype.name)
            parts_append(sig)
            parts_append(tuple(numbers))
            return k

        try:
            for r in roots:
                if id(r) not in num:
                    if r.op is None:
                        _number_leaf(r, num, buf_num, leaves)
                    else:
                        visit(r, 0)
        finally:
            visit = None            # the closure refers to itself: break the cycle now, not at a GC

    def _iterative(self, roots, inside, num: dict, buf_num: dict, parts: list) -> None:
        """The walk as a loop over an explicit stack: chains of any depth work."""
        leaves, nodes, uses = self.leaves, self.nodes, self.uses
        stack = list(reversed(roots))
        push, pop = stack.append, stack.pop
        num_get = num.get
        while stack:
            n = stack[-1]
            k = id(n)
            if k in num:
                pop()
                continue
            if n.op is None or (inside is not None and k not in inside):
                pop()
                _number_leaf(n, num, buf_num, leaves)
                continue
            numbers = []                # operands in order, leaves numbered on the spot: the
            for i in n.inputs:          # depth-first order without a stack round trip per leaf
                j = num_get(id(i))
                if j is None:
                    if i.op is None or (inside is not None and id(i) not in inside):
                        j = _number_leaf(i, num, buf_num, leaves)
                    else:
                        push(i)
                        break
                numbers.append(j)
            else:
                pop()
                for j in numbers:
                    if j >= 0:
                        uses[j] += 1
                num[k] = len(nodes)
                nodes.append(n)
                uses.append(0)
                sig = n.sig
                if sig is None:
                    sig = n.sig = _signature(n)
                parts.append(sig)
                parts.append(tuple(numbers))

    def add_outputs(self, extra: list) -> None:
        """Make the pending nodes `extra`, all met by this walk, outputs too (after the roots'). A
        walk of the roots and `extra` would meet the same leaves and equations in the same order
        (each of `extra` is below a root), so only the key's output list changes: no second walk."""
        num = self.num
        self.key = self.key[:-1] + (self.key[-1] + tuple([num[id(n)] for n in extra]),)

    def graph(self) -> Graph:
        inputs = [Var(n.aval) for n in self.leaves]
        outs: list[Var] = []
        eqns = []
        for n, numbers in zip(self.nodes, self.key[2:-1:2]):    # each equation's operand numbers
            v = Var(n.aval)
            eqns.append(Eqn(n.op, tuple([inputs[~k] if k < 0 else outs[k] for k in numbers]), n.params, v,
                            _where_text(n.where)))
            outs.append(v)
        return Graph(inputs, eqns, [inputs[~k] if k < 0 else outs[k] for k in self.key[-1]])


_RECURSIVE_DEPTH = 100   # a walk's recursion goes this deep at most (Walk._recursive)


def _number_leaf(n: Node, num: dict, buf_num: dict, leaves: list) -> int:
    """A walk's number for leaf `n` (~k for the k-th graph input): leaves sharing one buffer and aval
    are one input. A module function, not a closure made per walk: a realize walks on every call."""
    b = n.buf
    same = buf_num.get(id(b)) if b is not None else None   # (aval, number)
    if same is not None and (same[0] is n.aval or same[0] == n.aval):
        num[id(n)] = same[1]
        return same[1]
    i = num[id(n)] = ~len(leaves)
    leaves.append(n)
    if b is not None and same is None:
        buf_num[id(b)] = (n.aval, i)
    return i


def _signature(n: Node) -> tuple:
    """The signature of pending node `n`'s equation, for a node that has none yet (one recorded, not
    replayed from a recipe, which gives its nodes theirs); the walk keeps it on the node. The
    recursive walk builds the same tuple inline: measured there, a call cost about 1.4 us against
    0.2 us alone (deep in a recursion, CPython 3.11 can allocate and free a frame-stack chunk around
    a call), more than the rest of the node's visit."""
    return eqn_signature(n.op, n.params, n.aval)


_where_texts: dict = {}


def _where_text(where) -> str:
    if where is None:
        return ""
    t = _where_texts.get(where)
    if t is None:
        if len(_where_texts) > 4096:
            _where_texts.clear()
        t = _where_texts[where] = f"{where[0]}:{where[1]}"
    return t


__all__ = ["Walk"]
