"""Training loops with hand-written gradients: a two-layer linear net, an MLP with softmax
cross-entropy, logistic regression. Each step runs eagerly, under @pt.jit, and in NumPy."""
from __future__ import annotations

import numpy as np

from .harness import check_program

STEPS = 50


# -- 1. two-layer linear net, 0.5 * ||X A B||^2 ------------------------------------------------------
def two_layer_step(xp, X, A, B, lr):
    h = X @ A
    g = h @ B
    loss = 0.5 * (g * g).sum()
    return A - lr * (X.T @ (g @ B.T)), B - lr * (h.T @ g), loss


def two_layer_run(xp, step, X, A, B):
    losses = []
    for _ in range(STEPS):
        A, B, loss = step(xp, X, A, B, 0.002)
        losses.append(loss)
    return A, B, xp.stack(losses)


def two_layer_inputs():
    r = np.random.default_rng(0)
    return (r.normal(size=(16, 5)).astype(np.float32), r.normal(size=(5, 6)).astype(np.float32),
            r.normal(size=(6, 3)).astype(np.float32))


def test_two_layer_training_loop(device):
    # 50 steps of three matmuls each; float32 error grows with the loop, far below 1e-3 relative.
    check_program(device, two_layer_run, two_layer_step, two_layer_inputs(), ops=400, whole=True)


def test_two_layer_original_three_steps(device):
    """The loop as users write it, on poot arrays directly (A and B rebound every step)."""
    import poot as pt

    Xn, An, Bn = two_layer_inputs()
    X, A, B = pt.asarray(Xn), pt.asarray(An), pt.asarray(Bn)
    for _ in range(3):
        h = X @ A
        g = h @ B
        A, B = A - 0.01 * (X.T @ (g @ B.T)), B - 0.01 * (h.T @ g)
    for _ in range(3):
        h = Xn @ An
        g = h @ Bn
        An, Bn = An - 0.01 * (Xn.T @ (g @ Bn.T)), Bn - 0.01 * (h.T @ g)
    from tolerance import assert_close
    assert_close(A.numpy(), An, pt.float32, ops=64)
    assert_close(B.numpy(), Bn, pt.float32, ops=64)


# -- 2. MLP, tanh hidden layer, softmax cross-entropy, manual backprop ------------------------------
def mlp_step(xp, params, X, y, lr):
    W1, b1, W2, b2 = params
    n, c = X.shape[0], W2.shape[1]
    onehot = (y[:, None] == xp.arange(c)[None, :]).astype(X.dtype)
    h = xp.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    m = logits.max(axis=1, keepdims=True)
    e = xp.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    logp = logits - m - xp.log(s)
    loss = -(logp * onehot).sum() / n
    dlogits = (e / s - onehot) / n
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dz1 = (dlogits @ W2.T) * (1 - h * h)
    dW1 = X.T @ dz1
    db1 = dz1.sum(axis=0)
    return (W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2), loss


def mlp_run(xp, step, X, y, W1, b1, W2, b2):
    params = (W1, b1, W2, b2)
    losses = []
    for _ in range(30):
        params, loss = step(xp, params, X, y, 0.5)
        losses.append(loss)
    return (*params, xp.stack(losses))


def mlp_inputs(dtype):
    r = np.random.default_rng(1)
    n, d, hdim, c = 64, 8, 16, 4
    centers = r.normal(size=(c, d)) * 2
    y = r.integers(0, c, size=n)
    X = centers[y] + r.normal(size=(n, d))
    return (X.astype(dtype), y, (r.normal(size=(d, hdim)) / np.sqrt(d)).astype(dtype),
            np.zeros(hdim, dtype), (r.normal(size=(hdim, c)) / np.sqrt(hdim)).astype(dtype),
            np.zeros(c, dtype))


def test_mlp_manual_backprop_float32(device):
    check_program(device, mlp_run, mlp_step, mlp_inputs(np.float32), ops=512)


def test_mlp_manual_backprop_float64(device):
    check_program(device, mlp_run, mlp_step, mlp_inputs(np.float64), ops=512)


def test_mlp_loss_decreases(device):
    import poot as pt
    from .harness import to_poot

    out = mlp_run(pt, pt.jit(mlp_step, static_argnums=0), *to_poot(mlp_inputs(np.float32)))
    losses = out[-1].numpy()
    assert losses[-1] < 0.5 * losses[0]


# -- 5. logistic regression by gradient descent -----------------------------------------------------
def logreg_step(xp, w, b, X, y, lr):
    z = X @ w + b
    p = 1.0 / (1.0 + xp.exp(-z))
    loss = (xp.logaddexp(xp.zeros_like(z), z) - y * z).mean()
    r = p - y
    return w - lr * (X.T @ r) / X.shape[0], b - lr * r.mean(), loss


def logreg_run(xp, step, X, y):
    w = xp.zeros(X.shape[1], dtype=X.dtype)
    b = xp.zeros((), dtype=X.dtype)
    losses = []
    for _ in range(60):
        w, b, loss = step(xp, w, b, X, y, 0.5)
        losses.append(loss)
    accuracy = ((X @ w + b > 0) == (y > 0.5)).astype(X.dtype).mean()
    return w, b, xp.stack(losses), accuracy


def logreg_inputs(dtype):
    r = np.random.default_rng(2)
    X = r.normal(size=(200, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.5 * r.normal(size=200) > 0)
    return X.astype(dtype), y.astype(dtype)


def test_logistic_regression_float32(device):
    check_program(device, logreg_run, logreg_step, logreg_inputs(np.float32), ops=(512, 512, 512, 1))


def test_logistic_regression_float64(device):
    check_program(device, logreg_run, logreg_step, logreg_inputs(np.float64), ops=(512, 512, 512, 1))
