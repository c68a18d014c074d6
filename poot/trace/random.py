"""`pt.random`: counter-based random numbers that are the same bits on every device.

A key is a uint32 array of shape (2,). Bits come from Threefry-2x32 (20 rounds; Salmon et al. 2011,
the generator JAX uses) evaluated as a graph of uint32 add/xor/shift/or over an iota counter, so any
device that runs the graph produces the same words. Floats are made by putting random mantissa bits
under the exponent of 1.0 and subtracting 1 (uniform in [0, 1)); normals use Box-Muller.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace.array import Array
from poot.trace.creation import _device, normalize_shape
from poot.trace.lazy import constant, from_numpy, record, shared_constant
from poot.trace.promote import cast

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli", "Generator",
           "Threefry", "default_rng", "seed", "rand", "randn", "random", "random_sample", "standard_normal", "exponential",
           "choice", "shuffle", "permutation"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32 = dt.uint32


def _c(value, dev):
    return constant(value, _U32, dev)


def _rotl(x, r, dev):
    left = record("shl", (x, _c(r, dev)))
    right = record("shr", (x, _c(32 - r, dev)))
    return record("or", (left, right))


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 (20 rounds) on uint32 nodes: keys k0, k1 (scalars) and counter words x0, x1."""
    dev = x0.device
    k2 = record("xor", (record("xor", (k0, k1)), _c(0x1BD11BDA, dev)))
    ks = (k0, k1, k2)
    x0 = record("add", (x0, k0))
    x1 = record("add", (x1, k1))
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = record("add", (x0, x1))
            x1 = record("xor", (_rotl(x1, r, dev), x0))
        x0 = record("add", (x0, ks[(i + 1) % 3]))
        x1 = record("add", (record("add", (x1, ks[(i + 2) % 3])), _c(i + 1, dev)))
    return x0, x1


def _key_words(k, op):
    if not isinstance(k, Array):
        raise DTypeError(f"{op}: expected a key made by pt.random.key(seed), got {type(k).__name__}")
    if k.shape != (2,) or k.dtype is not _U32:
        raise ShapeError(f"{op}: a key is a uint32 array of shape (2,), got {k.aval} "
                         f"(make one with pt.random.key(seed), or index a split result)")
    n = k._node
    k0 = record("reshape", (record("slice", (n,), {"starts": (0,), "steps": (1,), "sizes": (1,)}),),
                {"shape": ()})
    k1 = record("reshape", (record("slice", (n,), {"starts": (1,), "steps": (1,), "sizes": (1,)}),),
                {"shape": ()})
    return k0, k1


def _bits(k, count, op):
    """`count` random uint32 words (a 1-D node) from key `k`."""
    k0, k1 = _key_words(k, op)
    dev = k._node.device
    half = (count + 1) // 2
    ctr = record("iota", (), {"shape": (2 * half,), "axis": 0, "dtype": _U32}, dev)
    x0 = record("slice", (ctr,), {"starts": (0,), "steps": (1,), "sizes": (half,)})
    x1 = record("slice", (ctr,), {"starts": (half,), "steps": (1,), "sizes": (half,)})
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    out = record("concatenate", (y0, y1), {"axis": 0})
    if 2 * half != count:
        out = record("slice", (out,), {"starts": (0,), "steps": (1,), "sizes": (count,)})
    return out


@api_boundary
def key(seed, *, device=None):
    """A key from an integer seed (the seed's 64 bits become the two words). The seed may be a 0-d
    integer array, traced under @pt.jit or pt.vmap too (a seed passed in as an argument)."""
    if isinstance(seed, Array):
        return _key_of_array(seed)
    try:
        seed = operator.index(seed) & (2**64 - 1)
    except TypeError:
        raise ArgumentError(f"random.key: the seed must be an integer, got {seed!r}") from None
    words = np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)
    return Array(from_numpy(words, _device(device)))


