"""Operands of an operation: turning Arrays, host data and Python scalars into Nodes of one dtype.

NumPy 2 rules: Arrays, NumPy arrays and NumPy scalars are strongly typed; Python bool/int/float/complex
are weak and take the array's dtype when their kind allows (`f32_array * 2.0` stays float32,
`f32_array * 1j` is complex64).
"""
from __future__ import annotations

import sys
import warnings

import numpy as np
from numpy.exceptions import ComplexWarning

from poot import dtypes as dt
from poot.errors import ArgumentError, DeviceError, DTypeError
from poot.trace import context as _dev
from poot.trace.array import Array, asnode
from poot.trace.lazy import Node, check_scalar_fits, is_internal, note_weak_cast, record, scalar_value, shared_constant

_WEAK = (bool, int, float, complex)
_WEAK_SAMPLE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}   # a Python scalar of a weak value's kind
KIND_NAMES = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "floating",
              "c": "complex floating"}


def is_weak(x) -> bool:
    return isinstance(x, _WEAK) and not isinstance(x, np.generic)


def device_of(op: str, xs, device: str | None = None) -> str:
    """The device shared by the Arrays among `xs` (else `device`, else the current one)."""
    dev = device
    for x in xs:
        if isinstance(x, Array):
            d = x._node.device
            if dev is None:
                dev = d
            elif d != dev:
                raise DeviceError(f"{op}: operands are on different devices ('{dev}' and '{d}'); "
                                  f"move one first, e.g. x.to('{dev}')")
    return dev or _dev.current()


def promote(op: str, xs, device: str | None = None):
    """-> (items, dtype, device): items are Nodes (strong operands) or Python scalars (weak), dtype
    the NumPy 2 result type of them all."""
    same = _one_dtype_nodes(xs, device)
    if same is not None:
        return same
    dev = device_of(op, xs, device)
    items = []
    strong = []
    weak = []
    for x in xs:
        if is_weak(x):
            items.append(x)
            weak.append(x)
        elif isinstance(x, Array) and x._node.weak == 1:   # a traced Python scalar (@poot.jit)
            items.append(x._node)
            weak.append(_WEAK_SAMPLE[x._node.aval.dtype.kind])
        else:
            n = asnode(x, dev, op)
            items.append(n)
            strong.append(n.aval.dtype)
    if strong:
        d = dt.result_type(*strong)
        for s in weak:
            d = dt.promote_with_scalar(d, s)
    elif any(isinstance(s, complex) for s in weak):
        d = dt.complex128
    elif any(isinstance(s, float) for s in weak):
        d = dt.float64
    elif any(not isinstance(s, bool) for s in weak):
        d = dt.int64
    else:
        d = dt.bool_
    return items, d, dev


def _one_dtype_nodes(xs, device: str | None):
    """promote's answer where every operand is an Array of one dtype on one device (`device`, if
    given) and none a traced Python scalar: their nodes, that dtype and device; else None (promote
    then decides, and names any mismatch). The commonest case, and the one with many operands
    (`stack` of a list of per-step values), so it takes one pass and no promotion table."""
    if not xs or type(xs[0]) is not Array:
        return None
    n = xs[0]._node
    d, dev = n.aval.dtype, n.device
    if device is not None and device != dev:
        return None
    nodes = []
    for x in xs:
        if type(x) is not Array:
            return None
        n = x._node
        if n.aval.dtype is not d or n.weak == 1 or n.device != dev:
            return None
        nodes.append(n)
    return nodes, d, dev


def _user_stacklevel() -> int:
    """The `stacklevel` naming the innermost frame outside poot (for a warning at the user's line),
    counted from the caller of this function's caller."""
    f, level = sys._getframe(2), 2
    while f is not None and is_internal(f.f_code):
        f, level = f.f_back, level + 1
    return level


def cast(n: Node, dtype: dt.DType) -> Node:
    """`n` converted to `dtype` (a constant is folded instead of converted)."""
    if n.aval.dtype is dtype:
        return n
    if n.aval.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn(f"casting complex values to {dtype.name} discards the imaginary part",
                      ComplexWarning, stacklevel=_user_stacklevel())
    if n.op == "full" and n.buf is None:
        try:
            value = scalar_value(n.params["value"], dtype)
        except (DTypeError, OverflowError, ValueError, TypeError):   # TypeError: complex to real
            value = None
        if value is not None:
            return record("full", (), {"shape": n.params["shape"], "value": value, "dtype": dtype},
                          n.device)
    return record("convert", (n,), {"dtype": dtype})


def strong_cast(n: Node, dtype: dt.DType) -> Node:
    """`n` converted to `dtype` as a strongly typed value. A traced Python scalar (a jitted function's
    scalar argument, weak) that the user makes an array of, or gives a dtype (`pt.asarray(t)`,
    `t.astype(pt.float64)`, `pt.float32(t)`), is then a NumPy value of that dtype, as the same call
    makes it eagerly: `f32_array + pt.float64(t)` is float64, under @pt.jit too."""
    r = cast(n, dtype)
    if r.weak == 1:
        if r is n:
            r = record("convert", (n,), {"dtype": dtype})
        r.weak = 0
    return r


def finish(op: str, items, dtype: dt.DType, dev: str) -> list[Node]:
    """Items from `promote` as Nodes of `dtype`: weak scalars become 0-d leaves (checked to fit)."""
    out = []
    for it in items:
        if isinstance(it, Node):
            if it.weak == 1 and it.aval.dtype is not dtype:
                note_weak_cast(dtype, it)
            out.append(cast(it, dtype))
        else:
            check_scalar_fits(it, dtype, op)
            out.append(shared_constant(it, dtype, dev))
    return out


def float_argument(value, op: str, name: str) -> float:
    """A Python float from a numeric argument (a scale, an epsilon), or ArgumentError naming it."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{op}: {name} must be a number, got {value!r}") from None


def float_of(d: dt.DType) -> dt.DType:
    """The float dtype NumPy computes a float-only function in for input `d` (int8 -> float16,
    int16 -> float32, int32/int64 -> float64, bool -> float16); complex stays complex."""
    return d if d.kind in "fc" else dt.result_type(d, dt.float16)


def require(op: str, d: dt.DType, kinds: str, hint: str = "") -> None:
    if d.kind not in kinds:
        takes = " or ".join(KIND_NAMES[k] for k in kinds)
        raise DTypeError(f"{op} does not accept {d.name} operands; it takes {takes}"
                         + (f"; {hint}" if hint else ""))


def wrap(n: Node) -> Array:
    """An Array on `n`, made by a slot store rather than Array(n): every operation's result is one,
    and Array.__init__'s frame costs more than the rest of making it."""
    x = _new(Array)
    x._node = n
    return x


_new = object.__new__
