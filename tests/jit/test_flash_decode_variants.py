"""The flash-decode tile shapes that tools/unroll/flash_decode.py writes besides its committed one (what
benchmarks/bench_kernel_tiles.py --kernel decode sweeps): 16-byte loads (two keys a load instruction of a
warp at d128, teams of 16 lanes merged at the end), more keys in flight, 8 warps, 2 query rows, the split
loops and the loads a step ahead, each emulated on the kernel file's own examples (windows, masks,
softcap, GQA, partial steps, empty splits) for bf16 and f32 at both head-dim variants."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "unroll" / "flash_decode.py"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


UNROLL = _load(SCRIPT, "unroll_flash_decode_variants")
T = UNROLL.Tiles
# one variant per code path the script writes (wider loads, fewer rows, split steps, loads a step ahead,
# and all at once); more keys or warps only repeat the unrolled code
VARIANTS = [T(vec=4), T(keys=8, rows=2), T(split=1), T(pipe=1), T(vec=4, rows=2, pipe=1)]


def test_default_is_the_committed_file():
    assert UNROLL.source(UNROLL.DEFAULT) == UNROLL.TARGET.read_text()


@pytest.mark.parametrize("tiles", VARIANTS, ids=lambda t: t.label)
def test_tile_variants_emulate_numpy(tiles, tmp_path):
    path = tmp_path / f"flash_decode_{tiles.label}.py"
    path.write_text(UNROLL.source(tiles))
    module = _load(path, path.stem)
    for name in ("bf16_d128", "bf16_d256", "f32_d128"):
        fn = getattr(module, f"attention_decode_{name}")
        for i, ex in enumerate(getattr(module, f"example_attention_decode_{name}")(np.random.default_rng(0))):
            args = ex.fresh_args()
            fn.emulate(*args, threads=ex.threads, workgroup=ex.workgroup)
            got = {p.name: a for p, a in zip(fn.kir.params, args)}
            for out, want in ex.expected.items():
                np.testing.assert_allclose(got[out].astype(np.float64), want.astype(np.float64), rtol=ex.rtol,
                                           atol=ex.atol, err_msg=f"{tiles.label} {name} example {i}: {out}")


def test_shapes_a_load_cannot_split_are_refused():
    with pytest.raises(ValueError):
        T(keys=1, vec=4)                      # a d128 load instruction of a warp reads two keys
    with pytest.raises(ValueError):
        T(split=1, pipe=1)
