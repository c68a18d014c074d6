"""Everyday NumPy programs, each a different corner of the API a user reaches for: softmax regression
with one-hot labels (eye indexing, argmax), Conway's game of life (roll, boolean logic), Adam on a tanh
MLP, Gaussian elimination with partial pivoting (fancy row swaps, element writes, back substitution),
column statistics (sort, bincount, cov, cumsum), image filters (pad, hypot, round, clip to uint8), a
polynomial fit (stack, solve, Horner over the coefficients) and k-nearest neighbours (argsort,
take_along_axis). Each runs eagerly, with its step jitted and in NumPy."""
from __future__ import annotations

import numpy as np

from .harness import check_program


# softmax regression with one-hot labels and an accuracy from argmax
def softreg_step(xp, W, X, Y, lr):
    logits = X @ W
    logits = logits - logits.max(axis=1, keepdims=True)
    e = xp.exp(logits)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -(Y * xp.log(p + 1e-9)).sum(axis=1).mean()
    g = X.T @ (p - Y) / X.shape[0]
    return W - lr * g, loss


def softreg_run(xp, step, X, labels):
    Y = xp.eye(4, dtype=X.dtype)[labels]
    W = xp.zeros((X.shape[1], 4), dtype=X.dtype)
    losses = []
    for _ in range(20):
        W, loss = step(xp, W, X, Y, 0.3)
        losses.append(loss)
    acc = (xp.argmax(X @ W, axis=1) == labels).mean()
    return W, xp.stack(losses), acc


def test_softmax_regression(device):
    r = np.random.default_rng(1)
    X = r.normal(size=(64, 5)).astype(np.float32)
    labels = r.integers(0, 4, size=64)
    check_program(device, softreg_run, softreg_step, (X, labels), ops=(400, 400, 1))


# game of life with np.roll
def life_step(xp, g):
    n = sum(xp.roll(xp.roll(g, i, axis=0), j, axis=1) for i in (-1, 0, 1) for j in (-1, 0, 1)
            if (i, j) != (0, 0))
    return ((n == 3) | ((g == 1) & (n == 2))).astype(g.dtype)


def life_run(xp, step, g):
    for _ in range(8):
        g = step(xp, g)
    return g, g.sum()


def test_game_of_life(device):
    g = (np.random.default_rng(2).random((24, 24)) < 0.3).astype(np.int32)
    check_program(device, life_run, life_step, (g,), ops=1)


# Adam on a tiny tanh MLP, explicit gradients
def adam_step(xp, W1, W2, m1, m2, v1, v2, X, y, t):
    h = xp.tanh(X @ W1)
    out = h @ W2
    err = out - y
    loss = (err ** 2).mean()
    gout = 2 * err / err.size
    g2 = h.T @ gout
    gh = (gout @ W2.T) * (1 - h ** 2)
    g1 = X.T @ gh
    b1, b2, lr = 0.9, 0.999, 0.01
    m1 = b1 * m1 + (1 - b1) * g1
    m2 = b1 * m2 + (1 - b1) * g2
    v1 = b2 * v1 + (1 - b2) * g1 * g1
    v2 = b2 * v2 + (1 - b2) * g2 * g2
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    W1 = W1 - lr * (m1 / c1) / (xp.sqrt(v1 / c2) + 1e-8)
    W2 = W2 - lr * (m2 / c1) / (xp.sqrt(v2 / c2) + 1e-8)
    return W1, W2, m1, m2, v1, v2, loss


def adam_run(xp, step, X, y, W1, W2):
    m1, m2 = xp.zeros_like(W1), xp.zeros_like(W2)
    v1, v2 = xp.zeros_like(W1), xp.zeros_like(W2)
    losses = []
    for t in range(1, 16):
        W1, W2, m1, m2, v1, v2, loss = step(xp, W1, W2, m1, m2, v1, v2, X, y, t)
        losses.append(loss)
    return W1, W2, xp.stack(losses)


def test_adam_mlp(device):
    r = np.random.default_rng(3)
    X = r.normal(size=(32, 6))
    y = np.sin(X.sum(axis=1, keepdims=True))
    W1, W2 = r.normal(size=(6, 16)) * 0.3, r.normal(size=(16, 1)) * 0.3
    check_program(device, adam_run, adam_step, tuple(a.astype(np.float32) for a in (X, y, W1, W2)), ops=2000)


