"""KV-cache updates: pt.dynamic_update_slice (JAX semantics, traced starts) and pt.paged_update, against
NumPy, and in place inside @pt.jit with a donated cache (no cache-sized allocation per step)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.errors import KernelIndexError


def _np_dynamic_update_slice(x, u, starts):
    out = x.copy()
    s = [min(max(int(st), 0), n - m) for st, n, m in zip(starts, x.shape, u.shape)]
    out[tuple(slice(a, a + m) for a, m in zip(s, u.shape))] = u
    return out


@pytest.mark.parametrize("starts", [(0, 3, 0), (1, 5, 2), (0, -4, 9), (1, 60, 1)])
def test_dynamic_update_slice_matches_jax_semantics(device, starts):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 5)).astype(np.float32)
    u = rng.standard_normal((1, 3, 2)).astype(np.float32)
    got = pt.dynamic_update_slice(x, u, starts).numpy()
    np.testing.assert_array_equal(got, _np_dynamic_update_slice(x, u, starts))    # starts clamped to fit


def test_dynamic_update_slice_with_traced_starts():
    @pt.jit
    def put(x, u, i):
        return pt.dynamic_update_slice(x, u, (0, i))

    x = np.zeros((3, 10), np.float32)
    u = np.ones((3, 2), np.float32)
    for i in (0, 4, 9):                       # one trace, every position (9 is clamped to 8)
        np.testing.assert_array_equal(put(x, u, i).numpy(), _np_dynamic_update_slice(x, u, (0, i)))


def test_paged_update_writes_through_the_page_table(device):
    rng = np.random.default_rng(1)
    cache = rng.standard_normal((5, 4, 2, 3)).astype(np.float32)     # 5 pages of 4 tokens
    table = np.array([3, 0, 4, 1], np.int32)
    positions = np.array([0, 5, 6, 15], np.int64)
    rows = rng.standard_normal((4, 2, 3)).astype(np.float32)
    want = cache.copy()
    for p, r in zip(positions, rows):
        want[table[p // 4], p % 4] = r
    got = pt.paged_update(cache, rows, table, positions).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("position", [-1, -5, 8])
def test_paged_update_position_outside_the_cache_raises(device, position):
    """A negative position traps like one past the end, not wrapped into another page's rows."""
    cache = pt.zeros((4, 2, 3))
    table = pt.asarray(np.array([0, 1, 2, 3]))
    out = pt.paged_update(cache, pt.ones((1, 3)), table, pt.asarray(np.array([position])))
    with pytest.raises(KernelIndexError, match="out of bounds"):
        out.numpy()
    np.testing.assert_array_equal(pt.paged_update(cache, pt.ones((1, 3)), table, np.array([7])).numpy()[3, 1],
                                  np.ones(3, np.float32))    # the last slot is in range


def test_donated_paged_cache_refuses_a_negative_position(device):
    @pt.jit(donate_argnums=0)
    def write(cache, rows, table, pos):
        return pt.paged_update(cache, rows, table, pos)

    table = np.array([2, 0, 1], np.int32)
    rows = np.ones((1, 3), np.float32)
    cache = write(pt.zeros((3, 2, 3)), rows, table, np.array([1], np.int64))
    want = np.zeros((3, 2, 3), np.float32)
    want[2, 1] = 1
    np.testing.assert_array_equal(cache.numpy(), want)
    with pytest.raises(KernelIndexError):
        write(pt.zeros((3, 2, 3)), rows, table, np.array([-2], np.int64)).numpy()


def _address(buf):
    """Where a buffer's memory is: its host address on the CPU, its device handle elsewhere."""
    data = getattr(getattr(buf.handle, "ctypes", None), "data", None)
    return data if data is not None else id(buf.handle)


