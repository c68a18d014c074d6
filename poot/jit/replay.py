"""A Program recorded once on its device and replayed per call (what a jitted function runs).

Recording walks the program's steps once, as `Program.run` would, with stand-in buffers (of the
same sizes) for the inputs and results and real buffers for the intermediates (allocated once, shared between steps as
the plan's lifetimes allow, kept for the program's life). The device captures the dispatches
(`device.record()`: ready ctypes calls on the CPU, a CUDA graph on CUDA). A replay allocates the
results, rebinds the stand-ins to the call's buffers and runs the recording.

Not every program records: one with host steps (a BLAS matmul, a control-flow loop) or on a device
without `record()` is run step by step instead (`Replay.build` returns None).
"""
from __future__ import annotations

import threading

import numpy as np

from . import abi



def _stand_in_bytes(nbytes: int) -> int:
    """Stand-ins have the size of what replaces them: a device may size its bindings (wgpu's bind
    groups) at record time."""
    return max(nbytes, 4)


class Replay:
    def __init__(self, program, recording, inputs, fresh, outputs, trap_words):
        self.program, self.recording = program, recording
        self.inputs = inputs          # stand-ins of the inputs, in order
        self.fresh = fresh            # [(stand-in, nbytes)] for the buffers results live in
        self.outputs = outputs        # per result: ("in", input position) or ("fresh", index)
        self.trap_words = trap_words  # a host view of the trap word (CPU), else None
        self.lock = threading.Lock()  # the intermediates are shared: one replay at a time

    @staticmethod
    def build(program) -> "Replay | None":
        dev = program.device
        if not hasattr(dev, "record"):
            return None
        for _, actions, _ in program.steps:
            if any(kind not in ("launch", "alias") for kind, *_ in actions):
                return None
        alias_root: dict[int, int] = {}
        for _, actions, _ in program.steps:
            for kind, *rest in actions:
                if kind == "alias":
                    alias_root[rest[0]] = alias_root.get(rest[1], rest[1])
        input_pos = {vid: k for k, vid in enumerate(program.input_ids)}
        out_roots = {alias_root.get(v, v) for v in program.output_ids}
        bufs = {vid: dev.allocate(_stand_in_bytes(program.nbytes[vid])) for vid in program.input_ids}
        inputs = [bufs[vid] for vid in program.input_ids]
        stand_ins = {id(b) for b in inputs}
        fresh_index: dict[int, int] = {}
        fresh: list = []
        pool: dict[int, list] = {}
        trap = program.trap_buffer
        with dev.record() as rec:
            for allocs, actions, frees in program.steps:
                for slot in allocs:
                    nb = program.nbytes[slot]
                    if slot in out_roots:
                        b = dev.allocate(_stand_in_bytes(nb))
                        stand_ins.add(id(b))
                        fresh_index[slot] = len(fresh)
                        fresh.append((b, nb))
                    else:
                        free = pool.get(nb)
                        b = free.pop() if free else dev.allocate(nb)
                    bufs[slot] = b
                for kind, *rest in actions:
                    if kind == "launch":
                        r = rest[0]
                        dev.dispatch(r.program, [bufs[a] for a in r.args] + [r.meta, trap], r.groups)
                    else:
                        bufs[rest[0]] = bufs[rest[1]]
                for slot in frees:
                    b = bufs.pop(slot, None)
                    if b is not None and id(b) not in stand_ins:
                        pool.setdefault(b.nbytes, []).append(b)
        outputs = []
        for vid in program.output_ids:
            root = alias_root.get(vid, vid)
            outputs.append(("in", input_pos[root]) if root in input_pos else ("fresh", fresh_index[root]))
        if dev.caps.target == "cpu":
            return CpuReplay(program, rec, inputs, fresh, outputs)
        return Replay(program, rec, inputs, fresh, outputs, None)

    def run(self, inputs: list):
        """The results for `inputs`, or None when another thread is replaying (run the program)."""
        if not self.lock.acquire(blocking=False):
            return None
        try:
            dev = self.program.device
            rebind = dict(zip(self.inputs, inputs))
            made = []
            for stand_in, nb in self.fresh:
                b = dev.allocate(nb)
                rebind[stand_in] = b
                made.append(b)
            self.recording.replay(rebind)
            if self.trap_words is None or self.trap_words[abi.TRAP_CODE_WORD]:
                self.program._check_trap()
            return [inputs[k] if kind == "in" else made[k] for kind, k in self.outputs]
        finally:
            self.lock.release()


class CpuReplay(Replay):
    """On the CPU the call's addresses are written straight into the recorded pointer slots."""

    def __init__(self, program, recording, inputs, fresh, outputs):
        dev = program.device
        words = dev.read(program.trap_buffer)[: abi.TRAP_WORDS * 4].view(np.uint32)
        super().__init__(program, recording, inputs, fresh, outputs, words)
        self.input_slots = [recording.pointer_slots(b) for b in inputs]
        self.fresh_slots = [(recording.pointer_slots(b), nb) for b, nb in fresh]

    def run(self, inputs: list):
        if not self.lock.acquire(blocking=False):
            return None
        try:
            from ..devices.cpu import buffer_address

            for buf, slots in zip(inputs, self.input_slots):
                addr = buffer_address(buf)
                for ptrs, k in slots:
                    ptrs[k] = addr
            allocate = self.program.device.allocate
            made = []
            for slots, nb in self.fresh_slots:
                b = allocate(nb)
                made.append(b)
                addr = b.address
                for ptrs, k in slots:
                    ptrs[k] = addr
            self.recording.run()
            if self.trap_words[abi.TRAP_CODE_WORD]:
                self.program._check_trap()
            return [inputs[k] if kind == "in" else made[k] for kind, k in self.outputs]
        finally:
            self.lock.release()
