"""The wgpu device's command stream on wgpu-native's C functions, called directly through the cffi library
wgpu-py has loaded: the calls that encode and submit work (replays, eager dispatches and copies) and
the mapping of a staging buffer for a read (polled on the reading thread).

wgpu-py wraps every native call (an error-capturing proxy per call, a descriptor struct built from
keyword arguments, a Python object per encoder, pass and command buffer, released by its finalizer):
about 4 us a call, eleven calls for a one-kernel replay. Here a replay is a list of prepared steps
holding the raw handles (pipelines, bind groups, buffers; wgpu-py's objects stay their owners, and the
steps keep them alive) and runs as plain cffi calls. The errors wgpu-native reports through the device's
uncaptured-error callback are captured around each group of calls (with wgpu-py's own error handler,
which its proxies use the same way) and raised as DeviceError (OutOfMemoryError for an out-of-memory
error); an encoder that failed is released without being submitted. (wgpu-native aborts the process on
an error inside wgpuQueueSubmit, e.g. a destroyed buffer, whichever way it is called: the device never
submits a bind group naming a buffer that trim() destroyed.)

Setup (buffers, shader modules, pipelines, bind groups, mapping) stays on wgpu-py's public API. This
reaches into wgpu-py's backend module (`wgpu.backends.wgpu_native._api`: `ffi`, `lib`, `error_handler`,
and the `_internal` handle of its objects), which is not public API: `NativeQueue.open` returns None when
any of it is missing, and the device then encodes through wgpu-py's public methods (as it does with
POOT_WGPU_NATIVE=0).
"""
from __future__ import annotations

import logging
import time

from poot.errors import DeviceError, OutOfMemoryError
from poot import env

log = logging.getLogger("poot.devices.wgpu")

DISPATCH, COPY = 0, 1             # step kinds: (DISPATCH, pipeline, bind group, x, y, z, owners)
                                  #             (COPY, source, destination, bytes, owners)
_CAPTURE = "poot wgpu commands"   # the error handler's slot name for a group of calls
_FUNCTIONS = ("wgpuDeviceCreateCommandEncoder", "wgpuCommandEncoderBeginComputePass",
              "wgpuComputePassEncoderSetPipeline", "wgpuComputePassEncoderSetBindGroup",
              "wgpuComputePassEncoderDispatchWorkgroups", "wgpuComputePassEncoderEnd",
              "wgpuComputePassEncoderRelease", "wgpuCommandEncoderCopyBufferToBuffer", "wgpuCommandEncoderFinish",
              "wgpuCommandEncoderRelease", "wgpuQueueSubmit", "wgpuCommandBufferRelease", "wgpuBufferMapAsync",
              "wgpuBufferGetConstMappedRange", "wgpuBufferUnmap", "wgpuDevicePoll", "WGPUMapAsyncStatus_Success",
              "WGPUMapMode_Read", "WGPUCallbackMode_AllowProcessEvents")
IDLE_POLLS = 100                  # polls of an idle queue a read waits for its mapping before giving up
SPIN_WAIT_S = 0.02                # a read on a GPU polls without blocking this long before blocking polls


