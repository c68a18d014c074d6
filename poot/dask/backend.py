"""poot as a Dask array backend, named "poot" (as "numpy" and "cupy" are):

    with dask.config.set({"array.backend": "poot"}):
        x = da.ones((1000, 1000), chunks=250)                 # poot chunks, made in their tasks
        r = da.random.default_rng(0).standard_normal((10**6,), chunks=10**5)
    y = numpy_backed.to_backend("poot")                       # each chunk becomes a poot array

The creation functions are Dask's own with a poot meta, so each chunk is made inside its task on the
worker's device. `da.random.default_rng()` under this backend spawns one `pt.random.Threefry` seed per
chunk (Dask's way with NumPy's bit generators) and each task draws from `pt.random.default_rng` of its
seed; the legacy functions (`da.random.random`, `randint`...) go through `RandomState`. Either way the
numbers are poot's Threefry streams, deterministic per seed, not NumPy's.
"""
from __future__ import annotations

import numpy as np
from dask import config
from dask.array.backends import ArrayBackendEntrypoint
from dask.utils import Dispatch

import poot as pt
from poot.errors import NotBuiltError
from poot.trace.array import Array

to_poot_dispatch = Dispatch("to_poot_dispatch")


@to_poot_dispatch.register(np.ndarray)
def _numpy_to_poot(data, **kwargs):
    return pt.asarray(data, **kwargs)


@to_poot_dispatch.register(Array)
def _poot_to_poot(data, **kwargs):
    return data


def _meta():
    return pt.empty((0,), dtype=pt.float64)


def _with_poot_meta(function, /, *args, meta=None, **kwargs):
    """`da.<function>` (Dask's chunked creation function) with a poot meta: its chunks are poot
    arrays. (Dask passes `name=`, the graph layer's name, among the keywords.)"""
    import dask.array as da

    with config.set({"array.backend": "numpy"}):
        return getattr(da, function)(*args, meta=_meta() if meta is None else meta, **kwargs)


# NumPy's RandomState names -> its Generator's
_LEGACY_NAMES = {"random_sample": "random", "ranf": "random", "sample": "random", "randint": "integers"}


class RandomState:
    """NumPy's legacy RandomState names over a poot Generator, for Dask's module-level functions
    (`da.random.random`, `normal`, `randint`...) under the poot backend: Dask makes one per chunk from
    that chunk's seed data and calls the NumPy name with `size=`."""

    def __init__(self, seed=None):
        self._generator = pt.random.default_rng(seed)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        target = getattr(self._generator, _LEGACY_NAMES.get(name, name), None)
        if target is None:
            raise NotBuiltError(f"RandomState.{name} is not built for poot chunks; draw with "
                                "da.random.default_rng() (NumPy's Generator methods)")
        return target


class PootBackendEntrypoint(ArrayBackendEntrypoint):
    """The "poot" array backend of Dask (`dask.config.set({"array.backend": "poot"})`,
    `x.to_backend("poot")`)."""

    @classmethod
    def to_backend_dispatch(cls):
        return to_poot_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, Array):
            return data
        # the meta converted here: a dtype poot lacks raises poot's DTypeError at this call, not a
        # ValueError from inside Dask's dtype inference
        kwargs.setdefault("meta", to_poot_dispatch(data._meta))
        return data.map_blocks(to_poot_dispatch, **kwargs)

    @property
    def RandomState(self):
        return RandomState

    @property
    def default_bit_generator(self):
        return pt.random.Threefry

    @staticmethod
    def ones(*args, **kwargs):
        return _with_poot_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_poot_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_poot_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_poot_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        import dask.array as da

        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=_meta() if like is None else like, **kwargs)


def register_backend() -> None:
    """Make "poot" a Dask array backend (registering it again replaces it with an equal one)."""
    from dask.array.backends import array_creation_dispatch

    array_creation_dispatch.register_backend("poot", PootBackendEntrypoint())