def _key_of_array(seed: Array) -> Array:
    """key(seed) for a 0-d integer array: the same two words as for the int it holds (its 64 bits,
    two's complement for a negative seed), computed by the graph so a traced seed works."""
    if seed.ndim != 0 or seed.dtype.kind not in "iub":
        raise ArgumentError(f"random.key: the seed must be an integer scalar, got an array {seed.aval}")
    w = cast(seed._node, dt.uint64)
    hi = cast(record("shr", (w, constant(32, dt.uint64, w.device))), _U32)
    words = [record("reshape", (cast(x, _U32),), {"shape": (1,)}) for x in (hi, w)]   # casts wrap
    return Array(record("concatenate", tuple(words), {"axis": 0}))


@api_boundary
def split(key, num=2):  # noqa: A002 (JAX's name)
    """`num` new independent keys, as a (num, 2) array (iterate or index it for single keys); a tuple
    `num` (JAX's shape form) gives an array of keys of shape num + (2,)."""
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        dims = (-1,)
    if any(n < 0 or isinstance(n, bool) for n in dims + shape):
        raise ArgumentError(f"random.split: num must be an integer >= 0 or a tuple of them, got {num!r}")
    b = _bits(key, 2 * math.prod(dims), "split")
    return Array(record("reshape", (b,), {"shape": dims + (2,)}))


@api_boundary
def fold_in(key, data):
    """A new key from `key` and an integer (e.g. a step number): a Python int, or a 0-d integer
    array, traced or not (a loop counter inside `pt.fori_loop` or `@pt.jit`). Either way only the
    low 32 bits of `data` count, as in JAX."""
    k0, k1 = _key_words(key, "fold_in")
    dev = key._node.device
    if isinstance(data, Array):
        if data.ndim != 0 or data.dtype.kind not in "iub":
            raise DTypeError(f"fold_in: data must be an integer scalar; got an array of shape {data.shape} "
                             f"and dtype {data.dtype.name}")
        word = cast(data._node, _U32)       # integer conversion wraps: the low 32 bits
        if word.device != dev:
            raise DTypeError(f"fold_in: the key is on '{dev}' and data on '{word.device}'")
    else:
        try:
            # a leaf holding the value, not a constant in the graph: a loop drawing with fold_in(key, i)
            # (and a Generator, which counts its draws so) reuses one program for every i
            word = shared_constant(operator.index(data) & 0xFFFFFFFF, _U32, dev)
        except TypeError:
            raise DTypeError(f"fold_in: data must be an integer, got {type(data).__name__}") from None
    y0, y1 = threefry2x32(k0, k1, _c(0, dev), word)
    return Array(record("concatenate", (record("reshape", (y0,), {"shape": (1,)}),
                                        record("reshape", (y1,), {"shape": (1,)})), {"axis": 0}))


@api_boundary
def bits(key, shape=(), dtype=dt.uint32):
    """Raw random bits: uint32 words (or uint64 made of two words)."""
    shape = normalize_shape(shape, "bits")
    d = dt.as_dtype(dtype)
    n = math.prod(shape)
    if d is dt.uint32:
        return Array(record("reshape", (_bits(key, n, "bits"),), {"shape": shape}))
    if d is dt.uint64:
        return Array(record("reshape", (_bits64(key, n, "bits"),), {"shape": shape}))
    raise DTypeError(f"bits: dtype must be uint32 or uint64, got {d.name}")


def _bits64(k, n, op):
    w = _bits(k, 2 * n, op)
    hi = cast(record("slice", (w,), {"starts": (0,), "steps": (1,), "sizes": (n,)}), dt.uint64)
    lo = cast(record("slice", (w,), {"starts": (n,), "steps": (1,), "sizes": (n,)}), dt.uint64)
    return record("or", (record("shl", (hi, constant(32, dt.uint64, hi.device))), lo))


_MANTISSA = {dt.float16: (10, dt.uint16, 0x3C00), dt.bfloat16: (7, dt.uint16, 0x3F80),
             dt.float32: (23, dt.uint32, 0x3F800000), dt.float64: (52, dt.uint64, 0x3FF0000000000000)}


