"""Pytrees: nested tuples, lists, dicts (OrderedDict and defaultdict too, as in JAX), NamedTuples and
dataclasses, flattened to leaves and back.

`flatten(tree)` returns the leaves (in a fixed order: dict and defaultdict keys sorted, an
OrderedDict's in their order) and a hashable `treedef` that
`unflatten(treedef, leaves)` rebuilds the structure from. None is an empty subtree (no leaf), as in
JAX. Everything else is a leaf. `paths(treedef)` names each leaf the way a user would index it
(`[0]['w'].bias`), for messages.
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


def _flatten(x, leaves: list):
    t = type(x)
    if t in _LEAF_TYPES:      # most leaves (arrays): one set lookup instead of the checks below
        leaves.append(x)
        return LEAF
    if t is tuple or t is list:
        return (t, tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise PootError(f"a dict in a pytree needs sortable keys; got {list(x)!r}") from None
        return (dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return _NONE
    if t is OrderedDict:      # its order is part of it (JAX keeps it too)
        keys = _Keys(x, OrderedDict)
        return (dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if t is defaultdict:
        try:
            keys = _Keys(sorted(x), (defaultdict, x.default_factory))
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
    else:
        for name, c in zip(d[1], d[2]):
            _paths(c, f"{prefix}.{name}", out)
