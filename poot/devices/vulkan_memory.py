"""Memory of the raw Vulkan device (poot/devices/vulkan.py): buffers and host transfers.

Each Buffer owns a device-local VkBuffer and its memory. Freed buffers (and garbage-collected ones)
go to a pool by size class and are reused: a queued command that still uses a dropped buffer stays
correct, because every command is ordered after the ones before it (VulkanDevice.order), and nothing
is destroyed before the queue is idle (trim). Host transfers go through host-visible staging chunks
(STAGE_BYTES each, a ring of STAGES per direction): a write copies into a chunk and records a buffer
copy; a read records copies into chunks, waits, and copies out.
"""
from __future__ import annotations

import ctypes
import functools
import gc
import weakref

import numpy as np

from poot.errors import DeviceError, OutOfMemoryError
from poot.devices.base import Buffer

STAGE_BYTES = 8 << 20             # one staging chunk
STAGES = 4                        # chunks of one direction in flight before a transfer waits for the oldest


def size_class(n: int) -> int:
    """Allocation size for `n` bytes: a multiple of 256, and of 1/8 of n's power of two (<= 12.5% spare)."""
    n = max(n, 4)
    step = max(256, 1 << max(0, n.bit_length() - 4))
    return -(-n // step) * step


def _locked(method):
    """One thread at a time in the device: Vulkan command buffers and pools are not thread-safe."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return run


class _Allocation:
    __slots__ = ("buffer", "memory", "size", "key")

    def __init__(self, buffer, memory, size, key):
        self.buffer, self.memory, self.size, self.key = buffer, memory, size, key


class _Chunk:
    """Host-visible staging memory, mapped once; `download` chunks are read by the host."""
    __slots__ = ("alloc", "mapped", "address", "used", "download")

    def __init__(self, alloc, mapped, address, download):
        self.alloc, self.mapped, self.address, self.used, self.download = alloc, mapped, address, 0, download


class VulkanMemory:
    """Allocation, the pool and staged transfers; mixed into VulkanDevice, which provides the command
    stream (_begin, _flush, _wait_all, _retire_oldest, order) and the Vulkan handles."""

    # --- memory ------------------------------------------------------------------------------------
    def _create(self, size: int, usage: int, types: list[int]) -> _Allocation:
        vk = self._vk
        buf = self._call("creating a buffer", vk.vkCreateBuffer, self._dev, vk.VkBufferCreateInfo(
            size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
        req = vk.vkGetBufferMemoryRequirements(self._dev, buf)
        index = next((i for i in types if req.memoryTypeBits >> i & 1), None)
        if index is None:
            vk.vkDestroyBuffer(self._dev, buf, None)
            raise DeviceError(f"vulkan: no memory type of '{self.info['name']}' can hold a buffer")
        try:
            mem = vk.vkAllocateMemory(self._dev, vk.VkMemoryAllocateInfo(allocationSize=req.size,
                                                                         memoryTypeIndex=index), None)
        except vk.VkError:
            vk.vkDestroyBuffer(self._dev, buf, None)
            raise
        vk.vkBindBufferMemory(self._dev, buf, mem, 0)
        return _Allocation(buf, mem, size, int(self._ffi.cast("uintptr_t", buf)))

    def _destroy(self, alloc: _Allocation) -> None:
        self._vk.vkDestroyBuffer(self._dev, alloc.buffer, None)
        self._vk.vkFreeMemory(self._dev, alloc.memory, None)

    @_locked
    def allocate(self, nbytes: int) -> Buffer:
        nbytes = int(nbytes)
        while self._returned:
            self._pool_allocation(self._returned.popleft())
        if nbytes < 0:
            raise DeviceError(f"vulkan: cannot allocate {nbytes} bytes")
        limit = self.caps.max_buffer_bytes
        if nbytes > limit:
            raise DeviceError(f"vulkan: an array of {nbytes:,} bytes is larger than '{self.info['name']}' binds to one "
                              f"kernel (maxStorageBufferRange: {limit:,} bytes); use smaller arrays or another device")
        size = size_class(nbytes)
        free = self._pools.get(size)
        if free:
            alloc = free.pop()
            self._pooled -= size
        else:
            vk = self._vk
            usage = (vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                     | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
            self.fresh_allocations += 1
            try:
                alloc = self._create(size, usage, self._local)
            except (OutOfMemoryError, vk.VkError):
                gc.collect()
                self.trim()
                try:
                    alloc = self._create(size, usage, self._local)
                except vk.VkError as e:
                    raise self._error(e, f"allocating {nbytes:,} bytes") from None
        buf = Buffer(self, nbytes, alloc)
        fin = self._finalizers[alloc.key] = weakref.finalize(buf, self._recycle, alloc)
        fin.atexit = False
        return buf

    @_locked
    def allocate_host_read(self, nbytes: int) -> Buffer:
        """A storage buffer in host-visible, coherent memory, mapped once (the trap word every host read
        checks): reading it after the wait for the work is a load, not a copy command and a second
        fence wait. Never pooled (it lives as long as the device). A device with no such memory type
        for storage buffers gives an ordinary buffer."""
        vk = self._vk
        size = size_class(int(nbytes))
        usage = (vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        try:
            alloc = self._create(size, usage, self._upload)
        except (DeviceError, vk.VkError):
            return self.allocate(nbytes)
        mapped = vk.vkMapMemory(self._dev, alloc.memory, 0, size, 0)
        self._host_reads[alloc.key] = (mapped, int(self._ffi.cast("uintptr_t", self._ffi.from_buffer(mapped))))
        return Buffer(self, int(nbytes), alloc)

    def _recycle(self, alloc: _Allocation) -> None:
        """A Buffer's finalizer, on whatever thread collected it: queue the allocation for the pool."""
        self._returned.append(alloc)

    def _pool_allocation(self, alloc: _Allocation) -> None:
        self._finalizers.pop(alloc.key, None)
        self._pools.setdefault(alloc.size, []).append(alloc)
        self._pooled += alloc.size

    @_locked
    def free(self, buf: Buffer) -> None:
        """Give `buf`'s memory back to the pool now (it is reused only by commands queued after this)."""
        self._check(buf)
        fin = self._finalizers.get(buf.handle.key)
        buf.handle = None
        if fin is not None:
            fin()

    @_locked
    def trim(self) -> None:
        """Hand the pool's free allocations back to the driver (after the queue is idle)."""
        while self._returned:
            self._pool_allocation(self._returned.popleft())
        self._graveyard += [a for allocs in self._pools.values() for a in allocs]
        self._pools.clear()
        self._pooled = 0
        self._wait_all()

    # --- staging and transfers ---------------------------------------------------------------------
    def _chunk(self, download: bool) -> _Chunk:
        """A free staging chunk; waits for the oldest submission when the ring is used up."""
        free = self._free_chunks[download]
        while not free and self._chunks_made[download] >= STAGES and self._in_flight:
            self._retire_oldest()
        if free:
            return free.pop()
        if self._chunks_made[download] >= STAGES:      # all chunks in the pending command buffer
            self._flush()
            return self._chunk(download)
        vk = self._vk
        usage = vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        alloc = self._create(STAGE_BYTES, usage, self._download if download else self._upload)
        mapped = vk.vkMapMemory(self._dev, alloc.memory, 0, STAGE_BYTES, 0)
        self._chunks_made[download] += 1
        return _Chunk(alloc, mapped, int(self._ffi.cast("uintptr_t", self._ffi.from_buffer(mapped))), download)

    def _copy_region(self, cmd, src, src_offset: int, dst, dst_offset: int, n: int) -> None:
        self.order(cmd)
        region = self._region                # recorded by the call: one struct serves every copy
        region.srcOffset, region.dstOffset, region.size = src_offset, dst_offset, n
        self._lib.vkCmdCopyBuffer(cmd, src, dst, 1, region)

    @_locked
    def write(self, buf: Buffer, data) -> None:
        self._check(buf)
        self._no_recording("a host-to-device write")
        if isinstance(data, (bytes, bytearray, memoryview)):
            src = np.frombuffer(data, dtype=np.uint8)
        else:
            src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        n = src.nbytes
        if n > buf.nbytes:
            raise DeviceError(f"vulkan: writing {n:,} bytes into a buffer of {buf.nbytes:,}")
        address = src.ctypes.data
        for off in range(0, n, STAGE_BYTES):
            m = min(STAGE_BYTES, n - off)
            chunk = self._upload_chunk
            if chunk is None or chunk.used + m > STAGE_BYTES:
                chunk = self._upload_chunk = self._chunk(download=False)
                self._cmd_chunks.append(chunk)
            start = chunk.used
            chunk.used = (start + m + 15) & ~15
            ctypes.memmove(chunk.address + start, address + off, m)
            self._copy_region(self._begin(), chunk.alloc.buffer, start, buf.handle.buffer, off, m)
            self._count()

    @_locked
    def read(self, buf: Buffer) -> np.ndarray:
        self._check(buf)
        self._no_recording("a device-to-host read")
        out = np.empty(buf.nbytes, dtype=np.uint8)
        mapped = self._host_reads.get(buf.handle.key) if self._host_reads else None
        if mapped is not None:           # the wait makes the kernels' writes visible: then a load
            self._wait_all()
            ctypes.memmove(out.ctypes.data, mapped[1], buf.nbytes)
            out.flags.writeable = False
            return out
        pieces = []
        for off in range(0, buf.nbytes, STAGE_BYTES):
            m = min(STAGE_BYTES, buf.nbytes - off)
            if len(pieces) == STAGES:
                self._drain(pieces, out)
            chunk = self._chunk(download=True)
            self._copy_region(self._begin(), buf.handle.buffer, off, chunk.alloc.buffer, 0, m)
            self._cmd_chunks.append(chunk)
            pieces.append((chunk, off, m))
        self._drain(pieces, out)
        out.flags.writeable = False              # like the other devices: results are read-only views
        return out

    def _drain(self, pieces: list, out: np.ndarray) -> None:
        """Wait for the pending copies into `pieces`, then copy them out (the chunks go back at the wait)."""
        self._wait_all()
        for chunk, off, m in pieces:
            ctypes.memmove(out.ctypes.data + off, chunk.address, m)
        pieces.clear()

    @_locked
    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        nbytes = self._copy_bytes(dst, src, nbytes)
        if self._recording is not None:
            if nbytes:
                self._recording.add(None, [src, dst], (nbytes, 0, 0))
            return
        if nbytes:
            self._copy_region(self._begin(), src.handle.buffer, 0, dst.handle.buffer, 0, nbytes)
            self._count()


__all__ = ["VulkanMemory", "STAGE_BYTES", "STAGES"]
