"""NumPy's global-state random functions (`np.random.seed(0); np.random.rand(3)`) over one module-wide
Generator (poot/trace/random_generator.py), so that NumPy scripts run with `import poot as np`.

pt.random's own functions take a key first (JAX style); `uniform`, `normal` and `randint` called
NumPy's way (no key first) draw from this generator instead (random.py `_key_or_global`). As with any
Generator made outside a jitted function, drawing inside one is refused: the draw would happen once, at
trace time, and every call would see the same numbers; a jitted function takes a key argument.
"""
from __future__ import annotations

from poot.errors import ArgumentError, api_boundary
from poot.trace.lost_writes import refuses_temporaries
from poot.trace.random_generator import Generator, default_rng

__all__ = ["seed", "rand", "randn", "random", "random_sample", "standard_normal", "exponential", "choice",
           "shuffle", "permutation", "get_state_generator"]

_generator: Generator | None = None


def get_state_generator() -> Generator:
    """The Generator the global-state functions draw from (seeded from the OS until `seed` is called)."""
    global _generator
    if _generator is None:
        _generator = _module_generator(None)
    return _generator


def _module_generator(seed) -> Generator:
    """A Generator that belongs to no trace, even when made inside one (the process's first draw may
    come from a jitted, vmapped or looped function): a draw from it inside a trace is then refused
    like any other, rather than counted as the trace's own and repeated at every call."""
    g = default_rng(seed)
    g._traced = False
    g._drawer = ("pt.random's global-state functions (rand, randn, random, uniform, normal, randint, choice, "
                 "permutation...) draw inside a jitted (or vmapped, or looped) function")
    return g


@api_boundary
def seed(seed=None):  # noqa: A002 (NumPy's name)
    """Reseed the global-state functions (NumPy's np.random.seed): the same seed, the same numbers on
    every device (not NumPy's numbers: poot's streams are counter-based Threefry)."""
    global _generator
    _generator = _module_generator(seed)


def refuse_key(op: str, args) -> None:
    """NumPy's global-state functions take no key, but JAX's of the same names do: a key passed first
    (`gamma(key, 2.0)`, `choice(key, 10)`) would be read as a parameter or a size and give numbers
    drawn from the key's two words. A uint32 array ending in 2 words (what key, split and fold_in
    make) is taken for such a key and refused, naming the functions that take one."""
    from poot.trace.random_keyed import is_key

    x = args[0] if args else None
    if is_key(x):
        raise ArgumentError(
            f"random.{op}: the first argument is a key ({x.aval}), but random.{op} is NumPy's "
            f"global-state function and takes no key; with a key, draw with pt.random.uniform, "
            f"normal, randint, bernoulli or bits (key first), or use a Generator: "
            f"pt.random.default_rng(seed).{_METHOD.get(op, op)}(...)")


_METHOD = {"rand": "random", "randn": "standard_normal"}   # the Generator method each one draws with


def _shape(dims, op: str) -> tuple:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        raise ArgumentError(f"random.{op} takes the dimensions as separate ints ({op}(2, 3)), not a tuple")
    return tuple(dims)


@api_boundary
def rand(*dims):
    """Uniform floats in [0, 1) of shape `dims` (np.random.rand(2, 3))."""
    refuse_key("rand", dims)
    return get_state_generator().random(_shape(dims, "rand"))


@api_boundary
def randn(*dims):
    """Standard normal floats of shape `dims` (np.random.randn(2, 3))."""
    refuse_key("randn", dims)
    return get_state_generator().standard_normal(_shape(dims, "randn"))


@api_boundary
def random(size=None):
    """Uniform floats in [0, 1) (np.random.random)."""
    refuse_key("random", (size,))
    return get_state_generator().random(size)


random_sample = random


@api_boundary
def standard_normal(size=None):
    refuse_key("standard_normal", (size,))
    return get_state_generator().standard_normal(size)


@api_boundary
def exponential(scale=1.0, size=None):
    refuse_key("exponential", (scale,))
    return get_state_generator().exponential(scale, size)


@api_boundary
def choice(a, size=None, replace=True, p=None):
    refuse_key("choice", (a,))
    return get_state_generator().choice(a, size, replace, p)


@refuses_temporaries("random.shuffle")
@api_boundary
def shuffle(x):
    """Shuffle `x` in place along its first axis (x, a poot Array, is rebound to the shuffled value;
    a temporary nothing holds, whose shuffle would be lost, is refused)."""
    refuse_key("shuffle", (x,))
    get_state_generator().shuffle(x)


@api_boundary
def permutation(x):
    """A permuted range(x) for an int, else a permuted copy of x along its first axis (NumPy's
    one-argument form; pt.random.permutation(key, x) is JAX's, random_keyed.py). A key alone is refused
    (refuse_key): it would be permuted itself."""
    refuse_key("permutation", (x,))
    return get_state_generator().permutation(x)


@api_boundary
def uniform(low=0.0, high=1.0, size=None):
    return get_state_generator().uniform(low, high, size)


@api_boundary
def normal(loc=0.0, scale=1.0, size=None):
    return get_state_generator().normal(loc, scale, size)


@api_boundary
def randint(low, high=None, size=None, dtype=int):
    """Integers in [low, high) (one bound: [0, low)), as np.random.randint."""
    return get_state_generator().integers(low, high, size, dtype=dtype)
