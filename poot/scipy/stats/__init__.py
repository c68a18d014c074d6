"""`pt.scipy.stats`: the distributions of `jax.scipy.stats` (`pt.scipy.stats.norm.logpdf(x, loc,
scale)`...), each a module of functions composed from `pt.scipy.special` and poot's array
operations, with JAX's signatures and SciPy's values (NaN for an invalid parameter, -inf log
density outside the support)."""
from poot.scipy.stats import (
    bernoulli,
    beta,
    expon,
    gamma,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
)

__all__ = ["bernoulli", "beta", "expon", "gamma", "logistic", "multivariate_normal", "norm", "poisson", "t"]
