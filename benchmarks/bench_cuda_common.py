"""Shared parts of the CUDA benchmarks (bench_cuda_*.py): the device, CUDA-event timing for poot and PyTorch,
the measured copy bandwidth every %-of-bandwidth figure is taken against, and the JSON results file.

Timing. PyTorch: CUDA events around `reps` calls on its current stream, divided by `reps` (calls are
asynchronous, so launch overhead overlaps with earlier work). poot: each realize ends with a
synchronize and a read of the trap word, so two figures are kept: `device_ms`, from a CUDA event
recorded on poot's stream before the call's first launch to one after its last launch (the plan's
kernels and the gaps between them), and `call_ms`, events around the whole call. Bandwidth figures use
device_ms for poot and the per-call time for PyTorch; the minimum over rounds is reported next to the
median.

Results: each test appends one record (group, implementation, times, bytes, bandwidth, % of the
measured copy bandwidth, ratios) to the JSON list at env POOT_BENCH_OUT, if set; the lead commits it
under benchmarks/results/. Run on a GPU machine:

    POOT_BENCH_OUT=benchmarks/results/cuda-h200.json python -m pytest -q benchmarks/bench_cuda_*.py \\
        --benchmark-group-by=group --benchmark-columns=min,median,rounds
"""
from __future__ import annotations

import json
import os
import statistics
import threading

import numpy as np
import pytest

ROUNDS = int(os.environ.get("POOT_BENCH_ROUNDS", "10"))
_lock = threading.Lock()


def need_cuda():
    """The poot CUDA device, or skip saying why."""
    from poot import devices
    from poot.errors import DeviceUnavailableError

    try:
        return devices.get("cuda")
    except DeviceUnavailableError as e:
        pytest.skip(f"no CUDA device: {e}")


def need_torch():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


def compiled(torch, fn, **kw):
    try:
        return torch.compile(fn, **kw)
    except Exception as e:          # no compiler backend (triton) in this environment
        pytest.skip(f"torch.compile is unavailable: {e}")


class _Events:
    """CUDA events on poot's stream (through cuda-python's driver API)."""

    def __init__(self, dev):
        from cuda.bindings import driver

        self.drv, self.dev = driver, dev
        self.start, self.first, self.last, self.end = (dev._ok(driver.cuEventCreate(0), "cuEventCreate")
                                                       for _ in range(4))

    def record(self, event):
        self.dev._ok(self.drv.cuEventRecord(event, self.dev.stream), "cuEventRecord")

    def ms(self, a, b) -> float:
        self.dev._ok(self.drv.cuEventSynchronize(b), "cuEventSynchronize")
        return float(self.dev._ok(self.drv.cuEventElapsedTime(a, b), "cuEventElapsedTime"))


def time_poot(dev, call, rounds=ROUNDS, warmup=2):
    """(device_ms per round, call_ms per round) of `call()` on poot's CUDA device (see module doc)."""
    ev = _Events(dev)
    dispatch, state = dev.dispatch, {}

    def spy(program, buffers, groups):
        if not state.get("started"):
            ev.record(ev.first)
            state["started"] = True
        dispatch(program, buffers, groups)
        ev.record(ev.last)

    def spy_replay(rec, rebind=None):
        if not state.get("started"):
            ev.record(ev.first)
            state["started"] = True
        replay(rec, rebind)
        ev.record(ev.last)

    for _ in range(warmup):
        call()
    replay = dev.replay
    dev.dispatch, dev.replay = spy, spy_replay
    device_ms, call_ms = [], []
    try:
        for _ in range(rounds):
            state.clear()
            ev.record(ev.start)
            call()
            ev.record(ev.end)
            call_ms.append(ev.ms(ev.start, ev.end))
            device_ms.append(ev.ms(ev.first, ev.last) if state.get("started") else float("nan"))
    finally:
        del dev.dispatch, dev.replay
    return device_ms, call_ms


