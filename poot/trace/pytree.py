"""Pytrees: nested tuples, lists, dicts (OrderedDict and defaultdict too, as in JAX), NamedTuples and
dataclasses, flattened to leaves and back.

`flatten(tree)` returns the leaves (in a fixed order: dict and defaultdict keys sorted, an
OrderedDict's in their order) and a hashable `treedef` that
`unflatten(treedef, leaves)` rebuilds the structure from. None is an empty subtree (no leaf), as in
JAX. Everything else is a leaf. `paths(treedef)` names each leaf the way a user would index it
(`[0]['w'].bias`), for messages.

`register(type, flatten_fn, unflatten_fn)` makes a class of the user's a node, as JAX's
`register_pytree_node`: `flatten_fn(x) -> (children, aux)`, `unflatten_fn(aux, children) -> x`. Its
treedef node is `(type, Aux(aux), children)`; aux is part of the structure (a jitted function traces
again for another aux), so it must be hashable and comparable, as in JAX.
"""
from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict

from poot.errors import PootError

LEAF = "*"
_NONE = ("none",)


def flatten(tree) -> tuple[list, object]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


_LEAF_TYPES: set = set()     # types met as leaves: neither containers, NamedTuples nor dataclasses
_CUSTOM: dict = {}           # type -> (flatten_fn, unflatten_fn), registered by the user


