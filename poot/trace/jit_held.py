"""Arrays held by the plain-object arguments of a jitted function (`self.w` of a jitted method).

A jitted function's signature keys an argument that is neither an array, a scalar nor a pytree by
its hash (the identity of a plain object), like a static argument. The arrays such an object holds
are therefore read once, at trace time, and baked into the program as constants: after
`model.w = new_w` every later call would still compute with the old weights, silently. A trace that
reads one of them is refused, naming the attribute. The ways out keep the meaning explicit: make the
class a dataclass or NamedTuple (a pytree: its arrays become inputs of every call), pass the arrays
as arguments, or list the argument in `static_argnums` to bake its arrays in on purpose. The object a
bound method passed to pt.jit is bound to (`pt.jit(model.__call__)`) is read the same way and refused
the same way: jit the class's function and pass the object as an argument instead.

The containers among the arguments (lists, dicts, dataclasses) are the other way a trace could lose a
change silently: the trace runs on copies of them, so a function storing into one (`st["m"] = ...`) is
refused too (`refuse_container_writes`).
"""
from __future__ import annotations

import functools
import inspect
import types

from poot.errors import PootError, TracerError
from poot.trace import pytree
from poot.trace.array import Array

_MAX_DEPTH = 3          # attributes of attributes of attributes: far enough for models of layers
_OPAQUE = (str, bytes, int, float, complex, bool, type, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.ModuleType, functools.partial)


def held_arrays(obj, name: str) -> dict[int, tuple[str, str, str]]:
    """The arrays plain object `obj` (argument `name`) holds in its attributes (and in lists, tuples
    and dicts among them), as {id(array node): (access path such as 'self.layers[0].w', the
    argument's name, its type's name)}."""
    found: dict[int, str] = {}
    if not isinstance(obj, (Array, _OPAQUE)):
        _walk(obj, name, found, set(), 0)
    return {k: (path, name, type(obj).__name__) for k, path in found.items()}


def receiver_arrays(fn) -> dict[int, tuple[str, None, str]]:
    """The arrays held by the object a bound method `fn` is bound to (`pt.jit(model.__call__)`), as
    held_arrays gives them, the argument's name None: that object is no argument at all, so its
    arrays are read once, at trace time, as those of a plain-object argument are."""
    obj = getattr(fn, "__self__", None) if isinstance(fn, types.MethodType) else None
    if obj is None or isinstance(obj, (Array, _OPAQUE, types.ModuleType)):
        return {}
    found: dict[int, str] = {}
    _walk(obj, "self", found, set(), 0)
    return {k: (path, None, type(obj).__name__) for k, path in found.items()}


def _walk(x, path: str, found: dict, seen: set, depth: int) -> None:
    if isinstance(x, Array):
        found.setdefault(id(x._node), path)
        return
    if depth > _MAX_DEPTH or isinstance(x, _OPAQUE) or id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, (list, tuple)):
        for i, c in enumerate(x):
            _walk(c, f"{path}[{i}]", found, seen, depth + 1)
        return
    if isinstance(x, dict):
        for k, c in x.items():
            _walk(c, f"{path}[{k!r}]", found, seen, depth + 1)
        return
    attrs = getattr(x, "__dict__", None)
    if isinstance(attrs, dict):
        for k, c in list(attrs.items()):
            _walk(c, f"{path}.{k}", found, seen, depth + 1)


def refuse_baked_attributes(fn_name: str, held: dict[int, tuple[str, str, str]], binds: list) -> None:
    """Raise if the traced program reads an array held by a plain-object argument (`binds`: the
    program's graph inputs, a captured value being a node)."""
    if not held:
        return
    for b in binds:
        got = held.get(id(b)) if not isinstance(b, int) else None
        if got is None:
            continue
        path, root, type_name = got
        if root is None:
            method = fn_name.rsplit(".", 1)[-1]
            raise PootError(
                f"pt.jit({fn_name}) reads the array {path}, held by the {type_name} object the method is "
                f"bound to: the program would keep that array's value from this first call as a constant "
                f"and not see it change later (after {path} = new_value). Jit the function of the class "
                f"and pass the object as an argument, with its class a dataclass or NamedTuple (its arrays "
                f"become inputs of every call): pt.jit({type_name}.{method})(obj, ...); or pass the array "
                f"as an argument; or, to keep it constant on purpose, "
                f"pt.jit({type_name}.{method}, static_argnums=0)(obj, ...)")
        raise PootError(
            f"pt.jit({fn_name}) reads the array {path}, held by the argument '{root}' (a "
            f"{type_name}), which is neither an array nor a pytree: the program would keep "
            f"that array's value from this first call as a constant and not see it change later. "
            f"Make its class a dataclass or NamedTuple (its arrays become inputs of every call), "
            f"pass the array as an argument, or list '{root}' in static_argnums to keep it constant")


__all__ = ["held_arrays", "receiver_arrays", "refuse_baked_attributes"]


def refuse_container_writes(name: str, fn, given: tuple, traced_args) -> None:
    """Refuse a function that stored into a list, dict or dataclass it was given (`st["m"] = ...`,
    `lst.append(x)`): the trace ran on copies of the caller's containers (`given`: the flattened
    `traced_args` before the trace), so the change would be dropped on every call where an eager call
    keeps it. Updating an array in place (`x[i] = v`, `st["m"] += 1`) changes no container and reaches
    the caller's array."""
    leaves, treedef = given
    now, now_def = pytree.flatten(traced_args)
    if now_def == treedef and all(a is b for a, b in zip(now, leaves)):
        return
    changed = None
    if now_def == treedef:
        names = pytree.paths(treedef, "")
        changed = next(names[i] for i, (a, b) in enumerate(zip(now, leaves)) if a is not b)
    what = f"the argument entry {_argument_path(fn, changed)}" if changed else "an argument's structure"
    raise TracerError(
        f"pt.jit({name}) changed {what} by storing into the list, dict or dataclass it was given; a "
        f"jitted call cannot carry that change back to the caller's container. Return the new value "
        f"instead (state = f(state, ...)), or update the array in place (x[...] = v, x += v)")


def _argument_path(fn, path: str) -> str:
    """A leaf path of ((args...), {kwargs}) as the user names it: `[0][1]['m']` -> `st['m']` for the
    second parameter `st` of `fn`, `[1]['lr']` -> `lr`."""
    if path.startswith("[1]["):
        key, _, rest = path[4:].partition("]")
        return key.strip("'\"") + rest
    if path.startswith("[0]["):
        pos, _, rest = path[4:].partition("]")
        try:
            name = list(inspect.signature(fn).parameters)[int(pos)]
        except (TypeError, ValueError, IndexError):
            name = f"argument {pos}"
        return name + rest
    return path
