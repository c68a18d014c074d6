"""What the CUDA and ROCm devices share: a GPU behind a driver API of CUDA's shape.

HIP's module API is CUDA's driver API under other names, with the same error numbers, so both devices
run this code: the stream-ordered memory pool and its out-of-memory retry, the free list by size, the
pinned staging ring for large host transfers, grid folding, the launch checks, and the bookkeeping that
names the kernels launched since the last wait when one faulted. A subclass provides `_drv` (an object
answering the cuda.bindings.driver calls made here: cuda-python itself, or rocm.py's `_HipDriver`),
`_ctx` (what `cuCtxSetCurrent` takes), `stream`, `_pool` (None: plain allocations), `gpu`,
`grid_limits`, `_broken`, `caps`, its own `_error(err, what)` and `load(artifact)`, and calls
`_init_state()` in its constructor.
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import gc
import threading

import numpy as np

from poot.errors import DeviceError, DeviceUnavailableError, OutOfMemoryError
from poot.devices.base import Buffer, Device, HostRead
from poot.devices.grid import dispatch_grid

PINNED_ABOVE = 1 << 20        # host transfers larger than this go through pinned staging
STAGE_BYTES = 8 << 20         # one pinned staging chunk
STAGES = 4                    # chunks in the ring
ASYNC_READ_BYTES = 1 << 16    # host reads up to this size run asynchronously (`read_async`)
BUFFER_ALIGN = 16             # every kernel declares its buffers this aligned (poot/jit/llvm/gpu_entry.py)
PACKED_PARAMS = 64            # kernel parameter arrays kept per program (DriverProgram.params)
RECENT_LAUNCHES = 16          # launches remembered to name the culprit of an asynchronous fault
# error codes after which the driver leaves the context unusable (sticky); CUDA's numbers, which HIP shares
STICKY_ERRORS = {700: "illegal address", 702: "launch timeout", 710: "device-side assert",
                 714: "hardware stack error", 715: "illegal instruction", 716: "misaligned address",
                 717: "invalid address space", 718: "invalid program counter", 719: "launch failed",
                 214: "uncorrectable ECC error", 226: "error contained by the GPU"}
OUT_OF_MEMORY = 2
_tls = threading.local()      # .device: the poot device whose context is current on this thread
EXITING = threading.Event()   # set at interpreter exit: finalizers then leave the driver alone
atexit.register(EXITING.set)


def _error_text(drv, err) -> str:
    try:
        name = drv.cuGetErrorName(err)[1].decode()
        desc = drv.cuGetErrorString(err)[1].decode()
        return f"{name}: {desc}"
    except Exception:
        return getattr(err, "name", str(err))


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB ({n:,} bytes)"


class DriverBuffer(Buffer):
    """A buffer of a driver-API GPU. Dropped, its memory goes back to its device's free list
    (`__del__`: a weakref.finalize per buffer would cost more than the allocation it guards, which the
    free list makes a dictionary lookup); freed explicitly (`free`), its handle is None and it is done."""

    __slots__ = ("size",)       # the bytes it holds on the GPU (its nbytes rounded up)

    def __del__(self):
        ptr = self.handle
        if ptr is not None:
            try:
                self.device._release(ptr, self.size)
            except Exception:       # at interpreter exit: the process exit frees the context's memory
                pass


class MappedBuffer(DriverBuffer):
    """Pinned host memory the GPU reaches through a device address (`Device.allocate_host_read`):
    kernels write it across the bus, the host reads it with a load once the stream is synchronized.
    Dropped, its pinned memory is freed (it never joins the free list)."""

    __slots__ = ("host",)

    def __del__(self):
        host = self.host
        try:    # at interpreter exit, module globals (EXITING too) may be gone: the exit frees the memory
            if host and self.handle is not None and not EXITING.is_set():
                self.device._drv.cuMemFreeHost(host)
        except Exception:
            pass


CU_MEMHOSTALLOC_DEVICEMAP = 0x02


class DriverProgram:
    """A loaded kernel: its module, function, block shape and what the launch needs."""

    __slots__ = ("name", "entry", "module", "function", "workgroup", "nparams", "dynamic_shared", "folds_grid",
                 "attributes", "arg_types", "_packed")

    def __init__(self, *fields):
        for slot, value in zip(self.__slots__, fields):
            setattr(self, slot, value)
        self.arg_types = (ctypes.c_void_p,) * self.nparams
        self._packed: dict = {}

    def params(self, ptrs: tuple):
        """cuLaunchKernel's kernelParams for the device addresses `ptrs`: the address of an array of
        pointers to the values, kept per address tuple (a loop launches with the same buffers on every
        step: its output comes back from the free list at the same address). Cheaper than the
        (values, types) form, which cuda-python packs anew on every launch."""
        hit = self._packed.get(ptrs)
        if hit is None:
            if len(self._packed) >= PACKED_PARAMS:
                self._packed.clear()
            # one array: the values, then a pointer to each (a third of the time of two arrays built
            # from Python lists, which an eager call keeping its fresh results pays on every launch)
            n = len(ptrs)
            words = (ctypes.c_uint64 * (2 * n))()
            base = ctypes.addressof(words)
            words[:n] = ptrs
            words[n:] = range(base, base + 8 * n, 8)
            hit = self._packed[ptrs] = (base + 8 * n, words)
        return hit[0]

    def __repr__(self) -> str:
        return f"<cuda program {self.name} block={self.workgroup} {self.attributes}>"


class DriverApiDevice(Device):
    """The memory, transfer and launch code of a driver-API GPU (see the module docstring)."""

    # how cuLaunchKernel takes kernelParams: the address of a pointer array (cuda-python's driver;
    # DriverProgram.params), or the (values, ctypes types) pair (rocm.py's HIP adapter)
    params_by_address = False

    def _init_state(self) -> None:
        """The bookkeeping every driver-API device starts with (after `caps` is set)."""
        self._programs: dict[tuple, DriverProgram] = {}
        self._live_buffers = 0                       # buffers handed out and not yet dropped
        self._in_use = 0
        self._free: dict[int, list[int]] = {}        # size -> addresses of dropped buffers, for reuse
        self._pooled = 0
        self.fresh_allocations = 0                   # allocations the driver served
        self.explicit_frees = 0                      # `free` calls: a replay re-checks its buffers after one
        self._recent: collections.deque = collections.deque(maxlen=RECENT_LAUNCHES)
        self._ring: list[tuple[int, object]] = []     # pinned staging chunks: (host address, event)
        self._ring_pending: collections.deque = collections.deque()
        self._read_slots: list[tuple[int, object]] = []   # free pinned (host address, event) pairs of reads

    # --- errors and context -----------------------------------------------------------------------
    def _ok(self, result, what: str, available: bool = False):
        """The value(s) of a cuda-python call `(err, *values)`; raise the poot error for a failure."""
        err = result[0]
        if int(err) != 0:
            if available:
                kind = self.name.partition(":")[0]        # "cuda" or "rocm", as the user names the device
                raise DeviceUnavailableError(f"{kind}: {what} failed ({_error_text(self._drv, err)})")
            raise self._error(err, what)
        return result[1] if len(result) == 2 else result[1:] or None

    def _current(self) -> None:
        if self._broken is not None:
            raise DeviceError(self._broken)
        if getattr(_tls, "device", None) is not self:
            self._ok(self._drv.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")
            _tls.device = self

    def _memory_note(self) -> str:
        try:
            free, total = self._ok(self._drv.cuMemGetInfo(), "cuMemGetInfo")
        except DeviceError:
            return f"; poot holds {_gib(self._in_use)}"
        return (f"; {_gib(free)} free of {_gib(total)} on {self.gpu}, of which poot holds {_gib(self._in_use)} in "
                f"{self._live_buffers} buffers (and {_gib(self._pooled)} of dropped ones kept for reuse). Free "
                "arrays you no longer need (del them) or use smaller ones")

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of the GPU, as the driver reports them."""
        self._current()
        return tuple(self._ok(self._drv.cuMemGetInfo(), "cuMemGetInfo"))

    def trim(self) -> None:
        """Hand the memory poot's pool keeps for reuse back to the driver (like torch.cuda.empty_cache), so
        another process or library on this GPU can have it; buffers still alive stay."""
        self._current()
        self._release_free()
        self._wait()
        if self._pool is not None:
            self._ok(self._drv.cuMemPoolTrimTo(self._pool, 0), "cuMemPoolTrimTo")

    def _release_free(self) -> None:
        """Free the buffers of the free list on the stream (after the work queued before)."""
        drv = self._drv
        while self._free:
            _, ptrs = self._free.popitem()
            for ptr in ptrs:
                self._ok(drv.cuMemFree(ptr) if self._pool is None else drv.cuMemFreeAsync(ptr, self.stream), "freeing")
        self._pooled = 0

    # --- memory -----------------------------------------------------------------------------------
    def _alloc(self, nbytes: int):
        drv = self._drv
        if self._pool is None:
            return drv.cuMemAlloc(nbytes)
        return drv.cuMemAllocFromPoolAsync(nbytes, self._pool, self.stream)

    def allocate(self, nbytes: int) -> Buffer:
        nbytes = int(nbytes)
        if nbytes < 0:
            raise DeviceError(f"{self.name}: cannot allocate {nbytes} bytes")
        if getattr(_tls, "device", None) is not self or self._broken is not None:
            self._current()
        size = max(nbytes, 4)
        free = self._free.get(size)
        if free:                # the common case: a buffer of this size freed earlier
            ptr = free.pop()
            self._pooled -= size
            return self._adopt(nbytes, ptr, size)
        what = f"allocating {_gib(nbytes)}"
        if nbytes > self.caps.max_buffer_bytes:
            raise OutOfMemoryError(f"{self.name}: out of device memory {what}: more than the GPU's whole memory"
                                   + self._memory_note())
        result = self._alloc(size)
        if int(result[0]) == OUT_OF_MEMORY:             # hand back what the pools and the garbage collector hold, retry
            gc.collect()
            self._release_free()
            self._ok(self._drv.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
            if self._pool is not None:
                self._ok(self._drv.cuMemPoolTrimTo(self._pool, 0), "cuMemPoolTrimTo")
            result = self._alloc(size)
            if int(result[0]) == OUT_OF_MEMORY and self._pool is not None:   # what the failed try reserved goes back too
                self._ok(self._drv.cuMemPoolTrimTo(self._pool, 0), "cuMemPoolTrimTo")
        ptr = int(self._ok(result, what))
        if ptr % BUFFER_ALIGN:      # never seen: CUDA allocations are 256-byte aligned
            raise DeviceError(f"{self.name}: the driver returned address {ptr:#x} {what}; poot's kernels need "
                              f"{BUFFER_ALIGN}-byte aligned buffers (they load 16 bytes at a time)")
        self.fresh_allocations += 1
        return self._adopt(nbytes, ptr, size)

    def _adopt(self, nbytes: int, ptr: int, size: int) -> Buffer:
        buf = DriverBuffer(self, nbytes, ptr)
        buf.size = size
        self._live_buffers += 1
        self._in_use += size
        return buf

    def _release(self, ptr: int, size: int) -> None:
        """A buffer's memory back to the free list (from `free` or a dropped buffer, any thread)."""
        self._live_buffers -= 1
        self._in_use -= size
        if self._broken is not None or EXITING.is_set():
            return
        self._free.setdefault(size, []).append(ptr)
        self._pooled += size

    def free(self, buf: Buffer) -> None:
        self._check(buf)
        self.explicit_frees += 1
        ptr = buf.handle
        if type(buf) is MappedBuffer:
            self._drv.cuMemFreeHost(buf.host)
            buf.host = 0
        buf.handle = None
        if type(buf) is DriverBuffer:
            self._release(ptr, buf.size)

    def allocate_host_read(self, nbytes: int) -> Buffer:
        """Mapped pinned host memory (cuMemHostAlloc with DEVICEMAP): reading it after a synchronize
        costs a load instead of a device-to-host copy and its wait (a round trip of several
        microseconds per host read or `pt.synchronize`). A driver without mapped memory gives an
        ordinary buffer."""
        drv = self._drv
        if not hasattr(drv, "cuMemHostGetDevicePointer"):
            return self.allocate(nbytes)
        self._current()
        size = max(int(nbytes), 4)
        host = int(self._ok(drv.cuMemHostAlloc(size, CU_MEMHOSTALLOC_DEVICEMAP), "allocating mapped host memory"))
        ptr = int(self._ok(drv.cuMemHostGetDevicePointer(host, 0), "mapping host memory into the GPU"))
        buf = MappedBuffer(self, int(nbytes), ptr)
        buf.size, buf.host = size, host
        ctypes.memset(host, 0, size)
        return buf

    # --- transfers --------------------------------------------------------------------------------
    def write(self, buf: Buffer, data) -> None:
        self._check(buf)
        self._no_recording("a host-to-device write")
        src = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        n = src.nbytes
        if n > buf.nbytes:
            raise DeviceError(f"{self.name}: writing {n:,} bytes into a buffer of {buf.nbytes:,}")
        if n == 0:
            return
        self._current()
        if type(buf) is MappedBuffer:     # kernels queued before may write it: they finish first
            self._wait()
            ctypes.memmove(buf.host, src.ctypes.data, n)
        elif n > PINNED_ABOVE:
            self._staged(src.ctypes.data, buf.handle, n, to_device=True)
        else:   # pageable: the driver copies the bytes out before returning, so `src` may go
            self._ok(self._drv.cuMemcpyHtoDAsync(buf.handle, src.ctypes.data, n, self.stream), "writing to the GPU")

    def read(self, buf: Buffer) -> np.ndarray:
        self._check(buf)
        self._no_recording("a device-to-host read")
        out = np.empty(buf.nbytes, dtype=np.uint8)
        if buf.nbytes == 0:
            return out
        self._current()
        if type(buf) is MappedBuffer:     # the wait makes the kernels' writes visible: then a load
            self._wait()
            ctypes.memmove(out.ctypes.data, buf.host, buf.nbytes)
        elif buf.nbytes > PINNED_ABOVE:
            self._staged(out.ctypes.data, buf.handle, buf.nbytes, to_device=False)
        else:
            self._ok(self._drv.cuMemcpyDtoHAsync(out.ctypes.data, buf.handle, buf.nbytes, self.stream),
                     "reading from the GPU")
            self._wait()
        out.flags.writeable = False              # like the other devices: results are read-only
        return out

    def read_with(self, buf: Buffer, extra: Buffer):
        """`read(buf)` of a nonempty buffer waits for the stream, so mapped `extra` (the trap word) is
        then a load with no second synchronize."""
        data = self.read(buf)
        if not buf.nbytes or type(extra) is not MappedBuffer or extra.device is not self or extra.handle is None:
            return data, self.read(extra)
        words = np.empty(extra.nbytes, dtype=np.uint8)
        ctypes.memmove(words.ctypes.data, extra.host, extra.nbytes)
        words.flags.writeable = False
        return data, words

    def read_async(self, buf: Buffer) -> HostRead:
        """Copy a small buffer into pinned host memory behind the work queued so far and record an
        event: the wait returns once that work and the copy are done, whatever was queued since (a
        decode loop launches the next step before it reads this step's token). Larger reads wait now."""
        self._check(buf)
        self._no_recording("a device-to-host read")
        n = buf.nbytes
        if n == 0 or n > ASYNC_READ_BYTES:
            return HostRead(self.read(buf))
        self._current()
        drv = self._drv
        if self._read_slots:
            slot = self._read_slots.pop()
        else:
            host = int(self._ok(drv.cuMemHostAlloc(ASYNC_READ_BYTES, 0), "allocating pinned read memory"))
            slot = (host, self._ok(drv.cuEventCreate(drv.CUevent_flags.CU_EVENT_DISABLE_TIMING.value),
                                   "cuEventCreate"))
        self._ok(drv.cuMemcpyDtoHAsync(slot[0], buf.handle, n, self.stream), "reading from the GPU")
        self._ok(drv.cuEventRecord(slot[1], self.stream), "cuEventRecord")
        return _PendingRead(self, slot, n)

    def _stage(self, k: int):
        while len(self._ring) <= k:
            drv = self._drv
            host = int(self._ok(drv.cuMemHostAlloc(STAGE_BYTES, 0), "allocating pinned staging memory"))
            event = self._ok(drv.cuEventCreate(drv.CUevent_flags.CU_EVENT_DISABLE_TIMING.value), "cuEventCreate")
            self._ring.append((host, event))
        return self._ring[k]

    def _retire(self) -> None:
        k, host_dst, n = self._ring_pending.popleft()
        pinned, event = self._ring[k]
        self._ok(self._drv.cuEventSynchronize(event), "waiting for a transfer")
        if host_dst is not None:
            ctypes.memmove(host_dst, pinned, n)

    def _staged(self, host: int, dev: int, n: int, to_device: bool) -> None:
        """Copy `n` bytes between host address `host` and device address `dev` through the pinned ring."""
        drv = self._drv
        while self._ring_pending:                    # chunks still in flight from an earlier write
            self._retire()
        for i, off in enumerate(range(0, n, STAGE_BYTES)):
            if len(self._ring_pending) == STAGES:
                self._retire()
            k, m = i % STAGES, min(STAGE_BYTES, n - off)
            pinned, event = self._stage(k)
            if to_device:
                ctypes.memmove(pinned, host + off, m)
                self._ok(drv.cuMemcpyHtoDAsync(dev + off, pinned, m, self.stream), "writing to the GPU")
            else:
                self._ok(drv.cuMemcpyDtoHAsync(pinned, dev + off, m, self.stream), "reading from the GPU")
            self._ok(drv.cuEventRecord(event, self.stream), "cuEventRecord")
            self._ring_pending.append((k, None if to_device else host + off, m))
        if not to_device:
            while self._ring_pending:
                self._retire()
            self._recent.clear()

    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        nbytes = self._copy_bytes(dst, src, nbytes)
        if self._recording is not None:
            if nbytes:
                self._recording.add(None, [src, dst], (nbytes, 0, 0))
            return
        if nbytes:
            self._current()
            self._ok(self._drv.cuMemcpyDtoDAsync(dst.handle, src.handle, nbytes, self.stream), "copying on the GPU")

    # --- launches ---------------------------------------------------------------------------------
    def dispatch(self, program: DriverProgram, buffers: list[Buffer], groups) -> None:
        """Launch `program` over `groups` workgroups with `buffers` (the kernel's buffers, meta, trap)."""
        if type(program) is not DriverProgram:
            raise DeviceError(f"{self.name}: {program!r} is not a program loaded on this device")
        if len(buffers) != program.nparams:
            raise DeviceError(f"{self.name}: kernel '{program.name}' takes {program.nparams} buffers (its own, "
                              f"meta and trap), got {len(buffers)}")
        ptrs = []
        for b in buffers:
            if b.device is not self or b.handle is None:
                self._check(b)
            ptrs.append(b.handle)
        ptrs = tuple(ptrs)
        lim = self.grid_limits
        if type(groups) is tuple and len(groups) == 3 and groups[0] <= lim[0] and groups[1] <= lim[1] \
                and groups[2] <= lim[2]:
            grid = groups
        else:            # PTX linearizes the physical group id in 64 bits: no cap on a folded grid
            grid = dispatch_grid(self.name, program, groups, lim, max_groups=None)
        if self._recording is not None:
            if grid[0] * grid[1] * grid[2]:
                self._recording.add(program, buffers, grid)
            return
        if grid[0] * grid[1] * grid[2] == 0:
            return
        if getattr(_tls, "device", None) is not self or self._broken is not None:
            self._current()
        wg = program.workgroup
        err, = self._drv.cuLaunchKernel(program.function, grid[0], grid[1], grid[2], wg[0], wg[1], wg[2],
                                        program.dynamic_shared, self.stream,
                                        program.params(ptrs) if self.params_by_address else (ptrs, program.arg_types), 0)
        if int(err) != 0:
            raise self._error(err, f"launching kernel '{program.name}' over a grid of {grid} blocks of {wg} "
                                   f"threads ({program.attributes['registers']} registers per thread)")
        self._recent.append((program.name, grid, wg))

    def _wait(self) -> None:
        self._ok(self._drv.cuStreamSynchronize(self.stream), "waiting for the GPU")
        self._recent.clear()

    def synchronize(self) -> None:
        """Wait for all work queued on the device; raise DeviceError naming the kernels if one faulted."""
        self._no_recording("synchronize")
        self._current()
        self._wait()


__all__ = ["DriverApiDevice", "DriverProgram", "MappedBuffer", "EXITING", "STICKY_ERRORS", "OUT_OF_MEMORY", "RECENT_LAUNCHES"]


class _PendingRead(HostRead):
    """A read in flight on a CUDA/ROCm stream: its pinned slot goes back to the device once waited
    (or dropped: a later copy into the slot is ordered after this one on the stream)."""
    __slots__ = ("_device", "_slot", "_n")

    def __init__(self, device, slot, n: int):
        super().__init__(None)
        self._device, self._slot, self._n = device, slot, n

    def wait(self) -> np.ndarray:
        if self._slot is not None:
            dev, (host, event) = self._device, self._slot
            dev._current()
            dev._ok(dev._drv.cuEventSynchronize(event), "waiting for a read from the GPU")
            out = np.empty(self._n, dtype=np.uint8)
            ctypes.memmove(out.ctypes.data, host, self._n)
            out.flags.writeable = False
            dev._read_slots.append(self._slot)
            self._slot, self._data = None, out
        return self._data

    def __del__(self):
        if self._slot is not None:
            self._device._read_slots.append(self._slot)
