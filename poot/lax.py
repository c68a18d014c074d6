"""`pt.lax`: JAX's `jax.lax` names over poot's functions, so code written against `jax.lax` runs with
`import poot as pt; lax = pt.lax`.

Only names whose JAX meaning poot gives are here: control flow (`cond`, `switch`, `fori_loop`,
`while_loop`, `scan`, `map`, `select_n`), slicing (`dynamic_slice`, `dynamic_update_slice` and their
`_in_dim` forms, the static `slice`, `slice_in_dim`, `index_in_dim`, `top_k`), `round` (ties away
from zero unless told otherwise), `stop_gradient`, convolution (`conv_general_dilated`, `conv`,
`conv_with_general_padding`: 1 or 2 spatial axes), `sort` (several operands, `num_keys`), `pad`
(interior and negative padding), `gather` (XLA's, with its dimension numbers), `full`, `full_like`,
the special functions `lgamma`, `digamma`, `erf_inv`, windowed and running reductions (`reduce_window`,
`cumsum`, `cummax`...), elementwise and shape functions that are poot functions under lax's name
and argument order (`lax.clamp(min, x, max)`, `lax.div` truncating integers toward zero,
`lax.rem` keeping the dividend's sign), complex numbers from and to their parts (`complex`, `real`,
`imag`, `conj`), and the collectives over a named `pt.vmap` axis (`psum`,
`pmean`, `pmax`, `pmin`, `axis_index`, `axis_size`, `all_gather`). Anything else raises an
AttributeError saying so (no silent fallback to a NumPy-style function with other semantics).
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

import poot.trace as _t
from poot import dtypes as _dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.graph import normalize_axis as _normalize_axis
from poot.lax_arrays import (GatherDimensionNumbers, GatherScatterMode, full, full_like, gather, pad, sort,
                             sort_key_val)
from poot.lax_numbers import (RoundingMethod, complex, conj, digamma, erf_inv, imag, lgamma, real,
                              round)
from poot.trace import nn as _nn
from poot.trace import nn_conv as _nn_conv
from poot.trace.array import Array
from poot.trace.control import branch as _branch
from poot.trace.movement import arr as _arr
from poot.transforms import scan, stop_gradient
from poot.transforms.collectives import all_gather, axis_index, axis_size, pmax, pmean, pmin, psum

# control flow
cond, while_loop = _t.cond, _t.while_loop
dynamic_slice, top_k = _t.dynamic_slice, _t.top_k

# elementwise functions that are poot's own under lax's names
add, sub, mul, neg, max, min, abs, pow = (_t.add, _t.subtract, _t.multiply, _t.negative, _t.maximum,  # noqa: A001
                                          _t.minimum, _t.abs, _t.power)
exp, exp2, log, log1p, expm1, sqrt, cbrt, tanh = _t.exp, _t.exp2, _t.log, _t.log1p, _t.expm1, _t.sqrt, _t.cbrt, _t.tanh
sin, cos, tan, sinh, cosh = _t.sin, _t.cos, _t.tan, _t.sinh, _t.cosh
asin, acos, atan, asinh, acosh, atanh = _t.arcsin, _t.arccos, _t.arctan, _t.arcsinh, _t.arccosh, _t.arctanh
atan2, erf, sign, floor, ceil, square, nextafter = _t.arctan2, _t.erf, _t.sign, _t.floor, _t.ceil, _t.square, \
    _t.nextafter
is_finite, rem = _t.isfinite, _t.fmod
logistic = _nn.sigmoid
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = _t.bitwise_and, _t.bitwise_or, _t.bitwise_xor, _t.bitwise_not
eq, ne, lt, le, gt, ge = _t.equal, _t.not_equal, _t.less, _t.less_equal, _t.greater, _t.greater_equal
shift_left = _t.left_shift
transpose = _t.transpose
concatenate = _t.concatenate

__all__ = ["cond", "switch", "fori_loop", "while_loop", "scan", "map", "stop_gradient", "select",
           "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "top_k",
           "add", "sub", "mul", "div", "rem", "neg", "max", "min", "abs", "pow", "integer_pow", "exp", "exp2",
           "log", "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan", "sinh",
           "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "erf", "sign", "floor", "ceil",
           "square", "nextafter", "is_finite", "clamp", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "complex", "real", "imag", "conj", "eq", "ne", "lt", "le", "gt", "ge", "shift_left",
           "transpose", "concatenate",
           "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "rev", "iota", "convert_element_type",
           "bitcast_convert_type", "dot_general", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
           "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "associative_scan",
           "conv_general_dilated", "conv", "conv_with_general_padding", "reduce_window", "sort_key_val",
           "psum", "pmean", "pmax", "pmin", "axis_index", "axis_size", "all_gather",
           "select_n", "slice", "slice_in_dim", "index_in_dim", "round", "RoundingMethod",
           "sort", "pad", "full", "full_like", "lgamma", "digamma", "erf_inv", "gather",
           "GatherDimensionNumbers", "GatherScatterMode"]


@api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`pt.fori_loop`; `unroll` is accepted and ignored (the loop runs on the device either way)."""
    return _t.fori_loop(lower, upper, body_fun, init_val)


