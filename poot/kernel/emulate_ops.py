"""What the intrinsics, casts, math functions and buffer accesses do under `kernel.emulate(...)`.

The emulator (emulate.py) rewrites a kernel body so each of these is called where the importer saw the
corresponding construct; `STATE` holds the thread the scheduler is running (its grid coordinates) and
its workgroup's shared arrays.
"""
from __future__ import annotations

import sys

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType
from poot.errors import PootError, line_at
from poot.kernel import scalar_ops


class TrapSignal(Exception):
    """A thread hit a trap: it ends; the emulator raises poot.KernelTrap once the grid has run."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class ThreadState:
    __slots__ = ("thread", "local", "group", "group_size", "num_groups", "shared", "shared_decls", "async_copies",
                 "races", "tracked")

    def __init__(self):
        self.thread = self.local = self.group = (0, 0, 0)
        self.group_size = self.num_groups = (1, 1, 1)
        self.shared: dict = {}
        self.shared_decls: dict = {}
        self.async_copies: dict = {}      # thread -> its queued copy_async copies (poot/kernel/async_copy.py)
        self.races = None                 # the launch's Races, or None (one thread cannot race)
        self.tracked: dict = {}           # id(shared array or writable buffer) -> its Accesses


STATE = ThreadState()


class Races:
    """The accesses of one launch to its shared arrays and writable buffers, to refuse what the devices would
    compute differently from the emulator: the emulator runs the threads one after another, a device runs
    them at once. Two accesses to one element by different threads, at least one a write (or one an atomic
    add and the other a plain access), race unless a pt.workgroup_barrier() of their workgroup separates
    them; threads of different workgroups are never ordered. Such a pair raises PootError naming both
    threads, the element and the source lines. Two writes of the same value do not race (no timing changes
    the result), nor do atomic adds among themselves, nor reads of an element never written (kernels read
    padding and discard it, e.g. a masked tail of a tile). Arrays written in bulk (16-byte copies:
    async_copy.py) leave the tracking (`untrack`).

    `phase` counts barrier intervals over the whole launch (a new workgroup starts a new one), so two
    accesses are ordered exactly when they come from one workgroup and different phases."""

    def __init__(self, kernel: str, files: dict):
        self.kernel, self.files = kernel, files     # files: emulated function name -> its source's display
        self.phase = 0
        self.buffers: dict = {}                     # id(buffer) -> Accesses, for the whole launch

    def start_group(self) -> None:
        self.phase += 1
        STATE.tracked = dict(self.buffers)          # the workgroup's shared arrays join as they are made

    def end_phase(self) -> None:
        """Every thread of the workgroup reached a barrier (or its end)."""
        self.phase += 1

    def me(self) -> tuple:
        """(thread, workgroup, phase, (code, instruction offset)) of the access being made; the line is
        found from the offset only for a message (`where`): a frame's f_lineno scans its line table, and
        this runs on every access."""
        f = sys._getframe(3)                        # the emulated line, under load/store/atomic_add and Accesses
        while f is not None and f.f_code.co_name not in self.files:
            f = f.f_back
        return STATE.thread, STATE.group, self.phase, f and (f.f_code, f.f_lasti)

    def where(self, at) -> str:
        if not at:
            return ""
        code, lasti = at
        return f" at {self.files[code.co_name]}:{line_at(code, lasti) or code.co_firstlineno}"

    def refuse(self, acc, i, mine: tuple, mine_what: str, theirs: tuple, their_what: str) -> PootError:
        same = theirs[1] == mine[1]
        place = f"in workgroup {mine[1]}" if same else f"in workgroups {theirs[1]} and {mine[1]}"
        fix = ("put a pt.workgroup_barrier() between them (every thread of the workgroup must reach it), or "
               "accumulate with pt.atomic_add" if same else "threads of different workgroups are never ordered: "
               "give each element one writing thread, or accumulate with pt.atomic_add")
        return PootError(f"kernel '{self.kernel}': {acc.what} '{acc.name}' element {i} is {their_what} by thread "
                         f"{theirs[0]}{self.where(theirs[3])} and {mine_what} by thread {mine[0]}"
                         f"{self.where(mine[3])} {place} with nothing ordering them: on a device those threads run "
                         f"at the same time, so the result depends on their timing; {fix}")


_KINDS = ("written", "written", "read", "read", "atomically added to", "atomically added to")


class Accesses:
    """Per element of one shared array or writable buffer, the accesses that may race with the next one:
    [last write, last write of another thread, last read, its other, last atomic add, its other], each as
    Races.me() gave it. (Written out flat: this runs on every access the emulator makes.)"""
    __slots__ = ("name", "what", "races", "state")

    def __init__(self, name: str, what: str, races: Races):
        self.name, self.what, self.races = name, what, races
        self.state: dict = {}

    def _refuse(self, i: int, mine: tuple, mine_what: str, k: int, st: list):
        return self.races.refuse(self, i, mine, mine_what, st[k], _KINDS[k])

    def read(self, i: int) -> None:
        mine = self.races.me()
        st = self.state.get(i)
        if st is None:
            self.state[i] = [None, None, mine, None, None, None]
            return
        t, g, p = mine[0], mine[1], mine[2]
        for k in (0, 1, 4, 5):
            o = st[k]
            if o is not None and o[0] != t and (o[1] != g or o[2] == p):
                raise self._refuse(i, mine, "read", k, st)
        if st[2] is not None and st[2][0] != t:
            st[3] = st[2]
        st[2] = mine

    def write(self, buf, i: int, value) -> None:
        mine = self.races.me()
        st = self.state.get(i)
        if st is None:
            self.state[i] = [mine, None, None, None, None, None]
            return
        t, g, p = mine[0], mine[1], mine[2]
        for k in (2, 3, 4, 5, 0, 1):
            o = st[k]
            if o is not None and o[0] != t and (o[1] != g or o[2] == p):
                if k > 1:
                    raise self._refuse(i, mine, "written", k, st)
                if np.asarray(buf[i]).tobytes() != np.asarray(value, buf.dtype).tobytes():
                    raise self._refuse(i, mine, "written with another value", k, st)
        if st[0] is not None and st[0][0] != t:
            st[1] = st[0]
        st[0] = mine

    def atomic(self, i: int) -> None:
        mine = self.races.me()
        st = self.state.get(i)
        if st is None:
            self.state[i] = [None, None, None, None, mine, None]
            return
        t, g, p = mine[0], mine[1], mine[2]
        for k in (0, 1, 2, 3):
            o = st[k]
            if o is not None and o[0] != t and (o[1] != g or o[2] == p):
                raise self._refuse(i, mine, "atomically added to", k, st)
        if st[4] is not None and st[4][0] != t:
            st[5] = st[4]
        st[4] = mine


def untrack(buf) -> None:
    """`buf` is written in bulk (a 16-byte copy): its element-wise race tracking stops."""
    STATE.tracked.pop(id(buf), None)
    if STATE.races is not None:
        STATE.races.buffers.pop(id(buf), None)


def index(kind: str, axis: int):
    return np.uint32(getattr(STATE, kind)[axis])


def shared(name: str):
    arr = STATE.shared.get(name)
    if arr is None:
        dtype, size = STATE.shared_decls[name]
        arr = STATE.shared[name] = np.zeros(size, dtype=dtype.np)
        if STATE.races is not None:
            STATE.tracked[id(arr)] = Accesses(name, "shared array", STATE.races)
    return arr


def effect_then(_effects, value):
    """`value`, once its expression has run for its effects: the importer folded the expression to a
    constant, but a device function called in it may still store or trap (its arguments evaluate first)."""
    return value


def _check(buf, i, code):
    if not 0 <= i < len(buf):
        raise TrapSignal(code if code is not None else 1)
    return i


def load(buf, idx, code):
    i = _check(buf, int(idx), code)
    acc = STATE.tracked.get(id(buf))
    if acc is not None:
        acc.read(i)
    return buf[i]


def store(buf, idx, value, code):
    i = _check(buf, int(idx), code)
    value = scalar_ops.as_scalar(value, dt.as_dtype(buf.dtype)) if not isinstance(value, np.generic) else value
    acc = STATE.tracked.get(id(buf))
    if acc is not None:
        acc.write(buf, i, value)
    buf[i] = value


def atomic_add(buf, idx, value, code):
    i = _check(buf, int(idx), code)
    acc = STATE.tracked.get(id(buf))
    if acc is not None:
        acc.atomic(i)
    d = dt.as_dtype(buf.dtype)
    old = buf[i]
    buf[i] = scalar_ops.as_scalar(old + scalar_ops.as_scalar(value, d), d)
    return old


def length(buf):
    return np.uint32(len(buf))


def cast(x, dtype: DType):
    return scalar_ops.cast(x, dtype)


def bitcast(x, src: DType, dtype: DType):
    return scalar_ops.bitcast(scalar_ops.as_scalar(x, src), dtype)


def fma(a, b, c, dtype: DType):
    return scalar_ops.fma(a, b, c, dtype)


def unary(x, op: str):
    return scalar_ops.unary(op, x)


def binary(a, b, op: str, dtype: DType | None = None):
    if dtype is not None:
        a, b = scalar_ops.as_scalar(a, dtype), scalar_ops.as_scalar(b, dtype)
    return scalar_ops.binary(op, a, b)


def min_max(*args):
    *vals, name = args
    acc = vals[0]
    for v in vals[1:]:
        acc = scalar_ops.min_or_max(acc, v, name)
    return acc


def select(c, a, b):
    return a if c else b


def as_local(value, dtype: DType):
    return scalar_ops.as_scalar(value, dtype)


def for_range(dtype: DType, *args):
    for v in range(*(int(a) for a in args)):
        yield dtype.np.type(v)


def trap_unless(cond, code: int):
    if not cond:
        raise TrapSignal(code)


def binop(a, b, fn, dtype: DType):
    return fn(scalar_ops.as_scalar(a, dtype), scalar_ops.as_scalar(b, dtype), dtype)
