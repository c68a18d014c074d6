"""Laziness and realization: nothing runs until a value is needed; pt.realize runs one graph;
realized arrays drop their graph (memory stays flat in long loops); chains of any depth work; the
hooks @poot.jit traces with (placeholders, tracing()) refuse to realize."""
from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import poot as pt
from poot.graph import Aval
from poot.trace import context, lazy
from tolerance import assert_close


@pytest.fixture
def execute_calls(monkeypatch):
    """The graphs realize runs, in order (each built from its walk, whose key must be the graph's)."""
    calls = []
    real = lazy.execute_keyed

    def counting(key, build, inputs, device):
        graph = build()
        assert graph.key() == key
        calls.append(graph)
        return real(key, lambda: graph, inputs, device)

    monkeypatch.setattr(lazy, "execute_keyed", counting)
    return calls


def test_operations_run_nothing_until_a_value_is_needed(device, execute_calls):
    x = pt.asarray(np.arange(6, dtype=np.float32))
    y = pt.exp(x) * 2.0 + x.sum()
    assert not y.is_realized and execute_calls == []
    assert y.shape == (6,) and y.dtype is pt.float32 and y.device == device  # metadata is free
    assert execute_calls == []
    e = np.exp(np.arange(6, dtype=np.float32)) * 2 + 15
    assert_close(y.numpy(), e, pt.float32, 2)
    assert len(execute_calls) == 1
    y.numpy(), float(y[0]), y.tolist()
    # only the y[0] slice ran again; on the CPU an element of a realized array is read on the host
    assert len(execute_calls) == (1 if device == "cpu" else 2)


def test_realize_runs_several_arrays_in_one_graph(device, execute_calls):
    x = pt.asarray(np.arange(4.0))
    a, b, c = x + 1, x * 2, (x + 1).sum()
    assert pt.realize(a, b, c) == (a, b, c)
    assert len(execute_calls) == 1 and len(execute_calls[0].outputs) == 3
    assert a.tolist() == [1, 2, 3, 4] and b.tolist() == [0, 2, 4, 6] and c.item() == 10
    assert len(execute_calls) == 1


def test_graph_inputs_are_deduplicated_and_eqns_record_the_user_line(device, execute_calls):
    x = pt.asarray(np.arange(4.0))
    y = x + x * x  # LINE-MARK
    y.numpy()
    g = execute_calls[0]
    assert len(g.inputs) == 1
    g.validate()
    line = next(i for i, t in enumerate(open(__file__).read().splitlines(), 1) if "LINE-MARK" in t
                and "next(" not in t)
    assert all(e.where == f"{__file__}:{line}" for e in g.eqns)


def test_a_realized_array_drops_its_graph(device):
    x = pt.asarray(np.ones(3))
    y = (x + 1) * 2
    node = y._node
    assert node.op == "mul" and node.inputs
    y.numpy()
    assert node.op is None and node.inputs == () and node.buf is not None
    assert y.__poot_buffer__() is node.buf and y.aval == Aval((3,), pt.float64)


def test_pending_chains_are_bounded(device):
    x = pt.asarray(np.zeros(2))
    for _ in range(3 * lazy.MAX_PENDING_DEPTH):
        x = x + 1.0
        assert x._node.depth <= lazy.MAX_PENDING_DEPTH + 1
    assert x.tolist() == [3.0 * lazy.MAX_PENDING_DEPTH] * 2


def test_a_20000_op_chain_builds_without_recursion(device):
    with lazy.tracing():  # no auto-realize while tracing: the whole chain stays in one graph
        p = pt.Array(lazy.placeholder(Aval((2,), pt.float32), device))
        y = p
        for _ in range(20000):
            y = y * 1.0
        graph, leaves = lazy.build_graph([y._node])
    assert len(graph.eqns) == 20000 and leaves[0] is p._node and len(leaves) == 2  # p and 1.0
    del y, graph, leaves  # freeing a 20k-long chain must not overflow the stack either
    gc.collect()


def test_memory_stays_flat_over_10000_iterations(device):
    x = pt.asarray(np.zeros(16))
    expected = np.zeros(16)
    for _ in range(200):  # warm up caches
        x = x * 0.5 + 1
    tracemalloc.start()
    try:
        checkpoints = []
        for i in range(10000):
            x = x * 0.5 + 1
            if i % 100 == 99:
                pt.realize(x)
            if i in (999, 9999):
                gc.collect()
                checkpoints.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    for _ in range(10200):
        expected = expected * 0.5 + 1
    assert_close(x.numpy(), expected, pt.float64)
    assert checkpoints[1] - checkpoints[0] < 64 * 1024, checkpoints  # no growth with iterations


def test_placeholders_trace_into_a_graph_and_refuse_to_realize(device):
    p = pt.Array(lazy.placeholder(Aval((3,), pt.float32), device))
    q = pt.nn.softmax(p * 2.0)
    graph, leaves = lazy.build_graph([q._node])
    graph.validate()
    assert leaves[0] is p._node and graph.outputs[0].aval == Aval((3,), pt.float32)
    assert all(leaf.buf is not None for leaf in leaves[1:])  # the constant 2.0 is a realized leaf
    with pytest.raises(pt.TracerError, match="traced"):
        q.numpy()
    assert "traced" in repr(q)


def test_device_context_and_default(device, monkeypatch):
    assert pt.zeros(1).device == device
    with pt.device("oracle"):
        assert pt.zeros(1).device == "oracle"
        with pt.device("cpu") as d:
            assert pt.ones(1).device == "cpu" and d == "cpu" and str(d) == "cpu"
        assert pt.arange(3).device == "oracle"
    seen = []
    t = threading.Thread(target=lambda: seen.append(pt.zeros(1).device))
    with pt.device("oracle"):
        t.start()
        t.join()
    assert seen == [context.default()]  # the context is per thread
    monkeypatch.setenv("POOT_DEVICE", "oracle")
    t = threading.Thread(target=lambda: seen.append(pt.zeros(1).device))
    t.start()
    t.join()
    assert seen[-1] == "oracle"


def test_to_moves_between_devices(device):
    x = pt.asarray(np.arange(3.0)) + 1
    y = x.to("oracle")
    assert y.device == "oracle" and y.tolist() == [1, 2, 3] and x.to(device) is x
    assert (y * 2).to("cpu").tolist() == [2, 4, 6] and pt.asarray(x, device="oracle").device == "oracle"


def test_python_scalars_and_int_indices_are_graph_inputs_not_structure(device, execute_calls):
    x = pt.asarray(np.arange(3.0))
    (x * 0.5 + 1).numpy()
    (x * 0.25 + 2).numpy()
    float((x + 1)[0]), float((x + 1)[2])   # (a realized CPU array's element is read on the host)
    a, b, c, d = execute_calls
    assert a.key() == b.key() and c.key() == d.key()  # one compiled program serves both
