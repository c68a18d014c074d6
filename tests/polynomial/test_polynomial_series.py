"""pt.polynomial's series functions against numpy.polynomial: the power series (polyval, polyval2d,
polyvander, polyder, polyint, polyfit lazily; polyadd, polysub, polymul, polydiv, polypow,
polyfromroots, polyroots on the host values) and the Clenshaw evaluation of Chebyshev, Legendre and
Hermite series; evaluation stays lazy inside @pt.jit, value-reading functions are refused there."""
from __future__ import annotations

import numpy as np
import numpy.polynomial as npp
import pytest

import poot as pt

P, NP = pt.polynomial.polynomial, npp.polynomial
X = np.linspace(-1.5, 2.0, 11)
SERIES = [[3.0], [1.0, -2.0], [1.0, 2.0, 3.0], [0.5, -1.0, 0.0, 2.0, -0.25]]


def close(got, want):
    np.testing.assert_allclose(np.asarray(got.numpy() if isinstance(got, pt.Array) else got), want,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", SERIES)
def test_polyval_matches_numpy_for_arrays_scalars_and_lists(device, c):
    close(P.polyval(pt.asarray(X), c), NP.polyval(X, c))
    close(P.polyval(pt.asarray(X), pt.asarray(c)), NP.polyval(X, c))
    close(P.polyval(0.75, c), NP.polyval(0.75, c))
    close(P.polyval([0.5, 1.5], c), NP.polyval([0.5, 1.5], c))


def test_polyval_of_integer_coefficients_is_float64_and_tensor_follows_numpy(device):
    got = P.polyval(pt.asarray(np.arange(4)), [1, 2])
    assert got.dtype is pt.float64
    close(got, NP.polyval(np.arange(4), [1, 2]))
    c = np.arange(6.0).reshape(3, 2)
    close(P.polyval(pt.asarray(X), c), NP.polyval(X, c))
    close(P.polyval(pt.asarray(X[:2]), c, tensor=False), NP.polyval(X[:2], c, tensor=False))
    close(P.polyval2d(pt.asarray(X), pt.asarray(X[::-1]), np.arange(6.0).reshape(2, 3)),
          NP.polyval2d(X, X[::-1], np.arange(6.0).reshape(2, 3)))


def test_polyvander_polyder_and_polyint_match_numpy(device):
    close(P.polyvander(pt.asarray(X), 4), NP.polyvander(X, 4))
    c = SERIES[-1]
    for m in range(0, 6):
        close(P.polyder(c, m), NP.polyder(c, m))
    close(P.polyder(c, 2, scl=3.0), NP.polyder(c, 2, scl=3.0))
    c2 = np.arange(6.0).reshape(3, 2)
    close(P.polyder(c2, 1, axis=1), NP.polyder(c2, 1, axis=1))
    close(P.polyint(c), NP.polyint(c))
    close(P.polyint(c, 3, [1.0, 2.0], lbnd=0.5, scl=2.0), NP.polyint(c, 3, [1.0, 2.0], lbnd=0.5, scl=2.0))
    close(P.polyint([0.0], 2, [3.0, 4.0]), NP.polyint([0.0], 2, [3.0, 4.0]))
    close(P.polyint(c2, 1, axis=1), NP.polyint(c2, 1, axis=1))


@pytest.mark.parametrize("deg", [1, 3, [0, 1, 3]])
def test_polyfit_matches_numpy(device, deg):
    y = 1.0 + 2.0 * X - X ** 3 + 0.01 * np.sin(7 * X)
    close(P.polyfit(pt.asarray(X), pt.asarray(y), deg), NP.polyfit(X, y, deg))
    w = np.linspace(0.5, 2.0, X.size)
    close(P.polyfit(X, y, deg, w=w), NP.polyfit(X, y, deg, w=w))
    y2 = np.stack([y, 2 * y], axis=1)
    close(P.polyfit(X, y2, deg), NP.polyfit(X, y2, deg))


def test_polyfit_full_returns_numpys_diagnostics(device):
    y = 1.0 + X ** 2 + 0.1 * np.cos(X)
    c, (resid, rank, sv, rcond) = P.polyfit(X, y, 2, full=True)
    wc, (wresid, wrank, wsv, wrcond) = NP.polyfit(X, y, 2, full=True)
    close(c, wc)
    close(resid, wresid)
    close(sv, wsv)
    assert int(rank) == wrank and rcond == wrcond


@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul", "polydiv"])
def test_coefficient_algebra_trims_as_numpy_does(device, name):
    a, b = [1.0, 2.0, 1.0], [1.0, -2.0, -1.0]
    got, want = getattr(P, name)(pt.asarray(a), b), getattr(NP, name)(a, b)
    for g, w in zip(got if name == "polydiv" else (got,), want if name == "polydiv" else (want,)):
        assert isinstance(g, pt.Array) and g.shape == w.shape
        close(g, w)


def test_powers_roots_and_lines_match_numpy(device):
    close(P.polypow([1.0, 1.0], 3), NP.polypow([1.0, 1.0], 3))
    close(P.polyfromroots([1.0, 2.0, -3.0]), NP.polyfromroots([1.0, 2.0, -3.0]))
    close(P.polyroots(pt.asarray([6.0, -5.0, 1.0])), NP.polyroots([6.0, -5.0, 1.0]))
    close(P.polyline(2.0, 3.0), NP.polyline(2.0, 3.0))


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("kind", ["chebyshev", "legendre", "hermite"])
def test_orthogonal_series_evaluate_as_numpy(device, n, kind):
    val = {"chebyshev": "chebval", "legendre": "legval", "hermite": "hermval"}[kind]
    c = np.linspace(1.0, -2.0, n)
    ours, theirs = getattr(getattr(pt.polynomial, kind), val), getattr(getattr(npp, kind), val)
    close(ours(pt.asarray(X), c), theirs(X, c))
    close(ours(0.3, c), theirs(0.3, c))
    c2 = np.arange(1.0, 7.0).reshape(2, 3)
    val2d = val + "2d"
    close(getattr(getattr(pt.polynomial, kind), val2d)(pt.asarray(X), pt.asarray(X), c2),
          getattr(getattr(npp, kind), val2d)(X, X, c2))


def test_evaluation_and_fitting_stay_lazy_inside_jit(device):
    c = pt.asarray(SERIES[-1])

    @pt.jit
    def f(x, c):
        y = 2.0 - x
        fit = P.polyfit(x, y, 1)
        return P.polyval(x, c) + pt.polynomial.chebyshev.chebval(x, c), P.polyder(c), fit

    v, d, fit = f(pt.asarray(X), c)
    close(v, NP.polyval(X, SERIES[-1]) + npp.chebyshev.chebval(X, SERIES[-1]))
    close(d, NP.polyder(SERIES[-1]))
    close(fit, [2.0, -1.0])

    @pt.jit
    def g(c):
        return P.polyadd(c, c)

    with pytest.raises(pt.TracerError, match="polyadd.*data-dependent shape"):
        g(c)


def test_errors_name_the_function(device):
    with pytest.raises(pt.DomainError, match="polyder: the order of derivation must be non-negative"):
        P.polyder([1.0, 2.0], -1)
    with pytest.raises(pt.ShapeError, match="polyfit: expected x and y to have the same length"):
        P.polyfit(X, X[:-1], 2)
    with pytest.raises(pt.ShapeError, match="polyval: the coefficient array is empty"):
        P.polyval(1.0, [])


def test_multi_dimensional_series_and_roots_forms_match_numpy(device):
    x, y, z = X[:5], X[:5][::-1], 2 * X[:5]
    c2, c3 = np.arange(6.0).reshape(2, 3), np.arange(24.0).reshape(2, 3, 4)
    close(P.polyval3d(pt.asarray(x), pt.asarray(y), pt.asarray(z), c3), NP.polyval3d(x, y, z, c3))
    close(P.polygrid2d(pt.asarray(x), pt.asarray(y[:3]), c2), NP.polygrid2d(x, y[:3], c2))
    close(P.polygrid3d(x, y, z[:2], c3), NP.polygrid3d(x, y, z[:2], c3))
    close(P.polyvalfromroots(pt.asarray(x), [1.0, -2.0]), NP.polyvalfromroots(x, [1.0, -2.0]))
    close(P.polyvander2d(pt.asarray(x), pt.asarray(y), [2, 3]), NP.polyvander2d(x, y, [2, 3]))
    close(P.polyvander3d(x, y, z, [1, 2, 1]), NP.polyvander3d(x, y, z, [1, 2, 1]))
    close(P.polymulx(pt.asarray([1.0, 2.0])), NP.polymulx([1.0, 2.0]))
    close(P.polycompanion([1.0, 2.0, 3.0]), NP.polycompanion([1.0, 2.0, 3.0]))
    close(P.polytrim([1.0, 2.0, 1e-9, 0.0], 1e-6), NP.polytrim([1.0, 2.0, 1e-9, 0.0], 1e-6))
    with pytest.raises(pt.ShapeError, match="polyval2d: x, y are incompatible"):
        P.polyval2d(pt.asarray(x), pt.asarray(X), c2)
