"""Generator's distributions beyond uniform/normal/exponential (poot/trace/random_distributions.py):
samples match NumPy's Generator in distribution (two-sample Kolmogorov-Smirnov), shapes and dtypes
match NumPy's, and bad parameters raise. Reproducibility and @pt.jit: test_random_distributions_jit.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt

N = 20000
ALPHA = 1e-7      # false-alarm rate of each KS comparison

# (method, positional args): a list argument holds several parameter regimes, drawn in one call
# (size (N, regimes)) and compared column by column
CASES = [
    ("standard_gamma", ([0.3, 1.0, 7.5],)), ("gamma", ([2.5, 0.05], [3.0, 1.0])),
    ("beta", ([0.5, 2.0, 0.02], [0.5, 5.0, 0.03])), ("chisquare", (3.0,)), ("f", (5.0, 7.0)),
    ("standard_t", (4.0,)), ("standard_cauchy", ()), ("laplace", (1.0, 2.0)), ("logistic", (-1.0, 0.5)),
    ("lognormal", (0.5, 0.8)), ("gumbel", (2.0, 3.0)), ("pareto", (3.0,)), ("power", (0.7,)),
    ("rayleigh", (2.0,)), ("triangular", (-1.0, 0.5, 3.0)), ("wald", (1.5, 2.0)), ("weibull", (1.7,)),
    ("geometric", ([0.2, 0.9],)), ("poisson", ([0.7, 6.0, 9.99, 10.0, 37.0, 1e5],)),
    ("negative_binomial", ([3.0, 0.5], [0.4, 0.05])),
    ("binomial", ([10, 30, 19, 1000, 10**9], [0.3, 0.9, 0.5, 0.3, 1e-8])), ("logseries", ([0.6, 0.99],)),
    ("vonmises", ([0.5, -2.0, 3.0], [0.3, 4.0, 200.0])),
    ("noncentral_chisquare", ([0.5, 3.0, 3.0], [2.0, 0.0, 5.0])), ("noncentral_f", ([0.7, 5.0], 7.0, [1.5, 3.0])),
]


def ks_statistic(a, b):
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    points = np.concatenate([a, b])
    fa = np.searchsorted(a, points, side="right") / a.size
    fb = np.searchsorted(b, points, side="right") / b.size
    return np.abs(fa - fb).max()


def ks_threshold(n, m, alpha=ALPHA):
    return math.sqrt(-0.5 * math.log(alpha / 2)) * math.sqrt((n + m) / (n * m))


def assert_same_distribution(ours, theirs):
    assert np.isfinite(ours).all()
    d = ks_statistic(ours, theirs)
    assert d < ks_threshold(ours.size, theirs.size), f"KS statistic {d:.4f}"


def draw(g, name, args):
    """N draws of each parameter regime: size (N,) + the parameters' broadcast shape."""
    return getattr(g, name)(*args, size=(N,) + np.broadcast_shapes(*(np.shape(a) for a in args)))


@pytest.mark.parametrize("name,args", CASES, ids=[n for n, _ in CASES])
def test_matches_numpy_distribution(name, args):
    ours = draw(pt.random.default_rng(11), name, args).numpy()
    theirs = draw(np.random.default_rng(11), name, args)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    for column in range(ours[0].size):
        assert_same_distribution(ours.reshape(N, -1)[:, column], theirs.reshape(N, -1)[:, column])


