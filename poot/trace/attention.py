"""`pt.nn.scaled_dot_product_attention`: PyTorch's SDPA recorded as one "attention" equation.

The call is brought to the primitive's form (poot/graph/attention.py): leading batch dims folded into
one B (a reshape, free), q, k, v of one float dtype, a boolean mask turned into an additive float32 one
(True keeps: 0, False drops: -inf), the mask given 4 dims each 1 or full (broadcast only where
needed), causal and sliding windows folded into one band (left, right). Where the flash kernels do
not apply (float64 or other dtypes, head dims above HEAD_DIM_MAX) the same math is composed from
primitives instead, with the same semantics.

Causal with Lq != Lk is aligned top-left, as PyTorch's `is_causal`: query i sees keys j <= i (the
lower-left triangle starting at key 0), not the bottom-right alignment decoders with a KV cache want;
for those pass a mask or `window=(None, Lk - Lq)`. `window` is (left, right): query i sees keys
i - left <= j <= i + right (None or a negative side: unbounded, flash-attn's convention); an int w
means (w, w). `is_causal` and `window` combine (right becomes min(right, 0)), and so do a mask and
either. A query that sees no key gets 0 (PyTorch's rule since its safe softmax), not NaN.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, ArgumentValueError, DeviceError, DTypeError, ShapeError
from poot.fuse.attention import kernel_mask
from poot.trace import elementwise as ew
from poot.trace import recipes
from poot.trace import reductions as red
from poot.trace import selection as sel
from poot.trace.array import Array, asnode
from poot.trace.lazy import record
from poot.trace.movement import broadcast_to
from poot.trace.promote import finish, float_argument, promote, wrap

HEAD_DIM_MAX = 256                                      # kernels/attention: DMAX
KERNEL_DTYPES = (dt.float32, dt.float16, dt.bfloat16)
OP = "scaled_dot_product_attention"


def band(lq: int, lk: int, is_causal: bool, window) -> tuple:
    """(left, right) of the visible band, None for an unbounded side."""
    if window is None:
        left = right = None
    elif isinstance(window, (tuple, list)) and len(window) == 2:
        left, right = (_side(w, window) for w in window)
    elif not isinstance(window, bool) and _is_int(window):
        left = right = operator.index(window)
    else:
        raise ShapeError(f"{OP}: window must be an int or a (left, right) pair, got {window!r}")
    if is_causal:
        right = 0 if right is None else min(right, 0)
    return left, right


def _is_int(w) -> bool:
    try:
        operator.index(w)
    except TypeError:
        return False
    return True


def _side(w, window):
    """One side of a (left, right) window: an int (a NumPy one too), None or a negative int meaning
    no limit."""
    if w is None:
        return None
    if isinstance(w, bool) or not _is_int(w):
        raise ShapeError(f"{OP}: window sides must be ints or None, got {window!r}")
    w = operator.index(w)
    return None if w < 0 else w


def _mask_operand(mask, full: tuple, dev: str, work=dt.float32):
    """The mask as an additive Array of 4 dims, each 1 or full ([B, Hq, Lq, Lk]), of dtype `work`
    (float32 for the kernels; float64 where the math is composed in float64)."""
    m = mask if isinstance(mask, Array) else wrap(asnode(mask, dev, OP))
    if m._node.device != dev:
        raise DeviceError(f"{OP}: the mask is on device '{m._node.device}' but q, k and v are on '{dev}'; "
                          f"move it first, e.g. mask.to('{dev}')")
    if m.dtype is dt.bool_:
        m = sel.where(m, 0.0, -math.inf).astype(work)
    elif dt.is_float(m.dtype):
        if work is dt.float32:      # clamped as the claim of hand-written attention does (kernel_mask)
            m = wrap(kernel_mask(m._node, lambda op, inputs, params, aval: record(op, inputs, params, dev)))
        else:
            m = m.astype(work)
    else:
        raise DTypeError(f"{OP}: the mask must be bool (True keeps) or float (added to the scores), "
                         f"got {m.dtype.name}")
    batch, tail = full[:-3], full[-3:]
    if m.ndim > len(full):
        raise ShapeError(f"{OP}: a mask of shape {m.shape} has more dims than the scores {full}")
    shape = (1,) * (len(full) - m.ndim) + m.shape
    for x, f in zip(shape, full):
        if x not in (1, f):
            raise ShapeError(f"{OP}: the mask of shape {m.shape} does not broadcast to the scores {full}")
    m = m.reshape(shape)
    mb = shape[:-3]
    if all(x == 1 for x in mb):
        b = 1
    else:
        if mb != batch:       # partly broadcast batch dims: expanded, they have one stride
            m = broadcast_to(m, batch + shape[-3:])
        b = math.prod(batch)
    return m.reshape((b,) + shape[-3:]), tail


@recipes.memoize
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None, softcap=None,
                                 enable_gqa=False, window=None, *, attn_mask=None, dropout_p=0.0):
    """softmax(q @ k^T * scale (+ mask)) @ v over [..., H, L, D] arrays, as PyTorch's SDPA (see the
    module docstring for causal alignment, windows, softcap and rows that see no key). `attn_mask`
    is PyTorch's keyword for `mask`; `dropout_p` is taken at 0 only (poot's dropout needs a key:
    pt.nn.dropout). Its recording is kept as a recipe (poot/trace/recipes.py): a decode loop's later
    calls of one kind replay the equations instead of running the promotion and shape checks again."""
    if attn_mask is not None:
        if mask is not None:
            raise ArgumentError(f"{OP}: both mask and attn_mask are given; they are one argument (pass one)")
        mask = attn_mask
    if dropout_p:
        raise ArgumentValueError(f"{OP}: dropout_p={dropout_p!r} is not built (poot's dropout takes an explicit "
                                 f"random key: pt.nn.dropout); pass dropout_p=0.0")
    items, d, dev = promote(OP, (q, k, v))
    if d.kind == "c":
        raise DTypeError(f"{OP}: complex q, k or v ({d.name}) are not supported: attention's softmax "
                         f"needs real scores")
    if not dt.is_float(d):
        d = dt.float32 if d.kind == "b" or d.bits <= 16 else dt.float64
    qn, kn, vn = finish(OP, items, d, dev)
    sq, sk, sv = qn.aval.shape, kn.aval.shape, vn.aval.shape
    if len(sq) < 2 or len(sk) < 2 or len(sv) < 2:
        raise ShapeError(f"{OP}: q, k, v need [..., L, D] shapes, got {sq}, {sk}, {sv}")
    nd = max(len(sq), len(sk), len(sv), 3)
    q, k, v = (_shaped(wrap(n), (1,) * (nd - len(n.aval.shape)) + n.aval.shape) for n in (qn, kn, vn))
    hq, lq, dq = q.shape[-3:]
    hk, lk, dk = k.shape[-3:]
    if dk != dq or v.shape[-2] != lk or v.shape[-3] != hk:
        raise ShapeError(f"{OP}: q {q.shape}, k {k.shape} and v {v.shape} do not fit [..., Hq, Lq, D], "
                         "[..., Hk, Lk, D], [..., Hk, Lk, Dv]")
    if not isinstance(is_causal, (bool, np.bool_)):
        raise ArgumentError(f"{OP}: is_causal must be True or False, got {is_causal!r}")
    if hq != hk and not enable_gqa:
        raise ShapeError(f"{OP}: {hq} query heads and {hk} key/value heads: pass enable_gqa=True "
                         "(query heads a multiple of key/value heads)")
    if hq != hk and (hk == 0 or hq % hk):
        raise ShapeError(f"{OP}: {hq} query heads are not a multiple of {hk} key/value heads (grouped-query "
                         "attention shares each key/value head among the same number of query heads)")
    batch = tuple(max(x) for x in zip(q.shape[:-3], k.shape[:-3], v.shape[:-3]))
    q, k, v = (x if x.shape[:-3] == batch else broadcast_to(x, batch + x.shape[-3:]) for x in (q, k, v))
    dv = v.shape[-1]
    left, right = band(lq, lk, is_causal, window)
    scale = (1.0 / math.sqrt(dq) if dq else 1.0) if scale is None else float_argument(scale, OP, "scale")
    cap = 0.0 if softcap is None else float_argument(softcap, OP, "softcap")
    if not cap >= 0 or math.isinf(cap):      # NaN fails the first test
        raise ArgumentValueError(f"{OP}: softcap must be a finite number > 0 (0 or None: no softcap), got "
                                 f"{softcap}")
    if not math.isfinite(scale):
        raise ArgumentValueError(f"{OP}: scale must be a finite number (None: 1 / sqrt(head size)), got {scale}")
    full = batch + (hq, lq, lk)
    b = math.prod(batch)
    operands = [_shaped(q, (b, hq, lq, dq)), _shaped(k, (b, hk, lk, dk)), _shaped(v, (b, hk, lk, dv))]
    kernel = d in KERNEL_DTYPES and 0 < dq and max(dq, dv) <= HEAD_DIM_MAX
    if mask is not None:
        operands.append(_mask_operand(mask, full, dev, dt.float32 if kernel or d.bits <= 32 else d)[0])
    params = {"scale": scale, "softcap": cap, "left": left, "right": right, "zero_empty": True}
    heads = (hq,) if max(len(sq), len(sk), len(sv)) >= 3 else ()    # [L, D] inputs give [L, Dv]
    if b * hq * lq * dv == 0:       # nothing to compute (PyTorch gives an empty result, as for no heads)
        from poot.trace.creation import zeros

        return zeros(batch + heads + (lq, dv), dtype=d, device=dev)
    if kernel:
        out = wrap(record("attention", tuple(x._node for x in operands), params))
    else:
        out = composed(*operands, **params)
    return _shaped(out, batch + heads + (lq, dv))


def _shaped(x, shape):
    """x reshaped to `shape`, recording nothing when it has that shape already (the usual [B, H, L, D]
    operands: each recorded reshape costs a decode step's eager call microseconds)."""
    return x if x.shape == shape else x.reshape(shape)


def composed(q, k, v, mask=None, *, scale, softcap, left, right, zero_empty):
    """The attention op's math from primitives (float64 and large head dims): it holds the scores."""
    ratio = q.shape[1] // k.shape[1]
    if ratio > 1:
        k = broadcast_to(k[:, :, None], (k.shape[0], k.shape[1], ratio) + k.shape[2:]).reshape(
            (k.shape[0], q.shape[1]) + k.shape[2:])
        v = broadcast_to(v[:, :, None], (v.shape[0], v.shape[1], ratio) + v.shape[2:]).reshape(
            (v.shape[0], q.shape[1]) + v.shape[2:])
    work = dt.float32 if q.dtype in (dt.float16, dt.bfloat16) else q.dtype
    s = (q.astype(work) @ k.astype(work).swapaxes(-1, -2)) * scale
    if softcap:
        s = softcap * ew.tanh(s / softcap)
    if mask is not None:
        s = s + mask.astype(work)
    e, total = softmax_parts(s, left, right, zero_empty)
    if zero_empty:        # a row that sees no key: 0, not 0 / 0 (whose derivative is NaN through the where)
        out = sel.where(total > 0, (e @ v.astype(work)) / sel.where(total > 0, total, 1.0), 0.0)
    else:
        out = (e @ v.astype(work)) / total
    return out.astype(q.dtype)


def softmax_parts(s, left, right, zero_empty):
    """exp(s - rowmax) and its row sums for scores `s` [..., Lq, Lk], keys outside the band
    [-left, right] around each query's diagonal masked out (None: no limit on that side). With
    `zero_empty` a row that sees no key has max 0, so its sum is 0 (the caller writes zeros), not NaN."""
    lq, lk = s.shape[-2], s.shape[-1]
    if left is not None or right is not None:
        from poot.trace.creation import arange

        rel = arange(lk, device=s.device)[None, :] - arange(lq, device=s.device)[:, None]
        keep = (rel >= -(left if left is not None else lk + lq)) & (rel <= (right if right is not None else lk + lq))
        s = sel.where(keep, s, -math.inf)
    m = red.max(s, axis=-1, keepdims=True)
    if zero_empty:
        m = sel.where(ew.isfinite(m), m, 0.0)
    e = ew.exp(s - m)
    return e, red.sum(e, axis=-1, keepdims=True)
