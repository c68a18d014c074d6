"""The raw Vulkan device beside the wgpu device, on the same SPIR-V kernels (bench_wgpu_elementwise.py's
chains, bench_wgpu_reductions.py's sum), as % of copy bandwidth, and the per-call time of a replayed
jitted program on both.

Timing. On Vulkan the kernels are timed by GPU timestamps (the device brackets each dispatch with
timestamp queries under POOT_DEBUG=1): the min over ROUNDS dispatches. The ceiling is a copy kernel
(out[i] = x[i]) timed the same way: bytes read + written per second. Every kernel is also timed as
replays by the wall clock (bench_wgpu_common.time_replay), on Vulkan and on wgpu, which is how the wgpu
benchmarks time (wgpu has no timestamps here), so the two devices compare like for like; `*_pct_of_copy_kernel`
is against the Vulkan copy kernel's GPU-timed bandwidth (bench_wgpu_common's own `pct_of_copy_bandwidth`
is against the first device's wall-clock buffer copy of the run). The jitted program is timed per call,
end to end. Run (one group per figure):

    POOT_BENCH_OUT=benchmarks/results/vulkan-h200.json python -m pytest -q -s benchmarks/bench_vulkan.py \\
        --benchmark-group-by=group --benchmark-columns=min,median,rounds

POOT_BENCH_ELEMENTS caps the float32 elements per array (default 64M; lavapipe binds at most 32M). The
inputs are made once for all tests, and results are checked against NumPy on every CHECK_STRIDE-th
element (float64 references of 64M elements took longer than the GPU work: the H200 run fits 90 s).
"""
import os
import time

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import DeviceUnavailableError
from poot.jit.abi import pack_meta
from poot.jit.compile import compile_kernel
from poot.jit.launch import trap_buffer

from bench_wgpu_common import ROUNDS, WARM_UP_MS, copy_kernel, elements, report, time_calls, time_replay, upload
from bench_wgpu_elementwise import CHAINS, WG, chain_kernel
from bench_wgpu_reductions import GROUPS, partial_sums

CAP = int(os.environ.get("POOT_BENCH_ELEMENTS", str(64 << 20)))
CHECK_STRIDE = 61
_ceiling: dict = {}
_inputs: dict = {}


def inputs(n: int) -> tuple:
    """Three float32 arrays of `n` random values, made once per size."""
    if n not in _inputs:
        rng = np.random.default_rng(0)
        _inputs[n] = tuple(rng.random(n, dtype=np.float32) for _ in range(3))
    return _inputs[n]


def need(kind: str):
    try:
        return devices.get(kind)
    except DeviceUnavailableError as e:
        pytest.skip(f"no {kind} device: {e}")


