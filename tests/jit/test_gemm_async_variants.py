"""The tensor-core GEMM's schedule variants that tools/unroll/gemm_async.py writes besides its committed
shapes (what benchmarks/bench_kernel_tiles.py sweeps): the rolled k loop, every copy checked, and a warp
layout whose copies step fewer than 8 rows a chunk (the swizzle recomputed per chunk), each emulated on an
interior product over a pass and a remainder of k-tiles and on interior tiles of a batch off the origin."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "unroll" / "gemm_async.py"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


UNROLL = _load(SCRIPT, "unroll_gemm_async_variants")


@pytest.mark.parametrize("tiles", [UNROLL.Tiles(static=0, fast=0), UNROLL.Tiles(static=0), UNROLL.Tiles(fast=0),
                                   UNROLL.Tiles(warps_m=1, warps_n=2, mi=4, nj=8)], ids=lambda t: t.label)
def test_schedule_variants_emulate_numpy(tiles, tmp_path):
    path = tmp_path / f"gemm_async_{tiles.label}.py"
    path.write_text(UNROLL.source(tiles))
    module = _load(path, path.stem)
    examples = module.example_gemm_bf16_async(np.random.default_rng(0))
    for ex in (examples[1], examples[-1]):      # whole tiles over 4 k-tiles; interior tiles of a batch
        args = ex.fresh_args()
        module.gemm_bf16_async.emulate(*args, threads=ex.threads)
        np.testing.assert_allclose(args[2].astype(np.float64), ex.expected["c"].astype(np.float64),
                                   rtol=ex.rtol, atol=ex.atol)
