"""DLPack exchange (the array API standard 2023.12's `copy=` rules).

`from_dlpack(x)` of a foreign producer always copies its data in (copy=None copies, as `pt.asarray`
does): poot arrays are immutable values, and memory a producer still holds could change under one
(a recorded graph, a cached program or a replay would read the new bytes). So `copy=False`, which must
never copy, raises CopyError (a BufferError, as the standard allows) for every host producer; a poot
array passed back in is returned as it is (nothing to alias).

`x.__dlpack__(copy=False)` shares a realized CPU array's memory with a consumer that can be told it
is read-only (DLPack 1.0, `max_version=(1, 0)` or newer). A legacy consumer (no max_version) cannot
be told, and handing it poot's buffer writable would break poot's immutable values: CopyError there.

bfloat16 goes through NumPy, which has no DLPack code for it: `x.__dlpack__()` of a bfloat16 array
raises DLPackDTypeError (a DTypeError and a BufferError), and `from_dlpack` of a bfloat16 producer
(a JAX array) reads its values through `__array__` instead.
"""
from __future__ import annotations

import numpy as np

from poot.dtypes import bfloat16
from poot.errors import CopyError, DeviceError, DTypeError
from poot.trace.array import Array, host_array
from poot.trace.lazy import from_numpy


class DLPackDTypeError(DTypeError, BufferError):
    """`__dlpack__` of a dtype the exchange cannot carry here (bfloat16: NumPy, which builds poot's
    capsules, has no DLPack code for it): a DTypeError, and the BufferError a DLPack consumer expects."""


class DLPackDeviceError(DeviceError, BufferError):
    """`__dlpack__` of an array that is not in CPU memory, or with a `dl_device` other than the CPU's
    (kDLCPU, 0): a DeviceError, and the BufferError the array API standard asks a producer to raise."""


def _bfloat16_host(x):
    """A bfloat16 producer's values through its `__array__` (a JAX or ml_dtypes array), or None:
    NumPy's DLPack reader, which poot's from_dlpack goes through, has no bfloat16, and from_dlpack
    copies the data in anyway."""
    if not hasattr(x, "__array__") or str(getattr(x, "dtype", "")) != "bfloat16":
        return None
    try:
        host = np.asarray(x)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return None
    return host if host.dtype == bfloat16.np else None


def _host_view(x, copy) -> np.ndarray:
    try:
        return np.from_dlpack(x, copy=copy)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError) as e:
        if copy is False and isinstance(e, BufferError):
            raise CopyError(f"from_dlpack(copy=False): the producer cannot share its memory without a "
                            f"copy ({e}); pass copy=None") from None
        host = _bfloat16_host(x)
        if host is not None:
            return host
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
    dl_device = kwargs.get("dl_device")
    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise DLPackDeviceError(f"__dlpack__(dl_device={tuple(dl_device)}): this array is in CPU memory, "
                                f"DLPack device (1, 0) (kDLCPU); poot exports no copy to another device "
                                f"(move it with x.to_device(...) and export that)")
    if arr.dtype is bfloat16:
        raise DLPackDTypeError(f"__dlpack__: a bfloat16 array ({arr.aval}) has no DLPack export in poot; "
                               f"pass np.asarray(x) (ml_dtypes bfloat16, read by jnp.asarray too) or "
                               f"x.astype(poot.float32)")
    arr._realize("__dlpack__")          # a traced array's error names the export
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
