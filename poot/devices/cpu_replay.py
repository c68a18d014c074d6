"""Record/replay for the CPU device, with the API of the CUDA one (poot/devices/cuda_graph.py):

    with dev.record() as rec:        # dispatches are captured, not run
        dev.dispatch(program, buffers, grid)
    rec.replay({recorded_buffer: buffer_to_use_instead, ...})

Closing a recording turns each dispatch into a ready call: its pointer array and its meta and trap
addresses, built once. A replay rewrites only the pointer slots of the
rebound buffers and makes the calls: no per-launch Python work beyond the call itself.
"""
from __future__ import annotations

import ctypes

from poot.devices import base, cpu_chain
from poot.devices.base import Buffer
from poot.devices.cpu_blas import Gemm
from poot.devices.cpu import buffer_address, launch_args, run_groups


class _Call:
    __slots__ = ("program", "ptrs", "meta", "trap", "total")

    def __init__(self, program, ptrs, meta, trap, total):
        self.program, self.ptrs, self.meta, self.trap = program, ptrs, meta, trap
        self.total = total


class _GemmCall:
    """A BLAS matmul among the recorded calls: its (a, b, out) addresses in a pointer array that a
    replay rewrites like a launch's."""
    __slots__ = ("gemm", "ptrs")

    def __init__(self, gemm: Gemm, ptrs):
        self.gemm, self.ptrs = gemm, ptrs


class CpuRecording(base.Recording):
    def __init__(self, device):
        super().__init__(device)
        self.calls: list[_Call] = []
        self.slots: dict[int, list[tuple[ctypes.Array, int]]] = {}   # id(buffer) -> pointer slots
        self.rebound: set[int] = set()       # ids of recorded buffers whose slots hold others now
        self.buffers: dict[int, Buffer] = {}
        self.chain = None                    # the calls as one native call (cpu_chain.py), once measured
        self.runs = 0

    def add(self, program, buffers: list[Buffer], grid) -> None:
        self.commands.append((program, list(buffers), grid))

    def add_gemm(self, gemm: Gemm, buffers: list[Buffer]) -> None:
        """Record `out = a @ b` (buffers a, b, out) as a BLAS call in order with the launches."""
        self.commands.append((gemm, list(buffers), None))

    def finish(self) -> None:
        self._build()

    def _build(self) -> None:
        for program, buffers, grid in self.commands:
            if type(program) is Gemm:
                ptrs = (ctypes.c_void_p * 3)(*[buffer_address(b) for b in buffers])
                for k, b in enumerate(buffers):
                    self.slots.setdefault(id(b), []).append((ptrs, k))
                self.calls.append(_GemmCall(program, ptrs))
                continue
            gx, gy, gz = grid
            total = gx * gy * gz
            if total <= 0:
                continue
            ptrs, meta, trap = launch_args(buffers)
            for k, b in enumerate(buffers[:-2]):
                self.slots.setdefault(id(b), []).append((ptrs, k))
            self.calls.append(_Call(program, ptrs, meta, trap, total))
        self.buffers = {id(b): b for _, bufs, _ in self.commands for b in bufs}   # keep them alive

    def pointer_slots(self, buf: Buffer) -> list[tuple[ctypes.Array, int]]:
        """Where the recorded dispatches hold `buf`'s address: a caller that rebinds the same
        buffers on every replay writes them itself (`ptrs[k] = address`) and calls `run()`."""
        return self.slots.get(id(buf), [])

    def replay(self, rebind: dict | None = None) -> None:
        """Run the recorded dispatches in order, with `rebind[recorded] = other` buffers."""
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
        """The recorded dispatches, with the addresses their pointer slots hold now (run inline or
        split over the cores as `CpuDevice.dispatch` runs them)."""
        if self.chain is not None and self.chain.run():
            return
        dev = self.device
        cores = dev.caps.cores
        self.runs += 1
        if self.runs == cpu_chain.MEASURED_RUNS and self.calls and cpu_chain.enabled():
            self.chain = cpu_chain.build(dev, self.calls)
        for c in self.calls:
            if type(c) is _GemmCall:
                c.gemm.run(c.ptrs)
            else:
                run_groups(dev._pool, c.program, c.ptrs, c.meta, c.trap, c.total, cores)

    def __repr__(self) -> str:
        return f"<cpu recording of {len(self.commands)} dispatches>"
