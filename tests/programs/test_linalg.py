"""Linear algebra programs: power iteration, PCA through pt.linalg.eigh, and Gram-Schmidt QR that
updates the columns of Q and the rows of R in a loop."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import check_program


def spd_matrix(n, dtype, seed):
    r = np.random.default_rng(seed)
    Qm, _ = np.linalg.qr(r.normal(size=(n, n)))
    eig = np.linspace(1.0, 10.0, n)
    eig[-1] = 20.0  # a clear gap: power iteration converges like (10/20)^k
    return ((Qm * eig) @ Qm.T).astype(dtype)


# -- 6. power iteration -----------------------------------------------------------------------------
def power_step(xp, A, v):
    w = A @ v
    lam = v @ w
    return w / xp.linalg.vector_norm(w), lam


def power_run(xp, step, A):
    n = A.shape[0]
    v = xp.ones(n, dtype=A.dtype) / np.sqrt(n)
    lams = []
    for _ in range(40):
        v, lam = step(xp, A, v)
        lams.append(lam)
    residual = xp.linalg.vector_norm(A @ v - lams[-1] * v)
    return v, xp.stack(lams), residual


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_power_iteration(device, dtype):
    A = spd_matrix(24, dtype, 4)
    # the eigenvector converges, so rounding does not accumulate over the 40 steps
    check_program(device, power_run, power_step, (A,), ops=(256, 256, 4096), whole=True)
    lam = power_run(np, power_step, A)[1][-1]
    assert abs(lam - 20.0) < 1e-3 * 20


# -- 11. PCA via eigh -------------------------------------------------------------------------------
K = 2


def pca(xp, X):
    k = K
    mean = X.mean(axis=0)
    Xc = X - mean
    cov = (Xc.T @ Xc) / (X.shape[0] - 1)
    w, V = xp.linalg.eigh(cov)
    w, V = xp.flip(w), xp.flip(V, axis=1)  # largest first
    # eigenvectors have no sign: make the largest entry of each one positive
    big = xp.argmax(xp.abs(V), axis=0)
    V = V * xp.sign(xp.take_along_axis(V, big[None, :], axis=0))
    scores = Xc @ V[:, :k]
    return w / w.sum(), V[:, :k], scores, scores @ V[:, :k].T + mean


def pca_run(xp, step, X):
    return step(xp, X)


def pca_inputs(dtype):
    r = np.random.default_rng(5)
    Qm, _ = np.linalg.qr(r.normal(size=(5, 5)))
    Z = r.normal(size=(80, 5)) * np.array([4.0, 2.0, 1.0, 0.5, 0.25])
    return ((Z @ Qm.T) + np.array([1.0, -2.0, 0.5, 3.0, 0.0])).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_pca_eigh(device, dtype):
    # eigenvectors are accurate to eps * ||cov|| / gap (gap ~ 1/4 of the largest eigenvalue here)
    check_program(device, pca_run, pca, (pca_inputs(dtype),), ops=512)


# -- Gram-Schmidt QR with column updates ------------------------------------------------------------
def mgs_qr(xp, A):
    """Modified Gram-Schmidt: normalize column j, then remove it from the columns after it."""
    m, n = A.shape
    Q = A.copy()
    R = xp.zeros((n, n), dtype=A.dtype)
    for j in range(n):
        R[j, j] = xp.linalg.vector_norm(Q[:, j])
        Q[:, j] = Q[:, j] / R[j, j]
        if j + 1 < n:
            R[j, j + 1:] = Q[:, j] @ Q[:, j + 1:]
            Q[:, j + 1:] -= Q[:, j:j + 1] * R[j:j + 1, j + 1:]
    return Q, R


def mgs_run(xp, step, A):
    Q, R = step(xp, A)
    return Q, R, Q.T @ Q, Q @ R


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gram_schmidt_qr(device, dtype):
    A = np.random.default_rng(6).normal(size=(12, 6)).astype(dtype)
    check_program(device, mgs_run, mgs_qr, (A,), ops=256)
    Q, R, QtQ, QR = mgs_run(np, mgs_qr, A)
    assert np.allclose(QtQ, np.eye(6), atol=1e-4) and np.allclose(QR, A, atol=1e-4)
