"""The logistic distribution (jax.scipy.stats.logistic)."""
from poot.errors import api_boundary
from poot.scipy.special import _floats, _logit, _standardized
from poot.trace import elementwise as ew
from poot.trace import nn as _nn

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


@api_boundary
def logpdf(x, loc=0, scale=1):
    """log of the logistic density, -z - 2 log(1 + exp(-z)) - log(scale) with z = (x - loc) / scale,
    written symmetric in z so that neither tail overflows."""
    z, scale, _, d = _standardized("logistic.logpdf", x, loc, scale)
    az = ew.abs(z)
    return (-az - 2.0 * ew.log1p(ew.exp(-az)) - ew.log(scale)).astype(d)


@api_boundary
def pdf(x, loc=0, scale=1):
    """The logistic density exp(logpdf)."""
    return ew.exp(logpdf(x, loc, scale))


@api_boundary
def cdf(x, loc=0, scale=1):
    """expit((x - loc) / scale)."""
    z, _, _, d = _standardized("logistic.cdf", x, loc, scale)
    return _nn.sigmoid(z).astype(d)


@api_boundary
def logcdf(x, loc=0, scale=1):
    """log expit((x - loc) / scale) = -softplus(-z)."""
    z, _, _, d = _standardized("logistic.logcdf", x, loc, scale)
    return _nn.log_sigmoid(z).astype(d)


@api_boundary
def sf(x, loc=0, scale=1):
    """expit(-(x - loc) / scale)."""
    z, _, _, d = _standardized("logistic.sf", x, loc, scale)
    return _nn.sigmoid(-z).astype(d)


@api_boundary
def logsf(x, loc=0, scale=1):
    """log expit(-(x - loc) / scale)."""
    z, _, _, d = _standardized("logistic.logsf", x, loc, scale)
    return _nn.log_sigmoid(-z).astype(d)


@api_boundary
def ppf(q, loc=0, scale=1):
    """loc + scale * logit(q)."""
    (q, loc, scale), d = _floats("logistic.ppf", q, loc, scale)
    return (_logit(q) * scale + loc).astype(d)


@api_boundary
def isf(q, loc=0, scale=1):
    """loc - scale * logit(q)."""
    (q, loc, scale), d = _floats("logistic.isf", q, loc, scale)
    return (loc - _logit(q) * scale).astype(d)
