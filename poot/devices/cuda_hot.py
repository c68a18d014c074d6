"""The CUDA calls made on every launch, straight into libcuda through ctypes (API: poot/devices/cuda.py).

cuda-python's wrappers convert and check each argument in Python: on the H200 host its cuLaunchKernel
took 7.8 us per call with a prebuilt void** array and 10.4 us with (args, types) packing, longer than a
4096^2 bf16 GEMV runs on the GPU, so back-to-back launches left the GPU idle between kernels
(benchmarks/results/h200_s15_probe.py). These three entry points -- launch, allocate from the stream-
ordered pool, free on the stream -- take plain ints here; everything else stays on cuda-python. Both talk
to the same libcuda of the process, so handles and the current context are shared.

Kernel parameters: cuLaunchKernel reads them during the call, so each thread keeps one array of
addresses per parameter count and a fixed void** array pointing into it, refilled per launch.
"""
from __future__ import annotations

import ctypes
import threading

_U = ctypes.c_uint
_P = ctypes.c_void_p


class HotPath:
    """ctypes entry points of libcuda for launches and pool allocations; None from `open_hot_path`
    where libcuda cannot be opened this way (cuda-python's path is used there)."""

    def __init__(self, lib):
        self._launch = lib.cuLaunchKernel
        self._launch.argtypes = [_P, _U, _U, _U, _U, _U, _U, _U, _P, _P, _P]
        self._launch.restype = ctypes.c_int
        self._alloc = lib.cuMemAllocFromPoolAsync
        self._alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, _P, _P]
        self._alloc.restype = ctypes.c_int
        self._free = lib.cuMemFreeAsync
        self._free.argtypes = [ctypes.c_uint64, _P]
        self._free.restype = ctypes.c_int
        self._tls = threading.local()

    def _params(self, n: int):
        table = getattr(self._tls, "params", None)
        if table is None:
            table = self._tls.params = {}
        hit = table.get(n)
        if hit is None:
            values = (ctypes.c_uint64 * n)()
            base = ctypes.addressof(values)
            pointers = (_P * n)(*(base + 8 * i for i in range(n)))
            hit = table[n] = (values, pointers)
        return hit

    def launch(self, function: int, grid, block, shared: int, stream: int, ptrs: list) -> int:
        """cuLaunchKernel with one 64-bit pointer per parameter; the CUresult as an int."""
        values, pointers = self._params(len(ptrs))
        values[:] = ptrs
        return self._launch(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream,
                            pointers, None)

    def alloc(self, nbytes: int, pool: int, stream: int) -> tuple[int, int]:
        """(CUresult, device address) of cuMemAllocFromPoolAsync."""
        out = ctypes.c_uint64()
        err = self._alloc(ctypes.byref(out), nbytes, pool, stream)
        return err, out.value

    def free(self, ptr: int, stream: int) -> int:
        return self._free(ptr, stream)


def open_hot_path() -> HotPath | None:
    """The hot path on the libcuda cuda-python loaded, or None where it cannot be opened (then every call
    goes through cuda-python)."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return HotPath(ctypes.CDLL(name))
        except (OSError, AttributeError):
            continue
    return None
