"""DLPack exchange (the array API standard 2023.12's `copy=` rules).

`from_dlpack(x)` of a foreign producer always copies its data in (copy=None copies, as `pt.asarray`
does): poot arrays are immutable values, and memory a producer still holds could change under one
(a recorded graph, a cached program or a replay would read the new bytes). So `copy=False`, which must
never copy, raises CopyError (a BufferError, as the standard allows) for every host producer; a poot
array passed back in is returned as it is (nothing to alias).

`x.__dlpack__(copy=False)` shares a realized CPU array's memory with a consumer that can be told it
is read-only (DLPack 1.0, `max_version=(1, 0)` or newer). A legacy consumer (no max_version) cannot
be told, and handing it poot's buffer writable would break poot's immutable values: CopyError there.
"""
from __future__ import annotations

import numpy as np

from poot.errors import CopyError, DTypeError
from poot.trace.array import Array, host_array
from poot.trace.lazy import from_numpy


def _host_view(x, copy) -> np.ndarray:
    try:
        return np.from_dlpack(x, copy=copy)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError) as e:
        if copy is False and isinstance(e, BufferError):
            raise CopyError(f"from_dlpack(copy=False): the producer cannot share its memory without a "
                            f"copy ({e}); pass copy=None") from None
        raise DTypeError(f"from_dlpack: cannot read a {type(x).__name__} through DLPack ({e}); "
                         f"poot takes DLPack data on the CPU") from None


def from_dlpack_array(x, device: str, copy) -> Array:
    """A poot array from a DLPack producer on `device`: a copy (copy=None copies too, as pt.asarray does:
    a value poot records stays what it was); copy=False raises CopyError unless `x` is a poot array."""
    if isinstance(x, Array):
        if copy:
            return x.to(device).copy()
        if x.device != device and copy is False:
            raise CopyError(f"from_dlpack(copy=False): x is on '{x.device}' but wanted on '{device}'")
        return x.to(device)
    if copy is False:
        raise CopyError(f"from_dlpack(copy=False): poot arrays never alias host memory (they are immutable, "
                        f"and this {type(x).__name__}'s owner could still write it), so the data must be "
                        f"copied in; pass copy=None or copy=True")
    host = _host_view(x, None)
    host_array(host, "from_dlpack")               # a dtype poot has, or DTypeError
    return Array(from_numpy(host, device))


def export(arr: Array, kwargs: dict, copy):
    """`arr.__dlpack__(**kwargs)` of a CPU array: its read-only NumPy view's capsule (shared), or a
    private copy's where copy=True or a legacy consumer cannot be told the memory is read-only (an
    empty array's is always private: there are no bytes to share, so copy=False holds too)."""
    view = arr.numpy()
    if copy or not view.size:     # an empty array has no memory to share or protect: writable is no copy
        return np.array(view).__dlpack__(**kwargs)
    try:
        return view.__dlpack__(**kwargs)
    except BufferError as e:
        if copy is False:
            raise CopyError(f"__dlpack__(copy=False): {e}; a consumer that passes max_version=(1, 0) "
                            f"or newer can share poot's read-only memory, or pass copy=None") from None
        return np.array(view).__dlpack__(**kwargs)   # a legacy consumer gets a private copy


__all__ = ["from_dlpack_array", "export"]
