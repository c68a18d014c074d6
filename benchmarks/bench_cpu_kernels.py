"""CPU kernel benchmarks: a hand-built KIR kernel for `2*a + b*c - exp(a)/(1 + b*b)` over 10M float32
on 2 threads, side by side with NumPy and numexpr (2 threads) in the same run; plus the compile
latency of a small elementwise kernel and the per-dispatch overhead of a tiny one.

    python -m pytest benchmarks/bench_cpu_kernels.py --benchmark-columns=min,median,mean
"""
import os

import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.jit.compile import compile_kernel
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Binary, Len
from poot.jit.launch import launch

N = 10_000_000
THREADS = 2
F = dt.float32


def chain_kernel(name="chain"):
    """out[i] = 2*a + b*c - exp(a)/(1 + b*b); workgroup (1,1,1), thread t walks elements
    [t*chunk, min((t+1)*chunk, n)) with an inner loop (the CPU shape of an elementwise kernel)."""
    kb = B.KernelBuilder(name, workgroup=(1, 1, 1), checks=False)
    a, b, c = (kb.buffer(n, F, Access.READ) for n in "abc")
    out = kb.buffer("out", F, Access.WRITE)
    chunk = kb.scalar("chunk", dt.uint32)
    start = kb.let("start", B.mul(B.index("thread", 0), chunk))
    stop = kb.let("stop", Binary("min", B.add(start, chunk), Len(out), dt.uint32))
    with kb.for_("i", start, stop) as i:
        va, vb, vc = kb.load(a, i, F), kb.load(b, i, F), kb.load(c, i, F)
        val = B.sub(B.add(B.mul(2.0, va), B.mul(vb, vc)),
                    Binary("div", B.unary("exp", va), B.add(1.0, B.mul(vb, vb)), F))
        kb.store(out, i, val)
    return kb.build()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    return a, b, c, np.empty(N, np.float32)


def test_chain_poot(benchmark, data):
    a, b, c, out = data
    dev = devices.get("cpu")
    bufs = [dev.wrap(x) for x in (a, b, c, out)]
    k = chain_kernel()
    chunk = -(-N // (16 * THREADS)) * 16
    run = lambda: launch(dev, k, bufs, {"chunk": chunk}, THREADS)  # noqa: E731
    run()
    benchmark(run)
    ref = 2 * a + b * c - np.exp(a) / (1 + b * b)
    assert np.allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_chain_numpy(benchmark, data):
    a, b, c, out = data
    benchmark(lambda: np.subtract(2 * a + b * c, np.exp(a) / (1 + b * b), out=out))


def test_chain_numexpr(benchmark, data):
    ne = pytest.importorskip("numexpr")
    a, b, c, out = data
    ne.set_num_threads(THREADS)
    env = {"a": a, "b": b, "c": c}
    benchmark(lambda: ne.evaluate("2*a + b*c - exp(a)/(1 + b*b)", local_dict=env, out=out))


def test_compile_small_elementwise(benchmark):
    """First-compile latency (caches off) of `c = a + b` with a bounds check."""
    counter = iter(range(10**9))

    def make():
        kb = B.KernelBuilder(f"add{next(counter)}", workgroup=(64, 1, 1))
        x, y, z = kb.buffer("a", F, Access.READ), kb.buffer("b", F, Access.READ), kb.buffer("c", F, Access.WRITE)
        i = kb.let("i", B.index("thread", 0))
        with kb.if_(B.lt(i, Len(z))):
            kb.store(z, i, B.add(kb.load(x, i, F), kb.load(y, i, F)))
        return (kb.build(),), {}

    compile_kernel(make()[0][0], use_cache=False)
    benchmark.pedantic(lambda k: compile_kernel(k, use_cache=False), setup=make, rounds=20)


def test_dispatch_overhead_tiny_kernel(benchmark):
    """Per-launch cost of an already-compiled kernel over 10 elements (one workgroup, inline)."""
    dev = devices.get("cpu")
    kb = B.KernelBuilder("tiny", workgroup=(16, 1, 1))
    x, z = kb.buffer("x", F, Access.READ), kb.buffer("z", F, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(z))):
        kb.store(z, i, B.add(kb.load(x, i, F), 1.0))
    k = kb.build()
    a, o = np.ones(10, np.float32), np.zeros(10, np.float32)
    bufs = [dev.wrap(a), dev.wrap(o)]
    launch(dev, k, bufs, (), 1)
    benchmark(lambda: launch(dev, k, bufs, (), 1))
    assert np.all(o == 2)


DISK_HIT_SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from poot import devices
from poot.jit.compile import compile_kernel
from bench_cpu_kernels import chain_kernel
k = chain_kernel("chain_disk")
import poot.jit.launch, poot.jit.llvm.targets.cpu  # imports: once per process, not per kernel
dev = devices.get("cpu"); dev._engine()          # MCJIT engine: likewise
t0 = time.perf_counter()
prog = dev.load(compile_kernel(k))
print(1e3 * (time.perf_counter() - t0))
"""


def test_disk_cache_hit_in_a_new_process(benchmark, tmp_path):
    """Key + read + verify + link of a cached object in a fresh process (after poot's imports and
    the one-time MCJIT engine creation, ~100 ms per process), reported in extra_info['disk_hit_ms']
    (median of 5)."""
    import subprocess
    import sys

    from poot.jit import cache

    env = dict(os.environ, POOT_CACHE_DIR=str(tmp_path), PYTHONPATH=os.path.dirname(__file__))
    old = os.environ.get("POOT_CACHE_DIR")
    os.environ["POOT_CACHE_DIR"] = str(tmp_path)
    try:
        compile_kernel(chain_kernel("chain_disk"))
    finally:
        if old is None:
            del os.environ["POOT_CACHE_DIR"]
        else:
            os.environ["POOT_CACHE_DIR"] = old
        cache.cache_clear(memory=True, disk=False)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = DISK_HIT_SCRIPT.format(root=root)

    def once():
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.split()[-1])

    times = benchmark.pedantic(lambda: [once() for _ in range(5)], rounds=1, iterations=1)
    benchmark.extra_info["disk_hit_ms"] = sorted(times)[2]
    print(f"disk-cache hit in a new process: median {sorted(times)[2]:.2f} ms, min {min(times):.2f} ms")
