"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): x and mean of
shape (..., n), cov of shape (..., n, n), batched by broadcasting."""
import math

from poot.errors import ArgumentError, ShapeError, api_boundary
from poot.scipy.special import _floats
from poot.trace import array_api_linalg as _la
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace.creation import eye
from poot.trace.linalg import diagonal

__all__ = ["logpdf", "pdf"]


@api_boundary
def logpdf(x, mean, cov, allow_singular=None):
    """-(n log(2 pi) + log det(cov) + (x - mean)^T cov^-1 (x - mean)) / 2, through the Cholesky
    factor L of cov: log det = 2 sum(log diag L), the quadratic form |L^-1 (x - mean)|^2. cov must be
    positive definite (`allow_singular=True` is not built). A scalar cov, or a 1-d cov of n variances, is a
    diagonal covariance, as in SciPy."""
    if allow_singular:
        raise ArgumentError("multivariate_normal.logpdf: allow_singular=True is not supported "
                            "(cov must be positive definite)")
    (x, mean, cov), d = _floats("multivariate_normal.logpdf", x, mean, cov)
    if x.ndim == 0:
        raise ShapeError("multivariate_normal.logpdf: x must have at least one axis (..., n)")
    n = x.shape[-1]
    if cov.ndim < 2:
        cov = cov[..., None] * eye(n, dtype=cov.dtype, device=cov.device)
    if cov.shape[-2:] != (n, n):
        raise ShapeError(f"multivariate_normal.logpdf: cov must be (..., {n}, {n}) for x of shape "
                         f"{tuple(x.shape)}, got {tuple(cov.shape)}")
    L = _la.cholesky(cov)
    r = (x - mean)[..., None]
    z = _la.solve(L, r)[..., 0]
    maha = red.sum(z * z, axis=-1)
    logdet = 2.0 * red.sum(ew.log(diagonal(L, 0, -2, -1)), axis=-1)
    return (-0.5 * (n * math.log(2 * math.pi) + logdet + maha)).astype(d)


@api_boundary
def pdf(x, mean, cov, allow_singular=None):
    """exp(logpdf)."""
    return ew.exp(logpdf(x, mean, cov, allow_singular))
