"""Record/replay for the CPU device, with the API of the CUDA one (poot/devices/cuda_graph.py):

    with dev.record() as rec:        # dispatches are captured, not run
        dev.dispatch(program, buffers, grid)
    rec.replay({recorded_buffer: buffer_to_use_instead, ...})

Closing a recording turns each dispatch into a ready call: its pointer array, meta and trap addresses
and its split of the grid over the cores, built once. A replay rewrites only the pointer slots of the
rebound buffers and makes the calls: no per-launch Python work beyond the call itself.
"""
from __future__ import annotations

import ctypes

from ..errors import DeviceError
from .base import Buffer


class _Call:
    __slots__ = ("fn", "ptrs", "meta", "trap", "ranges")

    def __init__(self, fn, ptrs, meta, trap, ranges):
        self.fn, self.ptrs, self.meta, self.trap, self.ranges = fn, ptrs, meta, trap, ranges


class CpuRecording:
    def __init__(self, device):
        self.device = device
        self.commands: list[tuple] = []
        self.calls: list[_Call] = []
        self.slots: dict[int, list[tuple[ctypes.Array, int]]] = {}   # id(buffer) -> pointer slots
        self.rebound: set[int] = set()       # ids of recorded buffers whose slots hold others now
        self.closed = False

    def add(self, program, buffers: list[Buffer], grid) -> None:
        self.commands.append((program, list(buffers), grid))

    def __enter__(self) -> "CpuRecording":
        dev = self.device
        from .cpu import RECORDING

        if RECORDING.open is not None:
            raise DeviceError(f"{dev.name}: a recording is already open on this thread")
        if self.closed:
            raise DeviceError(f"{dev.name}: this recording is closed; start a new one with record()")
        RECORDING.open = self
        return self

    def __exit__(self, exc_type, *exc) -> None:
        from .cpu import RECORDING

        RECORDING.open = None
        self.closed = True
        if exc_type is None:
            self._build()

    def _build(self) -> None:
        from .cpu import buffer_address

        cores = self.device.caps.cores
        for program, buffers, (gx, gy, gz) in self.commands:
            total = gx * gy * gz
            if total <= 0:
                continue
            n = len(buffers) - 2
            ptrs = (ctypes.c_void_p * max(n, 1))(*[buffer_address(b) for b in buffers[:n]])
            for k, b in enumerate(buffers[:n]):
                self.slots.setdefault(id(b), []).append((ptrs, k))
            meta = buffers[n].handle
            meta = meta if isinstance(meta, ctypes.Array) else meta.ctypes.data
            trap = buffer_address(buffers[n + 1])
            workers = min(cores, total)
            ranges = [(total * j // workers, total * (j + 1) // workers) for j in range(workers)]
            self.calls.append(_Call(program.fn, ptrs, meta, trap, ranges))
        self.buffers = {id(b): b for _, bufs, _ in self.commands for b in bufs}   # keep them alive

    def pointer_slots(self, buf: Buffer) -> list[tuple[ctypes.Array, int]]:
        """Where the recorded dispatches hold `buf`'s address: a caller that rebinds the same
        buffers on every replay writes them itself (`ptrs[k] = address`) and calls `run()`."""
        return self.slots.get(id(buf), [])

    def replay(self, rebind: dict | None = None) -> None:
        """Run the recorded dispatches in order, with `rebind[recorded] = other` buffers."""
        from .cpu import buffer_address

        slots = self.slots
        now = {id(old): new for old, new in rebind.items()} if rebind else {}
        if self.rebound:    # buffers rebound last time and not now get their recorded one back
            for key in self.rebound - now.keys():
                addr = buffer_address(self.buffers[key])
                for ptrs, k in slots.get(key, ()):
                    ptrs[k] = addr
        for key, new in now.items():
            addr = buffer_address(new)
            for ptrs, k in slots.get(key, ()):
                ptrs[k] = addr
        self.rebound = set(now)
        self.run()

    def run(self) -> None:
        """The recorded dispatches, with the addresses their pointer slots hold now."""
        pool = None
        for c in self.calls:
            if len(c.ranges) == 1:
                c.fn(c.ptrs, c.meta, c.trap, 0, c.ranges[0][1])
                continue
            pool = pool or self.device._pool()
            futures = [pool.submit(c.fn, c.ptrs, c.meta, c.trap, lo, hi) for lo, hi in c.ranges[1:]]
            c.fn(c.ptrs, c.meta, c.trap, *c.ranges[0])
            for f in futures:
                f.result()

    def __len__(self) -> int:
        return len(self.commands)

    def __repr__(self) -> str:
        return f"<cpu recording of {len(self.commands)} dispatches>"