def _unit(k, n, d, op):
    """n uniform floats of dtype d in [0, 1), as a 1-D node."""
    mant, u, one = _MANTISSA[d]
    if d is dt.float64:
        b = record("shr", (_bits64(k, n, op), constant(64 - mant, dt.uint64, k._node.device)))
    else:
        b = record("shr", (_bits(k, n, op), _c(32 - mant, k._node.device)))
        b = cast(b, u)
    f = record("bitcast", (record("or", (b, constant(one, u, b.device))),), {"dtype": d})
    return record("sub", (f, constant(1.0, d, f.device)))


def _float_dtype(dtype, op):
    d = dt.as_dtype(dtype)
    if d.kind != "f":
        raise DTypeError(f"{op}: dtype must be a floating type, got {d.name}")
    return d


def _numpy_advice(numpy_name: str, generator_name: str) -> str:
    if generator_name == "default_rng":
        return "make a generator with rng = pt.random.default_rng(seed) and draw from its methods"
    return (f"for NumPy's np.random.{numpy_name}(..., size=...) use rng = pt.random.default_rng(seed) "
            f"and rng.{generator_name}(..., size=...)")


def _check_key(key, op: str, generator_name: str, numpy_style: dict) -> None:
    """pt.random's functions take a key first (JAX style); a NumPy-style call (no key, size=...)
    gets told where NumPy's interface lives."""
    if numpy_style or not isinstance(key, Array):
        given = f"keywords {sorted(numpy_style)}" if numpy_style else f"{type(key).__name__} {key!r} first"
        raise DTypeError(f"pt.random.{op} takes a key first (pt.random.{op}(pt.random.key(0), shape)), "
                         f"got {given}; {_numpy_advice(op, generator_name)}")


# NumPy names with no global-state function here (random_global.py has seed, rand, randn...), and where
# poot's counterparts live
_NUMPY_GLOBAL = {"integers": "integers", "RandomState": "default_rng"}


def __getattr__(name: str):
    if name in _NUMPY_GLOBAL:
        raise AttributeError(f"pt.random has no global-state {name}() (NumPy's np.random.{name}); "
                             f"{_numpy_advice(name, _NUMPY_GLOBAL[name])}")
    raise AttributeError(f"module 'poot.random' has no attribute {name!r}")


@api_boundary
def _uniform_key(key=None, shape=(), dtype=dt.float64, minval=0.0, maxval=1.0, **numpy_style):
    """Uniform floats in [minval, maxval)."""
    _check_key(key, "uniform", "uniform", numpy_style)
    shape = normalize_shape(shape, "uniform")
    d = _float_dtype(dtype, "uniform")
    u = _unit(key, math.prod(shape), d, "uniform")
    dev = u.device
    if _held(minval, maxval):           # arrays, or values traced under @pt.jit: JAX's broadcasting
        lo, hi = (_param(v, d, shape, "uniform", name) for v, name in ((minval, "minval"), (maxval, "maxval")))
        u = Array(record("reshape", (u,), {"shape": shape}))
        return ew.maximum(u * (hi - lo) + lo, lo).astype(d)
    if (minval, maxval) != (0.0, 1.0):
        u = record("add", (record("mul", (u, constant(maxval - minval, d, dev))), constant(minval, d, dev)))
        u = record("max", (u, constant(minval, d, dev)))
    return Array(record("reshape", (u,), {"shape": shape}))


def _held(*values) -> bool:
    """Whether a distribution parameter is an array (a poot or NumPy one, a value traced under @pt.jit
    included) rather than a Python number: it is then applied elementwise, broadcast to the shape."""
    return any(isinstance(v, (Array, np.ndarray)) for v in values)


def _param(v, d, shape, op: str, name: str) -> Array:
    """Parameter `v` of distribution `op` as a `d` array broadcastable to `shape` (JAX's rule)."""
    from poot.trace.creation import asarray
    from poot.graph import broadcast_shapes

    a = v if isinstance(v, Array) else asarray(v)
    try:
        if broadcast_shapes(a.shape, shape, op=op) != shape:
            raise ShapeError("")
    except ShapeError:
        raise ShapeError(f"pt.random.{op}: {name} of shape {a.shape} does not broadcast to the shape "
                         f"{shape} asked for") from None
    return a.astype(d)


