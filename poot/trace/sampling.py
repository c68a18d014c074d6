"""`pt.nn.sample`: a token index drawn from each row of logits (greedy, temperature, top-k, top-p,
min-p), recorded as one "sample" equation (poot/graph/sampling.py holds the exact semantics).

The call is brought to the primitive's form: the logits as float32 [rows, V] (leading axes folded),
and each row's 32 random bits drawn from `key` with `pt.random.bits` (Threefry: the same bits on every
device). The draw uses integer weights and sums, so a key gives the same tokens on every device.
"""
from __future__ import annotations

import math
import operator

from poot import dtypes as dt
from poot.errors import DTypeError, SamplingError, ShapeError, api_boundary
from poot.graph.sampling import greedy_temperature, scaled
from poot.trace.creation import zeros
from poot.trace.lazy import record
from poot.trace.movement import arr
from poot.trace.promote import wrap
from poot.trace.random import bits

OP = "sample"


def _check(temperature, top_k, top_p, min_p) -> tuple[float, int, float, float]:
    try:
        temperature, top_p, min_p = float(temperature), float(top_p), float(min_p)
        top_k = operator.index(top_k)
    except TypeError:
        raise SamplingError(f"{OP}: temperature, top_p and min_p must be numbers and top_k an integer, got "
                            f"{temperature!r}, {top_p!r}, {min_p!r}, {top_k!r}") from None
    if not (temperature >= 0 and math.isfinite(temperature)):
        raise SamplingError(f"{OP}: temperature must be a finite number >= 0, got {temperature}")
    if top_k < 0:
        raise SamplingError(f"{OP}: top_k must be >= 0 (0: off), got {top_k}")
    if not 0 < top_p <= 1:
        raise SamplingError(f"{OP}: top_p must be in (0, 1], got {top_p}")
    if not 0 <= min_p <= 1:
        raise SamplingError(f"{OP}: min_p must be in [0, 1], got {min_p}")
    return temperature, top_k, top_p, min_p


@api_boundary
def sample(logits, key=None, *, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0):
    """Token indices (int64, shape logits.shape[:-1]) drawn from softmax(logits / temperature) over
    the last axis, after top-k, top-p (nucleus) and min-p, in that order; temperature 0 or top_k 1 is
    greedy (the first index of the maximum; `key` may then be None), and so is a temperature whose
    float32 reciprocal overflows (below about 2.9e-39): the limit of the draw as the temperature goes to 0.

    - NaN logits count as -inf; a row of -inf only gives index 0.
    - top_k keeps the logits >= the k-th largest (ties stay); top_p keeps a token while the tokens
      more likely than it hold less than top_p of the mass (ties stay or go together; the most likely
      token always stays); min_p keeps the tokens at least min_p times as likely as the most likely.
    - `key` is a `pt.random.key`; the same key and logits give the same tokens on every device.
      A token whose probability is below about 2**-24 of the most likely one's is never drawn.
    """
    temperature, top_k, top_p, min_p = _check(temperature, top_k, top_p, min_p)
    l = arr(logits)
    if not dt.is_float(l.dtype):
        raise DTypeError(f"{OP}: logits must be floating point, got {l.dtype.name}")
    if l.ndim == 0 or l.shape[-1] == 0:
        raise ShapeError(f"{OP}: logits need a last axis of at least one token, got shape {l.shape}")
    batch, vocab = l.shape[:-1], l.shape[-1]
    rows = math.prod(batch)
    greedy = top_k == 1 or greedy_temperature(temperature)    # 0, or a float32 reciprocal that overflows
    if greedy:
        words = zeros((rows,), dtype=dt.uint32, device=l.device)
    elif key is None:
        raise SamplingError(f"{OP}: drawing with temperature {temperature} needs a key (pt.random.key(seed)); "
                            "only greedy sampling (temperature 0) takes none")
    else:
        words = bits(key, (rows,))
        if words.device != l.device:
            raise SamplingError(f"{OP}: the key is on '{words.device}' and the logits on '{l.device}'")
    flat = l.astype(dt.float32)
    if flat.shape != (rows, vocab):
        flat = flat.reshape((rows, vocab))
    p24, mp24 = scaled(top_p, min_p)
    top_k = top_k if top_k < vocab else 0                      # keeps every token: off (and fits 32 bits)
    params = {"greedy": greedy, "temperature": 1.0 if greedy else temperature, "top_k": top_k,
              "p24": p24, "mp24": mp24}
    out = wrap(record(OP, (flat._node, words._node), params))
    return out if out.shape == batch else out.reshape(batch)
