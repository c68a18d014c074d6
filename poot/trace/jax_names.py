"""JAX's top-level helpers for arrays and pytrees: `block_until_ready`, `device_put`, `eval_shape` and
`ShapeDtypeStruct`, so code written for `jax.*` runs on poot unchanged.

eval_shape needs no tracer of its own: poot records lazily, so the function is called on lazy zeros of
the given shapes and dtypes and its results' avals are read without anything being computed (a function
that reads a value, `float(x)`, computes it on those zeros).
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.errors import api_boundary
from poot.trace import pytree
from poot.trace.array import Array

__all__ = ["block_until_ready", "device_put", "eval_shape", "ShapeDtypeStruct"]


class ShapeDtypeStruct:
    """An array's shape and dtype without its values (what eval_shape returns, and may be given). A
    pytree leaf, as in JAX (a dataclass would be a pytree node)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dt.as_dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


@api_boundary
def block_until_ready(x):
    """Realize every array of the pytree `x`, wait until their devices have computed them, and return
    `x` (JAX's name); raises the error of a kernel that trapped since its device's last host read."""
    leaves, _ = pytree.flatten(x)
    for leaf in leaves:
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


@api_boundary
def device_put(x, device=None):
    """The pytree `x` with each array on `device` (the current device when None): poot arrays moved
    (`.to`, the same array where it is there already), NumPy arrays and Python numbers made arrays."""
    from poot.trace import context
    from poot.trace.creation import asarray

    target = device if device is not None else context.current()
    leaves, tree = pytree.flatten(x)
    moved = [leaf.to(target) if isinstance(leaf, Array) else asarray(leaf, device=target) for leaf in leaves]
    return pytree.unflatten(tree, moved)


@api_boundary
def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of `fun(*args, **kwargs)` as a pytree of ShapeDtypeStruct, computing
    nothing: arguments may be arrays, ShapeDtypeStructs or anything with `.shape` and `.dtype`; other
    leaves (Python numbers, strings) are passed as they are."""
    from poot.trace.creation import zeros

    def stand_in(leaf):
        if isinstance(leaf, Array):
            return leaf
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            return zeros(tuple(leaf.shape), dtype=dt.as_dtype(leaf.dtype))
        return leaf

    leaves, tree = pytree.flatten((args, kwargs))
    args, kwargs = pytree.unflatten(tree, [stand_in(leaf) for leaf in leaves])
    out_leaves, out_tree = pytree.flatten(fun(*args, **kwargs))
    structs = [ShapeDtypeStruct(tuple(o.shape), o.dtype) if isinstance(o, Array) else o for o in out_leaves]
    return pytree.unflatten(out_tree, structs)