@api_boundary
def switch(index, branches, *operands):
    """branches[index](*operands), with index clamped to [0, len(branches) - 1] as jax.lax.switch does.
    A traced index becomes a tree of `pt.cond`s (one branch runs; under pt.vmap every branch)."""
    if callable(branches) or not hasattr(branches, "__iter__"):
        raise ArgumentError(f"switch: branches must be a sequence of functions (one per index); got "
                            f"{type(branches).__name__} {branches!r:.60}")
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise ArgumentError("switch: branches must be a non-empty sequence of functions")
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        return branches[int(np.clip(index, 0, len(branches) - 1))](*operands)
    index = _arr(index)
    if index.dtype.kind in "fc":      # JAX refuses it too; truncating 1.7 to branch 1 would hide a bug
        raise DTypeError(f"switch: the branch index must be an integer, got {index.dtype.name}; "
                         f"convert it deliberately (index.astype(pt.int32), pt.round(index).astype(pt.int32))")
    if index.ndim:                    # one branch runs: one index (pt.vmap gives each row its own)
        raise ShapeError(f"switch: the branch index must be a scalar; it is {index.aval} (to pick a "
                         f"branch per element, pt.vmap the switch over the index)")
    i = _t.clip(index.astype(_dt.int32), 0, len(branches) - 1)

    def pick(lo, hi, *ops):
        if hi - lo == 1:
            return branches[lo](*ops)
        mid = (lo + hi) // 2
        return _branch(i < mid, lambda *o: pick(lo, mid, *o), lambda *o: pick(mid, hi, *o), ops, "switch")

    return pick(0, len(branches), *operands)


@api_boundary
def map(f, xs, *, batch_size=None):  # noqa: A001
    """[f(x) for x in xs] along the leading axis of the pytree xs, stacked (jax.lax.map), as one
    `pt.scan`. `batch_size` is accepted and ignored: every row runs in the same loop."""
    if not callable(f):
        raise ArgumentError(f"map needs a function f(x); got {type(f).__name__}")
    return scan(lambda c, x: (c, f(x)), (), xs)[1]


@api_boundary
def select(pred, on_true, on_false):
    """on_true where pred else on_false (jax.lax.select): `pt.where`."""
    return _t.where(pred, on_true, on_false)


@api_boundary
def select_n(which, *cases):
    """cases[which], elementwise (jax.lax.select_n): `which` is a bool (two cases at most: False
    picks cases[0]) or integer array, a scalar or of the cases' shape; the cases share one shape and
    dtype, as JAX asks. An integer outside [0, len(cases)) picks the nearest end, so no lane reads
    past the cases (JAX leaves it implementation-defined)."""
    if not cases:
        raise ArgumentError("lax.select_n needs at least one case")
    xs = [_arr(c) for c in cases]
    w = _arr(which)
    for x in xs[1:]:
        if tuple(x.shape) != tuple(xs[0].shape) or x.dtype != xs[0].dtype:
            raise ShapeError(f"lax.select_n: the cases must have one shape and dtype; got "
                             f"{', '.join(str(c.aval) for c in xs)}")
    if w.dtype.kind not in "biu":
        raise DTypeError(f"lax.select_n: which must be bool or integer, got {w.dtype.name}")
    if w.ndim and tuple(w.shape) != tuple(xs[0].shape):
        raise ShapeError(f"lax.select_n: which must be a scalar or of the cases' shape {tuple(xs[0].shape)}; "
                         f"it is {w.aval}")
    if w.dtype.kind == "b" and len(xs) > 2:
        raise DTypeError(f"lax.select_n: a bool which picks between two cases, not {len(xs)}; use an integer")
    out = xs[0]
    for k, x in enumerate(xs[1:], start=1):
        out = _t.where(w >= k, x, out)
    return _t.broadcast_to(out, xs[0].shape)


