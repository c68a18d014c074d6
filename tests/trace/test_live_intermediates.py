"""A value something still refers to is computed once: a realize that needs a pending node which a
user's Array (or pending work not realized now) also refers to stores it, and later realizes read it.
Values nobody holds stay fused; views and constants are never stored for this."""
from __future__ import annotations

import numpy as np

import poot as pt
from poot.trace import lazy
from tolerance import assert_close


def _counting_graphs(monkeypatch):
    calls = []
    real = lazy.execute_keyed

    def counting(key, build, inputs, device):
        graph = build()
        calls.append(graph)
        return real(key, lambda: graph, inputs, device)

    monkeypatch.setattr(lazy, "execute_keyed", counting)
    return calls


def _kmeans_step(xp, points, centroids, k):
    d = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
    labels = d.argmin(axis=1)
    return xp.stack([points[labels == j].mean(0) for j in range(k)])


def test_kmeans_argmin_runs_once_per_iteration(device, monkeypatch, capfd):
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.normal(c, 0.3, size=(50, 2)) for c in (0.0, 3.0, 6.0)]).astype(np.float32)
    c = p[[0, 50, 100]] + np.float32(0.5)
    P, C = pt.asarray(p), pt.asarray(c)
    calls = _counting_graphs(monkeypatch)
    monkeypatch.setenv("POOT_DEBUG", "1")     # every launch is printed with its kernel's name
    for it in range(3):
        calls.clear()
        capfd.readouterr()
        C = _kmeans_step(pt, P, C, 3)
        c = _kmeans_step(np, p, c, 3)
        assert_close(C.numpy(), c, pt.float32, ops=64)
        argmins = sum(e.op == "argmin" for g in calls for e in g.eqns)
        assert argmins == 1, f"iteration {it}: the argmin ran in {argmins} graphs"
        launches = [line for line in capfd.readouterr().err.splitlines() if line.startswith("poot: launch")]
        assert sum("argmin" in line for line in launches) == 1, launches


def test_an_intermediate_the_user_holds_is_stored_by_the_first_realize(device, monkeypatch):
    x = pt.asarray(np.linspace(-1, 1, 64, dtype=np.float32))
    calls = _counting_graphs(monkeypatch)
    e = pt.exp(x) * 3.0           # held: the next realize reads it, so it is stored the first time
    s = e.sum()
    assert_close(s.numpy(), (np.exp(x.numpy()) * 3).sum(), pt.float32, ops=64)
    assert e.is_realized and len(calls) == 1 and len(calls[0].outputs) == 2
    assert_close((e / s).numpy(), np.exp(x.numpy()) * 3 / s.numpy(), pt.float32, ops=8)
    assert not any(eq.op == "exp" for eq in calls[1].eqns)   # read from e's buffer, not recomputed


def test_values_nobody_holds_stay_fused(device, monkeypatch):
    x = pt.asarray(np.arange(16, dtype=np.float32))
    calls = _counting_graphs(monkeypatch)
    y = (pt.exp(x * 0.1) + 1.0).sum()
    y.numpy()
    assert len(calls) == 1 and len(calls[0].outputs) == 1


def test_a_held_view_stores_the_value_it_views(device, monkeypatch):
    x = pt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    calls = _counting_graphs(monkeypatch)
    v = pt.exp(x * 0.1).reshape(4, 3).T      # the user holds a view of an exp
    (v + 1.0).numpy()
    stored = calls[0].outputs[1:]
    assert len(stored) == 1 and stored[0].aval.shape == (3, 4)   # the exp itself, not a view of it
    assert_close(v.numpy(), np.exp(np.arange(12, dtype=np.float32) * 0.1).reshape(4, 3).T, pt.float32, 4)


def test_pending_work_not_realized_yet_counts_as_a_holder(device, monkeypatch):
    x = pt.asarray(np.arange(8, dtype=np.float32))
    calls = _counting_graphs(monkeypatch)
    a = pt.sin(x)
    later, now = a * 2.0, (a + 1.0).sum()
    del a                                    # only the two pending results refer to sin(x) now
    assert_close(now.numpy(), (np.sin(np.arange(8)) + 1).sum(), pt.float32, ops=16)
    assert_close(later.numpy(), np.sin(np.arange(8)) * 2, pt.float32, ops=4)
    assert [sum(e.op == "sin" for e in g.eqns) for g in calls] == [1, 0]


def test_a_chain_of_views_reading_their_input_twice_realizes_in_linear_time():
    # each concatenate reads the previous one twice (y[1:], y[:1]): walking its views without
    # remembering them met 2**depth paths at the automatic realize of a deep chain
    y, want = pt.asarray(np.arange(100, dtype=np.float32)), np.arange(100, dtype=np.float32)
    for _ in range(1200):
        y = pt.concatenate([y[1:], y[:1]])
        want = np.concatenate([want[1:], want[:1]])
    np.testing.assert_array_equal(y.numpy(), want)
