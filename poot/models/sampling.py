"""Token sampling on poot arrays: greedy, temperature, top-k, top-p (nucleus) and min-p, drawing with
`pt.random` keys (Threefry bits, identical on every device).

Determinism across devices: probabilities are turned into fixed-point integers (`q = floor(2**24 *
exp(l - max))`, 0 for masked tokens), and every sum over the vocabulary (the top-p mass, the total,
the cumulative mass the draw walks) is an int64 sum, which is associative: any reduction or scan
order a device picks gives the same integers, so the same key and logits select the same token on
every device. A token whose probability is below 2**-24 of the most likely one's is never drawn.

NaN logits are treated as -inf everywhere (a NaN token is never chosen; if every logit is NaN,
greedy picks token 0). Greedy takes the first index among equal maxima.
"""
from __future__ import annotations

import dataclasses
import math

import poot as pt

from poot.errors import PootError

_SCALE = float(2 ** 24)


class SamplingError(PootError):
    """Sampling parameters out of range."""


@dataclasses.dataclass(frozen=True)
class SamplingConfig:
    """temperature 0 (or top_k 1) is greedy decoding; top_k 0, top_p 1 and min_p 0 turn those off.
    The order is the usual one: temperature, then top-k, top-p, min-p on what is left."""
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0

    def __post_init__(self):
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise SamplingError(f"temperature must be a finite number >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise SamplingError(f"top_k must be >= 0 (0: off), got {self.top_k}")
        if not 0 < self.top_p <= 1:
            raise SamplingError(f"top_p must be in (0, 1], got {self.top_p}")
        if not 0 <= self.min_p <= 1:
            raise SamplingError(f"min_p must be in [0, 1], got {self.min_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0 or self.top_k == 1


GREEDY = SamplingConfig(temperature=0.0)


def _clean(logits):
    """float32 logits with NaN replaced by -inf."""
    l = pt.asarray(logits).astype(pt.float32)
    return pt.where(pt.isnan(l), -pt.inf, l)


def greedy(logits):
    """argmax over the last axis (int64): the first index among equal maxima; NaN counts as -inf."""
    return pt.argmax(_clean(logits), axis=-1)


def top_k_mask(logits, k: int):
    """True for the tokens whose logit is >= the k-th largest (ties at the threshold are kept, so
    more than k tokens may stay). k <= 0 or k >= vocabulary: all True."""
    l = _clean(logits)
    v = l.shape[-1]
    if k <= 0 or k >= v:
        return pt.ones(l.shape, dtype=pt.bool, device=l.device)
    thr = pt.sort(l, axis=-1)[..., v - k:v - k + 1]
    return l >= thr


def fixed_point_probs(logits):
    """floor(2**24 * exp(l - max(l))) as int64 along the last axis: the unnormalized probabilities
    in fixed point (the most likely token gets 2**24, -inf and NaN get 0)."""
    l = _clean(logits)
    m = pt.max(l, axis=-1, keepdims=True)
    m = pt.where(pt.isfinite(m), m, 0.0)
    return pt.floor(pt.exp(l - m) * _SCALE).astype(pt.int64)


def top_p_mask(logits, p: float):
    """True for the tokens of the nucleus: token i is kept when the probability mass of the tokens
    strictly more likely than it is < p (ties are kept or dropped together, and the most likely
    token always stays). Sums are of fixed-point integers, so the mask does not depend on the order
    a device sums in. p >= 1: every token with a nonzero fixed-point probability."""
    q = fixed_point_probs(logits)
    if p >= 1:
        return q > 0
    total = pt.sum(q, axis=-1, keepdims=True)
    desc = pt.flip(pt.sort(q, axis=-1), axis=-1)
    before = pt.cumsum(desc, axis=-1) - desc          # mass of the tokens sorted before each one
    inside = before.astype(pt.float32) < total.astype(pt.float32) * float(p)
    big = 2 ** 62
    thr = pt.min(pt.where(inside, desc, big), axis=-1, keepdims=True)
    return (q >= thr) & (q > 0)


def min_p_mask(logits, min_p: float):
    """True for the tokens with probability >= min_p * the largest probability."""
    l = _clean(logits)
    m = pt.max(l, axis=-1, keepdims=True)
    if min_p <= 0:
        return l > -pt.inf
    return (pt.exp(l - m) >= float(min_p)) & (l > -pt.inf)


def processed_logits(logits, cfg: SamplingConfig):
    """The logits after temperature, top-k, top-p and min-p, with removed tokens at -inf."""
    l = _clean(logits)
    if cfg.temperature not in (0.0, 1.0):
        l = l / float(cfg.temperature)
    if cfg.top_k > 0:
        l = pt.where(top_k_mask(l, cfg.top_k), l, -pt.inf)
    if cfg.top_p < 1:
        l = pt.where(top_p_mask(l, cfg.top_p), l, -pt.inf)
    if cfg.min_p > 0:
        l = pt.where(min_p_mask(l, cfg.min_p), l, -pt.inf)
    return l


def categorical(key, logits):
    """One token index drawn from softmax(logits) (1-D logits) with key `key`: inverse-CDF sampling
    over the fixed-point probabilities in index order, with a uniform integer r in [0, total) made
    from 32 random bits by an exact 64-bit multiply-shift (floor(u * total / 2**32))."""
    q = fixed_point_probs(logits)
    total = pt.sum(q)
    cum = pt.cumsum(q)
    u = pt.random.bits(key, ()).astype(pt.int64)
    hi = total // 65536                                # total < 2**42: hi < 2**26, lo < 2**16
    lo = total - hi * 65536
    r = (u * hi + (u * lo) // 65536) // 65536          # == floor(u * total / 2**32), no overflow
    idx = pt.sum((cum <= r).astype(pt.int64))
    return pt.minimum(idx, q.shape[-1] - 1)


def sample(logits, key, cfg: SamplingConfig = SamplingConfig()):
    """The next token (0-d int64) from 1-D logits: greedy when cfg.greedy (key unused), otherwise a
    draw from the processed distribution with `key` (a `pt.random.key`)."""
    if cfg.greedy:
        return greedy(logits)
    return categorical(key, processed_logits(logits, cfg))
