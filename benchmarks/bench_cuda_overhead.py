"""Per-call time of a jitted 20-op function on small arrays (4096 float32): poot's `@pt.jit` (its compiled
program replayed, as a CUDA graph where the program layer records one) vs
`torch.compile(mode="reduce-overhead")` (CUDA graphs) and PyTorch eager. A call here is: call the
function and have its result ready (poot realizes; PyTorch synchronizes), timed by the wall clock over
many calls. Skips while `pt.jit` (the decorator) is not built."""
import time
import types

import numpy as np
import pytest

import poot as pt

from bench_cuda_common import compiled, need_cuda, need_torch, record

N, CALLS = 4096, 2000


def twenty_ops(x, y, m):
    for _ in range(4):                            # 5 ops per round, 20 in all
        x = m.tanh(x * y + 0.5) - x / (1.0 + y * y)
    return x


def _per_call_us(call, sync):
    for _ in range(20):
        call()
    sync()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        call()
        sync()
    return (time.perf_counter() - t0) / CALLS * 1e6


@pytest.mark.parametrize("impl", ["torch", "torch_reduce_overhead", "poot_jit"])
def test_jitted_20_ops_per_call(benchmark, impl):
    benchmark.group = "cuda-per-call-20-ops-4096-f32"
    dev = need_cuda()
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)
    ref = twenty_ops(x.astype(np.float64), y.astype(np.float64), np)
    if impl == "poot_jit":
        jit = getattr(pt, "jit", None)
        if jit is None or isinstance(jit, types.ModuleType) or not callable(jit):
            pytest.skip("pt.jit (the @poot.jit decorator) is not built yet")
        f = jit(lambda a, b: twenty_ops(a, b, pt))
        with pt.device("cuda"):
            px, py = pt.realize(pt.array(x)), pt.realize(pt.array(y))
            call = lambda: pt.realize(f(px, py))  # noqa: E731
            np.testing.assert_allclose(call().numpy(), ref, rtol=1e-5, atol=1e-5)
            us = _per_call_us(call, lambda: None)
            benchmark.pedantic(call, rounds=200, iterations=1)
    else:
        torch = need_torch()
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        fn = lambda a, b: twenty_ops(a, b, torch)  # noqa: E731
        f = fn if impl == "torch" else compiled(torch, fn, mode="reduce-overhead")
        call = lambda: f(tx, ty)  # noqa: E731
        np.testing.assert_allclose(call().cpu().numpy(), ref, rtol=1e-5, atol=1e-5)
        us = _per_call_us(call, torch.cuda.synchronize)
        benchmark.pedantic(lambda: (call(), torch.cuda.synchronize()), rounds=200, iterations=1)
    rec = {"group": benchmark.group, "impl": impl, "gpu": dev.gpu, "us_per_call": us, "calls": CALLS}
    benchmark.extra_info.update(rec)
    record(rec)
    print(f"\n{benchmark.group} {impl}: {us:.1f} us per call")
