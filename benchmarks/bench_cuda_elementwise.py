"""Fused elementwise chains over 256M float32 on the GPU: poot vs PyTorch eager vs torch.compile, as % of
the measured device-to-device copy bandwidth (the issue's target: >= 90%). Bytes counted: each input read
once and the output written once (3 inputs + 1 output = 4 GiB). See bench_cuda_common.py for timing."""
import numpy as np
import pytest

import poot as pt

from bench_cuda_common import (compiled, eager_time, need_cuda, need_torch, random_f32, report, time_poot,
                               time_torch)

N = 256 * 2**20
CHAINS = {
    "mixed": lambda a, b, c, m: 2 * a + b * c - m.exp(a) / (1 + b * b),
    "poly": lambda a, b, c, m: a * a * a + 3 * a * b - c,
}
_data: dict = {}


def host_data():
    if not _data:
        _data["np"] = tuple(random_f32(N, seed) for seed in range(3))
    return _data["np"]


@pytest.fixture(scope="module")
def poot_inputs():
    dev = need_cuda()
    with pt.device("cuda"):
        arrays = tuple(pt.realize(pt.array(x)) for x in host_data())
    return dev, arrays


@pytest.fixture(scope="module")
def torch_inputs():
    torch = need_torch()
    return torch, tuple(torch.from_numpy(x).cuda() for x in host_data())


@pytest.mark.parametrize("impl", ["torch", "torch_compile", "poot"])
@pytest.mark.parametrize("chain", CHAINS)
def test_chain(benchmark, chain, impl, request):
    group, fn, nbytes = f"cuda-elementwise-{chain}-256M-f32", CHAINS[chain], 4 * 4 * N
    dev = need_cuda()
    if impl == "poot":
        dev, (a, b, c) = request.getfixturevalue("poot_inputs")
        with pt.device("cuda"):
            call = lambda: pt.realize(fn(a, b, c, pt))  # noqa: E731
            out = call()
            device_ms, call_ms = time_poot(dev, call)
        ref = fn(*(x.astype(np.float64) for x in host_data()), np)
        got = out.numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        report(benchmark, dev, group, impl, device_ms, nbytes, call=call, call_ms=call_ms,
               baseline_ms=eager_time(group))
        return
    torch, (a, b, c) = request.getfixturevalue("torch_inputs")
    f = (lambda a, b, c: fn(a, b, c, torch)) if impl == "torch" else compiled(torch, lambda a, b, c: fn(a, b, c, torch))
    ms = time_torch(torch, lambda: f(a, b, c))
    if impl == "torch":
        eager_time(group, min(ms))
    report(benchmark, dev, group, impl, ms, nbytes, call=lambda: (f(a, b, c), torch.cuda.synchronize()),
           baseline_ms=eager_time(group))
