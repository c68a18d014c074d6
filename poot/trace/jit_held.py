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

The same holds for NumPy arrays such an object holds (`cfg.w[:] = ...` would go unseen): an object
holding one is refused at its first trace (`held_numpy`), since poot cannot tell whether the function
reads it. Its Python scalars and strings (`cfg.scale`) are keyed instead: `object_state` makes them
part of the call's signature, so a changed value traces again. A result holding a traced array in an
object poot does not flatten is refused too (`refuse_opaque_results`).

The containers among the arguments (lists, dicts, dataclasses) are the other way a trace could lose a
change silently: the trace runs on copies of them, so a function storing into one (`st["m"] = ...`) is
refused too (`refuse_container_writes`).
"""
from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from poot.errors import PootError, TracerError
from poot.trace import pytree
from poot.trace.array import Array

_MAX_DEPTH = 3          # attributes of attributes of attributes: far enough for models of layers
_OPAQUE = (str, bytes, int, float, complex, bool, type, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.ModuleType, functools.partial)


_VALUE_TYPES = frozenset({int, float, complex, bool, str, bytes, type(None)})
_MAX_KEYED = 64         # longer lists, tuples and dicts in an object's attributes are not keyed (cost)
_SLOT_NAMES = {}        # type -> the names of its instances' __slots__ (object_state of types without __dict__)


def object_state(obj):
    """The values a jitted call's signature keys a plain-object argument by besides its identity:
    its Python scalars, strings and NumPy scalars held in its attributes (`vars(obj)` or its
    `__slots__`), and those one level down, in lists, tuples and dicts among them, as a tuple. A trace
    reads them as constants, so a changed value (`cfg.scale = 10.0`) traces again instead of
    replaying a stale one. () for an object without such state. Types are keyed beside the values
    (2, 2.0 and True are equal, but trace apart); lists, tuples and dicts of more than _MAX_KEYED
    items are not keyed. This runs on every call with such an argument, so
    it makes no call per value: a list of layers costs one pass of map(type)."""
    if isinstance(obj, _OPAQUE):     # a module's, a class's or a function's namespace is no state
        return ()
    attrs = getattr(obj, "__dict__", None)
    if type(attrs) is not dict:
        slots = _slot_names(type(obj))
        if not slots:
            return ()
        attrs = {n: getattr(obj, n) for n in slots if hasattr(obj, n)}
    out = []
    scalar = _VALUE_TYPES
    for k, v in attrs.items():
        t = type(v)
        if t in scalar:
            out.append((k, t, v))
        elif (t is list or t is tuple or t is dict) and len(v) <= _MAX_KEYED:
            items = tuple(v.values()) if t is dict else tuple(v)
            types = tuple(map(type, items))
            if not scalar.issuperset(types):
                items = tuple(c for c, tc in zip(items, types) if tc in scalar)
            out.append((k, t, tuple(v) if t is dict else (), types, items))
        elif isinstance(v, np.generic):
            out.append((k, t, v.item()))
    return tuple(out)


def _slot_names(cls) -> tuple:
    names = _SLOT_NAMES.get(cls)
    if names is None:
        names = _SLOT_NAMES[cls] = tuple(n for c in cls.__mro__ for n in getattr(c, "__slots__", ())
                                       if n not in ("__dict__", "__weakref__"))
    return names


def held_numpy(obj, name: str, receiver: bool = False) -> None:
    """Refuse a plain object (argument `name`, or the object a jitted bound method is bound to) that
    holds NumPy arrays: a trace would bake their values in as constants, and `cfg.w[:] = ...` later
    would not be seen (poot cannot tell whether the function reads them)."""
    if isinstance(obj, (Array, _OPAQUE, np.ndarray, np.generic)):
        return
    found: dict = {}
    _walk(obj, "self" if receiver else name, {}, set(), 0, found)
    if not found:
        return
    path = next(iter(found.values()))
    type_name = type(obj).__name__
    if receiver:
        raise PootError(
            f"pt.jit reads the object a jitted bound method is bound to (a {type_name}), which holds the "
            f"NumPy array {path}: the program would keep that array's value from its first call as a "
            f"constant and not see it change later ({path}[:] = ... or {path} = new). Jit the function of "
            f"the class and pass the object as an argument, with its class a dataclass or NamedTuple, or "
            f"pass the array as an argument")
    raise PootError(
        f"pt.jit: the argument '{name}' (a {type_name}, which is neither an array nor a pytree) holds the "
        f"NumPy array {path}: the program would keep that array's value from the first call as a "
        f"constant and not see it change later ({path}[:] = ... or {path} = new). Make its class a "
        f"dataclass or NamedTuple (its arrays become inputs of every call), pass the array as an "
        f"argument, or list '{name}' in static_argnums to keep it constant")


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


def _walk(x, path: str, found: dict, seen: set, depth: int, numpy: dict | None = None) -> None:
    if isinstance(x, Array):
        found.setdefault(id(x._node), path)
        return
    if numpy is not None and isinstance(x, np.ndarray):
        numpy.setdefault(id(x), path)
        return
    if depth > _MAX_DEPTH or isinstance(x, _OPAQUE) or id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, (list, tuple)):
        for i, c in enumerate(x):
            _walk(c, f"{path}[{i}]", found, seen, depth + 1, numpy)
        return
    if isinstance(x, dict):
        for k, c in x.items():
            _walk(c, f"{path}[{k!r}]", found, seen, depth + 1, numpy)
        return
    attrs = getattr(x, "__dict__", None)
    if isinstance(attrs, dict):
        for k, c in list(attrs.items()):
            _walk(c, f"{path}.{k}", found, seen, depth + 1, numpy)


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


__all__ = ["held_arrays", "held_numpy", "object_state", "receiver_arrays", "refuse_baked_attributes",
           "refuse_opaque_results"]


def refuse_opaque_results(fn_name: str, out_leaves: list, out_tree, traced: set, writes: bool) -> None:
    """Refuse a result that holds an array of this trace inside an object poot does not flatten (a
    plain object, a tuple subclass): the program returns such a leaf as it was at trace time, the same
    object on every call, holding a stand-in array with no value. `traced`: ids of the trace's nodes."""
    names = None
    for k, x in enumerate(out_leaves):
        if isinstance(x, (Array, _OPAQUE)) or x is None:
            continue
        found: dict = {}
        _walk(x, "", found, set(), 0)
        inner = next((p for i, p in found.items() if i in traced), None)
        if inner is None:
            continue
        if names is None:
            names = pytree.paths(out_tree, "")
        path = names[k]
        if writes:      # (the function's result, the arguments' new values)
            path = path[3:]
        raise TracerError(
            f"pt.jit({fn_name}) returns a {type(x).__name__} at result{path} holding a traced array "
            f"(result{path}{inner}): poot flattens only tuples, lists, dicts (OrderedDict and defaultdict "
            f"too), NamedTuples and dataclasses, so the array would be returned without a value, in the "
            f"same object on every call. Return the arrays in one of those containers (make "
            f"{type(x).__name__} a dataclass or NamedTuple)")


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
