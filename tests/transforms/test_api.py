"""The differentiation API: grad, value_and_grad, vjp, jvp over pytrees, with argnums and has_aux,
composed with @pt.jit and with themselves, and the errors they raise."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import poot as pt


def f64(*values):
    return pt.asarray(np.asarray(values, dtype=np.float64))


def test_grad_of_a_scalar_function(device):
    x = f64(0.5, 1.0, 2.0)
    g = pt.grad(lambda v: (pt.sin(v) * v).sum())(x)
    xn = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(xn) * xn + np.sin(xn), rtol=1e-12)


def test_grad_of_python_float_argument():
    g = pt.grad(lambda v: v * v * v)(2.0)
    assert isinstance(g, pt.Array) and g.shape == ()
    assert float(g) == pytest.approx(12.0)


def test_value_and_grad_with_argnums_tuple():
    x, y = f64(1.0, 2.0), f64(3.0, -1.0)
    value, (gx, gy) = pt.value_and_grad(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(x, y)
    assert float(value) == pytest.approx(1 * 3 + 4 * -1)
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy() * y.numpy())
    np.testing.assert_allclose(gy.numpy(), x.numpy() ** 2)


def test_negative_argnums_and_undifferentiated_integer_argument():
    labels = pt.asarray(np.array([1, 0], dtype=np.int64))
    g = pt.grad(lambda idx, w: pt.take(w, idx).sum() * 2.0, argnums=-1)(labels, f64(1.0, 2.0, 3.0))
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0, 0.0])


class Layer(NamedTuple):
    w: pt.Array
    b: pt.Array


def test_pytree_arguments_keep_their_structure():
    params = {"layers": [Layer(f64(1.0, 2.0), f64(0.5)), Layer(f64(-1.0, 1.0), f64(0.0))], "scale": f64(2.0)}

    def loss(p, x):
        h = x
        for layer in p["layers"]:
            h = pt.tanh(h * layer.w + layer.b)
        return (h * p["scale"]).sum()

    x = f64(0.3, -0.7)
    g = pt.grad(loss)(params, x)
    assert isinstance(g, dict) and isinstance(g["layers"][1], Layer)
    eps = 1e-6
    w0 = params["layers"][0].w.numpy()
    for i in range(2):
        bump = np.zeros(2)
        bump[i] = eps
        up = dict(params, layers=[Layer(pt.asarray(w0 + bump), params["layers"][0].b), params["layers"][1]])
        down = dict(params, layers=[Layer(pt.asarray(w0 - bump), params["layers"][0].b), params["layers"][1]])
        numeric = (float(loss(up, x)) - float(loss(down, x))) / (2 * eps)
        assert g["layers"][0].w.numpy()[i] == pytest.approx(numeric, rel=1e-6)


def test_has_aux_returns_the_aux_values():
    x = f64(1.0, 2.0)
    g, aux = pt.grad(lambda v: ((v * v).sum(), {"double": v * 2.0, "tag": "ok"}), has_aux=True)(x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(aux["double"].numpy(), [2.0, 4.0])
    assert aux["tag"] == "ok"
    (value, aux2), g2 = pt.value_and_grad(lambda v: ((v * v).sum(), v.sum()), has_aux=True)(x)
    assert float(value) == 5.0 and float(aux2) == 3.0
    np.testing.assert_allclose(g2.numpy(), g.numpy())


def test_grad_of_grad():
    x = f64(0.3, 1.2)
    d1 = pt.grad(lambda v: (v ** 3).sum())
    d2 = pt.grad(lambda v: d1(v).sum())
    d3 = pt.grad(lambda v: d2(v).sum())
    np.testing.assert_allclose(d2(x).numpy(), 6 * x.numpy(), rtol=1e-12)
    np.testing.assert_allclose(d3(x).numpy(), [6.0, 6.0], rtol=1e-12)
    sin2 = pt.grad(lambda v: pt.grad(lambda u: pt.sin(u).sum())(v).sum())
    np.testing.assert_allclose(sin2(x).numpy(), -np.sin(x.numpy()), rtol=1e-12)


def test_grad_closing_over_an_outer_traced_value():
    # d/dx [ d/dy (x * y^2) at y = x ] = d/dx [2 x^2] = 4x: the inner grad treats x as a constant
    g = pt.grad(lambda x: pt.grad(lambda y: (x * y * y).sum())(x).sum())(f64(1.5))
    np.testing.assert_allclose(g.numpy(), [6.0])


def test_jit_of_grad_traces_once_and_matches_eager():
    fn = lambda v, w: (pt.exp(v @ w)).sum()  # noqa: E731
    rng = np.random.default_rng(0)
    v, w = pt.asarray(rng.standard_normal((3, 4))), pt.asarray(rng.standard_normal((4, 2)))
    jg = pt.jit(pt.grad(fn, argnums=(0, 1)))
    first = jg(v, w)
    second = jg(v, w)
    eager = pt.grad(fn, argnums=(0, 1))(v, w)
    assert jg.trace_count == 1
    for a, b, c in zip(first, second, eager):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-12)
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-12)


def test_grad_of_jitted_function():
    jf = pt.jit(lambda v: (pt.cos(v) * v).sum())
    x = f64(0.1, 0.2)
    jf(x)   # compiled once without differentiation
    g = pt.grad(jf)(x)
    xn = x.numpy()
    np.testing.assert_allclose(g.numpy(), -np.sin(xn) * xn + np.cos(xn), rtol=1e-12)
    np.testing.assert_allclose(pt.jit(pt.grad(jf))(x).numpy(), g.numpy(), rtol=1e-12)


def test_vjp_of_a_pytree_result():
    x = f64(1.0, 2.0, 3.0)
    out, pull = pt.vjp(lambda v: {"sq": v * v, "sum": v.sum()}, x)
    np.testing.assert_allclose(out["sq"].numpy(), [1.0, 4.0, 9.0])
    (ct,) = pull({"sq": f64(1.0, 1.0, 1.0), "sum": f64(10.0).reshape(())})
    np.testing.assert_allclose(ct.numpy(), 2 * x.numpy() + 10.0)


def test_vjp_gives_zero_cotangents_to_integer_primals():
    n = pt.asarray(np.array([2, 3], dtype=np.int64))
    out, pull = pt.vjp(lambda v, k: v * k.astype(pt.float64), f64(1.0, 1.0), n)
    ct_v, ct_n = pull(f64(1.0, 1.0))
    np.testing.assert_allclose(ct_v.numpy(), [2.0, 3.0])
    assert ct_n.dtype == pt.int64 and not ct_n.numpy().any()


def test_jvp_forward_mode_and_aux():
    x, t = f64(0.5, 1.5), f64(1.0, -2.0)
    (y, ty) = pt.jvp(lambda v: pt.exp(v) * v, (x,), (t,))
    xn, tn = x.numpy(), t.numpy()
    np.testing.assert_allclose(y.numpy(), np.exp(xn) * xn)
    np.testing.assert_allclose(ty.numpy(), (np.exp(xn) * xn + np.exp(xn)) * tn, rtol=1e-12)
    y2, ty2, aux = pt.jvp(lambda v: (v * 3.0, v.sum()), (x,), (t,), has_aux=True)
    np.testing.assert_allclose(ty2.numpy(), 3 * tn)
    assert float(aux) == 2.0


def test_forward_over_reverse_hessian_vector_product():
    x, t = f64(0.2, 0.4), f64(1.0, 0.5)
    grad_f = pt.grad(lambda v: (v ** 4).sum())
    _, hvp = pt.jvp(grad_f, (x,), (t,))
    np.testing.assert_allclose(hvp.numpy(), 12 * x.numpy() ** 2 * t.numpy(), rtol=1e-12)


def test_float32_gradients_stay_float32():
    x = pt.asarray(np.array([1.0, 2.0], dtype=np.float32))
    g = pt.grad(lambda v: (v * 0.5).sum() + pt.log(v).sum())(x)
    assert g.dtype == pt.float32
    np.testing.assert_allclose(g.numpy(), 0.5 + 1 / x.numpy(), rtol=1e-6)


def test_integer_arguments_are_refused_by_grad():
    k = pt.asarray(np.array([1, 2], dtype=np.int32))
    with pytest.raises(pt.DTypeError, match="argument 0 is int32"):
        pt.grad(lambda v: v.sum().astype(pt.float32))(k)
    with pytest.raises(pt.DTypeError, match=r"argument 1\['b'\] is int64"):
        pt.grad(lambda a, p: a.sum(), argnums=1)(f64(1.0), {"a": f64(1.0), "b": 3})


def test_non_scalar_results_are_refused_by_grad():
    with pytest.raises(pt.ShapeError, match="must return a floating-point scalar"):
        pt.grad(lambda v: v * 2.0)(f64(1.0, 2.0))
    with pytest.raises(pt.ShapeError, match="one scalar array"):
        pt.grad(lambda v: (v.sum(), v.sum()))(f64(1.0, 2.0))


def test_bad_argnums_and_structures_are_refused():
    with pytest.raises(pt.PootError, match="argnums 3"):
        pt.grad(lambda v: v.sum(), argnums=3)(f64(1.0))
    out, pull = pt.vjp(lambda v: (v, v), f64(1.0))
    with pytest.raises(pt.ShapeError, match="structure"):
        pull(f64(1.0))
    with pytest.raises(pt.ShapeError, match="tangent of primals"):
        pt.jvp(lambda v: v, (f64(1.0, 2.0),), (f64(1.0),))


def test_python_control_flow_on_a_traced_value_is_refused():
    with pytest.raises(pt.TracerError):
        pt.grad(lambda v: v.sum() if float(v.sum()) > 0 else -v.sum())(f64(1.0))


def test_a_primitive_without_rules_is_named_in_the_error():
    a = pt.asarray(np.eye(3) + 0.1)
    with pytest.raises(pt.NotBuiltError, match="cannot differentiate 'fft'"):
        pt.grad(lambda m: pt.fft.irfft(m).sum())(a)
    # its value still computes where nothing is differentiated through it
    g = pt.grad(lambda m, s: (m * pt.fft.irfft(s).sum()).sum())(a, a)
    np.testing.assert_allclose(g.numpy(), np.full((3, 3), np.fft.irfft(a.numpy()).sum()), atol=1e-12)


def test_pullback_after_the_results_were_realized():
    x = f64(0.5, 1.0)
    out, pull = pt.vjp(lambda v: pt.exp(v) * pt.sin(v), x)
    np.asarray(out)                 # realizes the forward values (they become stored leaves)
    (ct,) = pull(f64(1.0, 1.0))
    xn = x.numpy()
    np.testing.assert_allclose(ct.numpy(), np.exp(xn) * (np.sin(xn) + np.cos(xn)), rtol=1e-12)
    (ct2,) = pull(f64(2.0, 2.0))    # a pullback can be called again
    np.testing.assert_allclose(ct2.numpy(), 2 * ct.numpy(), rtol=1e-12)


def test_grad_and_value_and_grad_take_jaxs_holomorphic_and_allow_int():
    """Code written for JAX passes holomorphic=False / allow_int=False; true is refused as jacrev does."""
    x = pt.asarray(np.array([1.0, -2.0]))
    assert np.allclose(pt.grad(lambda v: pt.sum(v * v), holomorphic=False, allow_int=False)(x).numpy(), [2.0, -4.0])
    value, g = pt.value_and_grad(lambda v: pt.sum(v * v), allow_int=False)(x)
    assert float(value) == 5.0 and np.allclose(g.numpy(), [2.0, -4.0])
    for transform in (pt.grad, pt.value_and_grad):
        with pytest.raises(pt.NotBuiltError, match="holomorphic=True"):
            transform(lambda v: v, holomorphic=True)
        with pytest.raises(pt.NotBuiltError, match="allow_int=True"):
            transform(lambda v: v, allow_int=True)
