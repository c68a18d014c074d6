"""Complex arithmetic as real equations: the formulas poot/graph/complex_lower.py rewrites each
complex elementwise op into.

A complex value here is a pair `(re, im)` of real graph variables (their shapes broadcast together);
each function appends the real equations computing its result to an `Emitter` and returns the
result's pair. The formulas follow NumPy's (npymath) where a naive one would lose accuracy or get a
special value wrong: Smith's division, Kahan's tanh, expm1 and log1p written with their real
counterparts, the sign-correct square root. Rarer special values (an infinite part in a product, say)
follow the plain formula, as NumPy's own loops mostly do.
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.graph.ir import Eqn, Var
from poot.graph.ops import OPS

Pair = tuple  # (re, im): two real Vars


class Emitter:
    """Appends real equations to a list, each output's aval from its op's shape rule; `where` is the
    user's line of the complex equation being rewritten (kept on every equation it becomes)."""

    def __init__(self, eqns: list, where: str, dtype: dt.DType):
        self.eqns, self.where, self.dtype = eqns, where, dtype    # dtype: the real dtype of the parts

    def op(self, name: str, *inputs: Var, **params) -> Var:
        out = Var(OPS[name].shape_rule([v.aval for v in inputs], **params))
        self.eqns.append(Eqn(name, inputs, params, out, self.where))
        return out

    def const(self, value, dtype: dt.DType | None = None, shape=()) -> Var:
        d = dtype or self.dtype
        v = bool(value) if d is dt.bool_ else float(value)
        return self.op("full", shape=tuple(shape), value=v, dtype=d)

    # -- parts and pairs --------------------------------------------------------------------------
    def part(self, x: Var, k: int) -> Var:
        """Part k (0 real, 1 imaginary) of a lowered complex value (shape S + (2,)), of shape S."""
        s = x.aval.shape[:-1]
        n = len(s)
        p = self.op("slice", x, starts=(0,) * n + (k,), steps=(1,) * (n + 1), sizes=s + (1,))
        return self.op("reshape", p, shape=s)

    def pair(self, x: Var) -> Pair:
        return self.part(x, 0), self.part(x, 1)

    def broadcast(self, v: Var, shape: tuple) -> Var:
        return v if v.aval.shape == shape else self.op("broadcast", v, shape=shape)

    def join(self, z: Pair, shape: tuple) -> Var:
        """The lowered complex value (shape + (2,)) of the pair `z`."""
        r, i = (self.op("reshape", self.broadcast(p, shape), shape=shape + (1,)) for p in z)
        return self.op("concatenate", r, i, axis=len(shape))

    # -- real arithmetic shorthands ---------------------------------------------------------------
    def add(self, a, b):
        return self.op("add", a, b)

    def sub(self, a, b):
        return self.op("sub", a, b)

    def mul(self, a, b):
        return self.op("mul", a, b)

    def div(self, a, b):
        return self.op("div", a, b)

    def neg(self, a):
        return self.op("neg", a)

    def f(self, name, *xs):
        return self.op(name, *xs)

    def scale(self, a, c: float):
        return self.mul(a, self.const(c))

    def select(self, c, a, b):
        return self.op("select", c, a, b)

    def choose(self, c, z: Pair, w: Pair) -> Pair:
        return self.select(c, z[0], w[0]), self.select(c, z[1], w[1])

    def is_zero(self, a):
        return self.op("eq", a, self.const(0.0))

    def is_value(self, a, value: float):
        return self.op("eq", a, self.const(value))

    def not_finite(self, a):
        return self.op("logical_not", self.op("isfinite", a))

    def both(self, c, d):
        return self.op("and", c, d)

    def zero_keeps(self, part, other, value):
        """`value`, except where `part` is zero: there `other` (a formula's inf * 0 would be NaN)."""
        return self.select(self.is_zero(part), other, value)


