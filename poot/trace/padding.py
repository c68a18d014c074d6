"""np.pad's value modes: 'linear_ramp' (end_values) and the statistic modes 'mean', 'median',
'maximum', 'minimum' (stat_length), plus 'empty' (which poot fills with zeros: its values are
unspecified in NumPy too). The constant mode is `movement.pad`; the index modes (edge, reflect,
symmetric, wrap) are one gather per axis in `pad_gather` (reflect_type='odd': `pad_odd_axis`).

Why axis by axis: NumPy pads axis 0 first, then axis 1 with statistics (or ramp edges) taken over the
rows already padded along axis 0, and so on; doing the same here (each axis's pad computed from the
array padded so far) gives NumPy's values in the corners too. Everything is recorded lazily from
slices, reductions and concatenations, so the modes also run inside @pt.jit.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, NotBuiltError, ShapeError, ShapeTypeError
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


def _widths_of_dict(x: Array, pad_width: dict) -> list:
    """NumPy 2.3's {axis: width} form: the axes named (negative ones count from the end) get their
    width (an int or a (before, after) pair), the others none."""
    rows = [(0, 0)] * x.ndim
    for axis, width in pad_width.items():
        ax = mv.axis_of(axis, x.ndim, "pad", x)
        pair = np.broadcast_to(np.asarray(width), (2,))        # pad_widths checks the dtype
        rows[ax] = (pair[0].item(), pair[1].item())
    return rows


def pad_widths(x: Array, pad_width) -> list[tuple[int, int]]:
    """pad_width as one (before, after) pair of non-negative ints per axis, as np.pad reads it."""
    try:
        if isinstance(pad_width, dict):
            pad_width = _widths_of_dict(x, pad_width)
        given = np.asarray(pad_width)
        if given.dtype.kind not in "iu" and given.size:     # NumPy: a float width is a TypeError,
            raise ShapeTypeError(f"pad: pad_width must be of integral type, got {pad_width!r}")
        widths = np.broadcast_to(given.astype(np.int64), (x.ndim, 2))   # never truncated
    except (ValueError, TypeError) as e:
        if isinstance(e, ShapeTypeError):
            raise
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


def pad_constant_pairs(x: Array, widths, constant_values) -> Array:
    """np.pad's constant mode with a value per axis and side (constant_values given as pairs): axis
    by axis, each side its own value, later axes writing the corners (NumPy's order)."""
    values, _ = _pairs(constant_values, x.ndim, "constant_values", "constant", False)
    out = x
    for ax, ((lo, hi), (before, after)) in enumerate(zip(widths, values)):
        for side, value in (((lo, 0), before), ((0, hi), after)):
            if side != (0, 0):
                out = mv.pad(out, [side if k == ax else (0, 0) for k in range(x.ndim)],
                             constant_values=value)
    return out


def pad_odd_axis(x: Array, axis: int, widths, mode: str) -> Array:
    """np.pad's reflect_type='odd' along one axis ('reflect' or 'symmetric'): each padded value is
    2 * edge - mirrored value, repeated for widths beyond the axis, so every output row is an integer
    combination of a few input rows. The combinations are np.pad applied to the identity matrix;
    the rows are gathered and combined (a term with coefficient 0 is left out, so inf stays inf)."""
    from poot.trace.indexing import take

    if x.dtype is dt.bool_:
        raise DTypeError("pad: reflect_type='odd' needs numbers (2 * edge - value), got bool")
    n = x.shape[axis]
    lo, hi = widths
    combo = np.pad(np.eye(n, dtype=np.int64), ((lo, hi), (0, 0)), mode=mode, reflect_type="odd")
    terms = max(int(np.count_nonzero(combo, axis=1).max()), 1)
    cols = np.argsort(combo == 0, axis=1, kind="stable")[:, :terms]     # nonzero columns first
    coefs = np.take_along_axis(combo, cols, axis=1)
    bcast = tuple(-1 if k == axis else 1 for k in range(x.ndim))
    out = None
    for t in range(terms):
        c = np.reshape(coefs[:, t], bcast)
        term = ew.multiply(take(x, cols[:, t], axis=axis), c.astype(x.dtype.np))
        term = _where(np.asarray(c != 0), term, np.zeros((), x.dtype.np))
        out = term if out is None else ew.add(out, term)
    return out.astype(x.dtype)


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


# --- pad modes -----------------------------------------------------------------------------------
_PAD_GATHER = ("edge", "reflect", "symmetric", "wrap")


def pad_gather(x: Array, pad_width, mode, **kwargs):
    """np.pad's index modes as one gather per padded axis: the indices are np.pad applied to
    arange(n) (so widths beyond the axis repeat the pattern exactly as NumPy does)."""
    if mode in VALUE_MODES:
        return pad_values(x, pad_width, mode, **kwargs)
    if callable(mode):
        raise NotBuiltError("pad: a function as mode is not built (it would run per 1-d slice in "
                            "Python); use one of NumPy's named modes")
    if mode not in _PAD_GATHER:
        raise ShapeError(f"pad: mode={mode!r} is not a padding mode; NumPy's are 'constant', 'edge', "
                         f"'linear_ramp', 'maximum', 'mean', 'median', 'minimum', 'reflect', "
                         f"'symmetric', 'wrap' and 'empty'")
    odd = kwargs.get("reflect_type", "even")
    if odd not in ("even", "odd"):
        raise ShapeError(f"pad: reflect_type must be 'even' or 'odd', got {odd!r}")
    if "reflect_type" in kwargs and mode not in ("reflect", "symmetric"):
        raise ShapeError(f"pad: mode={mode!r} takes no argument reflect_type (only 'reflect' and "
                         f"'symmetric' do)")
    odd = odd == "odd"
    extra = set(kwargs) - {"reflect_type"}
    if extra:
        raise ShapeError(f"pad: mode={mode!r} takes no arguments {sorted(extra)}")
    from poot.trace.indexing import take

    out = x
    for ax, (lo, hi) in enumerate(pad_widths(x, pad_width)):
        if lo == 0 and hi == 0:
            continue
        n = x.shape[ax]
        if n == 0:
            raise ShapeError(f"pad: can't extend empty axis {ax} using modes other than 'constant' "
                             f"or 'empty'")
        if odd:
            out = pad_odd_axis(out, ax, (lo, hi), mode)
            continue
        idx = np.pad(np.arange(n, dtype=np.int64), (lo, hi), mode=mode, **kwargs)
        out = take(out, idx, axis=ax)
    return out