@api_boundary
def _normal_key(key=None, shape=(), dtype=dt.float64, loc=0.0, scale=1.0, **numpy_style):
    """Normally distributed floats (Box-Muller; half types compute in float32)."""
    _check_key(key, "normal", "normal", numpy_style)
    shape = normalize_shape(shape, "normal")
    d = _float_dtype(dtype, "normal")
    w = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    n = math.prod(shape)
    u = _unit(key, 2 * n, w, "normal")
    dev = u.device
    u1 = record("sub", (constant(1.0, w, dev), record("slice", (u,), {"starts": (0,), "steps": (1,),
                                                                        "sizes": (n,)})))
    u2 = record("slice", (u,), {"starts": (n,), "steps": (1,), "sizes": (n,)})
    r = record("sqrt", (record("mul", (constant(-2.0, w, dev), record("log", (u1,)))),))
    z = record("mul", (r, record("cos", (record("mul", (constant(2 * math.pi, w, dev), u2)),))))
    if _held(loc, scale):
        mu, sigma = (_param(v, w, shape, "normal", name) for v, name in ((loc, "loc"), (scale, "scale")))
        return (Array(record("reshape", (z,), {"shape": shape})) * sigma + mu).astype(d)
    if (loc, scale) != (0.0, 1.0):
        z = record("add", (record("mul", (z, constant(scale, w, dev))), constant(loc, w, dev)))
    return Array(record("reshape", (cast(z, d),), {"shape": shape}))


@api_boundary
def _randint_key(key=None, shape=(), minval=0, maxval=None, dtype=dt.int64, **numpy_style):
    """Uniform integers in [minval, maxval) (one argument: [0, minval), like NumPy's randint)."""
    _check_key(key, "randint", "integers", numpy_style)
    if maxval is None:
        minval, maxval = 0, minval
    shape = normalize_shape(shape, "randint")
    d = dt.as_dtype(dtype)
    if d.kind not in "iu":
        raise DTypeError(f"randint: dtype must be an integer type, got {d.name}")
    if _held(minval, maxval):
        return _randint_held(key, shape, minval, maxval, d)
    span = int(maxval) - int(minval)
    if span <= 0:
        raise ShapeError(f"randint: the range [{minval}, {maxval}) is empty; maxval must exceed minval")
    info = np.iinfo(d.np)
    if minval < info.min or maxval - 1 > info.max:
        raise DTypeError(f"randint: [{minval}, {maxval}) does not fit {d.name}")
    n = math.prod(shape)
    dev = key._node.device
    b = _bits64(key, n, "randint")
    # a full 64-bit span (2**64, which no uint64 constant holds) is the raw random bits themselves
    r = b if span == 2**64 else record("mod", (b, constant(span, dt.uint64, dev)))
    r = record("add", (r, constant(minval % 2**64, dt.uint64, dev)))  # wraps to minval + r
    return Array(record("reshape", (cast(r, d),), {"shape": shape}))


def _randint_held(key, shape, minval, maxval, d) -> Array:
    """randint with array bounds (per-element ranges broadcast to `shape`, or values traced under
    @pt.jit), as JAX's: the same 64-bit words reduced modulo each element's span. Their values are not
    known while recording, so an empty range gives minval (JAX's rule) instead of an error."""
    lo, hi = (_param(v, dt.int64, shape, "randint", name) for v, name in ((minval, "minval"), (maxval, "maxval")))
    span = ew.maximum(hi - lo, 1).astype(dt.uint64)
    b = Array(record("reshape", (_bits64(key, math.prod(shape), "randint"),), {"shape": shape}))
    return (lo.astype(dt.uint64) + b % span).astype(d)      # uint64 arithmetic wraps to lo + r


