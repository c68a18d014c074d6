"""Running a graph on a device: the one entry the tracer calls to realize arrays.

`execute(graph, inputs, device)` takes device Buffers for the graph's inputs and returns Buffers for its
outputs. With device "oracle" the graph runs through the NumPy oracle (reference semantics, for
debugging); otherwise it is planned, compiled and launched (poot.fuse + kernelgen + the device).
"""
from __future__ import annotations

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


def execute(graph: Graph, inputs: list[Buffer], device: Device | str) -> list[Buffer]:
    if isinstance(device, str):
        if device == "oracle":
            return execute_oracle(graph, inputs, devices.get("cpu"))
        device = devices.get(device)
    # Until the compiled path lands ([B]), every device realizes through the oracle on the host.
    return execute_oracle(graph, inputs, device)
