"""(d) matmul 1024^2 and 2048^2 float32: poot vs NumPy's BLAS."""
import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("n", [1024, 2048])
@pytest.mark.parametrize("impl", ["poot", "numpy"])
def test_matmul(benchmark, rng, n, impl):
    benchmark.group = f"matmul-{n}-f32"
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    pa, pb = pt.array(a), pt.array(b)
    run = (lambda: (pa @ pb).numpy()) if impl == "poot" else (lambda: a @ b)
    out = benchmark(run)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4)
