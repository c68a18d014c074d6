"""The wgpu device: SPIR-V programs on Vulkan (and wherever wgpu-native runs) through wgpu-py.

Buffers are wgpu storage buffers; transfers go through mapped staging buffers on the one queue, in
order with the dispatches. A buffer freed or garbage collected keeps its wgpu buffer in a pool by size,
and the next allocation of that size takes it back (with the bind groups cached for it): a steady loop
creates no wgpu buffer; `trim()` destroys the pooled ones. Work is encoded into one pending command
encoder and submitted by `flush()` (poot.jit flushes at the end of each program run, without
waiting), when a result is needed (read, synchronize) or every MAX_PENDING dispatches. wgpu's shader translator (naga) takes the SPIR-V; an adapter without a GPU (Mesa's lavapipe)
is a real Vulkan device, so this module is tested for real on machines without one.

Limits, honestly:
- Workgroups per dimension are capped (65,535). A logical grid beyond the cap is folded: the device
  dispatches a physical grid (PX, PY, PZ) with PX*PY*PZ >= the number of logical groups, and a program
  that says it rebuilds its grid (`folds_grid`, as poot's SPIR-V target does) computes its linear
  group `x + y*PX + z*PX*PY` from NumWorkgroups, unflattens it over the logical grid from its metadata
  and lets surplus groups exit. A program that does not rebuild its grid is refused beyond the cap.
- One array must fit one storage-buffer binding (`max-storage-buffer-binding-size`); larger
  allocations are refused with the limit named: a split across bindings would need kernel support.
- float16, float64, int64 and int16 arithmetic need the adapter features shader-f16, shader-f64,
  shader-int64 and shader-i16; a program using one the adapter lacks is refused at load, by name.

Record/replay (wgpu_replay.py): recordings validated and built once, encoded and submitted per replay.

Host time: the command stream (eager dispatches and copies, flush, and replays) calls wgpu-native's C
functions directly (wgpu_native.py) instead of through wgpu-py's per-call wrappers, falling back to
wgpu-py's public API where its backend is laid out differently. Small reads reuse one staging buffer,
mapped by polling the device on the reading thread.
"""
from __future__ import annotations

import functools
import logging
import math
import threading
import weakref

import numpy as np

from poot.errors import DeviceError, DeviceUnavailableError, DTypeError, NotBuiltError, OutOfMemoryError, kernel_trap
from poot.devices.base import Buffer, Capabilities, Device
from poot.devices.grid import dispatch_grid
from poot.devices.wgpu_native import NativeQueue
from poot.devices.wgpu_replay import Recording, encode_replay, native_steps
from poot.devices.wgpu_adapter import (CAPABILITY_FEATURES, FEATURES, LIMITS, SUBGROUP_SHUFFLE, import_wgpu,
                                      pick_adapter, spirv_capabilities)

log = logging.getLogger("poot.devices.wgpu")

READ_STAGING_BYTES = 1 << 20          # reads up to this size reuse one staging buffer
MAX_PENDING = 64                     # dispatches encoded before the pending encoder is submitted
TRAP_WORDS = 4                       # the trap buffer: word 0 holds the first nonzero trap code


def _capacity(nbytes: int) -> int:
    """The bytes a wgpu buffer of `nbytes` holds: at least 4, a multiple of 4 (storage bindings)."""
    return max(4, _round4(nbytes))


def _round4(n: int) -> int:
    return (n + 3) & ~3


class WgpuProgram:
    """A loaded artifact: its shader module and one compute pipeline per binding count."""

    def __init__(self, name: str, entry: str, module, folds_grid: bool, trap_sites: dict):
        self.name, self.entry, self.module = name, entry, module
        self.folds_grid, self.trap_sites = folds_grid, trap_sites
        self.pipelines: dict[int, object] = {}

    def __repr__(self) -> str:
        return f"<wgpu program {self.name}>"


