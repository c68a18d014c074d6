"""pt.random's global-state functions (rand, randn, normal(loc, scale, size)...) inside a jitted,
vmapped or looped function are refused with TracerError, also when the process's very first global
draw happens there: the draw would be made once, at trace time, and repeat at every call."""
from __future__ import annotations

import pytest

import poot as pt
from poot.trace import random_global


@pytest.fixture
def fresh_global_state(monkeypatch):
    """The global-state generator as in a fresh process: not made yet."""
    monkeypatch.setattr(random_global, "_generator", None)


DRAWS = {
    "rand": lambda: pt.random.rand(6),
    "randn": lambda: pt.random.randn(6),
    "random": lambda: pt.random.random(6),
    "normal": lambda: pt.random.normal(0, 1, 6),
    "uniform": lambda: pt.random.uniform(size=6),
    "randint": lambda: pt.random.randint(0, 5, 6),
    "permutation": lambda: pt.random.permutation(6),
    "choice": lambda: pt.random.choice(10, 6),
    "exponential": lambda: pt.random.exponential(size=6),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_first_global_draw_inside_jit_is_refused(fresh_global_state, name):
    draw = DRAWS[name]
    f = pt.jit(lambda x: x + draw())
    with pytest.raises(pt.TracerError, match="global-state functions"):
        f(pt.zeros(6))


def test_a_first_global_draw_inside_vmap_is_refused(fresh_global_state):
    with pytest.raises(pt.TracerError, match="global-state functions"):
        pt.vmap(lambda v: v + pt.random.rand())(pt.zeros(4))


def test_a_first_global_draw_inside_a_loop_body_is_refused(fresh_global_state):
    with pytest.raises(pt.TracerError, match="global-state functions"):
        pt.fori_loop(0, 3, lambda i, c: c + pt.random.rand(2), pt.zeros(2))


def test_seeding_inside_a_trace_does_not_make_global_draws_allowed_there(fresh_global_state):
    def f(x):
        pt.random.seed(0)
        return x + pt.random.rand(2)

    with pytest.raises(pt.TracerError, match="global-state functions"):
        pt.jit(f)(pt.zeros(2))


def test_global_draws_outside_traces_still_differ_after_a_refused_one(fresh_global_state):
    with pytest.raises(pt.TracerError):
        pt.jit(lambda x: x + pt.random.rand(6))(pt.zeros(6))
    a, b = pt.random.rand(6).numpy(), pt.random.rand(6).numpy()
    assert (a != b).any()
