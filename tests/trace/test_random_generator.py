"""pt.random.default_rng: NumPy's Generator methods over poot's counter-based bits; the same numbers
for a seed on every device, the distributions NumPy's methods promise."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

N = 20000


def draws(seed=0):
    g = pt.random.default_rng(seed)
    return [g.random(5), g.normal(1.0, 2.0, 5), g.integers(0, 10, 5), g.permutation(6),
            g.choice(7, 3, replace=False), g.exponential(2.0, 4), g.uniform(-1, 1, 3),
            g.standard_normal(3, dtype=pt.float32)]


def test_deterministic_per_seed_and_device(device):
    here = [d.numpy() for d in draws(5)]
    again = [d.numpy() for d in draws(5)]
    with pt.device("cpu"):
        cpu = [d.numpy() for d in draws(5)]
    for a, b, c in zip(here, again, cpu):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-6)
    other = [d.numpy() for d in draws(6)]
    assert not np.array_equal(here[0], other[0])


def test_dtypes_and_shapes(device):
    g = pt.random.default_rng(1)
    assert g.random().shape == () and g.random().dtype == pt.float64
    assert g.random((2, 3), dtype=pt.float32).dtype == pt.float32
    assert g.normal(size=(4,)).dtype == pt.float64
    assert g.standard_normal(dtype=np.float32).dtype == pt.float32
    assert g.integers(5, size=3).dtype == pt.int64
    assert g.integers(0, 5, size=3, dtype=np.uint8).dtype == pt.uint8
    assert g.normal(np.zeros((2, 1)), np.ones(3)).shape == (2, 3)
    with pytest.raises(pt.DTypeError):
        g.random(dtype=pt.int32)
    with pytest.raises(pt.PootError):
        g.choice(3, 5, replace=False)


def test_distributions(device):
    g = pt.random.default_rng(2)
    u = g.random(N).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = g.normal(3.0, 2.0, N).numpy()
    assert abs(z.mean() - 3.0) < 0.05 and abs(z.std() - 2.0) < 0.05
    e = g.exponential(2.0, N).numpy()
    assert e.min() >= 0 and abs(e.mean() - 2.0) < 0.08
    v = g.uniform(-2, 6, N).numpy()
    assert v.min() >= -2 and v.max() < 6 and abs(v.mean() - 2.0) < 0.1
    i = g.integers(1, 6, N, endpoint=True).numpy()
    assert set(np.unique(i)) == {1, 2, 3, 4, 5, 6}


def test_permutation_shuffle_choice(device):
    g = pt.random.default_rng(3)
    p = g.permutation(10).numpy()
    assert sorted(p) == list(range(10))
    m = np.arange(12).reshape(4, 3)
    q = g.permutation(m).numpy()
    assert sorted(map(tuple, q)) == sorted(map(tuple, m))
    x = pt.asarray(np.arange(8))
    alias = x
    g.shuffle(x)                                   # in place
    assert sorted(alias.numpy()) == list(range(8))
    c = g.choice(np.arange(5) * 10, 6).numpy()
    assert set(c) <= {0, 10, 20, 30, 40}
    c = g.choice(5, 3, replace=False).numpy()
    assert len(set(c)) == 3
    w = g.choice(4, N, p=[0.1, 0.2, 0.3, 0.4]).numpy()
    np.testing.assert_allclose(np.bincount(w, minlength=4) / N, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    k = g.choice(4, 2, replace=False, p=[0.0, 0.5, 0.0, 0.5]).numpy()
    assert sorted(k) == [1, 3]


def test_a_generator_from_outside_refuses_to_draw_inside_a_traced_function():
    """A draw at trace time would give every call (or example, or iteration) the same numbers."""
    rng = pt.random.default_rng(0)
    x = pt.asarray(np.zeros(3))
    with pytest.raises(pt.TracerError, match="pass a key|Pass a key"):
        pt.jit(lambda x: x + rng.normal(size=3))(x)
    with pytest.raises(pt.TracerError):
        pt.vmap(lambda x: x + rng.random())(x)
    inside = pt.jit(lambda x: x + pt.random.default_rng(1).normal(size=3))
    np.testing.assert_array_equal(inside(x).numpy(), pt.random.default_rng(1).normal(size=3).numpy())
    assert rng.normal(size=2).shape == (2,)            # still usable outside


def test_numpys_global_state_functions_draw_from_one_seeded_generator():
    pt.random.seed(5)
    first = [pt.random.rand(3).numpy(), pt.random.randn(2, 2).numpy(), pt.random.randint(0, 10, size=4).numpy(),
             pt.random.normal(0.0, 2.0, 500).numpy(), pt.random.uniform(size=3).numpy()]
    pt.random.seed(5)
    again = [pt.random.rand(3).numpy(), pt.random.randn(2, 2).numpy(), pt.random.randint(0, 10, size=4).numpy(),
             pt.random.normal(0.0, 2.0, 500).numpy(), pt.random.uniform(size=3).numpy()]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert first[1].shape == (2, 2) and ((first[2] >= 0) & (first[2] < 10)).all()
    assert abs(first[3].std() - 2.0) < 0.3 and ((first[0] >= 0) & (first[0] < 1)).all()
    x = pt.arange(6)
    pt.random.shuffle(x)
    assert sorted(x.numpy().tolist()) == list(range(6))
    assert sorted(pt.random.permutation(5).numpy().tolist()) == list(range(5))
    key = pt.random.key(1)                      # a key first: pt.random's own functions, as before
    np.testing.assert_array_equal(pt.random.normal(key, (4,)).numpy(), pt.random.normal(key, (4,)).numpy())
    with pytest.raises(pt.TracerError):
        pt.jit(lambda v: v + pt.random.rand(2))(pt.ones(2))
    with pytest.raises(pt.PootError, match="separate ints"):
        pt.random.rand((2, 3))
