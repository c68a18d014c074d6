"""GPU-side timing for the `kernel_s` column and the device copy ceiling: how long the kernels of one poot
call run on the GPU, apart from the host's part of the call (the wall clock, benchmarks.common.time_call,
stays the headline figure).

- cuda: CUDA events on poot's stream, one before the call's first launch and one after its last
  (`cuda_kernel_s`), or the call's launches captured `reps` times in one CUDA graph and replayed
  (`cuda_graph_s`: the kernels' own rate, unbounded by the host's ~8 us per cuLaunchKernel). PyTorch
  is timed with its own events (`torch_event_s`, `torch_graph_s`).
- wgpu: GPU timestamps (the adapter's `timestamp-query`) at the start and end of a compute pass holding
  the call's launches, after WARM_UP_S of the same launches in the same submission: after a second of
  idling NVIDIA's Vulkan driver ran every kernel 2.8x slower until sustained work raised its clocks.
- vulkan: the raw device's timestamp queries around each dispatch (POOT_DEBUG=1), after the same warm-up.

`copy_bandwidth` is the device's own buffer-to-buffer copy (bytes read + written per second), the
ceiling that the `copy` baseline rows of the bandwidth-bound benchmarks are taken against.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from benchmarks import common as C

WARM_UP_S = 0.5
_copy: dict = {}


def poot_launches(dev, call) -> list[tuple]:
    """The dispatches one `call()` (a poot realize on `dev`) makes, as (program, buffers, groups), captured
    while they run; buffers poot freed after the call are replaced by new ones of their size (each is
    written by an earlier launch of the list before a later one reads it)."""
    seen, dispatch = [], dev.dispatch

    def spy(program, buffers, groups):
        seen.append((program, list(buffers), groups))
        dispatch(program, buffers, groups)

    dev.dispatch = spy
    try:
        with C.env_setting("POOT_EAGER_REPLAY", "0"):     # a replayed recording dispatches nothing
            call()
    finally:
        del dev.dispatch
    fresh: dict = {}
    return [(p, [b if b.handle is not None else fresh.setdefault(id(b), dev.allocate(b.nbytes)) for b in bufs], g)
            for p, bufs, g in seen]


def kernel_s(kind: str, dev, call, repeat: int = 11) -> float | None:
    """Median GPU seconds of the kernels one `call()` launches on `dev`; None where the device cannot
    time kernels (no timestamps, a CPU device, or a call that launches nothing)."""
    if kind == "cuda":
        samples = cuda_kernel_s(dev, call, repeat)
    else:
        launches = poot_launches(dev, call)
        if not launches:
            return None
        if kind == "wgpu":
            if "timestamp-query" not in dev.features:
                return None
            samples = wgpu_launches_s(dev, launches, repeat)
        elif kind == "vulkan":
            if not dev.caps.extra.get("timestamps"):
                return None
            samples = vulkan_launches_s(dev, launches, repeat)
        else:
            return None
    samples = [s for s in samples if s == s]
    return statistics.median(samples) if samples else None


# --- CUDA -------------------------------------------------------------------------------------------
class Events:
    """CUDA events on poot's stream (through cuda-python's driver API)."""

    def __init__(self, dev):
        from cuda.bindings import driver

        self.drv, self.dev = driver, dev
        self.start, self.first, self.last, self.end = (dev._ok(driver.cuEventCreate(0), "cuEventCreate")
                                                       for _ in range(4))

    def record(self, event):
        self.dev._ok(self.drv.cuEventRecord(event, self.dev.stream), "cuEventRecord")

    def seconds(self, a, b) -> float:
        self.dev._ok(self.drv.cuEventSynchronize(b), "cuEventSynchronize")
        return float(self.dev._ok(self.drv.cuEventElapsedTime(a, b), "cuEventElapsedTime")) * 1e-3


def cuda_kernel_s(dev, call, repeat: int) -> list[float]:
    """Seconds from an event before the call's first launch to one after its last, per call."""
    ev, state, dispatch, replay = Events(dev), {}, dev.dispatch, dev.replay

    def first():
        if not state.get("started"):
            ev.record(ev.first)
            state["started"] = True

    def spy(program, buffers, groups):
        first()
        dispatch(program, buffers, groups)
        ev.record(ev.last)

    def spy_replay(rec, rebind=None):
        first()
        replay(rec, rebind)
        ev.record(ev.last)

    call()
    dev.dispatch, dev.replay = spy, spy_replay
    out = []
    try:
        for _ in range(repeat):
            state.clear()
            call()
            out.append(ev.seconds(ev.first, ev.last) if state.get("started") else float("nan"))
    finally:
        del dev.dispatch, dev.replay
    return out


def cuda_graph_s(dev, call, reps: int = 20, repeat: int = 10) -> list[float]:
    """Seconds per call of the kernels one `call()` launches, `reps` copies captured in one CUDA graph."""
    launches = poot_launches(dev, call)
    with dev.record() as graph:
        for _ in range(reps):
            for launch in launches:
                dev.dispatch(*launch)
    dev.replay(graph)
    ev, out = Events(dev), []
    for _ in range(repeat):
        ev.record(ev.start)
        dev.replay(graph)
        ev.record(ev.end)
        out.append(ev.seconds(ev.start, ev.end) / reps)
    return out


