"""Running a control step (cond / while / fori, see poot.graph.control) inside a program.

The construct's subgraphs are planned and compiled as programs of their own, once, when the outer
program is built. At run time the loop is a loop in the program: the predicate (a 0-d bool in a
device buffer) is read back each iteration; a fori loop runs its body a static number of times and
reads nothing back. Results are copied into the step's own output buffers, so an output never shares
memory with an operand (a carry that passes through unchanged would otherwise alias an input).

A body that scatters into its carry (`dynamic_update_slice` of a buffer, `scan` stacking its outputs,
the residuals of a differentiated loop) would copy the whole carry every iteration, making a loop of n
steps cost n squared. From the second iteration on, each carry the loop itself made in the last one
(not an operand of the step, not passed in twice) is donated to the body, whose scatter then writes in
place (poot/jit/runtime/inplace.py), as a jitted call's donated argument is.
"""
from __future__ import annotations

import numpy as np

from poot.devices import Buffer, Device
from poot import env
from poot.graph import Graph
from poot.jit.runtime import traps
from poot.jit.runtime.execute import replay_for, compiled_program, run_program

_SEEN = object()        # a donation set met once: its replay is recorded when it comes again


class _SubProgram:
    """One subgraph, runnable on buffers: a compiled Program, or a pure pass-through.

    A loop runs its body once a trip, so each run costs what an eager realize of a cached program
    does: a trip replays the body's recording (execute.run_program), and a trip that donates its
    carry replays a recording made for that donation (one per set of donated positions, made at the
    second trip that donates them). On the CPU a replay rewrites the carry's addresses in place and
    makes one native call: a small body's trip costs about a quarter of walking its steps."""

    __slots__ = ("program", "picks", "scatters", "donating")

    def __init__(self, graph: Graph, device: Device):
        self.program = compiled_program(graph, device) if graph.eqns else None
        pos = {v.id: i for i, v in enumerate(graph.inputs)}
        self.picks = [pos[v.id] for v in graph.outputs] if not graph.eqns else None
        # whether donating inputs can spare a copy: only a scatter writes over its operand's buffer
        self.scatters = self.program is not None and any(s.kind == "scatter" for s in self.program.plan.steps)
        self.donating: dict[frozenset, object] = {}     # donated positions -> Replay, None, or _SEEN

    def __call__(self, inputs: list[Buffer], donate: set[int] | None = None) -> list[Buffer]:
        if self.program is None:
            return [inputs[i] for i in self.picks]
        if not donate:
            return run_program(self.program, inputs)
        key = frozenset(donate)
        replay = self.donating.get(key)
        if replay is None and key not in self.donating:
            self.donating[key] = _SEEN                  # the first trip so donating walks the steps
        elif replay is _SEEN:
            replay = self.donating[key] = replay_for(self.program, key) if env.eager_replay() else None
        if replay is not None and replay is not _SEEN and env.debug_level() < 1:
            out = replay.run(inputs)
            if out is not None:                         # None: another thread holds the recording
                return out
        return self.program.run(inputs, donate)


class ControlRunner:
    """Runs one control step: reads its operands from the program's buffers, writes its results."""

    __slots__ = ("region", "device", "inputs", "outputs", "subs", "index_buf")

    def __init__(self, step, producer: dict, device: Device):
        eqn = step.eqn
        self.region = eqn.params["region"]
        self.device = device
        self.inputs = [v.id for v in step.inputs]
        # (slot, result index) for each result still used after DCE
        self.outputs = [(v.id, producer[v.id].params["index"]) for v in step.outputs]
        self.subs = [_SubProgram(g, device) for g in self.region.graphs]
        self.index_buf = None
        if self.region.kind == "fori":
            self.index_buf = device.allocate(8)

    def _truth(self, buf: Buffer) -> bool:
        """The predicate: a host read, which first raises the traps of the launches before it (a
        trapped body must not steer the loop)."""
        traps.check(self.device)
        return bool(self.device.read(buf)[0])

    def run(self, bufs: dict) -> None:
        region, dev = self.region, self.device
        xs = [bufs[i] for i in self.inputs]
        if region.kind == "cond":
            results = self.subs[1 if self._truth(xs[0]) else 0](xs[1:])
        else:
            n = len(region.out_avals)
            carry, extra = xs[:n], xs[n:]
            operands = {id(b) for b in xs}
            if region.kind == "while":
                cond, body = self.subs
                while self._truth(cond(carry + extra)[0]):
                    carry = body(carry + extra, _loop_owned(carry, operands, 0) if body.scatters else None)
            else:
                (body,) = self.subs
                index = self.index_buf
                for i in range(region.lower, region.upper):
                    dev.write(index, np.asarray(i, dtype=np.int64))
                    carry = body([index] + carry + extra,
                                 _loop_owned(carry, operands, 1) if body.scatters else None)
            results = carry
        for slot, k in self.outputs:
            nbytes = region.out_avals[k].nbytes
            if nbytes:
                dev.copy(bufs[slot], results[k], nbytes)


def _loop_owned(carry: list[Buffer], operands: set[int], first: int) -> set[int]:
    """The body-input positions (carry k at `first + k`) whose buffers the loop made in its last
    iteration and nothing else holds: not one of the step's operands (the outer program's buffers, and
    a carry passed through unchanged stays one), and at one carry position only."""
    seen: dict[int, int] = {}
    for b in carry:
        seen[id(b)] = seen.get(id(b), 0) + 1
    return {first + k for k, b in enumerate(carry) if id(b) not in operands and seen[id(b)] == 1}
