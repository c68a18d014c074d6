"""The ROCm device: HSACO programs on AMD GPUs through hip-python (`pip install 'poot[rocm]'`).

One device per GPU ordinal ("rocm", "rocm:1"). HIP's module API is CUDA's driver API under other
names, with the same error numbers, so this device runs the memory, transfer and launch code it
shares with the CUDA device (poot/devices/driver_api.py: the stream-ordered pool and its out-of-memory
retry, the pinned staging ring, grid folding, the launch checks, the fault bookkeeping) on `_HipDriver`,
which answers each driver call DriverApiDevice makes with its HIP counterpart. What is HIP's own lives
here: finding the GPU and its properties, the memory pool's creation, loading a HSACO
(hipModuleLoadData), the kernel arguments (hipModuleLaunchKernel's `extra` buffer: one 8-byte pointer
per buffer, then meta and trap), and the error messages.

Code objects are built for one ISA: `caps.compile_arch` is the GPU's (e.g. gfx90a from
"gfx90a:sramecc+:xnack-"; the code runs with either xnack or sramecc setting), and poot.jit compiles
for it. poot's traps (a failed bounds check or assert) write the trap word and return, as on CUDA;
poot.jit raises poot.KernelTrap. A hardware fault is sticky, as on CUDA: the device then refuses
every call, naming the kernels launched since the last wait.

Not built yet: record/replay (hipGraph). The device offers no `record`, so a jitted program runs
launch by launch. Nothing of this module has run on AMD hardware yet; the AMDGCN code path up to the
linked HSACO is tested everywhere (tests/jit/test_amdgcn.py).
"""
from __future__ import annotations

import ctypes
import logging
import re
import types

from poot.errors import DeviceError, DeviceUnavailableError, OutOfMemoryError
from poot.devices.base import Capabilities
from poot.devices.driver_api import OUT_OF_MEMORY, STICKY_ERRORS, DriverApiDevice, DriverProgram, _gib

log = logging.getLogger("poot.devices.rocm")
EM_AMDGPU = 224
_NO_BINARY = {200: "invalid image", 209: "no binary for this GPU", 218: "invalid kernel file",
              303: "shared object init failed"}


def _hip():
    try:
        from hip import hip
    except ImportError as e:
        raise DeviceUnavailableError(f"rocm: the 'hip-python' package is not installed ({e}); "
                                     "pip install 'poot[rocm]'") from None
    return hip


class _HipDriver:
    """The cuda.bindings.driver calls DriverApiDevice's methods make, answered by HIP. A context is a
    device ordinal (HIP makes a device current per thread with hipSetDevice)."""

    def __init__(self, hip):
        self.hip = hip
        self.CUevent_flags = types.SimpleNamespace(
            CU_EVENT_DISABLE_TIMING=types.SimpleNamespace(value=int(hip.hipEventDisableTiming)))

    def cuGetErrorName(self, err):
        return self.hip.hipGetErrorName(err)

    def cuGetErrorString(self, err):
        return self.hip.hipGetErrorString(err)

    def cuCtxSetCurrent(self, ordinal):
        return self.hip.hipSetDevice(ordinal)

    def cuMemGetInfo(self):
        return self.hip.hipMemGetInfo()

    def cuMemAlloc(self, nbytes):
        return self.hip.hipMalloc(nbytes)

    def cuMemAllocFromPoolAsync(self, nbytes, pool, stream):
        return self.hip.hipMallocFromPoolAsync(nbytes, pool, stream)

    def cuMemFree(self, ptr):
        return self.hip.hipFree(ptr)

    def cuMemFreeAsync(self, ptr, stream):
        return self.hip.hipFreeAsync(ptr, stream)

    def cuMemPoolTrimTo(self, pool, keep):
        return self.hip.hipMemPoolTrimTo(pool, keep)

    def cuMemHostAlloc(self, nbytes, flags):       # CUDA's DEVICEMAP flag is hipHostMallocMapped (2)
        return self.hip.hipHostMalloc(nbytes, flags)

    def cuMemFreeHost(self, ptr):
        return self.hip.hipHostFree(ptr)

    def cuMemHostGetDevicePointer(self, host, flags):
        return self.hip.hipHostGetDevicePointer(host, flags)

    def cuMemcpyHtoDAsync(self, dst, src, nbytes, stream):
        return self.hip.hipMemcpyHtoDAsync(dst, src, nbytes, stream)

    def cuMemcpyDtoHAsync(self, dst, src, nbytes, stream):
        return self.hip.hipMemcpyDtoHAsync(dst, src, nbytes, stream)

    def cuMemcpyDtoDAsync(self, dst, src, nbytes, stream):
        return self.hip.hipMemcpyDtoDAsync(dst, src, nbytes, stream)

    def cuEventCreate(self, flags):
        return self.hip.hipEventCreateWithFlags(flags)

    def cuEventRecord(self, event, stream):
        return self.hip.hipEventRecord(event, stream)

    def cuEventSynchronize(self, event):
        return self.hip.hipEventSynchronize(event)

    def cuStreamSynchronize(self, stream):
        return self.hip.hipStreamSynchronize(stream)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        pointers, _ = params        # DriverApiDevice passes (addresses, ctypes types); HIP packs them in `extra`
        return self.hip.hipModuleLaunchKernel(function, gx, gy, gz, bx, by, bz, shared, stream, None,
                                              tuple(ctypes.c_void_p(p) for p in pointers))


