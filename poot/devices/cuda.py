"""The CUDA device: PTX programs on NVIDIA GPUs through cuda-python's driver API (cuda.bindings.driver).

One device per GPU ordinal ("cuda", "cuda:1"). It retains the GPU's primary context (the one PyTorch,
CuPy and the CUDA runtime use in the same process), makes it current on every thread that calls into
the device, and puts all work on one non-blocking poot stream, in order.

Memory comes from a stream-ordered pool of poot's own (`cuMemPoolCreate`, release threshold unlimited:
freed blocks are reused without a trip to the driver; `trim()` hands them back, as an allocation that
fails does before it retries); a GPU without memory pools falls back to `cuMemAlloc`. A Buffer's handle is its device address (an int). A buffer
freed by `free` or garbage collected goes to the device's own free list by size, and the next
allocation of that size takes it back without a driver call (a steady loop allocates nothing); work is
in order on the one stream, so a buffer dropped while queued kernels still use it is reused only by
work queued after them. `trim()`, and an allocation that fails, free the listed buffers on the stream
(`cuMemFreeAsync`). Transfers above PINNED_ABOVE bytes go through a ring of
pinned staging chunks (the host copy into one chunk overlaps the DMA of the previous one); smaller ones
copy from pageable memory. `read` returns a new, read-only NumPy uint8 array.

Programs: `load(artifact)` takes an Artifact of poot.jit.compile (target "ptx": `data` the PTX, `entry`,
`name`, `kernel.workgroup`) or anything with `data`/`entry`/`name`/`workgroup`, or plain PTX whose
entry declares `.reqntid`. Modules are cached per device, that is per context, by the PTX's hash.
`dispatch(program, buffers, groups)` passes one pointer per buffer -- the kernel's buffers, then meta,
then trap (poot/jit/abi.py) -- over `groups` workgroups of the kernel's workgroup shape. A logical grid
beyond the device's grid limits is folded into a physical one; the kernel rebuilds its logical grid
from meta (the ABI), and an artifact with `folds_grid = False` is refused instead.

Errors (all poot.errors):
- OutOfMemoryError: an allocation the pool cannot serve even after a trim; names the size, what the
  GPU has free and what poot holds. The context stays usable.
- DeviceError at `dispatch`: a launch the driver refuses (block too large for the kernel's registers,
  too much shared memory, a bad argument count); names the kernel, grid and block. Context usable.
- DeviceError at the next call that waits (synchronize, read, a replay...): a kernel that faulted
  (illegal or misaligned address, illegal instruction, hardware trap or assert, timeout, uncorrectable
  ECC). These errors are sticky: CUDA leaves the context unusable and only a new process can use the
  GPU again. The message names the kernels launched since the last wait; the device marks itself
  broken and every later call says so instead of failing obscurely.
- poot's own traps (a failed bounds check or `assert` in a kernel) are no hardware fault: the kernel
  writes the trap word and returns, the context stays usable, and the layer that reads the trap word
  (poot.jit.program, poot.jit.launch) raises poot.KernelTrap.

Record/replay (CUDA graphs), for a program layer that runs the same launch list on every call:

    with dev.record() as rec:              # dispatches and device-to-device copies are captured, not run
        dev.dispatch(prog, [x, tmp, meta0, trap], groups)
        dev.dispatch(prog2, [tmp, out, meta1, trap], groups2)
    dev.replay(rec)                        # one cuGraphLaunch runs the whole list, in order
    dev.replay(rec, {x: x2, out: out2})    # the same graph with buffers replaced for this replay

At the end of the `with` block the recording becomes a CUDA graph (one kernel node per dispatch, one
memcpy node per copy, chained in order) and is instantiated once (`cuGraphInstantiate`). `replay(rec,
rebind)` maps buffers captured at record time to buffers to use in their place in this replay (others
keep their recorded buffer); the nodes whose pointers change are updated in the executable graph
(`cuGraphExecKernelNodeSetParams`, `cuGraphExecMemcpyNodeSetParams`) before the launch, so a program can
hand each call fresh output buffers and outputs returned earlier never alias the next call's. A
replacement must be at least as large as the buffer it replaces (meta words with the lengths are
recorded). Host transfers and synchronize are refused while recording. A recording keeps its buffers
alive; replaying one whose buffer was freed explicitly is refused.

A device is meant to be driven by one thread at a time (any thread; the context is made current there).
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import gc
import hashlib
import logging
import threading
import weakref

import numpy as np

from ..errors import DeviceError, DeviceUnavailableError, OutOfMemoryError
from .base import Buffer, Capabilities, Device, PerThread
from .cuda_ptx import check_target, max_ptx_isa, ptx_entries
from .grid import dispatch_grid

log = logging.getLogger("poot.devices.cuda")

PINNED_ABOVE = 1 << 20        # host transfers larger than this go through pinned staging
STAGE_BYTES = 8 << 20         # one pinned staging chunk
STAGES = 4                    # chunks in the ring
BUFFER_ALIGN = 16             # every kernel declares its buffers this aligned (poot/jit/llvm/gpu_entry.py)
_RECENT = 16                  # launches remembered to name the culprit of an asynchronous fault
# error codes after which CUDA leaves the context unusable (sticky); see the CUDA driver API docs
_STICKY = {700: "illegal address", 702: "launch timeout", 710: "device-side assert", 714: "hardware stack error",
           715: "illegal instruction", 716: "misaligned address", 717: "invalid address space",
           718: "invalid program counter", 719: "launch failed", 214: "uncorrectable ECC error",
           226: "error contained by the GPU"}
_OOM, _NO_DEVICE, _NOT_FOUND = 2, 100, 500
_tls = threading.local()      # .device: the poot device whose context is current on this thread
EXITING = threading.Event()   # set at interpreter exit: finalizers then leave the driver alone
atexit.register(EXITING.set)


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise DeviceUnavailableError(f"cuda: the 'cuda-python' package (cuda.bindings) is not installed ({e}); "
                                     "pip install 'poot[cuda]'") from None
    return driver


def _error_text(drv, err) -> str:
    try:
        name = drv.cuGetErrorName(err)[1].decode()
        desc = drv.cuGetErrorString(err)[1].decode()
        return f"{name}: {desc}"
    except Exception:
        return getattr(err, "name", str(err))


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB ({n:,} bytes)"


class CudaProgram:
    """A loaded kernel: its module, function, block shape and what the launch needs."""

    __slots__ = ("name", "entry", "module", "function", "workgroup", "nparams", "dynamic_shared", "folds_grid",
                 "attributes", "arg_types")

    def __init__(self, *fields):
        for slot, value in zip(self.__slots__, fields):
            setattr(self, slot, value)
        self.arg_types = (ctypes.c_void_p,) * self.nparams

    def __repr__(self) -> str:
        return f"<cuda program {self.name} block={self.workgroup} {self.attributes}>"


class CudaDevice(Device):
    _recording = PerThread()              # the cuda_graph.Recording open on this thread

    def __init__(self, index: int = 0):
        drv = self._drv = _driver()
        self.index, self.name = index, f"cuda:{index}"
        try:
            err, = drv.cuInit(0)
        except Exception as e:                       # cuda-bindings could not load libcuda.so
            raise DeviceUnavailableError(f"cuda: no NVIDIA driver here: the driver library libcuda.so could "
                                         f"not be loaded ({type(e).__name__}: {e})") from None
        if int(err) == _NO_DEVICE:
            raise DeviceUnavailableError("cuda: the NVIDIA driver is installed but sees no CUDA device "
                                         "(CUDA_ERROR_NO_DEVICE)")
        self._ok((err,), "cuInit", available=True)
        count = self._ok(drv.cuDeviceGetCount(), "cuDeviceGetCount", available=True)
        if not 0 <= index < count:
            raise DeviceUnavailableError(f"cuda: device index {index} requested, this machine has {count} CUDA "
                                         f"device(s) (cuda:0..cuda:{count - 1})")
        self._dev = self._ok(drv.cuDeviceGet(index), "cuDeviceGet", available=True)
        self._ctx = self._ok(drv.cuDevicePrimaryCtxRetain(self._dev), "cuDevicePrimaryCtxRetain", available=True)
        self._broken: str | None = None
        self._current()
        flags = drv.CUstream_flags.CU_STREAM_NON_BLOCKING.value
        self.stream = self._ok(drv.cuStreamCreate(flags), "cuStreamCreate")
        A = drv.CUdevice_attribute

        def attr(name):
            return self._ok(drv.cuDeviceGetAttribute(getattr(A, "CU_DEVICE_ATTRIBUTE_" + name), self._dev), name)

        cc = (attr("COMPUTE_CAPABILITY_MAJOR"), attr("COMPUTE_CAPABILITY_MINOR"))
        self.gpu = self._ok(drv.cuDeviceGetName(256, self._dev), "cuDeviceGetName").split(b"\0")[0].decode()
        total = self._ok(drv.cuDeviceTotalMem(self._dev), "cuDeviceTotalMem")
        version = self._ok(drv.cuDriverGetVersion(), "cuDriverGetVersion")
        self.grid_limits = (attr("MAX_GRID_DIM_X"), attr("MAX_GRID_DIM_Y"), attr("MAX_GRID_DIM_Z"))
        self.block_limits = (attr("MAX_BLOCK_DIM_X"), attr("MAX_BLOCK_DIM_Y"), attr("MAX_BLOCK_DIM_Z"))
        isa = max_ptx_isa(version)
        self.caps = Capabilities(
            name=self.name, target="ptx", max_workgroup_size=attr("MAX_THREADS_PER_BLOCK"),
            max_workgroups=self.grid_limits, max_buffer_bytes=total,
            shared_memory_bytes=attr("MAX_SHARED_MEMORY_PER_BLOCK"), subgroup_size=attr("WARP_SIZE"),
            cores=attr("MULTIPROCESSOR_COUNT"),
            extra={"arch": f"sm_{cc[0]}{cc[1]}", "compute_capability": cc, "gpu": self.gpu, "memory_bytes": total,
                   "l2_bytes": attr("L2_CACHE_SIZE"), "shared_memory_optin": attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
                   "max_block_dims": self.block_limits, "driver_version": version,
                   "max_ptx_isa": f"{isa[0]}.{isa[1]}", "memory_pools": bool(attr("MEMORY_POOLS_SUPPORTED"))})
        self._pool = None
        if self.caps.extra["memory_pools"]:
            try:
                self._pool = self._make_pool()
            except DeviceError as e:                 # e.g. a virtualized GPU: plain allocations still work
                log.warning("%s: no memory pool (%s); using cuMemAlloc", self.name, e)
                self.caps.extra["memory_pools"] = False
        self._programs: dict[tuple, CudaProgram] = {}
        self._finalizers: dict[int, weakref.finalize] = {}
        self._in_use = 0
        self._free: dict[int, list[int]] = {}        # size -> addresses of dropped buffers, for reuse
        self._pooled = 0
        self.fresh_allocations = 0                   # allocations the driver served
        self._recent: collections.deque = collections.deque(maxlen=_RECENT)
        self._ring: list[tuple[int, object]] = []     # pinned staging chunks: (host address, event)
        self._ring_pending: collections.deque = collections.deque()
        log.info("%s: %s (%s, %d SMs, %s), driver %d", self.name, self.gpu, self.caps.extra["arch"],
                 self.caps.cores, _gib(total), version)

    def describe(self) -> str:
        e = self.caps.extra
        v = e["driver_version"]
        return (f"ptx target {e['arch']} on {self.gpu} ({self.caps.cores} SMs, {e['memory_bytes'] / 2**30:.1f} GiB, "
                f"driver {v // 1000}.{v % 1000 // 10}, PTX ISA <= {e['max_ptx_isa']})")

    # --- errors and context -----------------------------------------------------------------------
    def _ok(self, result, what: str, available: bool = False):
        """The value(s) of a cuda-python call `(err, *values)`; raise the poot error for a failure."""
        err = result[0]
        if int(err) != 0:
            if available:
                raise DeviceUnavailableError(f"cuda: {what} failed ({_error_text(self._drv, err)})")
            raise self._error(err, what)
        return result[1] if len(result) == 2 else result[1:] or None

    def _error(self, err, what: str) -> DeviceError:
        code, text = int(err), _error_text(self._drv, err)
        if code == _OOM:
            return OutOfMemoryError(f"{self.name}: out of device memory {what} ({text}){self._memory_note()}")
        if code in _STICKY:
            recent = "; ".join(f"'{n}'" + (f" grid={g} block={b}" if g else "") for n, g, b in self._recent)
            self._broken = (f"{self.name}: {what} failed: a kernel faulted ({_STICKY[code]}; {text}). Launched "
                            f"since the last synchronize: {recent or 'none recorded'}. This CUDA error is sticky: "
                            f"the context of {self.name} is unusable from now on, and only a new process can use "
                            "this GPU again (run under compute-sanitizer to find the faulting access)")
            return DeviceError(self._broken)
        return DeviceError(f"{self.name}: {what} failed ({text})")

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
                f"{len(self._finalizers)} buffers (and {_gib(self._pooled)} of dropped ones kept for reuse). Free "
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
    def _make_pool(self):
        drv = self._drv
        props = drv.CUmemPoolProps()
        props.allocType = drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        props.location.type = drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        props.location.id = self.index
        pool = self._ok(drv.cuMemPoolCreate(props), "cuMemPoolCreate")
        self._ok(drv.cuMemPoolSetAttribute(pool, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                           drv.cuuint64_t(2**64 - 1)), "cuMemPoolSetAttribute")
        return pool

    def _alloc(self, nbytes: int):
        drv = self._drv
        if self._pool is None:
            return drv.cuMemAlloc(nbytes)
        return drv.cuMemAllocFromPoolAsync(nbytes, self._pool, self.stream)

    def allocate(self, nbytes: int) -> Buffer:
        nbytes = int(nbytes)
        if nbytes < 0:
            raise DeviceError(f"{self.name}: cannot allocate {nbytes} bytes")
        self._current()
        what = f"allocating {_gib(nbytes)}"
        if nbytes > self.caps.max_buffer_bytes:
            raise OutOfMemoryError(f"{self.name}: out of device memory {what}: more than the GPU's whole memory"
                                   + self._memory_note())
        size = max(nbytes, 4)
        free = self._free.get(size)
        if free:
            ptr = free.pop()
            self._pooled -= size
            return self._adopt(nbytes, ptr, size)
        result = self._alloc(size)
        if int(result[0]) == _OOM:             # hand back what the pools and the garbage collector hold, retry
            gc.collect()
            self._release_free()
            self._ok(self._drv.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
            if self._pool is not None:
                self._ok(self._drv.cuMemPoolTrimTo(self._pool, 0), "cuMemPoolTrimTo")
            result = self._alloc(size)
            if int(result[0]) == _OOM and self._pool is not None:   # what the failed try reserved goes back too
                self._ok(self._drv.cuMemPoolTrimTo(self._pool, 0), "cuMemPoolTrimTo")
        ptr = int(self._ok(result, what))
        if ptr % BUFFER_ALIGN:      # never seen: CUDA allocations are 256-byte aligned
            raise DeviceError(f"{self.name}: the driver returned address {ptr:#x} {what}; poot's kernels need "
                              f"{BUFFER_ALIGN}-byte aligned buffers (they load 16 bytes at a time)")
        self.fresh_allocations += 1
        return self._adopt(nbytes, ptr, size)

    def _adopt(self, nbytes: int, ptr: int, size: int) -> Buffer:
        buf = Buffer(self, nbytes, ptr)
        fin = weakref.finalize(buf, self._release, ptr, size)
        fin.atexit = False                     # the process exit frees the context's memory
        self._finalizers[ptr] = fin
        self._in_use += size
        return buf

    def _release(self, ptr: int, size: int) -> None:
        """A buffer's memory back to the free list (from `free` or the garbage collector, any thread)."""
        self._finalizers.pop(ptr, None)
        self._in_use -= size
        if self._broken is not None or EXITING.is_set():
            return
        self._free.setdefault(size, []).append(ptr)
        self._pooled += size

    def free(self, buf: Buffer) -> None:
        self._check(buf)
        fin = self._finalizers.get(buf.handle)
        buf.handle = None
        if fin is not None:
            fin()

    def _check(self, buf: Buffer) -> None:
        if not isinstance(buf, Buffer) or buf.device is not self:
            raise DeviceError(f"{self.name}: {buf!r} is not a buffer of this device")
        if buf.handle is None:
            raise DeviceError(f"{self.name}: {buf!r} was freed")

    def _no_recording(self, what: str) -> None:
        if self._recording is not None:
            raise DeviceError(f"{self.name}: {what} inside a recording is not supported (a recording holds "
                              "dispatches and device-to-device copies only)")

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
        if n > PINNED_ABOVE:
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
        if buf.nbytes > PINNED_ABOVE:
            self._staged(out.ctypes.data, buf.handle, buf.nbytes, to_device=False)
        else:
            self._ok(self._drv.cuMemcpyDtoHAsync(out.ctypes.data, buf.handle, buf.nbytes, self.stream),
                     "reading from the GPU")
            self._wait()
        out.flags.writeable = False              # like the other devices: results are read-only
        return out

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

    # --- programs ---------------------------------------------------------------------------------
    def load(self, artifact) -> CudaProgram:
        data = artifact if isinstance(artifact, (str, bytes)) else getattr(artifact, "data", None)
        if not isinstance(data, (str, bytes)):
            raise DeviceError(f"{self.name}: cannot load {type(artifact).__name__}: expected PTX text")
        ptx = data.decode() if isinstance(data, bytes) else data
        entries = ptx_entries(ptx)
        entry = getattr(artifact, "entry", None) or (next(iter(entries)) if len(entries) == 1 else None)
        name = getattr(artifact, "name", None) or entry
        if entry not in entries:
            raise DeviceError(f"{self.name}: the PTX of kernel '{name}' has no entry '{entry}' "
                              f"(entries: {', '.join(entries) or 'none'})")
        params, reqntid = entries[entry]
        workgroup = getattr(artifact, "workgroup", None) or getattr(getattr(artifact, "kernel", None), "workgroup",
                                                                    None) or reqntid
        if not workgroup:
            raise DeviceError(f"{self.name}: kernel '{name}' does not say its workgroup shape (artifact.workgroup, "
                              "artifact.kernel.workgroup or .reqntid in the PTX)")
        workgroup = tuple(int(w) for w in workgroup) + (1,) * (3 - len(workgroup))
        dynamic = int(getattr(artifact, "dynamic_shared_bytes", 0) or 0)
        folds = bool(getattr(artifact, "folds_grid", True))
        key = (hashlib.sha256(ptx.encode()).hexdigest(), entry, name, workgroup, dynamic, folds)
        hit = self._programs.get(key)
        if hit is not None:
            return hit
        if any(p not in (".u64", ".b64", ".s64") for p in params):
            raise DeviceError(f"{self.name}: kernel '{name}' takes parameters {params}; poot's CUDA launch ABI "
                              "passes one 64-bit pointer per buffer (scalars travel in the meta buffer)")
        check_target(ptx, name, self.name, self.gpu, self.caps.extra)
        self._current()
        drv = self._drv
        err, module = drv.cuModuleLoadData(ptx.encode() + b"\0")
        if int(err) != 0:
            raise DeviceError(f"{self.name}: the driver rejected the PTX of kernel '{name}' "
                              f"({_error_text(drv, err)}); check it with `ptxas -arch={self.caps.extra['arch']}`")
        function = self._ok(drv.cuModuleGetFunction(module, entry.encode()), f"finding kernel '{name}'")
        F = drv.CUfunction_attribute
        attrs = {k: self._ok(drv.cuFuncGetAttribute(getattr(F, "CU_FUNC_ATTRIBUTE_" + a), function), a)
                 for k, a in (("registers", "NUM_REGS"), ("shared_bytes", "SHARED_SIZE_BYTES"),
                              ("local_bytes", "LOCAL_SIZE_BYTES"), ("max_threads", "MAX_THREADS_PER_BLOCK"))}
        threads = workgroup[0] * workgroup[1] * workgroup[2]
        if threads > attrs["max_threads"] or any(w > lim for w, lim in zip(workgroup, self.block_limits)):
            raise DeviceError(f"{self.name}: kernel '{name}' needs blocks of {workgroup} threads; with its "
                              f"{attrs['registers']} registers and {attrs['shared_bytes']:,} bytes of shared memory "
                              f"per block this GPU runs at most {attrs['max_threads']} threads per block (and "
                              f"{self.block_limits} per dimension): use a smaller workgroup")
        if dynamic > self.caps.shared_memory_bytes:
            self._ok(drv.cuFuncSetAttribute(function, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic),
                     f"raising the shared memory limit of kernel '{name}' to {dynamic:,} bytes")
        program = CudaProgram(name, entry, module, function, workgroup, len(params), dynamic, folds, attrs)
        self._programs[key] = program
        log.debug("%s: loaded %r", self.name, program)
        return program

    def dispatch(self, program: CudaProgram, buffers: list[Buffer], groups) -> None:
        """Launch `program` over `groups` workgroups with `buffers` (the kernel's buffers, meta, trap)."""
        if type(program) is not CudaProgram:
            raise DeviceError(f"{self.name}: {program!r} is not a program loaded on this device")
        if len(buffers) != program.nparams:
            raise DeviceError(f"{self.name}: kernel '{program.name}' takes {program.nparams} buffers (its own, "
                              f"meta and trap), got {len(buffers)}")
        ptrs = []
        for b in buffers:
            if b.device is not self or b.handle is None:
                self._check(b)
            ptrs.append(b.handle)
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
        self._current()
        wg = program.workgroup
        err, = self._drv.cuLaunchKernel(program.function, grid[0], grid[1], grid[2], wg[0], wg[1], wg[2],
                                        program.dynamic_shared, self.stream, (tuple(ptrs), program.arg_types), 0)
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

    # --- record / replay (CUDA graphs: poot/devices/cuda_graph.py) -------------------------------------
    def record(self):
        """`with dev.record() as rec:` captures dispatches and copies; see the module docstring."""
        from .cuda_graph import Recording

        return Recording(self)

    def replay(self, rec, rebind=None) -> None:
        """Run a closed recording, with the buffers in `rebind` ({recorded: replacement}) swapped in."""
        from .cuda_graph import replay

        replay(self, rec, rebind)
