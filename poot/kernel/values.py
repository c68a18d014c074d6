"""What an expression of a kernel body lowers to, and the typing rules between those values.

- `Val`: a typed runtime scalar (a KIR expression and its dtype). `local` names the KIR local it reads
  when that local's dtype came from a bare literal (`acc = 0.0`): the first typed value it meets then
  decides its dtype (a "hint"; the import restarts with it).
- `Lit`: a Python literal, weak: it takes the dtype of the typed value it meets (NumPy 2's rule for
  Python scalars); literal-only expressions are folded with Python's semantics.
- `Buf`: a buffer parameter or a shared array.
- `Static`: any other compile-time object (a module, an intrinsic, a dtype, a device function...).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType
from poot.jit.kir.model import Access, Cast, Const, Expr


@dataclass(frozen=True)
class Val:
    expr: Expr
    dtype: DType
    local: str | None = None


@dataclass(frozen=True)
class Lit:
    value: bool | int | float
    node: object = field(default=None, compare=False, repr=False)   # where it was written (diagnostics)


@dataclass(frozen=True)
class Buf:
    name: str                  # KIR name
    dtype: DType
    access: Access | None      # None: a shared array
    size: int | None = None    # shared arrays only
    py_name: str = ""

    @property
    def writable(self) -> bool:
        return self.access is None or self.access.writable


@dataclass(frozen=True)
class Static:
    obj: object


class Restart(Exception):
    """A literal-typed local learned its dtype from context: import again with the hint."""


def literal_kind(value) -> str:
    return "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"


def default_dtype(value) -> DType:
    """The dtype of a literal with no typed value around it: bool, int32 (int64 if it needs to), float32."""
    if isinstance(value, bool):
        return dt.bool_
    if isinstance(value, int):
        return dt.int32 if -2**31 <= value < 2**31 else dt.int64
    return dt.float32


def accepts_literal(kind: str, dtype: DType) -> bool:
    """Whether a literal of `kind` may take `dtype`: ints become any number type, floats only floats,
    bools only bool."""
    if kind == "b":
        return dt.is_bool(dtype)
    if kind == "i":
        return dt.is_int(dtype) or dt.is_float(dtype)
    return dt.is_float(dtype)


def fits(value, dtype: DType) -> bool:
    """Whether a literal keeps its value in `dtype`. A float dtype takes any value that rounds to a finite
    one (3.4028235e38 in f32) and inf/nan written as such (float("inf")); a finite value past the dtype's
    max would silently become inf (`x + 1e40` on f32), so it does not fit."""
    if dt.is_int(dtype):
        info = dt.iinfo(dtype)
        return info.min <= value <= info.max
    if not dt.is_float(dtype):
        return True
    try:
        v = float(value)
    except OverflowError:            # an int literal beyond float64 (10**400)
        return False
    if not math.isfinite(v):
        return True
    return math.isfinite(_rounded(v, dtype))


def _rounded(v: float, dtype: DType) -> float:
    """`v` rounded to float `dtype`, inf where it overflows (without NumPy's overflow RuntimeWarning)."""
    if dtype is dt.float64:
        return v
    with np.errstate(over="ignore", invalid="ignore"):
        return float(dtype.np.type(v))


def const(value, dtype: DType) -> Const:
    """A KIR constant holding `value` exactly representable in `dtype` (floats rounded to it)."""
    if dt.is_bool(dtype):
        return Const(bool(value), dtype)
    if dt.is_int(dtype):
        return Const(int(value), dtype)
    v = float(value)
    if not math.isnan(v):
        v = _rounded(v, dtype)
    return Const(v, dtype)


def widen(expr: Expr, dtype: DType) -> Expr:
    return expr if expr.dtype is dtype else Cast(expr, dtype)


def same_kind(a: DType, b: DType) -> bool:
    return a.kind == b.kind
