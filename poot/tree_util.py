"""JAX's pytree helpers (`jax.tree_util`) over poot's one pytree flattening (poot/trace/pytree.py, the
one `@pt.jit`, `pt.grad` and `pt.vmap` use): nested tuples, lists, dicts (keys sorted), NamedTuples and
dataclasses are nodes, None is an empty subtree, everything else is a leaf.

    leaves, treedef = pt.tree_util.tree_flatten({"w": w, "b": b})
    params = pt.tree_util.tree_unflatten(treedef, [x * 0.5 for x in leaves])
    params = pt.tree_map(lambda p, g: p - 0.1 * g, params, grads)

`is_leaf(x) -> bool` stops the flattening at a subtree (which is then one leaf), as in JAX.
`register_pytree_node(cls, flatten_fn, unflatten_fn)` (and the `register_pytree_node_class`
decorator, for a class with `tree_flatten` and a classmethod `tree_unflatten`) makes a class of yours
a node for every transform, as in JAX.
"""
from __future__ import annotations

import dataclasses

from poot.errors import ArgumentError, ShapeError, api_boundary
from poot.trace import pytree

__all__ = ["PyTreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
           "treedef_is_leaf", "register_pytree_node", "register_pytree_node_class", "register_dataclass",
           "tree_reduce", "tree_all", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "keystr", "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey"]


class PyTreeDef:
    """The structure of a pytree without its leaves (what `tree_flatten` returns beside the leaves);
    equal structures compare and hash equal."""

    __slots__ = ("_def", "num_leaves")

    def __init__(self, treedef, num_leaves: int):
        self._def, self.num_leaves = treedef, num_leaves

    def unflatten(self, leaves):
        """The pytree of this structure holding `leaves` (an iterable of exactly num_leaves values)."""
        return tree_unflatten(self, leaves)

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self._def == other._def

    def __hash__(self) -> int:
        return hash(self._def)

    def __repr__(self) -> str:
        return f"PyTreeDef({_text(self._def)})"


def _text(d) -> str:
    if d is pytree.LEAF:
        return "*"
    if d == pytree._NONE:
        return "None"
    t, kids = d[0], [_text(c) for c in d[-1]]
    if type(d[1]) is pytree.Aux:
        return f"{t.__name__}[{d[1].value!r}]({', '.join(kids)})"
    if t is tuple:
        return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
    if t is list:
        return f"[{', '.join(kids)}]"
    names = d[1] if len(d) == 3 else t._fields
    inner = ", ".join(f"{k!r}: {c}" if t is dict else f"{k}={c}" for k, c in zip(names, kids))
    return f"{{{inner}}}" if t is dict else f"{t.__name__}({inner})"


class _Stop:
    """A subtree `is_leaf` chose as a leaf, hidden from the flattening (which treats it as a leaf)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _children(x, d) -> list:
    """The children of node `x`, whose one-level structure is `d` (a node of pytree's treedefs), in
    the flattening's order."""
    t = d[0]
    if t is dict:
        return [x[k] for k in d[1]]
    if type(d[1]) is pytree.Aux:      # registered node: its flatten function's children
        return pytree.custom_children(x, t)[0]
    if len(d) == 3:                   # dataclass: (type, field names, children)
        return [getattr(x, n) for n in d[1]]
    return list(x)                    # tuple, list, NamedTuple


def _node_def(x):
    """pytree's treedef of `x` (LEAF, the None node or a container node)."""
    return pytree.flatten(x)[1]


def _stop_at(x, is_leaf):
    """`x` with every subtree that `is_leaf` accepts (top down) wrapped as one leaf."""
    if is_leaf(x):
        return _Stop(x)
    d = _node_def(x)
    if d is pytree.LEAF or d == pytree._NONE:
        return x
    kids = [_stop_at(c, is_leaf) for c in _children(x, d)]
    shallow = d[:-1] + (tuple(pytree.LEAF for _ in kids),)
    return pytree.unflatten(shallow, kids) if kids else x


@api_boundary
def tree_flatten(tree, is_leaf=None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef): the leaves of `tree` in poot's (and JAX's) order, and its structure."""
    if is_leaf is not None:
        if not callable(is_leaf):
            raise ArgumentError(f"tree_flatten: is_leaf must be a function of a subtree; got "
                                f"{type(is_leaf).__name__}")
        tree = _stop_at(tree, is_leaf)
    leaves, d = pytree.flatten(tree)
    if is_leaf is not None:
        leaves = [x.value if isinstance(x, _Stop) else x for x in leaves]
    return leaves, PyTreeDef(d, len(leaves))


# --- key paths (JAX's tree_flatten_with_path & co.): how each leaf is reached from the root ----------
@dataclasses.dataclass(frozen=True)
class DictKey:
    """A dict entry on a key path: `tree[key]`."""
    key: object

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A tuple or list element on a key path: `tree[idx]`."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """A NamedTuple or dataclass field on a key path: `tree.name`."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """A child of a registered node, by its position among its flatten function's children."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _key_paths(d, prefix: tuple, out: list) -> None:
    """The key path of every leaf of pytree's treedef `d`, in leaf order (pytree.paths, as keys)."""
    if d is pytree.LEAF:
        out.append(prefix)
        return
    if d == pytree._NONE:
        return
    t = d[0]
    if t is tuple or t is list:
        keys = [SequenceKey(i) for i in range(len(d[1]))]
    elif t is dict:
        keys = [DictKey(k) for k in d[1]]
    elif len(d) == 2:
        keys = [GetAttrKey(n) for n in t._fields]
    elif type(d[1]) is pytree.Aux:
        keys = [FlattenedIndexKey(i) for i in range(len(d[2]))]
    else:
        keys = [GetAttrKey(n) for n in d[1]]
    for key, c in zip(keys, d[-1]):
        _key_paths(c, prefix + (key,), out)


