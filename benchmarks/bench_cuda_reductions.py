"""Reductions and row-wise normalizations on the GPU: poot vs PyTorch eager vs torch.compile.

- sum of 256M float32 (1 GiB read; target >= 85% of the measured copy bandwidth);
- sums along each axis of a 16384 x 16384 float32 matrix (1 GiB read; same target);
- softmax and layer_norm (no affine parameters, eps 1e-5) over the rows of 8192 x 8192 float32
  (256 MiB read + 256 MiB written at the least).
Bytes counted: each input read once, each output written once. See bench_cuda_common.py for timing."""
import numpy as np
import pytest

import poot as pt

from bench_cuda_common import (compiled, eager_time, need_cuda, need_torch, random_f32, report, time_poot,
                               time_torch)

IMPLS = ["torch", "torch_compile", "poot"]
# name -> (shape, poot fn, torch fn, NumPy reference in float64, bytes moved at the least)
CASES = {
    "sum-256M": ((256 * 2**20,), lambda x: x.sum(), lambda t, x: x.sum(), lambda x: x.sum(), 4 * 256 * 2**20),
    "sum-axis0-16384x16384": ((16384, 16384), lambda x: x.sum(axis=0), lambda t, x: x.sum(dim=0),
                              lambda x: x.sum(axis=0), 4 * 16384 * (16384 + 1)),
    "sum-axis1-16384x16384": ((16384, 16384), lambda x: x.sum(axis=1), lambda t, x: x.sum(dim=1),
                              lambda x: x.sum(axis=1), 4 * 16384 * (16384 + 1)),
    "softmax-rows-8192x8192": ((8192, 8192), lambda x: pt.nn.softmax(x, axis=-1),
                               lambda t, x: t.softmax(x, dim=-1), None, 2 * 4 * 8192 * 8192),
    "layer_norm-rows-8192x8192": ((8192, 8192), lambda x: pt.nn.layer_norm(x, eps=1e-5),
                                  lambda t, x: t.nn.functional.layer_norm(x, (x.shape[-1],), eps=1e-5), None,
                                  2 * 4 * 8192 * 8192),
}
_host: dict = {}


def host(shape):
    if shape not in _host:
        _host.clear()
        _host[shape] = random_f32(int(np.prod(shape)), seed=1).reshape(shape)
    return _host[shape]


def reference(case, x):
    x64 = x.astype(np.float64)
    if case.startswith("softmax"):
        e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if case.startswith("layer_norm"):
        m = x64.mean(axis=-1, keepdims=True)
        return (x64 - m) / np.sqrt(x64.var(axis=-1, keepdims=True) + 1e-5)
    return CASES[case][3](x64)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES)
def test_reduction(benchmark, case, impl):
    shape, pfn, tfn, _, nbytes = CASES[case]
    group = f"cuda-{case}-f32"
    dev = need_cuda()
    x = host(shape)
    if impl == "poot":
        with pt.device("cuda"):
            px = pt.realize(pt.array(x))
            call = lambda: pt.realize(pfn(px))  # noqa: E731
            got = call().numpy()
            device_ms, call_ms = time_poot(dev, call)
        n = x.size // (got.size or 1)             # elements summed per output
        np.testing.assert_allclose(got, reference(case, x), rtol=1e-4, atol=4 * np.finfo(np.float32).eps * n ** 0.5)
        report(benchmark, dev, group, impl, device_ms, nbytes, call=call, call_ms=call_ms,
               baseline_ms=eager_time(group))
        return
    torch = need_torch()
    tx = torch.from_numpy(x).cuda()
    f = (lambda x: tfn(torch, x)) if impl == "torch" else compiled(torch, lambda x: tfn(torch, x))
    ms = time_torch(torch, lambda: f(tx))
    if impl == "torch":
        eager_time(group, min(ms))
    report(benchmark, dev, group, impl, ms, nbytes, call=lambda: (f(tx), torch.cuda.synchronize()),
           baseline_ms=eager_time(group))
    del tx
    torch.cuda.empty_cache()
