"""Abstract values: what a graph knows about an array before it exists (its shape and dtype)."""
from __future__ import annotations

import math
from typing import NamedTuple

from poot.dtypes import DType
from poot.errors import AxisError, AxisTypeError, ShapeError


class Aval(NamedTuple):
    shape: tuple[int, ...]
    dtype: DType

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{self.dtype.short}[{','.join(map(str, self.shape))}]"


MAX_NBYTES = 2**63 - 1      # NumPy's limit on an array's bytes (its sizes and offsets are int64)
MAX_NDIM = 64               # NumPy's limit on an array's dimensions
_SAFE_SIZE = MAX_NBYTES // 16   # elements that fit MAX_NBYTES at any itemsize (complex128's 16 the widest)


def check_size(aval: Aval, op: str) -> Aval:
    """`aval`, or a ShapeError where an array of it could not exist: more bytes than an int64 counts
    (NumPy's 'array is too big', a ValueError) or more than NumPy's 64 dimensions. Found when the op
    is recorded, with the user's sizes named, not deep in the compiler or at the next realize."""
    shape = aval.shape
    if len(shape) <= MAX_NDIM and math.prod(shape) <= _SAFE_SIZE:    # the common case, checked cheaply
        return aval
    if len(shape) > MAX_NDIM:
        raise ShapeError(f"{op}: the result {aval} has {len(shape)} dimensions; arrays have at most "
                         f"{MAX_NDIM} (NumPy's limit)")
    if aval.nbytes > MAX_NBYTES:
        raise ShapeError(f"{op}: the result {aval} is too big: {aval.size} elements of "
                         f"{aval.dtype.itemsize} bytes is more than 2**63 - 1 bytes (check the sizes)")
    return aval


def broadcast_shapes(*shapes: tuple[int, ...], op: str = "broadcast") -> tuple[int, ...]:
    """NumPy broadcasting of several shapes; a ShapeError names the op and the shapes."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dim = 1
        for s in shapes:
            k = i - (ndim - len(s))
            if k < 0:
                continue
            d = s[k]
            if d != 1:
                if dim not in (1, d):
                    shown = " and ".join(str(tuple(s)) for s in shapes)
                    raise ShapeError(f"{op}: shapes {shown} cannot be broadcast together "
                                     f"(axis {i - ndim}: {dim} vs {d})")
                dim = d
        out.append(dim)
    return tuple(out)


def normalize_axis(axis: int, ndim: int, op: str = "op") -> int:
    import operator

    try:
        axis = operator.index(axis)
    except TypeError:
        raise AxisTypeError(f"{op}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str = "op") -> tuple[int, ...]:
    """None -> all axes; int or tuple -> sorted non-negative axes (duplicates refused)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, op) for a in axis)
        if ndim == 0 and axes:      # NumPy takes axis=0 for a 0-d array, but not axis=(0,)
            raise AxisError(f"{op}: axis {axis[0]} is out of bounds for an array of dimension 0")
        if len(set(axes)) != len(axes):
            raise AxisError(f"{op}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    if ndim == 0 and hasattr(axis, "__index__"):     # a non-integer axis is a TypeError at any ndim
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of dimension 0")
    return (normalize_axis(axis, ndim, op),)