def gpu_ms(dev, dispatch, rounds: int = ROUNDS) -> list[float]:
    """GPU milliseconds of each of `rounds` runs of `dispatch()` (one kernel), from timestamp queries."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < WARM_UP_MS / 1e3:   # raise the GPU's clocks first (bench_wgpu_common)
        for _ in range(20):
            dispatch()
        dev.synchronize()
    old = os.environ.get("POOT_DEBUG")
    os.environ["POOT_DEBUG"] = "1"
    try:
        dispatch()
        dev.synchronize()
        del dev.kernel_times[:]
        for _ in range(rounds):
            dispatch()
            dev.synchronize()
        return [us / 1e3 for _, _, us in dev.kernel_times[-rounds:]]
    finally:
        if old is None:
            os.environ.pop("POOT_DEBUG")
        else:
            os.environ["POOT_DEBUG"] = old


def prepared(dev, kernel, buffers, groups: int, lengths):
    """The program and dispatch of `kernel` over `buffers` (meta and trap added) on `dev`."""
    program = dev.load(compile_kernel(kernel, "spirv", arch=dev.caps.compile_arch))
    args = list(buffers) + [upload(dev, pack_meta(kernel, lengths, (), groups)), trap_buffer(dev)]
    return lambda: dev.dispatch(program, args, (groups, 1, 1))


def ceiling(dev) -> float:
    """Bytes per second of the copy kernel on Vulkan, by GPU timestamps."""
    if "bps" not in _ceiling:
        n = elements(dev, 2, CAP)
        x, out = upload(dev, np.ones(n, np.float32)), dev.allocate(4 * n)
        ms = gpu_ms(dev, prepared(dev, copy_kernel(), [x, out], -(-n // WG), [n, n]))
        _ceiling["bps"] = 8 * n / (min(ms) * 1e-3)
        print(f"\nvulkan copy kernel: {min(ms):.3f} ms GPU, {_ceiling['bps'] / 1e9:.1f} GB/s")
    return _ceiling["bps"]


def run_kernel(benchmark, kind: str, group: str, make, nbytes: int, check) -> None:
    """`make(dev)` -> (dispatch, read_result): time it on `kind` by the wall clock (replays), and on
    Vulkan by GPU timestamps too; both against the Vulkan copy kernel's bytes per second."""
    bps = ceiling(need("vulkan"))
    dev = need(kind)
    dispatch, result = make(dev)
    extra = {"device_name": dev.caps.extra.get("gpu") or dev.caps.extra.get("adapter")}
    if kind == "vulkan":
        gpu = gpu_ms(dev, dispatch)
        extra.update(gpu_ms_min=min(gpu), gpu_pct_of_copy_kernel=100 * nbytes / (min(gpu) * 1e-3) / bps)
        print(f"\n{group} vulkan: {min(gpu):.3f} ms GPU = {extra['gpu_pct_of_copy_kernel']:.1f}% of the copy kernel")
    dispatch()
    dev.synchronize()
    check(result())
    wall = time_replay(dev, dispatch)
    extra["wall_pct_of_copy_kernel"] = 100 * nbytes / (min(wall) * 1e-3) / bps
    report(benchmark, dev, group, f"{kind}-kernel", wall, nbytes, extra=extra)


@pytest.mark.parametrize("kind", ["vulkan", "wgpu"])
@pytest.mark.parametrize("chain", CHAINS)
def test_chain_kernel(benchmark, chain, kind):
    n = elements(need("vulkan"), 4, CAP)
    host = inputs(n)

    def make(dev):
        out = dev.allocate(4 * n)
        bufs = [upload(dev, x) for x in host] + [out]
        return (prepared(dev, chain_kernel(chain, False), bufs, -(-n // WG), [n] * 4),
                lambda: np.array(dev.read(out)).view(np.float32)[::CHECK_STRIDE])

    want = CHAINS[chain](*(x[::CHECK_STRIDE].astype(np.float64) for x in host), np)
    run_kernel(benchmark, kind, f"elementwise-{chain}-{n >> 20}M-f32", make, 16 * n,
               lambda got: np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5))


@pytest.mark.parametrize("kind", ["vulkan", "wgpu"])
def test_sum_kernel(benchmark, kind):
    n = elements(need("vulkan"), 1, CAP)
    host = inputs(n)[0]

    def make(dev):
        out = dev.allocate(4 * GROUPS)
        return (prepared(dev, partial_sums(), [upload(dev, host), out], GROUPS, [n, GROUPS]),
                lambda: np.array(dev.read(out)).view(np.float32).astype(np.float64).sum())

    run_kernel(benchmark, kind, f"sum-{n >> 20}M-f32", make, 4 * n,
                 lambda total: abs(total - host.astype(np.float64).sum()) <= 1e-5 * n or pytest.fail(f"sum {total}"))


@pytest.mark.parametrize("kind", ["vulkan", "wgpu"])
def test_replayed_jitted_program_per_call(benchmark, kind):
    """A small jitted program (a row softmax of 256 x 1024): what a call costs once it replays."""
    dev = need(kind)
    x = np.random.default_rng(2).random((256, 1024), dtype=np.float32)

    @pt.jit
    def softmax(a):
        e = pt.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    with pt.device(kind):
        a = pt.realize(pt.array(x))
        call = lambda: softmax(a).numpy()  # noqa: E731
        got = call()
        ms = time_calls(call)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
    report(benchmark, dev, "jit-softmax-256x1024-per-call", kind, ms, 2 * x.nbytes, call=call, call_ms=ms)
