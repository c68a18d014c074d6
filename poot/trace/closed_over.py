"""Arrays a traced function closes over and writes into (`buf[1] = x.sum()` inside @pt.jit or a loop body).

An Array is a handle that `x[i] = v` and `x += y` rebind to a new value. Inside a trace that value is
abstract (it depends on the function's placeholders), so an array from outside the trace that takes it
would hold a traced value forever: every later use fails, far from the line that caused it. The arrays
a function can reach through its closure cells and the globals it names (and the containers, objects and
other functions among them) are noted before the trace; one that holds another value after it is put
back as it was, and the trace is refused, naming the array and the line that wrote into it.
"""
from __future__ import annotations

import functools
import types

from poot.errors import TracerError
from poot.trace import lazy
from poot.trace.array import Array

_MAX_DEPTH = 3      # a called function's global list of arrays, or an object's attribute of one, is found
_OPAQUE = (str, bytes, int, float, complex, bool, type(None), type, types.ModuleType, types.BuiltinFunctionType)


class ClosedOverWriteError(TracerError):
    """A traced function wrote into an array it closes over (rather than one passed as an argument)."""


def reachable_arrays(fn) -> list[tuple[Array, lazy.Node, str]]:
    """The arrays `fn` reaches without taking them as arguments, each with its value now and a name."""
    found: dict[int, tuple[Array, lazy.Node, str]] = {}
    _walk(fn, getattr(fn, "__name__", "the function"), found, set(), 0)
    return list(found.values())


def _walk(x, path: str, found: dict, seen: set, depth: int) -> None:
    if isinstance(x, Array):
        found.setdefault(id(x), (x, x._node, path))
        return
    if depth > _MAX_DEPTH or isinstance(x, _OPAQUE) or id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, types.FunctionType):
        _walk_function(x, found, seen, depth)
    elif isinstance(x, types.MethodType):
        _walk(x.__func__, path, found, seen, depth)
        _walk(x.__self__, path.rsplit(".", 1)[0] if "." in path else "self", found, seen, depth + 1)
    elif isinstance(x, functools.partial):
        _walk(x.func, path, found, seen, depth)
        for i, a in enumerate(x.args):
            _walk(a, f"{path}.args[{i}]", found, seen, depth + 1)
        for k, a in x.keywords.items():
            _walk(a, f"{path}.keywords[{k!r}]", found, seen, depth + 1)
    elif isinstance(x, (list, tuple)):
        for i, c in enumerate(x):
            _walk(c, f"{path}[{i}]", found, seen, depth + 1)
    elif isinstance(x, dict):
        for k, c in list(x.items()):
            _walk(c, f"{path}[{k!r}]", found, seen, depth + 1)
    else:
        attrs = getattr(x, "__dict__", None)
        if isinstance(attrs, dict):
            for k, c in list(attrs.items()):
                _walk(c, f"{path}.{k}", found, seen, depth + 1)


def _walk_function(fn: types.FunctionType, found: dict, seen: set, depth: int) -> None:
    """A function's closure cells and the globals its code (and the code of the lambdas and inner
    functions in it) names."""
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:          # a cell not filled yet
            continue
        _walk(value, name, found, seen, depth + 1)
    g = fn.__globals__
    if g.get("__name__", "").startswith("poot."):     # poot's own functions hold no user arrays
        return
    for name in _names(code):
        if name in g:
            _walk(g[name], name, found, seen, depth + 1)


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def refuse_writes(reached: list[tuple[Array, lazy.Node, str]], what: str, failed: bool = False) -> None:
    """Raise ClosedOverWriteError if a trace rebound one of the `reached` arrays, after putting every
    such array back to its value from before the trace (it stays usable). After a trace that `failed`
    (with an error of its own, which the caller raises), only put them back."""
    changed = [(x, old, name) for x, old, name in reached if x._node is not old]
    if not changed:
        return
    if failed:
        for y, old, _ in changed:
            y._node = old
        return
    x, _, name = changed[0]
    line = lazy.format_where(x._node.where)
    for y, old, _ in changed:
        y._node = old
    raise ClosedOverWriteError(
        f"{what}: the traced function writes into the array '{name}' it closes over (at {line}); the array "
        f"would hold a traced value, unusable outside the trace. Pass the array as an argument (a carry, "
        f"for a loop body) and return its new value; '{name}' is left unchanged")


__all__ = ["ClosedOverWriteError", "reachable_arrays", "refuse_writes"]
