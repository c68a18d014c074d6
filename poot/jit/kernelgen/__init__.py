"""Kernel generation: each planned step becomes KIR kernels with their launch geometry."""
from __future__ import annotations

from .common import Launch, StepCode, style_of
from .opaque import generate_matmul, generate_scan, generate_scatter
from .pointwise import generate_pointwise
from .rows import generate_row

_GENERATORS = {"pointwise": generate_pointwise, "row": generate_row, "scan": generate_scan,
               "scatter": generate_scatter, "matmul": generate_matmul}


def generate(step, plan, caps) -> StepCode:
    """KIR kernels for one plan step on a device with capabilities `caps`."""
    return _GENERATORS[step.kind](step, plan, style_of(caps))


__all__ = ["generate", "Launch", "StepCode", "style_of"]
