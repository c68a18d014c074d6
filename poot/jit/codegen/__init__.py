"""Kernel generation: each planned step becomes KIR kernels with their launch geometry."""
from __future__ import annotations

from poot.jit.codegen.attention import generate_attention
from poot.jit.codegen.common import Launch, StepCode, style_of
from poot.jit.codegen.cpu_gemv import applies as cpu_gemv_applies, generate_cpu_gemv
from poot.jit.codegen.gpu_columns import generate_gpu_columns, pieces_for
from poot.jit.codegen.gpu_fft import claims as fft_claims, generate_gpu_fft
from poot.jit.codegen.gpu_gemm import applies as gemm_applies, generate_gpu_gemm
from poot.jit.codegen.gpu_gemv import applies as gemv_applies, asset_applies, gemv_path, generate_asset_gemv, generate_gpu_gemv
from poot.jit.codegen.gpu_pointwise import generate_gpu_pointwise
from poot.jit.codegen.gpu_sort import claims as sort_claims, generate_gpu_sort
from poot.jit.codegen.gpu_split import generate_gpu_split
from poot.jit.codegen.opaque import generate_matmul, generate_scan, generate_scatter
from poot.jit.codegen.pointwise import generate_pointwise
from poot.jit.codegen.quant import generate_qmatmul
from poot.jit.codegen.rows import generate_row
from poot.jit.codegen.sampling import generate_sample
from poot.jit.codegen.split import choose
from poot.jit.llvm.targets import KernelStyle

_GENERATORS = {"pointwise": generate_pointwise, "row": generate_row, "scan": generate_scan,
               "scatter": generate_scatter, "matmul": generate_matmul}


def generate(step, plan, caps) -> StepCode:
    """KIR kernels for one plan step on a device with capabilities `caps`."""
    style = style_of(caps)
    if step.kind == "attention":
        return generate_attention(step, plan, caps)
    if step.kind == "sample":
        return generate_sample(step, plan, caps)
    if step.kind == "qmatmul":
        return generate_qmatmul(step, plan, caps)
    if step.kind == "host" and sort_claims(step, caps):      # sort/argsort as kernels on GPUs
        return generate_gpu_sort(step, plan, caps)
    if step.kind == "host" and fft_claims(step, caps):       # power-of-two complex FFTs as kernels
        return generate_gpu_fft(step, plan, caps)
    if step.kind == "pointwise" and style is KernelStyle.GPU:
        return generate_gpu_pointwise(step, plan, caps)
    if step.kind == "row" and style is KernelStyle.GPU:
        pieces = pieces_for(step, plan)
        if pieces > 1:
            return generate_gpu_columns(step, plan, pieces)
        if choose(step, plan, style) == "split":
            return generate_gpu_split(step, plan, caps)
        return generate_row(step, plan, style, caps)
    if step.kind == "matmul" and style is KernelStyle.GPU:
        if asset_applies(step) and gemv_path() == "asset":
            return generate_asset_gemv(step)
        if gemv_applies(step):
            return generate_gpu_gemv(step, plan, caps)
        if gemm_applies(step, caps):
            return generate_gpu_gemm(step, caps)
    if step.kind == "matmul" and style is KernelStyle.CPU and cpu_gemv_applies(step):
        return generate_cpu_gemv(step, plan)       # claimed by poot/jit/runtime/matvec.py's rule
    return _GENERATORS[step.kind](step, plan, style)


def fuses_epilogue(step, caps) -> bool:
    """Whether the kernel `generate` makes for matmul step `step` on a device with `caps` computes a
    pointwise epilogue at its store (poot/jit/runtime/epilogues.py): the generated GPU GEMV."""
    return (style_of(caps) is KernelStyle.GPU and gemv_applies(step)
            and not (asset_applies(step) and gemv_path() == "asset"))


def host_claims(step, caps) -> bool:
    """Whether generated kernels take the place of the host step `step` on a device with `caps`."""
    return sort_claims(step, caps) or fft_claims(step, caps)


__all__ = ["generate", "Launch", "StepCode", "style_of", "host_claims", "fuses_epilogue"]