@api_boundary
def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    """operand[start:limit:stride] on every axis, with static bounds (jax.lax.slice)."""
    x = _arr(operand)
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"lax.slice: {x.ndim} axes need {x.ndim} start indices, limits and strides; got "
                         f"{len(start_indices)}, {len(limit_indices)} and {len(strides)}")
    return x[tuple(builtins.slice(*b) for b in zip(start_indices, limit_indices, strides))]


@api_boundary
def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start_index:limit_index:stride] along `axis` (jax.lax.slice_in_dim); None means the
    axis's start or end, a negative index counts from the end."""
    x = _arr(operand)
    axis = _normalize_axis(axis, x.ndim, "lax.slice_in_dim")
    return x[(builtins.slice(None),) * axis + (builtins.slice(start_index, limit_index, stride),)]


@api_boundary
def index_in_dim(operand, index, axis=0, keepdims=True):
    """The static element `index` along `axis` (jax.lax.index_in_dim), keeping the axis (of size 1)
    when `keepdims`; a negative index counts from the end."""
    x = _arr(operand)
    axis = _normalize_axis(axis, x.ndim, "lax.index_in_dim")
    r = x[(builtins.slice(None),) * axis + (operator.index(index),)]
    return _t.expand_dims(r, axis=axis) if keepdims else r


@api_boundary
def div(x, y):
    """x / y; integers round toward zero (C's division, as jax.lax.div), not toward -inf."""
    x, y = _arr(x), _arr(y)
    if _dt.is_int(x.dtype) and _dt.is_int(y.dtype):
        q = _t.floor_divide(x, y)
        return _t.where((q < 0) & (q * y != x), q + 1, q)
    return _t.divide(x, y)


@api_boundary
def rsqrt(x):
    """1 / sqrt(x)."""
    return 1 / _t.sqrt(x)


@api_boundary
def integer_pow(x, y):
    """x ** y for a Python int y."""
    return _t.power(x, operator.index(y))


@api_boundary
def clamp(min, x, max):  # noqa: A002
    """x clipped to [min, max]: note lax's argument order, min first."""
    return _t.minimum(_t.maximum(x, min), max)


@api_boundary
def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """operand's axis i placed at axis broadcast_dimensions[i] of `shape`, broadcast to it."""
    x = _arr(operand)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim or list(dims) != sorted(set(dims)) or (dims and dims[-1] >= len(shape)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {dims} must be increasing axes of {tuple(shape)}, "
                         f"one per axis of {x.shape}")
    full = [1] * len(shape)
    for i, d in enumerate(dims):
        full[d] = x.shape[i]
    return _t.broadcast_to(x.reshape(tuple(full)), tuple(shape))


@api_boundary
def reshape(operand, new_sizes, dimensions=None):
    """operand (its axes first permuted by `dimensions`, if given) reshaped to `new_sizes`."""
    x = _arr(operand)
    if dimensions is not None:
        x = _t.transpose(x, tuple(dimensions))
    return x.reshape(tuple(new_sizes))


@api_boundary
def squeeze(array, dimensions):
    """array without the size-1 axes `dimensions`."""
    return _t.squeeze(array, axis=tuple(dimensions))


@api_boundary
def expand_dims(array, dimensions):
    """array with size-1 axes inserted at `dimensions`."""
    return _t.expand_dims(array, axis=tuple(dimensions))


@api_boundary
def rev(operand, dimensions):
    """operand reversed along `dimensions`."""
    return _t.flip(operand, axis=tuple(dimensions))


@api_boundary
def iota(dtype, size):
    """0, 1, ..., size - 1 of `dtype`."""
    return _t.arange(size, dtype=dtype)


@api_boundary
def convert_element_type(operand, new_dtype):
    """operand converted to `new_dtype` (a value conversion, like astype)."""
    return _arr(operand).astype(new_dtype)


@api_boundary
def bitcast_convert_type(operand, new_dtype):
    """operand's bits read as `new_dtype` of the same width (`x.view`); other widths are refused."""
    return _arr(operand).view(new_dtype)


