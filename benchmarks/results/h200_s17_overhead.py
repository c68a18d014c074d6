"""Session 17: the cached realize of a small lazy chain, `(x * 2.0 + 1.0).numpy()` on 10 float32, on
each device this machine has (median of 3000 calls, after a warm-up), the number bench_cpu_overhead's
realize row measures on the CPU."""
import time

import numpy as np

import poot as pt

for dev in ("cpu", "cuda", "wgpu", "vulkan"):
    try:
        with pt.device(dev):
            x = pt.array(np.arange(10, dtype=np.float32))
            for _ in range(50):
                (x * 2.0 + 1.0).numpy()
            ts = []
            for _ in range(3000):
                t0 = time.perf_counter()
                (x * 2.0 + 1.0).numpy()
                ts.append(time.perf_counter() - t0)
        print(f"{dev}: cached realize of (x * 2 + 1) on 10 f32: median {np.median(ts) * 1e6:.1f} us, "
              f"min {np.min(ts) * 1e6:.1f} us")
    except pt.PootError as e:
        print(f"{dev}: unavailable ({e})")