class Aux:
    """The aux data of a registered node in its treedef: equal and hashing as the aux data itself,
    and never equal to a dataclass's field names (the other 3-element node)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other) -> bool:
        if type(other) is not Aux:
            return False
        eq = self.value == other.value
        try:
            return bool(eq)
        except (TypeError, ValueError):     # an array-valued ==: aux data must compare as a bool
            raise PootError(f"the aux data of a registered pytree node must compare with == to True or "
                            f"False, as in JAX; {type(self.value).__name__} gave {type(eq).__name__}") from None

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        try:
            return hash(self.value)
        except TypeError:
            raise PootError(f"the aux data of a registered pytree node must be hashable, as in JAX (it is "
                            f"part of the structure a jitted function is cached by); got "
                            f"{type(self.value).__name__}") from None

    def __repr__(self) -> str:
        return f"Aux({self.value!r})"


def register(t: type, flatten_fn, unflatten_fn) -> None:
    """Make type `t` a pytree node (JAX's register_pytree_node)."""
    if t in (tuple, list, dict, type(None), OrderedDict, defaultdict) or t in _CUSTOM:
        raise PootError(f"register_pytree_node: {t.__name__} is already a pytree node type")
    _CUSTOM[t] = (flatten_fn, unflatten_fn)
    _LEAF_TYPES.discard(t)


def custom_children(x, t) -> tuple[list, object]:
    """(children, aux) of registered node `x` of type `t`, from its flatten function."""
    flatten_fn = _CUSTOM[t][0]
    out = flatten_fn(x)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise PootError(f"the flatten function registered for {t.__name__} must return (children, aux_data); "
                        f"got {type(out).__name__}")
    return list(out[0]), out[1]


def _sorted_keys(x) -> list:
    """A dict's keys sorted, as JAX sorts them; keys of several types that do not compare with one
    another (Dask's `block_info` is keyed by None and ints) are ordered by type name first, then by
    value within each type. Keys of one type that do not compare still raise TypeError."""
    try:
        return sorted(x)
    except TypeError:
        return sorted(x, key=lambda k: (type(k).__name__, k))


def _flatten(x, leaves: list):
    t = type(x)
    if t in _LEAF_TYPES:      # most leaves (arrays): one set lookup instead of the checks below
        leaves.append(x)
        return LEAF
    if t is tuple or t is list:
        return (t, tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        try:
            keys = tuple(_sorted_keys(x))
        except TypeError:
            raise PootError(f"a dict in a pytree needs sortable keys; got {list(x)!r}") from None
        return (dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return _NONE
    if t in _CUSTOM:
        kids, aux = custom_children(x, t)
        return (t, Aux(aux), tuple(_flatten(c, leaves) for c in kids))
    if t is OrderedDict:      # its order is part of it (JAX keeps it too)
        keys = _Keys(x, OrderedDict)
        return (dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if t is defaultdict:
        try:
            keys = _Keys(_sorted_keys(x), (defaultdict, x.default_factory))
        except TypeError:
            raise PootError(f"a defaultdict in a pytree needs sortable keys; got {list(x)!r}") from None
        return (dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if isinstance(x, tuple) and hasattr(t, "_fields"):     # NamedTuple
        return (t, tuple(_flatten(c, leaves) for c in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x) if f.init)
        return (t, names, tuple(_flatten(getattr(x, n), leaves) for n in names))
    if not isinstance(x, (tuple, dict)) and not dataclasses.is_dataclass(t):
        _LEAF_TYPES.add(t)    # a class object (isinstance(x, type)) is a leaf whatever it is
    leaves.append(x)
    return LEAF


class _Keys(tuple):
    """The keys of an OrderedDict or a defaultdict in its treedef node, which is a dict's otherwise
    (`(dict, keys, children)`: whatever reads a dict node reads these), with the mapping's kind:
    OrderedDict, or (defaultdict, its default_factory). Equal only to keys of the same kind."""

    def __new__(cls, keys, kind):
        self = tuple.__new__(cls, keys)
        self.kind = kind
        return self

    def __eq__(self, other) -> bool:
        return type(other) is _Keys and other.kind == self.kind and tuple.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((tuple.__hash__(self), self.kind))

    def make(self, items):
        """The mapping of this kind holding `items` (key, value pairs in key order)."""
        if self.kind is OrderedDict:
            return OrderedDict(items)
        return defaultdict(self.kind[1], items)


def unflatten(treedef, leaves):
    if treedef is LEAF and len(leaves) == 1:     # a function returning one array: every jitted call
        return leaves[0]
    it = iter(leaves)
    out = _unflatten(treedef, it)
    rest = sum(1 for _ in it)
    if rest:
        raise PootError(f"unflatten: {rest} leaves left over")
    return out


def _unflatten(d, it):
    if d is LEAF:
        return next(it)
    if d is _NONE or d == _NONE:
        return None
    t = d[0]
    if t is tuple or t is list:
        return t(_unflatten(c, it) for c in d[1])
    if t is dict:
        if type(d[1]) is _Keys:
            return d[1].make([(k, _unflatten(c, it)) for k, c in zip(d[1], d[2])])
        return {k: _unflatten(c, it) for k, c in zip(d[1], d[2])}
    if len(d) == 2:                                          # NamedTuple
        return t(*[_unflatten(c, it) for c in d[1]])
    if type(d[1]) is Aux:                                    # registered node
        return _CUSTOM[t][1](d[1].value, tuple(_unflatten(c, it) for c in d[2]))
    return t(**{n: _unflatten(c, it) for n, c in zip(d[1], d[2])})   # dataclass


def paths(treedef, prefix: str = "") -> list[str]:
    """The access path of every leaf, in leaf order."""
    out: list[str] = []
    _paths(treedef, prefix, out)
    return out


def _paths(d, prefix: str, out: list) -> None:
    if d is LEAF:
        out.append(prefix)
        return
    if d == _NONE:
        return
    t = d[0]
    if t is tuple or t is list:
        for i, c in enumerate(d[1]):
            _paths(c, f"{prefix}[{i}]", out)
    elif t is dict:
        for k, c in zip(d[1], d[2]):
            _paths(c, f"{prefix}[{k!r}]", out)
    elif len(d) == 2:
        for name, c in zip(t._fields, d[1]):
            _paths(c, f"{prefix}.{name}", out)
    elif type(d[1]) is Aux:                  # registered node: its children by position, as JAX's keystr
        for i, c in enumerate(d[2]):
            _paths(c, f"{prefix}[<flat index {i}>]", out)
    else:
        for name, c in zip(d[1], d[2]):
            _paths(c, f"{prefix}.{name}", out)
