"""Worker device choice, input placement and pickling of poot arrays for dask.distributed."""
from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("dask.array", reason="dask is not installed (pip install 'poot[dask]')")
pytest.importorskip("distributed", reason="distributed is not installed (pip install 'poot[dask]')")
import dask  # noqa: E402
import dask.array as da  # noqa: E402

import poot as pt  # noqa: E402
import poot.dask as pdask  # noqa: E402
from poot.dask import tasks, workers  # noqa: E402


@pytest.mark.parametrize("spec, name, env, expected", [
    (None, 0, {}, "cpu"),
    (None, 3, {"POOT_DEVICE": "oracle"}, "oracle"),
    ("cuda", 0, {}, "cuda:0"),
    ("cuda", "1", {}, "cuda:1"),
    ("CUDA:2", 0, {}, "cuda:2"),
    ("rocm", 1, {}, "rocm:1"),
    (None, 1, {"POOT_DEVICE": "cuda"}, "cuda:1"),
])
def test_device_for_a_worker(spec, name, env, expected):
    assert workers.device_for(spec, name, env) == expected


def test_one_cuda_device_per_worker_needs_numbered_workers():
    with pytest.raises(pt.DeviceError, match="integer worker names"):
        workers.device_for("cuda", "tcp://10.0.0.1:4000", {})


def test_plugin_sets_the_process_device_and_refuses_a_second_one(monkeypatch):
    monkeypatch.setenv("POOT_DEVICE", "cpu")
    monkeypatch.setattr(workers, "_chosen", {})
    plugin = pdask.PootWorkerPlugin("oracle")
    worker = SimpleNamespace(name=0)
    try:
        plugin.setup(worker)
        assert pdask.worker_device() == "oracle" and tasks._device == "oracle"
        with pytest.raises(pt.DeviceError, match="share its device"):
            pdask.PootWorkerPlugin("cpu").setup(SimpleNamespace(name=1))
    finally:
        plugin.teardown(worker)
    assert tasks._device is None and pdask.worker_device() is None


def test_tasks_move_their_inputs_to_the_worker_device():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = da.from_array(pt.asarray(a), chunks=(3, 2))   # chunks on the CPU
    tasks.use_device("oracle")
    try:
        with dask.config.set(scheduler="sync"):
            out = (x * 2.0).sum(axis=0).compute()
    finally:
        tasks.use_device(None)
    assert out.device == "oracle"
    assert np.array_equal(out.numpy(), (a * 2.0).sum(axis=0))


def test_pickling_realizes_a_pending_array():
    pending = (pt.asarray(np.arange(6, dtype=np.float32)) + 1.0) * 2.0
    assert not pending.is_realized
    back = pickle.loads(pickle.dumps(pending, protocol=5))
    assert isinstance(back, pt.Array) and back.dtype == pt.float32 and back.is_realized
    assert np.array_equal(back.numpy(), (np.arange(6, dtype=np.float32) + 1.0) * 2.0)


def test_wrapped_tasks_pickle_and_tokenize():
    from dask.base import tokenize

    x = da.from_array(pt.asarray(np.ones((4, 4), np.float32)), chunks=2)
    graph = tasks.optimize(dict((x + 1).__dask_graph__()), (x + 1).__dask_keys__())
    wrapped = [v for v in graph.values() if isinstance(getattr(v, "func", None), tasks.ChunkTask)]
    assert wrapped, graph
    again = pickle.loads(pickle.dumps(wrapped[0]))
    assert tokenize(again) == tokenize(wrapped[0])
    assert again.func.__name__ == wrapped[0].func.__name__


def test_tuple_form_graphs_end_tasks_with_a_realize():
    """Dask before its task classes (dask._task_spec) keeps graphs as tuples: each task is wrapped too."""
    import operator

    from dask.local import get_sync

    a = pt.asarray(np.arange(4, dtype=np.float32))
    graph = tasks.wrap_legacy_graph({"a": a, "b": (operator.mul, "a", 2.0), "c": (operator.add, "b", 1.0)})
    pdask.task_stats(clear=True)
    out = get_sync(graph, "c")
    assert out.is_realized and np.array_equal(out.numpy(), np.arange(4, dtype=np.float32) * 2 + 1)
    assert [s.programs for s in pdask.task_stats()] == [1, 1]
