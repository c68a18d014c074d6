"""The hand-written-kernel part of `poot demo`: a kernel written as Python, emulated on NumPy arrays, then
compiled and run on a device, and the committed coalesced GEMV asset's source run the same way."""
from __future__ import annotations

import time

import numpy as np

from poot.dtypes import float32
from poot.kernel.api import Context, kernel
from poot.kernel.intrinsics import In, InOut, thread_index


@kernel
def saxpy(a: float32, x: In[float32], y: InOut[float32]):
    """y = a * x + y, one thread per element."""
    i = thread_index()
    if i < len(y):
        y[i] = a * x[i] + y[i]


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run_kernel_demo(device: str = "cpu", n: int = 1 << 22, out=print) -> bool:
    """Print the demo; return whether every result matched NumPy."""
    rng = np.random.default_rng(0)
    ok = True
    out("hand-written kernel (@pt.kernel saxpy: y = a * x + y):")
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    ref = np.float32(2.5) * x + y
    small_x, small_y = x[:2048].copy(), y[:2048].copy()
    saxpy.emulate(2.5, small_x, small_y)
    good = np.allclose(small_y, ref[:2048], rtol=1e-6, atol=1e-6)
    ok &= good
    out(f"  emulated on NumPy arrays (2048 elements): {'matches' if good else 'DIFFERS FROM'} NumPy")
    ctx = Context(device)
    got = y.copy()
    t0 = time.perf_counter()
    saxpy(ctx, 2.5, x, got)
    first = time.perf_counter() - t0
    good = np.allclose(got, ref, rtol=1e-6, atol=1e-6)
    ok &= good
    work = y.copy()                               # both sides update y in place
    t_kernel = _best(lambda: saxpy(ctx, 2.5, x, work))
    t_numpy = _best(lambda: np.add(np.float32(2.5) * x, work, out=work))
    out(f"  on {device} ({n:,} elements): {'matches' if good else 'DIFFERS FROM'} NumPy; first call (compile) "
        f"{first * 1e3:.1f} ms, then {t_kernel * 1e3:.2f} ms per call (NumPy {t_numpy * 1e3:.2f} ms)")

    from poot.jit.kir.assets import load_manifest
    from poot.kernel import assets

    entry = next(e for e in load_manifest() if e.name == "gemv_f32")
    module = assets.load_source(entry)
    gemv = assets.entry_function(entry, module)
    rows, cols = 512, 1024
    w = rng.standard_normal((rows, cols)).astype(np.float32)
    v = rng.standard_normal(cols).astype(np.float32)
    want = (w.astype(np.float64) @ v.astype(np.float64)).astype(np.float32)
    tol = dict(rtol=1e-4, atol=1e-4 * np.sqrt(cols))
    yy = np.zeros(rows, np.float32)
    gemv.emulate(w[:8], v, yy[:8], threads=module.launch_threads(8))
    good = np.allclose(yy[:8], want[:8], **tol)
    ok &= good
    out(f"coalesced GEMV (kernels/{entry.source}): emulated 8 x {cols}: {'matches' if good else 'DIFFERS FROM'} NumPy")
    gemv.launch(ctx, w, v, yy, threads=module.launch_threads(rows))
    good = np.allclose(yy, want, **tol)
    ok &= good
    out(f"  on {device} ({rows} x {cols}): {'matches' if good else 'DIFFERS FROM'} NumPy")
    return bool(ok)
