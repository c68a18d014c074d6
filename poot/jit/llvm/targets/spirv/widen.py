"""Narrow integers for the SPIR-V target: a KIR -> KIR rewrite that computes int8/uint8/int16/uint16 in
32 bits, because naga (wgpu's shader translator) has no 8- or 16-bit integer types at all.

Every narrow-typed expression becomes a 32-bit expression whose value is the sign- (int8, int16) or
zero- (uint8, uint16) extension of the narrow value, so the rewritten kernel computes exactly what KIR
means (model.py): results that can leave the narrow range are wrapped back (`shl`/`shr` for signed,
`and` for unsigned), float -> narrow casts clamp to the narrow range first (saturation, NaN -> 0), and
INT_MIN / -1 stays 0. Locals are widened; params and shared arrays keep their narrow dtype (the launch
ABI and the element counts depend on it), and the SPIR-V lowering reads and writes them in 32-bit words.

Two spellings the SPIR-V lowering recognizes: `Cast(Read(p, narrow), wide)` reads a narrow scalar param
already extended, and a Bitcast between a 16-bit float and a 32-bit integer moves the low 16 bits.
"""
from __future__ import annotations

import dataclasses

from poot import dtypes as dt
from poot.errors import LoweringError
from poot.jit.kir.model import (COMPARE_OPS, AtomicAdd, Binary, Bitcast, Cast, Const, For, If, Kernel, Load, Local,
                         Read, Select, Shuffle, ShuffleXor, Store, Unary, While, Assign)

WIDE = {dt.int8: dt.int32, dt.int16: dt.int32, dt.uint8: dt.uint32, dt.uint16: dt.uint32}
_NO_WRAP = COMPARE_OPS | {"and", "or", "xor", "shr", "min", "max", "min_reassoc", "max_reassoc", "rem"}


def wide(d):
    return WIDE.get(d, d)


def _c(v, d) -> Const:
    return Const(v, d)


def wrap(e, narrow):
    """The 32-bit value `e` reduced to `narrow`'s range (two's complement), extended again."""
    w = WIDE[narrow]
    if dt.is_signed(narrow):
        s = _c(32 - narrow.bits, w)
        return Binary("shr", Binary("shl", e, s, w), s, w)
    return Binary("and", e, _c((1 << narrow.bits) - 1, w), w)


