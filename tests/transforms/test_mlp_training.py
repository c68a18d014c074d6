"""A program: a 2-layer MLP classifier on synthetic blobs trained with
`pt.jit(pt.value_and_grad(loss))` and plain SGD written with poot ops; its loss curve must match a
NumPy implementation (hand-written backward pass) started from the same parameters."""
from __future__ import annotations

import numpy as np

import poot as pt

STEPS, LR = 30, 0.5


def _blobs(n_per_class=32, classes=3, features=4, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, features)) * 3.0
    x = np.concatenate([c + rng.standard_normal((n_per_class, features)) for c in centers])
    labels = np.repeat(np.arange(classes), n_per_class)
    return x.astype(np.float32), np.eye(classes, dtype=np.float32)[labels]


def _init(features=4, hidden=16, classes=3, seed=1):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((features, hidden)) * 0.5).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, classes)) * 0.5).astype(np.float32),
            "b2": np.zeros(classes, np.float32)}


def _numpy_curve(params, x, y, steps: int = STEPS) -> list[float]:
    p = {k: v.copy() for k, v in params.items()}
    curve = []
    n = x.shape[0]
    for _ in range(steps):
        pre = x @ p["w1"] + p["b1"]
        h = np.maximum(pre, 0.0)
        logits = h @ p["w2"] + p["b2"]
        shifted = logits - logits.max(-1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        curve.append(float(-(y * logp).sum(-1).mean()))
        d_logits = (np.exp(logp) - y) / n
        d_h = d_logits @ p["w2"].T * (pre > 0)
        grads = {"w2": h.T @ d_logits, "b2": d_logits.sum(0), "w1": x.T @ d_h, "b1": d_h.sum(0)}
        p = {k: (p[k] - LR * grads[k]).astype(np.float32) for k in p}
    return curve


def _loss(p, x, y):
    h = pt.maximum(x @ p["w1"] + p["b1"], 0.0)
    logits = h @ p["w2"] + p["b2"]
    return -(y * pt.nn.log_softmax(logits, axis=-1)).sum(axis=-1).mean()


def test_mlp_training_matches_numpy(device):
    x, y = _blobs()
    params = _init()
    step_grad = pt.jit(pt.value_and_grad(_loss))
    p = {k: pt.asarray(v) for k, v in params.items()}
    xs, ys = pt.asarray(x), pt.asarray(y)
    curve = []
    for _ in range(STEPS):
        loss, g = step_grad(p, xs, ys)
        p = {k: p[k] - LR * g[k] for k in p}
        curve.append(float(loss))
    assert step_grad.trace_count == 1
    expected = _numpy_curve(params, x, y)
    np.testing.assert_allclose(curve, expected, rtol=2e-4, atol=2e-5)
    assert curve[-1] < 0.25 * curve[0]


def test_jitted_training_step_with_update_inside():
    x, y = _blobs(n_per_class=8, seed=2)
    params = _init(seed=3)

    @pt.jit
    def step(p, xb, yb):
        loss, g = pt.value_and_grad(_loss)(p, xb, yb)
        return {k: p[k] - LR * g[k] for k in p}, loss

    p = {k: pt.asarray(v) for k, v in params.items()}
    curve = []
    for _ in range(10):
        p, loss = step(p, pt.asarray(x), pt.asarray(y))
        curve.append(float(loss))
    expected = _numpy_curve(params, x, y, steps=10)
    np.testing.assert_allclose(curve, expected, rtol=2e-4, atol=2e-5)
