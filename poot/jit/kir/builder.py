"""Helpers to construct KIR: expression constructors that infer dtypes, and a KernelBuilder whose
context managers (`with kb.if_(c):`, `with kb.for_(...) as i:`) nest statements the way code reads."""
from __future__ import annotations

import contextlib
import math

from poot import dtypes as dt
from poot.dtypes import DType
from poot.jit.kir.model import (COMPARE_OPS, PREDICATE_UNARY, Access, Assign, AtomicAdd, Barrier, Binary,
                    Bitcast, Break, BufferParam, Cast, Const, Continue, Expr, Fma, For, If, Index,
                    Kernel, Load, Local, Read, Return, ScalarParam, Select, SharedArray, ShuffleXor, Store, Trap,
                    TrapSite, Unary, While)


def const(value, dtype: DType) -> Const:
    """A constant of `dtype`; floats are rounded to the dtype so the stored value is exact."""
    if dtype is dt.bool_:
        return Const(bool(value), dtype)
    if dt.is_int(dtype):
        info = dt.iinfo(dtype)
        v = int(value)
        if not info.min <= v <= info.max:  # wrap like the target arithmetic would
            v = (v - info.min) % (1 << dtype.bits) + info.min
        return Const(v, dtype)
    v = float(value)
    if not math.isnan(v) and dtype is not dt.float64:
        v = float(dtype.np.type(v))
    return Const(v, dtype)


def _lift(x, like: DType) -> Expr:
    return x if not isinstance(x, (bool, int, float)) else const(x, like)


def cast(x: Expr, dtype: DType) -> Expr:
    if x.dtype is dtype:
        return x
    if isinstance(x, Const):
        if dtype is dt.bool_:
            return const(bool(x.value), dtype)
        if dt.is_int(dtype) and isinstance(x.value, float):
            if math.isnan(x.value) or math.isinf(x.value):
                return Cast(x, dtype)
            return const(math.trunc(x.value), dtype) if _fits(math.trunc(x.value), dtype) else Cast(x, dtype)
        if dt.is_int(dtype) and not _fits(int(x.value), dtype):
            return Cast(x, dtype)
        return const(x.value, dtype)
    return Cast(x, dtype)


def _fits(v: int, dtype: DType) -> bool:
    info = dt.iinfo(dtype)
    return info.min <= v <= info.max


def bitcast(x: Expr, dtype: DType) -> Expr:
    return x if x.dtype is dtype else Bitcast(x, dtype)


def unary(op: str, x: Expr) -> Unary:
    return Unary(op, x, dt.bool_ if op in PREDICATE_UNARY else x.dtype)


def binary(op: str, a, b) -> Binary:
    """`a op b`; a Python number on either side takes the other side's dtype."""
    if isinstance(a, (bool, int, float)):
        a = const(a, b.dtype)
    b = _lift(b, a.dtype)
    if a.dtype is not b.dtype:
        raise TypeError(f"KIR {op}: operand dtypes differ ({a.dtype.name} vs {b.dtype.name})")
    return Binary(op, a, b, dt.bool_ if op in COMPARE_OPS else a.dtype)


def add(a, b):
    return binary("add", a, b)


def sub(a, b):
    return binary("sub", a, b)


def mul(a, b):
    return binary("mul", a, b)


def lt(a, b):
    return binary("lt", a, b)


def select(cond: Expr, a, b) -> Select:
    if isinstance(a, (bool, int, float)):
        a = const(a, b.dtype)
    b = _lift(b, a.dtype)
    return Select(cond, a, b, a.dtype)


def fma(a: Expr, b: Expr, c: Expr) -> Fma:
    return Fma(a, b, c, a.dtype)


def shuffle_xor(x: Expr, mask: int) -> ShuffleXor:
    return ShuffleXor(x, mask, x.dtype)


def index(kind: str, axis: int = 0) -> Index:
    return Index(kind, axis)


