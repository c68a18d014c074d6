"""Running a graph on a device: the one entry the tracer calls to realize arrays.

`execute(graph, inputs, device)` takes device Buffers for the graph's inputs and returns Buffers for its
outputs. With device "oracle" the graph runs through the NumPy oracle (reference semantics, for
debugging); otherwise it is planned, compiled and launched (poot.fuse + kernelgen + the device).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import devices
from ..devices import Buffer, Device
from ..graph import Graph, evaluate
from . import abi
from .compile import debug_level


def buffer_to_numpy(buf: Buffer, aval) -> np.ndarray:
    """A read-only NumPy view (or copy, off the CPU) of a buffer holding an array of `aval`."""
    raw = buf.device.read(buf)
    return raw[: aval.nbytes].view(aval.dtype.np).reshape(aval.shape)


def numpy_to_buffer(array: np.ndarray, device: Device) -> Buffer:
    """A new device buffer holding the bytes of `array` (C order)."""
    array = np.ascontiguousarray(array)
    buf = device.allocate(array.nbytes)
    device.write(buf, array)
    return buf


def execute_oracle(graph: Graph, inputs: list[Buffer], device: Device) -> list[Buffer]:
    arrays = [buffer_to_numpy(b, v.aval) for b, v in zip(inputs, graph.inputs)]
    outs = evaluate(graph, arrays)
    return [numpy_to_buffer(o, device) for o in outs]


_PROGRAMS: OrderedDict = OrderedDict()
MAX_PROGRAMS = 1024          # compiled programs kept per process (least recently used dropped)


def compiled_program(graph: Graph, device: Device):
    """The Program for `graph` on `device`, planned and compiled on first use, then cached by the
    graph's structure (shapes, dtypes, ops, parameters)."""
    key = (device.name, graph.key())
    prog = _cached(key)
    if prog is None:
        from ..fuse.plan import plan_fusion
        from .program import Program

        prog = Program(plan_fusion(graph, device.caps.max_buffers - abi.ABI_BUFFERS), device)
        _PROGRAMS[key] = prog
        if len(_PROGRAMS) > MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    return prog


def _cached(key: tuple):
    prog = _PROGRAMS.get(key)
    if prog is not None:
        _PROGRAMS.move_to_end(key)
    return prog


def execute(graph: Graph, inputs: list[Buffer], device: Device | str) -> list[Buffer]:
    if isinstance(device, str):
        if device == "oracle":
            return execute_oracle(graph, inputs, devices.get("cpu"))
        device = devices.get(device)
    if not graph.eqns:   # nothing to compute: outputs are inputs
        pos = {v.id: i for i, v in enumerate(graph.inputs)}
        return [inputs[pos[v.id]] for v in graph.outputs]
    return run_program(compiled_program(graph, device), inputs)


def execute_keyed(key: tuple, build, inputs: list[Buffer], device: Device | str) -> list[Buffer]:
    """`execute(build(), inputs, device)` for a graph of structural key `key` (Graph.key()): a program
    cached under it runs without the graph being built (the tracer's realize of a repeated chain)."""
    if not isinstance(device, str):
        prog = _cached((device.name, key))
        if prog is not None:
            return run_program(prog, inputs)
    return execute(build(), inputs, device)


# programs whose buffers total at most this replay a recording (CPU); a recording holds its buffers,
# so the MAX_PROGRAMS cached programs hold at most 64 MiB that way
REPLAY_MAX_BYTES = 1 << 16


def run_program(prog, inputs: list[Buffer]) -> list[Buffer]:
    """Run a cached Program; from its second call on, a small CPU program replays a recording of its
    launches (poot/jit/replay.py: pointer slots rewritten, calls made) instead of walking its steps,
    which halves the per-realize cost of a tiny graph. The recording keeps its stand-in buffers (as
    large as the program's), hence the size limit; POOT_DEBUG >= 1 always walks the steps (it times
    each launch)."""
    state = prog.__dict__.get("_eager_replay", _FIRST)
    if state is _FIRST:                  # a graph realized once never pays for a recording
        prog._eager_replay = _SECOND
    elif state is _SECOND:
        prog._eager_replay = _replay_for(prog)
    elif state is not None and debug_level() < 1:
        out = state.run(inputs)
        if out is not None:              # None: another thread holds the recording
            return out
    return prog.run(inputs)


_FIRST, _SECOND = object(), object()


def _replay_for(prog):
    if prog.device.caps.target != "cpu" or sum(prog.nbytes.values()) > REPLAY_MAX_BYTES:
        return None
    from .replay import Replay

    return Replay.build(prog)
