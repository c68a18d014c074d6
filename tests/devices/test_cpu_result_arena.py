"""Small results of replayed CPU programs are carved from shared chunks (cpu.ResultArena): each is
aligned, none overlaps another one still held, and a kept result keeps its value while later calls
carve new chunks."""
from __future__ import annotations

import numpy as np

import poot as pt
from poot.devices.cpu import RESULT_CHUNK_BYTES, ResultArena
from poot.trace import context
from tests.tolerance import assert_close


def _step(a, v):
    w = a @ v
    return w / pt.sqrt((w * w).sum()), v @ w


def test_kept_small_results_keep_their_values_across_many_calls():
    rng = np.random.default_rng(0)
    an = rng.standard_normal((6, 6))
    an = an @ an.T + 6 * np.eye(6)
    a, v = pt.asarray(an), pt.asarray(np.ones(6))
    f = pt.jit(_step)
    vn, kept, expect = np.ones(6), [], []
    for _ in range(3 * RESULT_CHUNK_BYTES // 128):   # several chunks' worth of calls
        v, lam = f(a, v)
        wn = an @ vn
        vn, lamn = wn / np.sqrt(wn @ wn), vn @ wn
        kept.append(lam)
        expect.append(lamn)
        assert_close(v.numpy(), vn, np.float64, ops=12)
    assert_close(np.array([float(x) for x in kept]), np.array(expect), np.float64, ops=12)


def test_arena_buffers_are_aligned_and_disjoint():
    dev = context.backend("cpu")
    arena = ResultArena(dev, [24, 8, 1])
    held = [arena.take() for _ in range(2 * RESULT_CHUNK_BYTES // arena.total)]
    spans = sorted((b.address, b.address + b.nbytes) for bufs in held for b in bufs)
    assert all(lo % 64 == 0 for lo, _ in spans)
    assert all(hi <= nxt for (_, hi), (nxt, _) in zip(spans, spans[1:]))
    assert [b.nbytes for b in held[0]] == [24, 8, 1]
    assert ResultArena.fits([512, 256]) and not ResultArena.fits([4096])
