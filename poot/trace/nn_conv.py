"""`pt.nn` convolution and pooling, with torch.nn.functional's semantics: inputs (N, C, L) or
(N, C, H, W) (or without the batch axis), weights (out, in / groups, kL) or (out, in / groups, kH, kW).

Everything is composed from lazy ops, so it fuses, runs inside @pt.jit and differentiates through
pt.grad with no rule of its own. Each spatial axis of the padded input is gathered into windows by a
`take` whose (positions, kernel) index table is start + i * stride + j * dilation built from two lazy
iotas (as numpy_signals.window_index: no host table). Convolution is then one contraction (im2col):
a single einsum over (in-channels, kernel offsets), which the planner claims as one matmul. Measured
on the CPU for x (8, 16, 32, 32), w (32, 16, 3, 3): 5 plan steps and about the time of the sum over
the 9 kernel offsets of shifted-slice matmuls, which takes 21 steps. Pooling reduces the windows
with max or sum.
"""
from __future__ import annotations

import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, NotBuiltError, ShapeError, api_boundary
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.indexing import take
from poot.trace.lazy import constant, record
from poot.trace.linalg import einsum
from poot.trace.movement import arr
from poot.trace.promote import float_of

__all__ = ["conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d"]


# --- arguments -----------------------------------------------------------------------------------
def _as_int(v) -> int | None:
    """`v` as an int (anything with __index__ but a bool), or None."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _ints(value, n: int, op: str, name: str, least: int) -> tuple[int, ...]:
    """`value` (an int, or a tuple of n ints) as n ints, each >= least; ArgumentError naming it."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    if len(items) != n:
        raise ArgumentError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
    out = []
    for v in items:
        v = _as_int(v)
        if v is None:
            raise ArgumentError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
        if v < least:
            what = "positive" if least == 1 else "0 or more"
            raise ArgumentError(f"{op}: {name} must be {what}, got {value!r}")
        out.append(v)
    return tuple(out)


def _batched(x: Array, n: int, op: str) -> tuple[Array, bool]:
    """x with a batch axis (PyTorch takes (C, *spatial) as one unbatched sample), and whether it had one."""
    if x.ndim == n + 2:
        return x, True
    if x.ndim == n + 1:
        return mv.expand_dims(x, 0), False
    names = "(N, C, L) or (C, L)" if n == 1 else "(N, C, H, W) or (C, H, W)"
    raise ShapeError(f"{op}: input must be {n + 2}-D or {n + 1}-D {names}, got {x.ndim}-D {x.aval}")


def _window_table(count: int, width: int, stride: int, dilation: int, device) -> Array:
    """The (count, width) int64 table i * stride + j * dilation, from two lazy iotas."""
    shape = (count, width)
    rows = record("iota", (), {"shape": shape, "axis": 0, "dtype": dt.int64}, device)
    cols = record("iota", (), {"shape": shape, "axis": 1, "dtype": dt.int64}, device)
    if stride != 1:
        rows = record("mul", (rows, constant(stride, dt.int64, device)))
    if dilation != 1:
        cols = record("mul", (cols, constant(dilation, dt.int64, device)))
    return Array(record("add", (rows, cols)))


def _windows(xp: Array, kernel, stride, dilation, out_sizes) -> Array:
    """(N, C, *padded) -> (N, C, o1, k1[, o2, k2]): each spatial axis gathered into its windows."""
    device = xp._node.device
    out = xp
    for i, (k, s, d, o) in enumerate(zip(kernel, stride, dilation, out_sizes)):
        ax = 2 + 2 * i
        if k == 1 and s == 1 and o == out.shape[ax]:       # nothing to gather: a unit window axis
            out = mv.expand_dims(out, ax + 1)
        else:
            out = take(out, _window_table(o, k, s, d, device), axis=ax)
    return out


