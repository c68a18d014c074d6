"""pt.stop_gradient inside a pt.fori_loop / pt.scan / pt.cond body that is differentiated (a TD target,
a detached running statistic): the body keeps it, and the derivative is JAX's (values below from
jax.grad on the same functions, float64)."""
from __future__ import annotations

import numpy as np

import poot as pt


def loop(w):
    return pt.fori_loop(0, 3, lambda i, c: c + pt.stop_gradient(c) * w, w).sum()


def scanned(w):
    def body(c, x):
        target = pt.stop_gradient(c * 2)
        return c * w + x, (c - target) ** 2
    _, ys = pt.scan(body, w, pt.arange(3.0))
    return ys.sum()


def branch(w):
    return pt.cond(w > 0, lambda v: pt.stop_gradient(v) * v, lambda v: v, w)


def test_reverse_mode_matches_jax():
    assert float(pt.grad(loop)(pt.asarray(1.5))) == 15.625
    assert float(pt.grad(scanned)(pt.asarray(0.5))) == -3.1875
    assert float(pt.jit(pt.grad(scanned))(pt.asarray(0.5))) == -3.1875
    assert float(pt.grad(branch)(pt.asarray(3.0))) == 3.0


def test_forward_mode_and_vmap_agree():
    assert float(pt.jvp(scanned, (pt.asarray(0.5),), (pt.asarray(1.0),))[1]) == -3.1875
    np.testing.assert_array_equal(pt.vmap(pt.grad(branch))(pt.asarray([3.0, -1.0])).numpy(), [3.0, 1.0])


def test_the_value_is_unchanged():
    c = 1.5
    for _ in range(3):
        c = c + c * 1.5
    assert float(loop(pt.asarray(1.5))) == c
    assert float(pt.value_and_grad(loop)(pt.asarray(1.5))[0]) == c
