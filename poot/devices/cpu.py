"""The CPU device: buffers are 64-byte aligned NumPy byte arrays; programs are native code produced
by poot's LLVM CPU target and run on a thread pool (ctypes releases the GIL during each call)."""
from __future__ import annotations

import os

import numpy as np

from .base import Buffer, Capabilities, Device

_ALIGN = 64


class CpuDevice(Device):
    name = "cpu"

    def __init__(self):
        self.caps = Capabilities(name="cpu", target="cpu", max_workgroup_size=1,
                                 cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                 else (os.cpu_count() or 1))

    def allocate(self, nbytes: int) -> Buffer:
        raw = np.empty(nbytes + _ALIGN, dtype=np.uint8)
        off = (-raw.ctypes.data) % _ALIGN
        return Buffer(self, nbytes, raw[off:off + nbytes])

    def wrap(self, array: np.ndarray) -> Buffer:
        """Adopt a C-contiguous NumPy array's memory as a buffer (no copy)."""
        flat = array.reshape(-1).view(np.uint8)
        return Buffer(self, flat.nbytes, flat)

    def write(self, buf: Buffer, data) -> None:
        src = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8)
        buf.handle[: src.nbytes] = src

    def read(self, buf: Buffer):
        view = buf.handle.view()
        view.flags.writeable = False
        return view

    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        dst.handle[:nbytes] = src.handle[:nbytes]
