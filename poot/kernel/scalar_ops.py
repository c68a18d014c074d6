"""KIR scalar semantics on NumPy scalars (see poot/jit/kir/model.py): the emulator runs kernel bodies
with these, and the importer folds constants with them, so both agree with every compiled target.

Values are NumPy scalars of the exact dtype (ml_dtypes' bfloat16 for bf16). Integer arithmetic wraps;
NumPy's own scalar operators already do that for + - * & | ^ ~ and unary minus (warnings silenced by
the caller's `np.errstate`), so only the operations whose KIR meaning differs from NumPy's or Python's
are here: casts, floor division and modulo, shifts, and the math functions.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType


def as_scalar(value, dtype: DType):
    """`value` (a Python number already checked to fit, or a NumPy scalar) as a scalar of `dtype`;
    a NumPy scalar of another dtype converts with KIR cast semantics."""
    if isinstance(value, np.generic):
        if value.dtype == dtype.np:
            return value
        return cast(value, dtype)
    if isinstance(value, (bool, int, float)):
        if dt.is_int(dtype) and isinstance(value, float):
            return cast(value, dtype)
        if dt.is_int(dtype):
            return _wrap_int(int(value), dtype)
        if dt.is_bool(dtype):
            return np.bool_(bool(value))
        return dtype.np.type(value)
    raise TypeError(f"not a scalar: {value!r}")


def _wrap_int(v: int, dtype: DType):
    bits = dtype.bits
    v &= (1 << bits) - 1
    if dt.is_signed(dtype) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dtype.np.type(v)


def cast(value, dtype: DType):
    """KIR `Cast`: to bool is `!= 0`; float -> int truncates and saturates, NaN gives 0; int -> int
    wraps; everything else rounds to nearest even."""
    if dt.is_bool(dtype):
        return np.bool_(value != 0)
    src_float = isinstance(value, float) or (isinstance(value, np.generic) and _is_float_scalar(value))
    if dt.is_int(dtype):
        if src_float:
            f = float(value)
            if math.isnan(f):
                return dtype.np.type(0)
            info = dt.iinfo(dtype)
            if f >= info.max:
                return dtype.np.type(info.max)
            if f <= info.min:
                return dtype.np.type(info.min)
            return dtype.np.type(math.trunc(f))
        return _wrap_int(int(value), dtype)
    if isinstance(value, (bool, np.bool_)):
        return dtype.np.type(1.0 if value else 0.0)
    if isinstance(value, (int, np.integer)):
        return dtype.np.type(float(int(value))) if dtype is not dt.float64 else np.float64(int(value))
    return np.asarray(value).astype(dtype.np)[()]


def _is_float_scalar(value: np.generic) -> bool:
    """Whether a NumPy scalar is a float: ml_dtypes' bfloat16 reports kind "V", not "f", yet converts
    to int like any float (saturating, not wrapping)."""
    return value.dtype.kind == "f" or value.dtype == dt.bfloat16.np


def bitcast(value, dtype: DType):
    src = np.asarray(value)
    return src.view(dtype.np)[()]


def _int_parts(a, b, dtype: DType):
    """Truncating quotient and remainder with KIR's rules: a zero divisor, and INT_MIN / -1, give 0."""
    x, y = int(a), int(b)
    if y == 0:
        return 0, 0
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    r = x - q * y
    if dt.is_signed(dtype) and x == dt.iinfo(dtype).min and y == -1:
        return 0, 0
    return q, r


def floordiv(a, b, dtype: DType):
    """Python's `//` on integers (floor), over KIR's truncating division; `x // 0` is 0."""
    q, r = _int_parts(a, b, dtype)
    if r != 0 and (r < 0) != (int(b) < 0):
        q -= 1
    return _wrap_int(q, dtype)


def mod(a, b, dtype: DType):
    """Python's `%` on integers (the result takes the divisor's sign); `x % 0` is 0."""
    _, r = _int_parts(a, b, dtype)
    if r != 0 and (r < 0) != (int(b) < 0):
        r += int(b)
    return _wrap_int(r, dtype)


