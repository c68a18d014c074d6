"""Refusing in-place writes that would reach nothing.

NumPy's in-place functions called on a poot Array (np.put, np.putmask, np.place, np.copyto,
np.fill_diagonal, np.put_along_axis, ufunc.at) and poot's own (pt.put..., pt.random.shuffle,
Generator.shuffle) rebind the Array object they are given to the updated value, as `x[i] = v` does:
poot arrays are values, and reshape, indexing and .T give new arrays, not views. Given a temporary
nothing else holds (`np.fill_diagonal(a.reshape(1, 3), 7)`, `np.add.at(a.T, i, 1)`), the rebound
Array is dropped as soon as the call returns, so the write reaches neither `a` nor anything else,
where NumPy would have written `a` through the view. Such a call is refused with a CopyError (as
fastpath refuses `Z[1][0] = v`) once its other arguments are checked, never lost silently.

A temporary is told from a held array by its reference count at the check. What a temporary's count
is depends on the call path (the NumPy dispatcher's tuples, poot's boundaries) and on the interpreter,
so it is measured once per check site on a probe (an Array subclass) passed both as a temporary and
held by a name; where the two counts are equal nothing is refused. A path that holds the array more
(an array method calling the function) reads a larger count, so a held array is never refused; such
a path may miss a temporary.
"""
from __future__ import annotations

import functools
import sys
import threading

from poot.errors import CopyError
from poot.trace.array import Array


class Probe(Array):
    """The array a measurement passes: a check site that meets one records its count and stops."""

    __slots__ = ()


class _Measured(Exception):
    """Raised at a check site by a probe's call, once its count is recorded."""


_limits: dict = {}              # check site -> the count a temporary has there (0: not told apart)
_measuring = threading.local()


def probe() -> Probe:
    from poot.trace.creation import zeros

    return Probe(zeros((2, 2))._node)


def is_temporary(site: str, count: int, target, call_with) -> bool:
    """Whether `target`, whose reference count read at `site` (on entry to the public function) is
    `count`, is a temporary: its count no higher than a temporary's there. `call_with(held)` calls the
    same public entry with a probe as the array written: held by a name when `held`, else a temporary
    made in the call's own argument list (as `f(a.reshape(1, 3), v)` makes one). The caller refuses
    (`refuse`) after checking its other arguments, so a call wrong in other ways names that first."""
    if type(target) is Probe:
        seen = getattr(_measuring, "seen", None)
        if seen is not None:
            seen.append(count)
            raise _Measured
    limit = _limits.get(site)
    if limit is None:
        limit = _limits[site] = _measure(call_with)
    return count <= limit


def refuse(op: str) -> None:
    """The CopyError of `op` writing into a temporary (is_temporary)."""
    raise CopyError(f"{op}: the array it writes into is a temporary nothing holds (such as "
                    f"a.reshape(1, 3), a.T or a[0]): in poot those give new arrays, not views of a, so "
                    f"the write would be lost; name the array first, write into it, and assign it back "
                    f"(b = a.T; ...; a = b.T)")


def _measure(call_with) -> int:
    seen: list[int] = []
    _measuring.seen = seen
    try:
        for held in (False, True):
            try:
                call_with(held)
            except _Measured:
                pass
    finally:
        _measuring.seen = None
    return seen[0] if len(seen) == 2 and seen[0] < seen[1] else 0


def refuses_temporaries(op: str, index: int = 0, named=None):
    """Decorate public function `op`, which rebinds the poot Array that is its positional argument
    `index` (1 for a method whose receiver comes first), to refuse a temporary there: its count is
    read on entry, here, before any boundary spreads the arguments again (a call with keywords holds
    them differently there), and the refusal comes after the function has checked its other arguments.
    `named(receiver)` names the function in the message where `op` (the measured site) does not
    (each ufunc's `at`)."""

    def decorate(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            lost = len(args) > index and isinstance(args[index], Array) and is_temporary(
                op, sys.getrefcount(args[index]), args[index], lambda held: _probe(checked, args[:index], held))
            result = fn(*args, **kwargs)
            if lost:
                refuse(named(args[0]) if named is not None else op)
            return result

        return checked

    return decorate


def _probe(fn, receiver: tuple, held: bool) -> None:
    """fn(<probe>) (fn(receiver, <probe>) for a method) as a user calls it: the probe held by a name, or
    a temporary made in the call's own argument list. Spelled out: a call with *args holds its
    arguments differently."""
    if receiver:
        if held:
            p = probe()
            fn(receiver[0], p)
        else:
            fn(receiver[0], probe())
    elif held:
        p = probe()
        fn(p)
    else:
        fn(probe())