class Widen:
    def __init__(self, kernel: Kernel):
        self.scalars = {p.name for p in kernel.scalars}

    def expr(self, e):
        return getattr(self, "_" + type(e).__name__, self._other)(e)

    def _other(self, e):
        return e                                        # Len, Index

    def _Const(self, e):
        return Const(e.value, wide(e.dtype))

    def _Read(self, e):
        if e.dtype not in WIDE:
            return e
        return Cast(e, WIDE[e.dtype]) if e.name in self.scalars else Read(e.name, WIDE[e.dtype])

    def _Load(self, e):
        return Load(e.buffer, self.expr(e.index), wide(e.dtype))

    def _Unary(self, e):
        x = self.expr(e.x)
        if e.x.dtype not in WIDE:
            return Unary(e.op, x, e.dtype)
        out = Unary(e.op, x, wide(e.dtype))
        return wrap(out, e.x.dtype) if e.op in ("neg", "abs", "bitnot") else out

    def _Binary(self, e):
        a, b, t = self.expr(e.a), self.expr(e.b), e.a.dtype
        if t not in WIDE:
            return Binary(e.op, a, b, e.dtype)
        out = Binary(e.op, a, b, wide(e.dtype))
        if e.op in _NO_WRAP:
            return out
        if e.op == "div":
            if not dt.is_signed(t):
                return out
            w = WIDE[t]
            overflow = Binary("and", Binary("eq", a, _c(dt.iinfo(t).min, w), dt.bool_),
                              Binary("eq", b, _c(-1, w), dt.bool_), dt.bool_)
            return Select(overflow, _c(0, w), out, w)
        return wrap(out, t)

    def _Select(self, e):
        return Select(self.expr(e.cond), self.expr(e.a), self.expr(e.b), wide(e.dtype))

    def _Fma(self, e):
        return dataclasses.replace(e, a=self.expr(e.a), b=self.expr(e.b), c=self.expr(e.c))

    def _Cast(self, e):
        src, dst = e.x.dtype, e.dtype
        x = self.expr(e.x)
        if dst not in WIDE:
            return x if wide(src) is dst and src in WIDE and dt.is_signed(src) == dt.is_signed(dst) \
                else Cast(x, dst)
        w = WIDE[dst]
        if dt.is_float(src):                            # saturate in the float domain first
            info = dt.iinfo(dst)
            x = Binary("max", Binary("min", x, _c(float(info.max), src), src), _c(float(info.min), src), src)
            return Cast(x, w)
        if src is dt.bool_:
            return Cast(x, w)
        return wrap(Cast(x, w) if wide(src) is not w else x, dst)

    def _ShuffleXor(self, e):
        return ShuffleXor(self.expr(e.x), e.mask, wide(e.dtype))

    def _Shuffle(self, e):
        return Shuffle(self.expr(e.x), self.expr(e.index), wide(e.dtype))

    def _Bitcast(self, e):
        src, dst = e.x.dtype, e.dtype
        x = self.expr(e.x)
        if src in WIDE and dst in WIDE:
            return wrap(Cast(x, WIDE[dst]) if WIDE[src] is not WIDE[dst] else x, dst)
        if dst in WIDE:                                 # f16/bf16 -> 16-bit int: low 16 bits, extended
            return wrap(Bitcast(x, WIDE[dst]), dst)
        return Bitcast(x, dst)                          # 16-bit int (as 32 bits) -> f16/bf16

    # -- statements ---------------------------------------------------------------------------------
    def stmts(self, body):
        return tuple(self.stmt(s) for s in body)

    def stmt(self, s):
        if isinstance(s, Assign):
            return Assign(s.name, self.expr(s.value))
        if isinstance(s, Store):
            return Store(s.buffer, self.expr(s.index), self.expr(s.value))
        if isinstance(s, AtomicAdd):
            return dataclasses.replace(s, index=self.expr(s.index), value=self.expr(s.value))
        if isinstance(s, If):
            return If(self.expr(s.cond), self.stmts(s.then), self.stmts(s.orelse))
        if isinstance(s, For):
            return dataclasses.replace(s, start=self.expr(s.start), stop=self.expr(s.stop), body=self.stmts(s.body))
        if isinstance(s, While):
            return While(self.expr(s.cond), self.stmts(s.body))
        return s                                        # Break, Continue, Return, Barrier, Trap


def widen_narrow_ints(kernel: Kernel) -> Kernel:
    """`kernel` with 8/16-bit integer arithmetic done in 32 bits (see the module doc)."""
    for s in _atomics(kernel.body):
        if kernel_decl(kernel, s.buffer).dtype in WIDE:
            raise LoweringError(f"kernel '{kernel.name}': atomic add on a {kernel_decl(kernel, s.buffer).dtype.name} "
                                "buffer has no SPIR-V lowering (naga has no 8/16-bit integers)")
    w = Widen(kernel)
    return dataclasses.replace(kernel, body=w.stmts(kernel.body),
                               locals=tuple(Local(v.name, wide(v.dtype)) for v in kernel.locals))


def kernel_decl(kernel: Kernel, name: str):
    return next(d for d in kernel.params + kernel.shared if d.name == name)


def _atomics(body):
    for s in body:
        if isinstance(s, AtomicAdd):
            yield s
        for sub in ("then", "orelse", "body"):
            yield from _atomics(getattr(s, sub, ()))


__all__ = ["widen_narrow_ints", "WIDE", "wide", "wrap"]
