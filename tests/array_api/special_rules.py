"""The standard's special cases for real-valued floating point, transcribed rule by rule from the
2023.12 text of each elementwise function ("If x_i is -0, the result is -0", ...). A rule is
(condition on the operands, check on the result); the first rule whose condition holds applies.
"""
from __future__ import annotations

import math

import numpy as np

nan, inf = math.nan, math.inf
PI = math.pi


# --- operand predicates ------------------------------------------------------------------------
def isnan(x):
    return math.isnan(x)


def pzero(x):
    return x == 0 and math.copysign(1, x) > 0


def nzero(x):
    return x == 0 and math.copysign(1, x) < 0


def zero(x):
    return x == 0


def pinf(x):
    return x == inf


def ninf(x):
    return x == -inf


def anyinf(x):
    return math.isinf(x)


def finite(x):
    return math.isfinite(x)


def pos_finite(x):
    return finite(x) and x > 0


def neg_finite(x):
    return finite(x) and x < 0


def nonzero_finite(x):
    return finite(x) and x != 0


def integer_valued(x):
    return finite(x) and x == math.floor(x)


def odd_integer(x):
    return integer_valued(x) and x % 2 == 1


def sign_bit(x):
    return math.copysign(1, x) < 0


# --- result checks -----------------------------------------------------------------------------
def exactly(v):
    """The result is v: NaN for NaN, and a zero of v's sign for a zero."""
    def check(r, x=None, d=None):
        if isinstance(v, bool):
            return bool(r) is v
        if isnan(v):
            return isnan(r)
        if v == 0:
            return r == 0 and sign_bit(r) == sign_bit(v)
        return r == v
    return check


def approx(v):
    """'An implementation-dependent approximation to v'."""
    return lambda r, x=None, d=None: math.isclose(r, v, rel_tol=1e-6)


def one_of(*checks):
    return lambda r, x=None, d=None: any(c(r, x, d) for c in checks)


def zero_any_sign(r, x=None, d=None):
    return r == 0


def nan_with_sign(bit):
    return lambda r, x=None, d=None: isnan(r) and sign_bit(r) == bit


def positive_sign(r, x=None, d=None):
    return not isnan(r) and not sign_bit(r)


def negative_sign(r, x=None, d=None):
    return not isnan(r) and sign_bit(r)


def same_as(fn):
    """The result equals fn(operands), computed in float64 and rounded once to the operands' dtype
    `d` (the 'remaining cases': IEEE 754 rounding, overflow to a signed infinity)."""
    def check(r, x, d):
        with np.errstate(all="ignore"):
            v = float(np.asarray(fn(*x), dtype=np.float64).astype(d))
        return exactly(v)(r) if v == 0 or not math.isfinite(v) else math.isclose(r, v, rel_tol=1e-6)
    return check


NAN, P0, N0, PINF, NINF, ONE = exactly(nan), exactly(0.0), exactly(-0.0), exactly(inf), exactly(-inf), \
    exactly(1.0)
TRUE, FALSE = exactly(True), exactly(False)


def identity(r, x, d=None):
    return exactly(x[0])(r)


def unary(*rules):
    return [(lambda x, c=c: c(x[0]), check) for c, check in rules]


# --- unary functions ---------------------------------------------------------------------------
_ROUNDING = unary((integer_valued, identity), (pinf, PINF), (ninf, NINF), (pzero, P0), (nzero, N0),
                  (isnan, NAN))
_LOGS = unary((isnan, NAN), (lambda x: x < 0, NAN), (zero, NINF), (lambda x: x == 1, P0), (pinf, PINF))