def time_torch(torch, call, rounds=ROUNDS, reps=5, warmup=3):
    """Milliseconds per call of `call()` on PyTorch's current stream, one figure per round."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            call()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / reps)
    return out


def graph_ms_poot(dev, call, reps=20, rounds=ROUNDS):
    """Milliseconds per launch of the kernels one `call()` launches, `reps` copies of them captured in one CUDA
    graph and replayed between two events: the GPU-side rate, unbounded by the host's ~8 us per launch."""
    from bench_wgpu_common import poot_launches     # device-neutral: captures dev.dispatch

    launches = poot_launches(dev, call)
    with dev.record() as graph:
        for _ in range(reps):
            for launch in launches:
                dev.dispatch(*launch)
    dev.replay(graph)
    ev, out = _Events(dev), []
    for _ in range(rounds):
        ev.record(ev.start)
        dev.replay(graph)
        ev.record(ev.end)
        out.append(ev.ms(ev.start, ev.end) / reps)
    return out


def graph_ms_torch(torch, fn, reps=20, rounds=ROUNDS):
    """Milliseconds per call of `fn()`, `reps` calls captured in one torch.cuda.CUDAGraph and replayed."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    return [t / reps for t in time_torch(torch, graph.replay, rounds=rounds, reps=1, warmup=2)]


_copy_cache: dict = {}


def copy_bandwidth(dev) -> float:
    """The device-to-device copy bandwidth (bytes read + written per second) measured on this GPU: the
    better of poot's cuMemcpyDtoDAsync and PyTorch's copy_ of 1 GiB; the ceiling for %-of-bandwidth."""
    if "bps" in _copy_cache:
        return _copy_cache["bps"]
    n = 1 << 30
    src, dst = dev.allocate(n), dev.allocate(n)
    ev = _Events(dev)
    dev.copy(dst, src, n)
    best = []
    for _ in range(ROUNDS):
        ev.record(ev.start)
        dev.copy(dst, src, n)
        ev.record(ev.end)
        best.append(ev.ms(ev.start, ev.end))
    rates = {"poot_memcpy": 2 * n / (min(best) * 1e-3)}
    dev.free(src)
    dev.free(dst)
    try:
        import torch

        if torch.cuda.is_available():
            a, b = torch.empty(n // 4, device="cuda"), torch.empty(n // 4, device="cuda")
            t = time_torch(torch, lambda: b.copy_(a))
            rates["torch_copy"] = 2 * n / (min(t) * 1e-3)
            del a, b
            torch.cuda.empty_cache()
    except ImportError:
        pass
    _copy_cache["bps"] = max(rates.values())
    record({"group": "copy-bandwidth-1GiB", "impl": "ceiling", "rates_bytes_per_s": rates,
            "bytes_per_s": _copy_cache["bps"], "gpu": dev.gpu})
    return _copy_cache["bps"]


def report(benchmark, dev, group, impl, times_ms, nbytes, *, call=None, call_ms=None, baseline_ms=None, extra=None):
    """Attach the figures to the pytest-benchmark entry (which also times `call` by the wall clock, a few
    rounds) and append a record to POOT_BENCH_OUT."""
    best = min(times_ms)
    ceiling = copy_bandwidth(dev)
    rec = {"group": group, "impl": impl, "gpu": dev.gpu, "ms_min": best, "ms_median": statistics.median(times_ms),
           "rounds": len(times_ms), "bytes": nbytes, "bytes_per_s": nbytes / (best * 1e-3),
           "pct_of_copy_bandwidth": 100 * nbytes / (best * 1e-3) / ceiling}
    if call_ms is not None:
        rec["call_ms_min"], rec["call_ms_median"] = min(call_ms), statistics.median(call_ms)
    if baseline_ms is not None:
        rec["torch_eager_ms_over_this"] = baseline_ms / best
    rec.update(extra or {})
    benchmark.group = group
    benchmark.extra_info.update(rec)
    benchmark.pedantic(call or (lambda: None), rounds=3 if call else 1, iterations=1)
    record(rec)
    print(f"\n{group} {impl}: {best:.3f} ms, {rec['bytes_per_s'] / 1e12:.2f} TB/s = "
          f"{rec['pct_of_copy_bandwidth']:.1f}% of copy bandwidth")
    return rec


def record(rec: dict) -> None:
    path = os.environ.get("POOT_BENCH_OUT")
    if not path:
        return
    with _lock:
        data = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else []
        data.append(rec)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(data, f, indent=1, default=float)


def random_f32(n, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).random(n, dtype=np.float32)


_torch_eager: dict = {}


def eager_time(key, ms=None):
    """Remember (with ms) or look up PyTorch eager's time for a group, for the ratio columns."""
    if ms is not None:
        _torch_eager[key] = ms
    return _torch_eager.get(key)
