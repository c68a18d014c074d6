"""pt.tree_util (JAX's tree_flatten, tree_unflatten, tree_leaves, tree_structure, tree_map) over
poot's one pytree flattening: the same leaf order and structures as @pt.jit, grad and vmap use."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import poot as pt
from poot.trace import pytree
from poot.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten


class Point(NamedTuple):
    x: object
    y: object


@dataclasses.dataclass
class Layer:
    w: object
    b: object


TREES = [
    1.5,
    None,
    [],
    (),
    {},
    [1, (2, 3), {"b": 4, "a": [5, None, 6]}],
    {"z": Point(1, (2,)), "a": Layer(w=[3, 4], b=None)},
    ((1,), [[2]], {"k": ({"j": 3},)}),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    assert leaves == pytree.flatten(tree)[0]        # the same flattening as the transforms'
    assert treedef.num_leaves == len(leaves)
    back = tree_unflatten(treedef, leaves)
    assert back == tree and type(back) is type(tree)
    assert treedef.unflatten(leaves) == tree
    assert tree_structure(tree) == treedef and hash(tree_structure(tree)) == hash(treedef)
    assert tree_leaves(tree) == leaves


def test_leaf_order_and_structure_text():
    tree = {"b": [1, (2, 3)], "a": None, "c": Point(4, 5)}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5]                # dict keys sorted, None holds no leaf
    assert repr(treedef) == "PyTreeDef({'a': None, 'b': [*, (*, *)], 'c': Point(x=*, y=*)})"
    assert tree_structure([1, 2]) != tree_structure((1, 2))
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert tree_structure([1, [2]]) == tree_structure([9, [8]])


def test_unflatten_with_new_leaves_and_wrong_count():
    treedef = tree_structure({"w": 0, "b": (0, 0)})
    assert tree_unflatten(treedef, iter([10, 20, 30])) == {"b": (10, 20), "w": 30}
    with pytest.raises(pt.ShapeError, match="holds 3 leaves; got 2"):
        tree_unflatten(treedef, [1, 2])
    with pytest.raises(pt.ArgumentError, match="must be a PyTreeDef"):
        tree_unflatten(("not", "a treedef"), [1])


def test_arrays_are_leaves_and_tree_map_over_them():
    params = {"w": pt.asarray(np.ones((2, 2))), "b": pt.asarray(np.arange(2.0))}
    grads = {"w": pt.asarray(np.full((2, 2), 2.0)), "b": pt.asarray(np.array([1.0, -1.0]))}
    assert len(tree_leaves(params)) == 2
    new = pt.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    assert set(new) == {"w", "b"}
    np.testing.assert_allclose(new["w"].numpy(), np.zeros((2, 2)))
    np.testing.assert_allclose(new["b"].numpy(), [-0.5, 1.5])
    assert pt.tree_map is pt.tree_util.tree_map


def test_tree_map_several_trees_and_deeper_rest():
    assert tree_map(lambda a, b, c: a + b * c, [1, (2, 3)], [10, (20, 30)], [1, (2, 3)]) == [11, (42, 93)]
    # a later tree may hold a whole subtree where the first has a leaf (JAX's flatten_up_to)
    assert tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), {"k": 5}]) == [(1, (3, 4)), (2, {"k": 5})]
    assert tree_map(lambda a: a * 2, Layer(w=[1, 2], b=None)) == Layer(w=[2, 4], b=None)
    assert tree_map(lambda a: a, None) is None


def test_tree_map_mismatched_structures_are_named():
    with pytest.raises(pt.ShapeError, match=r"tree 1 does not have the first tree's structure at \[1\]"):
        tree_map(lambda a, b: a + b, [1, (2, 3)], [1, [2, 3]])
    with pytest.raises(pt.ShapeError, match=r"tree 2 has 3 children at the root"):
        tree_map(lambda a, b, c: a, [1, 2], [1, 2], [1, 2, 3])
    with pytest.raises(pt.ShapeError, match=r"at \['b'\]"):
        tree_map(lambda a, b: a, {"a": 1, "b": None}, {"a": 1, "b": 2})
    with pytest.raises(pt.ShapeError, match="structure at the root"):
        tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(pt.ArgumentError, match="f must be a function"):
        tree_map(3, [1])


def test_is_leaf_stops_the_flattening():
    tree = {"a": (1, 2), "b": [Point(3, 4), (5,)]}
    is_tuple = lambda x: type(x) is tuple    # noqa: E731  (NamedTuples go on being nodes)
    leaves, treedef = tree_flatten(tree, is_leaf=is_tuple)
    assert leaves == [(1, 2), 3, 4, (5,)]
    assert tree_unflatten(treedef, leaves) == tree
    assert tree_map(lambda t: sum(t) if isinstance(t, tuple) else -t, tree, is_leaf=is_tuple) == \
        {"a": 3, "b": [Point(-3, -4), 5]}
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tree_leaves(tree, is_leaf=lambda x: isinstance(x, dict)) == [tree]
    with pytest.raises(pt.ArgumentError, match="is_leaf must be a function"):
        tree_flatten(tree, is_leaf=True)


def test_tree_map_inside_jit_and_with_grad():
    @pt.jit
    def step(params, x):
        grads = pt.grad(lambda p: ((p["w"] * x).sum() + p["b"]) ** 2)(params)
        return pt.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    params = {"w": pt.asarray(np.array([1.0, 2.0])), "b": pt.asarray(np.float64(0.5))}
    x = pt.asarray(np.array([3.0, -1.0]))
    new = step(params, x)
    r = 1.0 * 3 - 2.0 + 0.5
    np.testing.assert_allclose(new["w"].numpy(), [1.0 - 0.1 * 2 * r * 3, 2.0 + 0.1 * 2 * r], rtol=1e-14)
    np.testing.assert_allclose(float(new["b"]), 0.5 - 0.1 * 2 * r, rtol=1e-14)