class KernelBuilder:
    """Accumulates declarations and a statement tree; `build()` returns the Kernel."""

    def __init__(self, name: str, workgroup=(64, 1, 1), checks: bool = True):
        self.name, self.workgroup, self.checks = name, tuple(workgroup), checks
        self.params: list = []
        self.locals: dict[str, Local] = {}
        self.shared_arrays: list[SharedArray] = []
        self.traps: list[TrapSite] = []
        self._stack: list[list] = [[]]
        self._last_if: list | None = None
        self._names: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self._flags: list[tuple[str, int]] = []     # (bool local, trap code) checked at the end

    # -- declarations --
    def _fresh(self, base: str) -> str:
        k = self._next_suffix.get(base, 0)    # resume where this base left off: no rescan per name
        name = f"{base}_{k}" if k else base
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._next_suffix[base] = k + 1
        self._names.add(name)
        return name

    def buffer(self, name: str, dtype: DType, access: Access) -> str:
        name = self._fresh(name)
        self.params.append(BufferParam(name, dtype, access))
        return name

    def scalar(self, name: str, dtype: DType) -> Read:
        name = self._fresh(name)
        self.params.append(ScalarParam(name, dtype))
        return Read(name, dtype)

    def shared(self, name: str, dtype: DType, size: int) -> str:
        name = self._fresh(name)
        self.shared_arrays.append(SharedArray(name, dtype, int(size)))
        return name

    def local(self, name: str, dtype: DType, init=None) -> Read:
        """Declare a mutable local (optionally assigning `init` here) and return a reader of it."""
        name = self._fresh(name)
        self.locals[name] = Local(name, dtype)
        if init is not None:
            self.assign(name, _lift(init, dtype))
        return Read(name, dtype)

    def let(self, name: str, value: Expr) -> Read:
        """A local holding `value` (computed once, here)."""
        return self.local(name, value.dtype, value)

    def trap_site(self, code: int, what: str, where: str = "") -> int:
        self.traps.append(TrapSite(code, what, where))
        return code

    def trap_flag(self, code: int, what: str, where: str = "") -> Read:
        """A bool local that traps with `code` at the end of the kernel when set: a check that only
        records (`flag = flag | bad`), so it costs no branch inside a loop. The kernel must not
        `ret()` past the end check (a thread that returns early does not report its flag)."""
        self.trap_site(code, what, where)
        name = self._fresh("oob")
        self.locals[name] = Local(name, dt.bool_)
        self._flags.append((name, code))
        return Read(name, dt.bool_)

    # -- statements --
    def _emit(self, stmt) -> None:
        self._stack[-1].append(stmt)
        self._last_if = None

    def assign(self, target, value) -> None:
        name = target.name if isinstance(target, Read) else target
        self._emit(Assign(name, _lift(value, self.locals[name].dtype)))

    def store(self, buffer: str, idx: Expr, value: Expr) -> None:
        self._emit(Store(buffer, idx, value))

    def load(self, buffer: str, idx: Expr, dtype: DType) -> Load:
        return Load(buffer, idx, dtype)

    def atomic_add(self, buffer: str, idx: Expr, value: Expr, result: str | None = None) -> None:
        self._emit(AtomicAdd(buffer, idx, value, result))

    def barrier(self) -> None:
        self._emit(Barrier())

    def ret(self) -> None:
        self._emit(Return())

    def brk(self) -> None:
        self._emit(Break())

    def cont(self) -> None:
        self._emit(Continue())

    def trap(self, code: int) -> None:
        self._emit(Trap(code))

    @contextlib.contextmanager
    def _block(self):
        self._stack.append([])
        try:
            yield
        finally:
            body = self._stack.pop()
        self._pending = tuple(body)

    @contextlib.contextmanager
    def if_(self, cond: Expr):
        with self._block():
            yield
        stmt = If(cond, self._pending)
        self._stack[-1].append(stmt)
        self._last_if = (self._stack[-1], len(self._stack[-1]) - 1)

    @contextlib.contextmanager
    def else_(self):
        if self._last_if is None:
            raise RuntimeError("else_() must directly follow an if_() block")
        parent, pos = self._last_if
        with self._block():
            yield
        old = parent[pos]
        parent[pos] = If(old.cond, old.then, self._pending)
        self._last_if = None

    @contextlib.contextmanager
    def for_(self, name, start, stop, step: int = 1, dtype: DType | None = None):
        """`for name in range(start, stop, step)`; `name` may be a Read of an existing local to reuse
        it as the loop variable (sequential loops sharing one index)."""
        if isinstance(name, Read):
            var, dtype = name, name.dtype
        else:
            dtype = dtype or (stop.dtype if not isinstance(stop, (int, float)) else
                              start.dtype if not isinstance(start, (int, float)) else dt.uint32)
            var = self.local(name, dtype)
        with self._block():
            yield var
        self._emit(For(var.name, _lift(start, dtype), _lift(stop, dtype), int(step), self._pending))

    @contextlib.contextmanager
    def while_(self, cond: Expr):
        with self._block():
            yield
        self._emit(While(cond, self._pending))

    def build(self) -> Kernel:
        if len(self._stack) != 1:
            raise RuntimeError("build() inside an open block")
        body = tuple(self._stack[0])
        if self._flags:
            body = (tuple(Assign(f, Const(False, dt.bool_)) for f, _ in self._flags) + body
                    + tuple(If(Read(f, dt.bool_), (Trap(code),)) for f, code in self._flags))
        return Kernel(name=self.name, params=tuple(self.params), body=body,
                      locals=tuple(self.locals.values()), shared=tuple(self.shared_arrays),
                      workgroup=self.workgroup, checks=self.checks, traps=tuple(self.traps))


__all__ = ["const", "cast", "bitcast", "unary", "binary", "add", "sub", "mul", "lt", "select", "fma",
           "index", "KernelBuilder", "Access"]