@api_boundary
def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """jax.lax.dot_general as an einsum: dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); the result's axes are the batch axes, then lhs's free, then rhs's free."""
    a, b = _arr(lhs), _arr(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(operator.index(d) for d in s) for s in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dot_general: contracting {lc}/{rc} and batch {lb}/{rb} dimensions must pair up")
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls, rs = [None] * a.ndim, [None] * b.ndim
    for i, j in list(zip(lb, rb)) + list(zip(lc, rc)):
        ls[i] = rs[j] = next(letters)
    ls = [c or next(letters) for c in ls]
    rs = [c or next(letters) for c in rs]
    out = [ls[i] for i in lb] + [c for i, c in enumerate(ls) if i not in lb and i not in lc] \
        + [c for j, c in enumerate(rs) if j not in rb and j not in rc]
    r = _t.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", a, b)
    return r if preferred_element_type is None else r.astype(preferred_element_type)


def _reduce(fn, name):
    @api_boundary
    def reduce(operand, axes):
        return fn(operand, axis=tuple(axes))

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"jax.lax.{name}: `pt.{fn.__name__}` over `axes`."
    return reduce


reduce_sum, reduce_max = _reduce(_t.sum, "reduce_sum"), _reduce(_t.max, "reduce_max")
reduce_min, reduce_prod = _reduce(_t.min, "reduce_min"), _reduce(_t.prod, "reduce_prod")


@api_boundary
def argmax(operand, axis, index_dtype):
    """Index of the largest element along `axis`, as `index_dtype`."""
    return _t.argmax(operand, axis=axis).astype(index_dtype)


@api_boundary
def argmin(operand, axis, index_dtype):
    """Index of the smallest element along `axis`, as `index_dtype`."""
    return _t.argmin(operand, axis=axis).astype(index_dtype)


def _running(fn, operand, axis, reverse):
    """`fn` (cumsum, cumprod) along `axis`, inclusive, from the end when `reverse`, in operand's dtype."""
    x = _arr(operand)
    x = _t.flip(x, axis=axis) if reverse else x
    r = fn(x, axis=axis).astype(x.dtype)
    return _t.flip(r, axis=axis) if reverse else r


@api_boundary
def cumsum(operand, axis=0, reverse=False):
    """Inclusive running sum along `axis` (from the end when `reverse`), in operand's dtype."""
    return _running(_t.cumsum, operand, axis, reverse)


@api_boundary
def cumprod(operand, axis=0, reverse=False):
    """Inclusive running product along `axis` (from the end when `reverse`), in operand's dtype."""
    return _running(_t.cumprod, operand, axis, reverse)


conv_general_dilated = api_boundary(_nn_conv.conv_general_dilated)
reduce_window = api_boundary(_nn_conv.reduce_window)


@api_boundary
def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """jax.lax.conv: conv_general_dilated with N C spatial / O I spatial axes and no dilation."""
    return _nn_conv.conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                         preferred_element_type=preferred_element_type)


@api_boundary
def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """jax.lax.conv_with_general_padding: conv_general_dilated with the default axes."""
    return _nn_conv.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                         precision=precision, preferred_element_type=preferred_element_type)


@api_boundary
def cummax(operand, axis=0, reverse=False):
    """Inclusive running maximum along `axis` (from the end when `reverse`); NaN propagates."""
    return _running(lambda x, axis: _t.maximum.accumulate(x, axis=axis), operand, axis, reverse)


@api_boundary
def cummin(operand, axis=0, reverse=False):
    """Inclusive running minimum along `axis` (from the end when `reverse`); NaN propagates."""
    return _running(lambda x, axis: _t.minimum.accumulate(x, axis=axis), operand, axis, reverse)


@api_boundary
def cumlogsumexp(operand, axis=0, reverse=False):
    """Inclusive running log(sum(exp(x))) along `axis` (from the end when `reverse`), each step a
    logaddexp (no overflow for large inputs)."""
    return _running(lambda x, axis: _t.logaddexp.accumulate(x, axis=axis), operand, axis, reverse)


@api_boundary
def associative_scan(fn, elems, reverse=False, axis=0):
    """The inclusive scan of the associative binary `fn` over the pytree `elems` along `axis`
    (out[i] = fn(out[i - 1], elems[i]); with `reverse`, the same over the reversed axis, as JAX), in
    log2(n) steps of whole-array work (Hillis-Steele): step s combines each position with the one 2**s
    before it, so `fn` must be associative, as JAX asks."""
    from poot.graph import normalize_axis
    from poot.trace import pytree

    if not callable(fn):
        raise ArgumentError(f"lax.associative_scan needs a function fn(a, b); got {type(fn).__name__}")
    leaves, tree = pytree.flatten(elems)
    xs = [_arr(x) for x in leaves]
    if not xs:
        return elems
    if any(x.ndim == 0 for x in xs):
        raise ShapeError(f"lax.associative_scan: elems has a 0-d leaf ({[str(x.aval) for x in xs]}); "
                         f"each leaf is scanned along an axis")
    axis = normalize_axis(axis, xs[0].ndim, "lax.associative_scan")
    n = xs[0].shape[axis]
    if any(x.shape[axis] != n for x in xs):
        raise ShapeError(f"lax.associative_scan: the leaves of elems differ in length along axis {axis}: "
                         f"{[x.shape[axis] for x in xs]}")
    if reverse:
        xs = [_t.flip(x, axis=axis) for x in xs]
    part = lambda x, lo, hi: _t.take(x, _t.arange(lo, hi), axis=axis)
    shift = 1
    while shift < n:
        earlier = [part(x, 0, n - shift) for x in xs]
        later = pytree.unflatten(tree, [part(x, shift, n) for x in xs])
        combined = _combined(fn(pytree.unflatten(tree, earlier), later), tree, earlier)
        xs = [_t.concatenate([part(x, 0, shift), c], axis=axis) for x, c in zip(xs, combined)]
        shift *= 2
    if reverse:
        xs = [_t.flip(x, axis=axis) for x in xs]
    return pytree.unflatten(tree, xs)


