"""NumPy's Generator distributions beyond uniform/normal/exponential, drawn lazily from poot's
counter-based bits (poot/trace/random.py) so they run eagerly and inside @pt.jit alike.

Every function takes `next_key`, the Generator's bit source: a callable returning a fresh key per
call. Parameters broadcast against `size` as NumPy's do; parameters given as host values are
checked now (NumPy's ValueError cases raise DomainError naming the parameter); lazy poot arrays
can't be checked without running them.

The draws themselves (building blocks and the rejection samplers, which have no host loop) are in
poot/trace/random_samplers.py; this module holds NumPy's signatures, shapes and parameter checks.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DomainError, PootError, ShapeError
from poot.graph.host import LinAlgError
from poot import trace as tr     # the namespace (a module of this layer, read at call time)
from poot.trace import array_api_linalg as la
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.random_samplers import (POISSON_LAM_MAX, beta_of, binomial_of, box_muller, dirichlet_of, gamma_of,
                                         open_unit, poisson_of, std_exponential, std_normal, uniforms, unit,
                                         vonmises_of)


# --- parameters ------------------------------------------------------------------------------------
def size_shape(size) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(s) for s in size)


def _shape_of_param(p) -> tuple:
    return p.shape if isinstance(p, Array) else np.shape(p)


def out_shape(op: str, size, *params) -> tuple:
    """`size`, which every parameter must broadcast to, or the parameters' broadcast shape."""
    shapes = [_shape_of_param(p) for p in params]
    if size is None:
        return mv.broadcast_shapes(*shapes) if shapes else ()
    shape = size_shape(size)
    try:
        full = mv.broadcast_shapes(shape, *shapes)
    except PootError:
        full = None
    if full != shape:
        raise ShapeError(f"Generator.{op}: parameter shapes {shapes} do not broadcast to size {shape}")
    return shape


def check(op: str, name: str, value, bad, what: str) -> None:
    """Raise DomainError when the host parameter `value` has an element where `bad` holds."""
    if isinstance(value, Array):
        return
    v = np.asarray(value, dtype=np.float64)
    if np.any(bad(v)):
        raise DomainError(f"Generator.{op}: {what} (parameter {name!r})")


def below(op, name, value, limit=0.0):
    check(op, name, value, lambda v: v < limit, f"{name} < {limit:g}")


def not_positive(op, name, value):
    check(op, name, value, lambda v: v <= 0, f"{name} <= 0")


def param(p, shape) -> Array:
    """The float64 parameter as a poot array broadcast to `shape`."""
    a = p.astype(dt.float64) if isinstance(p, Array) else mv.arr(np.asarray(p, dtype=np.float64))
    return tr.broadcast_to(a, shape)


# --- NumPy's signatures (the Generator's methods call these with its bit source) -----------------
def _is_nan(v):
    return np.isnan(v)


def _float_dtype(dtype, op) -> dt.DType:
    d = dt.as_dtype(dtype)
    if d not in (dt.float32, dt.float64):
        raise DomainError(f"Generator.{op}: dtype must be float32 or float64, got {d.name}")
    return d


def standard_gamma(next_key, shape, size=None, dtype=dt.float64):
    d = _float_dtype(dtype, "standard_gamma")
    below("standard_gamma", "shape", shape)
    s = out_shape("standard_gamma", size, shape)
    return gamma_of(next_key, param(shape, s)).astype(d)


def gamma(next_key, shape, scale=1.0, size=None):
    below("gamma", "shape", shape)
    below("gamma", "scale", scale)
    s = out_shape("gamma", size, shape, scale)
    return gamma_of(next_key, param(shape, s)) * param(scale, s)


def beta(next_key, a, b, size=None):
    not_positive("beta", "a", a)
    not_positive("beta", "b", b)
    s = out_shape("beta", size, a, b)
    return beta_of(next_key, param(a, s), param(b, s))


def chisquare(next_key, df, size=None):
    not_positive("chisquare", "df", df)
    s = out_shape("chisquare", size, df)
    return 2.0 * gamma_of(next_key, param(df, s) / 2.0)


def f(next_key, dfnum, dfden, size=None):
    not_positive("f", "dfnum", dfnum)
    not_positive("f", "dfden", dfden)
    s = out_shape("f", size, dfnum, dfden)
    num, den = param(dfnum, s), param(dfden, s)
    return (gamma_of(next_key, num / 2.0) * den) / (gamma_of(next_key, den / 2.0) * num)


def standard_t(next_key, df, size=None):
    not_positive("standard_t", "df", df)
    s = out_shape("standard_t", size, df)
    half = param(df, s) / 2.0
    return tr.sqrt(half) * std_normal(next_key, s) / tr.sqrt(gamma_of(next_key, half))


