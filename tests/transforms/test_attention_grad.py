"""Derivatives of the fused attention primitive (`pt.nn.scaled_dot_product_attention`): the reverse
rule against a NumPy analytic gradient and central finite differences of the NumPy oracle in
float64, and `pt.grad` through the public function (float32, the fused kernel) against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.graph.attention import attention_oracle
from poot.transforms.vjp_rules import VJP_RULES
from tests.tolerance import assert_close


def _numpy_attention_grads(q, k, v, d_out, scale, causal):
    """softmax(scale q k^T + causal mask) v and its gradients, by hand (one head group)."""
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.arange(lk)[None, :] <= np.arange(lq)[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    d_v = np.swapaxes(p, -1, -2) @ d_out
    d_p = d_out @ np.swapaxes(v, -1, -2)
    d_s = p * (d_p - (d_p * p).sum(-1, keepdims=True))
    return p @ v, d_s @ k * scale, np.swapaxes(d_s, -1, -2) @ q * scale, d_v


def _rule(args, d_out, **params):
    params = {"softcap": 0.0, "left": None, "right": None, "zero_empty": True, **params}
    arrays = [pt.asarray(a) for a in args]
    out = pt.asarray(attention_oracle(args, **params))
    return [g.numpy() for g in VJP_RULES["attention"](pt.asarray(d_out), arrays, out, **params)]


@pytest.mark.parametrize("causal", [False, True])
def test_rule_matches_the_numpy_gradient_in_float64(causal):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 2, 4, 3)) for _ in range(3))
    d_out = rng.standard_normal((2, 2, 4, 3))
    got = _rule([q, k, v], d_out, scale=0.7, right=0 if causal else None)
    _, *want = _numpy_attention_grads(q, k, v, d_out, 0.7, causal)
    for g, w in zip(got, want):
        assert_close(g, w, np.float64, ops=32)


def test_rule_matches_finite_differences_with_mask_softcap_gqa_and_window():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 4, 5, 3))
    k, v = rng.standard_normal((1, 2, 6, 3)), rng.standard_normal((1, 2, 6, 2))
    mask = rng.standard_normal((1, 1, 5, 6)).astype(np.float32)
    params = dict(scale=0.6, softcap=2.5, left=2, right=1, zero_empty=True)
    d_out = rng.standard_normal((1, 4, 5, 2))
    args = [q, k, v, mask]
    got = _rule(args, d_out, **params)
    step = 1e-6
    for i in range(4):
        direction = rng.standard_normal(args[i].shape)
        plus = [a if j != i else a + step * direction for j, a in enumerate(args)]
        minus = [a if j != i else a - step * direction for j, a in enumerate(args)]
        if i == 3:          # the mask is float32: differentiate the float64 oracle on a float64 mask
            plus[3], minus[3] = (mask.astype(np.float64) + s * step * direction for s in (1, -1))
        numeric = ((attention_oracle(plus, **params) - attention_oracle(minus, **params)) / (2 * step)
                   * d_out).sum()
        analytic = (got[i].astype(np.float64) * direction).sum()
        tol = 1e-6 if i < 3 else 1e-4       # the mask's cotangent is float32
        assert abs(analytic - numeric) <= tol * max(1.0, abs(numeric)), f"operand {i}"


def test_empty_rows_get_zero_gradient():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 1, 3, 2)) for _ in range(3))
    got = _rule([q, k, v], np.ones((1, 1, 3, 2)), scale=1.0, left=-5, right=-4)   # no query sees a key
    for g in got:
        np.testing.assert_array_equal(g, 0.0)


@pytest.mark.parametrize("causal", [False, True])
def test_grad_through_scaled_dot_product_attention_float32(causal):
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 5, 4)).astype(np.float32) for _ in range(3))
    w = rng.standard_normal((2, 5, 4)).astype(np.float32)

    def loss(q, k, v):
        out = pt.nn.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.4)
        return (out * pt.asarray(w)).sum()

    got = pt.grad(loss, argnums=(0, 1, 2))(*(pt.asarray(a) for a in (q, k, v)))
    _, *want = _numpy_attention_grads(*(a.astype(np.float64) for a in (q, k, v)), w.astype(np.float64),
                                      0.4, causal)
    for g, e in zip(got, want):
        assert g.dtype == pt.float32
        np.testing.assert_allclose(g.numpy(), e, rtol=2e-4, atol=2e-5)
    jitted = pt.jit(pt.grad(loss, argnums=(0, 1, 2)))(*(pt.asarray(a) for a in (q, k, v)))
    for g, e in zip(jitted, got):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_forward_mode_through_scaled_dot_product_attention():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 3, 4, 2)).astype(np.float32) for _ in range(3))
    t = rng.standard_normal(q.shape).astype(np.float32)
    f = lambda q: pt.nn.scaled_dot_product_attention(q, pt.asarray(k), pt.asarray(v))  # noqa: E731
    _, tangent = pt.jvp(f, (pt.asarray(q),), (pt.asarray(t),))
    qd = q.astype(np.float64)
    step = 1e-6
    numeric = (attention_oracle([qd + step * t, k, v], scale=2 ** -0.5, softcap=0.0, left=None, right=None,
                                zero_empty=True)
               - attention_oracle([qd - step * t, k, v], scale=2 ** -0.5, softcap=0.0, left=None,
                                  right=None, zero_empty=True)) / (2 * step)
    np.testing.assert_allclose(tangent.numpy(), numeric, rtol=1e-3, atol=1e-4)
