"""Generator's distributions (poot/trace/random_distributions.py) are reproducible per seed, give
the same values under @pt.jit as eagerly, and take traced parameters inside @pt.jit."""
from __future__ import annotations

import numpy as np

import poot as pt
from tests.trace.test_random_distributions import (CASES, DIRICHLET_ALPHA, MULTINOMIAL_P, MVN_COV, MVN_MEAN,
                                                   N, draw)

# under @pt.jit: one distribution per sampler (the others are arithmetic on these samplers' draws)
JIT_CASES = [case for case in CASES if case[0] in (
    "standard_gamma", "beta", "standard_cauchy", "laplace", "triangular", "wald", "geometric", "poisson",
    "negative_binomial", "binomial", "logseries", "vonmises", "noncentral_chisquare")]


def sample_all(g, cases=JIT_CASES):
    return [draw(g, name, args) for name, args in cases] + [
        g.standard_gamma(0.4, 6, dtype=np.float32), g.dirichlet(DIRICHLET_ALPHA, N),
        g.multivariate_normal(MVN_MEAN, MVN_COV, N), g.multinomial(200, MULTINOMIAL_P, N // 2)]


def test_seed_determines_values_and_eager_equals_jit():
    """One distribution per sampler: the same seed gives the same values (eagerly and under @pt.jit),
    another seed others."""
    eager = [x.numpy() for x in sample_all(pt.random.default_rng(21))]
    again = [x.numpy() for x in sample_all(pt.random.default_rng(21))[-4:]]
    other = [x.numpy() for x in sample_all(pt.random.default_rng(22))[-4:]]
    for a, b, c in zip(eager[-4:], again, other):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)

    @pt.jit
    def traced(x):
        return [v + x.astype(v.dtype) for v in sample_all(pt.random.default_rng(21))]

    jitted = [v.numpy() for v in traced(pt.zeros((), dtype=pt.int64))]
    for a, j in zip(eager, jitted):
        assert a.dtype == j.dtype
        if a.dtype.kind == "i":
            np.testing.assert_array_equal(j, a)
        else:
            np.testing.assert_allclose(j, a, rtol=1e-12, atol=1e-12)


def test_traced_parameters_inside_jit():
    @pt.jit
    def draw_with(lam, a):
        g = pt.random.default_rng(0)
        return g.poisson(lam, size=(4, 2)), g.gamma(a, size=(4, 2))

    lam, a = pt.asarray(np.array([3.0, 40.0])), pt.asarray(np.array([0.5, 4.0]))
    counts, values = draw_with(lam, a)
    g = pt.random.default_rng(0)
    np.testing.assert_array_equal(counts.numpy(), g.poisson(lam, size=(4, 2)).numpy())
    np.testing.assert_allclose(values.numpy(), g.gamma(a, size=(4, 2)).numpy(), rtol=1e-12)
