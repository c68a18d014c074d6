"""`pt.scipy`: JAX's `jax.scipy` names over poot's functions. `pt.scipy.special` holds SciPy's special
functions (gammaln, digamma, erfc, ndtr, logsumexp, gammainc...), `pt.scipy.stats` the distributions'
log-densities, densities, CDFs and quantiles (norm, t, gamma, beta, poisson, multivariate_normal...).
Each is composed from poot's array operations: eager, `@pt.jit`, `pt.vmap` and `pt.grad` work
through them on every device. A name SciPy has and these modules do not is not built."""
from poot.scipy import special, stats

__all__ = ["special", "stats"]
