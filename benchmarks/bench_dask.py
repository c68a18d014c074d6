"""Dask on a LocalCluster: a chunked elementwise chain and reduction over float32 data made on the
workers, with poot chunks beside dask.array on NumPy chunks, the same chunking and the same cluster.

Each chunk is generated inside its task (element i is (i % 1013) * 0.001, or `--data random`:
uniform random numbers from each library's own generator), so nothing large leaves the client, and
the workload is

    z = sqrt(x) * 2 + exp(-x);   z.sum().compute()

With poot chunks, Dask fuses generation, chain and the chunk's partial sum into one task, which runs
as one poot program (`poot.dask`); with NumPy chunks the same task runs NumPy's passes with their
temporaries. A repetition is the user's call: `.compute()` and the value read as a Python float.
The ratio is numpy_s / poot_s (above 1: poot chunks are faster). The NumPy run uses Dask's default
array optimization (poot's task-boundary pass is for poot graphs).

    python -m benchmarks.bench_dask --size 1e9 --chunks 25e6 --workers 2 --json out.json
"""
from __future__ import annotations

import math
import time

import numpy as np

from benchmarks import common as C


def poot_block(seed: int, data: str, block_info=None):
    import poot as pt

    (start, stop), = block_info[None]["array-location"]
    if data == "ramp":   # the chunk-local int32 index, offset to the global pattern
        i = (pt.arange(0, stop - start, dtype=pt.int32) + start % 1013) % 1013
        return i.astype(pt.float32) * pt.float32(0.001)
    rng = pt.random.default_rng(seed * 1_000_003 + block_info[None]["chunk-location"][0])
    return rng.random(stop - start, dtype=pt.float32)


def numpy_block(seed: int, data: str, block_info=None):
    (start, stop), = block_info[None]["array-location"]
    if data == "ramp":
        i = (np.arange(0, stop - start, dtype=np.int32) + np.int32(start % 1013)) % np.int32(1013)
        return i.astype(np.float32) * np.float32(0.001)
    rng = np.random.default_rng(seed * 1_000_003 + block_info[None]["chunk-location"][0])
    return rng.random(stop - start, dtype=np.float32)


def workload(make_block, meta, size: int, chunk: int, seed: int, data: str):
    import dask.array as da

    chunks = (chunk,) * (size // chunk) + ((size % chunk,) if size % chunk else ())
    x = da.map_blocks(make_block, seed, data, chunks=(chunks,), dtype=np.float32, meta=meta)
    return (da.sqrt(x) * 2.0 + da.exp(-x)).sum()


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=5)
    ap.add_argument("--size", type=float, default=1e9, help="float32 elements in all (default 1e9)")
    ap.add_argument("--chunks", type=float, default=25e6, help="elements per chunk (default 25e6)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--data", choices=("ramp", "random"), default="ramp",
                    help="how the workers make each chunk (default ramp: index arithmetic)")
    args = ap.parse_args(argv)

    import dask
    import dask.array.optimization
    from distributed import Client, LocalCluster

    import poot.dask as pdask

    size, chunk = int(args.size), int(args.chunks)
    params = {"size": size, "chunk": chunk, "chunks": math.ceil(size / chunk), "workers": args.workers,
              "threads_per_worker": args.threads_per_worker, "data": args.data}
    t0 = time.perf_counter()
    with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=args.threads_per_worker,
                      dashboard_address=None, worker_dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.register_plugin(pdask.PootWorkerPlugin())
        print(f"cluster of {args.workers} workers up in {time.perf_counter() - t0:.1f} s; "
              f"{params['chunks']} chunks of {chunk:,} float32 elements")
        seed = [0]

        def poot_call():   # a new seed per call: a repetition is never a cached result
            seed[0] += 1
            return float(workload(poot_block, pdask.meta(1), size, chunk, seed[0], args.data).compute())

        def numpy_call():
            seed[0] += 1
            with dask.config.set(array_optimize=dask.array.optimization.optimize):
                return float(workload(numpy_block, np.empty((0,), np.float32), size, chunk, seed[0],
                                      args.data).compute())

        timing = {"repeat": args.repeat, "number": 1, "warmup": args.warmup}
        client.run(pdask.task_stats, clear=True)
        poot_s = C.median(C.time_call(poot_call, **timing))
        stats = [s for per in client.run(pdask.task_stats, clear=True).values() for s in per]
        numpy_s = C.median(C.time_call(numpy_call, **timing))
        check = _agreement(args.data, size, poot_call, numpy_call)
    programs = sorted({s.programs for s in stats if s.programs})
    host_reads = sum(s.host_reads for s in stats)
    rows = C.rows_against("dask-elementwise-sum", params, "cpu", poot_s, {"dask-numpy": numpy_s},
                          elements_per_s=size / poot_s, programs_per_task=programs,
                          host_reads_in_tasks=host_reads, **check)
    return C.finish(args, "bench_dask", rows)


def _agreement(data: str, size: int, poot_call, numpy_call) -> dict:
    """The two results agree (ramp: exactly the same data; random: poot's and NumPy's generators
    differ, so the sums agree statistically: mean of sqrt(u)*2 + exp(-u) over U(0,1) is 4/3 + 1 - 1/e)."""
    p, n = poot_call(), numpy_call()
    if data == "ramp":
        return {"relative_difference": abs(p - n) / abs(n)}
    expected = size * (4.0 / 3.0 + 1.0 - math.exp(-1.0))
    return {"relative_difference": abs(p - n) / abs(n), "poot_vs_expectation": abs(p - expected) / expected}


if __name__ == "__main__":
    main()
