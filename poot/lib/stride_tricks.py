"""`pt.lib.stride_tricks`: NumPy's window views, as lazy gathers.

NumPy builds `sliding_window_view` by pointing new strides at the input's memory. A poot array is a
value, not memory, so the windows are gathered instead: each windowed axis of length n becomes
n - w + 1 window positions, the window's w elements on a new last axis (a `take` whose index table
is two lazy iotas added, computed inside the gather's kernel: no host table of positions x w). The
result has NumPy's shape and values; it is a new array (NumPy's view is read-only anyway), lazy and
fused with what follows. `as_strided` reads x's values with arbitrary strides over their C-order
layout (the one `x.strides` gives), as a gather whose every position must lie inside x.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot.errors import ShapeError, api_boundary
from poot.trace import movement as mv
from poot.trace.creation import zeros
from poot.trace.indexing import take
from poot.trace.movement import arr, axis_of
from poot.trace.numpy_signals import window_index

__all__ = ["sliding_window_view", "as_strided"]


@api_boundary
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Every window of `window_shape` over `x` (over the axes `axis`; all axes when None), as NumPy's
    sliding_window_view: the window positions first, the window's elements on trailing axes. Lazy."""
    x = arr(x)
    if writeable:
        raise ShapeError("sliding_window_view: writeable=True asks for a view into x's memory; poot's "
                         "windows are a new array (assign into x itself to change it)")
    shape = window_shape if isinstance(window_shape, (tuple, list)) else (window_shape,)
    window = tuple(operator.index(w) for w in shape)
    if any(w < 0 for w in window):
        raise ShapeError(f"sliding_window_view: window_shape {window} cannot contain negative values")
    if axis is None:
        if len(window) != x.ndim:
            raise ShapeError(f"sliding_window_view: since axis is None, window_shape {window} must have the "
                             f"same length as x's {x.ndim} dimensions ({x.aval})")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if len(axes) != len(window):
            raise ShapeError(f"sliding_window_view: window_shape {window} and axis {axes} must have the "
                             f"same length")
        axes = tuple(axis_of(a, x.ndim, "sliding_window_view", x) for a in axes)
    trimmed = list(x.shape)     # NumPy's check: each window fits what earlier windows left
    for ax, w in zip(axes, window):
        if trimmed[ax] < w:
            raise ShapeError(f"sliding_window_view: window shape {window} cannot be larger than the input "
                             f"array's shape {x.shape} along axis {ax}")
        trimmed[ax] -= w - 1
    out = x
    for ax, w in zip(axes, window):
        n = out.shape[ax] - w + 1
        if w == 0:      # empty windows: nothing to gather
            out = zeros(out.shape[:ax] + (n,) + out.shape[ax + 1:] + (0,), dtype=out.dtype, device=out.device)
            continue
        table = window_index(n, w, 0, out._node.device)         # (positions, window), lazy
        out = mv.moveaxis(take(out, table, axis=ax), ax + 1, -1)
    return out


@api_boundary
def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """NumPy's as_strided over x's values laid out in C order (the layout `x.strides` describes):
    element i of the result is the flat element sum(i_k * strides_k) / itemsize of x, gathered
    lazily (Toeplitz and Hankel matrices, rolling windows, zero-stride repeats). Every element read
    must lie inside x, where NumPy would read whatever memory is there. The result is a new array:
    writing into it leaves x unchanged."""
    x = arr(x)
    shape = x.shape if shape is None else tuple(operator.index(n) for n in shape)
    strides = x.strides if strides is None else tuple(operator.index(st) for st in strides)
    if len(shape) != len(strides):
        raise ShapeError(f"as_strided: shape {shape} and strides {strides} must have the same length")
    if any(n < 0 for n in shape):
        raise ShapeError(f"as_strided: negative dimensions are not allowed, got shape {shape}")
    item = x.dtype.itemsize
    if any(st % item for st in strides):
        raise ShapeError(f"as_strided: strides {strides} must be multiples of the item size {item} of "
                         f"{x.dtype.name} (poot reads whole elements)")
    if math.prod(shape) == 0:
        return zeros(shape, dtype=x.dtype, device=x.device)
    pos = _flat_positions(shape, tuple(st // item for st in strides))
    lo, hi = int(pos.min()), int(pos.max())
    if lo < 0 or hi >= x.size:
        raise ShapeError(f"as_strided: shape {shape} with strides {strides} reaches flat element "
                         f"{lo if lo < 0 else hi}, outside the {x.size} elements of {x.aval}")
    return take(mv.reshape(x, (-1,)), pos)


def _flat_positions(shape, steps) -> np.ndarray:
    """The flat element each index of `shape` reads with element `steps` (a host table)."""
    pos = np.zeros(shape, dtype=np.int64)
    for k, (n, st) in enumerate(zip(shape, steps)):
        pos += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(shape) - k - 1))
    return pos
