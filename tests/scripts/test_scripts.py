"""The realistic NumPy programs in this folder run unchanged with `import poot as np` (only their
final result is turned into NumPy with .numpy()) and give NumPy's answers."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

HERE = pathlib.Path(__file__).parent
SCRIPTS = sorted(p for p in HERE.glob("*.py") if not p.name.startswith(("test_", "__")))
IMPORT = "import numpy as np"


def run(source: str, name: str) -> dict:
    namespace = {"__name__": name}
    exec(compile(source, str(HERE / name), "exec"), namespace)
    return namespace


def test_there_are_at_least_six_programs():
    names = {p.stem for p in SCRIPTS}
    assert {"softmax_rows", "kmeans_step", "mandelbrot", "mlp_forward", "nbody_step",
            "heat_stencil"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_program_matches_numpy_with_poot_as_np(device, script):
    source = script.read_text()
    assert source.count(IMPORT) == 1
    expected = np.asarray(run(source, script.stem)["result"])
    got = run(source.replace(IMPORT, "import poot as np"), script.stem)["result"]
    assert isinstance(got, pt.Array) and got.device == device
    actual = got.numpy()
    assert actual.dtype == expected.dtype
    assert_close(actual, expected, pt.dtypes.as_dtype(expected.dtype), ops=256, err_msg=script.stem)
