"""Sums over float32 on the wgpu device, as % of its copy kernel's bandwidth (bytes: the input read once).
`kernel`: one KIR kernel, GPU-shaped -- each thread accumulates a strided (coalesced) slice, then a
shared-memory tree with barriers reduces the workgroup to one partial -- timed by GPU timestamps
(bench_wgpu_common.py); the few partials are summed on the host. `poot`: x.sum() through the array
API, end to end by the wall clock; `poot-kernels`: the kernels that sum launches (poot's split reduction), by
GPU timestamps."""
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Len

from bench_wgpu_common import (WG, copy_kernel_bandwidth, elements, gpu_ms, need_timestamps, need_wgpu, poot_launches,
                               prepared, report, report_poot_kernels, time_calls, upload)

GROUPS = 1024


def partial_sums():
    f, u = dt.float32, dt.uint32
    kb = B.KernelBuilder("bench_partial_sums", workgroup=(WG, 1, 1), checks=False)
    x, o = kb.buffer("x", f, Access.READ), kb.buffer("partials", f, Access.WRITE)
    tile = kb.shared("tile", f, WG)
    lid = kb.let("lid", B.index("local", 0))
    stride = kb.let("stride", B.mul(B.index("num_groups", 0), B.const(WG, u)))
    acc = kb.local("acc", f, 0.0)
    j = kb.local("j", u, B.index("thread", 0))
    with kb.while_(B.lt(j, Len(x))):
        kb.assign(acc, B.add(acc, kb.load(x, j, f)))
        kb.assign(j, B.add(j, stride))
    kb.store(tile, lid, acc)
    kb.barrier()
    s = kb.local("s", u, WG // 2)
    with kb.while_(B.binary("gt", s, B.const(0, u))):
        with kb.if_(B.lt(lid, s)):
            kb.store(tile, lid, B.add(kb.load(tile, lid, f), kb.load(tile, B.add(lid, s), f)))
        kb.barrier()
        kb.assign(s, B.binary("shr", s, B.const(1, u)))
    with kb.if_(B.binary("eq", lid, B.const(0, u))):
        kb.store(o, B.index("group", 0), kb.load(tile, B.const(0, u), f))
    return kb.build()


@pytest.fixture(scope="module")
def data():
    dev = need_wgpu()
    n = elements(dev, 1)
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    return dev, n, host, upload(dev, host)


def test_sum_kernel(benchmark, data):
    dev, n, host, xb = data
    need_timestamps(dev)
    out = dev.allocate(4 * GROUPS)
    program, args = prepared(dev, partial_sums(), [xb, out], GROUPS, [n, GROUPS])
    ms = gpu_ms(dev, program, args, GROUPS)
    total = float(np.array(dev.read(out)).view(np.float32).astype(np.float64).sum())
    assert abs(total - float(host.astype(np.float64).sum())) <= 1e-5 * n
    report(benchmark, dev, f"wgpu-sum-{n >> 20}M-f32", "kernel", ms, 4 * n,
           extra={"groups": GROUPS, "workgroup": WG, "timing": "gpu-timestamps"}, ceiling=copy_kernel_bandwidth(dev))


def test_sum_through_the_array_api(benchmark, data):
    dev, n, host, _ = data
    need_timestamps(dev)
    with pt.device("wgpu"):
        x = pt.realize(pt.array(host))
        call = lambda: pt.realize(x.sum())  # noqa: E731
        got = float(call().numpy())
        ms = time_calls(call)
        launches = poot_launches(dev, call)
    assert abs(got - float(host.astype(np.float64).sum())) <= 1e-4 * n
    group = f"wgpu-sum-{n >> 20}M-f32"
    report(benchmark, dev, group, "poot", ms, 4 * n, call=call, call_ms=ms,
           extra={"timing": "wall-clock"}, ceiling=copy_kernel_bandwidth(dev))
    report_poot_kernels(dev, group, launches, 4 * n)
