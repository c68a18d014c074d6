"""`pt.scan` (JAX's lax.scan): values against NumPy loops, derivatives against central finite
differences in float64, vmap against a Python loop over the batch, jit against eager, and the
errors that name the argument at fault."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close
from tests.transforms.checks import check_derivatives

RNG = np.random.default_rng(7)


def _rnn(w, u, h0, xs):
    """h_{t+1} = tanh(W h_t + U x_t); ys are the states; returns (last state, all states)."""
    def step(h, x):
        h = pt.tanh(w @ h + u @ x)
        return h, h

    return pt.scan(step, h0, xs)


def _rnn_numpy(w, u, h0, xs):
    h, ys = h0, []
    for x in xs:
        h = np.tanh(w @ h + u @ x)
        ys.append(h)
    return h, np.stack(ys)


def test_cumulative_sum_matches_numpy_eager_and_jitted():
    xs = RNG.standard_normal(9).astype(np.float32)

    def cumsum(v):
        return pt.scan(lambda c, x: (c + x, c + x), pt.zeros((), dtype=pt.float32), v)

    total, ys = cumsum(pt.asarray(xs))
    assert ys.shape == (9,) and ys.dtype == pt.float32
    assert_close(ys.numpy(), np.cumsum(xs), np.float32, ops=9)
    assert_close(total.numpy(), np.cumsum(xs)[-1], np.float32, ops=9)
    j_total, j_ys = pt.jit(cumsum)(pt.asarray(xs))
    np.testing.assert_array_equal(j_ys.numpy(), ys.numpy())
    np.testing.assert_array_equal(j_total.numpy(), total.numpy())


def test_rnn_recurrence_matches_a_numpy_loop():
    w, u = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal((4, 3))
    h0, xs = RNG.standard_normal(4), RNG.standard_normal((6, 3))
    h, ys = _rnn(*(pt.asarray(a) for a in (w, u, h0, xs)))
    want_h, want_ys = _rnn_numpy(w, u, h0, xs)
    assert_close(ys.numpy(), want_ys, np.float64, ops=16)
    assert_close(h.numpy(), want_h, np.float64, ops=16)


def test_reverse_and_unroll_walk_xs_backwards_and_store_ys_at_their_row():
    a, b = RNG.random(7) * 0.9, RNG.standard_normal(7)

    def linear(c, ab):          # c_{t+1} = a_t c_t + b_t, y_t = c_t (the carry entering the step)
        return ab[0] * c + ab[1], c

    want_c, want_ys = 0.5, np.zeros(7)
    for t in reversed(range(7)):
        want_ys[t] = want_c
        want_c = a[t] * want_c + b[t]
    for unroll in (1, 3, True):
        c, ys = pt.scan(linear, 0.5, (pt.asarray(a), pt.asarray(b)), reverse=True, unroll=unroll)
        assert_close(ys.numpy(), want_ys, np.float64, ops=8)
        assert_close(c.numpy(), want_c, np.float64, ops=8)


def test_pytree_carry_xs_and_ys():
    xs = {"a": RNG.standard_normal((5, 2)), "b": np.arange(5)}

    def step(carry, x):
        total, count = carry
        total = total + x["a"] * x["b"].astype(pt.float64)
        return (total, count + 1), {"sum": total, "pair": (x["b"] * 2, count)}

    (total, count), ys = pt.scan(step, (pt.zeros(2, dtype=pt.float64), 0),
                                 {k: pt.asarray(v) for k, v in xs.items()})
    want = np.cumsum(xs["a"] * xs["b"][:, None], axis=0)
    assert_close(ys["sum"].numpy(), want, np.float64, ops=5)
    assert_close(total.numpy(), want[-1], np.float64, ops=5)
    assert int(count) == 5
    np.testing.assert_array_equal(ys["pair"][0].numpy(), xs["b"] * 2)
    np.testing.assert_array_equal(ys["pair"][1].numpy(), np.arange(5))


def test_xs_none_with_length_and_length_zero():
    c, ys = pt.scan(lambda c, _: (c * 2.0, c), pt.asarray(1.0), None, length=4)
    np.testing.assert_allclose(ys.numpy(), [1.0, 2.0, 4.0, 8.0])
    assert float(c) == 16.0
    c, ys = pt.scan(lambda c, x: (c + x.sum(), x * 2.0), pt.asarray(3.0), pt.zeros((0, 2)))
    assert float(c) == 3.0 and ys.shape == (0, 2)


def test_gradients_match_finite_differences():
    w, u = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2))
    h0, xs = RNG.standard_normal(3), RNG.standard_normal((5, 2))
    # the weights reach the step through a closure: their cotangents add up over the steps
    check_derivatives(lambda w, u, h0, xs: _rnn(w, u, h0, xs)[1], [w, u, h0, xs])
    a, b = RNG.random(6), RNG.standard_normal(6)
    check_derivatives(lambda a, b: pt.scan(lambda c, ab: (ab[0] * c + ab[1], c * c), pt.ones(()),
                                           (a, b), reverse=True, unroll=2),
                      [a, b])


def test_grad_under_jit_and_of_grad():
    x = pt.asarray(RNG.random(4) + 0.5)

    def loss(v):                # prod(v) through a carry: d/dv_i = prod / v_i
        return pt.scan(lambda c, e: (c * e, c), pt.ones((), dtype=pt.float64), v)[0]

    want = np.prod(x.numpy()) / x.numpy()
    assert_close(pt.grad(loss)(x).numpy(), want, np.float64, ops=8)
    assert_close(pt.jit(pt.grad(loss))(x).numpy(), want, np.float64, ops=8)
    hess_diag = pt.grad(lambda v: pt.grad(loss)(v)[0])(x).numpy()    # d^2 prod / dv_0 dv_j
    want2 = np.prod(x.numpy()) / (x.numpy()[0] * x.numpy())
    want2[0] = 0.0
    assert_close(hess_diag, want2, np.float64, ops=8)


def test_vmap_matches_a_python_loop_over_the_batch():
    w, u = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2))
    h0s, xss = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 5, 2))
    got_h, got_ys = pt.vmap(lambda h0, xs: _rnn(pt.asarray(w), pt.asarray(u), h0, xs))(
        pt.asarray(h0s), pt.asarray(xss))
    for k in range(4):
        want_h, want_ys = _rnn_numpy(w, u, h0s[k], xss[k])
        assert_close(got_ys.numpy()[k], want_ys, np.float64, ops=16)
        assert_close(got_h.numpy()[k], want_h, np.float64, ops=16)
    per_example = pt.vmap(pt.grad(lambda h0, xs: _rnn(pt.asarray(w), pt.asarray(u), h0, xs)[0].sum()))(
        pt.asarray(h0s), pt.asarray(xss))
    for k in range(4):
        one = pt.grad(lambda h0: _rnn(pt.asarray(w), pt.asarray(u), h0, pt.asarray(xss[k]))[0].sum())
        assert_close(per_example.numpy()[k], one(pt.asarray(h0s[k])).numpy(), np.float64, ops=16)


def test_errors_name_the_argument():
    with pytest.raises(pt.ShapeError, match=r"xs\[1\] has leading dimension 4 but xs\[0\] has 5"):
        pt.scan(lambda c, x: (c, x), 0.0, (pt.zeros(5), pt.zeros(4)))
    with pytest.raises(pt.ShapeError, match=r"length=3 but xs has leading dimension 5"):
        pt.scan(lambda c, x: (c, x), 0.0, pt.zeros(5), length=3)
    with pytest.raises(pt.PootError, match="pass length="):
        pt.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(pt.ShapeError, match=r"xs\['a'\] is a 0-d array"):
        pt.scan(lambda c, x: (c, x), 0.0, {"a": pt.zeros(())})
    with pytest.raises(pt.PootError, match=r"must return a pair \(new carry, y\)"):
        pt.scan(lambda c, x: c + x, 0.0, pt.zeros(3))
    with pytest.raises(pt.ShapeError, match=r"carry\[1\] is .* but must be"):
        pt.scan(lambda c, x: ((c[0], pt.zeros(2)), x), (0.0, pt.zeros(3)), pt.zeros(3))
    with pytest.raises(pt.PootError, match="unroll must be a positive int"):
        pt.scan(lambda c, x: (c, x), 0.0, pt.zeros(3), unroll=0)