class WgpuDevice(Device):
    name = "wgpu"
    replays_one_launch = True         # a dispatch records and submits a command buffer

    def __init__(self):
        wgpu = self._wgpu = import_wgpu()
        adapter = pick_adapter(wgpu)
        limits = adapter.limits
        features = [f for f in FEATURES if f in adapter.features]
        try:
            self._dev = adapter.request_device_sync(
                required_features=features, required_limits={k: limits[k] for k in LIMITS if k in limits})
        except Exception as e:
            raise DeviceUnavailableError(f"wgpu: the adapter '{adapter.info.get('device')}' refused a device "
                                         f"({type(e).__name__}: {e})") from None
        self.info = dict(adapter.info)
        self.limits = {k: int(v) for k, v in self._dev.limits.items() if isinstance(v, int)}
        self.features = frozenset(self._dev.features)
        self._queue = self._dev.queue
        self._native = NativeQueue.open(self._dev, self._queue)   # None: encode through wgpu-py's API
        if self._native is not None:
            self._native.spin = self.info.get("adapter_type") != "CPU"
        self._epoch = 0                              # bumped when trim() destroys pooled wgpu buffers
        self._read_staging = None                    # the MAP_READ buffer small reads reuse
        self._lock = threading.RLock()   # the open encoder, pass and caches are shared: one caller at a time
        self._usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        self._programs: dict[tuple, WgpuProgram] = {}
        self._layouts: dict[int, tuple] = {}
        self._bind_groups: dict[tuple, tuple] = {}   # wgpu buffer ids -> (weak refs to them, bind group)
        self._free: dict[int, list] = {}             # size -> wgpu buffers of dropped Buffers, for reuse
        self._finalizers: dict[int, weakref.finalize] = {}
        self.fresh_allocations = 0                   # wgpu buffers created for Buffers
        self._prune_at = 64
        self._encoder = self._pass = None
        self._pending_dispatches = 0
        self._keepalive: list = []
        self._trap: Buffer | None = None
        self._fence = None
        self._busy = False       # work submitted since the last completed read (a wait then has work to wait for)
        self._trap_programs: list[WgpuProgram] = []
        self.trap_resolver = None     # optional callable(code, programs) -> KernelTrap, set by the launcher
        binding = self.limits.get("max-storage-buffer-binding-size", 2**27)
        self.caps = Capabilities(
            name="wgpu", target="spirv",
            max_workgroup_size=self.limits.get("max-compute-invocations-per-workgroup", 256),
            max_workgroups=(2**31 - 1, 65535, 65535),
            max_buffer_bytes=min(binding, self.limits.get("max-buffer-size", binding)),
            shared_memory_bytes=self.limits.get("max-compute-workgroup-storage-size", 16384),
            # poot asks wgpu for no subgroup feature: its kernels exchange no values across lanes here
            subgroup_size=1,
            float16="shader-f16" in self.features, float64="shader-f64" in self.features,
            int64="shader-int64" in self.features, cores=1,
            max_buffers=self.limits.get("max-storage-buffers-per-shader-stage", 8),
            # scalar stores: after naga's re-translation, pointwise kernels with 16-byte accesses ran slower on
            # the H200 (-x 1.60 vs 2.91 TB/s, the mixed chain 2.44 vs 3.82 TB/s; raw Vulkan runs the 16-byte form
            # at 3.7-3.9 TB/s), while a sum, which only loads, ran faster with them (2.98 vs 1.88 TB/s)
            vector_store_bytes=4,
            extra={"adapter": self.info.get("device"), "adapter_type": self.info.get("adapter_type"),
                   "backend": self.info.get("backend_type"), "driver": self.info.get("description"),
                   "max_workgroups_per_dimension": self.limits.get("max-compute-workgroups-per-dimension", 65535),
                   "max_storage_buffers": self.limits.get("max-storage-buffers-per-shader-stage", 8),
                   "features": sorted(self.features)})
        log.info("wgpu device on %s (%s, %s)", self.info.get("device"), self.info.get("backend_type"),
                 self.info.get("adapter_type"))

    def describe(self) -> str:
        return (f"spirv target on {self.info.get('device')} ({self.info.get('backend_type')}, "
                f"{self.info.get('adapter_type')})")

    # --- memory ------------------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> Buffer:
        nbytes = int(nbytes)
        if nbytes < 0:
            raise DeviceError(f"wgpu: cannot allocate {nbytes} bytes")
        if nbytes > self.caps.max_buffer_bytes:
            binding = self.limits.get("max-storage-buffer-binding-size", 0)
            limit = "max-storage-buffer-binding-size" if nbytes > binding else "max-buffer-size"
            raise DeviceError(
                f"wgpu: an array of {nbytes:,} bytes is larger than this adapter's {limit} "
                f"({self.caps.max_buffer_bytes:,} bytes on {self.info.get('device')}); one array must fit "
                "one storage-buffer binding, so use smaller arrays or another device")
        size = _capacity(nbytes)
        free = self._free.get(size)
        if free:
            handle = free.pop()
        else:
            try:
                handle = self._create(size)
            except self._wgpu.GPUOutOfMemoryError:
                self.trim()
                try:
                    handle = self._create(size)
                except self._wgpu.GPUOutOfMemoryError as e:
                    raise OutOfMemoryError(f"wgpu: out of device memory allocating {nbytes:,} bytes ({e})") from None
            except self._wgpu.GPUError as e:
                raise DeviceError(f"wgpu: could not allocate {nbytes:,} bytes: {e}") from None
        buf = Buffer(self, nbytes, handle)
        fin = self._finalizers[id(handle)] = weakref.finalize(buf, self._recycle, size, handle)
        fin.atexit = False
        return buf

    def _create(self, size: int):
        handle = self._dev.create_buffer(size=size, usage=self._usage)
        self.fresh_allocations += 1
        return handle

    def _recycle(self, size: int, handle) -> None:
        """A Buffer's finalizer (any thread): its wgpu buffer goes to the pool. Queued work that still
        uses it runs before any work of its next owner (one queue, in order)."""
        self._finalizers.pop(id(handle), None)
        self._free.setdefault(size, []).append(handle)

    def free(self, buf: Buffer) -> None:
        """Give `buf`'s wgpu buffer back to the pool now."""
        if buf.handle is None:
            return
        fin = self._finalizers.get(id(buf.handle))
        buf.handle = None
        if fin is not None:
            fin()

    def trim(self) -> None:
        """Destroy the pooled wgpu buffers (after the work queued so far), handing their memory back."""
        self._flush()
        self._wait()
        dropped = {id(h) for handles in self._free.values() for h in handles}
        for handles in self._free.values():
            for h in handles:
                h.destroy()
        self._free.clear()
        self._epoch += 1
        for key in [k for k in self._bind_groups if any(i in dropped for i in k)]:
            del self._bind_groups[key]

    def write(self, buf: Buffer, data) -> None:
        self._check(buf)
        self._no_recording("a host-to-device write")
        if isinstance(data, (bytes, bytearray, memoryview)):
            src = np.frombuffer(data, dtype=np.uint8)
        else:                                    # a view, not a memoryview: ml_dtypes has no buffer format
            src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        n = src.nbytes
        if n > buf.nbytes:
            raise DeviceError(f"wgpu: writing {n:,} bytes into a buffer of {buf.nbytes:,}")
        if n == 0:
            return
        padded = _round4(n)
        if padded != n:                      # the last word is shared with bytes we must keep
            tail = np.zeros(padded - n, np.uint8)
            if n < buf.nbytes:
                keep = self._read_range(buf, padded - 4, 4)
                tail = keep[4 - (padded - n):]
            src = np.concatenate([src, tail])
        staging = self._dev.create_buffer(size=padded, usage=self._wgpu.BufferUsage.MAP_WRITE
                                          | self._wgpu.BufferUsage.COPY_SRC, mapped_at_creation=True)
        staging.write_mapped(src)
        staging.unmap()
        self._copy_buffer(staging, 0, buf.handle, 0, padded)
        self._keepalive.append(staging)

    def read(self, buf: Buffer):
        self._check(buf)
        self._no_recording("a device-to-host read")
        out = self._read_range(buf, 0, buf.nbytes)
        out.flags.writeable = False              # like the other devices: results are read-only views
        return out

    def read_with(self, buf: Buffer, extra: Buffer):
        """Both buffers copied into one staging buffer by one submission and read by one mapping: a
        mapping waits for the device, which is most of a small read's time."""
        self._check(buf)
        self._check(extra)
        self._no_recording("a device-to-host read")
        at = -(-_round4(buf.nbytes) // 256) * 256        # extra's offset in the staging buffer
        raw = self._read_range(buf, 0, buf.nbytes, (extra, at))
        data, words = raw[:buf.nbytes], raw[at: at + extra.nbytes]
        data.flags.writeable = words.flags.writeable = False
        return data, words

    def _read_range(self, buf: Buffer, offset: int, nbytes: int, extra=None) -> np.ndarray:
        """Bytes [offset, offset + nbytes) of `buf`; with `extra` = (buffer, at), also that whole
        buffer, copied to `at` in the same staging buffer (the result's bytes from `at` on)."""
        if nbytes == 0 and extra is None:
            return np.zeros(0, np.uint8)
        start, size = offset & ~3, _round4(offset + nbytes) - (offset & ~3)
        total = size if extra is None else extra[1] + _round4(extra[0].nbytes)
        staging, kept = self._read_staging_for(total)
        if size:
            self._copy_buffer(buf.handle, start, staging, 0, size)
        if extra is not None:
            self._copy_buffer(extra[0].handle, 0, staging, extra[1], _round4(extra[0].nbytes))
        self._flush()
        try:
            if self._native is not None:
                raw = np.empty(total, np.uint8)
                self._native.read(self._native.handle(staging), total, raw)
            else:
                staging.map_sync(self._wgpu.MapMode.READ, 0, total)
                try:
                    raw = np.frombuffer(staging.read_mapped(0, total, copy=True), dtype=np.uint8)
                finally:
                    staging.unmap()
        except BaseException:
            if kept:                         # its map state is unknown: the next read makes another
                self._read_staging = None
            staging.destroy()
            raise
        self._busy = False                   # the copy was submitted last, and the queue runs in order
        if not kept:
            staging.destroy()
        return raw[offset - start: offset - start + nbytes] if extra is None else raw

    def _read_staging_for(self, size: int):
        """(a MAP_READ staging buffer of at least `size` bytes, whether it is the kept one): reads up to
        READ_STAGING_BYTES reuse one buffer (reads are synchronous, under the lock), larger ones get
        their own."""
        U = self._wgpu.BufferUsage
        if size > READ_STAGING_BYTES:
            return self._dev.create_buffer(size=size, usage=U.MAP_READ | U.COPY_DST), False
        staging = self._read_staging
        if staging is None or staging.size < size:
            if staging is not None:
                staging.destroy()
            self._read_staging = None
            staging = self._dev.create_buffer(size=max(256, 1 << (size - 1).bit_length()),
                                              usage=U.MAP_READ | U.COPY_DST)
            self._read_staging = staging
        return staging, True

    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        nbytes = self._copy_bytes(dst, src, nbytes)
        # copies move whole words; rounding up is harmless when it only reaches dst's own padding
        whole = _round4(nbytes) if nbytes % 4 == 0 or nbytes == dst.nbytes else nbytes & ~3
        if self._recording is not None:
            if whole != nbytes and nbytes != dst.nbytes:
                raise DeviceError("wgpu: a recorded copy must be a whole number of 4-byte words")
            self._recording.commands.append(("copy", src, dst, whole))
            self._recording.buffers += [src, dst]
            return
        if whole:
            self._copy_buffer(src.handle, 0, dst.handle, 0, whole)
        if whole < nbytes:                   # 1-3 trailing bytes of a word dst keeps the rest of
            self._write_tail(dst, whole, self._read_range(src, whole, nbytes - whole))

    def _write_tail(self, buf: Buffer, offset: int, data: np.ndarray) -> None:
        word = self._read_range(buf, offset, 4).copy()
        word[: data.nbytes] = data
        staging = self._dev.create_buffer(size=4, usage=self._wgpu.BufferUsage.MAP_WRITE
                                          | self._wgpu.BufferUsage.COPY_SRC, mapped_at_creation=True)
        staging.write_mapped(word)
        staging.unmap()
        self._copy_buffer(staging, 0, buf.handle, offset, 4)
        self._keepalive.append(staging)

    # --- programs ----------------------------------------------------------------------------------
    def load(self, artifact) -> WgpuProgram:
        """A program from SPIR-V bytes, or from an artifact with `.data` (SPIR-V) and optionally `.entry`,
        `.name`, `.folds_grid` and `.trap_sites` ({code: (what, where)}). Cached by content."""
        data = artifact if isinstance(artifact, (bytes, bytearray, memoryview)) else getattr(artifact, "data", None)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise DeviceError(f"wgpu: cannot load {type(artifact).__name__}: expected SPIR-V bytes")
        data = bytes(data)
        entry = getattr(artifact, "entry", "main") or "main"
        name = getattr(artifact, "name", None) or entry
        key = (data, entry)
        if key in self._programs:
            return self._programs[key]
        for cap in spirv_capabilities(data):
            if cap == SUBGROUP_SHUFFLE:
                raise NotBuiltError(f"wgpu: kernel '{name}' exchanges values across a subgroup (pt.shuffle, "
                                    "pt.shuffle_xor, pt.subgroup_sum...); poot's wgpu device enables no subgroup "
                                    "operations: run it on the vulkan or cuda device")
            if cap in CAPABILITY_FEATURES and CAPABILITY_FEATURES[cap][0] not in self.features:
                feature, what = CAPABILITY_FEATURES[cap]
                raise DTypeError(f"wgpu: kernel '{name}' uses {what}, which needs the adapter feature "
                                 f"'{feature}'; '{self.info.get('device')}' does not have it")
        try:
            module = self._dev.create_shader_module(label=name, code=data)
        except self._wgpu.GPUError as e:
            raise DeviceError(f"wgpu rejected the SPIR-V of kernel '{name}': {e}") from None
        sites = dict(getattr(artifact, "trap_sites", None) or {})
        # poot's SPIR-V target always rebuilds a folded grid (poot/jit/llvm/abi.py); other SPIR-V says so itself
        folds = getattr(artifact, "folds_grid", getattr(artifact, "target", None) == self.caps.target)
        program = WgpuProgram(name, entry, module, bool(folds), sites)
        self._programs[key] = program
        return program

    def _layout(self, n: int):
        """The bind group layout and pipeline layout for `n` storage buffers at bindings 0..n-1. Every
        binding is read-write in the layout: wgpu accepts a read-only shader binding under it, and one
        buffer may then be bound to several bindings (an output written in place of an input)."""
        if n not in self._layouts:
            limit = self.caps.extra["max_storage_buffers"]
            if n > limit:
                raise DeviceError(f"wgpu: a kernel with {n} buffers exceeds this adapter's "
                                  f"max-storage-buffers-per-shader-stage ({limit})")
            entries = [{"binding": i, "visibility": self._wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": self._wgpu.BufferBindingType.storage}} for i in range(n)]
            bgl = self._dev.create_bind_group_layout(entries=entries)
            self._layouts[n] = (bgl, self._dev.create_pipeline_layout(bind_group_layouts=[bgl]))
        return self._layouts[n]

    def _pipeline(self, program: WgpuProgram, n: int):
        if n not in program.pipelines:
            try:
                program.pipelines[n] = self._dev.create_compute_pipeline(
                    label=program.name, layout=self._layout(n)[1],
                    compute={"module": program.module, "entry_point": program.entry})
            except self._wgpu.GPUError as e:
                raise DeviceError(f"wgpu could not build a pipeline for kernel '{program.name}' with "
                                  f"{n} buffers: {e}") from None
        return program.pipelines[n]

    def _bind_group(self, buffers: list[Buffer]):
        """The bind group of `buffers`, cached by their wgpu buffers (which outlive a Buffer in the pool,
        so the next iteration of a loop finds the groups of the last one)."""
        handles = [b.handle for b in buffers]
        key = tuple(map(id, handles))
        hit = self._bind_groups.get(key)
        if hit is not None and all(r() is h for r, h in zip(hit[0], handles)):
            return hit[1]
        if len(self._bind_groups) >= self._prune_at:   # drop groups naming a buffer gone without free()
            self._bind_groups = {k: v for k, v in self._bind_groups.items() if all(r() is not None for r in v[0])}
            self._prune_at = max(64, 2 * len(self._bind_groups))
        group = self._dev.create_bind_group(layout=self._layout(len(buffers))[0], entries=[
            {"binding": i, "resource": {"buffer": h, "offset": 0, "size": h.size}}
            for i, h in enumerate(handles)])
        self._bind_groups[key] = (tuple(weakref.ref(h) for h in handles), group)
        return group

    def dispatch(self, program: WgpuProgram, buffers: list[Buffer], grid) -> None:
        """Run `program` over `grid` workgroups (1 to 3 dimensions) with `buffers` at bindings 0..n-1."""
        if not isinstance(program, WgpuProgram):
            raise DeviceError(f"wgpu: {program!r} is not a program loaded on this device")
        for b in buffers:
            self._check(b)
        physical = dispatch_grid("wgpu", program, grid, (self.caps.extra["max_workgroups_per_dimension"],) * 3)
        pipeline = self._pipeline(program, len(buffers))
        group = self._bind_group(buffers)
        traps = self._trap is not None and any(b is self._trap for b in buffers)
        if self._recording is not None:
            self._recording.commands.append(("dispatch", pipeline, group, physical, tuple(buffers)))
            self._recording.buffers += list(buffers)
            if traps:
                self._recording.trap_programs.append(program)
            return
        if math.prod(physical) == 0:
            return
        if self._native is not None:
            handle = self._native.handle
            self._native.dispatch(handle(pipeline), handle(group), *physical)
        else:
            if self._pass is None:
                self._pass = self._encoder_now().begin_compute_pass()
            self._pass.set_pipeline(pipeline)
            self._pass.set_bind_group(0, group)
            self._pass.dispatch_workgroups(*physical)
        if traps:
            self._trap_programs.append(program)
        self._pending_dispatches += 1
        if self._pending_dispatches >= MAX_PENDING:
            self._flush()

    # --- command stream ----------------------------------------------------------------------------
    def _encoder_now(self):
        if self._encoder is None:
            self._encoder = self._dev.create_command_encoder()
        return self._encoder

    def _copy_buffer(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        """Append a copy between wgpu buffers to the pending encoder."""
        if self._native is not None:
            handle = self._native.handle
            self._native.copy(handle(src), src_offset, handle(dst), dst_offset, nbytes)
        else:
            self._copy_commands().copy_buffer_to_buffer(src, src_offset, dst, dst_offset, nbytes)

    def _copy_commands(self):
        """The pending encoder, outside any compute pass (copies cannot go inside one)."""
        if self._pass is not None:
            self._pass.end()
            self._pass = None
        return self._encoder_now()

    def flush(self) -> None:
        """Submit the pending encoder without waiting."""
        self._flush()

    def _flush(self) -> None:
        native = self._native
        if native is not None:
            if native.encoder is not None:
                try:
                    native.submit_pending()
                    self._busy = True
                finally:
                    self._pending_dispatches = 0
                    self._keepalive.clear()
            return
        if self._encoder is None:
            return
        if self._pass is not None:
            self._pass.end()
            self._pass = None
        encoder, self._encoder = self._encoder, None
        try:
            self._queue.submit([encoder.finish()])
            self._busy = True
        except self._wgpu.GPUError as e:
            raise DeviceError(f"wgpu: submitting work failed: {e}") from None
        finally:
            self._pending_dispatches = 0
            self._keepalive.clear()

    def synchronize(self) -> None:
        """Wait for all submitted work; raise poot.KernelTrap if a kernel trapped since the last call."""
        self._no_recording("synchronize")
        if self._trap_programs:
            self._check_trap()               # reading the trap word waits for the queue
        else:
            self._wait()

    def _wait(self) -> None:
        """Block until the queue is idle. (wgpu-py 0.32's on_submitted_work_done_sync fails against
        wgpu-native 29, so this maps a word copied after all submitted work, which the queue orders.)
        With nothing submitted since the last read there is nothing to wait for: a mapping costs tens of
        microseconds even on an idle queue."""
        self._flush()
        if not self._busy:
            return
        if self._fence is None:
            self._fence = Buffer(self, 4, self._dev.create_buffer(size=4, usage=self._usage))
        self._read_range(self._fence, 0, 4)

    # --- traps -------------------------------------------------------------------------------------
    def trap_buffer(self) -> Buffer:
        """The device's trap word buffer (uint32 x TRAP_WORDS, zeroed): bind it as a kernel's trap buffer;
        synchronize() reads word 0 and raises poot.KernelTrap when it is nonzero."""
        if self._trap is None:
            self._no_recording("creating the trap buffer")
            self._trap = self.allocate(4 * TRAP_WORDS)
            self.write(self._trap, np.zeros(TRAP_WORDS, np.uint32))
        return self._trap

    def _check_trap(self) -> None:
        programs, self._trap_programs = self._trap_programs, []
        words = self._read_range(self._trap, 0, 4 * TRAP_WORDS).view(np.uint32)
        code = int(words[0])
        if code == 0:
            return
        self.write(self._trap, np.zeros(TRAP_WORDS, np.uint32))
        self._flush()
        if self.trap_resolver is not None:
            raise self.trap_resolver(code, programs)
        names = sorted({p.name for p in programs})
        site = next((p.trap_sites[code] for p in programs if code in p.trap_sites), None)
        what, where = (site if site else (None, None))
        kernel = names[0] if len(names) == 1 else "one of " + ", ".join(names)
        raise kernel_trap(kernel, code, where=where or None, what=what)

    # --- record / replay ---------------------------------------------------------------------------
    def record(self) -> Recording:
        """`with dev.record() as rec: dev.dispatch(...)` captures without running; `rec.replay()` runs it."""
        return Recording(self)

    def replay(self, recording: Recording, rebind=None) -> None:
        """One new encoder, one submit, for a closed recording; `rebind` ({recorded: replacement}) swaps
        buffers for this replay (a dispatch whose buffers change gets the bind group of the new set)."""
        if recording.device is not self:
            raise DeviceError("wgpu: the recording belongs to another device")
        if not recording.closed:
            raise DeviceError("wgpu: replay of a recording that is still open")
        self._no_recording("a replay")
        rebind = rebind or {}
        for old, new in rebind.items():
            self._check(new)
            if new.nbytes < old.nbytes and _capacity(new.nbytes) < _capacity(old.nbytes):  # allocate pads
                raise DeviceError(f"wgpu: replay rebinds {old!r} to the smaller {new!r}")
        for b in recording.buffers:
            if b.handle is None and b not in rebind:
                raise DeviceError(f"wgpu: the recording uses {b!r}, which was freed")
        self._flush()
        if self._native is not None:
            self._native.run(native_steps(self, recording, rebind))
        else:
            encode_replay(self, recording, rebind)
        self._busy = True
        if recording.trap_programs:
            self._trap_programs += recording.trap_programs

def _serialized(method):
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


# Threads may share the device (concurrent jitted calls): each entry point runs under the device's lock.
# (eight threads calling one jitted function crashed the process on the H200's Vulkan driver.)
for _name in ("allocate", "free", "trim", "write", "read", "read_with", "copy", "load", "dispatch", "flush",
              "synchronize", "replay"):
    setattr(WgpuDevice, _name, _serialized(getattr(WgpuDevice, _name)))
