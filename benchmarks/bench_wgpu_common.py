"""Shared parts of the wgpu benchmarks (bench_wgpu_*.py): the device, timing, the measured copy bandwidth
every %-of-bandwidth figure is taken against, and the JSON results file.

Timing. A kernel is timed through the device's record/replay: its dispatch (pipeline, bind group,
meta buffer all prepared) is recorded once, then `REPS` replays are submitted back to back and one
synchronize waits for them; time per replay = wall time / REPS, so the fixed cost of the final wait
(a map of a staging word) is amortized away. The copy bandwidth is measured the same way with a
recorded buffer-to-buffer copy: bytes read + written per second. End-to-end figures (`call_ms`) time a
whole poot call -- trace, plan cache, launches, synchronize, trap check -- by the wall clock.

Results: each test appends one record to the JSON list at env POOT_BENCH_OUT, if set. Run:

    POOT_BENCH_OUT=benchmarks/results/wgpu-h200.json python -m pytest -q benchmarks/bench_wgpu_*.py \\
        --benchmark-group-by=group --benchmark-columns=min,median,rounds
"""
from __future__ import annotations

import json
import os
import statistics
import threading
import time

import numpy as np
import pytest

ROUNDS = int(os.environ.get("POOT_BENCH_ROUNDS", "7"))
REPS = int(os.environ.get("POOT_BENCH_REPS", "20"))
_lock = threading.Lock()
_copy: dict = {}


def need_wgpu():
    """The poot wgpu device, or skip saying why."""
    from poot import devices
    from poot.errors import DeviceUnavailableError

    try:
        return devices.get("wgpu")
    except DeviceUnavailableError as e:
        pytest.skip(f"no wgpu adapter: {e}")


def elements(dev, arrays: int, cap: int = 64 * 2**20) -> int:
    """Float32 elements per array: as many as `cap`, within one storage-buffer binding."""
    return min(cap, dev.caps.max_buffer_bytes // 4) // 4096 * 4096


def upload(dev, array: np.ndarray):
    buf = dev.allocate(array.nbytes)
    dev.write(buf, array)
    return buf


def time_replay(dev, record_fn, rounds: int = ROUNDS, reps: int = REPS) -> list[float]:
    """Milliseconds per replay of what `record_fn()` dispatches (inside a recording), per round."""
    with dev.record() as rec:
        record_fn()
    rec.replay()
    dev.synchronize()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            rec.replay()
        dev.synchronize()
        out.append((time.perf_counter() - t0) * 1e3 / reps)
    return out


def time_calls(call, rounds: int = ROUNDS) -> list[float]:
    call()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def copy_bandwidth(dev) -> float:
    """Device-to-device copy bandwidth (bytes read + written per second): the %-of-bandwidth ceiling."""
    if "bps" not in _copy:
        n = elements(dev, 2) * 4
        src, dst = upload(dev, np.ones(n // 4, np.float32)), dev.allocate(n)
        ms = time_replay(dev, lambda: dev.copy(dst, src, n))
        _copy["bps"] = 2 * n / (min(ms) * 1e-3)
        record({"group": "wgpu-copy-bandwidth", "impl": "ceiling", "bytes": 2 * n, "ms_min": min(ms),
                "bytes_per_s": _copy["bps"], "adapter": dev.info.get("device")})
        dev.free(src)
        dev.free(dst)
    return _copy["bps"]


def report(benchmark, dev, group, impl, times_ms, nbytes, *, call=None, call_ms=None, extra=None):
    best = min(times_ms)
    ceiling = copy_bandwidth(dev)
    rec = {"group": group, "impl": impl, "adapter": dev.info.get("device"), "backend": dev.info.get("backend_type"),
           "ms_min": best, "ms_median": statistics.median(times_ms), "rounds": len(times_ms), "bytes": nbytes,
           "bytes_per_s": nbytes / (best * 1e-3), "pct_of_copy_bandwidth": 100 * nbytes / (best * 1e-3) / ceiling}
    if call_ms is not None:
        rec["call_ms_min"], rec["call_ms_median"] = min(call_ms), statistics.median(call_ms)
    rec.update(extra or {})
    benchmark.group = group
    benchmark.extra_info.update(rec)
    benchmark.pedantic(call or (lambda: None), rounds=3 if call else 1, iterations=1)
    record(rec)
    print(f"\n{group} {impl}: {best:.3f} ms, {rec['bytes_per_s'] / 1e9:.1f} GB/s = "
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
            json.dump(data, f, indent=1)
