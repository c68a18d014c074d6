"""Host-computed results written straight into poot buffers.

A function that realizes its input and computes on the host with NumPy (unique, argwhere...) would
otherwise build NumPy arrays and copy each into a new device buffer. On a device whose buffers are
host memory (the CPU), `HostResults.alloc` hands NumPy views of freshly allocated poot buffers to
write into, and `array()` turns such a view back into a poot Array without a copy. Anything else
(another device, a result NumPy made itself) is copied as before.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.graph import Aval
from poot.trace import context as _dev
from poot.trace.array import Array
from poot.trace.lazy import from_buffer, from_numpy


class HostResults:
    """Allocations of one host computation's results on `device`."""

    def __init__(self, device: str):
        self.device = device
        backend = _dev.backend(device)
        self.backend = backend if backend.shares_host_memory else None
        self.views: list = []          # (address, nbytes, buffer)

    def alloc(self, shape: tuple, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape)) * dtype.itemsize
        if self.backend is None or not nbytes:
            return np.empty(shape, dtype)
        buf = self.backend.allocate(nbytes)
        view = buf.handle[:nbytes].view(dtype).reshape(shape)
        self.views.append((view.ctypes.data, nbytes, buf))
        return view

    def array(self, a: np.ndarray, dtype: dt.DType | None = None) -> Array:
        """A poot Array of `a`: its own buffer when `a` covers one of alloc's views, else a copy."""
        d = dt.as_dtype(a.dtype) if dtype is None else dtype
        if a.dtype == d.np and a.flags.c_contiguous and a.nbytes:
            for address, nbytes, buf in self.views:
                if a.ctypes.data == address and a.nbytes == nbytes:
                    return Array(from_buffer(buf, Aval(tuple(a.shape), d), self.device))
        return Array(from_numpy(a, self.device, d))


__all__ = ["HostResults"]