# --- the formulas --------------------------------------------------------------------------------
def mul(E: Emitter, z: Pair, w: Pair) -> Pair:
    (a, b), (c, d) = z, w
    return E.sub(E.mul(a, c), E.mul(b, d)), E.add(E.mul(a, d), E.mul(b, c))


def div(E: Emitter, z: Pair, w: Pair) -> Pair:
    """Smith's algorithm (NumPy's): scale by the larger part of the divisor; a zero divisor divides
    each part by |0| (inf or nan parts, as NumPy)."""
    (a, b), (c, d) = z, w
    ac, ad = E.f("abs", c), E.f("abs", d)
    r1 = E.div(d, c)                                  # |c| >= |d|
    den1 = E.add(c, E.mul(d, r1))
    big_c = (E.div(E.add(a, E.mul(b, r1)), den1), E.div(E.sub(b, E.mul(a, r1)), den1))
    r2 = E.div(c, d)                                  # |c| < |d|
    den2 = E.add(E.mul(c, r2), d)
    big_d = (E.div(E.add(E.mul(a, r2), b), den2), E.div(E.sub(E.mul(b, r2), a), den2))
    out = E.choose(E.op("ge", ac, ad), big_c, big_d)
    zero = E.op("and", E.is_zero(ac), E.is_zero(ad))
    return E.choose(zero, (E.div(a, ac), E.div(b, ac)), out)


def _infinite_real(E: Emitter, z: Pair, out: Pair, at_minus: Pair, at_plus: Pair) -> Pair:
    """C99's special values where the real part is infinite and the imaginary part is not finite:
    `at_minus` for -inf, `at_plus` for +inf (the plain formula gives NaN for both)."""
    a, b = z
    odd = E.not_finite(b)
    out = E.choose(E.both(E.is_value(a, -math.inf), odd), at_minus, out)
    return E.choose(E.both(E.is_value(a, math.inf), odd), at_plus, out)


def exp(E: Emitter, z: Pair) -> Pair:
    a, b = z
    ea = E.f("exp", a)
    out = E.mul(ea, E.f("cos", b)), E.zero_keeps(b, b, E.mul(ea, E.f("sin", b)))  # exp(x + 0j) is real
    zero, inf, nan = E.const(0.0), E.const(math.inf), E.const(math.nan)
    return _infinite_real(E, z, out, (zero, zero), (inf, nan))


def expm1(E: Emitter, z: Pair) -> Pair:
    a, b = z
    half = E.f("sin", E.scale(b, 0.5))      # cos b - 1 = -2 sin^2(b/2): no cancellation near 0
    re = E.sub(E.mul(E.f("expm1", a), E.f("cos", b)), E.scale(E.mul(half, half), 2.0))
    re = E.add(re, E.const(0.0))         # expm1(-0 + 0j) is +0 + 0j (C99)
    out = re, E.zero_keeps(b, b, E.mul(E.f("exp", a), E.f("sin", b)))
    zero, inf, nan = E.const(0.0), E.const(math.inf), E.const(math.nan)
    return _infinite_real(E, z, out, (E.const(-1.0), zero), (inf, nan))


def _huge(E: Emitter, z: Pair, v):
    """Where `v`, computed from the finite parts of `z`, overflowed (|z| near the dtype's largest
    value): there a formula runs on z scaled down instead."""
    a, b = z
    return E.both(E.f("isinf", v), E.both(E.f("isfinite", a), E.f("isfinite", b)))


def log(E: Emitter, z: Pair) -> Pair:
    """log|z| + i arg z; |z| past the dtype's largest value (3e38+3e38j in complex64) is taken as
    2 |z / 2|, as NumPy's clog, instead of overflowing to inf."""
    a, b = z
    h = E.f("hypot", a, b)
    halved = E.add(E.f("log", E.f("hypot", E.scale(a, 0.5), E.scale(b, 0.5))), E.const(math.log(2.0)))
    return E.select(_huge(E, z, h), halved, E.f("log", h)), E.f("atan2", b, a)


