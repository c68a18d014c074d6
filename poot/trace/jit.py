"""`@poot.jit`: trace a whole function once per signature, then replay its compiled program.

The signature of a call is the structure of its arguments (pytrees), each array leaf's shape, dtype
and device, each Python scalar's type (not its value: scalars are weakly typed inputs), the values of
the static arguments, the identity and scalar attributes of plain objects (jit_held.object_state),
and the current device. A new signature traces the function with abstract
arrays (`lazy.placeholder`) into one Graph, which is planned and compiled into a Program; a known one
binds the argument buffers and replays that Program: no tracing, planning or per-op Python work. A
call is first checked against the guard of the signature used last (`jit_guard.Guard`: the arguments' kinds,
avals and static objects, precomputed), which costs a fraction of building and hashing its key.
Calls inside another trace (a jitted function called from a jitted function or a loop body) inline.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
import warnings
from collections import OrderedDict

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, PootError, RetraceWarning, api_boundary, located_error
from poot.graph import Aval
from poot.trace import context as _dev
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.closed_over import reachable_arrays, refuse_writes
from poot.trace.creation import _array
from poot.trace.jit_held import (held_arrays, held_numpy, object_state, receiver_arrays, refuse_baked_attributes,
                                 refuse_container_writes)
from poot.trace.jit_program import SCALARS as _SCALARS
from poot.trace.jit_program import JitProgram
from poot.trace.jit_guard import _UNKEYED, Guard as _Guard

log = logging.getLogger("poot.jit")

CACHE_SIZE = 64          # signatures kept per function (least recently used dropped)
RETRACE_WARNING = 8      # traces of one function after which a warning names what keeps changing
_SCALAR_DTYPE = {bool: dt.bool_, int: dt.int64, float: dt.float64}


@api_boundary
def jit(fn=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), donate_argnames=(),
        cache_size=CACHE_SIZE):
    """Compile `fn` as one program per signature; usable as `@pt.jit` and `@pt.jit(...)`.

    static_argnums / static_argnames: arguments passed as Python values and baked into the trace
    (each new value traces again; they must be hashable). donate_argnums: array arguments whose
    buffers the call may reuse for its results; a donated array cannot be used afterwards.
    donate_argnames: the same by parameter name (JAX's); donation is a hint, so an argument passed
    by keyword keeps its buffer."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 cache_size=cache_size)
    return Jitted(fn, static_argnums, static_argnames, donate_argnums, cache_size, donate_argnames)


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, (int, str)) else tuple(x)


