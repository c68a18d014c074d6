"""Session 17: CPU launches of every size on the H200 host (16 cores), for the tree on PYTHONPATH:
medians of `x + 1`, `exp(x)` and `x.sum()` over 256 KB - 256 MB of float32, the row max and column
sum of 4096x4096 and the realize of a 10-element chain, with NumPy beside (single-threaded)."""
import os
import time

import numpy as np

import poot as pt


def med(fn, n):
    fn()
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return np.median(ts) * 1e6


print(f"cores {len(os.sched_getaffinity(0))}, poot from {os.path.dirname(pt.__file__)}")
for kb in [256, 1024, 4096, 16384, 65536, 262144]:
    x = np.random.rand(kb * 256).astype(np.float32)
    px = pt.asarray(x)
    n = max(10, 20000 // kb)
    row = [f"{kb:>6} KB"]
    for name, p, q in [("add", lambda: (px + 1.0).numpy(), lambda: x + 1.0),
                       ("exp", lambda: pt.exp(px).numpy(), lambda: np.exp(x)),
                       ("sum", lambda: px.sum().numpy(), lambda: x.sum())]:
        row.append(f"{name} poot {med(p, n):8.1f} us numpy {med(q, n):8.1f} us")
    print(" | ".join(row), flush=True)
a = np.random.rand(4096, 4096).astype(np.float32)
pa = pt.asarray(a)
print("4096^2 max axis 1: poot %.1f us numpy %.1f us | sum axis 0: poot %.1f us numpy %.1f us" % (
    med(lambda: pa.max(axis=1).numpy(), 40), med(lambda: a.max(axis=1), 40),
    med(lambda: pa.sum(axis=0).numpy(), 40), med(lambda: a.sum(axis=0), 40)))
t = pt.asarray(np.arange(10, dtype=np.float32))
print("realize of (x * 2 + 1) on 10 f32: %.1f us" % med(lambda: (t * 2.0 + 1.0).numpy(), 3000))
