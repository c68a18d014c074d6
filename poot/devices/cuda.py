"""The CUDA device: PTX programs on NVIDIA GPUs through cuda-python's driver API (cuda.bindings.driver).

One device per GPU ordinal ("cuda", "cuda:1"). It retains the GPU's primary context (the one PyTorch,
CuPy and the CUDA runtime use in the same process), makes it current on every thread that calls into
the device, and puts all work on one non-blocking poot stream, in order.

Memory, transfers and launches are the code this device shares with ROCm (poot/devices/driver_api.py).
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

Programs: `load(artifact)` takes an Artifact of poot.jit.llvm.compile (target "ptx": `data` the PTX, `entry`,
`name`, `kernel.workgroup`) or anything with `data`/`entry`/`name`/`workgroup`, or plain PTX whose
entry declares `.reqntid`. Modules are cached per device, that is per context, by the PTX's hash.
`dispatch(program, buffers, groups)` passes one pointer per buffer -- the kernel's buffers, then meta,
then trap (poot/jit/llvm/abi.py) -- over `groups` workgroups of the kernel's workgroup shape. A logical grid
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
  (poot.jit.runtime.program, poot.jit.runtime.launch) raises poot.KernelTrap.

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

import hashlib
import logging

from poot.errors import DeviceError, DeviceUnavailableError, OutOfMemoryError
from poot.devices.base import Capabilities
from poot.devices.cuda_ptx import check_target, max_ptx_isa, ptx_entries
from poot.devices.driver_api import (OUT_OF_MEMORY, STICKY_ERRORS, DriverApiDevice, DriverProgram,
                                     _error_text, _gib)

log = logging.getLogger("poot.devices.cuda")

_NO_DEVICE = 100


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise DeviceUnavailableError(f"cuda: the 'cuda-python' package (cuda.bindings) is not installed ({e}); "
                                     "pip install 'poot[cuda]'") from None
    return driver


CudaProgram = DriverProgram          # a program loaded by this device


class CudaDevice(DriverApiDevice):
    """An NVIDIA GPU; memory, transfers and launches are DriverApiDevice's (poot/devices/driver_api.py)."""

    params_by_address = True
    records_addresses = True          # a CUDA graph's kernel nodes hold addresses (cuda_graph.py)

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
        self._init_state()
        log.info("%s: %s (%s, %d SMs, %s), driver %d", self.name, self.gpu, self.caps.extra["arch"],
                 self.caps.cores, _gib(total), version)

    def describe(self) -> str:
        e = self.caps.extra
        v = e["driver_version"]
        return (f"ptx target {e['arch']} on {self.gpu} ({self.caps.cores} SMs, {e['memory_bytes'] / 2**30:.1f} GiB, "
                f"driver {v // 1000}.{v % 1000 // 10}, PTX ISA <= {e['max_ptx_isa']})")

    # --- errors and context -----------------------------------------------------------------------
    def _error(self, err, what: str) -> DeviceError:
        code, text = int(err), _error_text(self._drv, err)
        if code == OUT_OF_MEMORY:
            return OutOfMemoryError(f"{self.name}: out of device memory {what} ({text}){self._memory_note()}")
        if code in STICKY_ERRORS:
            recent = "; ".join(f"'{n}'" + (f" grid={g} block={b}" if g else "") for n, g, b in self._recent)
            self._broken = (f"{self.name}: {what} failed: a kernel faulted ({STICKY_ERRORS[code]}; {text}). Launched "
                            f"since the last synchronize: {recent or 'none recorded'}. This CUDA error is sticky: "
                            f"the context of {self.name} is unusable from now on, and only a new process can use "
                            "this GPU again (run under compute-sanitizer to find the faulting access)")
            return DeviceError(self._broken)
        return DeviceError(f"{self.name}: {what} failed ({text})")

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

    # --- record / replay (CUDA graphs: poot/devices/cuda_graph.py) -------------------------------------
    def record(self):
        """`with dev.record() as rec:` captures dispatches and copies; see the module docstring."""
        from poot.devices.cuda_graph import Recording

        return Recording(self)

    def replay(self, rec, rebind=None) -> None:
        """Run a closed recording, with the buffers in `rebind` ({recorded: replacement}) swapped in."""
        from poot.devices.cuda_graph import replay

        replay(self, rec, rebind)
