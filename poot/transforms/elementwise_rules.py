"""Derivative rules of the elementwise primitives.

Each differentiable elementwise op has its partial derivatives written once, as poot expressions of
the operands and the result (`UNARY[op](x, y) -> dy/dx`, `BINARY[op](x, y, z) -> (dz/dx, dz/dy)`);
`ONE` and `MINUS_ONE` stand for the constant partials so that `add`/`sub`/`neg` record no multiply.
Forward mode multiplies tangents by the partials, reverse mode multiplies the cotangent by them and
sums it back to each operand's shape (operands broadcast NumPy-style). Comparisons, predicates and
bit operations return integers or bools and are in poot.transforms.nondiff.
"""
from __future__ import annotations

import math

from poot.trace.array import Array

from .prims import bind, broadcast, convert, full_like, select_zero, sum_to, where, zeros_like

ONE = "one"
MINUS_ONE = "minus_one"


def _rsqrt(v: Array) -> Array:
    return 1.0 / bind("sqrt", v)


def _abs_slope(x: Array) -> Array:
    """JAX's slope of |x|: +1 where x >= 0 (zero and -0.0 included), -1 elsewhere. sign(x) would give
    0 at 0, so an L1 penalty on weights that start at zero would never move them, unlike in JAX."""
    one = full_like(x, 1.0)
    return where(bind("ge", x, zeros_like(x)), one, -one)


UNARY = {
    "exp": lambda x, y: y,
    "expm1": lambda x, y: y + 1.0,
    "log": lambda x, y: 1.0 / x,
    "log1p": lambda x, y: 1.0 / (x + 1.0),
    "log2": lambda x, y: 1.0 / (x * math.log(2.0)),
    "log10": lambda x, y: 1.0 / (x * math.log(10.0)),
    "sqrt": lambda x, y: 0.5 / y,
    "sin": lambda x, y: bind("cos", x),
    "cos": lambda x, y: -bind("sin", x),
    "tan": lambda x, y: 1.0 + y * y,
    "asin": lambda x, y: _rsqrt(1.0 - x * x),
    "acos": lambda x, y: -_rsqrt(1.0 - x * x),
    "atan": lambda x, y: 1.0 / (1.0 + x * x),
    "sinh": lambda x, y: bind("cosh", x),
    "cosh": lambda x, y: bind("sinh", x),
    "tanh": lambda x, y: 1.0 - y * y,
    "asinh": lambda x, y: _rsqrt(x * x + 1.0),
    "acosh": lambda x, y: _rsqrt(x * x - 1.0),
    "atanh": lambda x, y: 1.0 / (1.0 - x * x),
    "erf": lambda x, y: (2.0 / math.sqrt(math.pi)) * bind("exp", -(x * x)),
    "neg": lambda x, y: MINUS_ONE,
    "abs": lambda x, y: _abs_slope(x),
}


def _pow_partials(x, y, z):
    # JAX's conventions: d/dx is 0 where the exponent is 0 (0 ** 0 has slope 0), d/dy is 0 where
    # the base is 0 (instead of 0 * -inf)
    dx = where(bind("eq", y, zeros_like(y)), zeros_like(z), y * bind("pow", x, y - 1.0))
    nonzero = bind("ne", x, zeros_like(x))
    safe_x = where(nonzero, x, zeros_like(x) + 1.0)
    return dx, select_zero(nonzero, z * bind("log", safe_x))


def _tie_half(mine: Array, other: Array, pick: str):
    """The share of the cotangent of max/min going to `mine`: 1 where it wins, 1/2 at a tie."""
    wins = bind(pick, mine, other)
    one = zeros_like(mine) + 1.0
    return where(wins, one, where(bind("eq", mine, other), one * 0.5, zeros_like(mine)))


def _copysign_partials(x, y, z):
    one = zeros_like(x) + 1.0
    return bind("copysign", one, x) * bind("copysign", one, z), None


BINARY = {
    "add": lambda x, y, z: (ONE, ONE),
    "sub": lambda x, y, z: (ONE, MINUS_ONE),
    "mul": lambda x, y, z: (y, x),
    "div": lambda x, y, z: (1.0 / y, -(z / y)),
    "pow": _pow_partials,
    "max": lambda x, y, z: (_tie_half(x, y, "gt"), _tie_half(y, x, "gt")),
    "min": lambda x, y, z: (_tie_half(x, y, "lt"), _tie_half(y, x, "lt")),
    "atan2": lambda x, y, z: (y / (x * x + y * y), -(x / (x * x + y * y))),
    "hypot": lambda x, y, z: (x / z, y / z),
    "logaddexp": lambda x, y, z: (bind("exp", x - z), bind("exp", y - z)),
    "copysign": _copysign_partials,
    "mod": lambda x, y, z: (ONE, -bind("floor", x / y)),
}


def _times(v: Array, d):
    if d is None:
        return None
    if d is ONE:
        return v
    if d is MINUS_ONE:
        return -v
    return v * d


def _unary_jvp(op):
    def rule(primals, tangents, out, **params):
        return _times(tangents[0], UNARY[op](primals[0], out))
    return rule


def _unary_vjp(op):
    def rule(ct, primals, out, **params):
        return [_times(ct, UNARY[op](primals[0], out))]
    return rule


def _binary_jvp(op):
    def rule(primals, tangents, out, **params):
        x, y = primals
        dx, dy = BINARY[op](x, y, out)
        parts = [_times(t, d) for t, d in zip(tangents, (dx, dy)) if t is not None]
        parts = [p for p in parts if p is not None]
        if not parts:
            return None
        total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
        return broadcast(total, out.shape)
    return rule


def _binary_vjp(op):
    def rule(ct, primals, out, **params):
        x, y = primals
        dx, dy = BINARY[op](x, y, out)
        return [None if d is None else sum_to(broadcast(_times(ct, d), out.shape), p.shape)
                for p, d in ((x, dx), (y, dy))]
    return rule


def _select_jvp(primals, tangents, out, **params):
    c, a, b = primals
    ta = tangents[1] if tangents[1] is not None else zeros_like(a)
    tb = tangents[2] if tangents[2] is not None else zeros_like(b)
    return broadcast(where(c, ta, tb), out.shape)


def _select_vjp(ct, primals, out, **params):
    c, a, b = primals
    zero = zeros_like(ct)
    return [None, sum_to(where(c, ct, zero), a.shape), sum_to(where(c, zero, ct), b.shape)]


def _convert_jvp(primals, tangents, out, dtype):
    return convert(tangents[0], dtype)


def _convert_vjp(ct, primals, out, dtype):
    x = primals[0]
    return [convert(ct, x.dtype) if x.dtype.kind == "f" else None]


JVP = {op: _unary_jvp(op) for op in UNARY}
JVP.update({op: _binary_jvp(op) for op in BINARY})
JVP.update({"select": _select_jvp, "convert": _convert_jvp})

VJP = {op: _unary_vjp(op) for op in UNARY}
VJP.update({op: _binary_vjp(op) for op in BINARY})
VJP.update({"select": _select_vjp, "convert": _convert_vjp})

__all__ = ["JVP", "VJP", "UNARY", "BINARY"]
