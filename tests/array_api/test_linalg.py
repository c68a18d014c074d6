"""pt.linalg against NumPy: each function on single and stacked matrices, its result dtypes, errors,
and which functions are planned kernels and which are documented host steps."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

LAZY = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_power", "matrix_transpose", "outer",
        "tensordot", "trace", "vecdot", "vector_norm"]
HOST = ["cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_rank", "pinv", "qr", "slogdet", "solve",
        "svd", "svdvals"]


def spd(n, batch=(), seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def test_every_function_is_either_planned_or_a_documented_host_step():
    assert sorted(LAZY + HOST) == sorted(n for n in pt.linalg.__all__ if n[0].islower())
    for name in HOST:
        doc = " ".join(getattr(pt.linalg, name).__doc__.split())
        assert "host step" in doc.lower(), name
    assert "host step" in pt.linalg.matrix_norm.__doc__  # ord 2, -2, 'nuc'


@pytest.mark.parametrize("batch", [(), (2,)])
def test_factorizations_match_numpy(batch, device):
    a = spd(4, batch)
    x = pt.asarray(a)
    assert_close(pt.linalg.inv(x).numpy(), np.linalg.inv(a), pt.float64, ops=64)
    assert_close(pt.linalg.det(x).numpy(), np.linalg.det(a), pt.float64, ops=64)
    sign, logabs = pt.linalg.slogdet(x)
    s_ref, l_ref = np.linalg.slogdet(a)
    assert_close(sign.numpy(), s_ref, pt.float64) and None
    assert_close(logabs.numpy(), l_ref, pt.float64, ops=64)
    low = pt.linalg.cholesky(x).numpy()
    assert_close(low, np.linalg.cholesky(a), pt.float64, ops=64)
    assert_close(pt.linalg.cholesky(x, upper=True).numpy(), np.swapaxes(low, -1, -2), pt.float64)
    w, v = pt.linalg.eigh(x)
    assert_close((v.numpy() * w.numpy()[..., None, :]) @ np.swapaxes(v.numpy(), -1, -2), a, pt.float64,
                 ops=256)
    assert_close(pt.linalg.eigvalsh(x).numpy(), np.linalg.eigvalsh(a), pt.float64, ops=256)
    q, r = pt.linalg.qr(x)
    assert_close(q.numpy() @ r.numpy(), a, pt.float64, ops=256)
    assert pt.linalg.qr(pt.ones(batch + (5, 3)), mode="complete").Q.shape == batch + (5, 5)
    u, s, vh = pt.linalg.svd(x, full_matrices=False)
    assert_close((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), a, pt.float64, ops=256)
    assert_close(pt.linalg.svdvals(x).numpy(), np.linalg.svd(a, compute_uv=False), pt.float64, ops=256)
    assert_close(pt.linalg.pinv(x).numpy(), np.linalg.pinv(a), pt.float64, ops=256)
    np.testing.assert_array_equal(pt.linalg.matrix_rank(x).numpy(), np.linalg.matrix_rank(a))


def test_solve_vector_and_matrix_right_hand_sides(device):
    a = spd(3, (2,))
    b_vec = np.array([1.0, 2.0, 3.0])
    b_mat = np.arange(12.0).reshape(2, 3, 2)
    r = pt.linalg.solve(pt.asarray(a), pt.asarray(b_vec))  # one vector, broadcast over the stack
    assert r.shape == (2, 3)
    assert_close(r.numpy(), np.linalg.solve(a, b_vec[None, :, None])[..., 0], pt.float64, ops=64)
    r = pt.linalg.solve(pt.asarray(a), pt.asarray(b_mat))
    assert_close(r.numpy(), np.linalg.solve(a, b_mat), pt.float64, ops=64)
    with pytest.raises(pt.ShapeError, match="needs 3 rows"):
        pt.linalg.solve(pt.asarray(a), pt.ones(4))


def test_host_fallback_dtypes_and_devices(device):
    for d in (pt.float32, pt.float16):
        x = pt.asarray(spd(3), dtype=d)
        r = pt.linalg.inv(x)
        assert r.dtype is d and r.device == device
        assert_close(r.numpy(), np.linalg.inv(spd(3).astype(np.float32)), d, ops=64)
    assert pt.linalg.det(pt.asarray([[2, 0], [0, 3]])).dtype is pt.float64  # integers: float64
    assert pt.linalg.matrix_rank(pt.zeros((2, 0, 3))).numpy().tolist() == [0, 0]
    assert pt.linalg.matrix_rank(pt.asarray(np.diag([1.0, 1e-3, 0.0])), rtol=1e-2).numpy() == 1


def test_host_fallback_errors():
    with pytest.raises(pt.linalg.LinAlgError, match="linalg.inv: Singular matrix") as e:
        pt.linalg.inv(pt.zeros((2, 2)))
    assert isinstance(e.value, np.linalg.LinAlgError) and isinstance(e.value, pt.PootError)
    with pytest.raises(pt.linalg.LinAlgError, match="cholesky"):
        pt.linalg.cholesky(pt.asarray([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(pt.ShapeError, match="needs square matrices"):
        pt.linalg.det(pt.ones((2, 3)))
    with pytest.raises(pt.ShapeError, match="2 or more dimensions"):
        pt.linalg.inv(pt.ones(3))
    with pytest.raises(pt.ShapeError, match="mode must be"):
        pt.linalg.qr(pt.ones((2, 2)), mode="raw")


def test_host_steps_run_inside_jit():
    @pt.jit
    def f(x):
        return pt.linalg.inv(x)

    assert_close(f(pt.asarray(spd(2))).numpy(), np.linalg.inv(spd(2)), pt.float64, ops=64)
    with pytest.raises(pt.linalg.LinAlgError, match="linalg.inv: Singular matrix"):
        f(pt.zeros((2, 2), dtype=pt.float64))


@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, -1])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_vector_norm(ord, axis, device):
    a = np.random.default_rng(1).standard_normal((2, 3, 4))
    a[0, 0, 0] = 0.0
    r = pt.linalg.vector_norm(pt.asarray(a), axis=axis, ord=ord, keepdims=True)
    assert not r.is_realized  # planned: one lazy reduction
    with np.errstate(divide="ignore"):  # ord < 0 with a zero element: 1/0 -> inf -> a norm of 0
        want = np.linalg.norm(a, ord=ord, axis=axis, keepdims=True) if isinstance(axis, int) else \
            _norm_over(a, ord, axis)
    assert_close(r.numpy(), want, pt.float64, ops=32)
    assert pt.linalg.vector_norm(pt.ones(3, dtype=pt.float32)).dtype is pt.float32


def _norm_over(a, ord, axis):
    axes = tuple(range(a.ndim)) if axis is None else axis
    v = np.abs(a)
    if ord == math.inf:
        return v.max(axis=axes, keepdims=True)
    if ord == -math.inf:
        return v.min(axis=axes, keepdims=True)
    if ord == 0:
        return (a != 0).sum(axis=axes, keepdims=True).astype(a.dtype)
    return (v ** ord).sum(axis=axes, keepdims=True) ** (1.0 / ord)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm(ord, device):
    a = np.random.default_rng(2).standard_normal((2, 3, 4))
    r = pt.linalg.matrix_norm(pt.asarray(a), ord=ord)
    assert_close(r.numpy(), np.linalg.norm(a, ord=ord, axis=(-2, -1)), pt.float64, ops=64)
    assert pt.linalg.matrix_norm(pt.asarray(a), ord=ord, keepdims=True).shape == (2, 1, 1)
    with pytest.raises(pt.ShapeError, match="ord must be"):
        pt.linalg.matrix_norm(pt.asarray(a), ord=3)


def test_planned_functions(device):
    a = np.random.default_rng(3).standard_normal((2, 3, 3))
    x = pt.asarray(a)
    for n in (0, 1, 2, 5):
        r = pt.linalg.matrix_power(x, n)
        assert not r.is_realized or n == 1
        assert_close(r.numpy(), np.linalg.matrix_power(a, n), pt.float64, ops=64)
    assert_close(pt.linalg.matrix_power(x, -2).numpy(), np.linalg.matrix_power(a, -2), pt.float64,
                 ops=1024)
    u, v = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
    c = pt.linalg.cross(pt.asarray(u), pt.asarray(v))
    assert not c.is_realized
    np.testing.assert_array_equal(c.numpy(), np.cross(u, v))
    w = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(pt.linalg.cross(pt.asarray(w), pt.asarray(w[::-1]), axis=0).numpy(),
                                  np.cross(w, w[::-1], axis=0))
    with pytest.raises(pt.ShapeError, match="size 3"):
        pt.linalg.cross(pt.ones(2), pt.ones(2))
    np.testing.assert_array_equal(pt.linalg.outer(pt.asarray(v), pt.asarray(v)).numpy(), np.outer(v, v))
    np.testing.assert_array_equal(pt.linalg.diagonal(x, offset=1).numpy(),
                                  np.diagonal(a, 1, axis1=-2, axis2=-1))
    t = pt.linalg.trace(pt.asarray(np.arange(8, dtype=np.int8).reshape(2, 2, 2)))
    assert t.dtype is pt.int64 and t.numpy().tolist() == [3, 11]
    assert_close(pt.linalg.matmul(x, x).numpy(), a @ a, pt.float64, ops=8)
    assert_close(pt.linalg.vecdot(x, x).numpy(), (a * a).sum(-1), pt.float64, ops=8)
    assert_close(pt.linalg.tensordot(x, x, axes=((1, 2), (1, 2))).numpy(),
                 np.tensordot(a, a, axes=((1, 2), (1, 2))), pt.float64, ops=16)
    np.testing.assert_array_equal(pt.linalg.matrix_transpose(x).numpy(), np.swapaxes(a, -1, -2))
