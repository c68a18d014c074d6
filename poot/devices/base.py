"""The Device protocol: what every backend provides. Devices know nothing of graphs or KIR: they
allocate, move bytes, load compiled artifacts, dispatch them over a grid, flush and synchronize.

Memory is pooled on every device: a buffer that is freed (or garbage collected) goes back to its
device, and the next allocation of the same size takes it again without asking the driver, so a loop
that realizes arrays of steady sizes allocates nothing after its first iteration. A device counts the
allocations it makes from the driver (or the OS) in `fresh_allocations`. Reuse is safe while queued
work still uses a dropped buffer: each device runs its work in order, so the new owner's commands
come after the old owner's."""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numpy as np

from poot.errors import DeviceError


@dataclass
class Capabilities:
    """What a device can do; the planner and kernel generation read it."""
    name: str                                  # e.g. "cpu", "cuda:0"
    target: str                                # artifact format: "cpu", "ptx", "spirv", "amdgcn"
    compile_arch: str | None = None            # the arch artifacts must be built for (None: the target's
                                               # default); AMD code objects run only on their own ISA
    max_workgroup_size: int = 1024
    max_workgroups: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    max_buffer_bytes: int = 2**62
    shared_memory_bytes: int = 48 * 1024
    subgroup_size: int = 1
    float16: bool = True
    float64: bool = True
    int64: bool = True
    cores: int = 1
    max_buffers: int = 1 << 20                 # buffers one kernel may bind, meta and trap included (wgpu: 8-32)
    vector_store_bytes: int = 16               # widest store per thread of GPU pointwise kernels (gpu_lanes.py)
    extra: dict = field(default_factory=dict)


class Buffer:
    """A device allocation of `nbytes`. `handle` is the backend's own object (a NumPy uint8 array on
    the CPU, a device pointer on CUDA, a wgpu.GPUBuffer...)."""

    __slots__ = ("device", "nbytes", "handle", "__weakref__")

    def __init__(self, device: "Device", nbytes: int, handle):
        self.device, self.nbytes, self.handle = device, nbytes, handle

    def __repr__(self) -> str:
        return f"<Buffer {self.nbytes} bytes on {self.device.name}>"


class PerThread:
    """An attribute whose value each thread has its own of (None until the thread sets it). A device keeps
    its open recording in one: a recording captures only its own thread's dispatches (another thread's
    eager work must run, not land in a recording that replays it later on freed buffers)."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(_thread_values(obj), self.name, None)

    def __set__(self, obj, value) -> None:
        setattr(_thread_values(obj), self.name, value)


def _thread_values(obj) -> threading.local:
    values = obj.__dict__.get("_per_thread")
    if values is None:
        values = obj.__dict__.setdefault("_per_thread", threading.local())
    return values


class Recording:
    """What every GPU device's `record()` returns: a context manager that captures the dispatches and copies
    of its own thread while open (the device keeps it in a PerThread `_recording`), then is closed for
    good; `finish()` turns the commands into the backend's replayable form when the block ends cleanly."""

    def __init__(self, device: "Device"):
        self.device = device
        self.commands: list = []
        self.closed = False

    def __enter__(self):
        dev = self.device
        if dev._recording is not None:
            raise DeviceError(f"{dev.name}: a recording is already open on this device")
        if self.closed:
            raise DeviceError(f"{dev.name}: this recording is closed; start a new one with record()")
        dev._recording = self
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.device._recording = None
        self.closed = True
        if exc_type is None and self.commands:
            self.finish()

    def finish(self) -> None:
        """Build what replay runs (a CUDA graph, a command buffer); nothing by default."""

    def replay(self, rebind=None) -> None:
        self.device.replay(self, rebind)

    def __len__(self) -> int:
        return len(self.commands)


class HostRead:
    """A host read in flight (`Device.read_async`); `wait()` returns its bytes (a NumPy uint8 array)."""
    __slots__ = ("_data",)

    def __init__(self, data):
        self._data = data

    def wait(self) -> np.ndarray:
        return self._data


