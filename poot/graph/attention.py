"""The "attention" primitive: softmax(scale * q k^T, softcapped, masked) v as ONE equation.

Why one primitive rather than its composition: composed, the scores are an [..., Lq, Lk] value the
planner must store (a matmul's result), L x L per head; as one opaque op the planner hands it to the
flash kernels (kernels/attention/), which never hold more than a tile of scores.

Operands (the tracer, poot/trace/nn.py, brings every call to this form):
- q [B, Hq, Lq, D], k [B, Hk, Lk, D], v [B, Hk, Lk, Dv], one float dtype; Hq a multiple of Hk (grouped-
  query attention: q head h reads kv head h // (Hq // Hk), PyTorch's repeat_interleave order);
- optionally an additive float32 mask of 4 dims, each 1 (broadcast) or the full [B, Hq, Lq, Lk] size.
Parameters: `scale` (the logits' factor), `softcap` (0: none; else softcap * tanh(s / softcap), Gemma's
form, applied before the mask), `left`/`right` (query i sees key j when -left <= j - i <= right:
causal is right = 0, top-left aligned as PyTorch's is_causal; None: unbounded), `zero_empty` (a query
that sees no key gives 0, PyTorch's rule; False: NaN, what softmax of an all -inf row gives, the
semantics of attention written by hand). The result is [B, Hq, Lq, Dv] in q's dtype; every device
accumulates in float32 and the oracle computes in float64 and rounds once.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError
from poot.graph.aval import Aval
from poot.graph.ops import _register
from poot.graph.registry import Fusion

PARAMS = ("scale", "softcap", "left", "right", "zero_empty")


def attention_rule(avals, scale, softcap, left, right, zero_empty):
    if len(avals) not in (3, 4):
        raise ShapeError(f"attention: takes q, k, v and an optional mask, got {len(avals)} operands")
    q, k, v = avals[:3]
    if not dt.is_float(q.dtype) or k.dtype is not q.dtype or v.dtype is not q.dtype:
        raise DTypeError(f"attention: q, k and v must share one float dtype, got {q.dtype.name}, "
                         f"{k.dtype.name} and {v.dtype.name}")
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ShapeError(f"attention: q, k, v must be [B, H, L, D], got {q.shape}, {k.shape}, {v.shape}")
    b, hq, lq, d = q.shape
    if k.shape[0] != b or v.shape[0] != b or k.shape[3] != d or v.shape[1:3] != k.shape[1:3]:
        raise ShapeError(f"attention: q {q.shape}, k {k.shape} and v {v.shape} do not fit "
                         "[B, Hq, Lq, D], [B, Hk, Lk, D], [B, Hk, Lk, Dv]")
    if k.shape[1] == 0 or hq % k.shape[1]:
        raise ShapeError(f"attention: {hq} query heads are not a multiple of {k.shape[1]} key/value heads")
    if len(avals) == 4:
        m = avals[3]
        full = (b, hq, lq, k.shape[2])
        if m.dtype is not dt.float32 or m.ndim != 4 or any(x not in (1, f) for x, f in zip(m.shape, full)):
            raise ShapeError(f"attention: the mask must be float32 of 4 dims, each 1 or {full}, got {m}")
    return Aval((b, hq, lq, v.shape[3]), q.dtype)


def visible(lq: int, lk: int, left, right) -> np.ndarray:
    """[Lq, Lk] bool: which keys each query sees (top-left aligned band)."""
    rel = np.arange(lk)[None, :] - np.arange(lq)[:, None]
    keep = np.ones((lq, lk), bool)
    if left is not None:
        keep &= rel >= -left
    if right is not None:
        keep &= rel <= right
    return keep


def attention_oracle(xs, scale, softcap, left, right, zero_empty):
    q, k, v = (x.astype(np.float64) for x in xs[:3])
    ratio = q.shape[1] // k.shape[1]
    k = np.repeat(k, ratio, axis=1)
    v = np.repeat(v, ratio, axis=1)
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if len(xs) == 4:
        s = s + xs[3].astype(np.float64)
    s = np.where(visible(q.shape[2], k.shape[2], left, right), s, -np.inf)
    m = s.max(-1, keepdims=True)
    if zero_empty:
        m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.matmul(e, v) / total
    if zero_empty:
        out = np.where(total > 0, out, 0.0)
    return out.astype(xs[0].dtype)


_register("attention", "attention", attention_rule, attention_oracle, arity=None, params=PARAMS,
          fusion=Fusion.ATTENTION)