class Jitted:
    """A jitted function. Call it like `fn`; `.lower(*args)` shows what a call compiles;
    `.trace_count` counts traces (signatures seen), `.clear_cache()` forgets them."""

    def __init__(self, fn, static_argnums, static_argnames, donate_argnums, cache_size, donate_argnames=()):
        if not callable(fn):
            raise ArgumentError(f"pt.jit needs a function; got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__name__"):       # a functools.partial or a callable object has none
            self.__name__ = getattr(getattr(fn, "func", None), "__name__", None) or type(fn).__name__
        self.fn = fn
        self._names, nums, names = _parameters(fn), set(_as_tuple(static_argnums)), set(_as_tuple(static_argnames))
        sig = _signature_of(fn)
        if sig is not None:
            kinds = {p.kind for p in sig.parameters.values()}
            if inspect.Parameter.VAR_POSITIONAL not in kinds:   # -1 is the last parameter, as in JAX
                nums = {i + len(self._names) if -len(self._names) <= i < 0 else i for i in nums}
            if inspect.Parameter.VAR_KEYWORD not in kinds:
                unknown = sorted(n for n in names if n not in sig.parameters
                                 or sig.parameters[n].kind is inspect.Parameter.VAR_POSITIONAL)
                if unknown:
                    raise ArgumentError(f"pt.jit({self.__name__}): static_argnames names {unknown[0]!r}, but "
                                        f"{self.__name__}{sig} has no parameter of that name")
        for name in list(names):   # a static name is also a static position, and back
            if name in self._names:
                nums.add(self._names.index(name))
        for i in list(nums):
            if 0 <= i < len(self._names):
                names.add(self._names[i])
        self.static_argnums, self.static_argnames = tuple(sorted(nums)), frozenset(names)
        donated = set(_as_tuple(donate_argnums))
        for name in _as_tuple(donate_argnames):     # JAX's donate_argnames: positions by name
            if name not in self._names:
                raise ArgumentError(f"pt.jit({self.__name__}): donate_argnames names {name!r}, but "
                                    f"{self.__name__}{sig} has no positional parameter of that name")
            donated.add(self._names.index(name))
        self.donate_argnums = frozenset(donated)
        if self.donate_argnums & set(nums):
            raise PootError(f"pt.jit({fn.__name__}): an argument cannot be both static and donated")
        self.cache_size = cache_size
        self._cache: OrderedDict = OrderedDict()
        # one thread traces a new signature while the others that meet it wait for its program
        # (Dask's worker threads all call a jitted map_blocks function on their first chunks)
        self._trace_lock = threading.RLock()
        self.trace_count = 0
        self._changes: dict[str, int] = {}
        self._last_key = None
        self._hot: JitProgram | None = None   # the most recently used program, where it has a guard
        # pt.jit(obj.method): the object it is bound to, whose scalars key each call as an argument's
        receiver = getattr(fn, "__self__", None) if inspect.ismethod(fn) else None
        self._receiver = None if receiver is None or isinstance(receiver, _UNKEYED) else receiver

    def __repr__(self) -> str:
        return f"<poot.jit {getattr(self.fn, '__qualname__', self.fn)}>"

    def __reduce__(self):
        """Pickled (cloudpickle, dask.distributed, multiprocessing) as the function and its jit
        options: the traced programs belong to this process (compiled code, device buffers, locks),
        so the receiving process traces again on its first call."""
        return (Jitted, (self.fn, self.static_argnums, tuple(self.static_argnames),
                         tuple(self.donate_argnums), self.cache_size))

    def __get__(self, obj, objtype=None):   # methods: bind like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        # its own API boundary (what api_boundary makes of a function: a PootError names the user's
        # line), without a wrapper's frame and its spreading of the arguments again on every call
        try:
            if lazy._state.tracing:     # lazy.is_tracing(), inline: this runs on every call
                return self.fn(*args, **kwargs)
            hot = self._hot
            if hot is not None and not kwargs:
                guard = hot.guard
                if guard.matches(args):
                    if guard.groups:
                        args = guard.leaves(args)
                    if guard.binds is not None:
                        return hot.call_args(args, guard.binds, guard.picks)
                    return hot.call([args[i] for i in guard.picks])
            return self._call_signature(args, kwargs)
        except PootError as e:
            raise located_error(e) from None

    def _call_signature(self, args, kwargs):
        """A call the guard of the last signature did not take: found (or traced) by its key."""
        key, leaves = self._signature(args, kwargs)
        prog = self._cache.get(key)
        traced = False
        if prog is None:
            with self._trace_lock:
                prog = self._cache.get(key)     # traced by another thread meanwhile
                if prog is None:
                    self._hot = None
                    prog = self._compile(key, args, kwargs, leaves)
                    traced = True
        if not traced:
            if len(self._cache) > 1:
                self._cache.move_to_end(key)
            # the entry just moved last: no other is more recent
            self._hot = prog if prog.guard is not None else None
        if prog.writes:     # (such a program has no guard: every call comes here)
            same = _aliases(leaves)
            if same:
                prog = self._aliased_program(key, args, kwargs, leaves, same)
        return prog.call(leaves)

    def _aliased_program(self, key, args, kwargs, leaves, same: tuple) -> JitProgram:
        """The program for a call that passes one array at several leaf positions (`f(a, a)`) to a
        function that updates its arguments in place: traced with one stand-in for that array, so
        `x += 1; y += 1` adds 2 to it, as an eager call does. Such calls have their own signature
        (the positions that repeat one), so a call with distinct arrays keeps its own program."""
        key = key[:-1] + (("aliased", same), key[-1])     # the device stays last
        prog = self._cache.get(key)
        if prog is None:
            prog = self._compile(key, args, kwargs, leaves, same)
            prog.guard = None
        elif len(self._cache) > 1:
            self._cache.move_to_end(key)
        self._hot = None
        return prog

    def clear_cache(self) -> None:
        self._hot = None
        self._cache.clear()

    # -- signatures ------------------------------------------------------------------------------
    def _signature(self, args, kwargs):
        """(hashable key, dynamic leaves in order). Each dynamic argument is flattened on its own,
        so a message can name the argument a leaf belongs to."""
        statics = self.static_argnums
        parts = []
        leaves: list = []
        for i, a in enumerate(args):
            if statics and i in statics:
                try:
                    hash(a)
                except TypeError:
                    _hashable(a, self._arg_name(i))     # raises the error naming the argument
                parts.append(("static", i, _type_key(a), a))
                continue
            t = type(a)
            if t is Array:
                n = a._node
                aval = n.aval               # by the dtype's name: a DType hashes in Python
                parts.append((aval.shape, aval.dtype.name, n.device))
                leaves.append(a)
            elif t in _SCALARS:
                parts.append(t)
                leaves.append(a)
            elif t is np.ndarray or isinstance(a, np.generic):   # copied in now: signed and traced as a poot array
                a = _from_host(a)
                n = a._node
                parts.append((n.aval.shape, n.aval.dtype.name, n.device))
                leaves.append(a)
            else:
                parts.append(self._tree_spec(a, leaves, self._arg_name(i)))
        if kwargs:
            for k in sorted(kwargs):
                v = kwargs[k]
                if k in self.static_argnames:
                    parts.append(("static", k, _type_key(v), _hashable(v, k)))
                else:
                    parts.append(("kw", k, self._tree_spec(v, leaves, k)))
        if self._receiver is not None:
            parts.append(("self", object_state(self._receiver)))
        parts.append(_dev.current())
        return tuple(parts), leaves

    def _tree_spec(self, tree, leaves: list, name: str):
        flat, treedef = pytree.flatten(tree)
        specs = []
        for x in flat:
            t = type(x)
            if t is Array or isinstance(x, Array):
                aval = x._node.aval
                specs.append((aval.shape, aval.dtype.name, x._node.device))
                leaves.append(x)
            elif t in _SCALARS:
                specs.append(t)
                leaves.append(x)
            elif isinstance(x, (np.ndarray, np.generic)):
                x = _from_host(x)
                aval = x._node.aval
                specs.append((aval.shape, aval.dtype.name, x._node.device))
                leaves.append(x)
            elif t in _VALUE_LEAVES:   # part of the structure, like a static argument
                specs.append(("static", t, x))
            else:   # an object: its identity (or hash) and the scalars it holds (jit_held.object_state)
                specs.append(("static", _type_key(x), _leaf_hashable(x, name), object_state(x)))
        return (treedef, tuple(specs))

    def _arg_name(self, i: int) -> str:
        return self._names[i] if i < len(self._names) else f"args[{i}]"

    # -- tracing ---------------------------------------------------------------------------------
    def _compile(self, key, args, kwargs, leaves, same: tuple = ()) -> JitProgram:
        changes = dict(self._changes)
        reason = self._reason(key)
        level = logging.WARNING if os.environ.get("POOT_LOG_COMPILES") == "1" else logging.DEBUG
        log.log(level, "poot.jit: tracing %s (trace %d): %s", self.__name__, self.trace_count + 1, reason)
        try:
            prog = self._trace(args, kwargs, leaves, key[-1], same)
        except BaseException:
            # a trace that raised caches nothing, so it counts neither as a trace nor as a change:
            # libraries call functions on 0-size arrays to learn their output type (Dask's
            # map_blocks does), which a function that reduces refuses, as NumPy does
            self._changes = changes
            raise
        self.trace_count += 1
        if self.trace_count == RETRACE_WARNING and self._changes:
            worst = max(self._changes, key=self._changes.get)
            warnings.warn(f"pt.jit: {self.__name__} has been traced {self.trace_count} times; "
                          f"'{worst}' changed {self._changes[worst]} times. Pass arrays of one "
                          f"shape and dtype, or make it a static argument only if it takes few values",
                          RetraceWarning, stacklevel=4)
        prog.guard = _Guard.of(self, args, kwargs, key[-1], prog)
        self._cache[key] = prog
        self._last_key = key
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return prog

    def _trace(self, args, kwargs, leaves, device: str, same: tuple = ()) -> JitProgram:
        """Trace the function for these arguments; `same` pairs (leaf position, an earlier position
        holding the same Array) that share one stand-in (`_aliased_program`)."""
        self._check_binding(args, kwargs)
        where = _definition_site(self.fn)
        params: list[lazy.Node] = []
        stand_ins: dict[int, Array] = {}
        earlier = dict(same)
        # a Python scalar has no device of its own: it joins its operands' (as eagerly), so its
        # stand-in lives where the array arguments do (the current device only where they are on
        # several, or there are none)
        arrays_on = {x._node.device for x in leaves if isinstance(x, Array)}
        scalar_device = arrays_on.pop() if len(arrays_on) == 1 else device
        for k, x in enumerate(leaves):
            if k in earlier:
                params.append(params[earlier[k]])
                stand_ins[k] = stand_ins[earlier[k]]
                continue
            if isinstance(x, Array):
                p = lazy.placeholder(x._node.aval, x._node.device, where)
            elif type(x) in _SCALARS:
                p = lazy.placeholder(Aval((), _SCALAR_DTYPE[type(x)]), scalar_device, where)
                p.weak = 1
            else:
                p = lazy.placeholder(Aval(x.shape, dt.as_dtype(x.dtype)), device, where)
            params.append(p)
            stand_ins[k] = Array(p)
        t_args, t_kwargs = self._substitute(args, kwargs, stand_ins)
        casts: set = set()
        reached = reachable_arrays(self.fn)
        given = pytree.flatten((t_args, t_kwargs))
        lazy._state.weak_casts = casts
        try:
            with lazy.scope() as inside:
                result = self.fn(*t_args, **t_kwargs)
        except BaseException:
            refuse_writes(reached, f"pt.jit({self.__name__})", failed=True)
            raise
        finally:
            lazy._state.weak_casts = None
        refuse_writes(reached, f"pt.jit({self.__name__})")
        refuse_container_writes(self.__name__, self.fn, given, (t_args, t_kwargs))
        # arguments the function updated in place (x[i] = v, x += 1): their new values are results
        # too, which each call hands back to the caller's arrays, as an eager call leaves them
        writes = tuple(k for k, x in enumerate(leaves) if isinstance(x, Array) and stand_ins[k]._node is not params[k])
        if writes:
            result = (result, tuple(stand_ins[k] for k in writes))
        prog = JitProgram(self.__name__, result, params, inside, leaves, casts,
                          self._donated_positions(args, leaves), device, writes)
        refuse_baked_attributes(self.__name__, self._held_arrays(args, kwargs), prog.binds)
        return prog

    def _check_binding(self, args, kwargs) -> None:
        """A call whose arguments the function cannot take (too many, a missing or unknown one) is
        refused here, naming the signature, not by a TypeError from inside the trace."""
        try:
            sig = inspect.signature(self.fn)
        except (TypeError, ValueError):         # a builtin without a signature: the call will say
            return
        self._check_static_positions(sig)
        params = sig.parameters.values()
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            names = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
            unknown = [k for k in kwargs if k not in names]     # named first: a misspelt keyword
            if unknown:                                         # also leaves its parameter "missing"
                raise ArgumentError(f"pt.jit({self.__name__}): cannot call it with these arguments: got an "
                                    f"unexpected keyword argument {unknown[0]!r}; it takes {self.__name__}{sig}")
        try:
            sig.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"pt.jit({self.__name__}): cannot call it with these arguments: {e}; "
                                f"it takes {self.__name__}{sig}") from None

    def _check_static_positions(self, sig: inspect.Signature) -> None:
        """A static_argnums (or donate_argnums) index past the function's positional parameters names
        no argument: it would silently make nothing static (or donated); JAX raises too. A function
        taking *args takes any."""
        kinds = [p.kind for p in sig.parameters.values()]
        if inspect.Parameter.VAR_POSITIONAL in kinds:
            return
        n = sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)
        for what, nums in (("static_argnums", self.static_argnums), ("donate_argnums", self.donate_argnums)):
            bad = sorted(i for i in nums if not -n <= i < n)     # a donation past them would do nothing
            if bad:
                raise ArgumentError(f"pt.jit({self.__name__}): {what} holds {bad[0]}, but "
                                    f"{self.__name__}{sig} takes {n} positional argument{'' if n == 1 else 's'}; "
                                    f"{what} must index its positional parameters")

    def _held_arrays(self, args, kwargs) -> dict:
        """The arrays held by the plain objects among the non-static arguments (jit_held.py)."""
        held: dict = receiver_arrays(self.fn)
        if self._receiver is not None:
            held_numpy(self._receiver, "self", receiver=True)
        named = [(self._arg_name(i), a) for i, a in enumerate(args) if i not in self.static_argnums]
        named += [(k, v) for k, v in kwargs.items() if k not in self.static_argnames]
        for name, a in named:
            for x in pytree.flatten(a)[0]:
                if not _is_dynamic(x):
                    held_numpy(x, name)
                    held.update(held_arrays(x, name))
        return held

    def _substitute(self, args, kwargs, stand_ins):
        """The arguments with each dynamic leaf replaced by its abstract stand-in."""
        counter = iter(range(len(stand_ins)))
        statics = self.static_argnums

        def swap(tree):
            flat, treedef = pytree.flatten(tree)
            out = []
            for x in flat:
                if _is_dynamic(x):
                    out.append(stand_ins[next(counter)])
                else:
                    out.append(x)
            return pytree.unflatten(treedef, out)

        new_args = [a if i in statics else swap(a) for i, a in enumerate(args)]
        new_kwargs = {k: (kwargs[k] if k in self.static_argnames else swap(kwargs[k])) for k in sorted(kwargs)}
        return new_args, new_kwargs

    def _donated_positions(self, args, leaves) -> list[int]:
        """Indices into the dynamic leaves of the Arrays of donated arguments."""
        if not self.donate_argnums:
            return []
        out, k = [], 0
        for i, a in enumerate(args):
            if i in self.static_argnums:
                continue
            n = sum(1 for x in pytree.flatten(a)[0] if _is_dynamic(x))
            if i in self.donate_argnums:
                out += [j for j in range(k, k + n) if isinstance(leaves[j], Array)]
            k += n
        return out

    def _reason(self, key) -> str:
        """Why this call traces: what differs from the previous signature."""
        last = self._last_key
        if last is None:
            return "first call"
        if len(key) > 1 and isinstance(key[-2], tuple) and key[-2][:1] == ("aliased",):
            return f"one array at several argument leaves {key[-2][1]} of a function updating them in place"
        if len(last) != len(key):
            return "a different number of arguments"
        diffs = []
        for i, (a, b) in enumerate(zip(last, key)):
            if a == b:
                continue
            if i == len(key) - 1:
                diffs.append(f"the device changed: {a} -> {b}")
                continue
            name = self._part_name(i, b)
            self._changes[name] = self._changes.get(name, 0) + 1
            diffs.append(f"'{name}' changed: {_describe(a)} -> {_describe(b)}")
        return "; ".join(diffs) or "the signature was dropped from the cache"

    def _part_name(self, i: int, part) -> str:
        if isinstance(part, tuple) and part and part[0] in ("static", "kw"):
            return part[1] if isinstance(part[1], str) else self._arg_name(part[1])
        return self._arg_name(i)

    @api_boundary
    def lower(self, *args, **kwargs):
        """What a call with these arguments compiles to (`.graph`, `.plan`, `.kernels`,
        `.as_text(stage)`), traced fresh and without running anything."""
        from poot.trace.jit_lower import Lowered

        key, leaves = self._signature(args, kwargs)
        prog = self._cache.get(key) or self._trace(args, kwargs, leaves, key[-1])
        return Lowered(prog)


