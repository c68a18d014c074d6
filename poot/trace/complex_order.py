"""Ordering complex values as NumPy 2 does: lexicographically on (real, imaginary), a value with a
NaN part counting as NaN.

The graph's order ops (max, min, reduce_max, argmax, round, cumprod...) take real operands only, so
the complex forms are built here from ops on the parts (poot/trace/complex_values.py), which the
complex lowering turns into real kernels like any other complex arithmetic: they stay lazy, work
inside @pt.jit, under pt.vmap and on every device; sorting is three stable argsorts of real keys.
Only complex operands come here; the real paths are untouched.

NumPy's rules followed:
- a < b is lexicographic, the real parts deciding only when neither imaginary part is NaN (<=, >, >=
  likewise); fmax(a, b) is a where a >= b or b has a NaN part, else b (fmin with <=);
- maximum(a, b) is a when a has a NaN part, else b when b has one, else a when a >= b
  lexicographically, else b (the first NaN propagates); minimum likewise with <=;
- argmax/argmin give the first value with a NaN part if there is one, else the first extreme;
  max/min are the values at those indices (the first NaN, as NumPy's sequential reduction gives);
- sort/argsort: values without NaN lexicographically, then R + nan j, nan + R j, nan + nan j;
- round rounds the real and imaginary parts separately; cumprod is the running complex product
  (a parallel scan: with infinite parts NaN can land elsewhere than in NumPy's sequential product).
"""
from __future__ import annotations

import math

from poot.trace.array import Array
from poot.trace.complex_values import from_parts, parts


def _split(z: Array) -> tuple[Array, Array, Array]:
    """The real part, the imaginary part and "has a NaN part" of complex `z`."""
    from poot.trace.elementwise import isnan

    p = parts(z)
    re, im = p[..., 0], p[..., 1]
    return re, im, isnan(re) | isnan(im)


def extreme(a: Array, b: Array, larger: bool) -> Array:
    """NumPy's maximum (larger) or minimum of complex `a` and `b` (one complex dtype; broadcast)."""
    from poot.trace.selection import where

    ar, ai, an = _split(a)
    br, bi, bn = _split(b)
    if larger:
        wins = (ar > br) | ((ar == br) & (ai >= bi))
    else:
        wins = (ar < br) | ((ar == br) & (ai <= bi))
    return where((wins & ~bn) | an, a, b)


def less(a: Array, b: Array, or_equal: bool) -> Array:
    """NumPy's complex a < b (a <= b with `or_equal`): lexicographic on (real, imaginary), where the
    real parts decide only if neither imaginary part is NaN (NumPy's CLT/CLE); a > b is less(b, a)."""
    from poot.trace.elementwise import isnan

    ar, ai, _ = _split(a)
    br, bi, _ = _split(b)
    second = (ai <= bi) if or_equal else (ai < bi)
    return ((ar < br) & ~isnan(ai) & ~isnan(bi)) | ((ar == br) & second)


def sort_less(a: Array, b: Array) -> Array:
    """Whether complex `a` comes before `b` in the sort order (NumPy's sorting CLT: lexicographic, then
    R + nan j, nan + R j, nan + nan j): what searchsorted counts against."""
    from poot.trace.elementwise import isnan
    from poot.trace.selection import where

    ar, ai, _ = _split(a)
    br, bi, _ = _split(b)
    a_im, b_im_nan = ~isnan(ai), isnan(bi)
    same_real = (ar == br) | (isnan(ar) & isnan(br))
    return where(ar < br, a_im | b_im_nan,
                 where(ar > br, b_im_nan & a_im,
                       where(same_real, (ai < bi) | (b_im_nan & a_im), isnan(br))))


def nan_skipping_extreme(a: Array, b: Array, larger: bool) -> Array:
    """NumPy's fmax (larger) or fmin of complex `a` and `b`: a where a >= b (a <= b) or b has a NaN
    part, else b (so NaN only where both have one)."""
    from poot.trace.selection import where

    wins = less(b, a, True) if larger else less(a, b, True)
    return where(wins | _split(b)[2], a, b)


def arg_extreme(z: Array, axis: int, larger: bool) -> Array:
    """The int64 index along `axis` (non-negative, kept as size 1) of the first NaN of complex `z`,
    else of its first lexicographic maximum (larger) or minimum."""
    from poot.trace import reductions as red
    from poot.trace.selection import where

    re, im, nan = _split(z)
    worst = -math.inf if larger else math.inf
    pick = red.max if larger else red.min
    re_ok = where(nan, worst, re)
    cand = (re_ok == pick(re_ok, axis=axis, keepdims=True)) & ~nan
    im_ok = where(cand, im, worst)
    hit = cand & (im_ok == pick(im_ok, axis=axis, keepdims=True))
    first_hit = red.argmax(hit, axis=axis, keepdims=True)
    first_nan = red.argmax(nan, axis=axis, keepdims=True)
    return where(red.any(nan, axis=axis, keepdims=True), first_nan, first_hit)


