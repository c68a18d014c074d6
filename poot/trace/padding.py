"""np.pad's value modes: 'linear_ramp' (end_values) and the statistic modes 'mean', 'median',
'maximum', 'minimum' (stat_length), plus 'empty' (which poot fills with zeros: its values are
unspecified in NumPy too). The constant mode is `movement.pad`; the index modes (edge, reflect,
symmetric, wrap) are one gather per axis in `numpy_more.pad_gather`.

Why axis by axis: NumPy pads axis 0 first, then axis 1 with statistics (or ramp edges) taken over the
rows already padded along axis 0, and so on; doing the same here (each axis's pad computed from the
array padded so far) gives NumPy's values in the corners too. Everything is recorded lazily from
slices, reductions and concatenations, so the modes also run inside @pt.jit.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import arange
from poot.trace.selection import where as _where

STAT_MODES = ("mean", "median", "maximum", "minimum")
VALUE_MODES = STAT_MODES + ("linear_ramp", "empty")
_ALLOWED_KWARGS = {"linear_ramp": {"end_values"}, "empty": set(),
                   **{m: {"stat_length"} for m in STAT_MODES}}


def pad_widths(x: Array, pad_width) -> list[tuple[int, int]]:
    """pad_width as one (before, after) pair of non-negative ints per axis, as np.pad reads it."""
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    except (ValueError, TypeError):
        raise ShapeError(f"pad: pad_width {pad_width!r} does not fit {x.aval} (give an int, a "
                         f"(before, after) pair, or one pair per axis)") from None
    if (widths < 0).any():
        raise ShapeError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    return [(int(a), int(b)) for a, b in widths.tolist()]


def _pairs(value, ndim: int, what: str, mode: str, as_index: bool):
    """A scalar, a pair or one pair per axis, as np.pad's `_as_pairs`: (one (before, after) per
    axis, the values' NumPy dtype). Index pairs (stat_length) are rounded to non-negative ints, or
    None (the whole axis)."""
    if value is None:
        return [(None, None)] * ndim, None
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise DTypeError(f"pad: mode={mode!r} needs numeric {what}, got {value!r}")
    if as_index:
        a = np.round(a).astype(np.int64)
        if (a < 0).any():
            raise ShapeError(f"pad: mode={mode!r} needs non-negative {what}, got {value!r}")
    try:
        pairs = np.broadcast_to(a, (ndim, 2))
    except ValueError:
        raise ShapeError(f"pad: {what} {value!r} does not fit {ndim} axes (give a scalar, a "
                         f"(before, after) pair, or one pair per axis)") from None
    return [(pairs[i, 0].item(), pairs[i, 1].item()) for i in range(ndim)], a.dtype


def _axis_slice(x: Array, axis: int, start: int, stop: int) -> Array:
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _along(values: Array, axis: int, ndim: int) -> Array:
    """A 1-d array laid along `axis` of an ndim-d array (size 1 on the other axes)."""
    return mv.reshape(values, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _stat(chunk: Array, mode: str, axis: int, dtype: dt.DType) -> Array:
    """np.pad's statistic of one end region, kept as a size-1 axis; integer arrays round a mean or
    median half to even before it is stored, as NumPy's `_round_if_needed` does."""
    if mode == "maximum":
        return red.max(chunk, axis=axis, keepdims=True)
    if mode == "minimum":
        return red.min(chunk, axis=axis, keepdims=True)
    if mode == "mean":
        s = red.mean(chunk, axis=axis, keepdims=True)
    else:
        from poot.trace.numpy_stats import median

        s = median(chunk, axis=axis, keepdims=True)
    if dtype.kind in "iu":
        s = ew.rint(s)
    return s.astype(dtype)


