"""Derivative rules of the fused "attention" primitive (poot/graph/attention.py).

Reverse mode recomputes the softmax probabilities P from q and k (the forward pass keeps no L x L
value, and neither does its flash kernel), then applies the textbook backward of
out = P V, P = softmax(S), S = mask + softcap * tanh(scale * q k^T / softcap):

    dV = P^T dO          dP = dO V^T          dS = P * (dP - rowsum(dP * P))
    dmask = dS           dZ = dS * (1 - tanh^2) * scale (softcap; else dS * scale)
    dQ = dZ K            dK = dZ^T Q

with grouped-query heads summed back onto their key/value head. The backward is written with poot
operations (matmuls, a softmax): it holds the [.., Lq, Lk] scores, as the composed form would, and
computes in float32 for 16-bit inputs, as the forward kernels do. Forward mode differentiates the
composed form (poot.trace.attention.composed), the same math from primitives.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace import selection as sel
from poot.trace.array import Array
from poot.trace.attention import composed, softmax_parts

from .flat import jvp_flat
from .prims import broadcast, convert, sum_to


def _work_dtype(q: Array) -> dt.DType:
    return dt.float32 if q.dtype in (dt.float16, dt.bfloat16) else q.dtype


def _per_query_head(x: Array, ratio: int) -> Array:
    """k or v [B, Hk, L, D] repeated to the query heads [B, Hk * ratio, L, D] (head h reads h // ratio)."""
    if ratio == 1:
        return x
    b, hk = x.shape[:2]
    return broadcast(x[:, :, None], (b, hk, ratio) + x.shape[2:]).reshape((b, hk * ratio) + x.shape[2:])


def _per_kv_head(x: Array, ratio: int) -> Array:
    """The transpose of `_per_query_head`: each group of `ratio` query heads summed."""
    if ratio == 1:
        return x
    b, hq = x.shape[:2]
    return x.reshape((b, hq // ratio, ratio) + x.shape[2:]).sum(axis=2)


def probabilities(q, k, mask, *, scale, softcap, left, right, zero_empty):
    """P [B, Hq, Lq, Lk] (work dtype) and the softcap's tanh (None without softcap); `k` already
    per query head. A query that sees no key gets a zero row with `zero_empty`, else NaN."""
    s = (q @ k.swapaxes(-1, -2)) * scale
    capped = None
    if softcap:
        capped = ew.tanh(s / softcap)
        s = capped * softcap
    if mask is not None:
        s = s + mask.astype(s.dtype)
    e, total = softmax_parts(s, left, right, zero_empty)
    p = e / total
    if zero_empty:
        p = sel.where(total > 0, p, 0.0)
    return p, capped


def _attention_vjp(ct, primals, out, scale, softcap, left, right, zero_empty):
    q, k, v = primals[:3]
    mask = primals[3] if len(primals) == 4 else None
    ratio = q.shape[1] // k.shape[1]
    work = _work_dtype(q)
    qw, kw, vw = (x.astype(work) for x in (q, k, v))
    kq, vq = _per_query_head(kw, ratio), _per_query_head(vw, ratio)
    p, capped = probabilities(qw, kq, mask, scale=scale, softcap=softcap, left=left, right=right,
                              zero_empty=zero_empty)
    d_out = ct.astype(work)
    d_v = _per_kv_head(p.swapaxes(-1, -2) @ d_out, ratio)
    d_p = d_out @ vq.swapaxes(-1, -2)
    d_s = p * (d_p - red.sum(d_p * p, axis=-1, keepdims=True))
    d_mask = None
    if mask is not None and mask.dtype.kind == "f":
        d_mask = convert(sum_to(d_s, mask.shape), mask.dtype)
    d_z = d_s * (1.0 - capped * capped) if capped is not None else d_s
    d_z = d_z * scale
    d_q = d_z @ kq
    d_k = _per_kv_head(d_z.swapaxes(-1, -2) @ qw, ratio)
    grads = [convert(d_q, q.dtype), convert(d_k, k.dtype), convert(d_v, v.dtype)]
    return grads + ([d_mask] if mask is not None else [])


def _attention_jvp(primals, tangents, out, **params):
    def fused(*xs):
        return composed(*xs, **params)

    return jvp_flat(fused, list(primals), list(tangents), "attention")[1][0]


VJP = {"attention": _attention_vjp}
JVP = {"attention": _attention_jvp}
