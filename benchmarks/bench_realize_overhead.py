"""`pt.realize` of a 5-op chain, realized on every repetition and synchronized once at the end, as a
user's loop does, on the GPU devices (cuda, wgpu, vulkan), from 1K to 256M float32 elements (capped by
the device's memory and largest binding, and by POOT_BENCH_ELEMENTS):

    r = pt.realize(2*a + b*a - pt.exp(a)/(1 + b*b))      # REPS times, then pt.synchronize()

A realize queues its kernels and returns; nothing waits until the final synchronize, so successive
realizes overlap and large sizes should approach the copy bandwidth, small ones show the host cost per
realize. Each row gives the time per realize, GB/s (12 bytes per element: a and b read, the result
written) and the fraction of the device's copy bandwidth measured in the same run (its own
device-to-device buffer copy, timed the same way: COPIES copies, one synchronize). PyTorch on CUDA runs
the same loop (torch.cuda.synchronize at the end) when it is importable. Run:

    POOT_BENCH_OUT=benchmarks/results/realize-h200.json python -m pytest -q -s benchmarks/bench_realize_overhead.py \\
        --benchmark-group-by=group --benchmark-columns=min,rounds

POOT_BENCH_DEVICES picks the devices (default "cuda,wgpu,vulkan"; absent ones skip).
"""
import os
import time

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import DeviceUnavailableError
from bench_cuda_common import record  # noqa: E402 (benchmarks/ is on the path)

SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24, 1 << 26, 1 << 28]
KINDS = [d.strip() for d in os.environ.get("POOT_BENCH_DEVICES", "cuda,wgpu,vulkan").split(",") if d.strip()]
CAP = int(os.environ.get("POOT_BENCH_ELEMENTS", str(1 << 28)))
ROUNDS = int(os.environ.get("POOT_BENCH_ROUNDS", "3"))
TARGET_S = float(os.environ.get("POOT_BENCH_TARGET_S", "0.15"))    # wall time of one round
COPIES = 20
_copy: dict = {}
_inputs: dict = {}


def chain(a, b, exp):
    return 2 * a + b * a - exp(a) / (1 + b * b)


def need(kind: str):
    try:
        return devices.get(kind)
    except DeviceUnavailableError as e:
        pytest.skip(f"no {kind} device: {e}")


def memory_bytes(dev) -> int:
    extra = dev.caps.extra
    if "memory_bytes" in extra:
        return extra["memory_bytes"]
    if hasattr(dev, "memory_info"):
        return dev.memory_info()[1]
    return 16 << 30 if extra.get("device_type", extra.get("adapter_type", "")).lower().startswith("discrete") \
        else 2 << 30


def fits(dev, n: int) -> bool:
    """Room for the inputs, a few results in flight and the copy's buffers (8 arrays of n)."""
    return n <= CAP and 4 * n <= dev.caps.max_buffer_bytes and 8 * 4 * n <= memory_bytes(dev) // 2


def host_inputs(n: int):
    if n not in _inputs:
        rng = np.random.default_rng(0)
        _inputs.clear()
        _inputs[n] = (rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32))
    return _inputs[n]