# gaussian elimination with partial pivoting, row swaps by fancy indexing, then back substitution
def gauss_run(xp, step, A, b):
    n = A.shape[0]
    M = xp.concatenate([A, b[:, None]], axis=1)
    for k in range(n):
        M = step(xp, M, k)
    x = xp.zeros(n, dtype=A.dtype)
    for i in range(n - 1, -1, -1):
        x[i] = (M[i, n] - (M[i, i + 1:n] * x[i + 1:n]).sum()) / M[i, i]
    return M, x


def gauss_step(xp, M, k):
    p = k + xp.argmax(xp.abs(M[k:, k]))
    idx = xp.arange(M.shape[0])
    idx = xp.where(idx == k, p, xp.where(idx == p, k, idx))
    M = M[idx]
    f = M[:, k] / M[k, k]
    f = xp.where(xp.arange(M.shape[0]) > k, f, 0.0)
    return M - f[:, None] * M[k][None, :]


def test_gauss_pivot(device):
    r = np.random.default_rng(4)
    A, b = r.normal(size=(8, 8)), r.normal(size=8)
    # eager only: the step slices with the pivot column k, which a jitted step would need static
    check_program(device, gauss_run, gauss_step, (A.astype(np.float32), b.astype(np.float32)), ops=4000, jit=False)


# statistics: z-scores, percentiles by sort, histogram by bincount of digitized values, covariance
def stats_run(xp, step, X):
    z = step(xp, X)
    s = xp.sort(X, axis=0)
    med = s[X.shape[0] // 2]
    bins = xp.clip(((X[:, 0] - X[:, 0].min()) / (X[:, 0].max() - X[:, 0].min()) * 9.999).astype(xp.int64), 0, 9)
    hist = xp.bincount(bins, minlength=10)
    C = xp.cov(X.T)
    cum = xp.cumsum(X[:, 1])
    return z, med, hist, C, cum


def stats_step(xp, X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def test_statistics_misc(device):
    X = np.random.default_rng(5).normal(size=(101, 3))
    check_program(device, stats_run, stats_step, (X,), ops=(64, 1, 1, 256, 128))


# image blur / edge detection with slicing and clip to uint8
def img_step(xp, img):
    p = xp.pad(img, 1, mode="edge")
    blur = (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:] + 2 * p[1:-1, :-2] + 4 * p[1:-1, 1:-1]
            + 2 * p[1:-1, 2:] + p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) / 16.0
    gx = p[1:-1, 2:] - p[1:-1, :-2]
    gy = p[2:, 1:-1] - p[:-2, 1:-1]
    mag = xp.hypot(gx, gy)
    return blur, mag


def img_run(xp, step, img):
    img = img.astype(xp.float32)
    blur, mag = step(xp, img)
    out = xp.clip(xp.round(blur), 0, 255).astype(xp.uint8)
    return out, mag, (mag > mag.mean()).sum()


def test_image_filters(device):
    img = np.random.default_rng(6).integers(0, 256, size=(20, 30)).astype(np.uint8)
    check_program(device, img_run, img_step, (img,), ops=(1, 16, 1))


# polynomial fit via normal equations solve, then evaluation with polyval-like Horner
def poly_run(xp, step, x, y):
    V = xp.stack([x ** k for k in range(4)], axis=1)
    coef = xp.linalg.solve(V.T @ V, V.T @ y)
    return coef, step(xp, coef, x)


def poly_step(xp, coef, x):
    r = xp.zeros_like(x)
    for c in coef[::-1]:
        r = r * x + c
    return r


def test_poly_fit(device):
    r = np.random.default_rng(7)
    x = np.linspace(-1, 1, 50)
    y = 1 + 2 * x - 3 * x ** 3 + 0.01 * r.normal(size=50)
    check_program(device, poly_run, poly_step, (x, y), ops=(2000, 2000))


# k-nearest-neighbours classification with argsort / take_along_axis
def knn_step(xp, Xtr, ytr, Xte):
    d = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    idx = xp.argsort(d, axis=1)[:, :3]
    votes = ytr[idx]
    return (votes.sum(axis=1) >= 2).astype(xp.int32), xp.take_along_axis(d, idx, axis=1)


def knn_run(xp, step, Xtr, ytr, Xte):
    return step(xp, Xtr, ytr, Xte)


def test_knn(device):
    r = np.random.default_rng(8)
    Xtr, Xte = r.normal(size=(30, 2)), r.normal(size=(7, 2))
    ytr = (Xtr[:, 0] > 0).astype(np.int32)
    check_program(device, knn_run, knn_step, (Xtr, ytr, Xte), ops=(1, 16))