SHAPES = [
    ("gamma", (np.ones((2, 1)), np.ones(3)), {}), ("gamma", (1.0,), {"size": (4, 2)}),
    ("beta", (np.ones(3), 2.0), {"size": (2, 3)}), ("standard_gamma", (2.0,), {"dtype": np.float32}),
    ("standard_gamma", (2.0,), {"size": 5, "dtype": np.float32}), ("standard_cauchy", (), {}),
    ("triangular", (0.0, np.array([0.2, 0.5]), 1.0), {}), ("poisson", (), {"size": (2, 3)}),
    ("poisson", (np.array([[1.0], [20.0]]),), {"size": (2, 4)}), ("gamma", (np.ones(3),), {"size": (2, 3)}), ("geometric", (0.5,), {}),
    ("negative_binomial", (np.array([1.0, 2.0]), 0.5), {}), ("vonmises", (0.0, np.ones(3)), {}),
    ("dirichlet", ([1.0, 2.0, 3.0],), {}), ("dirichlet", ([1.0, 2.0],), {"size": (4, 2)}),
    ("multivariate_normal", ([0.0, 1.0], np.eye(2)), {}),
    ("multivariate_normal", ([0.0, 1.0, 2.0], np.eye(3)), {"size": (5, 2)}),
    ("wald", (1.0, np.ones((2, 2))), {"size": (3, 2, 2)}), ("binomial", (np.array([3, 50]), 0.5), {}),
    ("logseries", (0.5,), {"size": (2, 2)}), ("multinomial", (10, [0.5, 0.5]), {}),
    ("multinomial", (np.array([10, 20]), [0.2, 0.3, 0.5]), {}), ("multinomial", (5, [0.1, 0.9]), {"size": (3, 2)}), ("chisquare", (2.0,), {"size": 0}),
]


@pytest.mark.parametrize("name,args,kwargs", SHAPES)
def test_shapes_and_dtypes_match_numpy(name, args, kwargs):
    ours = getattr(pt.random.default_rng(0), name)(*args, **kwargs)
    theirs = getattr(np.random.default_rng(0), name)(*args, **kwargs)
    if np.ndim(theirs) == 0:     # NumPy returns a Python scalar for size=None; size=() keeps the dtype
        theirs = getattr(np.random.default_rng(0), name)(*args, **kwargs, size=())
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype


def test_size_that_parameters_do_not_broadcast_to():
    with pytest.raises(pt.PootError):
        pt.random.default_rng(0).gamma(np.ones(3), size=(2,))
    with pytest.raises(ValueError):
        np.random.default_rng(0).gamma(np.ones(3), size=(2,))


DIRICHLET_ALPHA = [2.0, 3.0, 5.0]
MVN_MEAN = np.array([1.0, -2.0, 0.5])
MVN_COV = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
MULTINOMIAL_P = [0.1, 0.25, 0.05, 0.6]


def test_leftover_free_rejection_rounds():
    """The fixed rounds accept every element in practice: large samples stay finite and in range."""
    g = pt.random.default_rng(8)
    sg = g.standard_gamma(np.array([1e-3, 0.5, 1.0, 3.0, 1e4]), size=(4000, 5)).numpy()
    assert np.isfinite(sg).all() and (sg >= 0).all()
    vm = g.vonmises(0.0, np.array([1e-9, 1e-6, 0.7, 50.0, 1e7]), size=(4000, 5)).numpy()
    assert np.isfinite(vm).all() and (np.abs(vm) <= np.pi).all()
    pk = g.poisson(np.array([0.0, 10.0, 1e3, 1e9]), size=(4000, 4)).numpy()
    assert (pk[:, 0] == 0).all() and (pk >= 0).all()
    np.testing.assert_allclose(pk.mean(axis=0)[1:], [10.0, 1e3, 1e9], rtol=0.02)


