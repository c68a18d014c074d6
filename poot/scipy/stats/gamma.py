"""The gamma distribution (jax.scipy.stats.gamma): shape a, density
y**(a-1) exp(-y) / (Gamma(a) scale) with y = (x - loc) / scale >= 0."""
import math

from poot.errors import api_boundary
from poot.scipy.incomplete_gamma import _gammainc_value, _gammaincc_value
from poot.scipy.special import _gammaln, _standardized, _xlogy
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


@api_boundary
def logpdf(x, a, loc=0, scale=1):
    """xlogy(a - 1, y) - y - gammaln(a) - log(scale); -inf below loc."""
    y, scale, (a,), d = _standardized("gamma.logpdf", x, loc, scale, a)
    r = _xlogy(a - 1.0, y, ew.log) - y - _gammaln(a) - ew.log(scale)
    return where(y < 0.0, -math.inf, r).astype(d)


@api_boundary
def pdf(x, a, loc=0, scale=1):
    """exp(logpdf)."""
    return ew.exp(logpdf(x, a, loc, scale))


def _y(op, x, a, loc, scale):
    y, _, (a,), d = _standardized(op, x, loc, scale, a)
    return ew.maximum(y, 0.0), a, d


def _log_probability(p, complement):
    """log(p), as log1p(-complement) where p > 0.5 (there 1 - complement is the more exact p)."""
    return where(p > 0.5, ew.log1p(-complement), ew.log(p))


@api_boundary
def cdf(x, a, loc=0, scale=1):
    """gammainc(a, y), 0 below loc."""
    y, a, d = _y("gamma.cdf", x, a, loc, scale)
    return _gammainc_value(a, y).astype(d)


@api_boundary
def logcdf(x, a, loc=0, scale=1):
    """log(gammainc(a, y)), as log1p(-gammaincc(a, y)) where that is the more exact."""
    y, a, d = _y("gamma.logcdf", x, a, loc, scale)
    return _log_probability(_gammainc_value(a, y), _gammaincc_value(a, y)).astype(d)


@api_boundary
def sf(x, a, loc=0, scale=1):
    """gammaincc(a, y), 1 below loc."""
    y, a, d = _y("gamma.sf", x, a, loc, scale)
    return _gammaincc_value(a, y).astype(d)


@api_boundary
def logsf(x, a, loc=0, scale=1):
    """log(gammaincc(a, y)), as log1p(-gammainc(a, y)) where that is the more exact."""
    y, a, d = _y("gamma.logsf", x, a, loc, scale)
    return _log_probability(_gammaincc_value(a, y), _gammainc_value(a, y)).astype(d)
