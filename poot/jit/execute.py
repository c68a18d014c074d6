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
    from ..fuse.plan import plan_fusion
    from .program import Program

    key = (device.name, graph.key())
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = Program(plan_fusion(graph), device)
        _PROGRAMS[key] = prog
        if len(_PROGRAMS) > MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    else:
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
    if not _compiled_path_built():
        return execute_oracle(graph, inputs, device)
    return compiled_program(graph, device).run(inputs)


def _compiled_path_built() -> bool:
    # TEMPORARY (this session, while the LLVM back end lands): realize through the oracle until
    # poot.jit.compile exists. Removed once it does.
    import importlib.util

    return importlib.util.find_spec("poot.jit.compile") is not None