def shl(a, b, dtype: DType):
    amount = int(b) & ((1 << dtype.bits) - 1)     # the amount as an unsigned value
    if amount >= dtype.bits:
        return dtype.np.type(0)
    return _wrap_int(int(a) << amount, dtype)


def shr(a, b, dtype: DType):
    amount = int(b) & ((1 << dtype.bits) - 1)
    x = int(a)
    if amount >= dtype.bits:
        return dtype.np.type(-1 if x < 0 else 0)
    return _wrap_int(x >> amount, dtype)


def _erf(x):
    return np.asarray(math.erf(float(x))).astype(np.asarray(x).dtype)[()]


def _round_float(fn):
    return lambda x: np.asarray(fn(float(x))).astype(np.asarray(x).dtype)[()]


UNARY = {
    "neg": lambda x: -x, "abs": np.abs, "sqrt": np.sqrt, "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "exp": np.exp, "exp2": np.exp2, "fast_exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "erf": _erf, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.rint, "sign": np.sign, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "not": np.logical_not, "bitnot": np.invert,
}

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "min": np.minimum,
    "max": np.maximum, "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "nextafter": np.nextafter, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "add_nocontract": np.add, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


def _is_bf16(x) -> bool:
    return isinstance(x, np.generic) and x.dtype == dt.bfloat16.np


def _sign(x):
    """`sign` as the devices compute it: bf16 in float32 (ml_dtypes keeps the sign of -0.0, NumPy's
    float32 sign gives +0.0), rounded back."""
    if _is_bf16(x):
        return np.sign(np.float32(x)).astype(dt.bfloat16.np)
    return np.sign(x)


def _zero_order(fn, pick_negative: bool):
    """min/max with IEEE's -0 < +0 (the devices' rule); NumPy returns one of two equal zeros by
    argument order."""
    def impl(a, b):
        out = fn(a, b)
        if out == 0 and a == 0 and b == 0 and np.signbit(a) != np.signbit(b):
            neg = a if np.signbit(a) else b
            pos = b if np.signbit(a) else a
            return neg if pick_negative else pos
        return out
    return impl


def _nextafter(x, y):
    """C's nextafter: y when x == y (NumPy's float16 returns x, losing the sign of a zero)."""
    if x == y:
        return np.asarray(y).astype(np.asarray(x).dtype)[()]
    return np.nextafter(x, y)


UNARY["sign"] = _sign
BINARY.update({"min": _zero_order(np.minimum, True), "max": _zero_order(np.maximum, False),
               "nextafter": _nextafter})


def unary(op: str, x):
    return UNARY[op](x)


def binary(op: str, a, b):
    return BINARY[op](a, b)


def min_or_max(a, b, name: str):
    """Python's min/max in a kernel: the KIR min/max, with IEEE's ordering of signed zeros."""
    return BINARY[name](a, b)


def fma(a, b, c, dtype: DType):
    """a * b + c with one rounding (exact in float64 for f16/bf16/f32 products, then one rounding)."""
    if dtype is dt.float64:
        return _fma64(float(a), float(b), float(c))
    return as_scalar(np.float64(float(a)) * np.float64(float(b)) + np.float64(float(c)), dtype)


def _fma64(a: float, b: float, c: float):
    """The fused double result, exact in rationals then rounded once. Infinities and NaN have no
    rational value: a non-finite product is exact as is (inf * finite, or NaN), so IEEE arithmetic
    gives the fused result; a non-finite addend with a finite product is the result itself (the
    product must not overflow first). A zero sum takes IEEE's sign: that of the float sum when the
    product is zero, else +0."""
    if not (math.isfinite(a) and math.isfinite(b)):
        with np.errstate(all="ignore"):     # inf * 0 and inf - inf: NaN, as IEEE says
            return np.float64(a) * np.float64(b) + np.float64(c)
    if not math.isfinite(c):
        return np.float64(c)
    product = Fraction(a) * Fraction(b)
    exact = product + Fraction(c)
    if exact == 0:
        return np.float64(a) * np.float64(b) + np.float64(c) if product == 0 else np.float64(0.0)
    try:
        return np.float64(float(exact))
    except OverflowError:
        return np.float64(math.inf if exact > 0 else -math.inf)


def truthy(x) -> bool:
    return bool(x)
