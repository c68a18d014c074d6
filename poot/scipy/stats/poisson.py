"""The Poisson distribution (jax.scipy.stats.poisson), mean mu."""
import math

from poot.errors import api_boundary
from poot.scipy.incomplete_gamma import _gammaincc_value
from poot.scipy.special import _floats, _gammaln, _xlogy
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["cdf", "logpmf", "pmf"]


@api_boundary
def logpmf(k, mu, loc=0):
    """xlogy(k, mu) - gammaln(k + 1) - mu; -inf off the non-negative integers."""
    (k, mu, loc), d = _floats("poisson.logpmf", k, mu, loc)
    x = k - loc
    r = _xlogy(x, mu, ew.log) - _gammaln(x + 1.0) - mu
    return where((x < 0.0) | (x != ew.round(x)), -math.inf, r).astype(d)


@api_boundary
def pmf(k, mu, loc=0):
    """exp(logpmf)."""
    return ew.exp(logpmf(k, mu, loc))


@api_boundary
def cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu); 0 below loc."""
    (k, mu, loc), d = _floats("poisson.cdf", k, mu, loc)
    x = k - loc
    p = _gammaincc_value(ew.floor(ew.maximum(x, 0.0)) + 1.0, mu)
    return where(x < 0.0, 0.0, p).astype(d)
