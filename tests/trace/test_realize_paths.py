"""The eager realize's fast paths keep its behaviour: lazy.Walk recurses down to a depth and walks
what lies deeper with a loop (both give the same leaves, equations, key and operand-use counts; a
walk that runs out of Python stack starts over with the loop), a held intermediate is stored as one
more output without a second walk, and a replayed recipe records the user's line."""
from __future__ import annotations

import sys

import numpy as np

import poot as pt
from poot.trace import lazy, walk
from tests.tolerance import assert_close


def _graph():
    x = pt.asarray(np.linspace(0.0, 1.0, 12).reshape(3, 4))
    y = pt.asarray(np.arange(4.0))
    s = x * y + x                # x read twice, y once
    return [(s.sum(axis=0) / (s * s).sum())._node, (s - 1.0)._node]


def test_recursive_and_iterative_walks_agree(monkeypatch):
    roots = _graph()
    fast = lazy.Walk(roots)
    monkeypatch.setattr(walk, "_RECURSIVE_DEPTH", 0)       # everything below the roots: the loop
    slow = lazy.Walk(roots)
    assert fast.key == slow.key
    assert fast.nodes == slow.nodes and fast.leaves == slow.leaves
    assert fast.uses == slow.uses
    assert sum(fast.uses) == sum(1 for n in fast.nodes for i in n.inputs if i.op is not None)
    inside = lazy.Walk(roots, {id(n) for n in fast.nodes})   # a traced body's walk: the loop only
    assert inside.key == fast.key and inside.uses == fast.uses


def test_realize_stores_a_held_intermediate_once():
    xn = np.linspace(0.5, 2.0, 16)
    x = pt.asarray(xn)
    held = pt.exp(x) * 2.0           # something outside the realize refers to it
    out = (held + 1.0).sum()
    assert_close(out.numpy(), (np.exp(xn) * 2.0 + 1.0).sum(), np.float64, ops=20)
    assert held.is_realized          # computed as one more output of the same program
    assert_close(held.numpy(), np.exp(xn) * 2.0, np.float64, ops=4)


def test_walk_out_of_stack_starts_over_with_the_loop(monkeypatch):
    xn = np.linspace(-1.0, 1.0, 8)
    x = pt.asarray(xn)
    y, yn = x, xn
    for _ in range(400):
        y, yn = y * 0.999 + 0.001, yn * 0.999 + 0.001
    monkeypatch.setattr(walk, "_RECURSIVE_DEPTH", 10**6)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        w = lazy.Walk([y._node])
    finally:
        sys.setrecursionlimit(limit)
    assert len(w.nodes) == 800 and w.uses[:-1] == [1] * 799 and w.uses[-1] == 0
    assert_close(y.numpy(), yn, np.float64, ops=800)


def test_replayed_recipes_record_the_users_line():
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    lines = []
    for _ in range(3):             # the first call records the recipe, the next ones replay it
        y = pt.sum(x, axis=0); lines.append(sys._getframe().f_lineno)  # noqa: E702 (one line)
        z = pt.linalg.vector_norm(y)
        assert y._node.where == (__file__, lines[-1])
        assert z._node.where[0] == __file__ and z._node.where[1] == lines[-1] + 1
        assert_close(z.numpy(), np.linalg.norm(np.arange(6.0).reshape(2, 3).sum(axis=0)), np.float64, ops=8)


def test_walk_key_is_the_graph_key_and_nodes_keep_their_signatures():
    from poot.graph.ir import eqn_signature

    x = pt.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(2):          # the second pass replays the recipes the first one recorded
        y = pt.roll(x, 1, axis=1)[1:] * 2.0 + pt.sum(x, axis=0) - x[:2].astype(pt.float32)
    w = lazy.Walk([y._node])
    assert w.key == w.graph().key()          # the walk's key finds the program the graph compiles to
    assert all(n.sig == eqn_signature(n.op, n.params, n.aval) for n in w.nodes)
    again = lazy.Walk([y._node])             # signatures kept on the nodes: the same key
    assert again.key == w.key


def test_joins_of_one_dtype_and_of_mixed_dtypes_promote_as_numpy():
    parts = [np.float32(1.5), np.float32(-2.0), np.float32(3.25)]
    s = pt.stack([pt.asarray(p) for p in parts])
    assert s.dtype == pt.float32 and s.numpy().tolist() == [1.5, -2.0, 3.25]
    mixed = pt.stack([pt.asarray(np.int32(3)), pt.asarray(np.float32(0.5))])
    assert mixed.dtype == pt.float64 and mixed.numpy().tolist() == [3.0, 0.5]
    c = pt.concatenate([pt.asarray(np.arange(3, dtype=np.int16)), pt.asarray(np.ones(2, np.uint8))])
    assert c.dtype == pt.int16 and c.numpy().tolist() == [0, 1, 2, 1, 1]
