"""Pytrees: nested tuples, lists, dicts, NamedTuples and dataclasses, flattened to leaves and back.

`flatten(tree)` returns the leaves (in a fixed order: dict keys sorted) and a hashable `treedef` that
`unflatten(treedef, leaves)` rebuilds the structure from. None is an empty subtree (no leaf), as in
JAX. Everything else is a leaf. `paths(treedef)` names each leaf the way a user would index it
(`[0]['w'].bias`), for messages.
"""
from __future__ import annotations

import dataclasses

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
    if isinstance(x, tuple) and hasattr(t, "_fields"):     # NamedTuple
        return (t, tuple(_flatten(c, leaves) for c in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x) if f.init)
        return (t, names, tuple(_flatten(getattr(x, n), leaves) for n in names))
    if not isinstance(x, (tuple, dict)) and not dataclasses.is_dataclass(t):
        _LEAF_TYPES.add(t)    # a class object (isinstance(x, type)) is a leaf whatever it is
    leaves.append(x)
    return LEAF


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
