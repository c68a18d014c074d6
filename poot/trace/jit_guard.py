"""The guard of a jitted function's cached program (`Guard`): what a plain positional call must match
to reuse the signature it was traced for without building and hashing its key (poot/trace/jit.py)."""
from __future__ import annotations

import inspect

import numpy as np

from poot import dtypes as dt
from poot.graph import Aval
from poot.trace import context as _dev
from poot.trace import pytree
from poot.trace.array import Array
from poot.trace.jit_held import object_state
from poot.trace.jit_program import SCALARS as _SCALARS
from poot.trace.jit_program import JitProgram


class Guard:
    """What a call must match to have a cached signature, for the common call: positional arguments
    alone, each a static value, an Array, a Python scalar or a tuple or list of Arrays (a training
    step's parameters). A matching call has that signature, so it skips building its key
    (`_signature`) and hashing it: each static argument is the very object traced with (an equal one
    takes the full lookup), each Array has the shape, dtype and device traced with (in a tuple or list:
    of that type and length), each scalar the type, and the current device is the same. Only statics
    that cannot change unseen are checked by identity (`_fixed`: immutable values, objects hashed by
    identity); a call with any other static (a mutable object hashed by its contents, which the key
    would hash anew) has no guard. It holds no reference to its program (which holds it): a program
    dropped from the cache is freed at once."""

    __slots__ = ("nargs", "statics", "arrays", "scalars", "groups", "dynamic", "device", "picks", "binds",
                 "objects")

    def __init__(self, prog: JitProgram, nargs: int, statics, arrays, scalars, groups, dynamic, device: str,
                 picks, objects=()):
        # (position, object, its object_state) of plain objects keyed by identity (position None:
        # the object of a jitted bound method)
        self.objects = tuple(objects)
        self.nargs, self.device = nargs, device
        self.statics = tuple(statics)      # (position, value)
        self.arrays = tuple(arrays)        # (position, aval, device)
        self.scalars = tuple(scalars)      # (position, type)
        self.groups = tuple(groups)        # (position, tuple or list, ((aval, device) per element))
        self.dynamic = tuple(dynamic)      # the positions of the dynamic arguments, in order
        # per dynamic leaf: its argument's position; with groups, its index among the call's `leaves`
        self.picks = tuple(picks) if not groups else tuple(range(len(picks)))
        self.binds = prog.bound(self.picks)  # where each graph input's buffer is, or None

    @classmethod
    def of(cls, jitted, args, kwargs, device: str, prog: JitProgram) -> "Guard | None":
        """The guard of `prog`, traced for these arguments; None where they are not all plain
        positional ones, or where a call rebinds arguments updated in place (JitProgram.call does)."""
        if kwargs or prog.writes:
            return None
        statics, arrays, scalars, groups, dynamic, picks, objects = [], [], [], [], [], [], []
        if jitted._receiver is not None:      # pt.jit(obj.method): keyed by obj's scalars too
            objects.append((None, jitted._receiver, object_state(jitted._receiver)))
        for i, a in enumerate(args):
            if i in jitted.static_argnums:
                if not _fixed(a):
                    return None
                statics.append((i, a))
                continue
            t = type(a)
            if t is Array:
                arrays.append((i, a._node.aval, a._node.device))
            elif t is np.ndarray or isinstance(a, np.generic):   # traced as the poot array it was copied to
                arrays.append((i, Aval(a.shape, dt.as_dtype(a.dtype.newbyteorder("="))), device))
            elif t in _SCALARS:
                scalars.append((i, t))
            elif (t is tuple or t is list) and a and all(type(x) is Array for x in a):
                groups.append((i, t, tuple((x._node.aval, x._node.device) for x in a)))
                dynamic.append(i)
                picks += [i] * len(a)
                continue
            elif t.__hash__ is object.__hash__ and pytree.flatten(a)[1] is pytree.LEAF \
                    and not isinstance(a, _UNKEYED):
                # a plain object keyed by its identity: the very object, holding the same scalars
                objects.append((i, a, object_state(a)))
                continue
            else:
                return None
            dynamic.append(i)
            picks.append(i)
        return cls(prog, len(args), statics, arrays, scalars, groups, dynamic, device, picks, objects)

    def matches(self, args: tuple) -> bool:
        if len(args) != self.nargs:
            return False
        for i, v in self.statics:
            if args[i] is not v:
                return False
        for i, aval, device in self.arrays:
            a = args[i]
            if type(a) is not Array:
                return False
            n = a._node
            if (n.aval is not aval and n.aval != aval) or n.device != device:   # a result of the last call
                return False                                                # has the very aval
        for i, t in self.scalars:
            if type(args[i]) is not t:
                return False
        for i, obj, state in self.objects:
            if (i is not None and args[i] is not obj) or object_state(obj) != state:
                return False
        for i, t, specs in self.groups:
            g = args[i]
            if type(g) is not t or len(g) != len(specs):
                return False
            for a, (aval, device) in zip(g, specs):
                if type(a) is not Array:
                    return False
                n = a._node
                if (n.aval is not aval and n.aval != aval) or n.device != device:
                    return False
        stack = _dev._local.__dict__.get("stack")      # _dev.current(), inline: one frame less
        return (stack[-1] if stack else _dev.default()) == self.device

    def leaves(self, args: tuple) -> list:
        """The dynamic leaves of a matching call with groups, in the signature's order."""
        out = []
        for i in self.dynamic:
            a = args[i]
            if type(a) is tuple or type(a) is list:
                out += a
            else:
                out.append(a)
        return out


_UNKEYED = (type, type(inspect), Array)     # receivers not keyed by their state: classes, modules

_IMMUTABLE = frozenset({int, float, complex, bool, str, bytes, type(None), dt.DType, np.dtype})


def _fixed(value) -> bool:
    """Whether a static argument's hash cannot change while the guard holds it: an immutable value
    (tuples and frozen dataclasses of such), or an object hashed by identity (a module, a function)."""
    t = type(value)
    if t in _IMMUTABLE or t.__hash__ is object.__hash__:
        return True
    if t is tuple or t is frozenset:
        return all(_fixed(v) for v in value)
    params = getattr(t, "__dataclass_params__", None)
    if params is not None and params.frozen:
        return all(_fixed(getattr(value, f)) for f in t.__dataclass_fields__)
    return False