def standard_cauchy(next_key, size=None):
    s = size_shape(size)
    a, b, c, d = uniforms(next_key, s, s, s, s)
    return box_muller(a, b) / box_muller(c, d)


def _loc_scale(op, next_key, loc, scale, size, sample):
    below(op, "scale", scale)
    s = out_shape(op, size, loc, scale)
    return param(loc, s) + param(scale, s) * sample(s)


def laplace(next_key, loc=0.0, scale=1.0, size=None):
    def sample(s):
        u = open_unit(next_key, s)
        return tr.where(u >= 0.5, -tr.log(2.0 - 2.0 * u), tr.log(2.0 * u))
    return _loc_scale("laplace", next_key, loc, scale, size, sample)


def logistic(next_key, loc=0.0, scale=1.0, size=None):
    def sample(s):
        u = open_unit(next_key, s)
        return tr.log(u / (1.0 - u))
    return _loc_scale("logistic", next_key, loc, scale, size, sample)


def gumbel(next_key, loc=0.0, scale=1.0, size=None):
    return _loc_scale("gumbel", next_key, loc, scale, size,
                      lambda s: -tr.log(-tr.log(open_unit(next_key, s))))


def lognormal(next_key, mean=0.0, sigma=1.0, size=None):
    below("lognormal", "sigma", sigma)
    s = out_shape("lognormal", size, mean, sigma)
    return tr.exp(param(mean, s) + param(sigma, s) * std_normal(next_key, s))


def pareto(next_key, a, size=None):
    not_positive("pareto", "a", a)
    s = out_shape("pareto", size, a)
    return tr.expm1(std_exponential(next_key, s) / param(a, s))


def power(next_key, a, size=None):
    not_positive("power", "a", a)
    s = out_shape("power", size, a)
    return (-tr.expm1(-std_exponential(next_key, s))) ** (1.0 / param(a, s))


def rayleigh(next_key, scale=1.0, size=None):
    below("rayleigh", "scale", scale)
    s = out_shape("rayleigh", size, scale)
    return param(scale, s) * tr.sqrt(2.0 * std_exponential(next_key, s))


def weibull(next_key, a, size=None):
    below("weibull", "a", a)
    s = out_shape("weibull", size, a)
    av = param(a, s)
    safe = tr.where(av == 0.0, 1.0, av)
    return tr.where(av == 0.0, 0.0, std_exponential(next_key, s) ** (1.0 / safe))


def triangular(next_key, left, mode, right, size=None):
    """Inverse CDF of the triangle on [left, right] peaking at mode."""
    if not any(isinstance(p, Array) for p in (left, mode, right)):
        lo, mo, hi = (np.asarray(p, dtype=np.float64) for p in (left, mode, right))
        if np.any(lo > mo):
            raise DomainError("Generator.triangular: left > mode (parameters 'left', 'mode')")
        if np.any(mo > hi):
            raise DomainError("Generator.triangular: mode > right (parameters 'mode', 'right')")
        if np.any(lo == hi):
            raise DomainError("Generator.triangular: left == right (parameters 'left', 'right')")
    s = out_shape("triangular", size, left, mode, right)
    lo, mo, hi = param(left, s), param(mode, s), param(right, s)
    base = hi - lo
    u = unit(next_key, s)
    return tr.where(u <= (mo - lo) / base, lo + tr.sqrt(u * (mo - lo) * base),
                      hi - tr.sqrt((1.0 - u) * (hi - mo) * base))


def wald(next_key, mean, scale, size=None):
    """Michael, Schucany and Haas's transformation (NumPy's algorithm)."""
    not_positive("wald", "mean", mean)
    not_positive("wald", "scale", scale)
    s = out_shape("wald", size, mean, scale)
    mu, lam = param(mean, s), param(scale, s)
    u1, u2, u = uniforms(next_key, s, s, s)
    z = box_muller(u1, u2)
    y = mu * z * z
    x = mu + (mu / (2.0 * lam)) * (y - tr.sqrt(4.0 * lam * y + y * y))
    return tr.where(u <= mu / (mu + x), x, mu * mu / x)


def geometric(next_key, p, size=None):
    """Trials to the first success (int64 >= 1), by inversion: ceil(log U / log(1 - p))."""
    check("geometric", "p", p, lambda v: ~((v > 0) & (v <= 1)), "p <= 0, p > 1 or p is NaN")
    s = out_shape("geometric", size, p)
    k = tr.ceil(tr.log(open_unit(next_key, s)) / tr.log1p(-param(p, s)))
    return tr.maximum(k, 1.0).astype(dt.int64)


