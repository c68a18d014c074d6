"""Gradients of matmul, softmax and layer_norm against their analytic NumPy formulas, in float64
and float32 (dtype-based tolerances, tests/tolerance.py)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_gradients(dtype, device):
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal(s).astype(dtype) for s in ((5, 4), (4, 3), (5, 3)))
    loss = lambda x, y: (pt.asarray(w) * (x @ y)).sum()  # noqa: E731
    ga, gb = pt.grad(loss, argnums=(0, 1))(pt.asarray(a), pt.asarray(b))
    assert ga.dtype == pt.float32 if dtype == "float32" else ga.dtype == pt.float64
    assert_close(ga, w @ b.T, dtype, ops=8)
    assert_close(gb, a.T @ w, dtype, ops=8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_gradient(dtype, device):
    rng = np.random.default_rng(1)
    x, u = (rng.standard_normal((4, 6)).astype(dtype) for _ in range(2))
    g = pt.grad(lambda v: (pt.asarray(u) * pt.nn.softmax(v, axis=-1)).sum())(pt.asarray(x))
    s = np.exp(x - x.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    assert_close(g, s * (u - (u * s).sum(-1, keepdims=True)), dtype, ops=16)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_cross_entropy_gradient(dtype, device):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((8, 5)).astype(dtype)
    onehot = np.eye(5, dtype=dtype)[rng.integers(0, 5, 8)]
    loss = lambda z: -(pt.asarray(onehot) * pt.nn.log_softmax(z)).sum(axis=-1).mean()  # noqa: E731
    g = pt.grad(loss)(pt.asarray(logits))
    s = np.exp(logits - logits.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    assert_close(g, (s - onehot) / 8, dtype, ops=16)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_gradients(dtype, device):
    rng = np.random.default_rng(3)
    x, u = (rng.standard_normal((3, 7)).astype(dtype) for _ in range(2))
    w, b = (rng.standard_normal(7).astype(dtype) for _ in range(2))
    eps = 1e-5

    def loss(xv, wv, bv):
        return (pt.asarray(u) * pt.nn.layer_norm(xv, wv, bv, eps=eps)).sum()

    gx, gw, gb = pt.grad(loss, argnums=(0, 1, 2))(pt.asarray(x), pt.asarray(w), pt.asarray(b))
    x64, u64, w64 = x.astype(np.float64), u.astype(np.float64), w.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    sigma = np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x64 - mu) / sigma
    g = u64 * w64
    expected_x = (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True)) / sigma
    assert_close(gx, expected_x, dtype, ops=64)
    assert_close(gw, (u64 * xhat).sum(0), dtype, ops=16)
    assert_close(gb, u64.sum(0), dtype, ops=4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_and_silu_gradients_far_out(dtype, device):
    """Far below zero exp(-x) overflows (below about -88 in float32, -710 in float64): the gradients
    must stay finite (about 0) instead of inf * 0 = NaN, and stay exact at 0 and beyond."""
    x = np.array([-800.0, -100.0, -89.0, -20.0, -1.5, 0.0, 0.7, 20.0, 89.0, 100.0, 800.0]).astype(dtype)
    x64 = x.astype(np.float64)
    s = np.exp(-np.logaddexp(0.0, -x64))          # sigmoid in float64, without overflow
    gs = pt.grad(lambda v: pt.nn.sigmoid(v).sum())(pt.asarray(x))
    gl = pt.grad(lambda v: pt.nn.silu(v).sum())(pt.asarray(x))
    want = pt.float32 if dtype == "float32" else pt.float64
    assert gs.dtype == want and gl.dtype == want
    assert_close(gs, s * (1 - s), dtype, ops=8)
    assert_close(gl, s + x64 * s * (1 - s), dtype, ops=8)
