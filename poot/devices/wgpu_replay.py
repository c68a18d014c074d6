"""Record/replay for the wgpu device (its `record()` and `replay()` call these).

A WebGPU command buffer can be submitted once, so a recording is not a command buffer.
Recording validates every dispatch and copy, builds its pipelines and bind groups and keeps them with
the physical grids, running nothing; a replay encodes all of it into one new encoder (one compute pass
per run of dispatches) and submits once. What is saved is every per-launch Python-side cost except the
encoding itself; buffer contents are read at replay time, so rewriting a metadata buffer between
replays changes what the next replay computes. `replay(rec, {recorded: replacement})` swaps buffers for
one replay (as the CUDA device's does): the dispatches that use them get the (cached) bind group of
the new buffer set. Host transfers and synchronize are refused while recording.

A replay on the native command stream (wgpu_native.py) runs a plan of raw handles kept on the recording
per set of replacement buffers (a steady loop's pooled buffers repeat, so it settles on a few), dropped
when the device's trim() destroys pooled buffers; without it, the replay encodes through wgpu-py's
public API.
"""
from __future__ import annotations

import math

from poot.errors import DeviceError
from poot.devices import base
from poot.devices.base import Buffer
from poot.devices.wgpu_native import COPY, DISPATCH

MAX_PLANS = 16                       # native replay plans kept per recording (sets of replacement buffers)


class Recording(base.Recording):
    """Dispatches and copies captured by `WgpuDevice.record()`, replayed by `WgpuDevice.replay()`."""

    def __init__(self, device):
        super().__init__(device)               # commands: ("dispatch", pipeline, bind group, grid) | ("copy", ...)
        self.buffers: list[Buffer] = []        # kept alive and checked at replay
        self.trap_programs: list = []             # the WgpuPrograms recorded that check traps
        self.plans: dict[tuple, list] = {}     # the native steps per set of replacement buffers
        self.epoch = -1                        # the device's trim epoch the plans belong to

    def finish(self) -> None:
        self.buffers = list(dict.fromkeys(self.buffers))     # each once: replay checks them


def _commands(dev, recording: Recording, rebind: dict):
    """The recording's commands with `rebind`'s buffers in place, as both replays encode them:
    ("dispatch", pipeline, bind group, grid) -- empty grids left out, a dispatch using a replaced buffer
    given the (cached) bind group of its new buffers -- and ("copy", source, destination, bytes) with
    wgpu buffers."""
    for cmd in recording.commands:
        if cmd[0] == "dispatch":
            _, pipeline, group, grid, bufs = cmd
            if math.prod(grid) == 0:
                continue
            if rebind and any(b in rebind for b in bufs):
                group = dev._bind_group([rebind.get(b, b) for b in bufs])
            yield "dispatch", pipeline, group, grid
        else:
            _, src, dst, n = cmd
            yield "copy", rebind.get(src, src).handle, rebind.get(dst, dst).handle, n


def native_steps(dev, recording: Recording, rebind: dict) -> list:
    """The native steps of `recording` with `rebind`'s buffers (wgpu_native.py), cached on the recording
    by the identity of the replacements' wgpu buffers. A wgpu buffer lives (in a Buffer or in the pool)
    until trim() destroys it, which starts a new epoch: until then its id names it alone."""
    if recording.epoch != dev._epoch:
        recording.plans.clear()
        recording.epoch = dev._epoch
    key = (tuple(map(id, rebind)), tuple([id(b.handle) for b in rebind.values()])) if rebind else ()
    steps = recording.plans.get(key)
    if steps is None:
        handle = dev._native.handle
        steps = []
        for kind, a, b, c in _commands(dev, recording, rebind):
            if kind == "dispatch":
                steps.append((DISPATCH, handle(a), handle(b), *c, (a, b)))
            else:
                steps.append((COPY, handle(a), handle(b), c, (a, b)))
        if len(recording.plans) >= MAX_PLANS:
            recording.plans.clear()
        recording.plans[key] = steps
    return steps


def encode_replay(dev, recording: Recording, rebind: dict) -> None:
    """The replay through wgpu-py's public API (where the native calls are unavailable)."""
    encoder, cpass = dev._dev.create_command_encoder(), None
    for kind, a, b, c in _commands(dev, recording, rebind):
        if kind == "dispatch":
            if cpass is None:
                cpass = encoder.begin_compute_pass()
            cpass.set_pipeline(a)
            cpass.set_bind_group(0, b)
            cpass.dispatch_workgroups(*c)
        else:
            if cpass is not None:
                cpass.end()
                cpass = None
            encoder.copy_buffer_to_buffer(a, 0, b, 0, c)
    if cpass is not None:
        cpass.end()
    try:
        dev._queue.submit([encoder.finish()])
    except dev._wgpu.GPUError as e:
        raise DeviceError(f"wgpu: submitting a replay failed: {e}") from None


__all__ = ["Recording", "native_steps", "encode_replay", "MAX_PLANS"]
