"""Small helpers the differentiation rules are written with: record one primitive on Arrays, make
zeros, undo broadcasting. The rules use these and the public poot functions (`pt.exp`, `*`, ...),
so a derivative is itself an ordinary lazy poot computation: it fuses with the rest of the program,
runs eagerly or under @pt.jit on any device, and can be differentiated again."""
from __future__ import annotations

from poot import dtypes as dt
from poot.trace import lazy
from poot.trace.array import Array


def bind(op: str, *arrays: Array, device: str | None = None, **params) -> Array:
    """`op[params](*arrays)` recorded as one primitive equation."""
    return Array(lazy.record(op, tuple(a._node for a in arrays), params, device))


def zeros(shape, dtype: dt.DType, device: str) -> Array:
    """A lazily broadcast zero (a `full` equation: nothing is stored until it is used)."""
    return Array(lazy.constant(0, dtype, device, tuple(shape)))


def zeros_like(x: Array) -> Array:
    return zeros(x.shape, x.dtype, x.device)


def full_like(x: Array, value) -> Array:
    return Array(lazy.constant(value, x.dtype, x.device, x.shape))


def convert(x: Array, dtype: dt.DType) -> Array:
    return x if x.dtype is dtype else bind("convert", x, dtype=dtype)


def reshape(x: Array, shape) -> Array:
    shape = tuple(shape)
    return x if x.shape == shape else bind("reshape", x, shape=shape)


def broadcast(x: Array, shape) -> Array:
    """`x` broadcast to `shape` (NumPy rules: missing leading axes, size-1 axes)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if x.ndim < len(shape):
        x = reshape(x, (1,) * (len(shape) - x.ndim) + x.shape)
    return bind("broadcast", x, shape=shape)


def sum_to(x: Array, shape) -> Array:
    """The transpose of `broadcast(·, shape)`: `x` summed over the axes broadcasting added or
    stretched, so a cotangent gets the shape of the operand it belongs to."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and x.shape[lead + i] != 1)
    if axes:
        x = bind("reduce_sum", x, axes=axes)
    return reshape(x, shape)


def is_float(x) -> bool:
    """Does this Array (or aval) carry a derivative (a floating dtype)?"""
    return x.dtype.kind == "f"


def where(c: Array, a: Array, b: Array) -> Array:
    """`select` with NumPy broadcasting of all three operands (they share a dtype already)."""
    return bind("select", c, a, b)


def select_zero(c: Array, a: Array) -> Array:
    """`a` where `c`, zero elsewhere (the shape of `a` broadcast with `c`)."""
    return where(c, a, zeros((), a.dtype, a.device))
