"""Shared parts of the wgpu benchmarks (bench_wgpu_*.py): the device, timing, the copy-kernel bandwidth
every %-of-bandwidth figure is taken against, and the JSON results file.

Timing. Kernels are timed by GPU timestamps (the adapter's `timestamp-query` feature): each of ROUNDS
dispatches runs alone in a compute pass whose start and end write a timestamp, all in one submission;
the figure is the median. The ceiling is the better of a copy kernel (out[i] = x[i], one element per
thread) timed the same way and a buffer-to-buffer copy between encoder timestamps (where the adapter has
`timestamp-query-inside-encoders`): bytes read + written per second. An adapter
without timestamps skips the kernel rows, saying so: wall-clock replays (time_replay) are not a kernel
time (on the H200 they put the copy ceiling at 0.70 TB/s, a sixth of CUDA's copy on the same GPU).
End-to-end figures (`call_ms`) time a whole poot call -- trace, plan cache, launches, synchronize, trap
check -- by the wall clock, against the same ceiling.

Results: each test appends one record to the JSON list at env POOT_BENCH_OUT, if set. Run:

    POOT_BENCH_OUT=benchmarks/results/wgpu-h200.json python -m pytest -q -s benchmarks/bench_wgpu_*.py \\
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
GPU_ROUNDS = int(os.environ.get("POOT_BENCH_GPU_ROUNDS", "21"))   # timestamped dispatches per kernel
WARM_UP_MS = float(os.environ.get("POOT_BENCH_WARM_UP_MS", "500"))  # GPU work before each timing (launches_gpu_ms)
WG = 256
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


def need_timestamps(dev):
    """Skip, saying why, where the adapter cannot time kernels."""
    if "timestamp-query" not in dev.features:
        pytest.skip(f"the adapter '{dev.info.get('device')}' lacks 'timestamp-query': kernel times need GPU "
                    "timestamps (wall-clock replays are not a kernel time)")


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


def gpu_ms(dev, program, args, groups: int, rounds: int = GPU_ROUNDS) -> list[float]:
    """GPU milliseconds of each of `rounds` dispatches of `program` over `args` (meta and trap included)
    and `groups` workgroups: one compute pass per dispatch, timestamps at its start and end (resolved in
    nanoseconds, as WebGPU specifies)."""
    return launches_gpu_ms(dev, [(program, args, (groups, 1, 1))], rounds)


def poot_launches(dev, call) -> list[tuple]:
    """The dispatches one `call()` (a poot realize on `dev`) makes, as (program, buffers, groups), captured
    while they run as usual; the buffers poot freed after the call are replaced by new ones of their size
    (intermediates: each is written by an earlier launch of the list before a later one reads it)."""
    seen, dispatch = [], dev.dispatch

    def spy(program, buffers, groups):
        seen.append((program, list(buffers), groups))
        dispatch(program, buffers, groups)

    dev.dispatch = spy
    try:
        call()
    finally:
        del dev.dispatch
    fresh: dict = {}
    return [(p, [b if b.handle is not None else fresh.setdefault(id(b), dev.allocate(b.nbytes)) for b in bufs], g)
            for p, bufs, g in seen]


def launches_gpu_ms(dev, launches, rounds: int = GPU_ROUNDS, warm: bool = True) -> list[float]:
    """GPU milliseconds of each of `rounds` runs of `launches` [(program, buffers, groups)], all of one
    round in one compute pass with timestamps at its start and end (WebGPU orders the dispatches' storage
    accesses within a pass). With `warm`, the timed rounds follow WARM_UP_MS of the same launches in the
    same submission: after a second of idling, NVIDIA's Vulkan driver ran every kernel 2.8x slower until
    sustained work raised its clocks again (benchmarks/results/h200_s15_wgpu_read.py)."""
    from poot.devices.grid import dispatch_grid

    need_timestamps(dev)
    warm_up = 0
    if warm:
        first = statistics.median(launches_gpu_ms(dev, launches, 3, warm=False))
        warm_up = min(20000, int(WARM_UP_MS / max(first, 1e-3)))
    cap = (dev.caps.extra["max_workgroups_per_dimension"],) * 3
    bound = [(dev._pipeline(p, len(bufs)), dev._bind_group(bufs), dispatch_grid("wgpu", p, g, cap))
             for p, bufs, g in launches]

    def dispatch_all(compute_pass, times: int = 1):
        for _ in range(times):
            for pipeline, group, grid in bound:
                compute_pass.set_pipeline(pipeline)
                compute_pass.set_bind_group(0, group)
                compute_pass.dispatch_workgroups(*grid)
        compute_pass.end()

    def encode(enc, queries):
        if warm_up:
            dispatch_all(enc.begin_compute_pass(), warm_up)
        for r in range(rounds):
            dispatch_all(enc.begin_compute_pass(timestamp_writes={
                "query_set": queries, "beginning_of_pass_write_index": 2 * r, "end_of_pass_write_index": 2 * r + 1}))

    return _timestamped_ms(dev, rounds, encode)


def _timestamped_ms(dev, rounds: int, encode) -> list[float]:
    """Milliseconds between timestamps 2r and 2r + 1 of a query set, for r < rounds, after one submission of
    what `encode(encoder, query_set)` records (resolved in nanoseconds, as WebGPU specifies)."""
    w, d = dev._wgpu, dev._dev
    dev.synchronize()
    queries = d.create_query_set(type=w.QueryType.timestamp, count=2 * rounds)
    stamps = d.create_buffer(size=16 * rounds, usage=w.BufferUsage.QUERY_RESOLVE | w.BufferUsage.COPY_SRC)
    enc = d.create_command_encoder()
    encode(enc, queries)
    enc.resolve_query_set(queries, 0, 2 * rounds, stamps, 0)
    d.queue.submit([enc.finish()])
    ns = np.frombuffer(d.queue.read_buffer(stamps), np.uint64).astype(np.float64)
    return list((ns[1::2] - ns[::2]) / 1e6)


def copy_kernel():
    from poot import dtypes as dt
    from poot.jit.kir import builder as B
    from poot.jit.kir.model import Access, Len

    f = dt.float32
    kb = B.KernelBuilder("bench_copy", workgroup=(WG, 1, 1), checks=False)
    x, o = kb.buffer("x", f, Access.READ), kb.buffer("out", f, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        kb.store(o, i, kb.load(x, i, f))
    return kb.build()


def prepared(dev, kernel, buffers, groups: int, lengths) -> list:
    """The loaded program of `kernel` and its dispatch arguments: `buffers`, then meta and trap."""
    from poot.jit.abi import pack_meta
    from poot.jit.compile import compile_kernel
    from poot.jit.launch import trap_buffer

    program = dev.load(compile_kernel(kernel, dev.caps.target, arch=dev.caps.compile_arch))
    return program, list(buffers) + [upload(dev, pack_meta(kernel, lengths, (), groups)), trap_buffer(dev)]


def copy_kernel_bandwidth(dev) -> float:
    """The device's measured copy bandwidth through wgpu (bytes read + written per second, by GPU
    timestamps), the %-of-bandwidth ceiling: the better of the copy kernel and, where the adapter can
    write timestamps between commands, a buffer-to-buffer copy (the driver's own copy path)."""
    if "kernel_bps" not in _copy:
        n = elements(dev, 2)
        x, out = upload(dev, np.ones(n, np.float32)), dev.allocate(4 * n)
        groups = -(-n // WG)
        program, args = prepared(dev, copy_kernel(), [x, out], groups, [n, n])
        ms = statistics.median(gpu_ms(dev, program, args, groups))
        assert np.array_equal(np.array(dev.read(out)).view(np.float32)[::4099], np.ones(n, np.float32)[::4099])
        rates = {"copy_kernel": 8 * n / (ms * 1e-3)}
        print(f"\nwgpu copy kernel: {ms:.3f} ms GPU (median), {rates['copy_kernel'] / 1e9:.1f} GB/s")
        if "timestamp-query-inside-encoders" in dev.features:
            ms_copy = statistics.median(buffer_copy_ms(dev, x, out, 4 * n))
            rates["buffer_copy"] = 8 * n / (ms_copy * 1e-3)
            print(f"wgpu buffer copy: {ms_copy:.3f} ms GPU (median), {rates['buffer_copy'] / 1e9:.1f} GB/s")
        _copy["kernel_bps"] = max(rates.values())
        record({"group": "wgpu-copy-bandwidth", "impl": "ceiling", "bytes": 8 * n, "rates_bytes_per_s": rates,
                "bytes_per_s": _copy["kernel_bps"], "adapter": dev.info.get("device")})
        dev.free(x)
        dev.free(out)
    return _copy["kernel_bps"]


def buffer_copy_ms(dev, src, dst, nbytes: int, rounds: int = GPU_ROUNDS) -> list[float]:
    """GPU milliseconds of each of `rounds` buffer-to-buffer copies of `nbytes`, between encoder timestamps."""
    from wgpu.backends.wgpu_native.extras import write_timestamp

    def encode(enc, queries):
        for _ in range(rounds * 10):             # warm-up copies first, as in launches_gpu_ms
            enc.copy_buffer_to_buffer(src.handle, 0, dst.handle, 0, nbytes)
        for r in range(rounds):
            write_timestamp(enc, queries, 2 * r)
            enc.copy_buffer_to_buffer(src.handle, 0, dst.handle, 0, nbytes)
            write_timestamp(enc, queries, 2 * r + 1)

    return _timestamped_ms(dev, rounds, encode)


def time_calls(call, rounds: int = ROUNDS) -> list[float]:
    call()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def copy_bandwidth(dev) -> float:
    """Device-to-device buffer copy by wall-clock replays (bytes read + written per second): report's
    default ceiling, for figures timed by the wall clock too (bench_vulkan.py's device comparison)."""
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


def report(benchmark, dev, group, impl, times_ms, nbytes, *, call=None, call_ms=None, extra=None, ceiling=None):
    """Record `times_ms` of moving `nbytes` against `ceiling` bytes/s (default: the device's wall-clock
    buffer copy, copy_bandwidth); the % figure is of the median time."""
    extra = dict(extra or {})
    if call_ms is not None:
        extra["call_ms_min"], extra["call_ms_median"] = min(call_ms), statistics.median(call_ms)
    rec = _record(dev, group, impl, times_ms, nbytes, ceiling or copy_bandwidth(dev), extra)
    benchmark.group = group
    benchmark.extra_info.update(rec)
    benchmark.pedantic(call or (lambda: None), rounds=3 if call else 1, iterations=1)
    return rec


def report_poot_kernels(dev, group, launches, nbytes):
    """Record, as impl `poot-kernels`, the GPU time of the kernels one poot call launched (poot_launches)
    against the copy kernel's bandwidth (a row beside the test's own; no pytest-benchmark entry)."""
    ms = launches_gpu_ms(dev, launches)
    return _record(dev, group, "poot-kernels", ms, nbytes, copy_kernel_bandwidth(dev),
                   {"timing": "gpu-timestamps", "kernels": [p.name for p, _, _ in launches]})


def _record(dev, group, impl, times_ms, nbytes, ceiling, extra) -> dict:
    mid = statistics.median(times_ms)
    rec = {"group": group, "impl": impl, "adapter": dev.info.get("device"), "backend": dev.info.get("backend_type"),
           "ms_min": min(times_ms), "ms_median": mid, "rounds": len(times_ms), "bytes": nbytes,
           "bytes_per_s": nbytes / (mid * 1e-3), "pct_of_copy_bandwidth": 100 * nbytes / (mid * 1e-3) / ceiling,
           "ceiling_bytes_per_s": ceiling, **extra}
    record(rec)
    print(f"\n{group} {impl}: {mid:.3f} ms (median), {rec['bytes_per_s'] / 1e9:.1f} GB/s = "
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
