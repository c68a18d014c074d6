"""`pt.trace` is NumPy's np.trace (sum along diagonals), while the tracing subpackage stays
importable as `poot.trace`."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import assert_close


@st.composite
def _case(draw):
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    axis1, axis2 = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=2, max_size=2,
                                 unique_by=lambda a: a % ndim))
    offset = draw(st.integers(-5, 5))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.uint16, np.bool_]))
    return shape, axis1, axis2, offset, dtype


@settings(max_examples=30, deadline=None)
@given(_case())
def test_trace_matches_numpy(case):
    shape, axis1, axis2, offset, dtype = case
    a = (np.arange(np.prod(shape)).reshape(shape) % 7 - 2).astype(dtype)
    expected = np.trace(a, offset, axis1, axis2)
    got = pt.trace(pt.asarray(a), offset, axis1, axis2).numpy()
    assert got.dtype == expected.dtype
    assert_close(got, expected, got.dtype, ops=8)


def test_dtype_method_numpy_dispatch_and_jit():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert_close(pt.trace(pt.asarray(a), dtype=pt.float32).numpy(), np.trace(a, dtype=np.float32),
                 np.float32)
    assert pt.asarray(a).trace(1).item() == a.trace(1)
    assert np.trace(pt.asarray(a), -1).item() == np.trace(a, -1)

    @pt.jit
    def diag_sum(x):
        return pt.trace(x, offset=1) * 2

    assert diag_sum(pt.asarray(a)).item() == 2 * np.trace(a, offset=1)


def test_trace_looks_like_numpys_function():
    assert pt.trace.__name__ == np.trace.__name__ == "trace"
    assert callable(pt.trace) and pt.trace.__doc__
    with pytest.raises(pt.ShapeError, match="out="):
        pt.trace(pt.asarray(np.eye(2)), out=np.zeros(()))


def test_tracing_subpackage_still_importable():
    import poot.trace.counters as counters_module
    from poot.trace import context, lazy

    assert sys.modules["poot.trace.lazy"] is lazy
    assert pt.trace.context is context            # attributes read through to the subpackage
    assert counters_module.measure is pt.trace.counters.measure


def test_fresh_interpreter_imports_submodules_after_poot():
    # poot.trace.dlpack is first imported here, after `pt.trace` was bound to the function: Python
    # binds the submodule on the package module, and `import a.b.c as d` reads it through pt.trace
    code = ("import sys, poot as pt, numpy as np\n"
            "assert 'poot.trace.dlpack' not in sys.modules\n"
            "import poot.trace.lazy as L\n"
            "import poot.trace.dlpack as D\n"
            "from poot.trace import counters\n"
            "assert L.__name__ == 'poot.trace.lazy' and counters.__name__ == 'poot.trace.counters'\n"
            "assert D.__name__ == 'poot.trace.dlpack' and pt.trace.dlpack is D\n"
            "assert pt.trace(pt.asarray(np.eye(3))).item() == 3.0\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
