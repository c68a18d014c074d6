"""JAX's key-first samplers beyond pt.random's core (key, split, uniform, normal, randint, bernoulli):
`PRNGKey`, `categorical`, `truncated_normal`, `key_data`/`wrap_key_data`, the key-first forms of
`gumbel`, `permutation`, `choice`, `exponential`, `dirichlet`, `multivariate_normal` and of the
samplers in KEYED (gamma, beta, poisson...: Generator's samplers drawing from a key), and JAX_ONLY's
(t, cauchy, rademacher), which NumPy's global namespace lacks.

Code written for `jax.random` calls these with a key first; the same names called NumPy's way (no
key) are NumPy's global-state functions (random.py `_key_or_global` and `_key_first_or_global` pick by
the first argument).
They are built on the core's uniform bits, so they give the same numbers on every device, and they
record lazily like the rest (inside @pt.jit too).
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.trace.array import Array
from poot.trace.creation import asarray, normalize_shape

__all__ = ["PRNGKey", "categorical", "truncated_normal", "key_data", "wrap_key_data"]


def _axis(axis: int, ndim: int, op: str, what: str = "an array") -> int:
    """`axis` of an operand of `ndim` axes counted from 0 (a negative one from the end), or the
    ShapeError naming random.<op> and `what` the operand is."""
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise ShapeError(f"random.{op}: axis {axis} is out of range for {what} of {ndim} axes")
    return ax


@api_boundary
def PRNGKey(seed):  # noqa: N802 (JAX's name)
    """A key from an integer seed: `pt.random.key(seed)` under the name older JAX code uses."""
    from poot.trace.random import key

    return key(seed)


def _floating(dtype, op: str) -> dt.DType:
    d = dt.as_dtype(dtype)
    if d.kind != "f":
        raise ArgumentError(f"random.{op}: dtype must be a floating type, got {d.name}")
    return d


def _key_first(key, op: str) -> None:
    """Refuses a first argument that is no array: JAX-only samplers have no NumPy form, so a seed or
    a forgotten key must be named here, not taken for the global-state `uniform`'s arguments."""
    if not isinstance(key, Array):
        raise DTypeError(f"random.{op} takes a key first (pt.random.{op}(pt.random.key(0), ...)), got "
                         f"{type(key).__name__} {key!r}")


def _open_unit(key, shape, d):
    """Uniform floats in (0, 1): [0, 1) with 0 moved to the dtype's smallest normal (a Gumbel or
    inverse-CDF transform would make it infinite)."""
    from poot.trace.random import uniform

    _key_first(key, "gumbel")
    return uniform(key, shape, d, minval=float(np.finfo(d.np).tiny), maxval=1.0)


@api_boundary
def gumbel(key, shape=(), dtype=dt.float64):
    """Standard Gumbel samples, -log(-log(u)) (JAX's `random.gumbel(key, shape, dtype)`)."""
    import poot.trace as pt

    d = _floating(dtype, "gumbel")
    return -pt.log(-pt.log(_open_unit(key, normalize_shape(shape, "gumbel"), d)))


