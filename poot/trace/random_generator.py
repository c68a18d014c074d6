"""`pt.random.default_rng(seed)`: a NumPy-style Generator over poot's counter-based random bits.

The generator holds a Threefry key (`pt.random.key(seed)`) and a draw counter; each call derives the
key of its draw with `fold_in(key, counter)` and advances the counter, so a seed gives the same numbers
on every device and in every process. The streams are poot's own: the same seed gives different
numbers than NumPy's PCG64 (compare distributions, not values). Results are lazy poot arrays
(`size=None` gives a 0-d array); floats are float64 unless `dtype=float32` is given.

The distributions beyond uniform, normal and exponential (gamma, beta, poisson, binomial, von Mises,
multivariate_normal...) are drawn by poot/trace/random_distributions.py, lazily and without host
loops (rejection samplers run a fixed number of vectorized rounds), so they work inside @pt.jit.

A jitted function draws from a Generator only at trace time, so a Generator made outside it would give
the same numbers at every call: such a draw raises TracerError. Pass a key instead (`pt.random.normal(key,
...)` with `fold_in(key, step)`) for fresh numbers per call; a Generator made inside the function (from a
fixed seed) is allowed and gives the same numbers at every call, as it says.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import (AxisError, DTypeError, NotBuiltError, ShapeError, TracerError, api_boundary,
                         out_error)
from poot.trace import context as _dev
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import random as _r
from poot.trace.lost_writes import refuses_temporaries
from poot.trace import random_distributions as _dist
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.lazy import is_tracing

__all__ = ["Generator", "Threefry", "default_rng"]


def _size(size) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(operator.index(s) for s in size)


def _float(dtype, op) -> dt.DType:
    d = dt.as_dtype(dtype)
    if d not in (dt.float32, dt.float64):
        raise DTypeError(f"Generator.{op}: dtype must be float32 or float64, got {d.name}")
    return d


def _shape_of(size, *params) -> tuple:
    """The result shape: `size`, or the broadcast shape of array parameters when size is None."""
    if size is not None:
        return _size(size)
    shapes = [np.shape(p) if not isinstance(p, Array) else p.shape for p in params]
    return mv.broadcast_shapes(*shapes) if shapes else ()


class Generator:
    """NumPy's Generator methods over poot's counter-based bits (see the module docstring)."""

    def __init__(self, seed):
        self._seed = operator.index(seed) & (2**64 - 1)
        self._keys: dict[str, Array] = {}    # the seed's key on each device drawn on (`_next`)
        self._count = 0
        self._traced = is_tracing()     # made inside a traced function: its draws belong to the trace

    def __repr__(self) -> str:
        return f"Generator(Threefry2x32, seed={self._seed}, draws={self._count})"

    # who draws, in the TracerError of a draw inside a trace the generator does not belong to
    _drawer = "a Generator made outside a jitted (or vmapped, or looped) function draws inside it"

    def _next(self) -> Array:
        if is_tracing() and not self._traced:
            raise TracerError(f"{self._drawer}: the draw happens once, when the function is traced, so "
                              "every call would get the same numbers. Pass a key argument and draw with "
                              "pt.random.normal(key, ...), pt.random.uniform(key, ...) (fold_in(key, step) for a "
                              "new key a step)")
        # draws happen on the current device, as every other array op: a generator seeded on the CPU
        # draws inside `with pt.device('vulkan')` on vulkan, with the same numbers (the key is made
        # from the seed on each device, and the counter is shared)
        device = _dev.current()
        key = self._keys.get(device)
        if key is None:
            key = self._keys[device] = _r.key(self._seed)
        k = _r.fold_in(key, self._count)
        self._count += 1
        return k

    # --- floats ----------------------------------------------------------------------------------
    @api_boundary
    def random(self, size=None, dtype=dt.float64, out=None):
        """Uniform floats in [0, 1)."""
        _no_out(out)
        return _r.uniform(self._next(), _size(size), _float(dtype, "random"))

    @api_boundary
    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform floats in [low, high) (float64); low and high may be arrays (broadcast)."""
        shape = _shape_of(size, low, high)
        u = _r.uniform(self._next(), shape, dt.float64)
        return ew.add(ew.multiply(u, ew.subtract(high, low)), low).astype(dt.float64)

    @api_boundary
    def standard_normal(self, size=None, dtype=dt.float64, out=None):
        """Standard normal floats (Box-Muller)."""
        _no_out(out)
        return _r.normal(self._next(), _size(size), _float(dtype, "standard_normal"))

    @api_boundary
    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal floats with mean `loc` and standard deviation `scale` (arrays broadcast)."""
        if not isinstance(scale, Array) and np.any(np.asarray(scale) < 0):
            raise ShapeError("Generator.normal: scale < 0")
        shape = _shape_of(size, loc, scale)
        z = _r.normal(self._next(), shape, dt.float64)
        return ew.add(ew.multiply(z, scale), loc).astype(dt.float64)

    @api_boundary
    def exponential(self, scale=1.0, size=None):
        """Exponential floats with mean `scale`: -log(1 - u) * scale."""
        if not isinstance(scale, Array) and np.any(np.asarray(scale) < 0):
            raise ShapeError("Generator.exponential: scale < 0")
        shape = _shape_of(size, scale)
        u = _r.uniform(self._next(), shape, dt.float64)
        return ew.multiply(ew.negative(ew.log1p(ew.negative(u))), scale).astype(dt.float64)

    @api_boundary
    def standard_exponential(self, size=None, dtype=dt.float64, method="zig", out=None):
        _no_out(out)
        d = _float(dtype, "standard_exponential")
        u = _r.uniform(self._next(), _size(size), d)
        return ew.negative(ew.log1p(ew.negative(u)))


    # --- more distributions (poot/trace/random_distributions.py) ---------------------------------
    @api_boundary
    def standard_gamma(self, shape, size=None, dtype=dt.float64, out=None):
        """Gamma(shape, 1) floats (Marsaglia-Tsang in fixed vectorized rounds)."""
        _no_out(out)
        return _dist.standard_gamma(self._next, shape, size, dtype)

    @api_boundary
    def gamma(self, shape, scale=1.0, size=None):
        """Gamma(shape, scale) floats."""
        return _dist.gamma(self._next, shape, scale, size)

    @api_boundary
    def beta(self, a, b, size=None):
        """Beta(a, b) floats, from two gamma draws."""
        return _dist.beta(self._next, a, b, size)

    @api_boundary
    def chisquare(self, df, size=None):
        """Chi-square floats with df degrees of freedom."""
        return _dist.chisquare(self._next, df, size)

    @api_boundary
    def f(self, dfnum, dfden, size=None):
        """F-distributed floats."""
        return _dist.f(self._next, dfnum, dfden, size)

    @api_boundary
    def standard_t(self, df, size=None):
        """Student's t floats with df degrees of freedom."""
        return _dist.standard_t(self._next, df, size)

    @api_boundary
    def standard_cauchy(self, size=None):
        """Standard Cauchy floats (a ratio of normals)."""
        return _dist.standard_cauchy(self._next, size)

    @api_boundary
    def laplace(self, loc=0.0, scale=1.0, size=None):
        """Laplace (double exponential) floats."""
        return _dist.laplace(self._next, loc, scale, size)

    @api_boundary
    def logistic(self, loc=0.0, scale=1.0, size=None):
        """Logistic floats."""
        return _dist.logistic(self._next, loc, scale, size)

    @api_boundary
    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        """exp of Normal(mean, sigma) floats."""
        return _dist.lognormal(self._next, mean, sigma, size)

    @api_boundary
    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """Gumbel (extreme value type I) floats."""
        return _dist.gumbel(self._next, loc, scale, size)

    @api_boundary
    def pareto(self, a, size=None):
        """Pareto II (Lomax) floats, as NumPy's pareto."""
        return _dist.pareto(self._next, a, size)

    @api_boundary
    def power(self, a, size=None):
        """Power-function floats in [0, 1]."""
        return _dist.power(self._next, a, size)

    @api_boundary
    def rayleigh(self, scale=1.0, size=None):
        """Rayleigh floats."""
        return _dist.rayleigh(self._next, scale, size)

    @api_boundary
    def triangular(self, left, mode, right, size=None):
        """Triangular floats on [left, right]."""
        return _dist.triangular(self._next, left, mode, right, size)

    @api_boundary
    def wald(self, mean, scale, size=None):
        """Wald (inverse Gaussian) floats."""
        return _dist.wald(self._next, mean, scale, size)

    @api_boundary
    def weibull(self, a, size=None):
        """Weibull floats with shape a."""
        return _dist.weibull(self._next, a, size)

    @api_boundary
    def geometric(self, p, size=None):
        """Geometric int64 counts (trials to the first success)."""
        return _dist.geometric(self._next, p, size)

    @api_boundary
    def poisson(self, lam=1.0, size=None):
        """Poisson int64 counts (inversion below 10, PTRS above)."""
        return _dist.poisson(self._next, lam, size)

    @api_boundary
    def negative_binomial(self, n, p, size=None):
        """Negative binomial int64 counts (a gamma-Poisson mixture)."""
        return _dist.negative_binomial(self._next, n, p, size)

    @api_boundary
    def dirichlet(self, alpha, size=None):
        """Dirichlet draws of shape size + (len(alpha),)."""
        return _dist.dirichlet(self._next, alpha, size)

    @api_boundary
    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *, method="svd"):
        """Multivariate normal draws of shape size + mean.shape."""
        return _dist.multivariate_normal(self._next, mean, cov, size, check_valid, tol, method)

    @api_boundary
    def vonmises(self, mu, kappa, size=None):
        """von Mises angles in [-pi, pi]."""
        return _dist.vonmises(self._next, mu, kappa, size)

    @api_boundary
    def binomial(self, n, p, size=None):
        """Binomial int64 counts (inversion for small n * p, BTRS rejection above)."""
        return _dist.binomial(self._next, n, p, size)

    @api_boundary
    def multinomial(self, n, pvals, size=None):
        """Multinomial int64 counts of shape size + (len(pvals),)."""
        return _dist.multinomial(self._next, n, pvals, size)

    @api_boundary
    def logseries(self, p, size=None):
        """Logarithmic-series int64 counts."""
        return _dist.logseries(self._next, p, size)

    @api_boundary
    def noncentral_chisquare(self, df, nonc, size=None):
        """Noncentral chi-square floats."""
        return _dist.noncentral_chisquare(self._next, df, nonc, size)

    @api_boundary
    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        """Noncentral F floats."""
        return _dist.noncentral_f(self._next, dfnum, dfden, nonc, size)

    # NumPy's samplers poot has not built: a clear NotBuiltError rather than an AttributeError
    @api_boundary
    def hypergeometric(self, ngood, nbad, nsample, size=None):
        """Not built: raises NotBuiltError (see the message for what to use instead)."""
        raise NotBuiltError("Generator.hypergeometric is not built in poot (no sampler for it yet); "
                            "draw it with NumPy (np.random.default_rng(seed).hypergeometric(ngood, nbad, "
                            "nsample, size)) and pass the result to pt.asarray")

    @api_boundary
    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals"):
        """Not built: raises NotBuiltError (see the message for what to use instead)."""
        raise NotBuiltError("Generator.multivariate_hypergeometric is not built in poot; draw it with "
                            "NumPy (np.random.default_rng(seed).multivariate_hypergeometric(...)) and pass "
                            "the result to pt.asarray")

    @api_boundary
    def zipf(self, a, size=None):
        """Not built: raises NotBuiltError (see the message for what to use instead)."""
        raise NotBuiltError("Generator.zipf is not built in poot (no sampler for it yet); draw it with "
                            "NumPy (np.random.default_rng(seed).zipf(a, size)) and pass the result to "
                            "pt.asarray")

    # --- integers --------------------------------------------------------------------------------
    @api_boundary
    def integers(self, low, high=None, size=None, dtype=dt.int64, endpoint=False):
        """Uniform integers in [low, high) ([low, high] with endpoint=True); one bound: [0, low)."""
        if high is None:
            low, high = 0, low
        if np.ndim(low) or np.ndim(high) or isinstance(low, Array) or isinstance(high, Array):
            return self._integers_between(low, high, size, dt.as_dtype(dtype), endpoint)
        low, high = operator.index(low), operator.index(high)
        if endpoint:
            high += 1
        if high <= low:
            raise ShapeError(f"Generator.integers: low >= high ({low} >= {high})")
        d = dt.as_dtype(dtype)
        if d is dt.bool_:
            r = _r.randint(self._next(), _size(size), low, high, dt.uint8)
            return r.astype(dt.bool_)
        return _r.randint(self._next(), _size(size), low, high, d)

    def _integers_between(self, low, high, size, d: dt.DType, endpoint: bool) -> Array:
        """integers() with array bounds (broadcast): low + bits mod (high - low), as randint draws
        them. Bounds given as host values are checked now (low < high); lazy poot arrays can't be
        without running them."""
        if d.kind not in "iu":
            raise DTypeError(f"Generator.integers: dtype must be an integer type, got {d.name}")
        host = [np.asarray(b) for b in (low, high) if not isinstance(b, Array)]
        if any(h.dtype.kind not in "biu" for h in host):
            raise DTypeError("Generator.integers: low and high must be integers")
        if len(host) == 2:
            span = host[1].astype(np.int64) - host[0].astype(np.int64) + (1 if endpoint else 0)
            if (span <= 0).any():
                raise ShapeError("Generator.integers: low >= high for some of the bounds")
        lo, hi = mv.arr(low).astype(dt.int64), mv.arr(high).astype(dt.int64)
        shape = _shape_of(size, lo, hi)
        span = ew.subtract(hi, lo)
        if endpoint:
            span = ew.add(span, 1)
        b = _r.bits(self._next(), shape, dt.uint64)
        r = ew.remainder(b, span.astype(dt.uint64)).astype(dt.int64)
        return ew.add(r, lo).astype(d)

    # --- permutations and sampling ---------------------------------------------------------------
    def _order(self, n: int) -> Array:
        """A uniformly random permutation of range(n) (int64): argsort of random 64-bit keys."""
        from poot.trace.array_api_sets import argsort

        b = _r.bits(self._next(), (n,), dt.uint64)
        return argsort(b)

    @api_boundary
    def permutation(self, x, axis=0):
        """A permuted range(x) for an int, else a permuted copy of x along `axis`."""
        from poot.trace.indexing import take

        if isinstance(x, (int, np.integer)):
            return self._order(operator.index(x))
        x = mv.arr(x)
        if x.ndim == 0:
            raise ShapeError("Generator.permutation: x must be an integer or at least 1-dimensional")
        ax = mv.axis_of(axis, x.ndim, "permutation", x)
        return take(x, self._order(x.shape[ax]), axis=ax)

    @api_boundary
    def permuted(self, x, axis=None, out=None):
        """x with each slice along `axis` shuffled independently (the flattened x when None)."""
        from poot.trace.array_api_sets import argsort
        from poot.trace.indexing import take_along_axis

        _no_out(out)
        x = mv.arr(x)
        if axis is None:
            return mv.reshape(self.permutation(mv.reshape(x, (-1,))), x.shape)
        ax = mv.axis_of(axis, x.ndim, "permuted", x)
        order = argsort(_r.bits(self._next(), x.shape, dt.uint64), axis=ax)
        return take_along_axis(x, order, axis=ax)

    @refuses_temporaries("Generator.shuffle", 1)
    @api_boundary
    def shuffle(self, x, axis=0):
        """Shuffle the poot array x in place along `axis` (x's node is rebound to the shuffled
        value, as `x[...] = v` does). A NumPy array or a list, which are mutable host values, is
        shuffled in place as NumPy's shuffle does (`idx = np.arange(n); rng.shuffle(idx)`), by an
        order drawn from this generator."""
        if isinstance(x, (np.ndarray, list)):
            ndim = x.ndim if isinstance(x, np.ndarray) else 1      # a list: along its items
            if ndim == 0:
                raise ShapeError("Generator.shuffle: cannot shuffle a 0-d array")
            if not -ndim <= axis < ndim:
                raise AxisError(f"Generator.shuffle: axis {axis} is out of bounds for a {type(x).__name__} "
                                f"of {ndim} dimension(s)")
            order = self.permutation(np.shape(x)[axis] if ndim > 1 else len(x)).numpy()
            if isinstance(x, list):
                x[:] = [x[i] for i in order]
            else:
                x[...] = np.take(x, order, axis=axis)
            return
        if not isinstance(x, Array):
            raise DTypeError(f"Generator.shuffle: x must be a poot array, a NumPy array or a list, got "
                             f"{type(x).__name__}")
        x._node = self.permutation(x, axis=axis)._node

    @api_boundary
    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Random samples from `a` (an int n means range(n)): with or without replacement, uniformly
        or with probabilities `p` (inverse CDF with replacement, Gumbel top-k without)."""
        from poot.trace.array_api_sets import argsort, searchsorted
        from poot.trace.creation import arange
        from poot.trace.indexing import take

        if isinstance(a, (int, np.integer)):
            n = operator.index(a)
            if n <= 0 and (size is None or math.prod(_size(size))):
                raise ShapeError("Generator.choice: a must be a positive integer unless no samples are taken")
            pool = None
        else:
            pool = mv.arr(a)
            if pool.ndim == 0:
                raise ShapeError("Generator.choice: a must be a sequence or an integer, not a 0-d array")
            ax = mv.axis_of(axis, pool.ndim, "choice", pool)
            n = pool.shape[ax]
        shape = _size(size)
        k = math.prod(shape)
        if n == 0 and k:
            raise ShapeError("Generator.choice: a cannot be empty unless no samples are taken")
        pa = None
        if p is not None:
            pa = p.astype(dt.float64) if isinstance(p, Array) else None
            if pa is None:
                # NumPy's tolerance on the sum: sqrt(eps) of float64, or of p's own (wider-eps) float
                # dtype, so a float32 softmax output that sums to 1 within float32 rounding is accepted
                atol = math.sqrt(np.finfo(np.float64).eps)
                if isinstance(p, np.ndarray) and p.dtype.kind == "f":
                    atol = max(atol, math.sqrt(np.finfo(p.dtype).eps))
                pn = np.asarray(p, dtype=np.float64)
                if pn.shape != (n,):
                    raise ShapeError("Generator.choice: a and p must have the same size")
                if (pn < 0).any() or not math.isclose(pn.sum(), 1.0, rel_tol=0, abs_tol=atol):
                    raise ShapeError("Generator.choice: probabilities are not non-negative or do not sum to 1")
                if not replace and np.count_nonzero(pn) < k:
                    raise ShapeError("Generator.choice: fewer non-zero entries in p than size")
                pa = mv.arr(pn)
        if not replace and k > n:
            raise ShapeError("Generator.choice: cannot take a larger sample than population when "
                             "replace=False")
        if replace:
            if pa is None:
                idx = _r.randint(self._next(), (k,), 0, max(n, 1), dt.int64)
            else:
                cdf = red.cumsum(pa)
                cdf = ew.divide(cdf, cdf[n - 1])
                u = _r.uniform(self._next(), (k,), dt.float64)
                idx = ew.minimum(searchsorted(cdf, u, side="right"), n - 1)
        else:
            if pa is None:
                idx = self._order(n)[:k]
            else:   # Gumbel top-k: the k largest log(p) + Gumbel noise, in order
                u = _r.uniform(self._next(), (n,), dt.float64)
                g = ew.negative(ew.log(ew.negative(ew.log1p(ew.negative(u)))))
                score = ew.add(ew.log(pa), g)
                idx = argsort(score, descending=True)[:k]
        idx = mv.reshape(idx, shape)
        if pool is None:
            return idx if n > 0 else arange(0, dtype=dt.int64)[:0].reshape(shape)
        return take(pool, idx, axis=ax)

    @api_boundary
    def bytes(self, length):  # noqa: A003 (NumPy's name)
        """`length` random bytes."""
        w = _r.bits(self._next(), ((length + 3) // 4,), dt.uint32).numpy()
        return w.astype("<u4").tobytes()[:length]

    @api_boundary
    def spawn(self, n_children):
        """`n_children` independent generators (seeded from this one's next draw)."""
        w = _r.bits(self._next(), (2 * n_children,), dt.uint32).numpy().astype(np.uint64)
        return [Generator(int(w[2 * i]) << 32 | int(w[2 * i + 1])) for i in range(n_children)]


def _no_out(out):
    if out is not None:
        raise out_error("Generator", out)


class Threefry:
    """The seed of poot's Threefry2x32 streams in the shape of NumPy's bit generators: a SeedSequence
    (`seed_seq`) that `spawn` splits and `pt.random.default_rng(Threefry(seed))` draws from. Libraries
    that build one generator per task from a bit generator's type and spawned SeedSequences (Dask's
    `da.random.default_rng()` with poot chunks) get poot Generators this way. Its numbers are poot's,
    not NumPy's PCG64's."""

    def __init__(self, seed=None):
        self._seed_seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)

    @property
    def seed_seq(self) -> np.random.SeedSequence:
        return self._seed_seq

    def spawn(self, n_children: int) -> list:
        return [Threefry(s) for s in self._seed_seq.spawn(n_children)]

    def __repr__(self) -> str:
        return f"Threefry({self._seed_seq.entropy}, spawn_key={self._seed_seq.spawn_key})"


@api_boundary
def default_rng(seed=None):
    """A Generator seeded with `seed` (an int; None draws a seed from the OS; a SeedSequence or a
    Threefry bit generator; a Generator is returned as it is). Deterministic per seed on every device."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, Threefry):
        seed = seed.seed_seq
    if isinstance(seed, Array) and is_tracing():
        raise TracerError(f"default_rng: the seed ({seed.aval}) is traced, and a Generator's stream is "
                          "fixed when the function is traced; mark the seed static (static_argnums), or "
                          "pass a key (pt.random.key(seed)) and draw with pt.random.normal(key, shape)...")
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, np.uint64)[0])
    elif isinstance(seed, (np.random.BitGenerator, np.random.Generator)) or (
            seed is not None and not isinstance(seed, (list, tuple, np.ndarray))
            and not hasattr(seed, "__index__")):
        raise DTypeError(f"default_rng: seed must be None, an int, a sequence of ints or a "
                         f"SeedSequence, got {type(seed).__name__} (poot's streams are not NumPy's "
                         f"bit generators)")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy) & (2**64 - 1)
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
    elif operator.index(seed) < 0:
        raise ShapeError("default_rng: seed must be non-negative")
    return Generator(seed)

