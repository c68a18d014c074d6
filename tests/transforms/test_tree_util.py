"""pt.tree_util (JAX's tree_flatten, tree_unflatten, tree_leaves, tree_structure, tree_map, tree_reduce,
tree_all, register_pytree_node) over poot's one pytree flattening: the same leaf order and structures
as @pt.jit, grad and vmap use, classes of the user's registered as nodes included."""
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


# -- classes of the user's registered as nodes (JAX's register_pytree_node) --------------------------
class Box:
    """A node whose children are two entries of a dict it holds, and whose name is its aux data."""

    def __init__(self, v, name):
        self.v, self.name = v, name


pt.tree_util.register_pytree_node(Box, lambda b: ((b.v["w"], b.v["b"]), b.name),
                                  lambda name, kids: Box({"w": kids[0], "b": kids[1]}, name))


@pt.tree_util.register_pytree_node_class
class Linear:
    def __init__(self, w, b, act="tanh"):
        self.w, self.b, self.act = w, b, act

    def tree_flatten(self):
        return (self.w, self.b), self.act

    @classmethod
    def tree_unflatten(cls, act, kids):
        return cls(*kids, act=act)

    def __call__(self, x):
        y = x @ self.w + self.b
        return pt.tanh(y) if self.act == "tanh" else y


def test_registered_node_flattens_round_trips_and_prints():
    b = Box({"w": 1.0, "b": (2.0, None)}, "n")
    leaves, treedef = tree_flatten(b)
    assert leaves == [1.0, 2.0]
    assert str(treedef) == "PyTreeDef(Box['n'](*, (*, None)))"
    back = tree_unflatten(treedef, [3.0, 4.0])
    assert isinstance(back, Box) and back.name == "n" and back.v == {"w": 3.0, "b": (4.0, None)}
    assert tree_structure(Box({"w": 0, "b": 0}, "m")) != tree_structure(Box({"w": 0, "b": 0}, "n"))
    doubled = tree_map(lambda x: x * 2, [Linear(1.0, 2.0, "id")])
    assert doubled[0].w == 2.0 and doubled[0].b == 4.0 and doubled[0].act == "id"
    assert pt.tree_util.tree_reduce(lambda a, x: a + x, [Linear(1.0, 2.0), 3.0], 0.0) == 6.0
    assert pt.tree_util.tree_all([True, Linear(1, True)]) and not pt.tree_util.tree_all([True, (0,)])


def test_registered_nodes_under_grad_jit_vmap_and_scan():
    r = np.random.default_rng(0)
    x = r.standard_normal((5, 3))
    W0, W1 = r.standard_normal((3, 4)), r.standard_normal((4, 2))
    layers = [Linear(pt.asarray(W0), pt.zeros(4, dtype=pt.float64)),
              Linear(pt.asarray(W1), pt.zeros(2, dtype=pt.float64), "id")]

    def loss(layers, x):
        for layer in layers:
            x = layer(x)
        return pt.mean(x ** 2)

    vg = pt.jit(pt.value_and_grad(loss))
    value, g = vg(layers, pt.asarray(x))
    h = np.tanh(x @ W0)
    out = h @ W1
    d_out = 2 * out / out.size
    assert np.allclose(float(value), (out ** 2).mean())
    assert isinstance(g[1], Linear) and g[1].act == "id"
    assert np.allclose(g[1].w.numpy(), h.T @ d_out)
    assert np.allclose(g[0].w.numpy(), x.T @ ((d_out @ W1.T) * (1 - h * h)))
    for _ in range(2):
        _, g = vg(layers, pt.asarray(x))
        layers = tree_map(lambda p, q: p - 0.1 * q, layers, g)
    assert vg.trace_count == 1 and layers[1].act == "id"

    batched = Box({"w": pt.asarray(np.stack([W0[:, 0], W0[:, 1]])), "b": pt.asarray(0.5)}, "n")
    got = pt.vmap(lambda b: pt.sum(b.v["w"]) + b.v["b"], in_axes=(Box({"w": 0, "b": None}, "n"),))(batched)
    assert np.allclose(got.numpy(), W0[:, :2].sum(0) + 0.5)
    first = Linear(pt.asarray(W0), pt.zeros(4, dtype=pt.float64))
    per_row = pt.vmap(lambda layer, row: layer(row), in_axes=(None, 0))(first, pt.asarray(x))
    assert np.allclose(per_row.numpy(), h)

    carry, ys = pt.lax.scan(lambda c, row: (Linear(c.w * 0.5, c.b + pt.sum(row), c.act), pt.sum(c.b)),
                            layers[1], pt.asarray(x))
    assert isinstance(carry, Linear) and carry.act == "id" and ys.shape == (5,)

    apply = pt.jit(lambda layer, v: layer(v))
    for act in ("tanh", "tanh", "id"):
        apply(Linear(pt.ones((3, 2)), pt.zeros(2), act), pt.asarray(x))
    assert apply.trace_count == 2                    # the aux data is part of the structure


def test_registered_node_refusals_are_poot_errors():
    with pytest.raises(pt.PootError, match="already a pytree node"):
        pt.tree_util.register_pytree_node(Box, lambda b: ((), None), lambda a, k: Box({}, a))
    with pytest.raises(pt.ArgumentError, match="must be a class"):
        pt.tree_util.register_pytree_node(Box({}, "n"), lambda b: ((), None), lambda a, k: None)
    with pytest.raises(pt.PootError, match="must be hashable"):
        pt.jit(lambda b: b.v["w"] * 2)(Box({"w": pt.ones(2), "b": None}, ["unhashable"]))
