"""Fused elementwise chains over float32 on the wgpu device, as % of its copy kernel's bandwidth (bytes:
each input read once, the output written once). `kernel`: the chain as one KIR kernel, one element per
thread, timed by GPU timestamps (bench_wgpu_common.py); `poot`: the same expression through the array
API, end to end by the wall clock; `poot-kernels`: the kernels that call launches (poot's own generated
ones), by GPU timestamps."""
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Binary, Len

from bench_wgpu_common import (WG, copy_kernel_bandwidth, elements, gpu_ms, need_timestamps, need_wgpu, poot_launches,
                               prepared, report, report_poot_kernels, time_calls, upload)

CHAINS = {
    "mixed": lambda a, b, c, m: 2 * a + b * c - m.exp(a) / (1 + b * b),
    "poly": lambda a, b, c, m: a * a * a + 3 * a * b - c,
}


def chain_kernel(name: str, checks: bool):
    f = dt.float32
    kb = B.KernelBuilder(f"bench_{name}", workgroup=(WG, 1, 1), checks=checks)
    a, b, c = (kb.buffer(n, f, Access.READ) for n in "abc")
    o = kb.buffer("out", f, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        va, vb, vc = kb.load(a, i, f), kb.load(b, i, f), kb.load(c, i, f)
        if name == "mixed":
            val = B.sub(B.add(B.mul(2.0, va), B.mul(vb, vc)),
                        Binary("div", B.unary("exp", va), B.add(1.0, B.mul(vb, vb)), f))
        else:
            val = B.sub(B.add(B.mul(B.mul(va, va), va), B.mul(B.mul(3.0, va), vb)), vc)
        kb.store(o, i, val)
    return kb.build()


@pytest.fixture(scope="module")
def data():
    dev = need_wgpu()
    n = elements(dev, 4)
    rng = np.random.default_rng(0)
    host = tuple(rng.random(n, dtype=np.float32) for _ in range(3))
    return dev, n, host, tuple(upload(dev, x) for x in host)


@pytest.mark.parametrize("checks", [False, True], ids=["unchecked", "checked"])
@pytest.mark.parametrize("chain", CHAINS)
def test_chain_kernel(benchmark, data, chain, checks):
    dev, n, host, bufs = data
    need_timestamps(dev)
    out = dev.allocate(4 * n)
    groups = -(-n // WG)
    program, args = prepared(dev, chain_kernel(chain, checks), list(bufs) + [out], groups, [n] * 4)
    ms = gpu_ms(dev, program, args, groups)
    got = np.array(dev.read(out)).view(np.float32)
    want = CHAINS[chain](*(x.astype(np.float64) for x in host), np)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    report(benchmark, dev, f"wgpu-elementwise-{chain}-{n >> 20}M-f32", f"kernel-{'checked' if checks else 'unchecked'}",
           ms, 16 * n, extra={"groups": groups, "workgroup": WG, "timing": "gpu-timestamps"},
           ceiling=copy_kernel_bandwidth(dev))


@pytest.mark.parametrize("chain", CHAINS)
def test_chain_through_the_array_api(benchmark, data, chain):
    dev, n, host, _ = data
    need_timestamps(dev)
    with pt.device("wgpu"):
        a, b, c = (pt.realize(pt.array(x)) for x in host)
        call = lambda: pt.realize(CHAINS[chain](a, b, c, pt))  # noqa: E731
        got = call().numpy()
        ms = time_calls(call)
        launches = poot_launches(dev, call)
    want = CHAINS[chain](*(x.astype(np.float64) for x in host), np)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    group = f"wgpu-elementwise-{chain}-{n >> 20}M-f32"
    report(benchmark, dev, group, "poot", ms, 16 * n, call=call, call_ms=ms,
           extra={"timing": "wall-clock"}, ceiling=copy_kernel_bandwidth(dev))
    report_poot_kernels(dev, group, launches, 16 * n)