def _aliases(leaves: list) -> tuple:
    """The (position, earlier position) pairs of the leaves that are an Array seen earlier among
    them (`f(a, a)`, `f({'x': a, 'y': a})`); () for distinct arrays, found by one set of ids."""
    ids = [id(x) for x in leaves if type(x) is Array]
    if len(set(ids)) == len(ids):
        return ()
    first: dict[int, int] = {}
    out = []
    for k, x in enumerate(leaves):
        if type(x) is Array:
            j = first.setdefault(id(x), k)
            if j != k:
                out.append((k, j))
    return tuple(out)


def _from_host(x) -> Array:
    """A NumPy argument as the poot array `pt.asarray` makes of it (copied to the current device,
    big-endian data byte-swapped): a call with NumPy data then has the signature, and replays the
    program, of a call with a poot array of that shape and dtype."""
    return _array(x)


def _is_dynamic(x) -> bool:
    """A leaf traced as an array input (the rest of a pytree's leaves are static)."""
    return isinstance(x, (Array, np.ndarray, np.generic)) or type(x) in _SCALARS


def _describe(part) -> str:
    if isinstance(part, tuple) and len(part) == 3 and isinstance(part[0], tuple) and isinstance(part[1], str):
        return f"{Aval(part[0], dt.as_dtype(part[1]))} on {part[2]}"      # an array: shape, dtype, device
    if isinstance(part, tuple) and part and part[0] == "static":
        return repr(part[-1])
    if isinstance(part, tuple) and part and part[0] == "kw":
        return _describe(part[2])
    if isinstance(part, type):
        return f"a Python {part.__name__}"
    if isinstance(part, tuple) and len(part) == 2 and isinstance(part[1], tuple):
        return "structure/leaves " + ", ".join(_describe(s) for s in part[1])
    return str(part)


def _type_key(value):
    """The types in a static value, for its key beside the value: 2, 2.0 and True are equal and hash
    alike, but a function traced with one may compute differently with another (x / c or x // c)."""
    t = type(value)
    return (t, tuple(map(_type_key, value))) if t is tuple else t


def _hashable(value, name: str):
    try:
        hash(value)
    except TypeError:
        raise ArgumentError(f"pt.jit: static argument '{name}' is a {type(value).__name__}, which is not "
                            f"hashable; pass a tuple instead of a list, or make it a dynamic array") from None
    return value


def _signature_of(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


_VALUE_LEAVES = frozenset({str, bytes, complex, type(None)})


def _leaf_hashable(value, name: str):
    """A non-array leaf of a (non-static) argument, which keys the signature by its hash."""
    try:
        hash(value)
    except TypeError:
        raise PootError(f"pt.jit: the argument '{name}' is or holds a {type(value).__name__}, which poot does "
                        f"not flatten as a pytree (tuples, lists, dicts, OrderedDict, defaultdict, NamedTuples "
                        f"and dataclasses are) and which is not hashable, so it cannot be part of the call's "
                        f"signature either; pass its arrays in one of those containers") from None
    return value


def _parameters(fn) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _definition_site(fn):
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code else None

