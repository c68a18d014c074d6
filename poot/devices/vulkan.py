"""The raw Vulkan device: poot's SPIR-V on any Vulkan 1.3 driver through the `vulkan` bindings, without
wgpu. The same LLVM SPIR-V the wgpu device runs, but as LLVM emits it: the SPIR-V target's "vulkan1.3"
consumer keeps only the fixes the Vulkan environment requires (poot/jit/llvm/targets/spirv/vulkan.py), none of
naga's; the device asks for it through Capabilities.compile_arch.

Finding and opening the GPU: vulkan_setup.py (discrete first, POOT_VULKAN_DEVICE to pick one).

Memory and host transfers (device-local buffers, a pool, host-visible staging): vulkan_memory.py.

Commands: dispatches, copies and staged writes are recorded into one pending command buffer, each
after a full memory barrier (so any command sees the writes of every command before it, in this
submission or an earlier one), and submitted with a fence by `flush()` (poot.jit flushes at the end of
each program run, without waiting), when a result is needed (read, synchronize) or every MAX_PENDING
commands. A submission retires the finished ones before it (their fences and command buffers are
reused) and waits for the oldest only when MAX_IN_FLIGHT are queued. A pipeline per program (set 0, bindings 0..n-1: the kernel's buffers,
meta and trap, poot/jit/llvm/abi.py), built through a pipeline cache that is saved at exit under
POOT_CACHE_DIR/vulkan/ (unless POOT_DISK_CACHE=0). Descriptor sets are cached by the buffers they name.
A grid past the device's workgroups per dimension is folded (poot's SPIR-V rebuilds its logical grid).

Traps: poot's kernels write the trap word and return; poot.jit reads it back and raises
poot.KernelTrap. A lost device (VK_ERROR_DEVICE_LOST) is sticky: every later call says so.

Host time: the per-command calls (submit, fence status, wait and reset, command buffer begin/end, copy
regions) go straight to the cffi library with structs built once, not through the bindings' Python
wrappers (a struct per call, handle casts per argument); their VkResults become poot errors
(`_result_error`). A wait on a GPU polls its fence (up to SPIN_WAIT_S) before the driver's blocking wait,
which wakes late: on an H100, a realize read back cost 0.239 ms blocking and 0.182 ms polling.

Record/replay (vulkan_replay.py): a recording becomes command buffers recorded once and resubmitted.
POOT_DEBUG >= 1: each dispatch is bracketed by timestamp queries, and the GPU time of every kernel is
printed at the next wait (and kept in `kernel_times`).
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import logging
import math
import sys
import threading
import time
import weakref

import numpy as np

from poot.errors import DeviceError, DTypeError, NotBuiltError, OutOfMemoryError
from poot import env
from poot.devices.base import Buffer, Capabilities, Device
from poot.devices.vulkan_memory import VulkanMemory, _Allocation, _Chunk, _locked
from poot.devices.vulkan_setup import (CAPABILITY_FEATURES, create_instance, exchange_lanes,
                                      import_vulkan, open_device, open_pipeline_cache, pick_physical_device,
                                      pipeline_cache_path, save_pipeline_cache)
from poot.devices.grid import dispatch_grid
from poot.devices.wgpu_adapter import SUBGROUP_SHUFFLE, spirv_capabilities

log = logging.getLogger("poot.devices.vulkan")

MAX_PENDING = 128                 # commands recorded before the pending command buffer is submitted
MAX_IN_FLIGHT = 16                # submissions queued before a submit waits for the oldest
SETS_PER_POOL = 1024              # descriptor sets per pool of the cache
SPIN_WAIT_S = 0.02                # a wait on a GPU polls its fence this long before the driver's blocking wait
MAX_CACHED_SETS = 16384
# VK_ERROR_OUT_OF_POOL_MEMORY and VK_ERROR_FRAGMENTATION: the `vulkan` bindings (1.3.275) spell these two
# constants without their minus sign, so the codes a driver returns raise a bare KeyError (NVIDIA's does
# when a pool is full; lavapipe's pools grow)
POOL_FULL_RESULTS = (-1000069000, -1000161000)
WHOLE = (1 << 64) - 1             # VK_WHOLE_SIZE
SPIRV_TARGET_ENV = "vulkan1.3"    # the SPIR-V consumer this device asks poot.jit for
_SPIRV_BINDING = 33               # SPIR-V Decoration Binding


def _debug() -> int:
    return env.debug_level()


class VulkanProgram:
    __slots__ = ("name", "entry", "module", "pipeline", "layout", "set_layout", "nbindings", "folds_grid")

    def __init__(self, *fields):
        for slot, value in zip(self.__slots__, fields):
            setattr(self, slot, value)

    def __repr__(self) -> str:
        return f"<vulkan program {self.name} ({self.nbindings} buffers)>"


def spirv_bindings(data: bytes) -> int:
    """1 + the highest Binding decoration of a SPIR-V module (0 without any)."""
    words = np.frombuffer(data, dtype="<u4")
    i, top = 5, -1
    while i < len(words):
        count, op = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if op == 71 and count >= 4 and words[i + 2] == _SPIRV_BINDING:       # OpDecorate %v Binding n
            top = max(top, int(words[i + 3]))
        elif op == 54:                                                         # OpFunction: past the annotations
            break
        i += max(count, 1)
    return top + 1


class VulkanDevice(VulkanMemory, Device):
    name = "vulkan"
    replays_one_launch = True         # a dispatch records and submits a command buffer

    def __init__(self):
        self._lock = threading.RLock()
        self._returned: collections.deque = collections.deque()   # allocations of collected buffers
        vk = self._vk = import_vulkan()
        self.validation_messages: list[str] = []
        self._instance, self._messenger = create_instance(vk, self.validation_messages)
        self._pd, self.info, self.index = pick_physical_device(vk, self._instance)
        self._dev, self._queue = open_device(vk, self._pd, self.info)
        self.features = frozenset(self.info["features"])
        self._lib, self._ffi = vk.lib, vk.ffi
        self._broken: str | None = None
        info = self.info
        self._local = self._memory_type(vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
        host = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        self._upload = self._memory_type(host)
        self._download = self._memory_type(host | vk.VK_MEMORY_PROPERTY_HOST_CACHED_BIT, fallback=host)
        self._command_pool = vk.vkCreateCommandPool(self._dev, vk.VkCommandPoolCreateInfo(
            flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, queueFamilyIndex=info["queue_family"]), None)
        barrier = self._ffi.new("VkMemoryBarrier*", {"sType": vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                                     "srcAccessMask": vk.VK_ACCESS_MEMORY_WRITE_BIT,
                                                     "dstAccessMask": vk.VK_ACCESS_MEMORY_READ_BIT
                                                     | vk.VK_ACCESS_MEMORY_WRITE_BIT | vk.VK_ACCESS_HOST_READ_BIT})
        self._barrier = barrier
        # one VkSubmitInfo for every submission (under the lock): its command buffer slot is set per submit
        self._submit_cmds = self._ffi.new("VkCommandBuffer[1]")
        self._submit_info = self._ffi.new("VkSubmitInfo*", {"sType": vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                                            "commandBufferCount": 1,
                                                            "pCommandBuffers": self._submit_cmds})
        self._fence_slot = self._ffi.new("VkFence[1]")
        self._begin_info = self._ffi.new("VkCommandBufferBeginInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            "flags": vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT})
        self._region = self._ffi.new("VkBufferCopy*")      # the region of the copy being recorded
        self._set_slot = self._ffi.new("VkDescriptorSet[1]")
        self._all_stages = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        # a GPU's blocking fence wait sleeps and wakes late (hundreds of microseconds on NVIDIA's driver);
        # polling the fence sees the end at once. Not on a CPU driver (lavapipe): its threads need the cores
        self._spin_wait = info["type"] != "CPU"
        self._pools: dict[int, list[_Allocation]] = {}        # size class -> free allocations
        self._finalizers: dict[int, weakref.finalize] = {}
        self._host_reads: dict[int, tuple] = {}               # allocate_host_read's: key -> (mapping, address)
        self._pooled = 0
        self.fresh_allocations = 0                            # buffers created for allocations (pool misses)
        self._graveyard: list[_Allocation] = []               # destroyed once the queue is idle
        self._retired: list = []                              # (recording, variant) freed once the queue is idle
        self._cmd = None                                      # the pending command buffer
        self._cmd_count = 0
        self._cmd_chunks: list[_Chunk] = []
        self._cmd_timings: list[tuple] = []
        self._upload_chunk: _Chunk | None = None
        self._free_chunks: dict[bool, list[_Chunk]] = {False: [], True: []}    # download? -> chunks
        self._chunks_made = {False: 0, True: 0}
        self._in_flight: collections.deque = collections.deque()   # (fence, cmd, chunks, timings)
        self._spare_cmds: list = []
        self._spare_fences: list = []
        self._layouts: dict[int, tuple] = {}
        self._programs: dict[tuple, VulkanProgram] = {}
        self._sets: dict[tuple, object] = {}
        self._set_pools: list = []
        self._recordings: weakref.WeakSet = weakref.WeakSet()    # those holding command buffers
        self._queries = None
        self.kernel_times: list[tuple[str, tuple, float]] = []
        self._cache_path = pipeline_cache_path(info)
        self._pipeline_cache = open_pipeline_cache(vk, self._dev, self._cache_path)
        self._new_pipelines = 0
        atexit.register(self._at_exit)
        f = self.features
        self.caps = Capabilities(
            name="vulkan", target="spirv", compile_arch=SPIRV_TARGET_ENV,
            max_workgroup_size=info["max_workgroup_size"], max_workgroups=info["max_workgroups"],
            max_buffer_bytes=info["max_storage_buffer_range"], shared_memory_bytes=info["shared_memory_bytes"],
            subgroup_size=exchange_lanes(info), float16={"shaderFloat16", "storageBuffer16BitAccess"} <= f,
            float64="shaderFloat64" in f, int64="shaderInt64" in f, cores=1,
            max_buffers=info["max_storage_buffers"],
            extra={"gpu": info["name"], "device_type": info["type"], "vulkan": ".".join(map(str, info["api"])),
                   "driver_version": info["driver_version"], "subgroup_operations": info["subgroup_operations"],
                   "max_workgroup_dims": info["max_workgroup_dims"], "features": sorted(f),
                   "timestamps": info["timestamp_bits"] > 0, "device_index": self.index})
        log.info("vulkan device %d: %s (%s, Vulkan %s)", self.index, info["name"], info["type"], self.caps.extra["vulkan"])

    def describe(self) -> str:
        return (f"spirv target ({SPIRV_TARGET_ENV}, no naga) on {self.info['name']} ({self.info['type']}, Vulkan "
                f"{self.caps.extra['vulkan']}, subgroup {self.caps.subgroup_size})")

    # --- errors ------------------------------------------------------------------------------------
    def _call(self, what: str, fn, *args):
        """fn(*args) through the bindings, with their VkError turned into poot's error."""
        if self._broken is not None:
            raise DeviceError(self._broken)
        try:
            return fn(*args)
        except self._vk.VkError as e:
            raise self._error(e, what) from None

    def _error(self, e, what: str) -> DeviceError:
        vk = self._vk
        kind = type(e).__name__
        if isinstance(e, (vk.VkErrorOutOfDeviceMemory, vk.VkErrorOutOfHostMemory)):
            return OutOfMemoryError(f"vulkan: out of memory {what} ({kind}); poot's pool keeps {self._pooled:,} "
                                    "bytes for reuse (trim() hands them back)")
        if isinstance(e, vk.VkErrorDeviceLost):
            self._broken = (f"vulkan: the device '{self.info['name']}' was lost {what} (a kernel faulted or ran too "
                            "long); Vulkan cannot recover it: only a new process can use this device again")
            return DeviceError(self._broken)
        return DeviceError(f"vulkan: {what} failed ({kind})")

    def _result_error(self, result: int, what: str) -> DeviceError:
        """poot's error for a VkResult a direct call through the cffi library returned."""
        exc = getattr(self._vk, "exception_codes", {}).get(result)
        if isinstance(exc, type) and issubclass(exc, self._vk.VkError):
            return self._error(exc(), what)
        return DeviceError(f"vulkan: {what} failed (VkResult {result})")

    def _memory_type(self, flags: int, fallback: int | None = None) -> list[int]:
        """Memory type indices having `flags` (else `fallback`), best first."""
        types = self.info["memory_types"]
        found = [i for i, (f, _) in enumerate(types) if f & flags == flags]
        if not found and fallback is not None:
            return self._memory_type(fallback)
        if not found:
            raise DeviceError(f"vulkan: '{self.info['name']}' has no memory type with flags {flags:#x}")
        return found

    # --- the command stream ------------------------------------------------------------------------
    def _begin(self):
        """The pending command buffer, started on first use."""
        if self._cmd is None:
            vk = self._vk
            if self._broken is not None:
                raise DeviceError(self._broken)
            if self._spare_cmds:
                cmd = self._spare_cmds.pop()
                result = self._lib.vkResetCommandBuffer(cmd, 0)
                if result != 0:
                    raise self._result_error(result, "resetting a command buffer")
            else:
                cmd = self._call("allocating a command buffer", vk.vkAllocateCommandBuffers, self._dev,
                                 vk.VkCommandBufferAllocateInfo(commandPool=self._command_pool, commandBufferCount=1,
                                                                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY))[0]
            result = self._lib.vkBeginCommandBuffer(cmd, self._begin_info)
            if result != 0:
                self._spare_cmds.append(cmd)
                raise self._result_error(result, "beginning a command buffer")
            self._cmd = cmd
        return self._cmd

    def order(self, cmd) -> None:
        """A full memory barrier: what follows in `cmd` sees every earlier command's writes (earlier
        submissions included), and the host sees them once the submission's fence signals."""
        self._lib.vkCmdPipelineBarrier(cmd, self._all_stages, self._all_stages | self._vk.VK_PIPELINE_STAGE_HOST_BIT,
                                       0, 1, self._barrier, 0, self._ffi.NULL, 0, self._ffi.NULL)

    def _fence(self):
        if self._spare_fences:
            return self._spare_fences.pop()
        return self._call("creating a fence", self._vk.vkCreateFence, self._dev, self._vk.VkFenceCreateInfo(), None)

    def submit(self, cmd, chunks=(), timings=(), spare: bool = False) -> None:
        """Submit the ended command buffer `cmd` with a fence; `spare` returns it to the pool when done.
        (Straight through the cffi library, with a VkSubmitInfo built once: this runs once per replay.)"""
        in_flight, lib, dev = self._in_flight, self._lib, self._dev
        while in_flight and (len(in_flight) >= MAX_IN_FLIGHT
                             or lib.vkGetFenceStatus(dev, in_flight[0][0]) == 0):   # VK_SUCCESS
            self._retire_oldest()
        if self._broken is not None:
            raise DeviceError(self._broken)
        fence = self._fence()
        self._submit_cmds[0] = cmd
        result = lib.vkQueueSubmit(self._queue, 1, self._submit_info, fence)
        if result != 0:                   # a failed submit leaves what it names untouched: reuse it all
            self._spare_fences.append(fence)
            if spare:
                self._spare_cmds.append(cmd)
            for c in chunks:
                c.used = 0
                self._free_chunks[c.download].append(c)
            raise self._result_error(result, "submitting work")
        in_flight.append((fence, cmd if spare else None, list(chunks) if chunks else (),
                          list(timings) if timings else ()))

    def _flush(self) -> None:
        if self._cmd is None:
            return
        cmd, self._cmd = self._cmd, None
        self.order(cmd)
        result = self._lib.vkEndCommandBuffer(cmd)
        if result != 0:
            raise self._result_error(result, "ending a command buffer")
        chunks, timings = self._cmd_chunks, self._cmd_timings
        self._cmd_chunks, self._cmd_timings, self._cmd_count, self._upload_chunk = [], [], 0, None
        self.submit(cmd, chunks, timings, spare=True)
        if timings:                      # the queries are reused by the next command buffer
            self._wait_all()

    def _retire_oldest(self) -> None:
        if self._broken is not None:
            raise DeviceError(self._broken)
        fence, cmd, chunks, timings = self._in_flight[0]
        lib, slot = self._lib, self._fence_slot
        slot[0] = fence
        if self._spin_wait:
            self._poll(fence)
        result = lib.vkWaitForFences(self._dev, 1, slot, 1, 2**63 - 1)      # VK_TRUE, no timeout
        if result != 0:
            raise self._result_error(result, "waiting for the GPU")
        self._in_flight.popleft()
        reset = lib.vkResetFences(self._dev, 1, slot)
        if reset == 0:                    # else (out of memory) the fence is dropped, not reused
            self._spare_fences.append(fence)
        if cmd is not None:
            self._spare_cmds.append(cmd)
        for c in chunks:
            c.used = 0
            self._free_chunks[c.download].append(c)
        if timings:
            self._read_timings(timings)
        if reset != 0:
            raise self._result_error(reset, "resetting a fence")

    def _poll(self, fence) -> None:
        """Poll `fence` until it signals or SPIN_WAIT_S pass (the blocking wait that follows returns at
        once, or takes over a long wait)."""
        lib, dev = self._lib, self._dev
        deadline = time.perf_counter() + SPIN_WAIT_S
        while lib.vkGetFenceStatus(dev, fence) == 1 and time.perf_counter() < deadline:     # VK_NOT_READY
            pass

    def _wait_all(self, destroy: bool = True) -> None:
        self._flush()
        while self._in_flight:
            self._retire_oldest()
        if self._retired:                    # replay variants evicted while they could still be queued
            for rec, variant in self._retired:
                rec._drop(variant)
            self._retired.clear()
        if destroy and self._graveyard:      # cached sets and recorded variants may name what goes
            self._reset_sets()
            keys = {a.key for a in self._graveyard}
            for rec in list(self._recordings):
                rec.forget(keys)
            for alloc in self._graveyard:
                self._destroy(alloc)
            self._graveyard.clear()

    @_locked
    def flush(self) -> None:
        """Submit the pending command buffer without waiting."""
        self._flush()

    @_locked
    def synchronize(self) -> None:
        """Wait for all submitted work (traps are read by poot.jit from the trap buffer)."""
        self._no_recording("synchronize")
        self._wait_all()

    def _count(self) -> None:
        self._cmd_count += 1
        if self._cmd_count >= MAX_PENDING:
            self._flush()

    # --- programs ----------------------------------------------------------------------------------
    def _layout(self, n: int) -> tuple:
        """(descriptor set layout, pipeline layout) for `n` storage buffers at set 0, bindings 0..n-1."""
        hit = self._layouts.get(n)
        if hit is None:
            limit = self.caps.max_buffers
            if n > limit:
                raise DeviceError(f"vulkan: a kernel with {n} buffers (meta and trap included) exceeds "
                                  f"'{self.info['name']}''s {limit} storage buffers per shader stage")
            vk = self._vk
            bindings = [vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                        descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                        for i in range(n)]
            dsl = self._call("creating a descriptor set layout", vk.vkCreateDescriptorSetLayout, self._dev,
                             vk.VkDescriptorSetLayoutCreateInfo(pBindings=bindings), None)
            pl = self._call("creating a pipeline layout", vk.vkCreatePipelineLayout, self._dev,
                            vk.VkPipelineLayoutCreateInfo(pSetLayouts=[dsl]), None)
            hit = self._layouts[n] = (dsl, pl)
        return hit

    @_locked
    def load(self, artifact) -> VulkanProgram:
        """A program from SPIR-V bytes or an artifact with `.data` (SPIR-V) and `.entry`/`.name`
        (poot.jit.llvm.compile's, for target "spirv" with arch "vulkan1.3"). Cached by content."""
        data = artifact if isinstance(artifact, (bytes, bytearray, memoryview)) else getattr(artifact, "data", None)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise DeviceError(f"vulkan: cannot load {type(artifact).__name__}: expected SPIR-V bytes")
        data = bytes(data)
        entry = getattr(artifact, "entry", None) or "main"
        name = getattr(artifact, "name", None) or entry
        key = (hashlib.sha256(data).digest(), entry)
        hit = self._programs.get(key)
        if hit is not None:
            return hit
        try:
            caps = spirv_capabilities(data)
        except DeviceError:
            raise DeviceError(f"vulkan: the program of kernel '{name}' is not a SPIR-V module") from None
        for cap in sorted(caps):
            if cap in CAPABILITY_FEATURES and CAPABILITY_FEATURES[cap][0] not in self.features:
                feature, what = CAPABILITY_FEATURES[cap]
                raise DTypeError(f"vulkan: kernel '{name}' uses {what}, which needs the device feature '{feature}'; "
                                 f"'{self.info['name']}' does not have it (use another dtype or device)")
        kernel = getattr(artifact, "kernel", None)
        if SUBGROUP_SHUFFLE in caps:
            span = kernel.lane_span if kernel is not None else 32
            if span > self.caps.subgroup_size:
                raise NotBuiltError(f"vulkan: kernel '{name}' exchanges values across {span} lanes of a subgroup "
                                    f"(pt.shuffle, pt.shuffle_xor, pt.subgroup_sum...); the subgroups of "
                                    f"'{self.info['name']}' hold {self.caps.subgroup_size} lane(s) that exchange: "
                                    "run it on a device with 32-lane subgroups (CUDA, or Vulkan on such a GPU)")
        n = len(kernel.buffers) + 2 if kernel is not None else spirv_bindings(data)
        dsl, pl = self._layout(n)
        vk = self._vk
        module = self._call(f"creating the shader module of kernel '{name}'", vk.vkCreateShaderModule, self._dev,
                            vk.VkShaderModuleCreateInfo(codeSize=len(data), pCode=data), None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry)
        pipeline = self._call(f"building the pipeline of kernel '{name}'", vk.vkCreateComputePipelines, self._dev,
                              self._pipeline_cache, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)[0]
        self._new_pipelines += 1
        folds = getattr(artifact, "folds_grid", getattr(artifact, "target", None) == self.caps.target)
        program = self._programs[key] = VulkanProgram(name, entry, module, pipeline, pl, dsl, n, bool(folds))
        return program

    def descriptor_set(self, program: VulkanProgram, buffers, pool=None):
        """A descriptor set naming `buffers` for `program`: cached by buffer when `pool` is None, else
        allocated from `pool` (a recording's own)."""
        cached = pool is None
        if cached:
            key = tuple(b.handle.key for b in buffers)
            hit = self._sets.get(key)
            if hit is not None:
                return hit
            if len(self._sets) >= MAX_CACHED_SETS:
                self._reset_sets()
            if not self._set_pools:
                self._set_pools.append(self.descriptor_pool(SETS_PER_POOL))
            pool = self._set_pools[-1]
        vk = self._vk
        alloc = vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, pSetLayouts=[program.set_layout])
        try:
            ds = vk.vkAllocateDescriptorSets(self._dev, alloc)[0]
        except (vk.VkErrorOutOfPoolMemory, vk.VkErrorFragmentedPool, KeyError) as e:
            if isinstance(e, KeyError) and e.args[0] not in POOL_FULL_RESULTS:
                raise
            if not cached:
                raise DeviceError("vulkan: a recording's descriptor pool is full") from None
            self._set_pools.append(self.descriptor_pool(SETS_PER_POOL))
            return self.descriptor_set(program, buffers)
        writes = [vk.VkWriteDescriptorSet(dstSet=ds, dstBinding=i, descriptorCount=1,
                                          descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=b.handle.buffer, offset=0,
                                                                                 range=WHOLE)])
                  for i, b in enumerate(buffers)]
        vk.vkUpdateDescriptorSets(self._dev, len(writes), writes, 0, None)
        if cached:
            self._sets[key] = ds
        return ds

    def descriptor_pool(self, sets: int, buffers: int | None = None):
        """A descriptor pool for `sets` sets of storage buffers (`buffers` in all; default 8 per set)."""
        vk = self._vk
        size = vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=buffers or 8 * sets)
        return self._call("creating a descriptor pool", vk.vkCreateDescriptorPool, self._dev,
                          vk.VkDescriptorPoolCreateInfo(maxSets=sets, pPoolSizes=[size]), None)

    def _reset_sets(self) -> None:
        """Drop the cached descriptor sets (the queue must finish with them first)."""
        self._wait_all(destroy=False)
        for pool in self._set_pools:
            self._vk.vkDestroyDescriptorPool(self._dev, pool, None)
        self._set_pools.clear()
        self._sets.clear()

    @_locked
    def dispatch(self, program: VulkanProgram, buffers: list[Buffer], grid) -> None:
        """Run `program` over `grid` workgroups with `buffers` (the kernel's, then meta and trap)."""
        if type(program) is not VulkanProgram:
            raise DeviceError(f"vulkan: {program!r} is not a program loaded on this device")
        if len(buffers) != program.nbindings:
            raise DeviceError(f"vulkan: kernel '{program.name}' takes {program.nbindings} buffers (its own, meta and "
                              f"trap), got {len(buffers)}")
        for b in buffers:
            if b.device is not self or b.handle is None:
                self._check(b)
        physical = dispatch_grid("vulkan", program, grid, self.info["max_workgroups"])
        if self._recording is not None:
            if math.prod(physical):
                self._recording.add(program, buffers, physical)
            return
        if math.prod(physical) == 0:
            return
        ds = self.descriptor_set(program, buffers)
        cmd = self._begin()
        timed = _debug() >= 1 and self.caps.extra["timestamps"]
        if timed:
            first = self._timestamp_pair(cmd)
            self._cmd_timings.append((program.name, tuple(grid), first))
        self.record_dispatch(cmd, program, ds, physical)
        if timed:
            self._lib.vkCmdWriteTimestamp(cmd, self._vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self._queries, first + 1)
        self._count()

    def record_dispatch(self, cmd, program: VulkanProgram, ds, grid) -> None:
        lib, vk = self._lib, self._vk
        self.order(cmd)
        lib.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, program.pipeline)
        self._set_slot[0] = ds
        lib.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, program.layout, 0, 1,
                                    self._set_slot, 0, self._ffi.NULL)
        lib.vkCmdDispatch(cmd, *grid)

    # --- timestamps (POOT_DEBUG >= 1) --------------------------------------------------------------
    def _timestamp_pair(self, cmd) -> int:
        vk = self._vk
        if self._queries is None:
            self._queries = self._call("creating a timestamp query pool", vk.vkCreateQueryPool, self._dev,
                                       vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP,
                                                                queryCount=2 * MAX_PENDING), None)
        first = 2 * len(self._cmd_timings)
        self._lib.vkCmdResetQueryPool(cmd, self._queries, first, 2)
        self._lib.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, self._queries, first)
        return first

    def _read_timings(self, timings) -> None:
        vk = self._vk
        raw = self._ffi.new("uint64_t[2]")
        mask = (1 << self.info["timestamp_bits"]) - 1 if self.info["timestamp_bits"] < 64 else WHOLE
        for name, grid, first in timings:
            self._call("reading timestamps", vk.vkGetQueryPoolResults, self._dev, self._queries, first, 2, 16, raw, 8,
                       vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT)
            us = ((raw[1] - raw[0]) & mask) * self.info["timestamp_period_ns"] / 1e3
            self.kernel_times.append((name, grid, us))
            print(f"poot vulkan: {name} grid={grid} {us:.1f} us GPU time", file=sys.stderr, flush=True)
        del self.kernel_times[:-4096]

    # --- record / replay (vulkan_replay.py) --------------------------------------------------------
    def record(self):
        """`with dev.record() as rec:` captures dispatches and copies; `rec.replay(rebind)` runs them."""
        from poot.devices.vulkan_replay import VulkanRecording

        return VulkanRecording(self)

    def replay(self, recording, rebind=None) -> None:
        recording.replay(rebind)

    @_locked
    def save_pipeline_cache(self) -> str | None:
        """Write the pipeline cache to disk now (it is at exit); the path, or None when off or failed."""
        if self._cache_path is None or self._broken is not None:
            return None
        path = save_pipeline_cache(self._vk, self._dev, self._pipeline_cache, self._cache_path)
        if path:
            self._new_pipelines = 0
        return path

    def _at_exit(self) -> None:
        try:
            if self._broken is None:
                self._wait_all()
            if self._new_pipelines:
                self.save_pipeline_cache()
        except Exception as e:           # at exit: log, never raise
            log.warning("vulkan: at exit: %s", e)


__all__ = ["VulkanDevice", "VulkanProgram", "spirv_bindings", "SPIRV_TARGET_ENV"]
