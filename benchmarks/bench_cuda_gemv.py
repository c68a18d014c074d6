"""Matrix-vector products on the GPU with float32 and bfloat16 weights, at 4096 x 4096 and 14336 x 4096:
poot vs PyTorch eager vs torch.compile, as % of the measured copy bandwidth (target >= 85%) and as the
ratio to PyTorch eager. Bytes counted: the weights, the vector and the result, each once. The vector and
result have the weights' dtype (a bf16 GEMV reads bf16 x and writes bf16 y, accumulating in f32).
poot's rows: `poot`, one GEMV per realize (the GPU idles while the host submits the launch: about 8 us per
cuLaunchKernel on the H200 host, longer than a 4096^2 bf16 GEMV runs); `poot_jit_5`, a jitted function of
five GEMVs with five vectors, replayed as one CUDA graph and timed per GEMV (PyTorch is timed over five
back-to-back calls; the weights stay the same in both). `poot_graph` / `torch_graph`: 20 of the GEMV's
launches captured in one CUDA graph and replayed (bench_cuda_common.graph_ms_*), the kernels' own rate; at
4096^2 bf16 the 33.5 MB of weights fit the H200's 50 MB L2, so repeated launches read them from there.
`poot_asset` / `poot_generated` (and `poot_jit_5_asset`...) when POOT_GPU_GEMV forces one path
(kernelgen/gpu_gemv.py): run the file once per path to compare them; each record names the
POOT_GPU_GEMV_SCHEDULE it ran under ("auto" unless forced)."""
import os

import ml_dtypes
import numpy as np
import pytest

import poot as pt

from bench_cuda_common import (compiled, eager_time, graph_ms_poot, graph_ms_torch, need_cuda, need_torch, report,
                               time_poot, time_torch)

SHAPES = [(4096, 4096), (14336, 4096)]
DTYPES = {"f32": (np.float32, pt.float32, "float32"), "bf16": (ml_dtypes.bfloat16, pt.bfloat16, "bfloat16")}
_host: dict = {}


def host(shape, dtype):
    key = (shape, dtype)
    if key not in _host:
        rng = np.random.default_rng(2)
        npd = DTYPES[dtype][0]
        _host[key] = (rng.standard_normal(shape, dtype=np.float32).astype(npd),
                      rng.standard_normal(shape[1], dtype=np.float32).astype(npd))
    return _host[key]


@pytest.mark.parametrize("impl", ["torch", "torch_compile", "torch_graph", "poot", "poot_jit_5", "poot_graph"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_gemv(benchmark, shape, dtype, impl):
    n, k = shape
    group = f"cuda-gemv-{n}x{k}-{dtype}"
    dev = need_cuda()
    w, x = host(shape, dtype)
    nbytes = w.nbytes + x.nbytes + n * w.itemsize
    if impl.startswith("poot"):
        per = 5 if impl == "poot_jit_5" else 1
        xs = [x] + [np.roll(x, i) for i in range(1, per)]
        with pt.device("cuda"):
            pw, pxs = pt.realize(pt.array(w)), [pt.realize(pt.array(v)) for v in xs]
            if per == 1:
                call = lambda: [pt.realize(pw @ pxs[0])]  # noqa: E731
            else:
                five = pt.jit(lambda m, *vs: tuple(m @ v for v in vs))
                call = lambda: pt.realize(*five(pw, *pxs))  # noqa: E731
            got = [r.numpy().astype(np.float64) for r in call()]
            device_ms, call_ms = time_poot(dev, call)
            if impl == "poot_graph":
                device_ms = graph_ms_poot(dev, call)
        device_ms, call_ms = [t / per for t in device_ms], [t / per for t in call_ms]
        eps = float(ml_dtypes.finfo(w.dtype).eps)
        for v, r in zip(xs, got):
            ref = w.astype(np.float64) @ v.astype(np.float64)
            scale = np.abs(w.astype(np.float64)) @ np.abs(v.astype(np.float64))
            assert np.all(np.abs(r - ref) <= eps * np.abs(ref) + 4 * np.finfo(np.float32).eps * scale), group
        forced = os.environ.get("POOT_GPU_GEMV", "auto").strip().lower()
        label = impl if forced in ("", "auto") else f"{impl}_{forced}"
        schedule = os.environ.get("POOT_GPU_GEMV_SCHEDULE", "auto").strip() or "auto"
        report(benchmark, dev, group, label, device_ms, nbytes, call=call, call_ms=call_ms,
               baseline_ms=eager_time(group), extra={"gemv_schedule": schedule})
        return
    torch = need_torch()
    tdt = getattr(torch, DTYPES[dtype][2])
    tw = torch.from_numpy(w.astype(np.float32)).to("cuda", tdt)
    tx = torch.from_numpy(x.astype(np.float32)).to("cuda", tdt)
    f = compiled(torch, lambda a, b: a @ b) if impl == "torch_compile" else (lambda a, b: a @ b)
    run = lambda: f(tw, tx)  # noqa: E731
    ms = graph_ms_torch(torch, run) if impl == "torch_graph" else time_torch(torch, run, reps=20)
    if impl == "torch":
        eager_time(group, min(ms))
    report(benchmark, dev, group, impl, ms, nbytes, call=lambda: (f(tw, tx), torch.cuda.synchronize()),
           baseline_ms=eager_time(group))