def _out_sizes(op, spatial, pads, kernel, stride, dilation, name="weight"):
    sizes = []
    for n, (lo, hi), k, s, d in zip(spatial, pads, kernel, stride, dilation):
        span = d * (k - 1) + 1
        if n + lo + hi < span:
            raise ShapeError(f"{op}: the {name} window (size {k}, dilation {d}: {span} elements) is larger "
                             f"than the padded input ({n} + padding {lo + hi} = {n + lo + hi}) along a "
                             f"spatial axis; pad more or use a smaller kernel")
        sizes.append((n + lo + hi - span) // s + 1)
    return tuple(sizes)


# --- convolution ---------------------------------------------------------------------------------
def _conv(op, n, x, weight, bias, stride, padding, dilation, groups):
    x = arr(x, op, (weight, bias))
    w = arr(weight, op, (x, bias))
    x, batched = _batched(x, n, op)
    if w.ndim != n + 2:
        raise ShapeError(f"{op}: weight must be {n + 2}-D (out_channels, in_channels / groups, "
                         f"{'kL' if n == 1 else 'kH, kW'}), got {w.ndim}-D {w.aval}")
    g = _as_int(groups)
    if g is None or g < 1:
        raise ArgumentError(f"{op}: groups must be a positive int, got {groups!r}")
    cin, cout = x.shape[1], w.shape[0]
    if cin % g:
        raise ShapeError(f"{op}: groups={g} must divide the input's {cin} channels ({x.aval})")
    if cout % g:
        raise ShapeError(f"{op}: groups={g} must divide weight's {cout} out_channels ({w.aval})")
    if w.shape[1] * g != cin:
        raise ShapeError(f"{op}: input has {cin} channels but weight {w.aval} with groups={g} expects "
                         f"{w.shape[1] * g} (weight.shape[1] * groups)")
    kernel = tuple(w.shape[2:])
    stride = _ints(stride, n, op, "stride", 1)
    dilation = _ints(dilation, n, op, "dilation", 1)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ArgumentError(f"{op}: padding='same' is not supported for strided convolutions "
                                    f"(stride={stride}); pass explicit padding")
            pads = tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
        else:
            raise ArgumentError(f"{op}: padding must be 'valid', 'same', an int or a tuple of {n} ints, "
                                f"got {padding!r}")
    else:
        pads = tuple((p, p) for p in _ints(padding, n, op, "padding", 0))
    if any(k == 0 for k in kernel):
        raise ShapeError(f"{op}: weight {w.aval} has an empty kernel")
    out_sizes = _out_sizes(op, x.shape[2:], pads, kernel, stride, dilation)
    b = None
    if bias is not None:
        b = arr(bias, op, (x, w))
        if b.shape != (cout,):
            raise ShapeError(f"{op}: bias must have shape ({cout},) (weight's out_channels), got {b.aval}")

    types = [x.dtype, w.dtype] + ([b.dtype] if b is not None else [])
    d = float_of(dt.result_type(*types))
    work = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    x, w = x.astype(work), w.astype(work)
    if any(lo or hi for lo, hi in pads):
        x = mv.pad(x, ((0, 0), (0, 0)) + pads)
    cols = _windows(x, kernel, stride, dilation, out_sizes)        # N, C, o1, k1[, o2, k2]
    N = cols.shape[0]
    cols = cols.reshape((N, g, cin // g) + cols.shape[2:])
    wg = w.reshape((g, cout // g) + w.shape[1:])
    if n == 1:
        y = einsum("ngcpk,gock->ngop", cols, wg)
    else:
        y = einsum("ngcpkql,gockl->ngopq", cols, wg)
    y = y.reshape((N, cout) + out_sizes)
    if b is not None:
        y = y + b.astype(work).reshape((cout,) + (1,) * n)
    if not batched:
        y = y.reshape(y.shape[1:])
    return y.astype(d)


@api_boundary
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d: input (N, C_in, L) (or (C_in, L)), weight (C_out, C_in / groups,
    kL), bias (C_out,) -> (N, C_out, L_out). padding is an int, a 1-tuple, 'valid' or 'same' (stride 1
    only; an odd total goes on the right, as PyTorch). A cross-correlation, like PyTorch's."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@api_boundary
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d: input (N, C_in, H, W) (or (C_in, H, W)), weight (C_out,
    C_in / groups, kH, kW), bias (C_out,) -> (N, C_out, H_out, W_out). stride, padding and dilation
    are ints or pairs; padding may be 'valid' or 'same' (stride 1 only). Lazy gathers of the windows
    and one einsum: fused, jittable, differentiable."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# --- pooling -------------------------------------------------------------------------------------
def _pool_args(op, n, x, kernel_size, stride, padding, dilation):
    x = arr(x, op)
    x, batched = _batched(x, n, op)
    kernel = _ints(kernel_size, n, op, "kernel_size", 1)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else _ints(stride, n, op, "stride", 1)
    pad = _ints(padding, n, op, "padding", 0)
    dil = _ints(dilation, n, op, "dilation", 1)
    for p, k, d in zip(pad, kernel, dil):
        if 2 * p > d * (k - 1) + 1:
            raise ArgumentError(f"{op}: padding {padding!r} must be at most half of the kernel size "
                                f"{kernel_size!r} (PyTorch's rule: a window must hold an input element)")
    pads = tuple((p, p) for p in pad)
    out_sizes = _out_sizes(op, x.shape[2:], pads, kernel, stride, dil, name="kernel_size")
    return x, batched, kernel, stride, pads, dil, out_sizes


def _unbatch(y, batched):
    return y if batched else y.reshape(y.shape[1:])


def _max_pool(op, n, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if ceil_mode or return_indices:
        raise ArgumentError(f"{op}: ceil_mode=True and return_indices=True are not supported")
    x, batched, kernel, stride, pads, dil, out_sizes = _pool_args(op, n, x, kernel_size, stride, padding,
                                                                  dilation)
    if any(p for p, _ in pads):
        if x.dtype.kind == "f":
            low = float("-inf")
        elif x.dtype.kind == "b":
            low = False
        else:
            low = int(dt.iinfo(x.dtype).min)
        x = mv.pad(x, ((0, 0), (0, 0)) + pads, constant_values=low)
    win = _windows(x, kernel, stride, dil, out_sizes)               # N, C, o1, k1[, o2, k2]
    return _unbatch(red.max(win, axis=tuple(range(3, 3 + 2 * n, 2))), batched)


def _avg_pool(op, n, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if ceil_mode:
        raise ArgumentError(f"{op}: ceil_mode=True is not supported")
    x, batched, kernel, stride, pads, dil, out_sizes = _pool_args(op, n, x, kernel_size, stride, padding, 1)
    d = float_of(x.dtype)
    work = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    x = x.astype(work)
    if any(p for p, _ in pads):
        x = mv.pad(x, ((0, 0), (0, 0)) + pads)
    win = _windows(x, kernel, stride, dil, out_sizes)
    total = red.sum(win, axis=tuple(range(3, 3 + 2 * n, 2)))       # N, C, *out
    if divisor_override is not None:
        div = _ints(divisor_override, 1, op, "divisor_override", 1)[0]
        return _unbatch((total / div).astype(d), batched)
    if count_include_pad or not any(p for p, _ in pads):
        count = 1
        for k in kernel:
            count *= k
        return _unbatch((total / count).astype(d), batched)
    # the number of real (unpadded) elements in each window: per axis a gather of a padded ones
    # vector, summed over the window, then their outer product (tiny, lazy)
    from poot.trace.creation import ones

    device = x._node.device
    count = None
    for i, ((lo, hi), k, s, o) in enumerate(zip(pads, kernel, stride, out_sizes)):
        real = mv.pad(ones((x.shape[2 + i] - lo - hi,), dtype=work, device=x.device), (lo, hi))
        c = red.sum(take(real, _window_table(o, k, s, 1, device)), axis=1)
        count = c if count is None else count[:, None] * c
    return _unbatch((total / count).astype(d), batched)


@api_boundary
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool1d over (N, C, L) or (C, L); stride defaults to kernel_size, the
    padding is -inf (the dtype's lowest value for integers)."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@api_boundary
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool2d over (N, C, H, W) or (C, H, W); stride defaults to kernel_size,
    the padding is -inf (the dtype's lowest value for integers)."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@api_boundary
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """torch.nn.functional.avg_pool1d over (N, C, L) or (C, L); the zero padding counts in the mean
    unless count_include_pad=False."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@api_boundary
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch.nn.functional.avg_pool2d over (N, C, H, W) or (C, H, W); the zero padding counts in the
    mean unless count_include_pad=False; divisor_override replaces the divisor."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# --- jax.lax's general convolution (pt.lax.conv_general_dilated, conv, conv_with_general_padding) --
def _spec_perm(spec: str, pair: str, rhs_spec: str) -> tuple[int, ...]:
    """The axes of `spec` in (pair[0], pair[1], *spatial) order, the spatial ones ordered as the
    kernel's spec names them (JAX's conv_general_permutations; for the kernel itself, its order)."""
    spatial = sorted((i for i, c in enumerate(spec) if c not in pair), key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)


def _dimension_numbers(dimension_numbers, ndim: int, op: str):
    """(lhs, rhs, out) axis permutations to and from N C spatial / O I spatial."""
    if dimension_numbers is None:
        ident = tuple(range(ndim))
        return ident, ident, ident
    try:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
    except (TypeError, ValueError):
        raise ArgumentError(f"{op}: dimension_numbers must be None or three spec strings such as "
                            f"('NHWC', 'HWIO', 'NHWC'), got {dimension_numbers!r}") from None
    if not all(isinstance(s, str) for s in (lhs_spec, rhs_spec, out_spec)):
        raise NotBuiltError(f"{op}: dimension_numbers as a ConvDimensionNumbers of axis tuples is not "
                            f"built; pass spec strings such as ('NHWC', 'HWIO', 'NHWC')")
    for spec, pair in ((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC")):
        if len(spec) != ndim or len(set(spec)) != ndim or not set(pair) <= set(spec):
            raise ShapeError(f"{op}: dimension spec {spec!r} must name {ndim} distinct axes including "
                             f"{pair[0]!r} and {pair[1]!r}")
    spatial = set(rhs_spec) - set("OI")
    if set(lhs_spec) - set("NC") != spatial or set(out_spec) - set("NC") != spatial:
        raise ShapeError(f"{op}: the spatial axes of {dimension_numbers!r} do not match")
    return (_spec_perm(lhs_spec, "NC", rhs_spec), _spec_perm(rhs_spec, "OI", rhs_spec),
            _spec_perm(out_spec, "NC", rhs_spec))


def _dilate(x: Array, axis: int, d: int) -> Array:
    """x with d - 1 zeros between neighbours along `axis` (JAX's lhs_dilation)."""
    n = x.shape[axis]
    if d == 1 or n == 0:
        return x
    y = mv.expand_dims(x, axis + 1)
    y = mv.pad(y, tuple((0, d - 1) if i == axis + 1 else (0, 0) for i in range(y.ndim)))
    y = y.reshape(x.shape[:axis] + (n * d,) + x.shape[axis + 1:])
    return y[(slice(None),) * axis + (slice(0, (n - 1) * d + 1),)]


def _lax_pads(op: str, padding, sizes, strides, spans) -> tuple[tuple[int, int], ...]:
    """jax.lax's padding for windows of `spans` elements: 'VALID', 'SAME' / 'SAME_LOWER' (the output
    is ceil(size / stride); an odd total pads one more after / before), or (low, high) pairs."""
    n = len(sizes)
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return ((0, 0),) * n
        if kind not in ("SAME", "SAME_LOWER"):
            raise ArgumentError(f"{op}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
                                f"(low, high) pairs, got {padding!r}")
        totals = [max((-(-s // st) - 1) * st + k - s, 0) for s, st, k in zip(sizes, strides, spans)]
        return tuple((t // 2, t - t // 2) if kind == "SAME" else (t - t // 2, t // 2) for t in totals)
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ArgumentError(f"{op}: padding must be a string or a sequence of {n} (low, high) pairs, "
                            f"got {padding!r}") from None
    if len(pads) != n:
        raise ShapeError(f"{op}: padding needs {n} (low, high) pairs, got {padding!r}")
    return pads


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """jax.lax.conv_general_dilated for 1 or 2 spatial axes: a cross-correlation of lhs (N C spatial
    by default) with rhs (O I spatial), window_strides, padding 'VALID', 'SAME', 'SAME_LOWER' or
    (low, high) pairs (negative ones crop), lhs_dilation (zeros between input elements: a transposed
    convolution), rhs_dilation, spec-string dimension_numbers and feature_group_count, computed by
    the conv2d path above (lazy, fused, differentiable). `precision` is accepted and unused."""
    op = "conv_general_dilated"
    x, w = arr(lhs, op, (rhs,)), arr(rhs, op, (lhs,))
    if x.ndim != w.ndim or x.ndim not in (3, 4):
        if x.ndim == w.ndim and x.ndim > 4:
            raise NotBuiltError(f"{op}: {x.ndim - 2} spatial axes are not built (1 or 2 are)")
        raise ShapeError(f"{op}: lhs {x.aval} and rhs {w.aval} must have the same rank, 3 or 4 "
                         f"(batch, feature and 1 or 2 spatial axes)")
    if batch_group_count != 1:
        raise NotBuiltError(f"{op}: batch_group_count={batch_group_count!r} is not built (1 is)")
    n = x.ndim - 2
    lp, rp, outp = _dimension_numbers(dimension_numbers, x.ndim, op)
    x, w = mv.permute_dims(x, lp), mv.permute_dims(w, rp)
    strides = _ints(tuple(window_strides), n, op, "window_strides", 1)
    lhs_d = _ints(tuple(lhs_dilation), n, op, "lhs_dilation", 1) if lhs_dilation is not None else (1,) * n
    rhs_d = _ints(tuple(rhs_dilation), n, op, "rhs_dilation", 1) if rhs_dilation is not None else (1,) * n
    for i, d in enumerate(lhs_d):
        x = _dilate(x, 2 + i, d)
    spatial = x.shape[2:]
    window = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[2:], rhs_d))
    if isinstance(padding, str) and any(d != 1 for d in lhs_d):
        raise ArgumentError(f"{op}: string padding is not built for a transposed convolution "
                            f"(lhs_dilation={lhs_d}), as in JAX; give the (low, high) pairs")
    pads = _lax_pads(op, padding, spatial, strides, window)
    crop = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for (lo, hi), s in zip(pads, spatial))
    x = x[(slice(None), slice(None)) + crop]
    grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if any(lo or hi for lo, hi in grow):
        x = mv.pad(x, ((0, 0), (0, 0)) + grow)
    d = dt.result_type(x.dtype, w.dtype)
    y = _conv(op, n, x, w, None, strides, 0, rhs_d, feature_group_count)
    y = y.astype(d if preferred_element_type is None else dt.as_dtype(preferred_element_type))
    return mv.permute_dims(y, tuple(int(i) for i in np.argsort(outp)))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window for a computation poot knows (lax.add / max / min / mul, or their poot
    and NumPy-style spellings): each window (strides, dilation, padding 'VALID', 'SAME', 'SAME_LOWER'
    or (low, high) pairs, whose elements take no part) reduced, then combined with init_value, as
    JAX computes it. Lazy: one gather per axis and a reduction, as the pooling above."""
    from poot.trace import elementwise as ew

    op = "reduce_window"
    x = arr(operand, op)
    name = getattr(computation, "__name__", "")
    reducers = {"add": red.sum, "max": red.max, "maximum": red.max, "min": red.min, "minimum": red.min,
                "mul": red.prod, "multiply": red.prod}
    combine = {"add": ew.add, "max": ew.maximum, "maximum": ew.maximum, "min": ew.minimum,
               "minimum": ew.minimum, "mul": ew.multiply, "multiply": ew.multiply}
    if name not in reducers:
        raise NotBuiltError(f"{op}: computation {computation!r} is not built; pass lax.add, lax.max, "
                            f"lax.min or lax.mul")
    n = x.ndim
    window = _ints(tuple(window_dimensions), n, op, "window_dimensions", 1)
    ones = (1,) * n
    strides = ones if window_strides is None else _ints(tuple(window_strides), n, op, "window_strides", 1)
    dilation = ones if window_dilation is None else _ints(tuple(window_dilation), n, op, "window_dilation", 1)
    if base_dilation is not None and _ints(tuple(base_dilation), n, op, "base_dilation", 1) != ones:
        raise NotBuiltError(f"{op}: base_dilation={base_dilation!r} is not built (ones are)")
    span = tuple(d * (k - 1) + 1 for k, d in zip(window, dilation))
    pads = _lax_pads(op, padding, x.shape, strides, span)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise NotBuiltError(f"{op}: negative padding is not built, got {padding!r}")
    init = init_value.astype(x.dtype) if isinstance(init_value, Array) else init_value
    if any(lo or hi for lo, hi in pads):     # padding takes no part (the reduction's identity), as JAX's
        kind = x.dtype.kind
        big = float("inf") if kind in "fc" else (dt.iinfo(x.dtype).max if kind in "iu" else True)
        small = -big if kind in "fc" else (dt.iinfo(x.dtype).min if kind in "iu" else False)
        identity = {"add": 0, "mul": 1, "multiply": 1, "max": small, "maximum": small, "min": big,
                    "minimum": big}[name]
        x = mv.pad(x, pads, constant_values=identity)
    out_sizes = _out_sizes(op, x.shape, ((0, 0),) * n, window, strides, dilation, name="window")
    device = x._node.device
    for i, (k, s, d, o) in enumerate(zip(window, strides, dilation, out_sizes)):
        x = take(x, _window_table(o, k, s, d, device), axis=2 * i)     # (..., o_i, k_i, ...)
    r = reducers[name](x, axis=tuple(2 * i + 1 for i in range(n))).astype(x.dtype)   # in x's dtype, as JAX
    return combine[name](r, init).astype(x.dtype)