def _text(result) -> str:
    value = result[1] if isinstance(result, tuple) else result
    return value.decode() if isinstance(value, bytes) else str(value)


class RocmDevice(DriverApiDevice):
    """An AMD GPU: DriverApiDevice's memory, transfer and launch code run on _HipDriver (see the module
    docstring)."""

    def __init__(self, index: int = 0):
        hip = self._hip = _hip()
        self._drv = _HipDriver(hip)
        self.index, self.name = index, f"rocm:{index}"
        try:
            err, = hip.hipInit(0)
        except RuntimeError as e:                    # hip-python could not load libamdhip64.so
            detail = re.sub(r"'?b'([^']*)''?", r"\1", str(e))
            raise DeviceUnavailableError(f"rocm: no ROCm runtime here: the HIP library could not be loaded ({detail}); "
                                         "install ROCm (https://rocm.docs.amd.com) on a machine with an AMD GPU") from None
        if int(err) in (100, 35):                    # hipErrorNoDevice, hipErrorInsufficientDriver
            raise DeviceUnavailableError(f"rocm: the HIP runtime is installed but finds no usable AMD GPU "
                                         f"({_text(hip.hipGetErrorName(err))}; is the amdgpu kernel driver loaded, "
                                         "and may this user open /dev/kfd?)")
        self._ok((err,), "hipInit", available=True)
        count = self._ok(hip.hipGetDeviceCount(), "hipGetDeviceCount", available=True)
        if not 0 <= index < count:
            raise DeviceUnavailableError(f"rocm: device index {index} requested, this machine has {count} AMD "
                                         f"GPU(s) (rocm:0..rocm:{count - 1})")
        self._ctx = self._dev = index
        self._broken: str | None = None
        self._current()
        self.stream = self._ok(hip.hipStreamCreateWithFlags(int(hip.hipStreamNonBlocking)), "hipStreamCreateWithFlags")
        A = hip.hipDeviceAttribute_t

        def attr(name):
            return int(self._ok(hip.hipDeviceGetAttribute(getattr(A, "hipDeviceAttribute" + name), index), name))

        props = self._ok(hip.hipGetDeviceProperties(index), "hipGetDeviceProperties")
        self.gpu, target_id = _text(props.name), _text(props.gcnArchName)
        total = int(self._ok(hip.hipDeviceTotalMem(index), "hipDeviceTotalMem"))
        version = int(self._ok(hip.hipRuntimeGetVersion(), "hipRuntimeGetVersion"))
        self.grid_limits = (attr("MaxGridDimX"), attr("MaxGridDimY"), attr("MaxGridDimZ"))
        self.block_limits = (attr("MaxBlockDimX"), attr("MaxBlockDimY"), attr("MaxBlockDimZ"))
        arch = target_id.split(":")[0]
        self.caps = Capabilities(
            name=self.name, target="amdgcn", compile_arch=arch, max_workgroup_size=attr("MaxThreadsPerBlock"),
            max_workgroups=self.grid_limits, max_buffer_bytes=total,
            shared_memory_bytes=attr("MaxSharedMemoryPerBlock"), subgroup_size=attr("WarpSize"),
            cores=attr("MultiprocessorCount"),
            extra={"arch": arch, "target_id": target_id, "gpu": self.gpu, "memory_bytes": total,
                   "l2_bytes": attr("L2CacheSize"), "max_block_dims": self.block_limits, "runtime_version": version,
                   "memory_pools": bool(attr("MemoryPoolsSupported"))})
        self._pool = None
        if self.caps.extra["memory_pools"]:
            try:
                self._pool = self._make_pool()
            except DeviceError as e:
                log.warning("%s: no memory pool (%s); using hipMalloc", self.name, e)
                self.caps.extra["memory_pools"] = False
        self._init_state()          # no recording is ever open: record/replay is not built on ROCm
        log.info("%s: %s (%s, %d CUs, %s), HIP runtime %d", self.name, self.gpu, target_id, self.caps.cores,
                 _gib(total), version)

    def describe(self) -> str:
        e = self.caps.extra
        v = e["runtime_version"]
        return (f"amdgcn target {e['target_id']} on {self.gpu} ({self.caps.cores} CUs, "
                f"{e['memory_bytes'] / 2**30:.1f} GiB, HIP {v // 10_000_000}.{v // 100_000 % 100})")

    def _error(self, err, what: str) -> DeviceError:
        code = int(err)
        text = f"{_text(self._hip.hipGetErrorName(err))}: {_text(self._hip.hipGetErrorString(err))}"
        if code == OUT_OF_MEMORY:
            return OutOfMemoryError(f"{self.name}: out of device memory {what} ({text}){self._memory_note()}")
        if code in STICKY_ERRORS:
            recent = "; ".join(f"'{n}'" + (f" grid={g} block={b}" if g else "") for n, g, b in self._recent)
            self._broken = (f"{self.name}: {what} failed: a kernel faulted ({text}). Launched since the last "
                            f"synchronize: {recent or 'none recorded'}. The HIP runtime leaves {self.name} unusable "
                            "after such a fault; only a new process can use this GPU again (AMD_LOG_LEVEL=3 or "
                            "rocgdb show the faulting access)")
            return DeviceError(self._broken)
        return DeviceError(f"{self.name}: {what} failed ({text})")

    def _make_pool(self):
        hip = self._hip
        props = hip.hipMemPoolProps()
        props.allocType = hip.hipMemAllocationType.hipMemAllocationTypePinned
        props.location.type = hip.hipMemLocationType.hipMemLocationTypeDevice
        props.location.id = self.index
        pool = self._ok(hip.hipMemPoolCreate(props), "hipMemPoolCreate")
        keep = ctypes.c_uint64(2**64 - 1)          # release threshold: freed blocks stay in the pool
        self._ok(hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttr.hipMemPoolAttrReleaseThreshold,
                                            ctypes.addressof(keep)), "hipMemPoolSetAttribute")
        return pool

    # --- programs ---------------------------------------------------------------------------------
    def load(self, artifact) -> DriverProgram:
        """A program from an Artifact of poot.jit.llvm.compile (target "amdgcn": `data` the HSACO, `entry`,
        `name`, `kernel`), or anything with `data`, `entry`, `name`, `workgroup` and `nparams`."""
        data = getattr(artifact, "data", None)
        name = getattr(artifact, "name", None) or getattr(artifact, "entry", "?")
        if not isinstance(data, bytes) or data[:4] != b"\x7fELF" or int.from_bytes(data[18:20], "little") != EM_AMDGPU:
            raise DeviceError(f"{self.name}: cannot load {type(artifact).__name__} '{name}': expected an artifact "
                              "whose data is a HSACO (an AMD GPU ELF code object; compile for target 'amdgcn')")
        kernel = getattr(artifact, "kernel", None)
        entry = artifact.entry
        workgroup = getattr(artifact, "workgroup", None) or getattr(kernel, "workgroup", None)
        nparams = getattr(artifact, "nparams", None) or (len(kernel.buffers) + 2 if kernel is not None else None)
        if not workgroup or not nparams:
            raise DeviceError(f"{self.name}: kernel '{name}' does not say its workgroup shape and parameter count "
                              "(artifact.kernel, or artifact.workgroup and artifact.nparams)")
        workgroup = tuple(int(w) for w in workgroup) + (1,) * (3 - len(workgroup))
        built_for = getattr(artifact, "arch", "") or "?"
        key = (getattr(artifact, "key", "") or hash(data), entry, workgroup)
        hit = self._programs.get(key)
        if hit is not None:
            return hit
        self._current()
        hip = self._hip
        err, module = hip.hipModuleLoadData(data)
        if int(err) != 0:
            why = _NO_BINARY.get(int(err))
            raise DeviceError(f"{self.name}: the HIP runtime rejected the HSACO of kernel '{name}' (built for "
                              f"{built_for}; this GPU is {self.caps.extra['target_id']}): "
                              f"{_text(hip.hipGetErrorName(err))}{f' ({why})' if why else ''}; compile it with "
                              f"arch='{self.caps.compile_arch}'")
        function = self._ok(hip.hipModuleGetFunction(module, entry.encode()), f"finding kernel '{name}'")
        F = hip.hipFunction_attribute
        attrs = {k: int(self._ok(hip.hipFuncGetAttribute(getattr(F, "HIP_FUNC_ATTRIBUTE_" + a), function), a))
                 for k, a in (("registers", "NUM_REGS"), ("shared_bytes", "SHARED_SIZE_BYTES"),
                              ("local_bytes", "LOCAL_SIZE_BYTES"), ("max_threads", "MAX_THREADS_PER_BLOCK"))}
        threads = workgroup[0] * workgroup[1] * workgroup[2]
        if threads > attrs["max_threads"] or any(w > lim for w, lim in zip(workgroup, self.block_limits)):
            raise DeviceError(f"{self.name}: kernel '{name}' needs workgroups of {workgroup} work items; with its "
                              f"{attrs['registers']} registers this GPU runs at most {attrs['max_threads']} per "
                              f"workgroup (and {self.block_limits} per dimension): use a smaller workgroup")
        program = DriverProgram(name, entry, module, function, workgroup, nparams, 0, True, attrs)
        self._programs[key] = program
        log.debug("%s: loaded %r", self.name, program)
        return program


__all__ = ["RocmDevice"]
