"""What the intrinsics, casts, math functions and buffer accesses do under `kernel.emulate(...)`.

The emulator (emulate.py) rewrites a kernel body so each of these is called where the importer saw the
corresponding construct; `STATE` holds the thread the scheduler is running (its grid coordinates) and
its workgroup's shared arrays.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType
from poot.kernel import scalar_ops


class TrapSignal(Exception):
    """A thread hit a trap: it ends; the emulator raises poot.KernelTrap once the grid has run."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class ThreadState:
    __slots__ = ("thread", "local", "group", "group_size", "num_groups", "shared", "shared_decls", "async_copies")

    def __init__(self):
        self.thread = self.local = self.group = (0, 0, 0)
        self.group_size = self.num_groups = (1, 1, 1)
        self.shared: dict = {}
        self.shared_decls: dict = {}
        self.async_copies: dict = {}      # thread -> its queued copy_async copies (poot/kernel/async_copy.py)


STATE = ThreadState()


def index(kind: str, axis: int):
    return np.uint32(getattr(STATE, kind)[axis])


def shared(name: str):
    arr = STATE.shared.get(name)
    if arr is None:
        dtype, size = STATE.shared_decls[name]
        arr = STATE.shared[name] = np.zeros(size, dtype=dtype.np)
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
    return buf[_check(buf, int(idx), code)]


def store(buf, idx, value, code):
    i = _check(buf, int(idx), code)
    buf[i] = scalar_ops.as_scalar(value, dt.as_dtype(buf.dtype)) if not isinstance(value, np.generic) else value


def atomic_add(buf, idx, value, code):
    i = _check(buf, int(idx), code)
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
