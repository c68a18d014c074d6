"""The beta distribution (jax.scipy.stats.beta): the density y**(a-1) (1-y)**(b-1) / B(a, b) / scale
with y = (x - loc) / scale in [0, 1]. Its CDF needs the incomplete beta function, which is not built."""
import math

from poot.errors import api_boundary
from poot.scipy.special import _betaln, _standardized, _xlogy
from poot.trace import elementwise as ew
from poot.trace.selection import where

__all__ = ["logpdf", "pdf"]


@api_boundary
def logpdf(x, a, b, loc=0, scale=1):
    """xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - log(scale); -inf outside [0, 1]."""
    y, scale, (a, b), d = _standardized("beta.logpdf", x, loc, scale, a, b)
    r = _xlogy(a - 1.0, y, ew.log) + _xlogy(b - 1.0, -y, ew.log1p) - _betaln(a, b) - ew.log(scale)
    return where((y < 0.0) | (y > 1.0), -math.inf, r).astype(d)


@api_boundary
def pdf(x, a, b, loc=0, scale=1):
    """exp(logpdf)."""
    return ew.exp(logpdf(x, a, b, loc, scale))
