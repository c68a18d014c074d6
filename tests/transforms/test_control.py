"""Derivatives through pt.cond, pt.fori_loop and pt.while_loop, and the clear errors where a mode
is not available."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def f64(*values):
    return pt.asarray(np.asarray(values, dtype=np.float64))


def _power_loop(x, n):
    return pt.fori_loop(0, n, lambda i, acc: acc * x + 0.0 * i, pt.ones_like(x))


def test_reverse_mode_through_fori_loop_matches_the_closed_form():
    x = f64(0.5, 1.5, -2.0)
    g = pt.grad(lambda v: _power_loop(v, 6).sum())(x)
    np.testing.assert_allclose(g.numpy(), 6 * x.numpy() ** 5, rtol=1e-12)
    jg = pt.jit(pt.grad(lambda v: _power_loop(v, 6).sum()))
    np.testing.assert_allclose(jg(x).numpy(), g.numpy(), rtol=1e-12)


def test_fori_loop_with_integer_carry_and_many_steps():
    def f(v):
        count, acc = pt.fori_loop(0, 200, lambda i, c: (c[0] + 1, c[1] + pt.sin(c[1]) * 0.01 + v), (0, v))
        return (acc * count.astype(pt.float64)).sum()

    x = f64(0.3)
    g = float(pt.grad(f)(x)[0])
    eps = 1e-6
    numeric = (float(f(f64(0.3 + eps))) - float(f(f64(0.3 - eps)))) / (2 * eps)
    assert g == pytest.approx(numeric, rel=1e-6)


def test_grad_of_grad_through_fori_loop():
    d2 = pt.grad(lambda v: pt.grad(lambda u: _power_loop(u, 4).sum())(v).sum())
    x = f64(0.7, 1.1)
    np.testing.assert_allclose(d2(x).numpy(), 12 * x.numpy() ** 2, rtol=1e-12)


def test_cond_gradient_follows_the_taken_branch():
    def f(v):
        return pt.cond(v.sum() > 0, lambda a: (a * a).sum(), lambda a: pt.sin(a).sum(), v)

    np.testing.assert_allclose(pt.grad(f)(f64(1.0, 2.0)).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(pt.grad(f)(f64(-1.0, -2.0)).numpy(), np.cos([-1.0, -2.0]))
    np.testing.assert_allclose(pt.jit(pt.grad(f))(f64(-1.0, -2.0)).numpy(), np.cos([-1.0, -2.0]))


def test_while_loop_forward_mode():
    def f(v):
        return pt.while_loop(lambda c: c[1].sum() < 10.0, lambda c: (c[0] + 1, c[1] * 2.0), (0, v))[1]

    x = f64(1.0, 0.5)            # doubles 3 times: sum 12
    y, t = pt.jvp(f, (x,), (f64(1.0, 1.0),))
    np.testing.assert_allclose(y.numpy(), x.numpy() * 8)
    np.testing.assert_allclose(t.numpy(), [8.0, 8.0])


def test_reverse_mode_through_while_loop_is_refused():
    def f(v):
        return pt.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, v).sum()

    with pytest.raises(pt.NotBuiltError, match="while_loop.*fori_loop"):
        pt.grad(f)(f64(1.0))
    with pytest.raises(pt.NotBuiltError, match="while"):      # a traced array bound: no trip count
        pt.jit(lambda v, n: pt.grad(lambda v: pt.fori_loop(0, n, lambda i, c: c * v, v).sum())(v))(
            f64(1.0), pt.asarray(3))
