"""The "sample" primitive: one token index drawn from each row of logits, after temperature, top-k,
top-p and min-p, or the row's argmax (greedy).

Why one primitive: composed from sorts, scans and reductions, a draw over a 150k-token vocabulary is a
dozen kernels and two full sorts; as one opaque op the planner hands it to the sampling kernels
(kernels/sampling/), which read the row a few times and write one integer.

A temperature so small that its float32 reciprocal overflows (below about 2.9e-39) is greedy too: the
factor the gaps are scaled by would be inf, and the argmax is what sampling tends to as the temperature goes to 0
(`greedy_temperature`; the tracer, the oracle and the kernels' launch all use it).

Operands: logits [R, V] float32 (V >= 1) and bits [R] uint32, the row's 32 random bits (the tracer,
poot/trace/sampling.py, draws them with `pt.random`, so they are the same on every device). Result: [R]
int64. Parameters: `greedy` (bool), `temperature` (> 0; unless it is 1, each gap m - l below the row's
maximum is multiplied by its float32 reciprocal, a product every device rounds alike: scaling the gap
rather than the logit cannot overflow into inf ties however small the temperature),
`top_k` (0: off), `p24` (top-p as floor(p * 2**24 + 1/2), at least 1; 2**24: off) and `mp24` (min-p as
ceil(min_p * 2**24); 0: off).

Semantics, exactly (the oracle below is the reference every device matches):
- NaN logits count as -inf, and -0 as +0; a greedy row gives the first index of its maximum (0 when
  every logit is -inf).
- top-k keeps the logits >= the k-th largest (ties at the threshold stay, so more than k may).
- Each kept token's weight is q ~ floor(2**24 * exp((l - m) / T)) (m the row's maximum, T the temperature;
  the maximum gets 2**24, -inf gets 0), computed from (m - l) * float32(1 / T) in integer arithmetic
  (`weights`). Every sum below is an integer
  sum, so it does not depend on the order a device adds in: every device draws the same token.
- top-p keeps the tokens whose q is >= v, v the smallest integer in [0, 2**24] for which the mass
  sum(q > v) is below floor(total * p24 / 2**24) (total: the sum of the kept q): a token stays while
  the tokens more likely than it hold less than p of the mass; ties stay or go together.
- min-p keeps q >= mp24, and a token with q = 0 is never drawn.
- The draw: r = floor(bits * kept / 2**32) (kept: the sum of the remaining q), and the token is the
  first index whose running sum of remaining q exceeds r. A row with nothing left gives its argmax.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError
from poot.graph.aval import Aval
from poot.graph.ops import _register
from poot.graph.registry import Fusion

PARAMS = ("greedy", "temperature", "top_k", "p24", "mp24")
ONE = 1 << 24


def sample_rule(avals, greedy, temperature, top_k, p24, mp24):
    logits, bits = avals
    if logits.dtype is not dt.float32 or logits.ndim != 2 or logits.shape[1] < 1:
        raise ShapeError(f"sample: logits must be float32 [rows, vocabulary >= 1], got {logits}")
    if bits.dtype is not dt.uint32 or bits.shape != logits.shape[:1]:
        raise DTypeError(f"sample: bits must be uint32 [{logits.shape[0]}], got {bits}")
    if not (temperature > 0 and 0 <= top_k and 1 <= p24 <= ONE and 0 <= mp24 <= ONE):
        raise ShapeError(f"sample: parameters out of range (temperature {temperature}, top_k {top_k}, "
                         f"p24 {p24}, mp24 {mp24})")
    return Aval(logits.shape[:1], dt.int64)


def greedy_temperature(temperature: float) -> bool:
    """Whether `temperature` (>= 0) draws as greedy: 0, or so small that float32(1 / temperature)
    overflows to inf."""
    if temperature == 0:
        return True
    with np.errstate(over="ignore"):
        return not np.isfinite(np.float32(1.0 / temperature))


def cleaned(logits) -> np.ndarray:
    """float32 logits with NaN as -inf and -0 as +0 (the temperature scales the gaps, in `weights`)."""
    l = np.where(np.isnan(logits), -np.inf, logits).astype(np.float32)
    return np.where(l == 0, np.float32(0), l)


def inverse_temperature(temperature: float) -> np.float32 | None:
    """float32(1 / temperature), the factor each gap below the maximum is scaled by; None for 1 (no
    scaling, so temperature 1 rounds exactly like unscaled logits)."""
    return None if temperature == 1.0 else np.float32(1.0 / temperature)


LOG2E_Q30 = 1549082005                                                  # round(log2(e) * 2**30)
POLY = tuple(round(math.log(2) ** k / math.factorial(k) * 2 ** 32) for k in range(9))  # 2**y, y in [0, 1)


def weights(l: np.ndarray, inv_temperature: np.float32 | None = None) -> np.ndarray:
    """The fixed-point weight floor(2**24 * 2**(-d * log2(e))) of each logit under its row's maximum m,
    d = (m - l) * inv_temperature, as int64: after the float32 subtraction (and product), every step is
    integer arithmetic (a degree-8 polynomial for 2**y in 24-bit fixed point), exact on every device.
    Within 1 of floor(2**24 * exp(-d)); the maximum gets 2**24; -inf, and d of 32 or more, get 0.
    The gap is scaled, not the logit: a large 1 / temperature then only pushes d past 32 (weight 0),
    where l * (1 / temperature) would overflow to inf and tie every positive logit."""
    m = l.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (m - l).astype(np.float32)
        if inv_temperature is not None:
            d = (d * np.float32(inv_temperature)).astype(np.float32)
        near = (l > -np.inf) & (d < 32)
        a = np.where(near, d * np.float32(ONE), 0).astype(np.uint64)
    ta = (a * np.uint64(LOG2E_Q30)) >> np.uint64(30)
    n = (ta + np.uint64(ONE - 1)) >> np.uint64(24)
    f = (n << np.uint64(24)) - ta
    acc = np.full(l.shape, POLY[8], np.uint64)
    for c in POLY[7::-1]:
        acc = np.uint64(c) + ((acc * f) >> np.uint64(24))
    q = (acc >> (n + np.uint64(8))).astype(np.int64)
    q = np.where(near, q, 0)
    return np.where((l == m) & (l > -np.inf), ONE, q).astype(np.int64)


def _top_p_floor(q: np.ndarray, p24: int) -> int:
    """The smallest v in [0, 2**24] with sum(q[q > v]) < floor(total * p24 / 2**24) (binary search,
    as the kernels run it)."""
    total = int(q.sum())
    if p24 >= ONE or total == 0:
        return 0
    limit = (total >> 24) * p24 + (((total & (ONE - 1)) * p24) >> 24)
    lo, hi = 0, ONE
    for _ in range(25):
        mid = (lo + hi) // 2
        if int(q[q > mid].sum()) < limit:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sample_row(logits, u: int, greedy, temperature, top_k, p24, mp24) -> int:
    """The token of one row (the oracle's definition)."""
    greedy = greedy or greedy_temperature(temperature)
    l = cleaned(logits)
    first = int(np.argmax(l))
    if greedy:
        return first
    v = l.shape[0]
    keep = np.ones(v, bool)
    if 0 < top_k < v:
        keep = l >= np.sort(l)[v - top_k]
    q = np.where(keep, weights(l, inverse_temperature(temperature)), 0)
    floor_q = max(mp24, 1, _top_p_floor(q, p24))
    w = np.where(q >= floor_q, q, 0)
    kept = int(w.sum())
    if kept == 0:
        return first
    r = (int(u) * kept) >> 32
    return int(np.argmax(np.cumsum(w) > r))


def sample_oracle(xs, greedy, temperature, top_k, p24, mp24):
    logits, bits = xs
    return np.array([sample_row(row, u, greedy, temperature, top_k, p24, mp24)
                     for row, u in zip(logits.astype(np.float32), bits)], np.int64).reshape(logits.shape[:1])


_register("sample", "sample", sample_rule, sample_oracle, arity=2, params=PARAMS, fusion=Fusion.SAMPLE)


def scaled(top_p: float, min_p: float) -> tuple[int, int]:
    """(p24, mp24): top-p and min-p as the op's 24-bit fixed-point parameters."""
    p24 = ONE if top_p >= 1 else min(ONE, max(1, int(np.floor(top_p * ONE + 0.5))))
    mp24 = 0 if min_p <= 0 else min(ONE, int(np.ceil(min_p * ONE)))
    return p24, mp24
