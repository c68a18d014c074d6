"""The samplers behind Generator's distributions (poot/trace/random_distributions.py): uniform,
normal and exponential building blocks from poot's counter-based bits, and the gamma, beta,
Dirichlet, Poisson, binomial and von Mises draws, each lazy and usable inside @pt.jit.

Each takes `next_key`, the Generator's bit source: a callable returning a fresh key per call.
Rejection samplers (Marsaglia-Tsang gamma, Hormann's PTRS Poisson and BTRS binomial, Best-Fisher
von Mises) have no host loop: each draws a fixed number of candidate rounds at once, along a new
leading axis, and keeps the first accepted candidate of each element. The round counts make an
element with no accepted candidate less likely than 1e-20 (worst acceptance per round, measured:
gamma 0.95, PTRS 0.75, BTRS 0.70, von Mises 0.65); such an element would keep its last, rejected,
candidate.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot import trace as tr     # the namespace (a module of this layer, read at call time)
from poot.trace import movement as mv
from poot.trace import random as _r
from poot.trace.array import Array

GAMMA_ROUNDS = 16        # rejection probability <= 0.05 per round: 0.05**16 ~ 2e-21
POISSON_ROUNDS = 36      # PTRS rejects <= 0.25 per round for lam >= 10: 0.25**36 ~ 2e-22
VONMISES_ROUNDS = 48     # Best-Fisher rejects <= 0.35 per round: 0.35**48 ~ 1e-22
POISSON_SMALL = 10.0     # below it Poisson draws invert the CDF over POISSON_TERMS terms
POISSON_TERMS = 64       # P(Poisson(10) >= 64) ~ 4e-30
BINOMIAL_ROUNDS = 40     # BTRS rejects <= 0.30 per round for n * p >= 10: 0.30**40 ~ 1e-21
BINOMIAL_TERMS = 64      # below n * p = 10 binomial draws invert the CDF (tail as Poisson's)
POISSON_LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)


# --- uniform building blocks ----------------------------------------------------------------------
def unit(next_key, shape) -> Array:
    """Uniform float64 in [0, 1)."""
    return _r.uniform(next_key(), shape, dt.float64)


def open_unit(next_key, shape) -> Array:
    """Uniform float64 in (0, 1): [0, 1) on a 2**-52 grid, moved up half a step (logs stay finite)."""
    return unit(next_key, shape) + 2.0 ** -53


def std_normal(next_key, shape) -> Array:
    return _r.normal(next_key(), shape, dt.float64)


def uniforms(next_key, *shapes) -> list:
    """Uniform [0, 1) arrays of the given shapes from one key: one Threefry graph for all of them
    (each draw's graph is the bulk of what a sampler compiles)."""
    sizes = [math.prod(sh) for sh in shapes]
    flat = unit(next_key, (sum(sizes),))
    out, start = [], 0
    for sh, n in zip(shapes, sizes):
        out.append(tr.reshape(flat[start:start + n], sh))
        start += n
    return out


def box_muller(u1: Array, u2: Array) -> Array:
    """A standard normal from two [0, 1) uniforms, as pt.random.normal makes them."""
    return tr.sqrt(-2.0 * tr.log1p(-u1)) * tr.cos(2.0 * math.pi * u2)


def std_exponential(next_key, shape) -> Array:
    return -tr.log1p(-unit(next_key, shape))


def first_accepted(values: Array, accepted: Array) -> Array:
    """For each element, the value of the first round (leading axis) whose candidate was accepted
    (the last round's candidate if none was): a chain of elementwise selects from the last round
    back (no reduction or gather, cheaper to run than argmax and take_along_axis)."""
    out = values[-1]
    for r in range(values.shape[0] - 2, -1, -1):
        out = tr.where(accepted[r], values[r], out)
    return out


# --- gamma family ---------------------------------------------------------------------------------
def log_standard_gamma(next_key, alpha: Array) -> Array:
    """log of Gamma(alpha, 1) draws (alpha broadcast to the result shape): Marsaglia-Tsang for
    alpha >= 1; for alpha < 1 a Gamma(alpha + 1) draw times U**(1/alpha), added in log space so tiny
    alphas keep their (underflowing) values' ratios for beta and dirichlet."""
    shape = alpha.shape
    boost = alpha < 1.0
    a = tr.where(boost, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / tr.sqrt(9.0 * d)
    rounds = (GAMMA_ROUNDS,) + shape
    u1, u2, u, ub = uniforms(next_key, rounds, rounds, rounds, shape)
    z = box_muller(u1, u2)
    u = u + 2.0 ** -53
    v = (1.0 + c * z) ** 3
    positive = v > 0
    logv = tr.log(tr.where(positive, v, 1.0))
    accepted = positive & (tr.log(u) < 0.5 * z * z + d - d * v + d * logv)
    out = tr.log(d) + first_accepted(logv, accepted)
    ub = ub + 2.0 ** -53
    safe = tr.where(boost, alpha, 1.0)
    return tr.where(boost, out + tr.log(ub) / safe, out)


def gamma_of(next_key, alpha: Array) -> Array:
    return tr.where(alpha == 0.0, 0.0, tr.exp(log_standard_gamma(next_key, alpha)))


def beta_of(next_key, a: Array, b: Array) -> Array:
    """X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b), as a logistic of log X - log Y."""
    lx = log_standard_gamma(next_key, a)
    ly = log_standard_gamma(next_key, b)
    return 1.0 / (1.0 + tr.exp(ly - lx))


def dirichlet_of(next_key, alpha: Array) -> Array:
    """Normalized Gamma(alpha_i) draws along the last axis, normalized in log space."""
    lg = log_standard_gamma(next_key, alpha)
    top = tr.max(lg, axis=-1, keepdims=True)
    top = tr.where(tr.isfinite(top), top, 0.0)
    g = tr.exp(lg - top)
    return g / tr.sum(g, axis=-1, keepdims=True)


# --- Poisson --------------------------------------------------------------------------------------
_LOGGAM_COEF = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
                -1.39243221690590e+00)


def loggam(x: Array) -> Array:
    """log Gamma(x) for x >= 1 (NumPy's random_loggam): Stirling's series at max(x, 7), shifted
    back down by the logs of x, x + 1, ... below 7."""
    n = tr.where(x < 7.0, tr.floor(7.0 - x), 0.0)
    x0 = x + n
    x2 = 1.0 / (x0 * x0)
    series = _LOGGAM_COEF[9]
    for coef in _LOGGAM_COEF[8::-1]:
        series = series * x2 + coef
    gl = series / x0 + 0.5 * math.log(2 * math.pi) + (x0 - 0.5) * tr.log(x0) - x0
    for j in range(7):
        gl = gl - tr.where(n > j, tr.log(x + j), 0.0)
    return gl


def _poisson_small(u: Array, lam: Array) -> Array:
    """Inversion for lam < POISSON_SMALL: the number of CDF terms at or below a uniform."""
    k = np.arange(POISSON_TERMS, dtype=np.float64)
    log_fact = mv.arr(np.array([math.lgamma(j + 1.0) for j in k]))
    lam1 = lam[..., None]
    logpmf = mv.arr(k) * tr.log(lam1) - lam1 - log_fact
    cdf = tr.cumsum(tr.exp(logpmf), axis=-1)
    return tr.sum((cdf <= u[..., None]).astype(dt.float64), axis=-1)


def _poisson_ptrs(u: Array, v: Array, lam: Array) -> Array:
    """Hormann's transformed rejection with squeeze (PTRS), as NumPy draws lam >= 10."""
    slam, loglam = tr.sqrt(lam), tr.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = tr.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    u, v = u - 0.5, v + 2.0 ** -53
    us = tr.maximum(0.5 - tr.abs(u), 2.0 ** -60)
    k = tr.floor((2.0 * a / us + b) * u + lam + 0.43)
    k_safe = tr.maximum(k, 0.0)
    squeeze = (us >= 0.07) & (v <= vr)
    bound = -lam + k_safe * loglam - loggam(k_safe + 1.0)
    test = tr.log(v) + log_invalpha - tr.log(a / (us * us) + b) <= bound
    accepted = squeeze | ((k >= 0) & ~((us < 0.013) & (v > us)) & test)
    return first_accepted(k_safe, accepted)


def poisson_of(next_key, lam: Array) -> Array:
    """Poisson counts (float64 holding integers); lam == 0 gives 0."""
    small = lam < POISSON_SMALL
    rounds = (POISSON_ROUNDS,) + lam.shape
    u0, u, v = uniforms(next_key, lam.shape, rounds, rounds)
    lo = _poisson_small(u0, tr.where(small & (lam > 0), lam, 1.0))
    hi = _poisson_ptrs(u, v, tr.where(small, POISSON_SMALL, lam))
    return tr.where(lam == 0.0, 0.0, tr.where(small, lo, hi))


# --- binomial -------------------------------------------------------------------------------------
def _binomial_small(u: Array, n: Array, p: Array) -> Array:
    """Inversion over BINOMIAL_TERMS terms for n * p < 10 (p <= 1/2): the number of CDF terms at or
    below a uniform. log pmf(k) = n log q + k log(p / q) + sum_{j <= k} log((n - j + 1) / j), the
    sum a cumsum; terms past n have probability 0."""
    j = np.arange(1, BINOMIAL_TERMS, dtype=np.float64)
    k = mv.arr(np.arange(BINOMIAL_TERMS, dtype=np.float64))
    n1, p1 = n[..., None], p[..., None]
    ratios = tr.log(tr.maximum(n1 - mv.arr(j) + 1.0, 1.0)) - mv.arr(np.log(j))
    log_choose = tr.concatenate([tr.zeros_like(n1), tr.cumsum(ratios, axis=-1)], axis=-1)
    log_q = tr.log1p(-p1)
    logpmf = n1 * log_q + k * (tr.log(p1) - log_q) + log_choose
    cdf = tr.cumsum(tr.where(k <= n1, tr.exp(logpmf), 0.0), axis=-1)
    return tr.minimum(tr.sum((cdf <= u[..., None]).astype(dt.float64), axis=-1), n)


def _binomial_btrs(u: Array, v: Array, n: Array, p: Array) -> Array:
    """Hormann's transformed rejection with squeeze (BTRS) for n * p >= 10, p <= 1/2."""
    q = 1.0 - p
    spq = tr.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    log_alpha = tr.log((2.83 + 5.1 / b) * spq)
    lpq = tr.log(p / q)
    m = tr.floor((n + 1.0) * p)
    h = loggam(m + 1.0) + loggam(n - m + 1.0)
    u, v = u - 0.5, v + 2.0 ** -53
    us = tr.maximum(0.5 - tr.abs(u), 2.0 ** -60)
    k = tr.floor((2.0 * a / us + b) * u + c)
    inside = (k >= 0) & (k <= n)
    ks = tr.clip(k, 0.0, n)
    squeeze = (us >= 0.07) & (v <= vr)
    test = tr.log(v) + log_alpha - tr.log(a / (us * us) + b) <= (
        h - loggam(ks + 1.0) - loggam(n - ks + 1.0) + (ks - m) * lpq)
    return first_accepted(ks, inside & (squeeze | test))


def binomial_of(next_key, n: Array, p: Array) -> Array:
    """Binomial counts (float64 holding integers) for integral n >= 0 and 0 <= p <= 1: drawn for
    min(p, 1 - p) and reflected."""
    flip = p > 0.5
    pp = tr.where(flip, 1.0 - p, p)
    small = n * pp < 10.0
    rounds = (BINOMIAL_ROUNDS,) + n.shape
    u0, u, v = uniforms(next_key, n.shape, rounds, rounds)
    lo = _binomial_small(u0, tr.where(small, n, 1.0), tr.where(small & (pp > 0), pp, 0.5))
    hi = _binomial_btrs(u, v, tr.where(small, 40.0, n), tr.where(small, 0.5, pp))
    k = tr.where((pp == 0) | (n == 0), 0.0, tr.where(small, lo, hi))
    return tr.where(flip, n - k, k)


# --- von Mises ------------------------------------------------------------------------------------
def vonmises_of(next_key, mu: Array, kappa: Array) -> Array:
    """Best and Fisher's wrapped-Cauchy rejection (NumPy's algorithm), angles in [-pi, pi]; kappa
    below 1e-8 gives uniform angles, above 1e6 NumPy's wrapped normal approximation."""
    shape = mu.shape
    k = tr.where(kappa < 1e-8, 1.0, kappa)
    r = 1.0 + tr.sqrt(1.0 + 4.0 * k * k)
    rho = (r - tr.sqrt(2.0 * r)) / (2.0 * k)
    s = tr.where(k < 1e-5, 1.0 / k + k, (1.0 + rho * rho) / (2.0 * rho))
    rounds = (VONMISES_ROUNDS,) + shape
    u, v, u2, u3, n1, n2 = uniforms(next_key, rounds, rounds, shape, shape, shape, shape)
    v = v + 2.0 ** -53
    z = tr.cos(math.pi * u)
    w = (1.0 + s * z) / (s + z)
    y = k * (s - w)
    ypos = tr.maximum(y, 1e-300)
    accepted = (y * (2.0 - y) - v >= 0) | (tr.log(ypos / v) + 1.0 - y >= 0)
    w = tr.clip(first_accepted(w, accepted), -1.0, 1.0)
    angle = tr.arccos(w)
    angle = tr.where(u2 < 0.5, -angle, angle)
    uniform = math.pi * (2.0 * u3 - 1.0)
    wrapped = box_muller(n1, n2) / tr.sqrt(tr.maximum(k, 1.0))
    angle = tr.where(kappa < 1e-8, uniform, tr.where(kappa > 1e6, wrapped, angle))
    result = angle + mu
    mod = tr.fmod(tr.abs(result) + math.pi, 2.0 * math.pi) - math.pi
    return tr.where(result < 0, -mod, mod)
