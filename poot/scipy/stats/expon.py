"""The exponential distribution (jax.scipy.stats.expon): density exp(-(x - loc) / scale) / scale
for x >= loc."""
import math

from poot.errors import api_boundary
from poot.scipy.special import _floats, _standardized
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


@api_boundary
def logpdf(x, loc=0, scale=1):
    """-(x - loc) / scale - log(scale) on the support, -inf below loc."""
    z, scale, _, d = _standardized("expon.logpdf", x, loc, scale)
    return where(z < 0.0, -math.inf, -z - ew.log(scale)).astype(d)


@api_boundary
def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return ew.exp(logpdf(x, loc, scale))


@api_boundary
def cdf(x, loc=0, scale=1):
    """1 - exp(-z) as -expm1(-z), 0 below loc."""
    z, _, _, d = _standardized("expon.cdf", x, loc, scale)
    return where(z < 0.0, 0.0, -ew.expm1(-z)).astype(d)


@api_boundary
def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-z)), -inf below loc."""
    z, _, _, d = _standardized("expon.logcdf", x, loc, scale)
    zs = where(z > 0.0, z, 1.0)
    r = where(zs > math.log(2.0), ew.log1p(-ew.exp(-zs)), ew.log(-ew.expm1(-zs)))
    return where(z > 0.0, r, where(ew.isnan(z), math.nan, -math.inf)).astype(d)


@api_boundary
def sf(x, loc=0, scale=1):
    """exp(-z), 1 below loc."""
    z, _, _, d = _standardized("expon.sf", x, loc, scale)
    return where(z < 0.0, 1.0, ew.exp(-z)).astype(d)


@api_boundary
def logsf(x, loc=0, scale=1):
    """-z, 0 below loc."""
    z, _, _, d = _standardized("expon.logsf", x, loc, scale)
    return where(z < 0.0, 0.0, -z).astype(d)


@api_boundary
def ppf(q, loc=0, scale=1):
    """loc - scale * log1p(-q) (NaN outside [0, 1])."""
    (q, loc, scale), d = _floats("expon.ppf", q, loc, scale)
    r = loc - scale * ew.log1p(-q)
    return where((q < 0.0) | (q > 1.0), math.nan, r).astype(d)


@api_boundary
def isf(q, loc=0, scale=1):
    """loc - scale * log(q)."""
    (q, loc, scale), d = _floats("expon.isf", q, loc, scale)
    r = loc - scale * ew.log(q)
    return where((q < 0.0) | (q > 1.0), math.nan, r).astype(d)
