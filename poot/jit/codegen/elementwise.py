"""Elementwise graph ops as KIR, with NumPy's semantics: each op's `kir` rule in the op registry
(poot/graph/registry.py), registered when this module is imported.

A rule takes the KernelBuilder (for ops that need statements), the equation and its operand
expressions, and returns the result expression: `OPS[e.op].kir(kb, e, *args)`."""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.graph.registry import get
from poot.jit.kir.builder import binary, bitcast, cast, const, select, unary

LN2 = math.log(2.0)

_UNARY_SAME_NAME = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
                    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
                    "floor", "ceil", "round", "trunc", "abs", "sign", "isnan", "isinf", "isfinite")
_BINARY_SAME_NAME = ("add", "sub", "mul", "div", "atan2", "hypot", "copysign", "nextafter",
                     "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "shl", "shr")


def _b(op):
    return lambda kb, e, a, b: binary(op, a, b)


def _u(op):
    return lambda kb, e, x: unary(op, x)


def _neg(kb, e, x):
    return unary("neg", x)


def _bitwise_not(kb, e, x):
    return unary("not" if x.dtype is dt.bool_ else "bitnot", x)


def _maxmin(op):
    def rule(kb, e, a, b):
        if a.dtype is dt.bool_:
            return binary("or" if op == "max" else "and", a, b)
        return binary(op, a, b)
    return rule


def _int_floordiv_mod(kb, a, b):
    """NumPy floor_divide and remainder for integers (a zero divisor gives 0, as NumPy does).
    INT_MIN // -1 wraps to INT_MIN in NumPy, where KIR's division gives 0 for that overflow: a divisor
    of -1 is a negation (which wraps) instead."""
    q = kb.let("q", binary("div", a, b))
    r = kb.let("r", binary("rem", a, b))
    if dt.is_unsigned(a.dtype) or a.dtype is dt.bool_:
        return q, r
    zero = const(0, a.dtype)
    q = kb.let("q", select(binary("eq", b, const(-1, a.dtype)), unary("neg", a), q))
    fix = kb.let("fix", binary("and", binary("ne", r, zero),
                               binary("ne", binary("lt", r, zero), binary("lt", b, zero))))
    return (select(fix, binary("sub", q, 1), q), select(fix, binary("add", r, b), r))


def _float_divmod(kb, a, b):
    """npy_divmod: NumPy's floor_divide and remainder for floats."""
    zero = const(0.0, a.dtype)
    m0 = kb.let("m", binary("rem", a, b))                     # fmod
    d0 = kb.let("d", binary("div", binary("sub", a, m0), b))
    adjust = kb.let("adj", binary("and", binary("ne", m0, zero),
                                  binary("ne", binary("lt", b, zero), binary("lt", m0, zero))))
    mod = kb.let("mod", select(adjust, binary("add", m0, b), m0))
    mod = kb.let("mod", select(binary("eq", mod, zero), binary("copysign", zero, b), mod))
    div = kb.let("div", select(adjust, binary("sub", d0, 1.0), d0))
    fl = kb.let("fl", unary("floor", div))
    fl = select(binary("gt", binary("sub", div, fl), 0.5), binary("add", fl, 1.0), fl)
    floordiv = select(binary("ne", div, zero), fl, binary("copysign", zero, binary("div", a, b)))
    by_zero = binary("eq", b, zero)
    return (kb.let("fdiv", select(by_zero, binary("div", a, b), floordiv)),
            kb.let("fmod", select(by_zero, m0, mod)))


def _divmod(kb, a, b):
    """(floor quotient, remainder). 16-bit floats go through float32 and round once at the end, as
    NumPy's half loops do: rounding each step of npy_divmod to float16 lost the quotient's last unit
    (-2326 // -1.496 gave 1553, NumPy 1554)."""
    if not dt.is_float(a.dtype):
        return _int_floordiv_mod(kb, a, b)
    if a.dtype.bits == 16:
        q, r = _float_divmod(kb, cast(a, dt.float32), cast(b, dt.float32))
        return cast(q, a.dtype), cast(r, a.dtype)
    return _float_divmod(kb, a, b)


def _floordiv(kb, e, a, b):
    return _divmod(kb, a, b)[0]


def _mod(kb, e, a, b):
    return _divmod(kb, a, b)[1]


def _pow(kb, e, a, b):
    if dt.is_float(a.dtype):
        return binary("pow", a, b)
    # integers: exponentiation by squaring; a negative exponent gives 0 (NumPy refuses it outright;
    # 1 and -1 keep their exact answers)
    result = kb.local("pw", a.dtype, const(1, a.dtype))
    base = kb.local("pb", a.dtype, a)
    ex = kb.local("pe", a.dtype, b)
    neg = None
    if dt.is_signed(a.dtype):
        neg = kb.let("pneg", binary("lt", b, 0))
        kb.assign(ex, select(neg, const(0, a.dtype), b))
    with kb.while_(binary("gt", ex, 0)):
        with kb.if_(binary("ne", binary("and", ex, 1), 0)):
            kb.assign(result, binary("mul", result, base))
        kb.assign(base, binary("mul", base, base))
        kb.assign(ex, binary("shr", ex, 1))
    if neg is None:
        return result
    one, minus_one = const(1, a.dtype), const(-1, a.dtype)
    odd = binary("ne", binary("and", b, 1), 0)
    neg_value = select(binary("eq", a, one), one,
                       select(binary("eq", a, minus_one), select(odd, minus_one, one), const(0, a.dtype)))
    return select(neg, neg_value, result)


def _logaddexp(kb, e, a, b):
    m = kb.let("lm", binary("max", a, b))
    d = unary("neg", unary("abs", binary("sub", a, b)))
    general = binary("add", m, unary("log1p", unary("exp", d)))
    return select(binary("eq", a, b), binary("add", a, LN2), general)


def _select(kb, e, c, a, b):
    return select(c, a, b)


def _convert(kb, e, x):
    return cast(x, e.params["dtype"])


def _bitcast(kb, e, x):
    return bitcast(x, e.params["dtype"])


def _register() -> None:
    for name in _UNARY_SAME_NAME:
        get(name).register(kir=_u(name))
    for name in _BINARY_SAME_NAME:
        get(name).register(kir=_b(name))
    for name, fn in (("neg", _neg), ("bitwise_not", _bitwise_not), ("logical_not", _u("not")),
                     ("max", _maxmin("max")), ("min", _maxmin("min")), ("floordiv", _floordiv),
                     ("mod", _mod), ("pow", _pow), ("logaddexp", _logaddexp), ("select", _select),
                     ("convert", _convert), ("bitcast", _bitcast)):
        get(name).register(kir=fn)


_register()
