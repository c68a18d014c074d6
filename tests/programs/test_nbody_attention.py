"""An n-body simulation (leapfrog steps of softened gravity) and causal self-attention written by
hand (scores, a -inf mask above the diagonal, softmax with max subtraction, residual, layer norm)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from .harness import check_program

SOFT = 0.1


# -- 8. n-body --------------------------------------------------------------------------------------
def acceleration(xp, pos, mass):
    d = pos[None, :, :] - pos[:, None, :]          # d[i, j] = r_j - r_i
    r2 = (d * d).sum(axis=-1) + SOFT * SOFT
    w = mass[None, :] * r2 ** -1.5
    return (d * w[:, :, None]).sum(axis=1)


def nbody_step(xp, pos, vel, mass, dt):
    vel = vel + 0.5 * dt * acceleration(xp, pos, mass)
    pos = pos + dt * vel
    vel = vel + 0.5 * dt * acceleration(xp, pos, mass)
    return pos, vel


def energy(xp, pos, vel, mass):
    kinetic = 0.5 * (mass * (vel * vel).sum(axis=1)).sum()
    d = pos[None, :, :] - pos[:, None, :]
    r = xp.sqrt((d * d).sum(axis=-1) + SOFT * SOFT)
    n = pos.shape[0]
    upper = xp.arange(n)[None, :] > xp.arange(n)[:, None]
    potential = -xp.where(upper, mass[:, None] * mass[None, :] / r, 0).sum()
    return kinetic + potential


def nbody_run(xp, step, pos, vel, mass):
    e0 = energy(xp, pos, vel, mass)
    for _ in range(20):
        pos, vel = step(xp, pos, vel, mass, 0.001)
    return pos, vel, e0, energy(xp, pos, vel, mass)


def nbody_inputs(dtype):
    r = np.random.default_rng(8)
    n = 32
    return (r.normal(size=(n, 3)).astype(dtype), (0.1 * r.normal(size=(n, 3))).astype(dtype),
            r.uniform(0.5, 1.5, size=n).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_nbody(device, dtype):
    check_program(device, nbody_run, nbody_step, nbody_inputs(dtype), ops=1024)
    pos, vel, e0, e1 = nbody_run(np, nbody_step, *nbody_inputs(np.float64))
    assert abs(e1 - e0) < 1e-3 * abs(e0)  # leapfrog keeps the energy


# -- 9. causal self-attention -----------------------------------------------------------------------
def attention(xp, q, k, v):
    T, d = q.shape[-2], q.shape[-1]
    i = xp.arange(T)
    mask = xp.where(i[None, :] > i[:, None], -xp.inf, 0.0).astype(q.dtype)
    scores = q @ xp.swapaxes(k, -1, -2) * (1.0 / math.sqrt(d)) + mask
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = xp.exp(scores)
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def layer_norm(xp, x, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + eps)


def attention_block(xp, x, Wq, Wk, Wv, Wo):
    H, (T, D) = Wq.shape[0], x.shape
    q, k, v = x[None] @ Wq, x[None] @ Wk, x[None] @ Wv        # (H, T, D / H) per head
    heads = attention(xp, q, k, v)
    merged = xp.reshape(xp.permute_dims(heads, (1, 0, 2)), (T, D))
    return layer_norm(xp, x + merged @ Wo)


def attention_run(xp, step, x, Wq, Wk, Wv, Wo):
    outs = []
    for _ in range(3):  # the same block applied three times (weights shared)
        x = step(xp, x, Wq, Wk, Wv, Wo)
        outs.append(x[-1])
    return x, xp.stack(outs)


def attention_inputs(dtype):
    r = np.random.default_rng(9)
    T, D, H = 16, 16, 2
    s = 1 / np.sqrt(D)
    return (r.normal(size=(T, D)).astype(dtype), *(
        (s * r.normal(size=shape)).astype(dtype) for shape in [(H, D, D // H)] * 3 + [(D, D)]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_causal_attention(device, dtype):
    check_program(device, attention_run, attention_block, attention_inputs(dtype), ops=512)


def test_attention_is_causal(device):
    """Changing the last token changes no earlier output row."""
    import poot as pt

    x, Wq, Wk, Wv, Wo = attention_inputs(np.float32)
    x2 = x.copy()
    x2[-1] += 1.0
    block = pt.jit(attention_block, static_argnums=0)
    a = block(pt, *(pt.asarray(t) for t in (x, Wq, Wk, Wv, Wo))).numpy()
    b = block(pt, *(pt.asarray(t) for t in (x2, Wq, Wk, Wv, Wo))).numpy()
    from tolerance import assert_close

    assert_close(a[:-1], b[:-1], pt.float32, ops=16)  # equal up to rounding (a different schedule)
    assert np.abs(a[-1] - b[-1]).max() > 0.1