class NativeQueue:
    """Encodes and submits work on one wgpu device's queue with direct native calls: whole replays
    (`run`), and a pending encoder of eager work (`dispatch`, `copy`, `submit_pending`). The caller
    serializes the calls (the device's lock)."""

    def __init__(self, api, device, queue):
        self._lib, self._errors, self._null = api.lib, api.error_handler, api.ffi.NULL
        self._device, self._queue = device._internal, queue._internal
        self._keep = (device, queue)             # the owners of the two handles
        self._buffers = api.ffi.new("WGPUCommandBuffer[1]")
        self.encoder = self.cpass = None         # the pending encoder of eager work and its open pass
        self._ffi = api.ffi
        self._mapped = None                      # the status of the mapping a read waits for
        self._on_mapped = api.ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
                                           self._mapped_callback)
        self._map_info = api.ffi.new("WGPUBufferMapCallbackInfo *", {
            "mode": api.lib.WGPUCallbackMode_AllowProcessEvents, "callback": self._on_mapped})
        self._map_message = api.from_c_string_view if callable(getattr(api, "from_c_string_view", None)) else None
        # whether a read polls without blocking first: a GPU driver's blocking wait sleeps and wakes late
        # (hundreds of microseconds on NVIDIA's); a CPU adapter (lavapipe) needs the cores for its threads
        self.spin = False

    @classmethod
    def open(cls, device, queue) -> "NativeQueue | None":
        """The native path for `device` (a wgpu-py GPUDevice) and its `queue`, or None (then use wgpu-py's
        public methods) when wgpu-py's backend is not laid out as expected or POOT_WGPU_NATIVE=0."""
        if not env.switch("POOT_WGPU_NATIVE", True):
            return None
        try:
            from wgpu.backends.wgpu_native import _api as api
            for name in _FUNCTIONS:
                getattr(api.lib, name)
            if not (callable(api.error_handler.capture) and callable(api.error_handler.release)):
                raise AttributeError("error_handler.capture/release")
            native = cls(api, device, queue)
            if not (native._device and native._queue):
                raise AttributeError("_internal")
        except Exception as e:                        # another wgpu-py layout: the public path works
            log.info("wgpu: commands encode through wgpu-py's public API (native calls unavailable: %s: %s)",
                     type(e).__name__, e)
            return None
        return native

    @staticmethod
    def handle(obj):
        """The native handle of a wgpu-py object (pipeline, bind group, buffer); DeviceError if released."""
        h = getattr(obj, "_internal", None)
        if not h:
            raise DeviceError(f"wgpu: {obj!r} was released")
        return h

    # --- replays -----------------------------------------------------------------------------------
    def run(self, steps) -> None:
        """Encode `steps` into one command encoder (one compute pass per run of dispatches) and submit it.
        An error wgpu-native reports while encoding raises DeviceError and nothing is submitted."""
        lib, null, errors = self._lib, self._null, self._errors
        errors.capture(_CAPTURE)
        encoder = lib.wgpuDeviceCreateCommandEncoder(self._device, null)
        commands = cpass = None
        try:
            if not encoder:
                raise DeviceError("wgpu: encoding a replay failed (no command encoder)")
            for step in steps:
                if step[0] == DISPATCH:
                    if cpass is None:
                        cpass = lib.wgpuCommandEncoderBeginComputePass(encoder, null)
                        if not cpass:
                            raise DeviceError("wgpu: encoding a replay failed (no compute pass)")
                    lib.wgpuComputePassEncoderSetPipeline(cpass, step[1])
                    lib.wgpuComputePassEncoderSetBindGroup(cpass, 0, step[2], 0, null)
                    lib.wgpuComputePassEncoderDispatchWorkgroups(cpass, step[3], step[4], step[5])
                else:
                    if cpass is not None:
                        cpass = self._end_pass(cpass)
                    lib.wgpuCommandEncoderCopyBufferToBuffer(encoder, step[1], 0, step[2], 0, step[3])
            if cpass is not None:
                cpass = self._end_pass(cpass)
            commands = lib.wgpuCommandEncoderFinish(encoder, null)
        finally:
            commands = self._close(encoder, cpass, commands, "encoding a replay")
        if not commands:
            raise DeviceError("wgpu: encoding a replay failed (no command buffer)")
        self._submit(commands, "submitting a replay")

    # --- the pending encoder of eager work ---------------------------------------------------------
    def dispatch(self, pipeline, group, x: int, y: int, z: int) -> None:
        """Append a dispatch to the pending encoder (opened, with a compute pass, on first use)."""
        lib, null, errors = self._lib, self._null, self._errors
        errors.capture(_CAPTURE)
        try:
            if self.encoder is None:
                self._open()
            if self.cpass is None:
                cpass = lib.wgpuCommandEncoderBeginComputePass(self.encoder, null)
                if not cpass:
                    raise DeviceError("wgpu: recording a dispatch failed (no compute pass)")
                self.cpass = cpass
            lib.wgpuComputePassEncoderSetPipeline(self.cpass, pipeline)
            lib.wgpuComputePassEncoderSetBindGroup(self.cpass, 0, group, 0, null)
            lib.wgpuComputePassEncoderDispatchWorkgroups(self.cpass, x, y, z)
        finally:
            _raise(errors.release(_CAPTURE), "recording a dispatch")

    def copy(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        """Append a copy between raw buffer handles to the pending encoder, outside any compute pass."""
        lib, errors = self._lib, self._errors
        errors.capture(_CAPTURE)
        try:
            if self.encoder is None:
                self._open()
            if self.cpass is not None:
                self.cpass = self._end_pass(self.cpass)
            lib.wgpuCommandEncoderCopyBufferToBuffer(self.encoder, src, src_offset, dst, dst_offset, nbytes)
        finally:
            _raise(errors.release(_CAPTURE), "recording a buffer copy")

    def submit_pending(self) -> None:
        """Finish and submit the pending encoder, if any; it is gone afterwards, submitted or failed."""
        encoder, cpass = self.encoder, self.cpass
        if encoder is None:
            return
        self.encoder = self.cpass = None
        lib, errors = self._lib, self._errors
        errors.capture(_CAPTURE)
        commands = None
        try:
            if cpass is not None:
                cpass = self._end_pass(cpass)
            commands = lib.wgpuCommandEncoderFinish(encoder, self._null)
        finally:
            commands = self._close(encoder, cpass, commands, "submitting work")
        if not commands:
            raise DeviceError("wgpu: submitting work failed (no command buffer)")
        self._submit(commands, "submitting work")

    # --- reads -------------------------------------------------------------------------------------
    def read(self, staging, size: int, out) -> None:
        """Copy the first `size` bytes of the MAP_READ buffer `staging` (a raw handle; the copies into it
        already submitted) into `out` (a writable buffer), polling the device on this thread until the
        mapping is ready (wgpu-py's map_sync waits for its poll thread instead: two thread switches)."""
        lib, errors = self._lib, self._errors
        errors.capture(_CAPTURE)
        try:
            self._mapped = None
            lib.wgpuBufferMapAsync(staging, lib.WGPUMapMode_Read, 0, size, self._map_info[0])
            idle = 0
            spin_until = time.perf_counter() + SPIN_WAIT_S if self.spin else 0.0
            while self._mapped is None:        # a poll runs the callbacks due; a blocking one waits first
                wait = not spin_until or time.perf_counter() >= spin_until
                if lib.wgpuDevicePoll(self._device, wait, self._null) and wait:    # true: the queue is empty
                    idle += 1
                    if idle > IDLE_POLLS and self._mapped is None:
                        raise DeviceError("wgpu: mapping a buffer for a read never completed")
            status, message = self._mapped
            if status != lib.WGPUMapAsyncStatus_Success:
                raise DeviceError(f"wgpu: mapping a buffer for a read failed (status {status}: {message})")
            try:
                source = lib.wgpuBufferGetConstMappedRange(staging, 0, size)
                if not source:
                    raise DeviceError("wgpu: mapping a buffer for a read gave no memory")
                self._ffi.memmove(out, source, size)
            finally:
                lib.wgpuBufferUnmap(staging)
        finally:
            self._mapped = None
            _raise(errors.release(_CAPTURE), "reading a buffer")

    def _mapped_callback(self, status, message, _user1, _user2) -> None:
        text = ""
        if status != self._lib.WGPUMapAsyncStatus_Success and self._map_message is not None:
            try:
                text = self._map_message(message)
            except Exception:                    # the status alone still says it failed
                pass
        self._mapped = (status, text)

    # --- shared ------------------------------------------------------------------------------------
    def _open(self) -> None:
        encoder = self._lib.wgpuDeviceCreateCommandEncoder(self._device, self._null)
        if not encoder:
            raise DeviceError("wgpu: creating a command encoder failed")
        self.encoder = encoder

    def _end_pass(self, cpass) -> None:
        """End and release the compute pass `cpass`; None, for the caller's variable (so that `_close`
        does not release it again)."""
        self._lib.wgpuComputePassEncoderEnd(cpass)
        self._lib.wgpuComputePassEncoderRelease(cpass)

    def _close(self, encoder, cpass, commands, what: str):
        """Release `encoder` (and `cpass`, left open by an exception) and end the error capture begun
        before them: `commands` when nothing failed, else DeviceError (the command buffer released)."""
        lib = self._lib
        if cpass is not None:
            lib.wgpuComputePassEncoderRelease(cpass)
        if encoder:
            lib.wgpuCommandEncoderRelease(encoder)
        error = self._errors.release(_CAPTURE)
        if (error is not None or not encoder) and commands:
            lib.wgpuCommandBufferRelease(commands)
            commands = None
        _raise(error, what)
        return commands

    def _submit(self, commands, what: str) -> None:
        lib, errors = self._lib, self._errors
        errors.capture(_CAPTURE)
        try:
            self._buffers[0] = commands
            lib.wgpuQueueSubmit(self._queue, 1, self._buffers)
        finally:
            self._buffers[0] = self._null
            lib.wgpuCommandBufferRelease(commands)
            _raise(errors.release(_CAPTURE), what)


def _raise(error, what: str) -> None:
    """DeviceError (OutOfMemoryError) for an error wgpu's handler captured ((type, message) or None)."""
    if error is not None:
        cls = OutOfMemoryError if error[0] == "OutOfMemory" else DeviceError
        raise cls(f"wgpu: {what} failed ({error[0]} error: {error[1]})")


__all__ = ["NativeQueue", "DISPATCH", "COPY"]