def poisson(next_key, lam=1.0, size=None):
    below("poisson", "lam", lam)
    check("poisson", "lam", lam, lambda v: v >= POISSON_LAM_MAX, "lam value too large")
    s = out_shape("poisson", size, lam)
    return poisson_of(next_key, param(lam, s)).astype(dt.int64)


def negative_binomial(next_key, n, p, size=None):
    """Poisson draws at Gamma(n, (1 - p) / p) rates (int64)."""
    not_positive("negative_binomial", "n", n)
    check("negative_binomial", "p", p, lambda v: ~((v > 0) & (v <= 1)), "p <= 0, p > 1 or p is NaN")
    s = out_shape("negative_binomial", size, n, p)
    pv = param(p, s)
    rate = gamma_of(next_key, param(n, s)) * ((1.0 - pv) / pv)
    return poisson_of(next_key, rate).astype(dt.int64)


def dirichlet(next_key, alpha, size=None):
    """Draws of shape size + (len(alpha),), each summing to 1."""
    if isinstance(alpha, Array):
        a = alpha.astype(dt.float64)
    else:
        host = np.asarray(alpha, dtype=np.float64)
        if host.ndim != 1:
            raise ShapeError(f"Generator.dirichlet: alpha must be 1-dimensional, got shape {host.shape}")
        check("dirichlet", "alpha", host, lambda v: v < 0, "alpha < 0")
        check("dirichlet", "alpha", host, _is_nan, "alpha contains NaNs")
        a = mv.arr(host)
    if a.ndim != 1:
        raise ShapeError(f"Generator.dirichlet: alpha must be 1-dimensional, got shape {a.shape}")
    s = size_shape(size) + a.shape
    return dirichlet_of(next_key, tr.broadcast_to(a, s))


def vonmises(next_key, mu, kappa, size=None):
    below("vonmises", "kappa", kappa)
    s = out_shape("vonmises", size, mu, kappa)
    return vonmises_of(next_key, param(mu, s), param(kappa, s))


def multivariate_normal(next_key, mean, cov, size=None, check_valid="warn", tol=1e-8, method="svd"):
    """mean + z @ A with A A^T = cov: A from the SVD (NumPy's default, positive semidefinite cov),
    eigh, or cholesky (positive definite cov). A host cov is checked as NumPy checks it."""
    if method not in ("svd", "eigh", "cholesky"):
        raise DomainError(f"Generator.multivariate_normal: method must be 'svd', 'eigh' or 'cholesky', "
                          f"got {method!r}")
    if check_valid not in ("warn", "raise", "ignore"):
        raise DomainError("Generator.multivariate_normal: check_valid must equal 'warn', 'raise', or "
                          f"'ignore', got {check_valid!r}")
    m = mean.astype(dt.float64) if isinstance(mean, Array) else mv.arr(np.asarray(mean, np.float64))
    c = cov.astype(dt.float64) if isinstance(cov, Array) else mv.arr(np.asarray(cov, np.float64))
    if m.ndim != 1:
        raise ShapeError(f"Generator.multivariate_normal: mean must be 1 dimensional, got shape {m.shape}")
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ShapeError(f"Generator.multivariate_normal: cov must be 2 dimensional and square, got "
                         f"shape {c.shape}")
    if m.shape[0] != c.shape[0]:
        raise ShapeError(f"Generator.multivariate_normal: mean and cov must have same length "
                         f"({m.shape[0]} and {c.shape[0]})")
    if not isinstance(cov, Array) and method != "cholesky" and check_valid != "ignore":
        _check_psd(np.asarray(cov, np.float64), tol, method, check_valid)
    n = m.shape[0]
    z = std_normal(next_key, size_shape(size) + (n,))
    if method == "cholesky":
        factor = la.cholesky(c).mT
    elif method == "svd":
        _, sv, vh = la.svd(c)
        factor = tr.sqrt(sv)[:, None] * vh
    else:
        ev, vecs = la.eigh(c)
        factor = tr.sqrt(tr.abs(ev))[:, None] * vecs.mT
    return z @ factor + m


def _check_psd(cov: np.ndarray, tol: float, method: str, check_valid: str) -> None:
    import warnings

    try:            # NumPy's LinAlgError (a NaN or inf in cov) as poot's, naming the argument
        if method == "svd":
            _, s, v = np.linalg.svd(cov)
            psd = np.allclose(np.dot(v.T * s, v), cov, rtol=tol, atol=tol)
        else:
            psd = not np.any(np.linalg.eigvalsh(cov) < -tol)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"Generator.multivariate_normal: {e} (parameter 'cov')") from None
    if psd:
        return
    msg = "Generator.multivariate_normal: covariance is not symmetric positive-semidefinite (parameter 'cov')"
    if check_valid == "raise":
        raise DomainError(msg)
    warnings.warn(msg, RuntimeWarning, stacklevel=3)


