"""Record/replay for the raw Vulkan device (API: poot/devices/vulkan.py; the same as the CUDA device's):

    with dev.record() as rec:              # dispatches and device-to-device copies are captured, not run
        dev.dispatch(prog, [x, tmp, meta0, trap], groups)
    rec.replay()                           # one vkQueueSubmit of a command buffer recorded once
    rec.replay({x: x2, out: out2})         # with buffers replaced for this replay

A Vulkan command buffer names its buffers through descriptor sets, and a set bound in a recorded
command buffer cannot be rewritten (on lavapipe: no update-after-bind). So a recording keeps one
command buffer per set of buffers it has run with -- a variant, with its own descriptor sets -- and a
replay with buffers it has seen before resubmits that command buffer as it is (recorded with
SIMULTANEOUS_USE: it may be queued again while it runs). A set met for the first time is not recorded:
its commands join the device's pending command buffer as eager dispatches do (a loop that keeps every
call's fresh results meets a new set each call, and recording a variant costs more than dispatching);
it gets a variant when it comes back. A program that hands each call fresh buffers from the device's
pool and drops them cycles through a few handles, so a loop settles on a few variants; at most
MAX_VARIANTS are kept (least recently used goes, freed at the device's next wait). Commands inside a
variant are separated by the device's full memory barrier, and a variant starts with one, so it is
ordered with everything queued before it. Host transfers and synchronize are refused while recording;
a recording keeps its buffers alive, and replaying one whose buffer was freed is refused.
"""
from __future__ import annotations

import collections

from poot.errors import DeviceError
from poot.devices import base
from poot.devices.vulkan_memory import size_class

MAX_VARIANTS = 8
MAX_RETIRED = 64      # evicted variants a device keeps until its next wait before it waits for them


class _Variant:
    __slots__ = ("cmd", "pool", "keys")

    def __init__(self, cmd, pool, keys):
        self.cmd, self.pool, self.keys = cmd, pool, keys


class VulkanRecording(base.Recording):
    def __init__(self, device):
        super().__init__(device)      # commands: (program or None for a copy, buffers, grid or (nbytes, 0, 0))
        self.buffers: list = []                 # every buffer used, once, in first-use order
        self._seen: set[int] = set()
        self.variants: collections.OrderedDict = collections.OrderedDict()
        self._sighted: collections.OrderedDict = collections.OrderedDict()   # buffer sets met once, no variant

    def add(self, program, buffers, grid) -> None:
        for b in buffers:
            if id(b) not in self._seen:
                self._seen.add(id(b))
                self.buffers.append(b)
        self.commands.append((program, tuple(buffers), tuple(grid)))

    def finish(self) -> None:
        with self.device._lock:
            self._variant({}, self._key({}))    # recorded now, once: the first replay only submits it

    def __repr__(self) -> str:
        return f"<vulkan recording of {len(self.commands)} commands, {len(self.variants)} variants>"

    def _key(self, rebind: dict) -> tuple:
        """The allocations a replay with `rebind` names, in the order of `buffers`: its variant's key."""
        return tuple((rebind.get(b) or b).handle.key for b in self.buffers)

    def _variant(self, rebind: dict, key: tuple) -> _Variant:
        hit = self.variants.get(key)
        if hit is not None:
            self.variants.move_to_end(key)
            return hit
        dev = self.device
        if len(self.variants) >= MAX_VARIANTS:
            # the oldest variant may still be queued: it is freed at the device's next wait, which comes
            # at once only when MAX_RETIRED wait already (a loop keeping each call's fresh results makes
            # a variant a call; waiting here made every such call wait for the GPU)
            dev._retired.append((self, self.variants.popitem(last=False)[1]))
            if len(dev._retired) > MAX_RETIRED:
                dev._wait_all()
        vk = dev._vk
        dispatches = [c for c in self.commands if c[0] is not None]
        pool = dev.descriptor_pool(max(1, len(dispatches)), sum(len(c[1]) for c in dispatches) or 1)
        cmd = dev._call("allocating a command buffer", vk.vkAllocateCommandBuffers, dev._dev, vk.VkCommandBufferAllocateInfo(
            commandPool=dev._command_pool, commandBufferCount=1, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY))[0]
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT))
        sets: dict[tuple, object] = {}
        for program, buffers, grid in self.commands:
            bufs = [rebind.get(b) or b for b in buffers]
            if program is None:
                dev._copy_region(cmd, bufs[0].handle.buffer, 0, bufs[1].handle.buffer, 0, grid[0])
                continue
            skey = (id(program.set_layout),) + tuple(b.handle.key for b in bufs)
            if skey not in sets:
                sets[skey] = dev.descriptor_set(program, bufs, pool=pool)
            dev.record_dispatch(cmd, program, sets[skey], grid)
        dev.order(cmd)
        dev._call("ending a command buffer", vk.vkEndCommandBuffer, cmd)
        variant = self.variants[key] = _Variant(cmd, pool, frozenset(key))
        dev._recordings.add(self)
        return variant

    def _drop(self, variant: _Variant) -> None:
        """Free a variant's command buffer and sets (the queue must be done with it)."""
        dev, vk = self.device, self.device._vk
        vk.vkFreeCommandBuffers(dev._dev, dev._command_pool, 1, [variant.cmd])
        vk.vkDestroyDescriptorPool(dev._dev, variant.pool, None)

    def forget(self, keys: set) -> None:
        """Drop the variants naming buffers about to be destroyed (the device calls this when idle)."""
        for key in [k for k, v in self.variants.items() if v.keys & keys]:
            self._drop(self.variants.pop(key))

    def replay(self, rebind=None) -> None:
        with self.device._lock:
            self._replay(rebind or {})

    def _replay(self, rebind: dict) -> None:
        dev = self.device
        if not self.closed:
            raise DeviceError("vulkan: replay of a recording that is still open")
        dev._no_recording("a replay")
        if not self.commands:
            return
        for old, new in rebind.items():
            if id(old) not in self._seen:
                raise DeviceError(f"vulkan: {old!r} is not a buffer of this recording")
            dev._check(new)
            if new.nbytes < old.nbytes and size_class(new.nbytes) < size_class(old.nbytes):   # pooled sizes
                raise DeviceError(f"vulkan: a replay replaces a buffer of {old.nbytes:,} bytes by one of "
                                  f"{new.nbytes:,}; the recorded kernels need at least the recorded size")
        for b in self.buffers:
            if b.handle is None and b not in rebind:
                raise DeviceError(f"vulkan: the recording uses {b!r}, which was freed")
        key = self._key(rebind)
        if key not in self.variants and key not in self._sighted:
            # a set of buffers met for the first time (a call's fresh results, kept by the caller, are
            # new each call): its commands join the device's pending command buffer as eager dispatches
            # do; recording a variant for it (a command buffer and its descriptor sets) costs more than
            # that, and pays off only when the set comes back
            self._sighted[key] = None
            if len(self._sighted) > MAX_VARIANTS:
                self._sighted.popitem(last=False)
            for program, buffers, grid in self.commands:
                bufs = [rebind.get(b) or b for b in buffers]
                if program is None:
                    dev.copy(bufs[1], bufs[0], grid[0])
                else:
                    dev.dispatch(program, bufs, grid)
            return
        variant = self._variant(rebind, key)
        dev._flush()                            # work queued before the replay runs before it
        dev.submit(variant.cmd)
