"""The IR builder the math library (mathlib.py, mathvec.py) writes its functions with: one function of
type float or double, scalar or a <lanes x ty> vector, as LLVM IR text (fast-math free: every rounding
is the one written)."""
from __future__ import annotations

import math

import numpy as np

from poot.jit.llvm.ir import Func, Module, float_const

_INF = float("inf")


class MathBuilder:
    """A builder for one mathlib function of type `ty` ('float' or 'double')."""

    def __init__(self, m: Module, ty: str, lanes: int = 0):
        """`lanes` > 0: every value is a <lanes x ty> vector (mathvec.py's variants; the methods the
        trigonometric functions use, and no `call`)."""
        self.m, self.ety, self.lanes = m, ty, lanes
        self.dbl = ty == "double"
        self.bits = 64 if self.dbl else 32
        self.ty, self.it, self.i1 = self.vt(ty), self.vt(f"i{self.bits}"), self.vt("i1")
        self.mant = 52 if self.dbl else 23
        self.bias = 1023 if self.dbl else 127
        self.f = Func("m")
        self.sfx = "f64" if self.dbl else "f32"

    def vt(self, scalar: str) -> str:
        return f"<{self.lanes} x {scalar}>" if self.lanes else scalar

    def splat(self, lit, scalar: str) -> str:
        """A literal of type `scalar` as an operand of this builder's shape (registers unchanged)."""
        lit = str(lit)
        return f"splat ({scalar} {lit})" if self.lanes and not lit.startswith(("%", "splat")) else lit

    def k(self, v: float) -> str:
        return self.splat(float_const(v if self.dbl or math.isnan(v) else float(np.float32(v))), self.ety)

    def o(self, text: str) -> str:
        return self.f.op(text)

    def add(self, a, b): return self.o(f"fadd {self.ty} {a}, {b}")
    def sub(self, a, b): return self.o(f"fsub {self.ty} {a}, {b}")
    def mul(self, a, b): return self.o(f"fmul {self.ty} {a}, {b}")
    def div(self, a, b): return self.o(f"fdiv {self.ty} {a}, {b}")
    def neg(self, a): return self.o(f"fneg {self.ty} {a}")
    def cmp(self, pred, a, b): return self.o(f"fcmp {pred} {self.ty} {a}, {b}")
    def and_(self, a, b): return self.o(f"and {self.i1} {a}, {b}")
    def or_(self, a, b): return self.o(f"or {self.i1} {a}, {b}")
    def not_(self, a): return self.o(f"xor {self.i1} {a}, {self.splat('true', 'i1')}")

    def sel(self, c, a, b, ty=None):
        ety = ty or self.ety
        vty = self.vt(ety)
        return self.o(f"select {self.i1} {c}, {vty} {self.splat(a, ety)}, {vty} {self.splat(b, ety)}")

    def intr(self, name, *args, ret=None):
        ret = ret or self.ty
        sfx = f"v{self.lanes}{self.sfx}" if self.lanes else self.sfx
        fn = self.m.intrinsic(f"llvm.{name}.{sfx}", ret, ", ".join(self.ty for _ in args))
        return self.o(f"call {ret} {fn}(" + ", ".join(f"{self.ty} {a}" for a in args) + ")")

    def fma(self, a, b, c): return self.intr("fma", a, b, c)
    def fabs(self, a): return self.intr("fabs", a)
    def rint(self, a): return self.intr("roundeven", a)
    def floor(self, a): return self.intr("floor", a)
    def sqrt(self, a): return self.intr("sqrt", a)
    def copysign(self, a, b): return self.intr("copysign", a, b)

    def bits_of(self, a): return self.o(f"bitcast {self.ty} {a} to {self.it}")
    def from_bits(self, i): return self.o(f"bitcast {self.it} {i} to {self.ty}")
    def i(self, op, a, b): return self.o(f"{op} {self.it} {a}, {self.splat(b, f'i{self.bits}')}")

    def to_int(self, a):
        """An integral-valued float known to lie within +-2**30 (or NaN, taken as 0) as an integer.
        A plain fptosi to i32 on a NaN-free value: it vectorizes (one vcvttps2dq), where fptosi.sat
        is scalarized on x86 and an unguarded NaN would make the result poison."""
        safe = self.sel(self.cmp("ord", a, a), a, self.k(0.0))
        i = self.o(f"fptosi {self.ty} {safe} to {self.vt('i32')}")
        return self.o(f"sext {self.vt('i32')} {i} to {self.it}") if self.dbl else i

    def to_float(self, i): return self.o(f"sitofp {self.it} {i} to {self.ty}")

    def horner(self, x, coeffs):
        p = self.k(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            p = self.fma(p, x, self.k(c))
        return p

    def clamp(self, x, lo, hi):
        """x limited to [lo, hi], NaN kept."""
        x = self.sel(self.cmp("ogt", x, self.k(hi)), self.k(hi), x)
        return self.sel(self.cmp("olt", x, self.k(lo)), self.k(lo), x)

    def call(self, op, *args):
        from poot.jit.llvm.mathlib import require     # mathlib's functions call each other through their builders

        fn = require(self.m, op, self.ety)
        return self.o(f"call {self.ty} {fn}(" + ", ".join(f"{self.ty} {a}" for a in args) + ")")

    def pow2(self, n_int):
        """2**n as a float, for n in the normal exponent range."""
        e = self.i("add", n_int, self.bias)
        return self.from_bits(self.i("shl", e, self.mant))

    def scale(self, p, n):
        """p * 2**n for integral-valued float n with |n| up to ~2 * the exponent range."""
        ni = self.to_int(n)
        n1 = self.i("ashr", ni, 1)
        n2 = self.i("sub", ni, n1)
        return self.mul(self.mul(p, self.pow2(n1)), self.pow2(n2))

    def two_sum(self, a, b):
        s = self.add(a, b)
        bb = self.sub(s, a)
        err = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, err

    def is_zero(self, x): return self.cmp("oeq", x, self.k(0.0))
    def keep_zero(self, x, r): return self.sel(self.is_zero(x), x, r)   # f(±0) = ±0
    def isnan(self, x): return self.cmp("uno", x, x)
    # f(NaN) = NaN said outright: Vulkan drivers may assume no NaN in a clamp's compare-and-select
    # (NVIDIA's ran exp(NaN) as exp(89) = inf), while isnan stays exact (OpIsNan)
    def nan_through(self, x, r): return self.sel(self.isnan(x), x, r)
    def isinf(self, x): return self.cmp("oeq", self.fabs(x), self.k(_INF))

    def signbit(self, x):
        return self.o(f"icmp slt {self.it} {self.bits_of(x)}, {self.splat(0, f'i{self.bits}')}")


__all__ = ["MathBuilder"]
