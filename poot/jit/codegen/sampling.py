"""The "sample" plan step (poot/graph/sampling.py) as one launch of a committed sampling kernel
(kernels/sampling/sample_rows.py): one workgroup a row of logits, which reads the row a few times
(more for top-k and top-p) and writes one token; a temporary [R, V] uint32 row is its working space.

CPU-shaped targets run sample_rows_cpu (one lane a row; the device spreads rows over its threads),
GPU-shaped ones sample_rows_gpu. The kernels index in uint32: R * V must stay below 2**32."""
from __future__ import annotations

import numpy as np

from poot.errors import CompileLimitError
from poot.graph.sampling import greedy_temperature
from poot.jit.codegen.common import Launch, StepCode, asset, style_of
from poot.jit.llvm.targets import KernelStyle

MAX_ELEMENTS = 2**32 - 1


def generate_sample(step, plan, caps) -> StepCode:
    """The launch of one sample step on a device with capabilities `caps`."""
    e = step.eqn
    logits, bits = e.inputs
    p = e.params
    rows, vocab = logits.aval.shape
    code = StepCode()
    if rows == 0:
        return code
    if rows * vocab > MAX_ELEMENTS:
        raise CompileLimitError(f"sample: {rows} rows of {vocab} logits exceed the sampling kernels' 32-bit "
                                f"indexing ({MAX_ELEMENTS} elements); sample fewer rows at a time")
    if rows > caps.max_workgroups[0]:
        raise CompileLimitError(f"sample: {rows} rows exceed the device's {caps.max_workgroups[0]} workgroups "
                                "along x; sample fewer rows at a time")
    cpu = style_of(caps) is KernelStyle.CPU
    kernel = asset("sample_rows_cpu" if cpu else "sample_rows_gpu")
    code.temps.append(4 * rows * vocab)
    greedy = bool(p["greedy"]) or greedy_temperature(p["temperature"])   # 1 / temperature overflowing too
    scaled = not greedy and p["temperature"] != 1.0
    scale = 1.0 if greedy else float(np.float32(1.0 / p["temperature"]))
    scalars = (vocab, scale, int(scaled), int(greedy), int(p["top_k"]),
               int(p["p24"]), int(p["mp24"]))
    code.launches.append(Launch(kernel, [("var", logits), ("var", bits), ("var", e.out), ("temp", 0)],
                                (rows, 1, 1), scalars))
    return code


__all__ = ["generate_sample"]