def _pad_stat_axis(x: Array, axis: int, widths, lengths, mode: str) -> Array:
    lo, hi = widths
    n = x.shape[axis]
    left_len = n if lengths[0] is None or lengths[0] > n else int(lengths[0])
    right_len = n if lengths[1] is None or lengths[1] > n else int(lengths[1])
    if 0 in (left_len, right_len):
        if mode in ("maximum", "minimum"):
            raise ShapeError(f"pad: stat_length of 0 yields no value for mode={mode!r} (axis {axis})")
        if x.dtype.kind != "f":
            raise DTypeError(f"pad: stat_length of 0 makes the {mode} of axis {axis} NaN, which "
                             f"{x.dtype.name} cannot hold")
    parts = []
    left = _stat(_axis_slice(x, axis, 0, left_len), mode, axis, x.dtype)
    right = left if left_len == right_len == n else \
        _stat(_axis_slice(x, axis, n - right_len, n), mode, axis, x.dtype)
    if lo:
        parts.append(mv.broadcast_to(left, x.shape[:axis] + (lo,) + x.shape[axis + 1:]))
    parts.append(x)
    if hi:
        parts.append(mv.broadcast_to(right, x.shape[:axis] + (hi,) + x.shape[axis + 1:]))
    return mv.concatenate(parts, axis=axis)


def _ramp(edge: Array, end, width: int, axis: int, ndim: int, compute: dt.DType, dtype: dt.DType):
    """np.linspace(end, edge, width, endpoint=False, dtype=dtype, axis=axis), computed the way NumPy
    computes it: in `compute`, as k * step + end, or as k / width * delta + end when some step is 0
    (NumPy chooses one form for the whole array), floored for integer dtypes. For an integer dtype
    and an integral end the floor is taken before adding the end (the same value, exactly): a fused
    kernel may contract `k * step + end` into one FMA, whose unrounded product can floor one lower
    than NumPy's rounded one."""
    start = np.asarray(end, dtype=compute.np).item()
    delta = ew.subtract(edge.astype(compute), start)
    k = _along(arange(width, dtype=compute), axis, ndim)
    step = ew.divide(delta, float(width))
    offset = _where(red.any(ew.equal(step, 0)), ew.multiply(ew.divide(k, float(width)), delta),
                    ew.multiply(k, step))
    if dtype.kind in "iu" and float(start).is_integer():
        y = ew.add(ew.floor(offset), start)
    else:
        y = ew.add(offset, start)
        if dtype.kind in "iu":
            y = ew.floor(y)
    return y.astype(dtype)


def _pad_ramp_axis(x: Array, axis: int, widths, ends, compute: dt.DType) -> Array:
    lo, hi = widths
    n = x.shape[axis]
    parts = []
    if lo:
        edge = _axis_slice(x, axis, 0, 1)
        parts.append(_ramp(edge, ends[0], lo, axis, x.ndim, compute, x.dtype))
    parts.append(x)
    if hi:
        edge = _axis_slice(x, axis, n - 1, n)
        ramp = _ramp(edge, ends[1], hi, axis, x.ndim, compute, x.dtype)
        parts.append(mv.flip(ramp, axis=axis))
    return mv.concatenate(parts, axis=axis)


def pad_values(x: Array, pad_width, mode: str, **kwargs) -> Array:
    """np.pad(x, pad_width, mode, **kwargs) for the modes in VALUE_MODES (lazy)."""
    extra = set(kwargs) - _ALLOWED_KWARGS[mode]
    if extra:
        raise ShapeError(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(extra)}")
    widths = pad_widths(x, pad_width)
    if mode == "empty":
        return mv.pad(x, widths)
    for ax, (lo, hi) in enumerate(widths):
        if x.shape[ax] == 0 and (lo or hi):
            raise ShapeError(f"pad: can't extend empty axis {ax} using modes other than 'constant' "
                             f"or 'empty'")
    out = x
    if mode == "linear_ramp":
        ends, end_dtype = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values", mode, False)
        compute = dt.as_dtype(np.result_type(end_dtype, x.dtype.np))
        if compute.kind != "f":
            compute = dt.float64
        for ax, pair in enumerate(widths):
            if pair != (0, 0):
                out = _pad_ramp_axis(out, ax, pair, ends[ax], compute)
        return out
    lengths, _ = _pairs(kwargs.get("stat_length"), x.ndim, "stat_length", mode, True)
    for ax, pair in enumerate(widths):
        if pair != (0, 0):
            out = _pad_stat_axis(out, ax, pair, lengths[ax], mode)
    return out
