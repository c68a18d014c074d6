"""A cached jitted call checks its arguments against the guard of the signature used last
(poot/trace/jit_guard.py) instead of building the signature: what it lets through must behave as the
full lookup does, and what it turns away must still find its program (or trace one)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import poot as pt
from poot.devices import cpu_chain, get


def _rows(x, k, s):
    return (x * s).sum(axis=k) + 1.0, x.max()


def test_equal_static_objects_share_a_trace_and_new_ones_retrace(device):
    f = pt.jit(_rows, static_argnums=1)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = pt.array(a)
    for axis in ((0,), (0,), tuple([0])):     # equal tuples, not always the same object
        y, m = f(x, axis, 2.0)
        np.testing.assert_allclose(y.numpy(), (a * 2).sum(axis=0) + 1)
        assert float(m) == 11.0
    assert f.trace_count == 1
    f(x, (1,), 2.0)
    f(x, (0,), 2.0)
    assert f.trace_count == 2


class _Scale:
    """A mutable static hashed by its contents (as a non-frozen dataclass with unsafe_hash is)."""

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, _Scale) and other.k == self.k

    def __hash__(self):
        return hash(self.k)


def test_a_static_object_changed_in_place_is_seen_as_the_signature_sees_it(device):
    f = pt.jit(lambda x, cfg: x * cfg.k, static_argnums=1)
    a = np.arange(4, dtype=np.float32)
    cfg = _Scale(2.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(pt.array(a), cfg).numpy(), a * 2)
    cfg.k = 3.0                               # a new hash: the full lookup traces again
    np.testing.assert_array_equal(f(pt.array(a), cfg).numpy(), a * 3)
    assert f.trace_count == 2


def test_a_new_shape_dtype_scalar_type_or_device_after_cached_calls_retraces(device):
    f = pt.jit(_rows, static_argnums=1)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(3):
        f(pt.array(a), 0, 2.0)
    assert f.trace_count == 1
    y, _ = f(pt.array(a[:2]), 0, 2.0)
    np.testing.assert_allclose(y.numpy(), (a[:2] * 2).sum(axis=0) + 1)
    assert f.trace_count == 2
    y, _ = f(pt.array(a.astype(np.float64)), 0, 2.0)
    assert y.dtype == pt.float64 and f.trace_count == 3
    f(pt.array(a), 0, 2)                                 # an int is another signature than a float
    assert f.trace_count == 4
    other = "oracle" if device != "oracle" else "cpu"
    with pt.device(other):                               # the current device is part of the signature
        y, _ = f(pt.array(a), 0, 2.0)
    np.testing.assert_allclose(y.numpy(), (a * 2).sum(axis=0) + 1)
    assert f.trace_count == 5
    f(pt.array(a), 0, 2.0)                               # back to a cached signature
    assert f.trace_count == 5


def test_cached_calls_take_each_scalar_value_pending_arrays_and_captured_constants(device):
    c = pt.array(np.array([1.0, -2.0, 3.0], np.float32))

    @pt.jit
    def f(x, s):
        return x * s + c

    a = np.array([0.5, 1.5, -4.0], np.float32)
    x = pt.array(a)
    rate = 0.25
    for s in (rate, rate, 2.0, rate, -0.0, 0.0, float("nan"), rate):
        got = f(x, s).numpy()
        want = a * np.float32(s) + np.array([1.0, -2.0, 3.0], np.float32)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    for k in range(3):                                   # arguments not realized yet are computed first
        np.testing.assert_allclose(f(x + float(k), 2.0).numpy(), (a + k) * 2 + [1.0, -2.0, 3.0])
    assert f.trace_count == 1


def test_an_array_used_up_by_donation_is_refused_by_a_cached_call(device):
    f = pt.jit(lambda x: x + 1.0)
    give = pt.jit(lambda x: pt.exp(x), donate_argnums=0)
    for _ in range(3):
        f(pt.array(np.zeros(64, np.float32)))
    x = pt.array(np.zeros(64, np.float32))
    give(x)
    with pytest.raises(pt.PootError, match="donated"):
        f(x)


def test_donating_calls_in_a_loop_reuse_their_buffers(device):
    step = pt.jit(lambda x: pt.cumsum(pt.exp(x)) * 1e-3, donate_argnums=0)
    a = np.linspace(-1, 1, 1000).astype(np.float32)
    x, want = pt.array(a), a
    for _ in range(5):
        x = step(x)
        want = np.cumsum(np.exp(want)) * np.float32(1e-3)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-4)
    assert step.trace_count == 1


def test_threads_calling_one_cached_signature_get_their_own_results(device):
    f = pt.jit(lambda x, s: (x * s).sum() + s)
    inputs = [np.full(33, k, np.float32) for k in range(6)]
    results: dict = {}

    def work(k):
        with pt.device(device):
            for j in range(40):
                s = float(k + j % 3)
                results[k, j] = (float(f(pt.array(inputs[k]), s)), s)

    f(pt.array(inputs[0]), 1.0)          # traced before the threads start: each first call would trace
    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (k, _), (got, s) in results.items():
        assert got == pytest.approx(33 * k * s + s, rel=1e-6)
    assert f.trace_count == 1


def test_a_chain_of_inline_launches_runs_while_another_thread_holds_the_pool():
    if not cpu_chain.enabled():
        pytest.skip("POOT_CPU_CHAIN=0 in the environment turns chaining off")
    dev = get("cpu")
    pool = dev._pool() if dev.caps.cores > 1 else None
    if pool is None or not hasattr(pool, "lock"):
        pytest.skip("no native pool here: every chain runs inline")
    f = pt.jit(lambda x, y: (pt.exp(x) + y) * 2.0)
    with pt.device("cpu"):
        x, y = pt.array(np.zeros(8, np.float32)), pt.array(np.ones(8, np.float32))
        for _ in range(cpu_chain.MEASURED_RUNS + 2):
            f(x, y)
        (prog,) = f._cache.values()
        chain = prog.replay.recording.chain
        assert chain is not None
        calls = chain.calls
        with pool.lock:                                  # as a split launch of another thread would
            np.testing.assert_allclose(f(x, y).numpy(), np.full(8, 4.0, np.float32))
        assert chain.calls == calls + 1, "a chain with nothing to split should not wait for the pool"


def _sgd(params, x, lr):
    w, b = params
    g = (x @ w + b).sum()
    return (w - lr * g, b - lr), g


def test_tuple_and_list_arguments_take_the_guard_and_nested_results_keep_their_types(device):
    f = pt.jit(_sgd)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w, b = np.ones((3, 2), np.float32), np.zeros(2, np.float32)
    params, host = (pt.array(w), pt.array(b)), (w, b)
    for _ in range(4):
        params, g = f(params, pt.array(x), 0.01)
        host, hg = _sgd(host, x, np.float32(0.01))
        assert type(params) is tuple and len(params) == 2
        np.testing.assert_allclose(float(g), hg, rtol=1e-5)
        for p, q in zip(params, host):
            np.testing.assert_allclose(p.numpy(), q, rtol=1e-5)
    assert f.trace_count == 1 and f._hot is not None and f._hot.guard.groups
    f([params[0], params[1]], pt.array(x), 0.01)         # a list, not a tuple: another signature
    assert f.trace_count == 2
    with pytest.raises(ValueError):                       # one more parameter than _sgd unpacks: its error
        f((params[0], params[1], params[1]), pt.array(x), 0.01)
    assert f.trace_count == 2                             # a trace that raised caches and counts nothing
    same = (pt.ones((3, 2), dtype=pt.float32), pt.ones(2, dtype=pt.float32))
    f(same, pt.array(x), 0.01)                          # new arrays of the traced shapes: no trace
    assert f.trace_count == 2
    f((pt.ones((3, 4), dtype=pt.float32), pt.ones(4, dtype=pt.float32)), pt.array(x), 0.01)  # retraced
    assert f.trace_count == 3
