"""Running a host step (one host op of poot.graph.host: sort, eigh...) inside a program.

The step reads its operand buffers, runs the op's NumPy rule once for all of its results still used
after DCE, and writes the result buffers. On the CPU device buffers are host memory: NumPy reads and
writes them in place (no copy). On any other device the step raises the traps of the launches before
it (traps.check: the host read of the trap word waits for them), copies each operand to the host and
each result back (`transfers()` says which, for `Lowered.as_text("plan")`).
"""
from __future__ import annotations

import numpy as np

from poot.devices import Buffer, Device, cpu_sort
from poot.graph.host import HOST
from poot.jit.runtime import traps


def _view(buf: Buffer, aval) -> np.ndarray:
    return buf.handle[: aval.nbytes].view(aval.dtype.np).reshape(aval.shape)


class HostStep:
    """A host step of a Program (`run(bufs)`, bufs by var id)."""

    __slots__ = ("op", "params", "compute", "into", "n_results", "inputs", "outputs", "device", "in_place")

    def __init__(self, step, producer: dict, device: Device):
        eqn = step.eqn
        self.op = eqn.op
        self.params = {k: v for k, v in eqn.params.items() if k != "index"}
        if HOST[eqn.op].sorts:         # the host's cores sort, whatever device the program runs on
            self.params["sort_1d"] = cpu_sort.sort_into
        self.compute = HOST[eqn.op].compute
        self.into = HOST[eqn.op].into
        self.inputs = [(v.id, v.aval) for v in eqn.inputs]
        # (slot, result index, aval) for each result still used after DCE
        self.outputs = [(v.id, producer[v.id].params.get("index", 0), v.aval) for v in step.outputs]
        self.device = device
        self.in_place = device.shares_host_memory
        self.n_results = 1 + max((k for _, k, _ in self.outputs), default=0)

    def _apart(self, bufs: dict) -> bool:
        """No result buffer overlaps an operand's memory (`into` writes results while reading)."""
        ins = [np.asarray(bufs[vid].handle) for vid, _ in self.inputs]
        return not any(np.may_share_memory(np.asarray(bufs[slot].handle), x)
                       for slot, _, aval in self.outputs if aval.nbytes for x in ins)

    def transfers(self) -> str:
        """The copies this step makes, as a line of the plan's text."""
        names = lambda items: ", ".join(f"%{vid}:{aval}" for vid, aval, *_ in items)  # noqa: E731
        if self.in_place:
            return "host step: NumPy reads and writes the buffers in place (host memory, no copy)"
        down = sum(a.nbytes for _, a in self.inputs)
        up = sum(a.nbytes for _, _, a in self.outputs)
        outs = [(vid, aval) for vid, _, aval in self.outputs]
        return (f"host step: copy {names(self.inputs)} device -> host ({down} bytes), NumPy, "
                f"copy {names(outs)} host -> device ({up} bytes)")

    def run(self, bufs: dict) -> None:
        dev = self.device
        if self.in_place:
            xs = [_view(bufs[vid], aval) for vid, aval in self.inputs]
        else:
            traps.check(dev)             # a host read: the traps of the launches before it first
            xs = []
            for vid, aval in self.inputs:
                raw = dev.read(bufs[vid]) if aval.nbytes else np.zeros(0, np.uint8)
                xs.append(np.asarray(raw)[: aval.nbytes].view(aval.dtype.np).reshape(aval.shape))
        if self.in_place and self.into is not None and self._apart(bufs):
            outs = [None] * self.n_results
            for slot, k, aval in self.outputs:
                outs[k] = _view(bufs[slot], aval)
            self.into(xs, outs, **self.params)     # NumPy writes the result buffers itself
            return
        results = self.compute(xs, **self.params)
        for slot, k, aval in self.outputs:
            if not aval.nbytes:
                continue
            r = np.ascontiguousarray(results[k], dtype=aval.dtype.np).reshape(aval.shape)
            if self.in_place:
                _view(bufs[slot], aval)[...] = r
            else:
                dev.write(bufs[slot], r.reshape(-1).view(np.uint8))
