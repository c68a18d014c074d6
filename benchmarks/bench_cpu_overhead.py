"""(e) compile and call overheads: first-call compile latency of an elementwise kernel, disk-cache hit
latency in a new process, and the per-realize overhead of a cached one-kernel graph on 10 elements
(beside NumPy doing the same work)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import poot as pt


def test_realize_overhead_tiny(benchmark):
    benchmark.group = "realize-overhead-10-elements"
    x = pt.array(np.arange(10, dtype=np.float32))
    (x * 2.0 + 1.0).numpy()          # compile once
    benchmark(lambda: (x * 2.0 + 1.0).numpy())


def test_numpy_same_work_tiny(benchmark):
    benchmark.group = "realize-overhead-10-elements"
    x = np.arange(10, dtype=np.float32)
    benchmark(lambda: x * 2.0 + 1.0)


def test_recording_one_op(benchmark):
    """What a user pays per lazy operation (no kernel runs; the chain is dropped every round)."""
    benchmark.group = "record-one-op"
    x = pt.asarray(np.ones(4, np.float32))
    benchmark(lambda: x * x)


_COMPILE = """
import time, os, numpy as np, poot as pt
x = pt.array(np.arange(64, dtype=np.float32))
seed = float(os.environ["SEED"])
(x + 1.0).numpy()                                  # warm the process (imports, device, pools)
t0 = time.perf_counter()
(pt.exp(x) * seed + 1.5).numpy()                   # a kernel this process has never built
print(time.perf_counter() - t0)
"""


def _run(seed: int, cache_dir: str) -> float:
    env = dict(os.environ, SEED=str(seed), POOT_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", _COMPILE], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("cache", ["cold", "disk-hit"])
def test_first_call_latency(benchmark, cache):
    """Each round runs a fresh process; the timing printed by the child is what counts."""
    benchmark.group = "first-call-latency"
    tmp = tempfile.mkdtemp()
    seeds = iter(range(1, 10_000))
    if cache == "disk-hit":
        _run(7, tmp)
        times = [_run(7, tmp) for _ in range(5)]
    else:
        times = [_run(next(seeds), tempfile.mkdtemp()) for _ in range(5)]
    benchmark.extra_info["child_seconds_median"] = float(np.median(times))
    benchmark.pedantic(lambda: None, rounds=1)
    print(f"\n{cache}: median {1e3 * np.median(times):.2f} ms over {len(times)} fresh processes")
