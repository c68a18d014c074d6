"""Long chains of slice assignments (`A[i, :] = ...`, `A[i, j] = ...` in a loop, as textbook
covariance, correlation and triangular kernels write them) against NumPy: they plan, generate and
compile without recursion proportional to the chain's length, and give NumPy's numbers."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_scalar_writes_10000(device):
    n = 100
    a = pt.zeros((n, n), dtype=pt.float32)
    ref = np.zeros((n, n), np.float32)
    for k in range(n * n):
        i, j = divmod(k, n)
        a[i, j] = float(i) * 0.5 + j
        ref[i, j] = float(i) * 0.5 + j
    np.testing.assert_array_equal(a.numpy(), ref)


def test_row_writes_10000_reading_back(device):
    n = 4
    a0 = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    a, ref = pt.asarray(a0), a0.copy()
    for i in range(10_000):
        a[i % n, :] = a[i % n, :] * 0.5 + (i % 7)
        ref[i % n, :] = ref[i % n, :] * np.float32(0.5) + np.float32(i % 7)
    np.testing.assert_allclose(a.numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("n", [300])
def test_row_chain_before_one_realize(device, n):
    # every row written once from values that do not read the matrix: one chain, one realize
    v = pt.arange(n, dtype=pt.float32)
    a = pt.zeros((n, 8), dtype=pt.float32)
    ref = np.zeros((n, 8), np.float32)
    for i in range(n):
        a[i, :] = v[i] + pt.arange(8, dtype=pt.float32)
        ref[i, :] = np.float32(i) + np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(a.numpy(), ref)


def test_jit_chain_of_scalar_writes(device):
    @pt.jit
    def f(a):
        for k in range(200):
            i, j = divmod(k, 20)
            a[i, j] = a[i, j] + a[j, i] * 0.25 + k
        return a

    a0 = np.random.default_rng(0).standard_normal((20, 20)).astype(np.float32)
    ref = a0.copy()
    for k in range(200):
        i, j = divmod(k, 20)
        ref[i, j] = ref[i, j] + ref[j, i] * np.float32(0.25) + np.float32(k)
    np.testing.assert_allclose(f(pt.asarray(a0)).numpy(), ref, rtol=1e-5, atol=1e-4)


def _data(m, n, seed=0):
    return np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)


def test_covariance_row_by_row(device):
    data = _data(20, 10)
    d = pt.asarray(data)
    d = d - d.mean(axis=0)
    m = data.shape[1]
    cov = pt.zeros((m, m), dtype=pt.float32)
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = (d[:, i] * d[:, j]).sum() / (data.shape[0] - 1)
            cov[j, i] = cov[i, j]
    np.testing.assert_allclose(cov.numpy(), np.cov(data, rowvar=False), rtol=1e-4, atol=1e-5)


def test_covariance_rows(device):
    data = _data(20, 40, seed=1)
    d = pt.asarray(data)
    d = d - d.mean(axis=0)
    m = data.shape[1]
    cov = pt.zeros((m, m), dtype=pt.float32)
    for i in range(m):
        cov[i, :] = (d[:, i:i + 1] * d).sum(axis=0) / (data.shape[0] - 1)
    np.testing.assert_allclose(cov.numpy(), np.cov(data, rowvar=False), rtol=1e-4, atol=1e-5)


def test_correlation_row_by_row(device):
    data = _data(15, 8, seed=2)
    d = pt.asarray(data)
    n, m = data.shape
    mean = d.mean(axis=0)
    std = pt.sqrt(((d - mean) ** 2).mean(axis=0))
    d = (d - mean) / (np.sqrt(n) * std)
    corr = pt.zeros((m, m), dtype=pt.float32)
    for i in range(m - 1):
        corr[i, i] = 1.0
        for j in range(i + 1, m):
            corr[i, j] = (d[:, i] * d[:, j]).sum()
            corr[j, i] = corr[i, j]
    corr[m - 1, m - 1] = 1.0
    np.testing.assert_allclose(corr.numpy(), np.corrcoef(data, rowvar=False), rtol=1e-4, atol=1e-5)


def _trmm_ref(alpha, a, b):
    b = b.copy()
    m, n = b.shape
    for i in range(m):
        for j in range(n):
            b[i, j] += np.dot(a[i + 1:, i], b[i + 1:, j])
    return alpha * b


@pytest.mark.parametrize("variant", ["scalar", "row", "row_matmul", "jit"])
def test_trmm(device, variant):
    m, n = 12, 7
    a0, b0 = _data(m, m, 3), _data(m, n, 4)
    a, b = pt.asarray(a0), pt.asarray(b0)

    def rows(a, b):
        for i in range(m):     # i = m - 1 reads slices of length 0
            b[i, :] += a[i + 1:, i] @ b[i + 1:, :]
        return 1.5 * b

    if variant == "scalar":
        for i in range(m):
            for j in range(n):
                b[i, j] += pt.dot(a[i + 1:, i], b[i + 1:, j])
        out = 1.5 * b
    elif variant == "row":
        out = rows(a, b)
    elif variant == "row_matmul":
        for i in range(m):
            b[i, :] = b[i, :] + pt.matmul(a[i + 1:, i], b[i + 1:, :])
        b = b * 1.5
        out = b
    else:
        out = pt.jit(rows)(a, b)
    np.testing.assert_allclose(out.numpy(), _trmm_ref(1.5, a0, b0), rtol=1e-5, atol=1e-5)


def _lu(xp, A):
    """Doolittle LU written element by element, as a textbook has it."""
    n = A.shape[0]
    L, U = xp.zeros((n, n)), xp.zeros((n, n))
    for i in range(n):
        for k in range(i, n):
            s = 0.0
            for j in range(i):
                s += L[i, j] * U[j, k]
            U[i, k] = A[i, k] - s
        for k in range(i, n):
            if i == k:
                L[i, i] = 1.0
            else:
                s = 0.0
                for j in range(i):
                    s += L[k, j] * U[j, i]
                L[k, i] = (A[k, i] - s) / U[i, i]
    return L, U


def test_element_loop_lu_runs_on_host_values():
    """Element reads, `s += a * b` and element writes of realized CPU arrays stay host values: the loop
    realizes nothing but the two zero matrices, and matches NumPy bit for bit."""
    from poot.trace import counters

    rng = np.random.default_rng(3)
    m = rng.standard_normal((12, 12))
    a = m @ m.T + 12 * np.eye(12)
    before = counters.counts.programs
    got = _lu(pt, pt.asarray(a))
    assert counters.counts.programs - before <= 2
    for g, want in zip(got, _lu(np, a)):
        np.testing.assert_array_equal(g.numpy(), want)