UNARY_RULES = {
    "abs": unary((isnan, NAN), (nzero, P0), (ninf, PINF), (lambda x: True, same_as(abs))),
    "acos": unary((isnan, NAN), (lambda x: x > 1, NAN), (lambda x: x < -1, NAN), (lambda x: x == 1, P0)),
    "acosh": unary((isnan, NAN), (lambda x: x < 1, NAN), (lambda x: x == 1, P0), (pinf, PINF)),
    "asin": unary((isnan, NAN), (lambda x: x > 1, NAN), (lambda x: x < -1, NAN), (pzero, P0), (nzero, N0)),
    "asinh": unary((isnan, NAN), (pzero, P0), (nzero, N0), (pinf, PINF), (ninf, NINF)),
    "atan": unary((isnan, NAN), (pzero, P0), (nzero, N0), (pinf, approx(PI / 2)), (ninf, approx(-PI / 2))),
    "atanh": unary((isnan, NAN), (lambda x: x < -1, NAN), (lambda x: x > 1, NAN), (lambda x: x == -1, NINF),
                   (lambda x: x == 1, PINF), (pzero, P0), (nzero, N0)),
    "ceil": _ROUNDING + unary((finite, same_as(np.ceil))),
    "cos": unary((isnan, NAN), (zero, ONE), (anyinf, NAN)),
    "cosh": unary((isnan, NAN), (zero, ONE), (anyinf, PINF)),
    "exp": unary((isnan, NAN), (zero, ONE), (pinf, PINF), (ninf, P0)),
    "expm1": unary((isnan, NAN), (pzero, P0), (nzero, N0), (pinf, PINF), (ninf, exactly(-1.0))),
    "floor": _ROUNDING + unary((finite, same_as(np.floor))),
    "isfinite": unary((anyinf, FALSE), (isnan, FALSE), (finite, TRUE)),
    "isinf": unary((anyinf, TRUE), (lambda x: True, FALSE)),
    "isnan": unary((isnan, TRUE), (lambda x: True, FALSE)),
    "log": _LOGS, "log2": _LOGS, "log10": _LOGS,
    "log1p": unary((isnan, NAN), (lambda x: x < -1, NAN), (lambda x: x == -1, NINF), (nzero, N0),
                   (pzero, P0), (pinf, PINF)),
    "round": _ROUNDING + unary((finite, same_as(np.rint))),  # Python rounds half to even
    "sign": unary((lambda x: x < 0, exactly(-1.0)), (zero, zero_any_sign), (lambda x: x > 0, ONE),
                  (isnan, NAN)),
    "signbit": unary((pzero, FALSE), (nzero, TRUE), (pinf, FALSE), (ninf, TRUE), (pos_finite, FALSE),
                     (neg_finite, TRUE), (lambda x: isnan(x) and not sign_bit(x), FALSE),
                     (lambda x: isnan(x) and sign_bit(x), TRUE)),
    "sin": unary((isnan, NAN), (pzero, P0), (nzero, N0), (anyinf, NAN)),
    "sinh": unary((isnan, NAN), (pzero, P0), (nzero, N0), (pinf, PINF), (ninf, NINF)),
    "sqrt": unary((isnan, NAN), (lambda x: x < 0, NAN), (pzero, P0), (nzero, N0), (pinf, PINF)),
    "square": unary((isnan, NAN), (lambda x: True, same_as(lambda x: x * x))),  # as x * x
    "tan": unary((isnan, NAN), (pzero, P0), (nzero, N0), (anyinf, NAN)),
    "tanh": unary((isnan, NAN), (pzero, P0), (nzero, N0), (pinf, ONE), (ninf, exactly(-1.0))),
    "trunc": _ROUNDING + unary((finite, same_as(np.trunc))),
}


# --- binary functions --------------------------------------------------------------------------
def either_nan(a, b):
    return isnan(a) or isnan(b)


def both(pa, pb):
    return lambda x: pa(x[0]) and pb(x[1])


def py_mod(a, b):
    return a % b


_DIVISION_ZEROS = [
    (lambda x: either_nan(*x), NAN),
    (both(anyinf, anyinf), NAN),
    (both(zero, zero), NAN),
    (both(pzero, lambda b: b > 0), P0), (both(nzero, lambda b: b > 0), N0),
    (both(pzero, lambda b: b < 0), N0), (both(nzero, lambda b: b < 0), P0),
    (both(lambda a: a > 0, pzero), PINF), (both(lambda a: a > 0, nzero), NINF),
    (both(lambda a: a < 0, pzero), NINF), (both(lambda a: a < 0, nzero), PINF),
]

