"""Token sampling for the decoder: a SamplingConfig and `sample`, which draws with `pt.nn.sample` (one
"sample" op, run by the sampling kernels in kernels/sampling/: greedy argmax, or temperature, top-k,
top-p and min-p with a `pt.random` key; the same key gives the same tokens on every device)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

import poot as pt

from poot.errors import SamplingError


@dataclasses.dataclass(frozen=True)
class SamplingConfig:
    """temperature 0 (or top_k 1) is greedy decoding; top_k 0, top_p 1 and min_p 0 turn those off.
    The order is the usual one: temperature, then top-k, top-p, min-p on what is left."""
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0

    def __post_init__(self):
        _normalize(self)
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
        """temperature 0, top_k 1, or a temperature too small for its float32 reciprocal (pt.nn.sample's rule)."""
        if self.top_k == 1 or self.temperature == 0:
            return True
        with np.errstate(over="ignore"):       # pt.nn.sample's rule: float32(1 / temperature) overflows
            return not np.isfinite(np.float32(1.0 / self.temperature))

    def __str__(self) -> str:
        """"greedy", or the active settings ("temperature 0.8, top-p 0.9")."""
        if self.greedy:
            return "greedy"
        parts = [f"temperature {self.temperature:g}"]
        parts += [f"top-k {self.top_k}"] if self.top_k else []
        parts += [f"top-p {self.top_p:g}"] if self.top_p < 1 else []
        parts += [f"min-p {self.min_p:g}"] if self.min_p > 0 else []
        return ", ".join(parts)


def _normalize(cfg: SamplingConfig) -> None:
    """Store temperature, top_p and min_p as floats and top_k as an int, or refuse them: a string or None
    would otherwise fail as a bare TypeError at the comparisons, and top_k 2.5 only inside the draw."""
    for name in ("temperature", "top_p", "min_p"):
        v = getattr(cfg, name)
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, (bool, np.bool_)):
            raise SamplingError(f"SamplingConfig: {name} must be a number, got {v!r}")
        object.__setattr__(cfg, name, float(v))
    k = cfg.top_k
    if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
        raise SamplingError(f"SamplingConfig: top_k must be an int >= 0 (0: off), got {k!r}")
    object.__setattr__(cfg, "top_k", int(k))


GREEDY = SamplingConfig(temperature=0.0)


def sample(logits, key, cfg: SamplingConfig = SamplingConfig()):
    """The next token (int64, logits.shape[:-1]) from logits over the last axis: greedy when cfg.greedy
    (key unused), otherwise a draw from the processed distribution with `key` (a `pt.random.key`)."""
    return pt.nn.sample(logits, None if cfg.greedy else key, temperature=cfg.temperature, top_k=cfg.top_k,
                        top_p=cfg.top_p, min_p=cfg.min_p)
