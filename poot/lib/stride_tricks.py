"""`pt.lib.stride_tricks`: NumPy's window views, as lazy gathers.

NumPy builds `sliding_window_view` by pointing new strides at the input's memory. A poot array is a
value, not memory, so the windows are gathered instead: each windowed axis of length n becomes
n - w + 1 window positions, the window's w elements on a new last axis (a `take` whose index table
is two lazy iotas added, computed inside the gather's kernel: no host table of positions x w). The
result has NumPy's shape and values; it is a new array (NumPy's view is read-only anyway), lazy and
fused with what follows. `as_strided` reinterprets memory with arbitrary strides, which has no
meaning for a value, so it is refused with what to use instead.
"""
from __future__ import annotations

import operator


from poot.errors import NotBuiltError, ShapeError, api_boundary
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
    """Refused: arbitrary strides reinterpret memory, and a poot array is a value. The usual uses have
    lazy forms: sliding_window_view for windows, broadcast_to for zero strides, reshape for the rest."""
    raise NotBuiltError("lib.stride_tricks.as_strided is not built: poot arrays are values, not memory, so "
                        "there are no strides to point anywhere; for windows use "
                        "pt.lib.stride_tricks.sliding_window_view(x, window_shape), for repeated (zero-"
                        "stride) axes pt.broadcast_to, and for a new shape of the same elements pt.reshape")
