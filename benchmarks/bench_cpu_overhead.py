"""(e) compile and call overheads: first-call compile latency of an elementwise kernel, disk-cache hit
latency in a new process, the per-realize overhead of a cached one-kernel graph on 10 elements
(beside NumPy doing the same work), what recording one operation costs, and element-by-element
Python loops (LU and Cholesky of a 60x60 matrix, `A[i, j] = ...` with scalar reads) beside the same
loops on NumPy arrays.

`python benchmarks/bench_cpu_overhead.py` prints the medians of many repetitions and the ratios to
NumPy without pytest-benchmark."""
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


def test_recording_scalar_op(benchmark):
    """`x * 2.0`: an Array and a Python float (the scalar becomes a shared 0-d leaf)."""
    benchmark.group = "record-one-op"
    x = pt.asarray(np.ones(4, np.float32))
    benchmark(lambda: x * 2.0)


# --- element-by-element loops: the textbook algorithms, written once for NumPy and poot -----------
N_LOOP = 60


def lu_loop(A, n):
    """Doolittle LU in place, no pivoting (L below the diagonal, U on and above)."""
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] = A[i, j] - A[i, k] * A[k, j]
    return A


def cholesky_loop(A, L, n):
    """Cholesky-Banachiewicz: L row by row from scalar reads of A and L."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s = s - L[j, k] * L[j, k]
        L[j, j] = s ** 0.5
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s = s - L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    return L


def spd_matrix(n=N_LOOP):
    m = np.random.default_rng(0).standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def _lu(lib):
    a0 = spd_matrix()
    if lib is np:
        return lambda: lu_loop(a0.copy(), N_LOOP)
    return lambda: lu_loop(pt.asarray(a0), N_LOOP).numpy()


def _cholesky(lib):
    a0 = spd_matrix()
    if lib is np:
        return lambda: cholesky_loop(a0, np.zeros_like(a0), N_LOOP)
    a = pt.asarray(a0)
    return lambda: cholesky_loop(a, pt.zeros(a0.shape, dtype=pt.float64), N_LOOP).numpy()


@pytest.mark.parametrize("lib", ["numpy", "poot"])
def test_lu_loop(benchmark, lib):
    benchmark.group = "python-loop-lu-60"
    f = _lu(np if lib == "numpy" else pt)
    f()
    benchmark.pedantic(f, rounds=5)


@pytest.mark.parametrize("lib", ["numpy", "poot"])
def test_cholesky_loop(benchmark, lib):
    benchmark.group = "python-loop-cholesky-60"
    f = _cholesky(np if lib == "numpy" else pt)
    f()
    benchmark.pedantic(f, rounds=5)


def test_loops_agree_with_numpy():
    a0 = spd_matrix()
    np.testing.assert_allclose(lu_loop(pt.asarray(a0), N_LOOP).numpy(), lu_loop(a0.copy(), N_LOOP),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        cholesky_loop(pt.asarray(a0), pt.zeros(a0.shape, dtype=pt.float64), N_LOOP).numpy(),
        np.linalg.cholesky(a0), rtol=1e-10, atol=1e-10)


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


def _median_us(f, number: int, repeat: int) -> float:
    import statistics
    import timeit

    return statistics.median(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    """Medians of many repetitions, NumPy's beside poot's (the ratio is what to compare)."""
    x = pt.asarray(np.ones(10, np.float32))
    y = pt.asarray(np.ones(10, np.float32))
    xn = np.ones(10, np.float32)
    for _ in range(3):
        (x * 2.0 + 1.0).numpy()
    rows = [("record x * 2.0", _median_us(lambda: x * 2.0, 20000, 21), None),
            ("record x * y", _median_us(lambda: x * y, 20000, 21), None),
            ("record pt.exp(x)", _median_us(lambda: pt.exp(x), 20000, 21), None)]
    realize = _median_us(lambda: (x * 2.0 + 1.0).numpy(), 2000, 21)
    rows.append(("(x * 2 + 1).numpy(), 10 elements", realize, _median_us(lambda: xn * 2.0 + 1.0, 20000, 21)))
    for name, make in (("LU 60x60 Python loop", _lu), ("Cholesky 60x60 Python loop", _cholesky)):
        fp, fn = make(pt), make(np)
        fp(), fn()
        rows.append((name, _median_us(fp, 1, 7), _median_us(fn, 1, 7)))
    for name, t, ref in rows:
        extra = f"   NumPy {ref:10.2f} us   ratio {t / ref:7.1f}x" if ref else ""
        print(f"{name:36s} {t:10.2f} us{extra}")


if __name__ == "__main__":
    main()