def arg_reduce(z: Array, axis, keepdims: bool, larger: bool) -> Array:
    """argmax (larger) or argmin of complex `z` as NumPy: over the flattened array when axis is None."""
    from poot.trace.movement import axis_of, reshape

    if axis is None:
        r = arg_extreme(reshape(z, (z.size,)), 0, larger)
        return reshape(r, (1,) * z.ndim if keepdims else ())
    ax = axis_of(axis, z.ndim, "argmax" if larger else "argmin", z)
    r = arg_extreme(z, ax, larger)
    return r if keepdims else reshape(r, z.shape[:ax] + z.shape[ax + 1:])


def reduce_extreme(z: Array, axes: tuple, keepdims: bool, larger: bool) -> Array:
    """max (larger) or min of complex `z` over `axes` (sorted, non-empty): the value at arg_extreme
    once the reduced axes are moved last and merged into one."""
    from poot.trace.indexing import take_along_axis
    from poot.trace.movement import permute_dims, reshape

    kept = [i for i in range(z.ndim) if i not in axes]
    moved = permute_dims(z, tuple(kept) + tuple(axes))
    kept_shape = tuple(z.shape[i] for i in kept)
    flat = reshape(moved, kept_shape + (math.prod(z.shape[i] for i in axes),))
    r = take_along_axis(flat, arg_extreme(flat, len(kept), larger), axis=len(kept))
    shape = tuple(1 if i in axes else s for i, s in enumerate(z.shape)) if keepdims else kept_shape
    return reshape(r, shape)


def round_parts(z: Array, decimals: int) -> Array:
    """NumPy's round of complex `z`: the real and imaginary parts rounded separately."""
    from poot.trace.elementwise import round as round_

    p = parts(z)
    return from_parts(round_(p[..., 0], decimals), round_(p[..., 1], decimals))


def running_product(z: Array, axis: int) -> Array:
    """The cumulative product of complex `z` along `axis`: log2(n) doubling steps (Hillis-Steele),
    each multiplying a value by the running product ending `shift` places before it; values with no
    such predecessor are kept as they are (multiplying by 1 + 0j would turn an infinite part into
    NaN). Finite values agree with NumPy's sequential product up to rounding; with infinite parts
    the products are associated differently, so NaN can appear at other places than in NumPy."""
    from poot.trace.creation import arange, ones
    from poot.trace.movement import concat, reshape
    from poot.trace.selection import where

    n = z.shape[axis]
    idx_shape = tuple(n if i == axis else 1 for i in range(z.ndim))
    position = reshape(arange(n, device=z.device), idx_shape)
    shift = 1
    while shift < n:
        pad_shape = tuple(shift if i == axis else s for i, s in enumerate(z.shape))
        head = [slice(None)] * z.ndim
        head[axis] = slice(0, n - shift)
        before = concat([ones(pad_shape, dtype=z.dtype, device=z.device), z[tuple(head)]], axis=axis)
        z = where(position >= shift, z * before, z)
        shift *= 2
    return z


def sort_order(z: Array, axis: int, descending: bool) -> Array:
    """The stable argsort (int64) of complex `z` along `axis` in NumPy's order: values without NaN
    lexicographically, then R + nan j (by R), nan + R j (by R), nan + nan j. Three stable real
    argsorts, least significant key first (the real sort's vmap and device rules apply); descending
    is the same order reversed with ties kept in order, as the real argsort."""
    from poot.trace.array_api_sets import argsort
    from poot.trace.elementwise import isnan
    from poot.trace.indexing import take_along_axis
    from poot.trace.selection import where

    p = parts(z)
    re, im = p[..., 0], p[..., 1]
    if z.size == 0:
        return argsort(re, axis=axis)
    re_nan, im_nan = isnan(re), isnan(im)
    group = where(re_nan, 2, 0) + where(im_nan, 1, 0)       # 0 R+Rj, 1 R+nanj, 2 nan+Rj, 3 nan+nanj
    major = where(re_nan, im, re)        # groups 0 and 1 by the real part, group 2 by the imaginary
    minor = where(re_nan | im_nan, 0.0, im)           # group 0: then by the imaginary part
    keys = (minor, major, group)
    order = None
    for key in keys:
        k = key if order is None else take_along_axis(key, order, axis=axis)
        step = argsort(k, axis=axis, descending=descending)
        order = step if order is None else take_along_axis(order, step, axis=axis)
    return order


def sort_values(z: Array, axis: int, descending: bool) -> Array:
    """NumPy's sort of complex `z` along `axis`; descending is the ascending order reversed, as the
    real sort."""
    from poot.trace.indexing import take_along_axis
    from poot.trace.movement import flip

    if z.size == 0:
        return z.copy()
    s = take_along_axis(z, sort_order(z, axis, False), axis=axis)
    return flip(s, axis=axis) if descending else s