@api_boundary
def tree_flatten_with_path(tree, is_leaf=None) -> tuple[list, PyTreeDef]:
    """([(key path, leaf)], treedef): `tree_flatten` with each leaf's key path, a tuple of DictKey,
    SequenceKey, GetAttrKey and FlattenedIndexKey entries (JAX's)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    keys: list = []
    _key_paths(treedef._def, (), keys)
    return list(zip(keys, leaves)), treedef


@api_boundary
def tree_leaves_with_path(tree, is_leaf=None) -> list:
    """[(key path, leaf)] of `tree`, in flattening order (JAX's)."""
    return tree_flatten_with_path(tree, is_leaf)[0]


@api_boundary
def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """`tree_map` whose `f` also takes each leaf's key path first: `f(path, leaf, *same leaf of rest)`
    (JAX's; `keystr(path)` spells the path)."""
    if not callable(f):
        raise ArgumentError(f"tree_map_with_path: f must be a function; got {type(f).__name__}")
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    keys = iter([k for k, _ in pairs])
    return tree_map(lambda *xs: f(next(keys), *xs), tree, *rest, is_leaf=is_leaf)


def keystr(keys, *, simple: bool = False, separator: str = "/") -> str:
    """A key path as text: "['w'][0].b" (JAX's); `simple` joins the bare keys with `separator`."""
    if simple:
        return separator.join(str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k)))) for k in keys)
    return "".join(str(k) for k in keys)


@api_boundary
def tree_unflatten(treedef: PyTreeDef, leaves):
    """The pytree of structure `treedef` holding `leaves` (exactly treedef.num_leaves of them)."""
    if not isinstance(treedef, PyTreeDef):
        raise ArgumentError(f"tree_unflatten: treedef must be a PyTreeDef (from tree_flatten or "
                            f"tree_structure); got {type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ShapeError(f"tree_unflatten: the structure {treedef} holds {treedef.num_leaves} leaves; "
                         f"got {len(leaves)}")
    if treedef._def is pytree.LEAF:
        return leaves[0]
    return pytree.unflatten(treedef._def, leaves)


@api_boundary
def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


@api_boundary
def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The structure of `tree` (a PyTreeDef)."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is the structure of a single leaf."""
    return treedef._def is pytree.LEAF


def _up_to(d, x, path: str, i: int, out: list) -> None:
    """The subtrees of `x` at the leaves of structure `d` (JAX's flatten_up_to): `x` has `d`'s
    structure down to `d`'s leaves, and anything (a leaf or a deeper subtree) at each of them."""
    if d is pytree.LEAF:
        out.append(x)
        return
    if d == pytree._NONE:
        if x is not None:
            raise ShapeError(f"tree_map: tree {i} has {type(x).__name__} at {path or 'the root'}, "
                             f"where the first tree has None")
        return
    here = _node_def(x)
    if here is pytree.LEAF or here == pytree._NONE or here[0] is not d[0] or here[:-1] != d[:-1]:
        raise ShapeError(f"tree_map: tree {i} does not have the first tree's structure at "
                         f"{path or 'the root'}: {_text(d[:-1] + (tuple(pytree.LEAF for _ in d[-1]),))} "
                         f"there, {type(x).__name__} {x!r:.60} in tree {i}")
    kids = _children(x, here)
    if len(kids) != len(d[-1]):
        raise ShapeError(f"tree_map: tree {i} has {len(kids)} children at {path or 'the root'}; the "
                         f"first tree has {len(d[-1])}")
    names = pytree.paths(d[:-1] + (tuple(pytree.LEAF for _ in d[-1]),), path)
    for c, sub, name in zip(kids, d[-1], names):
        _up_to(sub, c, name, i, out)


