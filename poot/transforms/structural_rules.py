"""Derivative rules of reductions, scans, movement, indexing and matmul.

These ops are linear in their array operand (except max/min/prod, whose rules pick or multiply by
the other elements), so forward mode applies the op itself to the tangent and reverse mode applies
its transpose: a sum's transpose broadcasts, a broadcast's sums, a slice's writes into zeros
(`update_slice`), a gather's (`take`) scatter-adds, a matmul's multiplies by the other operand
transposed. Reductions keep the reduced axes (size 1), so their cotangent broadcasts back directly.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.trace.array import Array

from .prims import bind, broadcast, convert, reshape, select_zero, sum_to, zeros, zeros_like


# --- reductions -------------------------------------------------------------------------------
def _sum_jvp(primals, tangents, out, axes):
    return bind("reduce_sum", tangents[0], axes=axes)


def _sum_vjp(ct, primals, out, axes):
    return [broadcast(ct, primals[0].shape)]


def _extreme_share(x: Array, out: Array, axes) -> Array:
    """Where `x` attains the max/min, each such element's share (ties split the derivative evenly,
    as in JAX)."""
    hit = convert(bind("eq", x, broadcast(out, x.shape)), x.dtype)
    count = bind("reduce_sum", hit, axes=axes)
    return hit / broadcast(count, x.shape)


def _extreme_jvp(primals, tangents, out, axes):
    return bind("reduce_sum", tangents[0] * _extreme_share(primals[0], out, axes), axes=axes)


def _extreme_vjp(ct, primals, out, axes):
    x = primals[0]
    return [broadcast(ct, x.shape) * _extreme_share(x, out, axes)]


def _flip(x: Array, axis: int) -> Array:
    n = x.shape[axis]
    starts = tuple(n - 1 if i == axis else 0 for i in range(x.ndim))
    steps = tuple(-1 if i == axis else 1 for i in range(x.ndim))
    return bind("slice", x, starts=starts, steps=steps, sizes=x.shape) if n > 1 else x


def _shift(x: Array, axis: int, d: int, value: float) -> Array:
    """`x` moved `d` places toward the end along `axis`, the first `d` places filled with `value`."""
    if x.shape[axis] == 0:
        return x
    widths = tuple((d, 0) if i == axis else (0, 0) for i in range(x.ndim))
    padded = bind("pad", x, widths=widths, value=value)
    return bind("slice", padded, starts=(0,) * x.ndim, steps=(1,) * x.ndim, sizes=x.shape)


def _exclusive_cumprod(x: Array, axis: int) -> Array:
    """prod of the elements before each one along `axis` (1 for the first), without division."""
    return bind("cumprod", _shift(x, axis, 1, 1.0), axis=axis)


def _linear_recurrence(a: Array, b: Array, axis: int) -> Array:
    """y with y_i = a_i * y_(i-1) + b_i along `axis` (y_(-1) = 0), without division: a doubling
    scan of the affine maps y -> a_i y + b_i (ceil(log2 n) rounds of elementwise ops), so a zero
    a_i just cuts the line there. The derivatives of cumprod are such recurrences; their closed form
    divides by the elements, which is NaN at a zero."""
    n, d = a.shape[axis], 1
    while d < n:
        b = b + a * _shift(b, axis, d, 0.0)      # compose each map with the one d places before
        if 2 * d < n:
            a = a * _shift(a, axis, d, 1.0)
        d *= 2
    return b


def _prod_of_others(x: Array, axes) -> Array:
    """For each element, the product of the other elements of its reduction: the reduced axes are
    moved last and flattened, and exclusive products from both ends are multiplied (exact where
    some elements are zero, unlike out / x)."""
    keep = [i for i in range(x.ndim) if i not in axes]
    perm = tuple(keep) + tuple(axes)
    moved = bind("transpose", x, perm=perm) if perm != tuple(range(x.ndim)) else x
    lead = tuple(x.shape[i] for i in keep)
    k = 1
    for a in axes:
        k *= x.shape[a]
    flat = reshape(moved, lead + (k,))
    last = len(lead)
    others = _exclusive_cumprod(flat, last) * _flip(_exclusive_cumprod(_flip(flat, last), last), last)
    others = reshape(others, moved.shape)
    inverse = tuple(perm.index(i) for i in range(x.ndim))
    return bind("transpose", others, perm=inverse) if perm != tuple(range(x.ndim)) else others


def _prod_jvp(primals, tangents, out, axes):
    return bind("reduce_sum", tangents[0] * _prod_of_others(primals[0], axes), axes=axes)


def _prod_vjp(ct, primals, out, axes):
    x = primals[0]
    return [broadcast(ct, x.shape) * _prod_of_others(x, axes)]


# --- scans ------------------------------------------------------------------------------------
def _cumsum_jvp(primals, tangents, out, axis):
    return bind("cumsum", tangents[0], axis=axis)


def _cumsum_vjp(ct, primals, out, axis):
    return [_flip(bind("cumsum", _flip(ct, axis), axis=axis), axis)]


def _cumprod_jvp(primals, tangents, out, axis):
    # out_i = x_i * out_(i-1), so d out_i = x_i * d out_(i-1) + out_(i-1) * t_i
    x = primals[0]
    return _linear_recurrence(x, _exclusive_cumprod(x, axis) * tangents[0], axis)


def _cumprod_vjp(ct, primals, out, axis):
    # d out_i / d x_j = out_(j-1) * prod_(j<k<=i) x_k (i >= j), so the cotangent of x_j is
    # out_(j-1) * s_j with s_j = ct_j + x_(j+1) * s_(j+1): the same recurrence run from the end
    x = primals[0]
    s = _linear_recurrence(_shift(_flip(x, axis), axis, 1, 1.0), _flip(ct, axis), axis)
    return [_exclusive_cumprod(x, axis) * _flip(s, axis)]


# --- movement ---------------------------------------------------------------------------------
def _reshape_vjp(ct, primals, out, shape):
    return [reshape(ct, primals[0].shape)]


def _broadcast_vjp(ct, primals, out, shape):
    return [sum_to(ct, primals[0].shape)]


def _transpose_vjp(ct, primals, out, perm):
    inverse = tuple(perm.index(i) for i in range(len(perm)))
    return [bind("transpose", ct, perm=inverse)]


def _slice_vjp(ct, primals, out, starts, steps, sizes):
    x = primals[0]
    return [bind("update_slice", zeros_like(x), ct, starts=starts, steps=steps, sizes=sizes)]


def _pad_jvp(primals, tangents, out, widths, value):
    return bind("pad", tangents[0], widths=widths, value=0.0)


def _pad_vjp(ct, primals, out, widths, value):
    x = primals[0]
    return [bind("slice", ct, starts=tuple(lo for lo, _ in widths), steps=(1,) * x.ndim, sizes=x.shape)]


def _concat_jvp(primals, tangents, out, axis):
    parts = [t if t is not None else zeros_like(p) for p, t in zip(primals, tangents)]
    return bind("concatenate", *parts, axis=axis)


def _concat_vjp(ct, primals, out, axis):
    outs, offset = [], 0
    for p in primals:
        starts = tuple(offset if i == axis else 0 for i in range(ct.ndim))
        outs.append(bind("slice", ct, starts=starts, steps=(1,) * ct.ndim, sizes=p.shape))
        offset += p.shape[axis]
    return outs


def _linear(op):
    """Forward mode of an op linear in its only differentiable operand: the op on the tangent."""
    def rule(primals, tangents, out, **params):
        rest = [p for p in primals[1:]]
        return bind(op, tangents[0], *rest, **params)
    return rule


# --- indexing ---------------------------------------------------------------------------------
def _take_vjp(ct, primals, out, axis):
    """Scatter-add the cotangent back to the gathered rows (scatter writes along axis 0, so the
    gathered axis is moved first and back)."""
    x, idx = primals
    pre, post = x.shape[:axis], x.shape[axis + 1:]
    k = idx.ndim
    order = (tuple(range(axis, axis + k)) + tuple(range(axis)) +
             tuple(range(axis + k, ct.ndim)))
    upd = bind("transpose", ct, perm=order) if order != tuple(range(ct.ndim)) else ct
    target = zeros((x.shape[axis],) + pre + post, x.dtype, x.device)
    summed = bind("scatter", target, idx, upd, mode="add")
    back = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, x.ndim))
    return [bind("transpose", summed, perm=back) if back != tuple(range(x.ndim)) else summed, None]


def _scatter_jvp(primals, tangents, out, mode):
    x, idx, upd = primals
    tx = tangents[0] if tangents[0] is not None else zeros_like(x)
    tu = tangents[2] if tangents[2] is not None else zeros_like(upd)
    return bind("scatter", tx, idx, tu, mode=mode)


def _scatter_survivors(x: Array, idx: Array) -> Array:
    """For each update of a mode-set scatter of rows `idx` into `x`, whether it is the one left in
    the result (of duplicate indices only one is). JAX's way: scatter each update's own number the
    same way and read back which number each target row holds, so the winner is whichever the
    scatter itself picks (on the CPU, the last; on GPUs an unspecified one)."""
    k = idx.size
    t = dt.int32 if k < 2**31 else dt.int64
    ids = reshape(bind("iota", device=x.device, shape=(k,), axis=0, dtype=t), idx.shape)
    slots = bind("scatter", zeros((x.shape[0],), t, x.device), idx, ids, mode="set")
    return bind("eq", bind("take", slots, idx, axis=0), ids)


def _scatter_vjp(ct, primals, out, mode):
    x, idx, upd = primals
    ct_upd = bind("take", ct, idx, axis=0)
    if mode == "add":
        return [ct, None, ct_upd]
    # an overwritten update (a duplicate index that lost) does not reach the result: no cotangent
    kept = reshape(_scatter_survivors(x, idx), idx.shape + (1,) * (x.ndim - 1))
    ct_x = bind("scatter", ct, idx, zeros_like(upd), mode="set")
    return [ct_x, None, select_zero(broadcast(kept, upd.shape), ct_upd)]


def _update_slice_jvp(primals, tangents, out, starts, steps, sizes):
    x, v = primals
    tx = tangents[0] if tangents[0] is not None else zeros_like(x)
    tv = tangents[1] if tangents[1] is not None else zeros_like(v)
    return bind("update_slice", tx, tv, starts=starts, steps=steps, sizes=sizes)


def _update_slice_vjp(ct, primals, out, starts, steps, sizes):
    x, v = primals
    ct_x = bind("update_slice", ct, zeros_like(v), starts=starts, steps=steps, sizes=sizes)
    return [ct_x, bind("slice", ct, starts=starts, steps=steps, sizes=sizes)]


# --- contraction ------------------------------------------------------------------------------
def _swap_last(x: Array) -> Array:
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return bind("transpose", x, perm=perm)


def _matmul_jvp(primals, tangents, out, **params):
    a, b = primals
    ta, tb = tangents
    parts = []
    if ta is not None:
        parts.append(bind("matmul", ta, b))
    if tb is not None:
        parts.append(bind("matmul", a, tb))
    total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return broadcast(total, out.shape)


def _matmul_vjp(ct, primals, out, **params):
    a, b = primals
    return [sum_to(bind("matmul", ct, _swap_last(b)), a.shape),
            sum_to(bind("matmul", _swap_last(a), ct), b.shape)]


JVP = {
    "reduce_sum": _sum_jvp, "reduce_max": _extreme_jvp, "reduce_min": _extreme_jvp,
    "reduce_prod": _prod_jvp, "cumsum": _cumsum_jvp, "cumprod": _cumprod_jvp,
    "reshape": _linear("reshape"), "broadcast": _linear("broadcast"), "transpose": _linear("transpose"),
    "slice": _linear("slice"), "pad": _pad_jvp, "concatenate": _concat_jvp, "take": _linear("take"),
    "scatter": _scatter_jvp, "update_slice": _update_slice_jvp, "matmul": _matmul_jvp,
}

VJP = {
    "reduce_sum": _sum_vjp, "reduce_max": _extreme_vjp, "reduce_min": _extreme_vjp,
    "reduce_prod": _prod_vjp, "cumsum": _cumsum_vjp, "cumprod": _cumprod_vjp,
    "reshape": _reshape_vjp, "broadcast": _broadcast_vjp, "transpose": _transpose_vjp,
    "slice": _slice_vjp, "pad": _pad_vjp, "concatenate": _concat_vjp, "take": _take_vjp,
    "scatter": _scatter_vjp, "update_slice": _update_slice_vjp, "matmul": _matmul_vjp,
}

__all__ = ["JVP", "VJP"]