def test_donated_cache_is_updated_in_place(device, monkeypatch, allocation_spy):
    dev = pt.devices.get(device)

    @pt.jit(donate_argnums=0)
    def append(cache, tok, pos):
        return pt.dynamic_update_slice(cache, tok, (0, pos, 0))

    cache = pt.asarray(np.zeros((2, 256, 16), np.float32))
    pt.realize(cache)
    want = np.zeros((2, 256, 16), np.float32)
    cache = append(cache, np.full((2, 1, 16), 1, np.float32), 0)        # compiles
    want[:, 0] = 1
    first = _address(cache._node.buf)
    sizes = allocation_spy(dev)
    for i in range(1, 6):
        tok = np.full((2, 1, 16), i + 1, np.float32)
        cache = append(cache, tok, i)
        want[:, i:i + 1] = tok
        assert _address(cache._node.buf) == first                           # the same buffer
    assert all(n < want.nbytes for n in sizes), sizes                    # no cache-sized allocation
    monkeypatch.undo()
    np.testing.assert_array_equal(cache.numpy(), want)


def test_donated_paged_cache_is_updated_in_place(monkeypatch, allocation_spy):
    dev = pt.devices.get("cpu")

    @pt.jit(donate_argnums=0)
    def write(cache, rows, table, pos):
        return pt.paged_update(cache, rows, table, pos)

    cache = pt.asarray(np.zeros((8, 16, 4, 8), np.float32))
    pt.realize(cache)
    table = np.array([7, 2, 5, 0], np.int32)
    want = np.zeros((8, 16, 4, 8), np.float32)
    sizes = None
    for step in range(4):
        pos = np.array([step * 16 + 3], np.int64)
        rows = np.full((1, 4, 8), step + 1, np.float32)
        cache = write(cache, rows, table, pos)
        want[table[step], 3] = step + 1
        if step == 0:
            sizes = allocation_spy(dev)
    assert all(n < want.nbytes for n in sizes), sizes
    monkeypatch.undo()
    np.testing.assert_array_equal(cache.numpy(), want)


def test_donating_calls_replay_the_recording(device, monkeypatch):
    """A call that donates its cache replays the program's recording (one CUDA graph, one native call
    on the CPU) with the cache updated in its own buffer, instead of running it step by step."""
    from poot.jit.runtime.program import Program

    @pt.jit(donate_argnums=0)
    def step(cache, tok, pos):
        cache = pt.dynamic_update_slice(cache, tok, (0, pos, 0))
        return cache, (cache * cache).sum(axis=(1, 2))      # reads the updated cache

    cache = pt.asarray(np.zeros((2, 64, 8), np.float32))
    want = np.zeros((2, 64, 8), np.float32)
    runs = []
    real_run = Program.run
    monkeypatch.setattr(Program, "run", lambda self, *a, **kw: runs.append(1) or real_run(self, *a, **kw))
    for i in range(6):
        tok = np.full((2, 1, 8), i + 1, np.float32)
        cache, energy = step(cache, tok, i)
        want[:, i:i + 1] = tok
        np.testing.assert_allclose(energy.numpy(), (want * want).sum(axis=(1, 2)), rtol=1e-6)
        if i == 1:
            first = _address(cache._node.buf)
        elif i > 1:
            assert _address(cache._node.buf) == first                       # in place
    assert not runs, "a donating call ran the program step by step"
    np.testing.assert_array_equal(cache.numpy(), want)


def test_in_place_update_skips_the_copy_of_the_cache(device, monkeypatch):
    """A scatter into a donated cache writes in place: the copy of the cache into the result, its
    first launch, has the same buffer on both sides and is not dispatched (step by step, and so not
    recorded into a replay either)."""
    from poot.jit.runtime.replay import Replay

    monkeypatch.setattr(Replay, "build", classmethod(lambda cls, program, donate=frozenset(): None))
    dev = pt.devices.get(device)
    names = []
    real_dispatch = dev.dispatch
    monkeypatch.setattr(dev, "dispatch", lambda program, *a, **kw: names.append(program.name)
                        or real_dispatch(program, *a, **kw))

    @pt.jit(donate_argnums=0)
    def append(cache, tok, pos):
        return pt.dynamic_update_slice(cache, tok, (0, pos, 0))

    cache = pt.asarray(np.zeros((2, 64, 8), np.float32))
    pt.realize(cache)
    want = np.zeros((2, 64, 8), np.float32)
    for i in range(4):
        names.clear()
        tok = np.full((2, 1, 8), i + 1, np.float32)
        cache = append(cache, tok, i)
        want[:, i:i + 1] = tok
        if i:
            assert names and not any(n.endswith("_copy") for n in names), names
    np.testing.assert_array_equal(cache.numpy(), want)
