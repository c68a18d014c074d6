"""A key passed to one of NumPy's global-state random functions that has no key-first JAX form here
(`standard_normal(key)`, `rand(key)`) is refused with an ArgumentError: NumPy's signatures would read
the key's two words as a parameter or a size and return numbers drawn from them (zeros from key(0))
without a word. (`choice`, `exponential`, `gamma`, `beta`, `poisson`, `laplace`, `logistic`,
`dirichlet`, `multivariate_normal`, `gumbel` and `permutation(key, x)` are JAX's key-first forms
given a key.)"""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

KEY_FIRST_CALLS = {
    "standard_normal": lambda k: pt.random.standard_normal(k),
    "rand": lambda k: pt.random.rand(k),
    "random": lambda k: pt.random.random(k),
    "permutation": lambda k: pt.random.permutation(k),
    "shuffle": lambda k: pt.random.shuffle(k),
}


@pytest.mark.parametrize("name", sorted(KEY_FIRST_CALLS))
def test_a_key_given_to_a_global_state_function_is_refused(device, name):
    key = pt.random.split(pt.random.key(0))[1]
    with pytest.raises(pt.ArgumentError, match=f"random.{name}: the first argument is a key"):
        KEY_FIRST_CALLS[name](key)


def test_numpy_style_calls_with_arrays_still_draw(device):
    pt.random.seed(3)
    scale = pt.array(np.array([1.0, 2.0]))
    assert pt.random.exponential(scale).shape == (2,)
    picks = pt.random.choice(pt.array(np.array([4, 5, 6], np.uint32)), 4).numpy()
    assert set(picks.tolist()) <= {4, 5, 6}
    assert pt.random.gamma(2.0, size=3).shape == (3,)
    z = pt.random.normal(pt.random.key(1), (1000,)).numpy()
    assert abs(z.mean()) < 0.2


def test_permutation_and_shuffle_without_a_key_still_permute_as_numpy_does(device):
    pt.random.seed(5)
    want = np.random.default_rng(5).permutation(np.arange(6.0))      # NumPy: a permuted copy
    got = pt.random.permutation(pt.asarray(np.arange(6.0))).numpy()
    assert got.shape == want.shape and sorted(got.tolist()) == sorted(want.tolist())
    assert sorted(pt.random.permutation(7).numpy().tolist()) == list(range(7))
    x = pt.asarray(np.arange(5.0))
    pt.random.shuffle(x)
    assert sorted(x.numpy().tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]