@api_boundary
def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max trick, as JAX):
    one draw per batch position by default, or `shape` (whose trailing axes are the batch's) draws."""
    import poot.trace as pt

    logits = logits if isinstance(logits, Array) else asarray(logits)
    if logits.ndim == 0:
        raise ShapeError("random.categorical: logits must have at least one axis (the categories)")
    ax = _axis(axis, logits.ndim, "categorical", "logits")
    moved = pt.moveaxis(logits, ax, -1) if ax != logits.ndim - 1 else logits
    batch = tuple(moved.shape[:-1])
    shape = batch if shape is None else normalize_shape(shape, "categorical")
    if tuple(shape[len(shape) - len(batch):]) != batch:
        raise ShapeError(f"random.categorical: shape {shape} must end in the logits' batch shape {batch}")
    _key_first(key, "categorical")
    d = logits.dtype if logits.dtype.kind == "f" else dt.float32
    noise = gumbel(key, tuple(shape) + (moved.shape[-1],), d)
    return pt.argmax(noise + moved.astype(d), axis=-1)


_SQRT2 = math.sqrt(2.0)


def _erfinv(y: Array) -> Array:
    """The inverse error function: Giles' single-precision approximation ("Approximating the erfinv
    function", GPU Computing Gems, 2011), then two Newton steps on erf, which bring float64 to full
    precision; +-1 give +-inf."""
    import poot.trace as pt

    w = -pt.log((1.0 - y) * (1.0 + y))
    central = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * central
    tail = pt.sqrt(w) - 3.0
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        q = c + q * tail
    x = pt.where(w < 5.0, p, q) * y
    for _ in range(2):
        step = (pt.erf(x) - y) / (2.0 / math.sqrt(math.pi) * pt.exp(-x * x))
        x = pt.where(pt.isfinite(x), x - step, x)
    return x


@api_boundary
def truncated_normal(key, lower, upper, shape=None, dtype=dt.float64):
    """Standard normal samples conditioned on lower < x < upper (bounds broadcast; `shape` defaults
    to theirs), by the inverse CDF: sqrt(2) erfinv(u) for u uniform between erf(lower / sqrt 2) and
    erf(upper / sqrt 2), clipped into the bounds, as JAX computes it."""
    import poot.trace as pt
    from poot.trace.random import uniform

    _key_first(key, "truncated_normal")
    d = _floating(dtype, "truncated_normal")
    lo, hi = (v.astype(d) if isinstance(v, Array) else asarray(np.asarray(v, d.np)) for v in (lower, upper))
    if shape is None:
        shape = np.broadcast_shapes(tuple(lo.shape), tuple(hi.shape))
    shape = normalize_shape(shape, "truncated_normal")
    a, b = pt.erf(lo / _SQRT2), pt.erf(hi / _SQRT2)
    u = uniform(key, shape, d, minval=0.0, maxval=1.0)
    x = _SQRT2 * _erfinv(a + u * (b - a))
    return pt.clip(x, pt.nextafter(lo, np.inf), pt.nextafter(hi, -np.inf))


@api_boundary
def permutation(key, x, axis=0, independent=False):
    """A permuted range(x) for an int, else x shuffled along `axis` (JAX's `random.permutation(key,
    x)`): the order of independent 64-bit random words."""
    import poot.trace as pt
    from poot.trace.random import bits

    if independent:
        raise ArgumentError("random.permutation: independent=True (a separate permutation per row) is not "
                            "built; permute each row with its own key")
    if isinstance(x, (int, np.integer)):
        return pt.argsort(bits(key, (int(x),), dt.uint64)).astype(dt.int64)
    x = x if isinstance(x, Array) else asarray(x)
    ax = _axis(axis, x.ndim, "permutation")
    order = pt.argsort(bits(key, (x.shape[ax],), dt.uint64))
    return pt.take(x, order, axis=ax)


def is_key(x) -> bool:
    """Whether `x` looks like a key (what key, split and fold_in make: uint32 words ending in 2), the
    test that sends a call of a name NumPy and JAX share to JAX's key-first form."""
    return isinstance(x, Array) and x.dtype == dt.uint32 and tuple(x.shape[-1:]) == (2,)


@api_boundary
def exponential(key, shape=(), dtype=dt.float64):
    """Standard exponential samples, -log(1 - u) (JAX's `random.exponential(key, shape, dtype)`)."""
    import poot.trace as pt
    from poot.trace.random import uniform

    d = _floating(dtype, "exponential")
    return -pt.log1p(-uniform(key, normalize_shape(shape, "exponential"), d))


@api_boundary
def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Samples from `a` (an int n means range(n)) along `axis`, JAX's `random.choice(key, a, shape,
    replace, p, axis)`: the result has `shape` in place of that axis. Uniform draws with replacement
    are random indices; with `p`, the inverse CDF of p's cumulative sum; without replacement, the
    first of a random order (uniform) or Gumbel top-k (with `p`). `p` may be traced under @pt.jit, so
    it is not checked for summing to 1 (JAX normalizes by its total)."""
    import poot.trace as pt
    from poot.trace.random import bits, randint, uniform

    shape = normalize_shape(shape, "choice")
    if isinstance(a, (int, np.integer)):
        n, pool, ax = int(a), None, 0
        if n < 0:
            raise ShapeError(f"random.choice: a must be a non-negative integer, got {n}")
    else:
        pool = a if isinstance(a, Array) else asarray(a)
        if pool.ndim == 0:
            raise ShapeError("random.choice: a must be an integer or an array of at least one axis")
        ax = _axis(axis, pool.ndim, "choice")
        n = pool.shape[ax]
    k = math.prod(shape)
    if n == 0 and k:
        raise ShapeError("random.choice: a is empty, so no samples can be taken")
    if not replace and k > n:
        raise ShapeError(f"random.choice: cannot take {k} samples without replacement from {n}")
    if p is not None:
        p = p if isinstance(p, Array) else asarray(p)
        if tuple(p.shape) != (n,):
            raise ShapeError(f"random.choice: p of shape {tuple(p.shape)} must have shape ({n},), one "
                             f"probability per entry of a along axis {axis}")
        d = p.dtype if p.dtype.kind == "f" else dt.float64
        p = p.astype(d)
    if k == 0 or n == 0:
        idx = pt.zeros((k,), dtype=dt.int64)
    elif replace and p is None:
        idx = randint(key, (k,), 0, n, dt.int64)
    elif replace:
        cdf = pt.cumsum(p)
        u = uniform(key, (k,), d)
        idx = pt.minimum(pt.searchsorted(cdf, cdf[n - 1] * u, side="right"), n - 1)
    elif p is None:
        idx = pt.argsort(bits(key, (n,), dt.uint64))[:k]
    else:
        idx = pt.argsort(gumbel(key, (n,), d) + pt.log(p), descending=True)[:k]
    idx = idx.astype(dt.int64)
    if pool is None:
        return idx.reshape(shape)
    out = pt.take(pool, idx, axis=ax)
    return out.reshape(tuple(pool.shape[:ax]) + shape + tuple(pool.shape[ax + 1:]))


def _draws_from(key):
    """A Generator-style bit source from one key (a fresh key per call: fold_in(key, 1), 2, ...), for
    the key-first forms of the samplers that Generator's methods share (random_distributions.py)."""
    from poot.trace.random import fold_in

    count = iter(range(1, 2**31))
    return lambda: fold_in(key, next(count))


def _keyed_draw(name: str, params: str, sample, integer=False, defaults=None):
    """JAX's `random.<name>(key, <params>, shape=None, dtype)`: `sample(next_key, *values, size)` with
    the parameters broadcast to `shape` (their broadcast shape by default), cast to `dtype` (int64 by
    default for an `integer` draw, else float64); `defaults` are the parameters JAX lets one omit."""
    defaults = defaults or {}

    def fn(key, *args, shape=None, dtype=None, **kwargs):
        names = params.split()
        if len(args) > len(names) + 2:
            raise ArgumentError(f"random.{name}(key, {', '.join(names)}, shape=None, dtype) takes "
                                f"{len(names) + 3} arguments at most, got {len(args) + 1}")
        values = list(args[:len(names)])
        for extra, label in zip(args[len(names):], ("shape", "dtype")):
            if label == "shape":
                shape = extra
            else:
                dtype = extra
        for p in names[len(values):]:
            if p not in kwargs and p in defaults:
                kwargs[p] = defaults[p]
            if p not in kwargs:
                raise ArgumentError(f"random.{name}: missing the parameter {p!r} (JAX's random.{name}(key, "
                                    f"{', '.join(names)}, shape=None, dtype))")
            values.append(kwargs.pop(p))
        if kwargs:
            raise ArgumentError(f"random.{name}: unexpected keyword arguments {sorted(kwargs)}")
        size = None if shape is None else normalize_shape(shape, name)
        out = sample(_draws_from(key), *values, size)
        if integer:
            d = dt.as_dtype(dtype) if dtype is not None else dt.int64
            if d.kind not in "iu":
                raise ArgumentError(f"random.{name}: dtype must be an integer type, got {d.name}")
            return out.astype(d)
        return out.astype(_floating(dtype if dtype is not None else dt.float64, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"JAX's `random.{name}(key, {', '.join(params.split())}, shape=None, dtype)`: the "
                  f"sampler of Generator.{name} drawing from `key`; `shape` (which the parameters "
                  f"broadcast to) defaults to the parameters' broadcast shape.")
    return api_boundary(fn)


def _standard(sampler, *fixed):
    """A sampler of random_distributions with its leading parameters `fixed` (loc 0, scale 1 for a
    loc-scale family: JAX's forms take neither), drawing shape () when no shape is given."""
    return lambda next_key, size: sampler(next_key, *fixed, size if size is not None else ())


def _rademacher(next_key, size):
    from poot.trace.random import bernoulli

    return bernoulli(next_key(), 0.5, size if size is not None else ()).astype(dt.int64) * 2 - 1


def _samplers():
    from poot.trace import random_distributions as rd

    return {
        "gamma": _keyed_draw("gamma", "a", lambda nk, a, size: rd.gamma(nk, a, 1.0, size)),
        "beta": _keyed_draw("beta", "a b", rd.beta),
        "poisson": _keyed_draw("poisson", "lam", rd.poisson, integer=True),
        "laplace": _keyed_draw("laplace", "", _standard(rd.laplace, 0.0, 1.0)),
        "logistic": _keyed_draw("logistic", "", _standard(rd.logistic, 0.0, 1.0)),
        "binomial": _keyed_draw("binomial", "n p", rd.binomial),       # float, as JAX's
        "geometric": _keyed_draw("geometric", "p", rd.geometric, integer=True),
        "chisquare": _keyed_draw("chisquare", "df", rd.chisquare),
        "f": _keyed_draw("f", "dfnum dfden", rd.f),
        "rayleigh": _keyed_draw("rayleigh", "scale", rd.rayleigh),
        "triangular": _keyed_draw("triangular", "left mode right", rd.triangular),
        # JAX's parameterizations where NumPy's differ: lognormal of a standard normal, the Pareto
        # distribution on [1, inf) (NumPy's is shifted to [0, inf)), the Wald distribution of scale 1
        "lognormal": _keyed_draw("lognormal", "sigma", lambda nk, sg, size: rd.lognormal(nk, 0.0, sg, size),
                                 defaults={"sigma": 1.0}),
        "pareto": _keyed_draw("pareto", "b", lambda nk, b, size: rd.pareto(nk, b, size) + 1.0),
        "wald": _keyed_draw("wald", "mean", lambda nk, m, size: rd.wald(nk, m, 1.0, size)),
    }


def _rd(name: str, *args):
    """random_distributions.<name>(*args), imported at call time (that module imports this layer)."""
    from poot.trace import random_distributions as rd

    return getattr(rd, name)(*args)


KEYED = _samplers()      # the names NumPy's global-state functions share

# JAX's key-first samplers with no NumPy function of the same name
JAX_ONLY = {
    "t": _keyed_draw("t", "df", lambda nk, df, size: _rd("standard_t", nk, df, size)),
    "cauchy": _keyed_draw("cauchy", "", lambda nk, size: _rd("standard_cauchy", nk, size if size is not None else ())),
    "rademacher": _keyed_draw("rademacher", "", _rademacher, integer=True),
}


@api_boundary
def dirichlet(key, alpha, shape=None, dtype=dt.float64):
    """JAX's `random.dirichlet(key, alpha, shape=None, dtype)`: draws of shape shape + alpha.shape[-1:]
    (alpha one vector of concentrations), each summing to 1."""
    from poot.trace import random_distributions as rd

    size = None if shape is None else normalize_shape(shape, "dirichlet")
    return rd.dirichlet(_draws_from(key), alpha, size).astype(_floating(dtype, "dirichlet"))


@api_boundary
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """JAX's `random.multivariate_normal(key, mean, cov, shape=None, dtype, method)`: mean + A z for
    standard normal z and A A^T = cov (A from cholesky, eigh or svd). mean (..., n) and cov (..., n, n)
    may carry batch axes; `shape` (which that batch shape broadcasts to) defaults to it; the result
    has shape shape + (n,)."""
    import poot.trace as pt
    from poot.trace import array_api_linalg as la
    from poot.trace.random import normal

    if method not in ("cholesky", "eigh", "svd"):
        raise ArgumentError(f"random.multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', "
                            f"got {method!r}")
    mean = mean if isinstance(mean, Array) else asarray(mean)
    cov = cov if isinstance(cov, Array) else asarray(cov)
    d = _floating(dtype if dtype is not None else pt.result_type(mean, cov, dt.float32), "multivariate_normal")
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-1] != cov.shape[-2] or cov.shape[-1] != mean.shape[-1]:
        raise ShapeError(f"random.multivariate_normal: mean (..., n) and cov (..., n, n) must agree, got "
                         f"shapes {tuple(mean.shape)} and {tuple(cov.shape)}")
    batch = np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    shape = batch if shape is None else normalize_shape(shape, "multivariate_normal")
    if np.broadcast_shapes(batch, shape) != tuple(shape):
        raise ShapeError(f"random.multivariate_normal: the batch shape {batch} of mean and cov does not "
                         f"broadcast to shape {shape}")
    c = cov.astype(d)
    if method == "cholesky":
        factor = la.cholesky(c)
    elif method == "eigh":
        w, v = la.eigh(c)
        factor = v * pt.sqrt(pt.maximum(w, 0.0))[..., None, :]
    else:
        u, s, _ = la.svd(c)
        factor = u * pt.sqrt(s)[..., None, :]
    z = normal(key, tuple(shape) + (mean.shape[-1],), d)
    return mean.astype(d) + (factor @ z[..., None])[..., 0]


@api_boundary
def key_data(keys):
    """The uint32 words of `keys` (JAX's `random.key_data`): poot's keys are those words already."""
    if not is_key(keys):
        raise ArgumentError(f"random.key_data: expected keys (uint32 words ending in 2, from pt.random.key, "
                            f"split or fold_in), got {getattr(keys, 'aval', type(keys).__name__)}")
    return keys


@api_boundary
def wrap_key_data(data):
    """Keys from their uint32 words (JAX's `random.wrap_key_data`): the words, as poot's keys are."""
    data = data if isinstance(data, Array) else asarray(np.asarray(data))
    if data.dtype != dt.uint32 or tuple(data.shape[-1:]) != (2,):
        raise ArgumentError(f"random.wrap_key_data: key data are uint32 words of shape (..., 2), got "
                            f"{data.aval}")
    return data
