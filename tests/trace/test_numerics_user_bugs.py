"""Numerics against NumPy: silent wrong numbers once
(nan-reductions' where=/mean=, sign(-0.0), masked arrays and np.matrix), bare Python exceptions
(vector_norm(ord=None), `x + 'a'`, roots/poly/polydiv, Generator.hypergeometric/zipf) and NumPy
keywords the linalg and statistics functions refused."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

X = np.array([[1., 2, 3, 4], [2, np.nan, 5, 1]])
W = np.array([[True, False, True, True], [True, True, False, True]])


# --- 1. silent wrong numbers ---------------------------------------------------------------------
def test_nanmean_where_counts_only_selected(device):
    got = pt.nanmean(pt.asarray(X), axis=1, where=pt.asarray(W)).numpy()
    np.testing.assert_allclose(got, np.nanmean(X, axis=1, where=W))
    # where= given as a NumPy array and with keepdims
    got = pt.nanmean(X, axis=1, where=W, keepdims=True).numpy()
    np.testing.assert_allclose(got, np.nanmean(X, axis=1, where=W, keepdims=True))


@pytest.mark.parametrize("fn", ["nanvar", "nanstd"])
def test_nanvar_nanstd_where_and_mean(device, fn):
    f, g = getattr(pt, fn), getattr(np, fn)
    np.testing.assert_allclose(f(pt.asarray(X), axis=1, where=pt.asarray(W)).numpy(),
                               g(X, axis=1, where=W))
    m = np.array([[1.], [2.]])
    np.testing.assert_allclose(f(X, axis=1, ddof=1, where=W, mean=m).numpy(),
                               g(X, axis=1, ddof=1, where=W, mean=m))
    v = np.array([1., 2, 3, 4])
    np.testing.assert_allclose(f(v, mean=np.array(0.)).numpy(), g(v, mean=np.array(0.)))
    # integer input goes through var's path: where= and mean= are applied there too
    i = np.array([1, 2, 3, 4])
    w = np.array([True, False, True, True])
    np.testing.assert_allclose(f(i, where=w).numpy(), g(i, where=w))
    np.testing.assert_allclose(f(i, mean=np.array(0.), where=w).numpy(), g(i, mean=np.array(0.), where=w))


def test_sign_of_negative_zero_is_positive_zero(device):
    for d in (np.float32, np.float64):
        a = np.array([-0.0, 0.0, np.nan, -2.5, 3.0, -np.inf, np.inf], d)
        got = pt.sign(pt.asarray(a)).numpy()
        want = np.sign(a)
        np.testing.assert_array_equal(got, want)                       # NaN -> NaN
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # sign(-0.0) is +0.0
        assert got.dtype == want.dtype


@pytest.mark.parametrize("call", [
    lambda m: pt.asarray(m), lambda m: pt.sum(m), lambda m: pt.add(pt.ones(3), m),
    lambda m: pt.ones(3) + m, lambda m: pt.mean(m), lambda m: pt.concatenate([pt.ones(3), m])])
def test_masked_array_is_refused(call):
    m = np.ma.array([1., 2, 3], mask=[0, 1, 0])
    with pytest.raises(pt.DTypeError, match="masked array"):
        call(m)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_np_matrix_is_refused_with_the_fix():
    m = np.matrix([[1., 2], [3, 4]])
    for call in (pt.asarray, pt.sum, lambda a: pt.ones((2, 2)) * a):
        with pytest.raises(pt.DTypeError, match=r"np\.asarray\(m\)"):
            call(m)
    np.testing.assert_array_equal(pt.asarray(np.asarray(m)).numpy(), np.asarray(m))


# --- 2. bare Python exceptions -------------------------------------------------------------------
def test_vector_norm_ord_none_is_two_norm():
    x = pt.asarray([3., 4.])
    assert float(pt.linalg.vector_norm(x, ord=None)) == 5.0
    np.testing.assert_allclose(pt.linalg.vector_norm(pt.asarray(X[:1]), axis=1, ord=None).numpy(),
                               np.linalg.vector_norm(X[:1], axis=1, ord=None))


@pytest.mark.parametrize("op", [lambda x: x + "a", lambda x: "a" + x, lambda x: x * "ab",
                                lambda x: x - b"a", lambda x: x < "a", lambda x: x ** "a"])
def test_str_operand_of_an_operator_is_a_dtype_error(op):
    with pytest.raises(pt.DTypeError, match="'a"):
        op(pt.ones(2))


def test_str_operand_of_an_inplace_operator():
    x = pt.ones(2)
    with pytest.raises(pt.DTypeError, match="'a'"):
        x += "a"
    assert not (pt.ones(2) == "a").any()     # NumPy 2: an all-False array


@pytest.mark.parametrize("p", [[1, -3, 2], [0, 1, 2, 0, 0], [1, 0, 1], [2.], [0, 0], [1, -6, 11, -6],
                               np.array([1, 2, 3], np.float32), [1j, 2, 1]])
def test_roots_match_numpy(p):
    got, want = pt.roots(p).numpy(), np.roots(p)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-6)


@pytest.mark.parametrize("z", [[1, 2, 3], [1j, -1j], [1j, 2], np.array([[1., 2], [3, 4]]),
                               np.array([1, 2], np.float32)])
def test_poly_matches_numpy(z):
    got, want = pt.poly(z).numpy(), np.poly(z)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert pt.poly([]) == 1.0


@pytest.mark.parametrize("u,v", [([1, -3, 2], [1, -1]), ([3., 5, 2, 1], [2, 1]), ([1, 2], [1, 2, 3]),
                                 ([1, 2, 3], [4.])])
def test_polydiv_matches_numpy(u, v):
    q, r = pt.polydiv(u, v)
    q2, r2 = np.polydiv(u, v)
    np.testing.assert_allclose(q.numpy(), q2)
    np.testing.assert_allclose(r.numpy(), r2)
    assert q.shape == q2.shape and r.shape == r2.shape


def test_generator_hypergeometric_and_zipf_say_not_built():
    g = pt.random.default_rng(0)
    with pytest.raises(pt.NotBuiltError, match="hypergeometric"):
        g.hypergeometric(5, 5, 3)
    with pytest.raises(pt.NotBuiltError, match="zipf"):
        g.zipf(2.0)


# --- 3. NumPy keywords and inputs refused before -------------------------------------------------
def test_median_of_bool_is_float64():
    b = np.array([[True, False], [True, True], [False, False]])
    for f in ("median", "nanmedian"):
        got, want = getattr(pt, f)(b, axis=0).numpy(), getattr(np, f)(b, axis=0)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(got, want)
        assert float(getattr(pt, f)(b)) == float(getattr(np, f)(b))


_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((3, 3))
_C = _A + 1j * _RNG.standard_normal((3, 3))


@pytest.mark.parametrize("a", [_A, _C])
def test_eigvalsh_and_eigh_uplo(a):
    for uplo in ("L", "U"):
        np.testing.assert_allclose(pt.linalg.eigvalsh(a, UPLO=uplo).numpy(), np.linalg.eigvalsh(a, uplo))
        w, v = pt.linalg.eigh(a, UPLO=uplo)
        w2, _ = np.linalg.eigh(a, uplo)
        np.testing.assert_allclose(w.numpy(), w2)
        h = np.triu(a) + np.triu(a, 1).conj().T if uplo == "U" else np.tril(a) + np.tril(a, -1).conj().T
        h[np.diag_indices(3)] = h.diagonal().real
        vv = v.numpy()
        np.testing.assert_allclose(h @ vv, vv * w.numpy(), atol=1e-10)
    with pytest.raises(pt.ArgumentError, match="UPLO"):
        pt.linalg.eigvalsh(a, UPLO="X")


def test_pinv_rcond_and_hermitian():
    b = _RNG.standard_normal((4, 3))
    b[:, 2] = b[:, 0]
    np.testing.assert_allclose(pt.linalg.pinv(b, rcond=1e-10).numpy(), np.linalg.pinv(b, rcond=1e-10),
                               atol=1e-12)
    np.testing.assert_allclose(pt.linalg.pinv(b, 1e-10).numpy(), np.linalg.pinv(b, 1e-10), atol=1e-12)
    h = _A + _A.T
    np.testing.assert_allclose(pt.linalg.pinv(h, hermitian=True).numpy(), np.linalg.pinv(h, hermitian=True),
                               atol=1e-10)
    with pytest.raises(pt.ArgumentError):
        pt.linalg.pinv(b, rcond=1e-10, rtol=1e-10)


def test_matrix_rank_tol_hermitian_and_vectors():
    b = _RNG.standard_normal((4, 3))
    b[:, 2] = b[:, 0]
    for kw in ({}, {"tol": 1e-10}, {"tol": 100.0}, {"hermitian": False}):
        assert int(pt.linalg.matrix_rank(b, **kw)) == np.linalg.matrix_rank(b, **kw)
    h = _A + _A.T
    assert int(pt.linalg.matrix_rank(h, hermitian=True)) == np.linalg.matrix_rank(h, hermitian=True)
    stack = np.stack([b, b * 0])
    tol = np.array([1e-10, 1.0])
    np.testing.assert_array_equal(pt.linalg.matrix_rank(stack, tol=tol).numpy(),
                                  np.linalg.matrix_rank(stack, tol=tol))
    for v in (np.array([0., 0]), np.array([0., 1]), np.float64(3.0), np.float64(0.0)):
        assert int(pt.linalg.matrix_rank(v)) == np.linalg.matrix_rank(v)


def test_qr_mode_r():
    b = _RNG.standard_normal((4, 3))
    r = pt.linalg.qr(b, mode="r")
    assert isinstance(r, pt.Array) and r.shape == (3, 3)
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(np.linalg.qr(b, mode="r")), atol=1e-12)
    q, r2 = pt.linalg.qr(b, mode="complete")
    assert q.shape == (4, 4) and r2.shape == (4, 3)
    with pytest.raises(pt.PootError, match="raw"):
        pt.linalg.qr(b, mode="raw")



@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_mean(fn):
    x = np.array([[1., 2, 3], [4, 5, 7]])
    m = x.mean(1, keepdims=True)
    np.testing.assert_allclose(getattr(pt, fn)(x, axis=1, mean=m, ddof=1).numpy(), getattr(np, fn)(x, axis=1, mean=m, ddof=1))
    i = np.array([1, 2, 3, 4])
    np.testing.assert_allclose(getattr(pt, fn)(i, mean=0).numpy(), getattr(np, fn)(i, mean=0))


@pytest.mark.parametrize("kw", [{}, {"include_initial": True}, {"axis": 0}])
def test_cumulative_of_0d(kw):
    for f in ("cumulative_sum", "cumulative_prod"):
        got, want = getattr(pt, f)(pt.asarray(3.0), **kw).numpy(), getattr(np, f)(np.array(3.0), **kw)
        np.testing.assert_array_equal(got, want)