def torch_event_s(torch, call, repeat: int = 10, reps: int = 5, warmup: int = 3) -> list[float]:
    """Seconds per call of `call()` on PyTorch's current stream, `reps` calls between two events."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            call()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e-3 / reps)
    return out


def torch_graph_s(torch, fn, reps: int = 20, repeat: int = 10) -> list[float]:
    """Seconds per call of `fn()`, `reps` calls captured in one torch.cuda.CUDAGraph and replayed."""
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
    return [t / reps for t in torch_event_s(torch, graph.replay, repeat=repeat, reps=1, warmup=2)]


# --- wgpu -------------------------------------------------------------------------------------------
def wgpu_launches_s(dev, launches, repeat: int = 21, warm: bool = True) -> list[float]:
    """GPU seconds of each of `repeat` runs of `launches` [(program, buffers, groups)], each run in one
    compute pass between timestamps (WebGPU orders the dispatches' storage accesses within a pass)."""
    from poot.devices.grid import dispatch_grid

    warm_up = 0
    if warm:
        first = statistics.median(wgpu_launches_s(dev, launches, 3, warm=False))
        warm_up = min(20000, int(WARM_UP_S / max(first, 1e-6)))
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
        for r in range(repeat):
            dispatch_all(enc.begin_compute_pass(timestamp_writes={
                "query_set": queries, "beginning_of_pass_write_index": 2 * r, "end_of_pass_write_index": 2 * r + 1}))

    return _timestamped_s(dev, repeat, encode)


def wgpu_buffer_copy_s(dev, src, dst, nbytes: int, repeat: int = 21) -> list[float]:
    """GPU seconds of each of `repeat` buffer-to-buffer copies of `nbytes`, between encoder timestamps."""
    from wgpu.backends.wgpu_native.extras import write_timestamp

    def encode(enc, queries):
        for _ in range(repeat * 10):              # warm-up copies first
            enc.copy_buffer_to_buffer(src.handle, 0, dst.handle, 0, nbytes)
        for r in range(repeat):
            write_timestamp(enc, queries, 2 * r)
            enc.copy_buffer_to_buffer(src.handle, 0, dst.handle, 0, nbytes)
            write_timestamp(enc, queries, 2 * r + 1)

    return _timestamped_s(dev, repeat, encode)


def _timestamped_s(dev, rounds: int, encode) -> list[float]:
    """Seconds between timestamps 2r and 2r + 1 of a query set, r < rounds, after one submission of what
    `encode(encoder, query_set)` records (WebGPU resolves timestamps in nanoseconds)."""
    w, d = dev._wgpu, dev._dev
    dev.synchronize()
    queries = d.create_query_set(type=w.QueryType.timestamp, count=2 * rounds)
    stamps = d.create_buffer(size=16 * rounds, usage=w.BufferUsage.QUERY_RESOLVE | w.BufferUsage.COPY_SRC)
    enc = d.create_command_encoder()
    encode(enc, queries)
    enc.resolve_query_set(queries, 0, 2 * rounds, stamps, 0)
    d.queue.submit([enc.finish()])
    ns = np.frombuffer(d.queue.read_buffer(stamps), np.uint64).astype(np.float64)
    return list((ns[1::2] - ns[::2]) / 1e9)


# --- raw Vulkan -------------------------------------------------------------------------------------
def vulkan_launches_s(dev, launches, repeat: int = 11) -> list[float]:
    """GPU seconds of each of `repeat` runs of `launches`, summed over the device's per-dispatch
    timestamp queries (recorded under POOT_DEBUG=1), after WARM_UP_S of the same launches."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < WARM_UP_S:
        for p, b, g in launches * 20:
            dev.dispatch(p, b, g)
        dev.synchronize()
    old = os.environ.get("POOT_DEBUG")
    os.environ["POOT_DEBUG"] = "1"
    try:
        out = []
        for r in range(repeat + 1):
            del dev.kernel_times[:]
            for p, b, g in launches:
                dev.dispatch(p, b, g)
            dev.synchronize()
            if r:
                out.append(sum(us for _, _, us in dev.kernel_times) * 1e-6)
        return out
    finally:
        if old is None:
            os.environ.pop("POOT_DEBUG", None)
        else:
            os.environ["POOT_DEBUG"] = old


# --- the copy ceiling -------------------------------------------------------------------------------
def copy_bandwidth(kind: str, dev, cap_bytes: int = 1 << 30, repeat: int = 7) -> float:
    """Bytes read + written per second of `dev`'s own buffer-to-buffer copy of the largest buffer up to
    `cap_bytes` it binds: GPU-timed where the device can (CUDA events, wgpu encoder timestamps), else the
    wall clock of back-to-back copies and one synchronize. Measured once per device and process."""
    if kind in _copy:
        return _copy[kind]
    nbytes = min(cap_bytes, dev.caps.max_buffer_bytes) // 4096 * 4096
    src, dst = dev.allocate(nbytes), dev.allocate(nbytes)
    dev.write(src, np.ones(nbytes // 4, np.float32))
    dev.copy(dst, src, nbytes)
    dev.synchronize()
    if kind == "cuda":
        ev, samples = Events(dev), []
        for _ in range(repeat):
            ev.record(ev.start)
            dev.copy(dst, src, nbytes)
            ev.record(ev.end)
            samples.append(ev.seconds(ev.start, ev.end))
    elif kind == "wgpu" and "timestamp-query-inside-encoders" in getattr(dev, "features", ()):
        samples = wgpu_buffer_copy_s(dev, src, dst, nbytes, repeat)
    else:
        from benchmarks.common import time_call

        copies = 10
        samples = [s / copies for s in time_call(lambda: [dev.copy(dst, src, nbytes) for _ in range(copies)],
                                                 repeat=repeat, sync=dev.synchronize)]
    dev.free(src)
    dev.free(dst)
    _copy[kind] = 2 * nbytes / statistics.median(samples)
    return _copy[kind]


def copy_s(kind: str, dev, nbytes: int) -> float:
    """Seconds the device's own copy takes to move `nbytes` (read + written): the `copy` baseline."""
    return nbytes / copy_bandwidth(kind, dev)