def log1p(E: Emitter, z: Pair) -> Pair:
    """log|1 + z| as log1p(|1 + z|^2 - 1) / 2 where |1 + z| is near 1 (accurate for small z); elsewhere
    log(hypot(1 + a, b)), which neither overflows for huge z nor loses a tiny b next to a = -1."""
    a, b = z
    one = E.const(1.0)
    m = E.add(E.mul(a, E.add(a, E.const(2.0))), E.mul(b, b))    # |1 + z|^2 - 1
    near_one = E.op("lt", E.f("abs", m), E.const(0.5))
    re = E.select(near_one, E.scale(E.f("log1p", m), 0.5), E.f("log", E.f("hypot", E.add(a, one), b)))
    re = E.select(E.op("or", E.f("isinf", a), E.f("isinf", b)), E.const(math.inf), re)
    return re, E.f("atan2", b, E.add(a, one))


def log_base(E: Emitter, z: Pair, base: float) -> Pair:
    r, i = log(E, z)
    k = 1.0 / math.log(base)
    return E.scale(r, k), E.scale(i, k)


def sqrt(E: Emitter, z: Pair) -> Pair:
    """The principal root, branch cut on the negative reals (the sign of a zero imaginary part picks
    the side, as NumPy's csqrt)."""
    a, b = z
    # |a| + |z| past the dtype's largest value: sqrt(z) = 2 sqrt(z / 4) (NumPy's csqrt scales so too)
    huge = _huge(E, z, E.add(E.f("abs", a), E.f("hypot", a, b)))
    a, b = E.select(huge, E.scale(a, 0.25), a), E.select(huge, E.scale(b, 0.25), b)
    t = E.f("sqrt", E.scale(E.add(E.f("abs", a), E.f("hypot", a, b)), 0.5))
    two_t = E.scale(t, 2.0)
    right = (t, E.div(b, two_t))                                   # a >= 0
    left = (E.div(E.f("abs", b), two_t), E.f("copysign", t, b))    # a < 0
    out = E.choose(E.op("ge", a, E.const(0.0)), right, left)
    out = E.choose(huge, (E.scale(out[0], 2.0), E.scale(out[1], 2.0)), out)
    out = E.choose(E.is_zero(t), (t, b), out)                      # sqrt(0) = 0 with b's sign
    inf = E.const(math.inf)
    return E.choose(E.f("isinf", z[1]), (inf, z[1]), out)          # sqrt(x +- inf j) = inf +- inf j


def sin(E: Emitter, z: Pair) -> Pair:
    a, b = z
    return E.mul(E.f("sin", a), E.f("cosh", b)), E.mul(E.f("cos", a), E.f("sinh", b))


def cos(E: Emitter, z: Pair) -> Pair:
    a, b = z
    return E.mul(E.f("cos", a), E.f("cosh", b)), E.neg(E.mul(E.f("sin", a), E.f("sinh", b)))


def sinh(E: Emitter, z: Pair) -> Pair:
    a, b = z
    out = (E.zero_keeps(a, a, E.mul(E.f("sinh", a), E.f("cos", b))),
           E.zero_keeps(b, b, E.mul(E.f("cosh", a), E.f("sin", b))))
    nan = E.const(math.nan)
    return E.choose(E.both(E.f("isinf", a), E.not_finite(b)), (a, nan), out)


def cosh(E: Emitter, z: Pair) -> Pair:
    a, b = z
    out = (E.mul(E.f("cosh", a), E.f("cos", b)),
           E.zero_keeps(a, a, E.zero_keeps(b, b, E.mul(E.f("sinh", a), E.f("sin", b)))))
    inf, nan = E.const(math.inf), E.const(math.nan)
    return E.choose(E.both(E.f("isinf", a), E.not_finite(b)), (inf, nan), out)