@api_boundary
def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability p: a number, or an array (traced under @pt.jit too)
    broadcast to `shape`, which defaults to p's shape (JAX's rule)."""
    if shape is None:
        shape = tuple(p.shape) if _held(p) else ()
    u = _uniform_key(key, shape, dt.float64)
    if _held(p):
        return ew.less(u, _param(p, dt.float64, u.shape, "bernoulli", "p"))
    return Array(record("lt", (u._node, constant(float(p), dt.float64, u._node.device))))


# NumPy's Generator interface over these functions, and NumPy's global-state functions over one
# Generator (imported last: they build on them)
from poot.trace.random_generator import Generator, Threefry, default_rng  # noqa: E402
from poot.trace import random_global  # noqa: E402
from poot.trace.random_global import (permutation, rand, randn, random,  # noqa: E402
                                      random_sample, seed, shuffle, standard_normal)
from poot.trace import random_global_more  # noqa: E402
from poot.trace.random_global_more import *  # noqa: E402,F401,F403  (binomial, poisson, get_state...)

__all__ += random_global_more.__all__


def _key_or_global(name: str, with_key, global_fn=None):
    """pt.random.<name>: with a key first, `with_key` (JAX style); called NumPy's way, with no key first
    (np.random.<name>(...), size=...), the global-state generator's (`global_fn`, by default
    random_global's function of that name)."""
    global_fn = global_fn or getattr(random_global, name)

    def fn(*args, **kwargs):
        if (args and isinstance(args[0], Array)) or isinstance(kwargs.get("key"), Array):
            return with_key(*args, **kwargs)
        return global_fn(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{with_key.__doc__} With no key first: NumPy's np.random.{name}, from the global state."
    return fn


uniform = _key_or_global("uniform", _uniform_key)
normal = _key_or_global("normal", _normal_key)
randint = _key_or_global("randint", _randint_key)

# JAX's other key-first samplers (random_keyed.py); gumbel and permutation are NumPy's without a key
from poot.trace import random_keyed  # noqa: E402
from poot.trace.random_keyed import (PRNGKey, categorical, key_data, truncated_normal,  # noqa: E402
                                     wrap_key_data)

gumbel = _key_or_global("gumbel", random_keyed.gumbel, random_global_more.gumbel)


def _key_first_or_global(name: str, with_key, global_fn):
    """pt.random.<name> for a name whose NumPy form takes an array first (`choice(a)`,
    `exponential(scale)`): JAX's key-first form when that array is a key (random_keyed.is_key, the
    test refuse_key already refuses in NumPy's), else NumPy's global-state function."""

    def fn(*args, **kwargs):
        if random_keyed.is_key(args[0] if args else kwargs.get("key")):
            return with_key(*args, **kwargs)
        return global_fn(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{with_key.__doc__} With no key first: NumPy's np.random.{name}, from the global "
                  f"state.")
    return fn


choice = _key_first_or_global("choice", random_keyed.choice, random_global.choice)
exponential = _key_first_or_global("exponential", random_keyed.exponential, random_global.exponential)
dirichlet = _key_first_or_global("dirichlet", random_keyed.dirichlet, random_global_more.dirichlet)
multivariate_normal = _key_first_or_global("multivariate_normal", random_keyed.multivariate_normal,
                                           random_global_more.multivariate_normal)
globals().update({_n: _key_first_or_global(_n, _f, getattr(random_global_more, _n))
                  for _n, _f in random_keyed.KEYED.items()})
globals().update(random_keyed.JAX_ONLY)
__all__ += list(random_keyed.JAX_ONLY)


def permutation(*args, **kwargs):
    """JAX's `permutation(key, x, axis=0)` when a key and x are given (random_keyed.py); otherwise
    NumPy's `permutation(x)` from the global state, which refuses a key given alone."""
    first = args[0] if args else kwargs.get("key")
    if (len(args) >= 2 or "x" in kwargs) and random_keyed.is_key(first):
        return random_keyed.permutation(*args, **kwargs)
    return random_global.permutation(*args, **kwargs)
__all__ += random_keyed.__all__


def __dir__():
    """The public names (`__all__`), not the modules and helpers this file imports (what tab
    completion offers)."""
    return sorted(__all__)
