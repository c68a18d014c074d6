"""The normal distribution (jax.scipy.stats.norm): N(loc, scale**2)."""
import math

from poot.errors import api_boundary
from poot.scipy.special import _floats, _log_ndtr, _ndtr, _ndtri, _standardized
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


@api_boundary
def logpdf(x, loc=0, scale=1):
    """log of the normal density: -(x - loc)**2 / (2 scale**2) - log(scale) - log(2 pi) / 2."""
    z, scale, _, d = _standardized("norm.logpdf", x, loc, scale)
    return (-0.5 * z * z - ew.log(scale) - 0.5 * math.log(2 * math.pi)).astype(d)


@api_boundary
def pdf(x, loc=0, scale=1):
    """The normal density exp(logpdf)."""
    z, scale, _, d = _standardized("norm.pdf", x, loc, scale)
    return (ew.exp(-0.5 * z * z) / (scale * math.sqrt(2 * math.pi))).astype(d)


@api_boundary
def cdf(x, loc=0, scale=1):
    """P(X <= x) = ndtr((x - loc) / scale)."""
    z, _, _, d = _standardized("norm.cdf", x, loc, scale)
    return _ndtr(z).astype(d)


@api_boundary
def logcdf(x, loc=0, scale=1):
    """log P(X <= x) = log_ndtr((x - loc) / scale), finite far into the lower tail."""
    z, _, _, d = _standardized("norm.logcdf", x, loc, scale)
    return _log_ndtr(z).astype(d)


@api_boundary
def sf(x, loc=0, scale=1):
    """P(X > x) = ndtr(-(x - loc) / scale), accurate in the upper tail."""
    z, _, _, d = _standardized("norm.sf", x, loc, scale)
    return _ndtr(-z).astype(d)


@api_boundary
def logsf(x, loc=0, scale=1):
    """log P(X > x) = log_ndtr(-(x - loc) / scale)."""
    z, _, _, d = _standardized("norm.logsf", x, loc, scale)
    return _log_ndtr(-z).astype(d)


def _quantile(q, loc, scale, flip):
    upper = (q > 0.5) != flip
    tail = where(q > 0.5, 1.0 - q, q)
    x = _ndtri(where(flip, 1.0 - 2.0 * q, 2.0 * q - 1.0), tail, upper)
    x = where((q < 0.0) | (q > 1.0), math.nan, x)
    return x * scale + loc


@api_boundary
def ppf(q, loc=0, scale=1):
    """The quantile: loc + scale * ndtri(q) (-inf at 0, inf at 1, NaN outside [0, 1])."""
    (q, loc, scale), d = _floats("norm.ppf", q, loc, scale)
    return _quantile(q, loc, scale, False).astype(d)


@api_boundary
def isf(q, loc=0, scale=1):
    """The inverse of sf: loc - scale * ndtri(q), accurate for tiny q."""
    (q, loc, scale), d = _floats("norm.isf", q, loc, scale)
    return _quantile(q, loc, scale, True).astype(d)
