"""KIR scalar semantics on NumPy scalars (see poot/jit/kir/model.py): the emulator runs kernel bodies
with these, and the importer folds constants with them, so both agree with every compiled target.

Values are NumPy scalars of the exact dtype (ml_dtypes' bfloat16 for bf16). Integer arithmetic wraps;
NumPy's own scalar operators already do that for + - * & | ^ ~ and unary minus (warnings silenced by
the caller's `np.errstate`), so only the operations whose KIR meaning differs from NumPy's or Python's
are here: casts, floor division and modulo, shifts, and the math functions.
"""
from __future__ import annotations

import math

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
    src_float = isinstance(value, float) or (isinstance(value, np.generic) and value.dtype.kind == "f")
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


def unary(op: str, x):
    return UNARY[op](x)


def binary(op: str, a, b):
    return BINARY[op](a, b)


def fma(a, b, c, dtype: DType):
    """a * b + c with one rounding (exact in float64 for f16/bf16/f32 products, then one rounding)."""
    if dtype is dt.float64:
        import decimal  # exact fused result for doubles

        with decimal.localcontext() as ctx:
            ctx.prec = 200
            exact = decimal.Decimal(float(a)) * decimal.Decimal(float(b)) + decimal.Decimal(float(c))
        return np.float64(float(exact))
    return as_scalar(np.float64(float(a)) * np.float64(float(b)) + np.float64(float(c)), dtype)


def truthy(x) -> bool:
    return bool(x)
