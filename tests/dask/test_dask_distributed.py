"""poot chunks on a real dask.distributed cluster: two worker processes of one thread each, with
PootWorkerPlugin choosing their device. Data is made on the workers (nothing large leaves the
client), results match NumPy, and the workers' task records show one poot program per task and no
host reads."""
from __future__ import annotations

import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'poot[dask]')")
distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install 'poot[dask]')")

import poot as pt  # noqa: E402
import poot.dask as pdask  # noqa: E402
from tolerance import assert_close  # noqa: E402

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, worker_dashboard_address=None)
    with distributed.Client(cluster) as c:
        c.register_plugin(pdask.PootWorkerPlugin())
        yield c
    cluster.close()


def worker_stats(client) -> list:
    """The task records of every worker since the last call (cleared as they are read)."""
    per_worker = client.run(pdask.task_stats, clear=True)
    return [s for stats in per_worker.values() for s in stats]


def assert_one_program_per_task(client, at_least: int):
    stats = worker_stats(client)
    assert len(stats) >= at_least, stats
    assert all(s.programs <= 1 and s.host_reads == 0 for s in stats), \
        [s for s in stats if s.programs > 1 or s.host_reads]
    assert sum(s.programs for s in stats) >= at_least


def test_workers_compute_on_the_chosen_device(client):
    devices = client.run(pdask.worker_device)
    assert len(devices) == 2 and set(devices.values()) == {"cpu"}
    assert set(client.run(lambda: __import__("os").environ["POOT_DEVICE"]).values()) == {"cpu"}


def test_elementwise_chain(client):
    a = RNG.random((400, 300), dtype=np.float32)
    worker_stats(client)
    x = da.from_array(pt.asarray(a), chunks=(100, 150))
    out = (da.exp(x) * 0.5 + da.sqrt(x) * x - 1.0).compute()
    assert isinstance(out, pt.Array)
    assert_close(out.numpy(), np.exp(a) * 0.5 + np.sqrt(a) * a - 1.0, np.float32, ops=5)
    assert_one_program_per_task(client, at_least=8)


def _ramp_block(block_info=None):
    """A chunk made on the worker: element i of the whole array is (i % 1013) * 0.001."""
    (start, stop), = block_info[None]["array-location"]
    i = pt.arange(start, stop, dtype=pt.int64)
    return (i % 1013).astype(pt.float32) * pt.float32(0.001)


def test_reduction_over_1e8_float32_made_on_the_workers(client):
    n, chunk = 10**8, 10**7
    x = da.map_blocks(_ramp_block, chunks=((chunk,) * (n // chunk),), dtype=np.float32,
                      meta=pdask.meta(1))
    worker_stats(client)
    t0 = time.perf_counter()
    total = (da.sqrt(x) * 2.0 + 1.0).sum().compute()
    seconds = time.perf_counter() - t0
    # exact reference: the values repeat with period 1013
    values = (np.arange(1013) % 1013).astype(np.float32) * np.float32(0.001)
    repeats = np.full(1013, n // 1013) + (np.arange(1013) < n % 1013)
    expected = (np.sqrt(values.astype(np.float64)) * 2.0 + 1.0) @ repeats
    assert isinstance(total, pt.Array) and total.dtype == pt.float32
    assert abs(float(total) - expected) <= 1e-5 * expected, (float(total), expected)
    assert seconds < 20.0, f"the 1e8-element reduction took {seconds:.1f} s"
    assert_one_program_per_task(client, at_least=n // chunk)


def test_chunked_matmul(client):
    a = RNG.random((256, 192), dtype=np.float32)
    b = RNG.random((192, 128), dtype=np.float32)
    x = da.from_array(pt.asarray(a), chunks=(64, 96))
    y = da.from_array(pt.asarray(b), chunks=(96, 64))
    worker_stats(client)
    out = (x @ y).compute()
    assert isinstance(out, pt.Array)
    assert_close(out.numpy(), a @ b, np.float32, ops=192)
    assert_one_program_per_task(client, at_least=8)


def kmeans_step(x, centroids):
    """One Lloyd step on a row-chunked Dask array `x` (n, d) with poot centroids (k, d)."""
    k = centroids.shape[0]
    d2 = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    labels = d2.argmin(axis=1)
    onehot = labels.map_blocks(lambda lab: (lab[:, None] == pt.arange(k)[None, :]).astype(pt.float32),
                               new_axis=1, chunks=(labels.chunks[0], (k,)), meta=pdask.meta(2))
    return (onehot.T @ x) / onehot.sum(axis=0)[:, None]


def test_kmeans_step(client):
    n, d, k = 4000, 8, 5
    a = RNG.random((n, d), dtype=np.float32) + np.repeat(np.eye(k, d, dtype=np.float32) * 4, n // k, 0)
    c0 = a[:: n // k][:k].copy()
    x = da.from_array(pt.asarray(a), chunks=(1000, d))
    worker_stats(client)
    out = kmeans_step(x, pt.asarray(c0)).compute()
    labels = ((a[:, None, :] - c0[None]) ** 2).sum(axis=2).argmin(axis=1)
    expected = np.stack([a[labels == j].mean(axis=0) for j in range(k)])
    assert isinstance(out, pt.Array)
    assert_close(out.numpy(), expected, np.float32, ops=n)
    assert_one_program_per_task(client, at_least=4)


def test_each_chunk_task_ran_one_program(client):
    """Counted on each worker thread around the task (poot.dask.ChunkTask): the chain the task
    records runs when the task returns, as one program, and no chunk is read to the host."""
    a = RNG.random((300, 64), dtype=np.float32)
    x = da.from_array(pt.asarray(a), chunks=(100, 64))
    y = x.map_blocks(lambda b: pt.exp(b) * 2.0 + b.sum(axis=1, keepdims=True))
    worker_stats(client)
    results = client.gather(client.compute(list(y.to_delayed().ravel())))
    stats = worker_stats(client)
    chunk_tasks = [s for s in stats if s.programs]
    assert len(chunk_tasks) == 3, stats
    assert all(s.programs == 1 and s.host_reads == 0 for s in stats), stats
    rows = np.concatenate([r.numpy() for r in results])
    assert_close(rows, np.exp(a) * 2.0 + a.sum(axis=1, keepdims=True), np.float32, ops=64)


def test_scattered_pending_array_is_realized_in_transit(client):
    pending = pt.asarray(np.arange(10, dtype=np.float32)) * 3.0
    future = client.scatter(pending)
    out = client.submit(lambda v: v + 1.0, future).result()
    assert isinstance(out, pt.Array)
    assert_close(out.numpy(), np.arange(10, dtype=np.float32) * 3.0 + 1.0, np.float32)
