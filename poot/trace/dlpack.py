"""DLPack exchange without copies (the array API standard 2023.12's `copy=` rules).

`from_dlpack(x, copy=False)` must never copy (copy=None copies, as `pt.asarray` does): on the CPU a poot buffer can adopt the producer's memory
(`Device.wrap`), so the result shares it (later writes by the producer show through, as with any
DLPack consumer). Where sharing is impossible (another device, memory that is not C-contiguous or
not aligned as poot's kernels assume, read-only memory poot's in-place element writes could touch),
it raises CopyError, a BufferError, as the standard allows.

`x.__dlpack__(copy=False)` shares a realized CPU array's memory with a consumer that can be told it
is read-only (DLPack 1.0, `max_version=(1, 0)` or newer). A legacy consumer (no max_version) cannot
be told, and handing it poot's buffer writable would break poot's immutable values: CopyError there.
"""
from __future__ import annotations

import numpy as np

from poot.errors import CopyError, DTypeError
from poot.trace import context as _dev
from poot.trace.array import Array, host_array
from poot.trace.lazy import from_buffer, from_numpy
from poot.graph import Aval
from poot import dtypes as dt

SHARED_ALIGN = 64       # the alignment of the CPU device's own buffers, which kernels may rely on


def _host_view(x, copy) -> np.ndarray:
    try:
        return np.from_dlpack(x, copy=copy)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError) as e:
        if copy is False and isinstance(e, BufferError):
            raise CopyError(f"from_dlpack(copy=False): the producer cannot share its memory without a "
                            f"copy ({e}); pass copy=None") from None
        raise DTypeError(f"from_dlpack: cannot read a {type(x).__name__} through DLPack ({e}); "
                         f"poot takes DLPack data on the CPU") from None


def _why_not_shared(host: np.ndarray, device: str) -> str | None:
    if not _dev.backend(device).shares_host_memory:
        return f"the array is wanted on '{device}', and only the CPU shares host memory"
    if host.size and not host.flags.c_contiguous:
        return "its memory is not C-contiguous (strided)"
    if host.size and host.ctypes.data % SHARED_ALIGN:
        return f"its memory is not {SHARED_ALIGN}-byte aligned, as poot's CPU kernels assume"
    if not host.flags.writeable:
        return "its memory is read-only"
    return None


def from_dlpack_array(x, device: str, copy) -> Array:
    """A poot array from a DLPack producer on `device`: shared (copy=False; or CopyError), else copied
    (copy=None copies too, as pt.asarray does: a value poot records stays what it was)."""
    if isinstance(x, Array):
        if copy:
            return x.to(device).copy()
        if x.device != device and copy is False:
            raise CopyError(f"from_dlpack(copy=False): x is on '{x.device}' but wanted on '{device}'")
        return x.to(device)
    host = _host_view(x, False if copy is False else None)
    host_array(host, "from_dlpack")               # a dtype poot has, or DTypeError
    why = _why_not_shared(host, device)
    if copy is False and why is not None:
        raise CopyError(f"from_dlpack(copy=False): cannot share this {type(x).__name__}'s memory: {why}; "
                        f"pass copy=None or copy=True for a copy")
    if copy is not False or why is not None or not host.size:
        return Array(from_numpy(host, device))
    buf = _dev.backend(device).wrap(np.ascontiguousarray(host))
    return Array(from_buffer(buf, Aval(tuple(host.shape), dt.as_dtype(host.dtype)), device))


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


__all__ = ["from_dlpack_array", "export", "SHARED_ALIGN"]
