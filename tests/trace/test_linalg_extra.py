"""poot.linalg's multi_dot, cond, tensorinv and tensorsolve (poot/trace/linalg_extra.py) against
numpy.linalg, with tolerances from the dtype."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.trace.linalg_extra import _chain_order


def tol(dtype):
    eps = np.finfo(dtype).eps
    return {"rtol": 1000 * eps, "atol": 1000 * eps}


def rand(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multi_dot_matches_numpy(dtype):
    shapes = [(10, 100), (100, 5), (5, 50), (50, 2)]
    mats = [rand(s, dtype, i) for i, s in enumerate(shapes)]
    ours = pt.linalg.multi_dot([pt.asarray(m) for m in mats])
    want = np.linalg.multi_dot(mats)
    assert ours.dtype == want.dtype and ours.shape == want.shape
    np.testing.assert_allclose(ours.numpy(), want, **tol(dtype))
    v, w = rand(10, dtype, 7), rand(2, dtype, 8)
    for arrays in ([v] + mats, mats + [w], [v] + mats + [w], mats[:2], [v, mats[0]]):
        want = np.linalg.multi_dot(arrays)
        ours = pt.linalg.multi_dot(arrays)
        assert ours.shape == np.shape(want)
        np.testing.assert_allclose(ours.numpy(), want, **tol(dtype))


def test_multi_dot_order_is_the_cheapest():
    # (10x100)(100x5)(5x50): ((AB)C) costs 7500, (A(BC)) 75000
    assert _chain_order([10, 100, 5, 50])[0][2] == 1
    assert _chain_order([50, 5, 100, 10])[0][2] == 0


def test_multi_dot_errors():
    with pytest.raises(pt.PootError):
        pt.linalg.multi_dot([np.ones((2, 2))])
    with pytest.raises(pt.PootError):
        pt.linalg.multi_dot([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(pt.PootError):
        pt.linalg.multi_dot([np.ones((2, 2)), np.ones(2), np.ones((2, 2))])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
def test_cond_matches_numpy(dtype, p):
    x = rand((3, 4, 4), dtype, 1) + 4 * np.eye(4, dtype=dtype)
    ours = pt.linalg.cond(pt.asarray(x), p)
    want = np.linalg.cond(x, p)
    assert ours.shape == want.shape and ours.dtype == want.dtype
    np.testing.assert_allclose(ours.numpy(), want, **tol(dtype))


def test_cond_of_rectangular_and_singular():
    x = rand((5, 3))
    np.testing.assert_allclose(pt.linalg.cond(x).numpy(), np.linalg.cond(x), **tol(np.float64))
    np.testing.assert_allclose(pt.linalg.cond(x, -2).numpy(), np.linalg.cond(x, -2), **tol(np.float64))
    z = np.zeros((3, 3))
    assert pt.linalg.cond(z).numpy() == np.linalg.cond(z) == np.inf
    with pytest.raises(pt.PootError):
        pt.linalg.cond(x, 1)              # non-square for a norm-based p
    with pytest.raises(pt.PootError):
        pt.linalg.cond(x, 3)
    with pytest.raises(pt.PootError):
        pt.linalg.cond(np.ones(3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tensorinv_matches_numpy(dtype):
    a = rand((4, 6, 8, 3), dtype, 2)
    a = a.reshape(24, 24) + 6 * np.eye(24, dtype=dtype)
    a = a.reshape(4, 6, 8, 3)
    ours = pt.linalg.tensorinv(pt.asarray(a), ind=2)
    want = np.linalg.tensorinv(a, ind=2)
    assert ours.shape == want.shape and ours.dtype == want.dtype
    np.testing.assert_allclose(ours.numpy(), want, **tol(dtype))
    b = a.reshape(24, 8, 3)
    np.testing.assert_allclose(pt.linalg.tensorinv(b, ind=1).numpy(), np.linalg.tensorinv(b, ind=1),
                               **tol(dtype))
    with pytest.raises(pt.PootError):
        pt.linalg.tensorinv(np.ones((2, 3, 4)), ind=1)
    with pytest.raises(pt.PootError):
        pt.linalg.tensorinv(a, ind=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tensorsolve_matches_numpy(dtype):
    m = rand((24, 24), dtype, 4) + 6 * np.eye(24, dtype=dtype)
    a = m.reshape(2, 3, 4, 2, 3, 4)
    b = rand((2, 3, 4), dtype, 5)
    ours = pt.linalg.tensorsolve(pt.asarray(a), pt.asarray(b))
    want = np.linalg.tensorsolve(a, b)
    assert ours.shape == want.shape and ours.dtype == want.dtype
    np.testing.assert_allclose(ours.numpy(), want, **tol(dtype))
    moved = np.moveaxis(a, -1, 0)                      # axes= moves axis 0 back to the end
    np.testing.assert_allclose(pt.linalg.tensorsolve(moved, b, axes=(0,)).numpy(),
                               np.linalg.tensorsolve(moved, b, axes=(0,)), **tol(dtype))
    with pytest.raises(pt.PootError):
        pt.linalg.tensorsolve(np.ones((2, 3, 4)), np.ones(2))


def test_inside_jit():
    x = rand((4, 4)) + 4 * np.eye(4)

    @pt.jit
    def f(a):
        return pt.linalg.multi_dot([a, a, a]), pt.linalg.cond(a, 1), pt.linalg.tensorinv(a, 1)

    m, c, i = f(pt.asarray(x))
    np.testing.assert_allclose(m.numpy(), x @ x @ x, **tol(np.float64))
    np.testing.assert_allclose(c.numpy(), np.linalg.cond(x, 1), **tol(np.float64))
    np.testing.assert_allclose(i.numpy(), np.linalg.inv(x), **tol(np.float64))
