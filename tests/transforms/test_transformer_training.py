"""A program: one pre-norm transformer block (causal self-attention written by hand, layer norm, a
GELU MLP, residuals) trained with `pt.jit(pt.value_and_grad(loss))` and Adam written with poot ops.

Its gradient at the start is checked in float64 against central differences along random directions
of the whole parameter pytree (every parameter at once), and training must make the loss fall."""
from __future__ import annotations

import numpy as np

import poot as pt

B, T, D, H, F = 2, 6, 8, 2, 16           # batch, tokens, model width, heads, MLP width


def _init(dtype, seed=0):
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(dtype)  # noqa: E731
    return {"ln1_w": np.ones(D, dtype), "ln1_b": np.zeros(D, dtype),
            "wq": w(D, D), "wk": w(D, D), "wv": w(D, D), "wo": w(D, D),
            "ln2_w": np.ones(D, dtype), "ln2_b": np.zeros(D, dtype),
            "w1": w(D, F), "b1": np.zeros(F, dtype), "w2": w(F, D), "b2": np.zeros(D, dtype),
            "head": w(D, 1)}


def _data(dtype, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, T, D)).astype(dtype)
    y = np.sin(x.sum(axis=(1, 2)) / 3.0).astype(dtype)[:, None]    # a smooth target per sequence
    return x, y


def _heads(a):                                       # (B, T, D) -> (B, H, T, D / H)
    return pt.permute_dims(a.reshape((B, T, H, D // H)), (0, 2, 1, 3))


def block(p, x):
    h = pt.nn.layer_norm(x, p["ln1_w"], p["ln1_b"])
    q, k, v = _heads(h @ p["wq"]), _heads(h @ p["wk"]), _heads(h @ p["wv"])
    s = q @ pt.matrix_transpose(k) / np.sqrt(D // H)
    causal = pt.arange(T)[:, None] >= pt.arange(T)[None, :]
    s = pt.where(causal, s, -1e9)
    e = pt.exp(s - s.max(axis=-1, keepdims=True))
    a = (e / e.sum(axis=-1, keepdims=True)) @ v                      # (B, H, T, D / H)
    x = x + pt.permute_dims(a, (0, 2, 1, 3)).reshape((B, T, D)) @ p["wo"]
    m = pt.nn.gelu(pt.nn.layer_norm(x, p["ln2_w"], p["ln2_b"]) @ p["w1"] + p["b1"], approximate="tanh")
    return x + m @ p["w2"] + p["b2"]


def loss(p, x, y):
    pred = block(p, x).mean(axis=1) @ p["head"]
    return ((pred - y) ** 2).mean()


def test_gradient_matches_central_differences(device):
    params = {k: pt.asarray(v) for k, v in _init(np.float64).items()}
    x, y = (pt.asarray(a) for a in _data(np.float64))
    grads = pt.grad(loss)(params, x, y)
    rng = np.random.default_rng(2)
    for _ in range(3):
        direction = {k: rng.standard_normal(v.shape) for k, v in params.items()}
        eps = 1e-5
        plus = {k: v + eps * direction[k] for k, v in params.items()}
        minus = {k: v - eps * direction[k] for k, v in params.items()}
        numeric = (float(loss(plus, x, y)) - float(loss(minus, x, y))) / (2 * eps)
        analytic = sum(float((grads[k] * direction[k]).sum()) for k in params)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)


def test_block_trains_with_jitted_value_and_grad_and_adam(device):
    params = {k: pt.asarray(v) for k, v in _init(np.float32).items()}
    x, y = (pt.asarray(a) for a in _data(np.float32))
    state = {k: (pt.zeros_like(v), pt.zeros_like(v)) for k, v in params.items()}

    @pt.jit
    def step(p, state, t, x, y):
        value, g = pt.value_and_grad(loss)(p, x, y)
        lr, b1, b2 = 0.01, 0.9, 0.999
        new_p, new_state = {}, {}
        for k in p:
            m, v = state[k]
            m = b1 * m + (1 - b1) * g[k]
            v = b2 * v + (1 - b2) * g[k] * g[k]
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            new_p[k] = p[k] - lr * m_hat / (pt.sqrt(v_hat) + 1e-8)
            new_state[k] = (m, v)
        return new_p, new_state, value

    curve = []
    for t in range(1, 61):
        params, state, value = step(params, state, pt.asarray(float(t), dtype=pt.float32), x, y)
        curve.append(float(value))
    assert all(np.isfinite(curve))
    assert curve[-1] < 0.2 * curve[0], f"the loss did not fall: {curve[0]:.4f} -> {curve[-1]:.4f}"
    assert step._cache.__len__() == 1, "the step should trace once"
