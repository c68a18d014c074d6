"""JAX's key-first samplers beyond pt.random's core (key, split, uniform, normal, randint, bernoulli):
`PRNGKey`, `categorical`, `truncated_normal`, and the key-first forms of `gumbel` and `permutation`.

Code written for `jax.random` calls these with a key first; the same names called NumPy's way (no
key) are NumPy's global-state functions (random.py `_key_or_global` picks by the first argument).
They are built on the core's uniform bits, so they give the same numbers on every device, and they
record lazily like the rest (inside @pt.jit too).
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, ShapeError, api_boundary
from poot.trace.array import Array
from poot.trace.creation import asarray, normalize_shape

__all__ = ["PRNGKey", "categorical", "truncated_normal"]


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


def _open_unit(key, shape, d):
    """Uniform floats in (0, 1): [0, 1) with 0 moved to the dtype's smallest normal (a Gumbel or
    inverse-CDF transform would make it infinite)."""
    from poot.trace.random import uniform

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
    ax = axis + logits.ndim if axis < 0 else axis
    if not 0 <= ax < logits.ndim:
        raise ShapeError(f"random.categorical: axis {axis} is out of range for logits of {logits.ndim} axes")
    moved = pt.moveaxis(logits, ax, -1) if ax != logits.ndim - 1 else logits
    batch = tuple(moved.shape[:-1])
    shape = batch if shape is None else normalize_shape(shape, "categorical")
    if tuple(shape[len(shape) - len(batch):]) != batch:
        raise ShapeError(f"random.categorical: shape {shape} must end in the logits' batch shape {batch}")
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
    ax = axis + x.ndim if axis < 0 else axis
    if x.ndim == 0 or not 0 <= ax < x.ndim:
        raise ShapeError(f"random.permutation: axis {axis} is out of range for an array of {x.ndim} axes")
    order = pt.argsort(bits(key, (x.shape[ax],), dt.uint64))
    return pt.take(x, order, axis=ax)
