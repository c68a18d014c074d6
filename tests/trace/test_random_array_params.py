"""pt.random.uniform / normal / bernoulli take array parameters, and values traced under @pt.jit
(a dropout rate passed to a jitted step), broadcast to the shape as JAX does: the same draws as the
same numbers given eagerly."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


KEY = (7,)


def test_traced_parameters_draw_what_the_same_numbers_draw_eagerly(device):
    with pt.device(device):
        key = pt.random.key(*KEY)
        u = pt.jit(lambda k, lo, hi: pt.random.uniform(k, (64,), minval=lo, maxval=hi))(key, 1.0, 3.0)
        np.testing.assert_array_equal(u.numpy(), pt.random.uniform(key, (64,), minval=1.0, maxval=3.0).numpy())
        z = pt.jit(lambda k, m, s: pt.random.normal(k, (64,), loc=m, scale=s))(key, 5.0, 0.5)
        np.testing.assert_allclose(z.numpy(), pt.random.normal(key, (64,), loc=5.0, scale=0.5).numpy(),
                                   rtol=1e-15)
        b = pt.jit(lambda k, rate: pt.random.bernoulli(k, 1.0 - rate, (64,)))(key, 0.25)
        np.testing.assert_array_equal(b.numpy(), pt.random.bernoulli(key, 0.75, (64,)).numpy())


def test_array_bounds_apply_per_element(device):
    with pt.device(device):
        key = pt.random.key(*KEY)
        lo, hi = np.array([0.0, 10.0, 100.0]), np.array([1.0, 10.5, 200.0])
        u = pt.random.uniform(key, (500, 3), minval=lo, maxval=hi).numpy()
        assert ((u >= lo) & (u < hi)).all()
        assert np.allclose(u.mean(0), (lo + hi) / 2, rtol=0.1)
        p = pt.asarray([0.0, 1.0, 0.3])
        b = pt.random.bernoulli(key, p).numpy()                   # shape defaults to p's
        assert b.shape == (3,) and not b[0] and b[1]
        freq = pt.random.bernoulli(key, p, (4000, 3)).numpy().mean(0)
        np.testing.assert_allclose(freq, [0.0, 1.0, 0.3], atol=0.03)
        n = pt.random.normal(key, (4000, 2), loc=np.array([-3.0, 3.0]), scale=np.array([0.1, 2.0])).numpy()
        np.testing.assert_allclose(n.mean(0), [-3.0, 3.0], atol=0.1)
        np.testing.assert_allclose(n.std(0), [0.1, 2.0], rtol=0.1)


def test_jitted_dropout_with_a_rate_argument(device):
    with pt.device(device):
        key = pt.random.key(*KEY)
        x = pt.ones((2000,), dtype=pt.float32)
        step = pt.jit(lambda k, x, rate: pt.where(pt.random.bernoulli(k, 1.0 - rate, x.shape), x / (1.0 - rate), 0.0))
        y = step(key, x, 0.2).numpy()
        assert y.dtype == np.float32 and set(np.unique(y)) <= {0.0, np.float32(1.25)}
        assert abs((y > 0).mean() - 0.8) < 0.05


def test_a_parameter_that_does_not_broadcast_is_refused():
    key = pt.random.key(0)
    with pytest.raises(pt.ShapeError, match="minval of shape \\(4,\\) does not broadcast to the shape \\(3,\\)"):
        pt.random.uniform(key, (3,), minval=np.zeros(4))
    with pytest.raises(pt.ShapeError, match="bernoulli: p of shape"):
        pt.random.bernoulli(key, np.full(5, 0.5), (3,))


def test_a_traced_seed_for_default_rng_is_named():
    with pytest.raises(pt.TracerError, match=r"default_rng: the seed \(i64\[\]\) is traced"):
        pt.jit(lambda seed: pt.random.default_rng(seed).normal(size=3))(1)


def test_a_loop_of_draws_reuses_one_program():
    """fold_in(key, i) holds i in a leaf, not in the graph: the draws of a loop (and a Generator's
    successive draws, which fold in their count) have one structure, so one compiled program."""
    from poot.trace.walk import Walk

    key = pt.random.key(0)
    a, b = (pt.random.normal(pt.random.fold_in(key, i), (8,)) for i in (1, 2))
    assert Walk([a._node]).key == Walk([b._node]).key
    assert not np.array_equal(a.numpy(), b.numpy())
    rng = pt.random.default_rng(0)
    c, d = rng.normal(size=8), rng.normal(size=8)
    assert Walk([c._node]).key == Walk([d._node]).key
    np.testing.assert_array_equal(c.numpy(), pt.random.default_rng(0).normal(size=8).numpy())
