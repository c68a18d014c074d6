"""The Bernoulli distribution (jax.scipy.stats.bernoulli): P(1) = p."""
import math

from poot.errors import api_boundary
from poot.scipy.special import _floats, _xlogy
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


@api_boundary
def logpmf(k, p, loc=0):
    """xlogy(k, p) + xlog1py(1 - k, -p); -inf off {0, 1}."""
    (k, p, loc), d = _floats("bernoulli.logpmf", k, p, loc)
    x = k - loc
    r = _xlogy(x, p, ew.log) + _xlogy(1.0 - x, -p, ew.log1p)
    return where((x != 0.0) & (x != 1.0), -math.inf, r).astype(d)


@api_boundary
def pmf(k, p, loc=0):
    """exp(logpmf)."""
    return ew.exp(logpmf(k, p, loc))


@api_boundary
def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1 on; NaN for p outside [0, 1]."""
    (k, p), d = _floats("bernoulli.cdf", k, p)
    r = where(k < 0.0, 0.0, where(k < 1.0, 1.0 - p, 1.0))
    return where(ew.isnan(k) | (p < 0.0) | (p > 1.0) | ew.isnan(p), math.nan, r).astype(d)


@api_boundary
def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q (-1 at q = 0, as SciPy); NaN outside [0, 1]."""
    (q, p), d = _floats("bernoulli.ppf", q, p)
    r = where(q <= 1.0 - p, 0.0, 1.0).astype(q.dtype)
    r = where(q == 0.0, -1.0, r)
    return where((q < 0.0) | (q > 1.0) | (p < 0.0) | (p > 1.0) | ew.isnan(q) | ew.isnan(p), math.nan,
                 r).astype(d)