class Device:
    """Base class; each backend overrides what it supports."""

    name = "?"
    caps: Capabilities
    # whether the device's buffers are host memory (a Buffer's handle a NumPy uint8 array): the runtime
    # then reads trap words, runs host steps and matmuls on views in place instead of copying
    shares_host_memory = False
    # whether a recording holds its buffers by address alone (a CUDA graph's kernel nodes, the CPU's
    # pointer slots), so that a replay may swap in a buffer of any size: the runtime then records with
    # 4-byte stand-ins for the buffers every replay replaces (inputs, results) instead of full-size ones
    records_addresses = False
    # whether replaying a recording of one launch costs less than dispatching it: true where a dispatch
    # records and submits a command buffer of its own (Vulkan, wgpu), false where it is one driver call
    # (a CUDA launch is no slower than a graph launch); the runtime records an eager program of one
    # launch only where this holds
    replays_one_launch = False
    _recording = PerThread()      # the Recording open on this thread (`record()`), None outside one

    # memory
    def allocate(self, nbytes: int) -> Buffer:
        raise NotImplementedError

    def free(self, buf: Buffer) -> None:
        pass

    def allocate_host_read(self, nbytes: int) -> Buffer:
        """A buffer the host reads often and kernels rarely write (the trap word every realize's
        check reads): where the device can, in host memory the GPU writes through, so a read after
        the work it waits for is a load, not a copy. By default an ordinary buffer."""
        return self.allocate(nbytes)

    def write(self, buf: Buffer, data) -> None:
        """Copy host bytes (a C-contiguous NumPy array or buffer object) into `buf`."""
        raise NotImplementedError

    def read(self, buf: Buffer):
        """Return the bytes of `buf` as a NumPy uint8 array (a read-only view where the device can)."""
        raise NotImplementedError

    def read_with(self, buf: Buffer, extra: Buffer):
        """(`read(buf)`, `read(extra)`) as of now, `extra` being a few bytes read beside every host
        read (the trap word): where a read is a round trip to the device, one round trip for both.
        By default two reads: the second finds the work done (and is a load of host memory where
        `extra` came from allocate_host_read)."""
        return self.read(buf), self.read(extra)

    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        raise NotImplementedError

    def duplicate(self, src: Buffer) -> Buffer:
        """A new buffer holding what `src` holds once the work queued before it has run (a copy queued
        behind that work): what a write must go to where something else still reads `src`."""
        buf = self.allocate(src.nbytes)
        if src.nbytes:
            self.copy(buf, src, src.nbytes)
        return buf

    def read_async(self, buf: Buffer) -> "HostRead":
        """Start copying the bytes of `buf` to the host, behind the work queued so far, and return
        the pending read (`.wait()` gives what `read` would have given at this point). Work queued
        after it does not delay it: a GPU device overlaps the copy with that work. This default reads
        at once, into memory of its own (the CPU's read is a view of the buffer, which a later donation
        may overwrite); other devices wait here."""
        data = np.array(self.read(buf))
        data.flags.writeable = False
        return HostRead(data)

    # host arrays: what every caller moving a NumPy array in or out would otherwise spell itself
    def from_numpy(self, array) -> Buffer:
        """A new buffer of this device holding the bytes of `array` (copied in C order)."""
        array = np.ascontiguousarray(array)
        buf = self.allocate(array.nbytes)
        self.write(buf, array)
        return buf

    def to_numpy(self, buf: Buffer, shape, dtype) -> np.ndarray:
        """The array of `shape` and NumPy `dtype` at the start of `buf`: a read-only view of host memory
        where the device shares it, else a copy (a host read: it waits for the work queued before)."""
        dtype = np.dtype(dtype)
        nbytes = dtype.itemsize * math.prod(shape)
        return self.read(buf)[:nbytes].view(dtype).reshape(shape)

    # guards every backend's memory calls start with
    def _check(self, buf: Buffer) -> None:
        """Refuse what is not a live buffer of this device (another device's, or a freed one)."""
        if not isinstance(buf, Buffer) or buf.device is not self:
            raise DeviceError(f"{self.name}: {buf!r} is not a buffer of this {self.name} device")
        if buf.handle is None:
            raise DeviceError(f"{self.name}: {buf!r} was freed")

    def _no_recording(self, what: str) -> None:
        """Refuse `what` (a host transfer, a wait) while this thread records: a recording replays later,
        so it may hold only work that runs on the device."""
        if self._recording is not None:
            raise DeviceError(f"{self.name}: {what} inside a recording is not supported (a recording holds "
                              "dispatches and device-to-device copies only)")

    def _copy_bytes(self, dst: Buffer, src: Buffer, nbytes) -> int:
        """`nbytes` as an int once both buffers are live buffers of this device (the backend's `_check`)
        large enough for it; the check every GPU device's `copy` starts with."""
        self._check(dst)
        self._check(src)
        nbytes = int(nbytes)
        if nbytes < 0 or nbytes > min(dst.nbytes, src.nbytes):
            raise DeviceError(f"{self.name}: copy of {nbytes:,} bytes between buffers of {src.nbytes:,} and "
                              f"{dst.nbytes:,}")
        return nbytes

    # programs
    def load(self, artifact):
        """Load a compiled artifact (bytes or text in the device's format) and return a program."""
        raise NotImplementedError

    def dispatch(self, program, buffers: list[Buffer], grid: tuple[int, int, int]) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Hand the work queued so far to the device without waiting for it (a GPU device that
        batches commands submits them, so the device works while the host goes on)."""

    def synchronize(self) -> None:
        pass

    def describe(self) -> str:
        """One line on what the device is (`poot devices`); a backend says more (GPU, memory, driver)."""
        return f"{self.caps.target} target, {self.caps.cores} cores"

    def __repr__(self) -> str:
        return f"<poot device {self.name}>"
