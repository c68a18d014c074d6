"""A Program's run by its static schedule (poot/jit/runtime/program.py): where the pool of freed
buffers puts each slot depends only on sizes and step order, so an eager run binds a list of buffers
instead of walking its steps with dictionaries. Both ways must give the same results."""
from __future__ import annotations

import numpy as np

import poot as pt
from poot import devices
from poot.jit.runtime.execute import compiled_program
from poot.trace.walk import Walk


def _program_and_inputs(root: pt.Array):
    walk = Walk([root._node])
    prog = compiled_program(walk.graph(), devices.get("cpu"))
    return prog, [leaf.buf for leaf in walk.leaves]


def _bytes(buf, aval):
    return np.array(buf.handle[: aval.nbytes])


def test_scheduled_run_gives_what_the_general_walk_gives(monkeypatch):
    r = np.random.default_rng(0)
    x = pt.asarray(r.normal(size=(64, 33)).astype(np.float32))
    v = pt.asarray(r.normal(size=33).astype(np.float32))
    # reductions between pointwise regions: several steps whose intermediates the pool reuses
    y = pt.exp(x - x.max(axis=1, keepdims=True))
    y = (y / y.sum(axis=1, keepdims=True)) * v
    z = (y - y.mean(axis=0)).sum(axis=0) + pt.sqrt(pt.abs(v))
    prog, inputs = _program_and_inputs(z)
    assert prog._schedule is not None
    scheduled = prog._run_scheduled(inputs)
    monkeypatch.setenv("POOT_DEBUG", "1")          # debug timing takes the general walk
    general = prog.run(inputs)
    monkeypatch.delenv("POOT_DEBUG")
    avals = [v.aval for v in prog.plan.graph.outputs]
    assert len(scheduled) == len(avals) == len(general)
    for out, ref, aval in zip(scheduled, general, avals):
        assert np.array_equal(_bytes(out, aval), _bytes(ref, aval))
    xn, vn = x.numpy(), v.numpy()
    yn = np.exp(xn - xn.max(axis=1, keepdims=True))
    yn = yn / yn.sum(axis=1, keepdims=True) * vn
    expect = (yn - yn.mean(axis=0)).sum(axis=0) + np.sqrt(np.abs(vn))
    np.testing.assert_allclose(z.numpy(), expect, rtol=1e-4, atol=1e-5)


def test_results_of_successive_scheduled_runs_are_distinct_buffers():
    x = pt.asarray(np.arange(10, dtype=np.float32))
    y = (x * 2.0 + 1.0).sum()
    prog, inputs = _program_and_inputs(y)
    first, second = prog.run(inputs), prog.run(inputs)
    assert first[0] is not second[0]
    assert float(y.numpy()) == float(np.sum(np.arange(10, dtype=np.float32) * 2 + 1))


def test_a_program_with_a_host_step_walks_its_steps():
    a = pt.asarray(np.ones((8, 5), np.float32))
    b = pt.asarray(np.ones((5, 3), np.float32))
    y = (a @ b) * 2.0
    prog, _ = _program_and_inputs(y)
    if any(kind == "host" for _, actions, _ in prog.steps for kind, *_ in actions):
        assert prog._schedule is None
    assert np.array_equal(y.numpy(), np.full((8, 3), 10.0, np.float32))
