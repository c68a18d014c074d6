"""Dask on a LocalCluster: a chunked elementwise chain and reduction over float32 data made on the
workers, with poot chunks beside dask.array on NumPy chunks (`--devices cpu`, the default) or on
CuPy chunks (`--devices cuda`), the same chunking and the same cluster.

Each chunk is generated inside its task (element i is (i % 1013) * 0.001, or `--data random`:
uniform random numbers from each library's own generator), so nothing large leaves the client, and
the workload is

    z = sqrt(x) * 2 + exp(-x);   z.sum().compute()

With poot chunks, Dask fuses generation, chain and the chunk's partial sum into one task, which runs
as one poot program (`poot.dask`); with NumPy or CuPy chunks the same task runs that library's passes
with their temporaries. A repetition is the user's call: `.compute()` and the value read as a Python
float on the client. The baselines run with Dask's default array optimization (poot's task-boundary
pass is for poot graphs).

Devices (one LocalCluster each, `--workers` processes of `--threads-per-worker` threads):
- cpu: poot chunks on the CPU (`PootWorkerPlugin()`) against NumPy chunks ("dask-numpy");
  ratio numpy_s / poot_s.
- cuda: one GPU per worker process, worker i on cuda:i (`PootWorkerPlugin("cuda")`), so `--workers`
  is at most the number of GPUs (`--workers 1` on a one-GPU machine). poot makes and computes its
  chunks on the worker's device; the baseline ("cupy") makes its chunks with CuPy on the same device
  inside each task (`cupy.random` for `--data random`), and Dask runs the chain and the partial sums
  with CuPy. Ratio cupy_s / poot_s. Where CuPy does not import or sees no device, the baseline is
  skipped, saying why, and poot's row stands alone, checked against the exact sum.

Above 1 the ratio says poot chunks are faster. An absent device is skipped, saying why.

    python -m benchmarks.bench_dask --size 1e9 --chunks 25e6 --workers 2 --json out.json
    python -m benchmarks.bench_dask --devices cuda --size 1e9 --chunks 25e6 --workers 1 --json out.json
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from benchmarks import common as C

BASELINES = {"cpu": "dask-numpy", "cuda": "cupy"}   # the device kinds this benchmark runs on


def poot_block(seed: int, data: str, block_info=None):
    import poot as pt

    (start, stop), = block_info[None]["array-location"]
    if data == "ramp":   # the chunk-local int32 index, offset to the global pattern
        i = (pt.arange(0, stop - start, dtype=pt.int32) + start % 1013) % 1013
        return i.astype(pt.float32) * pt.float32(0.001)
    rng = pt.random.default_rng(seed * 1_000_003 + block_info[None]["chunk-location"][0])
    return rng.random(stop - start, dtype=pt.float32)


def numpy_block(seed: int, data: str, block_info=None):
    return _array_module_block(np, seed, data, block_info)


def _array_module_block(xp, seed: int, data: str, block_info):
    """The chunk at `block_info` made with NumPy or CuPy (`xp`), as poot_block makes it with poot."""
    (start, stop), = block_info[None]["array-location"]
    if data == "ramp":
        i = (xp.arange(0, stop - start, dtype=xp.int32) + xp.int32(start % 1013)) % xp.int32(1013)
        return i.astype(xp.float32) * xp.float32(0.001)
    rng = xp.random.default_rng(seed * 1_000_003 + block_info[None]["chunk-location"][0])
    return rng.random(stop - start, dtype=xp.float32)


def cupy_block(seed: int, data: str, block_info=None):
    """numpy_block with CuPy, on the worker's GPU. CuPy's current device belongs to the thread: it is
    set here, at the start of the task, so the chain and partial sum Dask runs next in the same task
    (and the aggregation tasks this thread runs later) use the same GPU as poot on this worker."""
    import cupy as cp

    use_worker_gpu()
    return _array_module_block(cp, seed, data, block_info)


def use_worker_gpu() -> int:
    """Make the calling thread's CuPy device the CUDA device PootWorkerPlugin gave this worker
    (cuda:i for worker i); returns its index. Runs in worker processes."""
    import cupy as cp

    from poot.dask import worker_device

    name = worker_device() or "cuda:0"
    index = int(name.partition(":")[2] or 0)
    cp.cuda.Device(index).use()
    return index


def workload(make_block, meta, size: int, chunk: int, seed: int, data: str):
    import dask.array as da

    chunks = (chunk,) * (size // chunk) + ((size % chunk,) if size % chunk else ())
    x = da.map_blocks(make_block, seed, data, chunks=(chunks,), dtype=np.float32, meta=meta)
    return (da.sqrt(x) * 2.0 + da.exp(-x)).sum()


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=5)
    ap.add_argument("--size", type=float, default=1e9, help="float32 elements in all (default 1e9)")
    ap.add_argument("--chunks", type=float, default=25e6, help="elements per chunk (default 25e6)")
    ap.add_argument("--workers", type=int, default=2,
                    help="worker processes (default 2; with --devices cuda one per GPU)")
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--data", choices=("ramp", "random"), default="ramp",
                    help="how the workers make each chunk (default ramp: index arithmetic)")
    args = ap.parse_args(argv)

    kinds = []
    for kind in args.devices:
        if kind in BASELINES:
            kinds.append(kind)
        else:
            print(f"skipping device {kind}: bench_dask runs on " + " and ".join(BASELINES), file=sys.stderr)
    rows = []
    for kind in C.available(kinds):
        rows += run_on(kind, args)
    return C.finish(args, "bench_dask", rows)


def run_on(kind: str, args) -> list[dict]:
    """Both sides of the comparison on device `kind`, on one LocalCluster started for it."""
    import dask
    import dask.array.optimization
    from distributed import Client, LocalCluster

    import poot.dask as pdask

    size, chunk = int(args.size), int(args.chunks)
    params = {"size": size, "chunk": chunk, "chunks": math.ceil(size / chunk), "workers": args.workers,
              "threads_per_worker": args.threads_per_worker, "data": args.data}
    if kind == "cuda":
        check_gpus_for_workers(args.workers)
        plugin, baseline_block, baseline_meta = pdask.PootWorkerPlugin("cuda"), cupy_block, cupy_meta(args.workers)
    else:
        plugin, baseline_block, baseline_meta = pdask.PootWorkerPlugin(), numpy_block, np.empty((0,), np.float32)
    t0 = time.perf_counter()
    with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=args.threads_per_worker,
                      dashboard_address=None, worker_dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.register_plugin(plugin)
        on = "" if kind == "cpu" else f" on {', '.join(sorted(set(client.run(pdask.worker_device).values())))}"
        print(f"cluster of {args.workers} workers up in {time.perf_counter() - t0:.1f} s{on}; "
              f"{params['chunks']} chunks of {chunk:,} float32 elements")
        if kind == "cuda" and baseline_meta is not None:
            client.run(use_worker_gpu)   # the event-loop thread, which receives CuPy chunks from peers
        seed = [0]

        def poot_call():   # a new seed per call: a repetition is never a cached result
            seed[0] += 1
            return float(workload(poot_block, pdask.meta(1), size, chunk, seed[0], args.data).compute())

        def baseline_call():
            seed[0] += 1
            with dask.config.set(array_optimize=dask.array.optimization.optimize):
                return float(workload(baseline_block, baseline_meta, size, chunk, seed[0], args.data).compute())

        baseline = baseline_call if baseline_meta is not None else None
        timing = {"repeat": args.repeat, "number": 1, "warmup": args.warmup}
        client.run(pdask.task_stats, clear=True)
        poot_s = C.median(C.time_call(poot_call, **timing))
        stats = [s for per in client.run(pdask.task_stats, clear=True).values() for s in per]
        baseline_s = C.median(C.time_call(baseline, **timing)) if baseline is not None else None
        check = _agreement(args.data, size, poot_call, baseline)
    programs = sorted({s.programs for s in stats if s.programs})
    host_reads = sum(s.host_reads for s in stats)
    return C.rows_against("dask-elementwise-sum", params, kind, poot_s, {BASELINES[kind]: baseline_s},
                          elements_per_s=size / poot_s, programs_per_task=programs,
                          host_reads_in_tasks=host_reads, **check)


def check_gpus_for_workers(workers: int) -> None:
    """Worker i computes on cuda:i: raise BenchmarkError before starting the cluster when a worker
    would have no GPU."""
    for i in range(workers):
        dev, why = C.device_or_none(f"cuda:{i}")
        if dev is None:
            raise C.BenchmarkError(f"bench_dask --devices cuda --workers {workers}: worker {i} computes on "
                                   f"cuda:{i}, which is unavailable ({why}); give at most one worker per GPU")


def cupy_meta(workers: int):
    """The 0-size CuPy chunk that tells Dask the baseline's chunks are CuPy arrays; None (the
    baseline is skipped, the reason printed) where CuPy does not import or sees too few GPUs."""
    try:
        import cupy as cp
    except ImportError as e:
        print(f"no CuPy baseline: cupy does not import ({e})", file=sys.stderr)
        return None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:   # CuPy's CUDARuntimeError, or a missing CUDA library found only now
        print(f"no CuPy baseline: cupy finds no CUDA device ({type(e).__name__}: {e})", file=sys.stderr)
        return None
    if count < workers:
        print(f"no CuPy baseline: cupy sees {count} CUDA devices, fewer than the {workers} workers",
              file=sys.stderr)
        return None
    return cp.empty((0,), dtype=cp.float32)


def _agreement(data: str, size: int, poot_call, baseline_call) -> dict:
    """The two results agree (ramp: exactly the same data; random: the generators differ, so the sums
    agree statistically). Without a baseline, and for random data, poot's sum is also compared with
    the expected one (`_expected_sum`)."""
    p = poot_call()
    out = {}
    if baseline_call is not None:
        b = baseline_call()
        out["relative_difference"] = abs(p - b) / abs(b)
    if data == "random" or baseline_call is None:
        expected = _expected_sum(data, size)
        out["poot_vs_expectation"] = abs(p - expected) / expected
    return out


def _expected_sum(data: str, size: int) -> float:
    """ramp: the exact sum, from one period of the pattern (float32 elements, float64 sum); random:
    size times the mean of sqrt(u)*2 + exp(-u) over U(0,1), 4/3 + 1 - 1/e."""
    if data == "random":
        return size * (4.0 / 3.0 + 1.0 - math.exp(-1.0))
    x = np.arange(1013, dtype=np.int32).astype(np.float32) * np.float32(0.001)
    z = np.sqrt(x) * np.float32(2.0) + np.exp(-x)
    return float(z.sum(dtype=np.float64) * (size // 1013) + z[: size % 1013].sum(dtype=np.float64))


if __name__ == "__main__":
    main()
