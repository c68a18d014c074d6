"""Abstract values: what a graph knows about an array before it exists (its shape and dtype)."""
from __future__ import annotations

import math
from typing import NamedTuple

from poot.dtypes import DType
from poot.errors import AxisError, ShapeError


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
        raise AxisError(f"{op}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str = "op") -> tuple[int, ...]:
    """None -> all axes; int or tuple -> sorted non-negative axes (duplicates refused)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, op) for a in axis)
        if len(set(axes)) != len(axes):
            raise AxisError(f"{op}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    if ndim == 0:
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of dimension 0")
    return (normalize_axis(axis, ndim, op),)