def _combined(result, tree, like: list) -> list:
    """The leaves of `fn(a, b)` in associative_scan, each checked to be what the scan stores: the
    structure of elems, and each leaf the shape and dtype of its operands (a Python scalar result
    takes their dtype). Said here, as JAX does, rather than cast silently or failing deeper."""
    from poot.trace import pytree
    from poot.trace.control import structure

    leaves, got = pytree.flatten(result)
    if got != tree:
        raise ShapeError(f"lax.associative_scan: fn returns {structure(got)}, but elems is "
                         f"{structure(tree)}: it must return the structure of its operands")
    out = []
    for c, x in zip(leaves, like):
        c = _arr(c)
        weak = c._node.weak == 1
        if tuple(c.shape) != tuple(x.shape) and not (weak and c.ndim == 0):
            raise ShapeError(f"lax.associative_scan: fn returns {c.aval} for operands {x.aval}: it "
                             f"must combine them elementwise, keeping their shape")
        if c.dtype != x.dtype and not weak:
            raise DTypeError(f"lax.associative_scan: fn returns {c.dtype.name} for {x.dtype.name} "
                             f"operands: it must keep their dtype (convert elems first)")
        out.append(_t.broadcast_to(c.astype(x.dtype), x.shape))
    return out


def _wrapped_starts(x: Array, start_indices) -> list:
    """Start indices with negatives counted from the end once (JAX 0.10's allow_negative_indices).
    A float start is refused (as JAX does), not truncated into some position of the cache."""
    starts = list(start_indices) if isinstance(start_indices, (tuple, list)) else \
        [start_indices[i] for i in range(len(start_indices))]
    out = []
    for s, n in zip(starts, x.shape):
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            out.append(int(s) + n if s < 0 else int(s))
        else:
            a = _arr(s)
            if not _dt.is_int(a.dtype):
                raise DTypeError(f"dynamic_update_slice: start indices must be integers, got {a.dtype.name}")
            a = a.astype(_dt.int64)
            out.append(_t.where(a < 0, a + n, a))
    return out + starts[len(out):]


@api_boundary
def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`pt.dynamic_update_slice` with JAX 0.10's start indices: a negative one counts from the end,
    then each is clamped so the update fits."""
    x = _arr(operand)
    starts = _wrapped_starts(x, start_indices) if allow_negative_indices else start_indices
    return _t.dynamic_update_slice(x, update, starts)


@api_boundary
def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    """dynamic_slice along one axis: `slice_size` elements from `start_index` (others whole)."""
    x = _arr(operand)
    starts = [0] * x.ndim
    sizes = list(x.shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


@api_boundary
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """The element `index` along `axis` (clamped), keeping that axis of size 1 when `keepdims`."""
    r = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return r if keepdims else _t.squeeze(r, axis=axis)


@api_boundary
def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    """dynamic_update_slice along one axis: `update` written from `start_index` (others from 0)."""
    x = _arr(operand)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow_negative_indices)


@api_boundary
def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """dynamic_update_slice_in_dim of one index; `update` may lack that axis."""
    x, u = _arr(operand), _arr(update)
    if u.ndim == x.ndim - 1:
        u = _t.expand_dims(u, axis=axis)
    return dynamic_update_slice_in_dim(x, u, index, axis, allow_negative_indices=allow_negative_indices)


def __dir__():
    """The jax.lax names poot provides (what tab completion offers)."""
    return sorted(__all__)


def __getattr__(name: str):
    import poot

    hint = (f"; pt.{name} exists with NumPy's semantics, which may differ from jax.lax.{name}"
            if not name.startswith("_") and name in dir(poot) else "")
    raise AttributeError(f"module 'poot.lax' has no attribute {name!r}: pt.lax provides only the jax.lax names "
                         f"whose JAX meaning poot gives (see dir(pt.lax)){hint}")
