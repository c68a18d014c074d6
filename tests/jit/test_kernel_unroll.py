"""The unrolled kernel sources (kernels/contraction/gemm_bf16_async*.py, gemm_bf16_wgmma.py, kernels/attention/flash_tc.py,
kernels/attention/flash_decode.py) are exactly what their scripts in tools/unroll/ write (each script's
`outputs()`), so an edit to one without the other is caught."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "tools" / "unroll"


@pytest.mark.parametrize("script", ["gemm_async.py", "gemm_wgmma.py", "flash_tc.py", "flash_decode.py"])
def test_kernel_file_is_what_its_unroll_script_writes(script):
    spec = importlib.util.spec_from_file_location(f"unroll_{script[:-3]}", ROOT / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path, text in module.outputs().items():
        assert path.read_text() == text, (
            f"{path} differs from what tools/unroll/{script} writes: run that script, then "
            "`poot regen-kernel-assets`")