def tanh(E: Emitter, z: Pair) -> Pair:
    """Kahan's formula (NumPy's ctanh); for |re| > 22 the result is sign(re) + 0j to working
    precision, which also keeps cosh from overflowing."""
    a, b = z
    one = E.const(1.0)
    t = E.f("tan", b)
    beta = E.add(one, E.mul(t, t))
    s = E.f("sinh", a)
    rho = E.f("sqrt", E.add(one, E.mul(s, s)))
    den = E.add(one, E.mul(beta, E.mul(s, s)))
    near = (E.zero_keeps(a, a, E.div(E.mul(E.mul(beta, rho), s), den)), E.zero_keeps(b, b, E.div(t, den)))
    far = (E.f("copysign", one, a), E.f("copysign", E.const(0.0), b))
    big = E.both(E.op("gt", E.f("abs", a), E.const(22.0)), E.f("isfinite", b))
    return E.choose(E.op("or", big, E.f("isinf", a)), far, near)


def tan(E: Emitter, z: Pair) -> Pair:
    """tan z = -i tanh(i z)."""
    a, b = z
    x, y = tanh(E, (E.neg(b), a))
    return y, E.neg(x)


def sign(E: Emitter, z: Pair) -> Pair:
    """z / |z| (NumPy 2), 0 for 0. With an infinite part, inf / inf would be NaN: NumPy gives the
    unit along that part (sign(inf + 1j) is 1, sign(1 - inf j) is -1j), and NaN when both are."""
    a, b = z
    r = E.f("hypot", a, b)
    zero = E.is_zero(r)
    safe = E.select(zero, E.const(1.0), r)
    naught, one, nan = E.const(0.0), E.const(1.0), E.const(math.nan)
    out = E.select(zero, naught, E.div(a, safe)), E.select(zero, naught, E.div(b, safe))
    inf_a, inf_b = E.f("isinf", a), E.f("isinf", b)
    out = E.choose(inf_b, (naught, E.f("copysign", one, b)), out)
    out = E.choose(inf_a, (E.f("copysign", one, a), naught), out)
    return E.choose(E.both(inf_a, inf_b), (nan, nan), out)


def power(E: Emitter, z: Pair, w: Pair) -> Pair:
    """exp(w log z); 0 ** w is 1 for w = 0 and 0 for a positive real part of w."""
    out = exp(E, mul(E, w, log(E, z)))
    zero_z = E.op("and", E.is_zero(z[0]), E.is_zero(z[1]))
    zero_w = E.op("and", E.is_zero(w[0]), E.is_zero(w[1]))
    zero, one = E.const(0.0), E.const(1.0)
    out = E.choose(E.op("and", zero_z, E.op("gt", w[0], zero)), (zero, zero), out)
    return E.choose(zero_w, (one, zero), out)


def _add(E: Emitter, z: Pair, w: Pair) -> Pair:
    return E.add(z[0], w[0]), E.add(z[1], w[1])


def _one_plus_square(E: Emitter, z: Pair, sign: float) -> Pair:
    """1 + sign * z^2."""
    a, b = z
    re = E.add(E.const(1.0), E.scale(E.sub(E.mul(a, a), E.mul(b, b)), sign))
    return re, E.scale(E.mul(E.scale(a, 2.0), b), sign)


def _large(E: Emitter, z: Pair):
    """Where |z| is so large (or infinite) that z^2 would overflow: there the inverse hyperbolic
    functions are log(2 z) to working precision."""
    big = E.const(math.sqrt(float(dt.finfo(E.dtype).max)) / 4)
    return E.op("or", E.op("gt", E.f("abs", z[0]), big), E.op("gt", E.f("abs", z[1]), big))


def _log_2z(E: Emitter, z: Pair) -> Pair:
    r, i = log(E, z)
    return E.add(r, E.const(math.log(2.0))), i