def binomial(next_key, n, p, size=None):
    """Successes in n trials of probability p (int64): CDF inversion for n * min(p, 1 - p) < 10,
    BTRS rejection above."""
    below("binomial", "n", n)
    check("binomial", "p", p, lambda v: ~((v >= 0) & (v <= 1)), "p < 0, p > 1 or p is NaN")
    s = out_shape("binomial", size, n, p)
    return binomial_of(next_key, tr.floor(param(n, s)), param(p, s)).astype(dt.int64)


def multinomial(next_key, n, pvals, size=None):
    """Counts of n draws over len(pvals) outcomes (int64, shape size + (len(pvals),), or n's shape
    + (len(pvals),)): a binomial per outcome on what the earlier outcomes left, as NumPy draws."""
    below("multinomial", "n", n)
    if isinstance(pvals, Array):
        pv = pvals.astype(dt.float64)
    else:
        host = np.asarray(pvals, dtype=np.float64)
        check("multinomial", "pvals", host, lambda v: ~((v >= 0) & (v <= 1)),
              "pvals < 0, pvals > 1 or pvals contains NaNs")
        if host.ndim == 1 and host[:-1].sum() > 1.0 + 1e-12:
            raise DomainError("Generator.multinomial: sum(pvals[:-1]) > 1.0 (parameter 'pvals')")
        pv = mv.arr(host)
    if pv.ndim != 1:
        raise ShapeError(f"Generator.multinomial: pvals must be 1-dimensional, got shape {pv.shape}")
    s = out_shape("multinomial", size, n)
    left = tr.floor(param(n, s))
    mass = 1.0
    counts = []
    for i in range(pv.shape[0] - 1):
        pi = pv[i]
        frac = tr.where(mass > 0, tr.clip(pi / tr.maximum(mass, 1e-300), 0.0, 1.0), 0.0)
        x = binomial_of(next_key, left, tr.broadcast_to(frac, s))
        counts.append(x)
        left = left - x
        mass = mass - pi
    counts.append(left)
    return tr.stack(counts, axis=-1).astype(dt.int64)


def logseries(next_key, p, size=None):
    """Logarithmic-series counts (int64 >= 1) by Kemp's second accelerated generator (NumPy's)."""
    check("logseries", "p", p, lambda v: ~((v >= 0) & (v < 1)), "p < 0, p >= 1 or p is NaN")
    s = out_shape("logseries", size, p)
    pv = param(p, s)
    r = tr.log1p(-pv)
    v, w = uniforms(next_key, s, s)
    v = v + 2.0 ** -53
    q = -tr.expm1(r * (w + 2.0 ** -53))
    tail = tr.maximum(tr.floor(1.0 + tr.log(v) / tr.log(tr.where(q > 0, q, 0.5))), 1.0)
    k = tr.where(v <= q * q, tail, tr.where(v >= q, 1.0, 2.0))
    return tr.where(v >= pv, 1.0, k).astype(dt.int64)


def _noncentral_chisquare_of(next_key, df: Array, nonc: Array) -> Array:
    """NumPy's construction in one gamma draw: for df > 1, chisquare(df - 1) + (Z + sqrt(nonc))**2;
    otherwise chisquare(df + 2 I) with I ~ Poisson(nonc / 2)."""
    wide = df > 1.0
    i = poisson_of(next_key, tr.where(wide, 0.0, nonc / 2.0))
    half = tr.where(wide, (df - 1.0) / 2.0, df / 2.0 + i)
    chi = 2.0 * gamma_of(next_key, half)
    u1, u2 = uniforms(next_key, df.shape, df.shape)
    shifted = box_muller(u1, u2) + tr.sqrt(nonc)
    return tr.where(wide, chi + shifted * shifted, chi)


def noncentral_chisquare(next_key, df, nonc, size=None):
    not_positive("noncentral_chisquare", "df", df)
    below("noncentral_chisquare", "nonc", nonc)
    s = out_shape("noncentral_chisquare", size, df, nonc)
    return _noncentral_chisquare_of(next_key, param(df, s), param(nonc, s))


def noncentral_f(next_key, dfnum, dfden, nonc, size=None):
    not_positive("noncentral_f", "dfnum", dfnum)
    not_positive("noncentral_f", "dfden", dfden)
    below("noncentral_f", "nonc", nonc)
    s = out_shape("noncentral_f", size, dfnum, dfden, nonc)
    num, den = param(dfnum, s), param(dfden, s)
    t = _noncentral_chisquare_of(next_key, num, param(nonc, s)) * den
    return t / (2.0 * gamma_of(next_key, den / 2.0) * num)
