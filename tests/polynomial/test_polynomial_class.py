"""pt.polynomial.Polynomial against numpy.polynomial.Polynomial: construction, evaluation of poot
arrays and scalars (lazy, mapped from domain to window), the arithmetic, deriv, integ, roots, fit with
NumPy's domain and window mapping, linspace, and NumPy's repr and str."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

PP, NP = pt.polynomial.Polynomial, np.polynomial.Polynomial
X = np.linspace(-2.0, 3.0, 9)


def close(got, want):
    got = got.numpy() if isinstance(got, pt.Array) else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def same(p, q):
    assert isinstance(p, PP) and isinstance(p.coef, pt.Array)
    close(p.coef, q.coef)
    np.testing.assert_array_equal(p.domain, q.domain)
    np.testing.assert_array_equal(p.window, q.window)


@pytest.mark.parametrize("kw", [{}, {"domain": [0, 4]}, {"domain": [0, 4], "window": [-2, 2]}])
def test_construction_and_evaluation_match_numpy(device, kw):
    p, q = PP([1, 2, 3], **kw), NP([1, 2, 3], **kw)
    same(p, q)
    assert p.degree() == q.degree() and len(p) == len(q)
    close(p(pt.asarray(X)), q(X))
    close(p(1.5), q(1.5))
    assert repr(p) == repr(q) and str(p) == str(q)


ARITH = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "radd": lambda a, b: 2.0 + a,
    "rsub": lambda a, b: 1.0 - a, "rmul": lambda a, b: 3 * a, "pow": lambda a, b: a ** 3,
    "neg": lambda a, b: -a, "scalar_div": lambda a, b: a / 4.0,
}


@pytest.mark.parametrize("name", sorted(ARITH))
def test_arithmetic_matches_numpy(device, name):
    got = ARITH[name](PP([1.0, -2.0, 0.5, 1.0]), PP([2.0, 1.0]))
    want = ARITH[name](NP([1.0, -2.0, 0.5, 1.0]), NP([2.0, 1.0]))
    same(got, want)


def test_divmod_and_trimming_follow_numpy(device):
    (pq, pr), (nq, nr) = divmod(PP([1.0, 2.0, 1.0]), PP([1.0, 1.0])), divmod(NP([1.0, 2.0, 1.0]), NP([1.0, 1.0]))
    same(pq, nq)
    same(pr, nr)
    same(PP([1.0, 2.0]) + PP([1.0, -2.0]), NP([1.0, 2.0]) + NP([1.0, -2.0]))      # trailing zero trimmed
    same(PP([1.0, 1e-9, 0.0]).trim(1e-6), NP([1.0, 1e-9, 0.0]).trim(1e-6))


def test_calculus_roots_and_constructors_match_numpy(device):
    kw = {"domain": [0, 4], "window": [-1, 1]}
    p, q = PP([2.0, -3.0, 1.0], **kw), NP([2.0, -3.0, 1.0], **kw)
    same(p.deriv(), q.deriv())
    same(p.deriv(2), q.deriv(2))
    same(p.integ(), q.integ())
    same(p.integ(2, [1.0, 2.0], lbnd=1.0), q.integ(2, [1.0, 2.0], lbnd=1.0))
    close(np.sort(p.roots().numpy()), np.sort(q.roots()))
    same(p.truncate(2), q.truncate(2))
    same(PP.fromroots([1.0, 2.0]), NP.fromroots([1.0, 2.0]))
    same(PP.identity([0, 4]), NP.identity([0, 4]))
    same(PP.basis(3), NP.basis(3))
    px, py = p.linspace(7)
    qx, qy = q.linspace(7)
    close(px, qx)
    close(py, qy)


@pytest.mark.parametrize("kw", [{}, {"domain": [-5, 15]}, {"domain": []}, {"window": [0, 1]}])
def test_fit_maps_domain_to_window_as_numpy(device, kw):
    xs = np.linspace(0.0, 10.0, 25)
    ys = 3.0 - xs + 0.5 * xs ** 2 + 0.1 * np.sin(xs)
    p = PP.fit(pt.asarray(xs), pt.asarray(ys), 3, **kw)
    q = NP.fit(xs, ys, 3, **kw)
    same(p, q)
    close(p(pt.asarray(xs)), q(xs))
    assert repr(p) == repr(q)
    pf, (resid, rank, sv, rcond) = PP.fit(xs, ys, 2, full=True, **kw)
    qf, (qresid, qrank, qsv, qrcond) = NP.fit(xs, ys, 2, full=True, **kw)
    same(pf, qf)
    close(resid, qresid)
    assert int(rank) == qrank


def test_calling_a_polynomial_on_a_poot_array_is_lazy(device):
    p = PP([1.0, -2.0, 3.0], domain=[0, 2])
    q = NP([1.0, -2.0, 3.0], domain=[0, 2])
    close(pt.jit(lambda x: p(x) + p.deriv()(x))(pt.asarray(X)), q(X) + q.deriv()(X))


def test_errors_name_what_was_wrong(device):
    with pytest.raises(pt.ShapeError, match="domain has to be of length 2"):
        PP([1.0], domain=[0, 1, 2])
    with pytest.raises(pt.ShapeError, match="coefficient array is not 1-d"):
        PP(np.ones((2, 2)))
    with pytest.raises(pt.ArgumentError, match="symbol must be a valid Python identifier"):
        PP([1.0], symbol="1x")
