"""Dask's chunk-type registry and `dask.array.dispatch` lookups for poot arrays.

Dask calls NumPy's functions on its chunks (`np.sum`, `np.exp`, `operator.add`...), which poot
arrays answer lazily through `__array_function__`/`__array_ufunc__` (poot/trace/interop.py). For a
few operations Dask looks the implementation up by chunk type instead (`dask.array.dispatch`):
concatenating partial results, tensordot and einsum blocks, the element counts of `mean`/`var`,
division with a dtype, percentiles, `take`, `empty`. Each is registered here with a poot function, so
a chunk stays a lazy poot array through these steps instead of meeting NumPy's default (which would
read it to the host). `sizeof` reports a chunk's bytes without realizing it, and `tokenize` hashes a
poot array's value the way Dask hashes a NumPy array's, so `da.from_array(x)` names the same data
the same way in every process.
"""
from __future__ import annotations

import math

import numpy as np

import poot as pt
from poot import dtypes as dt
from poot.errors import DTypeError
from poot.trace.array import Array
from poot.trace.lazy import shared_constant
from poot.trace.movement import broadcast_node


def _as_poot(x, like: Array):
    """`x` as a poot array on `like`'s device (host data such as a NumPy partial is uploaded)."""
    if isinstance(x, Array):
        return x
    return pt.asarray(x, device=like.device)


def concatenate(arrays, axis=0):
    """Dask joins the partial results of reductions and rechunks with this."""
    arrays = list(arrays)
    first = next((a for a in arrays if isinstance(a, Array)), None)
    return pt.concatenate([_as_poot(a, first) for a in arrays], axis=axis)


def take(a, indices, axis=None):
    return pt.take(a, indices, axis=axis)


def tensordot(a, b, axes=2):
    like = a if isinstance(a, Array) else b
    return pt.tensordot(_as_poot(a, like), _as_poot(b, like), axes=axes)


def einsum(subscripts, *operands, dtype=None, casting="safe", order="K", optimize=False):
    """NumPy's einsum keywords as Dask passes them: `dtype` casts the operands first (checked by
    `casting`, as NumPy does); `order` and `optimize` are layout and contraction-order hints that
    poot's planner decides by itself."""
    like = next(o for o in operands if isinstance(o, Array))
    ops = [_as_poot(o, like) for o in operands]
    if dtype is not None:
        d = dt.as_dtype(dtype)
        for o in ops:
            if not np.can_cast(o.dtype.np, d.np, casting=casting):
                raise DTypeError(f"einsum({subscripts!r}): cannot cast an operand of {o.dtype.name} "
                                 f"to {d.name} with casting={casting!r}")
        ops = [o.astype(d) for o in ops]
    return pt.einsum(subscripts, *ops)


def empty(shape, dtype=None):
    return pt.empty(shape, dtype=dtype)


def divide(a, b, dtype=None):
    """`mean` and `var` divide totals by counts with a result dtype."""
    out = pt.divide(a, b)
    return out if dtype is None or out.dtype == dtype else out.astype(dtype)


def percentile(a, q, method="linear"):
    """The per-chunk step of `da.percentile`: the chunk's percentiles and its length (Dask's
    contract: `(None, 0)` for an empty chunk)."""
    n = len(a)
    if not n:
        return None, n
    return pt.percentile(a, list(q) if not isinstance(q, (int, float)) else q, method=method), n


def _reduced_shape(shape, axis, keepdims):
    if axis is None:
        axis = tuple(range(len(shape)))
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axis = tuple(a % len(shape) for a in axis) if shape else ()
    count = math.prod(shape[a] for a in axis)
    if keepdims:
        return tuple(1 if i in axis else s for i, s in enumerate(shape)), count
    return tuple(s for i, s in enumerate(shape) if i not in axis), count


def numel(x, axis=None, keepdims=False, dtype=np.float64, **_):
    """The element count per reduced position (what `mean` divides by), as a poot array on the
    chunk's device: known from the shape, so no kernel reads the chunk for it."""
    shape, count = _reduced_shape(x.shape, axis, keepdims)
    # the count is an operand (a shared 0-d leaf, broadcast), not a `full` constant: Dask's next
    # steps (`n.astype(int64)`, `total / n`) would fold a constant into the equations they record,
    # and chunks whose counts differ but whose count arrays have one shape (uneven chunks reduced
    # along their uneven axis) must not look like the same call to poot's recipe cache
    d = dt.as_dtype(dtype)
    return Array(broadcast_node(shared_constant(count, d, x.device), shape))


def nannumel(x, axis=None, keepdims=False, dtype=np.float64, **_):
    """The count of non-NaN elements (`nanmean`, `nanvar`)."""
    return pt.sum(pt.logical_not(pt.isnan(x)), axis=axis, keepdims=keepdims, dtype=dtype)


def to_numpy(x, **_):
    """`dask_array.to_backend("numpy")`: the one deliberate conversion to NumPy."""
    return np.array(x.numpy())


def sizeof(x) -> int:
    """Dask's memory accounting: the bytes the value takes once realized (nothing is realized)."""
    return int(x.nbytes)


def normalize_token(x):
    """Deterministic content token, like Dask's for NumPy arrays: the value is realized (one program,
    if pending) and hashed with its device, dtype and shape."""
    from dask.base import normalize_token as token

    return ("poot.Array", x.device, x.dtype.name, x.shape, token(np.asarray(x)))


# dask.array.dispatch table -> poot's implementation
_LOOKUPS = {
    "concatenate_lookup": concatenate, "take_lookup": take, "tensordot_lookup": tensordot,
    "einsum_lookup": einsum, "empty_lookup": empty, "divide_lookup": divide,
    "percentile_lookup": percentile, "numel_lookup": numel, "nannumel_lookup": nannumel,
    "to_numpy_dispatch": to_numpy,
}

_registered = False


def register_dispatch() -> None:
    """Register poot.Array with Dask's chunk-type registry and dispatch tables (idempotent)."""
    global _registered
    if _registered:
        return
    from dask.array import chunk_types
    from dask.array import dispatch as d
    from dask.base import normalize_token as token_dispatch
    from dask.sizeof import sizeof as sizeof_dispatch

    chunk_types.register_chunk_type(Array)
    for lookup, implementation in _LOOKUPS.items():
        table = getattr(d, lookup, None)   # older Dask has fewer tables: it calls NumPy's names there
        if table is not None:
            table.register(Array, implementation)
    sizeof_dispatch.register(Array, sizeof)
    token_dispatch.register(Array, normalize_token)
    _registered = True