def loop_seconds(step, sync, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        step()
    sync()
    return time.perf_counter() - t0


def time_loop(step, sync) -> tuple[float, int]:
    """(best seconds per repetition over ROUNDS rounds, repetitions per round); a round is REPS
    repetitions then one sync, REPS chosen so a round takes about TARGET_S."""
    step()
    sync()
    reps, spent = 1, 0.0
    while spent < TARGET_S / 4 and reps < 1 << 16:
        reps *= 2
        spent = loop_seconds(step, sync, reps)
    reps = max(3, int(reps * TARGET_S / max(spent, 1e-9)))
    return min(loop_seconds(step, sync, reps) / reps for _ in range(ROUNDS)), reps


def copy_bandwidth(dev) -> float:
    """Bytes read + written per second of the device's own buffer copy, COPIES copies of the largest
    array the device takes here (at most 1 GiB), one synchronize."""
    if dev.name not in _copy:
        n = max(s for s in SIZES if fits(dev, s) or s == SIZES[0])
        src, dst = dev.allocate(4 * n), dev.allocate(4 * n)
        dev.write(src, np.ones(n, np.float32))
        best, _ = time_loop(lambda: [dev.copy(dst, src, 4 * n) for _ in range(COPIES)], dev.synchronize)
        _copy[dev.name] = 2 * 4 * n * COPIES / best
        record({"group": "copy-bandwidth", "device": dev.name, "bytes": 4 * n, "bytes_per_s": _copy[dev.name],
                "gpu": describe(dev)})
        print(f"\n{dev.name} copy bandwidth: {_copy[dev.name] / 1e9:.1f} GB/s ({4 * n:,}-byte buffers)")
        dev.free(src)
        dev.free(dst)
    return _copy[dev.name]


def describe(dev) -> str:
    extra = dev.caps.extra
    return str(extra.get("gpu") or extra.get("adapter") or dev.name)


def report(benchmark, group, impl, dev_name, seconds, reps, n, ceiling, gpu, step):
    nbytes = 12 * n
    rec = {"group": group, "impl": impl, "device": dev_name, "gpu": gpu, "elements": n, "reps": reps,
           "us_per_realize": seconds * 1e6, "bytes_per_s": nbytes / seconds,
           "pct_of_copy_bandwidth": 100 * nbytes / seconds / ceiling, "copy_bytes_per_s": ceiling}
    record(rec)
    print(f"\n{group} {impl}: {seconds * 1e6:9.1f} us per realize, {nbytes / seconds / 1e9:8.1f} GB/s = "
          f"{rec['pct_of_copy_bandwidth']:5.1f}% of {dev_name} copy ({ceiling / 1e9:.0f} GB/s)")
    benchmark.group = group
    benchmark.extra_info.update(rec)
    benchmark.pedantic(step, rounds=3, iterations=1)


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K")
@pytest.mark.parametrize("kind", KINDS)
def test_realize_chain(benchmark, kind, n):
    dev = need(kind)
    if not fits(dev, n):
        pytest.skip(f"{n:,} float32 elements do not fit {dev.name} here")
    ceiling = copy_bandwidth(dev)
    an, bn = host_inputs(n)
    with pt.device(kind):
        a, b = pt.asarray(an), pt.asarray(bn)
        sync = lambda: pt.synchronize(kind)    # noqa: E731  (this device only)
        sync()
        out = {}

        def step():
            out["r"] = pt.realize(chain(a, b, pt.exp))
        step()
        k = slice(None, None, max(1, n // 4096))
        np.testing.assert_allclose(out["r"].numpy()[k], chain(an[k], bn[k], np.exp), rtol=1e-5, atol=1e-5)
        seconds, reps = time_loop(step, sync)
        gpu = describe(dev)
        group = f"realize-chain-{n}"
        report(benchmark, group, f"poot-{kind}", dev.name, seconds, reps, n, ceiling, gpu, step)
        del a, b, out
    if kind == "cuda":
        torch_row(n, an, bn, ceiling, gpu)


def torch_row(n, an, bn, ceiling, gpu) -> None:
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    a, b = torch.from_numpy(an).cuda(), torch.from_numpy(bn).cuda()
    out = {}

    def step():
        out["r"] = chain(a, b, torch.exp)
    seconds, reps = time_loop(step, torch.cuda.synchronize)
    nbytes = 12 * n
    rec = {"group": f"realize-chain-{n}", "impl": "torch-cuda", "device": "cuda:0", "gpu": gpu, "elements": n,
           "reps": reps, "us_per_realize": seconds * 1e6, "bytes_per_s": nbytes / seconds,
           "pct_of_copy_bandwidth": 100 * nbytes / seconds / ceiling, "copy_bytes_per_s": ceiling}
    record(rec)
    print(f"realize-chain-{n} torch-cuda: {seconds * 1e6:9.1f} us per call,    {nbytes / seconds / 1e9:8.1f} GB/s = "
          f"{rec['pct_of_copy_bandwidth']:5.1f}% of cuda:0 copy")
    del a, b, out
    torch.cuda.empty_cache()
