"""`pt.ndarray`: NumPy's name for the array type, usable as NumPy's is.

`isinstance(x, pt.ndarray)` is `isinstance(x, pt.Array)`, and `pt.ndarray(shape, dtype=float,
buffer=None, offset=0, strides=None, order=None)` constructs like `np.ndarray`: the values NumPy would
read from `buffer` (copied into a poot array), or zeros without one (NumPy leaves that memory
uninitialized; poot has no such memory to hand out, so it is defined).
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError
from poot.trace.array import Array, host_array
from poot.trace.creation import zeros
from poot.trace.lazy import from_numpy
from poot.trace import context as _dev


class _ArrayType(type):
    """Instance and subclass checks answered for poot.Array."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Array)

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or issubclass(sub, Array)


class ndarray(metaclass=_ArrayType):  # noqa: N801 (NumPy's name)
    """A poot array made as np.ndarray(shape, dtype, buffer, offset, strides, order) makes one."""

    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        d = dt.as_dtype(dtype)
        if buffer is None and strides is None:
            return zeros(shape, dtype=d)
        try:
            host = np.ndarray(shape, dtype=d.np, buffer=buffer, offset=offset, strides=strides, order=order)
        except (TypeError, ValueError) as e:      # the dtype is known good: shape, buffer or strides
            raise ShapeError(f"ndarray: {e} (shape {shape}, {d.name})") from None
        return Array(from_numpy(host_array(host.copy(), "ndarray"), _dev.current(), d))


__all__ = ["ndarray"]