def _finite_moderate(E: Emitter, z: Pair):
    """Where both parts are finite and z^2 cannot overflow: there Kahan's formulas below hold; the
    rest (infinite, NaN or huge parts) takes the limit forms."""
    return E.both(E.both(E.f("isfinite", z[0]), E.f("isfinite", z[1])), E.op("logical_not", _large(E, z)))


def _roots_1mz_1pz(E: Emitter, z: Pair) -> tuple:
    """sqrt(1 - z) and sqrt(1 + z), each part's sign of zero kept (it picks the side of a cut)."""
    a, b = z
    one = E.const(1.0)
    return sqrt(E, (E.sub(one, a), E.neg(b))), sqrt(E, (E.add(one, a), b))


def _kahan_asin(E: Emitter, z: Pair) -> Pair:
    """asin z = atan(Re z / Re(sqrt(1-z) sqrt(1+z))) + i asinh(Im(conj(sqrt(1-z)) sqrt(1+z))) (Kahan,
    "Branch cuts for complex elementary functions"): no cancellation anywhere, so tiny parts keep full
    precision (asin(1e-300j) is 1e-300j), and the signed zeros of the roots give the cuts' sides."""
    m, p = _roots_1mz_1pz(E, z)
    den = E.add(E.sub(E.mul(m[0], p[0]), E.mul(m[1], p[1])), E.const(0.0))     # >= +0
    return E.f("atan2", z[0], den), E.f("asinh", E.sub(E.mul(m[0], p[1]), E.mul(m[1], p[0])))


def _asinh_limits(E: Emitter, z: Pair) -> Pair:
    """asinh for infinite, NaN or huge parts: log(2 w) for w = z or -z, whichever has a non-negative
    real part (asinh is odd), C99's special values through the plain formula."""
    a, b = z
    flip = E.op("lt", E.f("copysign", E.const(1.0), a), E.const(0.0))     # a < 0, or a = -0
    w = (E.select(flip, E.neg(a), a), E.select(flip, E.neg(b), b))
    r, i = E.choose(_large(E, w), _log_2z(E, w), log(E, _add(E, w, sqrt(E, _one_plus_square(E, w, 1.0)))))
    r = E.select(flip, E.neg(r), r)
    inside = E.both(E.is_zero(a), E.op("le", E.f("abs", b), E.const(1.0)))    # asinh(+-0 + iy) = +-0 + ...
    return E.select(inside, a, r), E.zero_keeps(b, b, E.select(flip, E.neg(i), i))


def asinh(E: Emitter, z: Pair) -> Pair:
    """-i asin(i z) by Kahan's formula where z is finite and moderate; the limit forms elsewhere."""
    x, y = _kahan_asin(E, (E.neg(z[1]), z[0]))
    return E.choose(_finite_moderate(E, z), (y, E.neg(x)), _asinh_limits(E, z))


def asin(E: Emitter, z: Pair) -> Pair:
    x, y = _kahan_asin(E, z)
    return E.choose(_finite_moderate(E, z), (x, y), _times_i(_asinh_limits)(E, z))


def acosh(E: Emitter, z: Pair) -> Pair:
    """Kahan's asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))) + 2i atan(Im sqrt(z - 1) / Re sqrt(z + 1)) where
    z is finite and moderate (accurate near 1 and near the imaginary axis); elsewhere
    log(z + sqrt(z + 1) sqrt(z - 1)), or log(2 z) where |z| is huge."""
    a, b = z
    p = sqrt(E, (E.add(a, E.const(1.0)), b))
    m = sqrt(E, (E.sub(a, E.const(1.0)), b))
    kahan = (E.f("asinh", E.add(E.mul(m[0], p[0]), E.mul(m[1], p[1]))), E.scale(E.f("atan2", m[1], p[0]), 2.0))
    out = E.choose(_large(E, z), _log_2z(E, z), log(E, _add(E, z, mul(E, p, m))))
    axis = E.both(E.is_zero(a), E.f("isnan", b))            # acosh(+-0 + nan j) = nan + pi/2 j (C99)
    out = E.choose(axis, (b, E.const(math.pi / 2)), out)
    return E.choose(_finite_moderate(E, z), kahan, out)


