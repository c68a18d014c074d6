"""Student's t distribution (jax.scipy.stats.t), df degrees of freedom."""

from poot.errors import api_boundary
from poot.scipy.special import _betaln, _standardized
from poot.trace import elementwise as ew

__all__ = ["logpdf", "pdf"]


@api_boundary
def logpdf(x, df, loc=0, scale=1):
    """-(df + 1)/2 log1p(z**2 / df) - log(sqrt(df) B(df/2, 1/2)) - log(scale), z = (x - loc) / scale
    (the beta function keeps large df exact: the normal density is the limit)."""
    z, scale, (df,), d = _standardized("t.logpdf", x, loc, scale, df)
    r = -(df + 1.0) * 0.5 * ew.log1p(z * z / df) - 0.5 * ew.log(df) - _betaln(0.5 * df, 0.5) - ew.log(scale)
    return r.astype(d)


@api_boundary
def pdf(x, df, loc=0, scale=1):
    """exp(logpdf)."""
    return ew.exp(logpdf(x, df, loc, scale))
