"""The "qmatmul" plan step (poot/graph/quant.py) as one launch of a committed quantized GEMV kernel
(kernels/contraction/qgemv.py): a workgroup an output row, reading the weight's integers and scales as
stored. CPU-shaped targets run qgemv_<format>_cpu (one lane a row), GPU-shaped ones qgemv_<format>_gpu.
The kernels index in uint32: N * K and B * K must stay below 2**32."""
from __future__ import annotations

from poot.errors import CompileLimitError
from poot.graph.quant import BLOCK
from poot.jit.codegen.common import Launch, StepCode, asset, style_of
from poot.jit.llvm.targets import KernelStyle

MAX_ELEMENTS = 2**32 - 1


def generate_qmatmul(step, plan, caps) -> StepCode:
    """The launch of one qmatmul step on a device with capabilities `caps`."""
    e = step.eqn
    words, scales, x = e.inputs
    b, k = x.aval.shape
    n = words.aval.shape[0]
    code = StepCode()
    if b * n == 0:
        return code
    if max(n * k, b * k, b * n) > MAX_ELEMENTS:
        raise CompileLimitError(f"qmatmul: a [{n}, {k}] weight times [{b}, {k}] exceeds the quantized kernels' "
                                f"32-bit indexing; split the product")
    if n > caps.max_workgroups[0]:
        raise CompileLimitError(f"qmatmul: {n} output rows exceed the device's {caps.max_workgroups[0]} "
                                "workgroups along x; split the weight's rows")
    side = "cpu" if style_of(caps) is KernelStyle.CPU else "gpu"
    kernel = asset(f"qgemv_{e.params['format']}_{side}")
    code.launches.append(Launch(kernel, [("var", words), ("var", scales), ("var", x), ("var", e.out)],
                                (n, 1, 1), (n, k, b, BLOCK)))
    return code


__all__ = ["generate_qmatmul"]
