"""CPU programs with matmuls run as one native call: each float32/float64 matmul is a BLAS gemm call
held by the program's recording, among its kernel launches (poot/devices/cpu_blas.py), so a replay
of a training step is one call into the compiled chain instead of a Python trip per matmul."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.devices import cpu_blas
from tolerance import assert_close

pytestmark = pytest.mark.skipif(cpu_blas._function("f32") is None,
                                reason="NumPy here links no CBLAS gemm poot can call by address")


def _step(x, a, b, lr):
    h = pt.tanh(x @ a)
    g = h @ b
    loss = (g * g).sum()
    return a - lr * (x.T @ ((g @ b.T) * (1 - h * h))), b - lr * (h.T @ g), loss


def _np_step(x, a, b, lr):
    h = np.tanh(x @ a)
    g = h @ b
    loss = (g * g).sum()
    return a - lr * (x.T @ ((g @ b.T) * (1 - h * h))), b - lr * (h.T @ g), loss


def _replay_of(jitted):
    (prog,) = jitted._cache.values()
    return prog.replay


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_training_step_is_one_native_call(dtype):
    r = np.random.default_rng(0)
    xn, an, bn = (r.normal(size=s).astype(dtype) for s in ((16, 5), (5, 7), (7, 3)))
    f = pt.jit(_step)
    x, a, b = pt.asarray(xn), pt.asarray(an), pt.asarray(bn)
    for _ in range(4):                       # the chain is built once the recording has run twice
        out = f(x, a, b, 0.01)
    replay = _replay_of(f)
    assert [s[0] for s in replay.segments] == ["rec"], "a matmul split the recording"
    rec = replay.segments[0][1]
    assert sum(type(c).__name__ == "_GemmCall" for c in rec.calls) == 5
    assert rec.chain is not None
    before = rec.chain.calls
    a2, b2 = an, bn
    for _ in range(3):
        a, b, loss = f(x, a, b, 0.01)
        a2, b2, loss2 = _np_step(xn, a2, b2, dtype(0.01))
    assert rec.chain.calls == before + 3     # one native call per jitted call
    for got, want in ((a, a2), (b, b2), (loss, loss2)):
        assert_close(got.numpy(), want, dtype=dtype, err_msg="step after replays", ops=50)


def test_batched_and_broadcast_matmul_in_chain():
    r = np.random.default_rng(1)
    an = r.normal(size=(3, 4, 5)).astype(np.float32)
    bn = r.normal(size=(5, 2)).astype(np.float32)
    cn = r.normal(size=(3, 2, 6)).astype(np.float32)

    def f(a, b, c):
        return ((a @ b) @ c) * 2.0

    jf = pt.jit(f)
    a, b, c = pt.asarray(an), pt.asarray(bn), pt.asarray(cn)
    for _ in range(4):
        got = jf(a, b, c)
    assert_close(got.numpy(), ((an @ bn) @ cn) * 2.0, dtype=np.float32, err_msg="batched matmul", ops=50)
    rec = _replay_of(jf).segments[0][1]
    assert sum(type(c).__name__ == "_GemmCall" for c in rec.calls) == 2


def test_eager_loop_replays_with_blas_and_matches_numpy():
    """A repeated eager realize (the same graph each time) replays its recording with the gemm calls."""
    r = np.random.default_rng(2)
    mn = r.normal(size=(24, 24))
    m = pt.asarray(mn)
    v, vn = pt.ones(24), np.ones(24)
    for _ in range(8):
        v = m @ v
        v = v / pt.sqrt((v * v).sum())
        vn = mn @ vn
        vn = vn / np.sqrt((vn * vn).sum())
        assert_close(v.numpy(), vn, dtype=np.float64, err_msg="power iteration", ops=50)


def test_host_step_path_when_blas_calls_are_off(monkeypatch):
    monkeypatch.setenv("POOT_CPU_BLAS", "0")
    f = pt.jit(lambda a, b: a @ b + 1.0)
    an = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    bn = np.ones((4, 2), np.float32)
    for _ in range(3):
        got = f(pt.asarray(an), pt.asarray(bn))
    assert_close(got.numpy(), an @ bn + 1.0, dtype=np.float32, err_msg="matmul as a host step", ops=50)
    assert [s[0] for s in _replay_of(f).segments].count("host") == 1


def test_gemm_refuses_what_it_cannot_do():
    from poot.graph import Aval

    f32, f16 = pt.float32, pt.float16
    assert cpu_blas.gemm_for(Aval((2, 3), f16), Aval((3, 4), f16), Aval((2, 4), f16)) is None
    assert cpu_blas.gemm_for(Aval((2, 0), f32), Aval((0, 4), f32), Aval((2, 4), f32)) is None
    assert cpu_blas.gemm_for(Aval((2, 2, 3), f32), Aval((3, 3, 4), f32), Aval((2, 2, 4), f32)) is None
    big = cpu_blas.MAX_BATCH + 1
    assert cpu_blas.gemm_for(Aval((big, 2, 3), f32), Aval((3, 4), f32), Aval((big, 2, 4), f32)) is None
    g = cpu_blas.gemm_for(Aval((4, 2, 3), f32), Aval((3, 5), f32), Aval((4, 2, 5), f32))
    assert (g.m, g.n, g.k, g.batch, g.a_step, g.b_step) == (2, 5, 3, 4, 6, 0)
    big = int(cpu_blas.MAX_CHAIN_MACS ** (1 / 3)) + 2      # OpenBLAS would start its threads
    assert cpu_blas.gemm_for(Aval((big, big), f32), Aval((big, big), f32), Aval((big, big), f32)) is None