@api_boundary
def tree_map(f, tree, *rest, is_leaf=None):
    """`f` applied leaf by leaf: a tree of `tree`'s structure holding `f(leaf, *same leaf of rest)`.
    Each tree of `rest` has `tree`'s structure, or a deeper one (its subtree at a leaf of `tree` is
    passed whole), as in JAX."""
    if not callable(f):
        raise ArgumentError(f"tree_map: f must be a function; got {type(f).__name__}")
    leaves, treedef = tree_flatten(tree, is_leaf)
    columns = [leaves]
    for i, other in enumerate(rest, 1):
        col: list = []
        _up_to(treedef._def, other, "", i, col)
        columns.append(col)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns)])


@api_boundary
def register_pytree_node(nodetype: type, flatten_func, unflatten_func) -> None:
    """Make `nodetype` a pytree node, as JAX's function of this name: `flatten_func(x)` returns
    `(children, aux_data)` (children: an iterable of subtrees; aux_data: hashable, kept in the
    structure) and `unflatten_func(aux_data, children)` rebuilds the object. `@pt.jit`, the derivatives,
    `pt.vmap` and `tree_map` then see through it to its children."""
    if not isinstance(nodetype, type):
        raise ArgumentError(f"register_pytree_node: nodetype must be a class; got {type(nodetype).__name__}")
    if not callable(flatten_func) or not callable(unflatten_func):
        raise ArgumentError("register_pytree_node: flatten_func and unflatten_func must be functions")
    pytree.register(nodetype, flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator (JAX's): registers `cls` with its method `tree_flatten(self) -> (children,
    aux_data)` and classmethod `tree_unflatten(aux_data, children)`; returns `cls`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None, drop_fields=()):
    """Make dataclass `nodetype` a node whose children are `data_fields` and whose `meta_fields` are
    static, part of the structure (hashable: a jitted function traces again when one changes), as
    JAX's function of this name. Without the lists (the decorator form, `@register_dataclass`), a
    field declared with `metadata={"static": True}` is meta and the others are data. Returns the
    class. (An unregistered dataclass is a node too, all its fields children.)"""
    import dataclasses

    if not (isinstance(nodetype, type) and dataclasses.is_dataclass(nodetype)):
        raise ArgumentError(f"register_dataclass: {getattr(nodetype, '__name__', nodetype)!r} is not a "
                            f"dataclass; use register_pytree_node for other classes")
    fields = [f.name for f in dataclasses.fields(nodetype) if f.init]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in dataclasses.fields(nodetype) if f.init and f.metadata.get("static")]
        data_fields = [n for n in fields if n not in meta_fields and n not in drop_fields]
    elif data_fields is None or meta_fields is None:
        raise ArgumentError("register_dataclass: give both data_fields and meta_fields, or neither")
    data, meta = list(data_fields), list(meta_fields)
    missing = sorted(set(fields) - set(data) - set(meta) - set(drop_fields))
    unknown = sorted((set(data) | set(meta)) - set(fields))
    if missing or unknown:
        raise ArgumentError(f"register_dataclass({nodetype.__name__}): data_fields and meta_fields must "
                            f"name each init field once; " + (f"missing {missing}" if missing else
                                                               f"{unknown} are not init fields"))
    register_pytree_node(nodetype,
                         lambda x: ([getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)),
                         lambda aux, kids: nodetype(**dict(zip(data, kids)), **dict(zip(meta, aux))))
    return nodetype


_NO_INITIAL = object()


@api_boundary
def tree_reduce(function, tree, initializer=_NO_INITIAL, is_leaf=None):
    """`functools.reduce(function, tree_leaves(tree))`, with `initializer` first when given (JAX's)."""
    import functools
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        if not leaves:
            raise ArgumentError("tree_reduce: a tree without leaves needs an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


@api_boundary
def tree_all(tree, is_leaf=None) -> bool:
    """Whether every leaf of `tree` is true (JAX's)."""
    return all(tree_leaves(tree, is_leaf))
