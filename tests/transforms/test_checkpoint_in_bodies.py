"""pt.checkpoint inside a pt.scan / pt.fori_loop / pt.cond body that is differentiated: the body runs
as written (a custom rule cannot be carried through a body), so values and derivatives are those of
the function without checkpoint. It used to be refused (RuleInBodyError)."""
import numpy as np
import pytest

import poot as pt


def _cell(c, x, w):
    return pt.sin(c * w + x) + 0.1 * c * c


def scan_loss(w, remat):
    body = (lambda c, x: (_cell(c, x, w), c))
    if remat:
        body = pt.checkpoint(body)
    final, ys = pt.scan(body, w, pt.arange(4.0))
    return final + ys.sum()


def fori_loss(w, remat):
    body = lambda i, c: _cell(c, i * 0.5, w)  # noqa: E731
    if remat:
        body = pt.checkpoint(body)
    return pt.fori_loop(0, 5, body, w)


def cond_loss(w, remat):
    branch = (lambda v: pt.tanh(v * 3.0) * v)
    if remat:
        branch = pt.checkpoint(branch)
    return pt.cond(w > 0, branch, lambda v: v * v, w)


@pytest.mark.parametrize("loss", [scan_loss, fori_loss, cond_loss], ids=["scan", "fori_loop", "cond"])
def test_checkpointed_body_matches_plain_body(loss):
    for w in (0.3, 0.7):
        x = pt.asarray(np.float64(w))
        got = pt.grad(lambda v: loss(v, True))(x)
        want = pt.grad(lambda v: loss(v, False))(x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        h = 1e-6
        fd = (loss(pt.asarray(w + h), False).numpy() - loss(pt.asarray(w - h), False).numpy()) / (2 * h)
        np.testing.assert_allclose(got.numpy(), fd, rtol=1e-6)


def test_checkpointed_scan_body_under_jit_and_vmap():
    g = pt.grad(lambda v: scan_loss(v, True))
    ws = np.array([0.2, 0.4, 0.9])
    want = np.array([pt.grad(lambda v: scan_loss(v, False))(pt.asarray(w)).numpy() for w in ws])
    np.testing.assert_allclose(pt.jit(g)(pt.asarray(0.4)).numpy(), want[1], rtol=1e-12)
    np.testing.assert_allclose(pt.vmap(g)(pt.asarray(ws)).numpy(), want, rtol=1e-12)