BAD = [
    ("standard_gamma", (-1.0,)), ("gamma", (1.0, -2.0)), ("gamma", ([1.0, -1.0],)), ("beta", (0.0, 1.0)),
    ("beta", (1.0, -1.0)), ("chisquare", (0.0,)), ("f", (1.0, 0.0)), ("f", (-1.0, 1.0)),
    ("standard_t", (0.0,)), ("laplace", (0.0, -1.0)), ("logistic", (0.0, -1.0)), ("lognormal", (0.0, -1.0)),
    ("gumbel", (0.0, -1.0)), ("pareto", (0.0,)), ("power", (-1.0,)), ("rayleigh", (-1.0,)),
    ("triangular", (1.0, 0.0, 2.0)), ("triangular", (0.0, 3.0, 2.0)), ("triangular", (1.0, 1.0, 1.0)),
    ("wald", (0.0, 1.0)), ("wald", (1.0, 0.0)), ("weibull", (-1.0,)), ("geometric", (0.0,)),
    ("geometric", (1.5,)), ("geometric", (np.nan,)), ("poisson", (-1.0,)), ("poisson", (1e20,)),
    ("negative_binomial", (0.0, 0.5)), ("negative_binomial", (1.0, 1.5)), ("dirichlet", ([1.0, -1.0],)),
    ("dirichlet", (np.ones((2, 2)),)), ("vonmises", (0.0, -1.0)),
    ("multivariate_normal", ([0.0], np.eye(2))), ("binomial", (-1, 0.5)), ("binomial", (5, 1.5)),
    ("binomial", (5, np.nan)), ("logseries", (1.0,)), ("logseries", (-0.5,)), ("multinomial", (-1, [0.5, 0.5])),
    ("multinomial", (5, [0.8, 0.8, 0.1])), ("multinomial", (5, [-0.1, 1.1])),
    ("noncentral_chisquare", (0.0, 1.0)), ("noncentral_chisquare", (1.0, -1.0)), ("noncentral_f", (1.0, 1.0, -1.0)),
    ("noncentral_f", (1.0, 0.0, 1.0)), ("multivariate_normal", ([0.0, 0.0], np.ones(2))),
]


@pytest.mark.parametrize("name,args", BAD, ids=[f"{n}{i}" for i, (n, _) in enumerate(BAD)])
def test_bad_parameters_raise_as_numpy_does(name, args):
    with pytest.raises(ValueError):
        getattr(np.random.default_rng(0), name)(*args)
    with pytest.raises(pt.PootError):
        getattr(pt.random.default_rng(0), name)(*args)


def test_dirichlet_rejects_nan_alpha():
    with pytest.raises(pt.PootError, match="alpha"):
        pt.random.default_rng(0).dirichlet([1.0, np.nan])


def test_multivariate_normal_methods_and_check_valid():
    cov, mean = MVN_COV, MVN_MEAN
    for method in ("svd", "eigh", "cholesky"):
        x = pt.random.default_rng(5).multivariate_normal(mean, cov, size=N, method=method).numpy()
        se = np.sqrt(np.diag(cov) / N)
        assert (np.abs(x.mean(axis=0) - mean) < 6 * se).all()
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.warns(RuntimeWarning):
        pt.random.default_rng(0).multivariate_normal([0.0, 0.0], bad)
    with pytest.raises(pt.PootError):
        pt.random.default_rng(0).multivariate_normal([0.0, 0.0], bad, check_valid="raise")
    with pytest.raises(pt.PootError):
        pt.random.default_rng(0).multivariate_normal([0.0, 0.0], np.eye(2), method="qr")


def test_dirichlet_rows_sum_to_one_even_for_tiny_alpha():
    x = pt.random.default_rng(6).dirichlet([0.01, 0.02, 0.005], size=2000).numpy()
    assert np.isfinite(x).all()
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-12)
    y = pt.random.default_rng(6).dirichlet(DIRICHLET_ALPHA, size=N).numpy()
    np.testing.assert_allclose(y.mean(axis=0), [0.2, 0.3, 0.5], atol=6 * 0.5 / np.sqrt(N * 11))


def test_multinomial_matches_numpy_per_outcome():
    pvals = MULTINOMIAL_P
    ours = pt.random.default_rng(9).multinomial(200, pvals, size=N // 2).numpy()
    theirs = np.random.default_rng(9).multinomial(200, pvals, size=N // 2)
    assert (ours.sum(axis=1) == 200).all() and (ours >= 0).all()
    for i in range(len(pvals)):
        assert_same_distribution(ours[:, i], theirs[:, i])


def test_binomial_edges():
    g = pt.random.default_rng(10)
    x = g.binomial(np.array([0, 7, 7, 7, 10**6]), np.array([0.5, 0.0, 1.0, 0.5, 0.999]), size=(2000, 5)).numpy()
    assert (x[:, 0] == 0).all() and (x[:, 1] == 0).all() and (x[:, 2] == 7).all()
    assert (0 <= x[:, 3]).all() and (x[:, 3] <= 7).all() and (x[:, 4] <= 10**6).all()
    assert abs(x[:, 4].mean() - 999000) < 6 * np.sqrt(10**6 * 0.999 * 0.001 / 2000)