def atanh(E: Emitter, z: Pair) -> Pair:
    """log1p(4a / ((1 - a)^2 + b^2)) / 4 + i atan2(2b, (1 - a)(1 + a) - b^2) / 2 for z = a + bi finite
    and moderate (no difference of nearly equal logarithms: atanh(1e-300 + 0.5j) keeps its real part;
    near z = +-1 the real part is log(|1 + z| / |1 - z|) / 2);
    1/z + i pi/2 sign(b) where |z| is huge; at an infinite part, +-0 + +-pi/2 j (the limit)."""
    a, b = z
    one = E.const(1.0)
    one_minus = E.sub(one, a)
    d = E.add(E.mul(one_minus, one_minus), E.mul(b, b))
    t = E.div(E.scale(a, 4.0), d)       # |1 + z|^2 / |1 - z|^2 - 1
    ratio = E.div(E.f("hypot", E.add(one, a), b), E.f("hypot", one_minus, b))   # near z = +-1 (t far from 0)
    re = E.select(E.op("lt", E.f("abs", t), E.const(0.5)), E.scale(E.f("log1p", t), 0.25),
                  E.scale(E.f("log", ratio), 0.5))
    im = E.scale(E.f("atan2", E.scale(b, 2.0), E.sub(E.mul(one_minus, E.add(one, a)), E.mul(b, b))), 0.5)
    out = E.zero_keeps(a, a, re), im
    h = E.f("hypot", a, b)          # |z| huge: atanh(z) = 1/z + i pi/2 sign(b) to working precision
    huge_im = E.select(E.f("isnan", h), h, E.f("copysign", E.const(math.pi / 2), b))  # a NaN part: NaN + NaN j
    out = E.choose(_large(E, z), (E.div(E.div(a, h), h), huge_im), out)
    limit_im = E.select(E.f("isnan", b), b, E.f("copysign", E.const(math.pi / 2), b))
    limit = (E.f("copysign", E.const(0.0), a), limit_im)
    return E.choose(E.op("or", E.f("isinf", a), E.f("isinf", b)), limit, out)


def _times_i(fn):
    """f(z) = -i g(i z) (asin from asinh, atan from atanh)."""
    def rule(E: Emitter, z: Pair) -> Pair:
        x, y = fn(E, (E.neg(z[1]), z[0]))
        return y, E.neg(x)
    return rule


def acos(E: Emitter, z: Pair) -> Pair:
    """Kahan's 2 atan(Re sqrt(1 - z) / Re sqrt(1 + z)) + i asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z))) where
    z is finite and moderate (accurate near 1); pi/2 - asin(z) elsewhere."""
    m, p = _roots_1mz_1pz(E, z)
    kahan = (E.scale(E.f("atan2", m[0], p[0]), 2.0), E.f("asinh", E.sub(E.mul(p[0], m[1]), E.mul(p[1], m[0]))))
    r, i = _times_i(_asinh_limits)(E, z)
    return E.choose(_finite_moderate(E, z), kahan, (E.sub(E.const(math.pi / 2), r), E.neg(i)))


UNARY = {"exp": exp, "expm1": expm1, "log": log, "log1p": log1p, "sqrt": sqrt, "sin": sin, "cos": cos,
         "tan": tan, "sinh": sinh, "cosh": cosh, "tanh": tanh, "sign": sign, "asinh": asinh,
         "acosh": acosh, "atanh": atanh, "asin": asin, "atan": _times_i(atanh), "acos": acos,
         "log2": lambda E, z: log_base(E, z, 2.0), "log10": lambda E, z: log_base(E, z, 10.0)}
BINARY = {"mul": mul, "div": div, "pow": power}