BINARY_RULES = {
    "add": [
        (lambda x: either_nan(*x), NAN), (both(pinf, ninf), NAN), (both(ninf, pinf), NAN),
        (both(pinf, pinf), PINF), (both(ninf, ninf), NINF), (both(pinf, finite), PINF),
        (both(ninf, finite), NINF), (both(finite, pinf), PINF), (both(finite, ninf), NINF),
        (both(nzero, nzero), N0), (both(nzero, pzero), P0), (both(pzero, nzero), P0), (both(pzero, pzero), P0),
        (both(zero, nonzero_finite), lambda r, x, d=None: exactly(x[1])(r)),
        (both(nonzero_finite, zero), identity),
        (lambda x: nonzero_finite(x[0]) and x[1] == -x[0], P0),
        (lambda x: True, same_as(lambda a, b: a + b)),
    ],
    "atan2": [
        (lambda x: either_nan(*x), NAN),
        (both(lambda a: a > 0, zero), approx(PI / 2)),
        (both(pzero, lambda b: b > 0), P0), (both(pzero, pzero), P0), (both(pzero, nzero), approx(PI)),
        (both(pzero, lambda b: b < 0), approx(PI)),
        (both(nzero, lambda b: b > 0), N0), (both(nzero, pzero), N0), (both(nzero, nzero), approx(-PI)),
        (both(nzero, lambda b: b < 0), approx(-PI)),
        (both(lambda a: a < 0, zero), approx(-PI / 2)),
        (both(pos_finite, pinf), P0), (both(pos_finite, ninf), approx(PI)),
        (both(neg_finite, pinf), N0), (both(neg_finite, ninf), approx(-PI)),
        (both(pinf, finite), approx(PI / 2)), (both(ninf, finite), approx(-PI / 2)),
        (both(pinf, pinf), approx(PI / 4)), (both(pinf, ninf), approx(3 * PI / 4)),
        (both(ninf, pinf), approx(-PI / 4)), (both(ninf, ninf), approx(-3 * PI / 4)),
        (lambda x: True, same_as(math.atan2)),
    ],
    "copysign": [
        (lambda x: not isnan(x[0]) and (x[1] < 0 or nzero(x[1]) or (isnan(x[1]) and sign_bit(x[1]))),
         lambda r, x, d=None: exactly(-abs(x[0]))(r)),
        (lambda x: not isnan(x[0]), lambda r, x, d=None: exactly(abs(x[0]))(r)),
        (lambda x: x[1] < 0 or nzero(x[1]) or (isnan(x[1]) and sign_bit(x[1])), nan_with_sign(True)),
        (lambda x: True, nan_with_sign(False)),
    ],
    "divide": _DIVISION_ZEROS + [
        (both(pinf, pos_finite), PINF), (both(pinf, neg_finite), NINF),
        (both(ninf, pos_finite), NINF), (both(ninf, neg_finite), PINF),
        (both(pos_finite, pinf), P0), (both(pos_finite, ninf), N0),
        (both(neg_finite, pinf), N0), (both(neg_finite, ninf), P0),
        (lambda x: True, same_as(lambda a, b: a / b)),
    ],
    "floor_divide": _DIVISION_ZEROS + [  # the NaN / -1 alternatives are the standard's Python notes
        (both(pinf, pos_finite), one_of(PINF, NAN)), (both(pinf, neg_finite), one_of(NINF, NAN)),
        (both(ninf, pos_finite), one_of(NINF, NAN)), (both(ninf, neg_finite), one_of(PINF, NAN)),
        (both(pos_finite, pinf), P0), (both(pos_finite, ninf), one_of(N0, exactly(-1.0))),
        (both(neg_finite, pinf), one_of(N0, exactly(-1.0))), (both(neg_finite, ninf), P0),
        (lambda x: True, one_of(same_as(lambda a, b: np.floor(np.divide(a, b))),  # floor(divide): preferred
                            same_as(lambda a, b: a // b))),  # Python's //: allowed (floor(-tiny) is -1)
    ],
    "hypot": [
        (lambda x: anyinf(x[0]) or anyinf(x[1]), PINF),
        (lambda x: either_nan(*x), NAN),
        (both(zero, lambda b: True), lambda r, x, d=None: exactly(abs(x[1]))(r)),
        (both(lambda a: True, zero), lambda r, x, d=None: exactly(abs(x[0]))(r)),
        (lambda x: True, same_as(math.hypot)),
    ],
    "logaddexp": [
        (lambda x: either_nan(*x), NAN), (lambda x: pinf(x[0]) or pinf(x[1]), PINF),
    ],
    "maximum": [(lambda x: either_nan(*x), NAN), (lambda x: not (zero(x[0]) and zero(x[1])),
                                                   same_as(max))],
    "minimum": [(lambda x: either_nan(*x), NAN), (lambda x: not (zero(x[0]) and zero(x[1])),
                                                   same_as(min))],
    "multiply": [
        (lambda x: either_nan(*x), NAN),
        (both(anyinf, zero), NAN), (both(zero, anyinf), NAN),
        (lambda x: sign_bit(x[0]) == sign_bit(x[1]),
         lambda r, x, d: positive_sign(r) and same_as(lambda a, b: a * b)(r, x, d)),
        (lambda x: True, lambda r, x, d: negative_sign(r) and same_as(lambda a, b: a * b)(r, x, d)),
    ],
    "pow": [
        (lambda x: x[0] != 1 and isnan(x[1]), NAN),
        (both(lambda a: True, zero), ONE),
        (both(isnan, lambda b: b != 0), NAN),
        (both(lambda a: abs(a) > 1, pinf), PINF), (both(lambda a: abs(a) > 1, ninf), P0),
        (both(lambda a: abs(a) == 1, anyinf), ONE),
        (both(lambda a: a == 1, lambda b: not isnan(b)), ONE),
        (both(lambda a: abs(a) < 1, pinf), P0), (both(lambda a: abs(a) < 1, ninf), PINF),
        (both(pinf, lambda b: b > 0), PINF), (both(pinf, lambda b: b < 0), P0),
        (both(ninf, lambda b: b > 0 and odd_integer(b)), NINF),
        (both(ninf, lambda b: b > 0), PINF),
        (both(ninf, lambda b: b < 0 and odd_integer(-b)), N0),
        (both(ninf, lambda b: b < 0), P0),
        (both(pzero, lambda b: b > 0), P0), (both(pzero, lambda b: b < 0), PINF),
        (both(nzero, lambda b: b > 0 and odd_integer(b)), N0), (both(nzero, lambda b: b > 0), P0),
        (both(nzero, lambda b: b < 0 and odd_integer(-b)), NINF), (both(nzero, lambda b: b < 0), PINF),
        (both(neg_finite, lambda b: finite(b) and not integer_valued(b)), NAN),
        (lambda x: finite(x[0]) and finite(x[1]), same_as(np.power)),
    ],
    "remainder": _DIVISION_ZEROS[:3] + [
        (both(pzero, lambda b: b > 0), P0), (both(nzero, lambda b: b > 0), P0),
        (both(pzero, lambda b: b < 0), N0), (both(nzero, lambda b: b < 0), N0),
        (both(lambda a: True, zero), NAN),
        (both(anyinf, finite), NAN),
        (both(pos_finite, pinf), identity), (both(pos_finite, ninf), lambda r, x, d=None: exactly(x[1])(r)),
        (both(neg_finite, pinf), lambda r, x, d=None: exactly(x[1])(r)), (both(neg_finite, ninf), identity),
        (lambda x: True, same_as(py_mod)),
    ],
    "equal": [(lambda x: either_nan(*x), FALSE), (lambda x: x[0] == x[1], TRUE), (lambda x: True, FALSE)],
    "not_equal": [(lambda x: either_nan(*x), TRUE), (lambda x: x[0] != x[1], TRUE),
                  (lambda x: True, FALSE)],
}
