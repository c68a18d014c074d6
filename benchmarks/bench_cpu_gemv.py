"""CPU matrix-vector products, float32: the committed GEMV asset (kernel-level launch) beside NumPy's BLAS
and poot's `w @ x` (which takes the path poot/jit/matvec.py's size rule picks), in the same run.

    python -m pytest benchmarks/bench_cpu_gemv.py --benchmark-group-by=group --benchmark-columns=median,min
"""
import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.jit.launch import launch
from poot.jit.matvec import asset_kernel

SIZES = [(256, 256), (1024, 1024), (4096, 4096), (512, 8192), (8192, 512)]


@pytest.mark.parametrize("n, k", SIZES, ids=[f"{n}x{k}" for n, k in SIZES])
@pytest.mark.parametrize("impl", ["asset", "numpy", "poot"])
def test_gemv(benchmark, rng, impl, n, k):
    benchmark.group = f"gemv-{n}x{k}-f32"
    w = rng.standard_normal((n, k)).astype(np.float32)
    x = rng.standard_normal(k).astype(np.float32)
    y = np.zeros(n, np.float32)
    if impl == "asset":
        dev = devices.get("cpu")
        kernel = asset_kernel()
        bufs = [dev.wrap(w), dev.wrap(x), dev.wrap(y)]
        groups = -(-n // kernel.workgroup[1])
        run = lambda: launch(dev, kernel, bufs, (), groups)  # noqa: E731
    elif impl == "numpy":
        run = lambda: np.matmul(w, x, out=y)  # noqa: E731
    else:
        pw, px = pt.asarray(w), pt.asarray(x)
        run = lambda: np.copyto(y, (pw @ px).numpy())  # noqa: E731
    run()
    benchmark(run)
    np.testing.assert_allclose(y, w.astype(np.float64) @ x, rtol=1e-4, atol=1e-4 * np.sqrt(k))
