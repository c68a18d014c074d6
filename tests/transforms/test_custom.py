"""custom_vjp, custom_jvp, checkpoint and stop_gradient: user rules replace the function's own
derivative, in both modes, eagerly, under @pt.jit and nested."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def f64(*values):
    return pt.asarray(np.asarray(values, dtype=np.float64))


def _sin_with_counter():
    calls = {"fwd": 0, "bwd": 0}

    @pt.custom_vjp
    def my_sin(x):
        return pt.sin(x)

    def fwd(x):
        calls["fwd"] += 1
        return pt.sin(x), pt.cos(x)

    def bwd(cos_x, ct):
        calls["bwd"] += 1
        return (ct * cos_x * 10.0,)   # ten times the true derivative: visibly the rule's

    my_sin.defvjp(fwd, bwd)
    return my_sin, calls


def test_custom_vjp_rule_replaces_the_derivative():
    my_sin, calls = _sin_with_counter()
    x = f64(0.1, 0.7)
    np.testing.assert_allclose(my_sin(x).numpy(), np.sin(x.numpy()))
    assert calls == {"fwd": 0, "bwd": 0}        # outside a transformation: the plain function
    g = pt.grad(lambda v: my_sin(v).sum())(x)
    np.testing.assert_allclose(g.numpy(), 10 * np.cos(x.numpy()), rtol=1e-12)
    assert calls["fwd"] == 1 and calls["bwd"] == 1
    jg = pt.jit(pt.grad(lambda v: (my_sin(v) * v).sum()))
    xn = x.numpy()
    np.testing.assert_allclose(jg(x).numpy(), 10 * np.cos(xn) * xn + np.sin(xn), rtol=1e-12)
    np.testing.assert_allclose(pt.grad(pt.jit(lambda v: my_sin(v).sum()))(x).numpy(), g.numpy())


def test_custom_vjp_several_arguments_pytrees_and_none_cotangents():
    @pt.custom_vjp
    def scaled(p, k):
        return p["a"] * p["b"] * k

    scaled.defvjp(lambda p, k: (scaled.fun(p, k), (p, k)),
                  lambda res, ct: ({"a": ct * res[0]["b"] * res[1], "b": None}, None))
    p = {"a": f64(2.0), "b": f64(3.0)}
    g = pt.grad(lambda q, k: scaled(q, k).sum())(p, f64(5.0))
    assert float(g["a"][0]) == 15.0 and float(g["b"][0]) == 0.0


def test_custom_vjp_refuses_forward_mode():
    my_sin, _ = _sin_with_counter()
    with pytest.raises(pt.PootError, match="custom_jvp"):
        pt.jvp(my_sin, (f64(0.5),), (f64(1.0),))


def test_custom_vjp_without_rule_is_an_error():
    f = pt.custom_vjp(lambda x: x)
    with pytest.raises(pt.PootError, match="defvjp"):
        f(f64(1.0))


def test_custom_jvp_in_both_modes():
    @pt.custom_jvp
    def softplus(x):
        return pt.log1p(pt.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * 3.0 / (1.0 + pt.exp(-x))   # three times the true slope

    x = f64(-1.0, 0.5)
    sig = 1 / (1 + np.exp(-x.numpy()))
    _, t = pt.jvp(softplus, (x,), (f64(1.0, 2.0),))
    np.testing.assert_allclose(t.numpy(), 3 * sig * [1.0, 2.0], rtol=1e-12)
    g = pt.grad(lambda v: softplus(v).sum())(x)             # the rule, transposed
    np.testing.assert_allclose(g.numpy(), 3 * sig, rtol=1e-12)
    np.testing.assert_allclose(pt.jit(pt.grad(lambda v: softplus(v).sum()))(x).numpy(), 3 * sig, rtol=1e-12)


def test_stop_gradient():
    x = f64(3.0)
    assert pt.grad(lambda v: (v * pt.stop_gradient(v)).sum())(x).item() == 3.0
    _, t = pt.jvp(lambda v: v * pt.stop_gradient(v * v), (x,), (f64(1.0),))
    assert float(t[0]) == 9.0
    assert pt.stop_gradient(x) is x                          # outside a transformation: itself
    ints = pt.asarray(np.array([1, 2]))
    tree = pt.grad(lambda v: (v * pt.stop_gradient({"k": ints})["k"].astype(pt.float64)).sum())(f64(1.0, 1.0))
    np.testing.assert_allclose(tree.numpy(), [1.0, 2.0])


def test_stop_gradient_inside_a_nested_grad():
    # inner: d/dy [y * sg(y)] = sg(y); outer differentiates sg(y) -> 0 contribution
    g = pt.grad(lambda x: pt.grad(lambda y: (y * pt.stop_gradient(y)).sum())(x).sum())(f64(2.0))
    assert float(g[0]) == 0.0


def test_checkpoint_gives_the_same_derivatives():
    def block(x, w):
        return pt.tanh(x @ w) * 2.0

    rng = np.random.default_rng(0)
    x, w = pt.asarray(rng.standard_normal((3, 4))), pt.asarray(rng.standard_normal((4, 4)))
    plain = pt.grad(lambda a, b: block(block(a, b), b).sum(), argnums=(0, 1))(x, w)
    remat = pt.checkpoint(block)
    ck = pt.grad(lambda a, b: remat(remat(a, b), b).sum(), argnums=(0, 1))(x, w)
    jck = pt.jit(pt.grad(lambda a, b: remat(remat(a, b), b).sum(), argnums=(0, 1)))(x, w)
    for p, c, j in zip(plain, ck, jck):
        np.testing.assert_allclose(c.numpy(), p.numpy(), rtol=1e-12)
        np.testing.assert_allclose(j.numpy(), p.numpy(), rtol=1e-12)
    _, t_plain = pt.jvp(block, (x, w), (x, w))
    _, t_ck = pt.jvp(remat, (x, w), (x, w))
    np.testing.assert_allclose(t_ck.numpy(), t_plain.numpy(), rtol=1e-12)
    g2 = pt.grad(lambda a: pt.grad(lambda b: remat(b, w).sum())(a).sum())(x)
    g2_plain = pt.grad(lambda a: pt.grad(lambda b: block(b, w).sum())(a).sum())(x)
    np.testing.assert_allclose(g2.numpy(), g2_plain.numpy(), rtol=1e-10)


def test_custom_rules_inside_a_differentiated_loop_body_are_refused_and_vmap_carries_them():
    x = f64(1.0, 2.0)
    double = pt.custom_vjp(lambda c: c * 2.0)
    double.defvjp(lambda c: (c * 2.0, None), lambda res, g: (g * 2.0,))
    with pytest.raises(pt.NotBuiltError, match="is used inside a pt.cond / pt.fori_loop"):
        pt.grad(lambda v: pt.fori_loop(0, 2, lambda i, c: double(c), v).sum())(x)
    # stop_gradient is carried through a body (a same-type bitcast): c2 = c1 * sg(c1), c1 = v * sg(v)
    g = pt.grad(lambda v: pt.fori_loop(0, 2, lambda i, c: c * pt.stop_gradient(c), v).sum())(x)
    np.testing.assert_allclose(g.numpy(), x.numpy() ** 3)
    g = pt.grad(lambda v: pt.vmap(lambda r: r * pt.stop_gradient(r))(v).sum())(x)
    np.testing.assert_allclose(g.numpy(), x.numpy())
    # outside the differentiated region the same calls work
    np.testing.assert_allclose(pt.vmap(pt.grad(lambda r: r * pt.stop_gradient(r)))(x).numpy(), x.numpy())


def test_custom_vjp_cotangent_of_the_wrong_shape_is_named():
    f = pt.custom_vjp(lambda x: x * 2.0)
    f.defvjp(lambda x: (x * 2.0, None), lambda res, ct: (ct.sum(),))
    with pytest.raises(pt.PootError, match="cotangent 0 has shape"):
        pt.grad(lambda v: f(v).sum())(f64(1.0, 2.0))


def test_checkpoint_of_a_function_closing_over_differentiated_values():
    rng = np.random.default_rng(5)
    x, w = pt.asarray(rng.standard_normal((2, 3))), pt.asarray(rng.standard_normal((3, 3)))

    def loss(x, w, remat):
        h = x
        for _ in range(2):
            layer = lambda a: pt.tanh(a @ w) * w.sum()  # noqa: E731  (reads w: a closure)
            h = pt.checkpoint(layer)(h) if remat else layer(h)
        return (h * h).sum()

    plain = pt.grad(loss, argnums=(0, 1))(x, w, False)
    ck = pt.grad(loss, argnums=(0, 1))(x, w, True)
    for p, c in zip(plain, ck):
        np.testing.assert_allclose(c.numpy(), p.numpy(), rtol=1e-12)
    same = pt.grad(lambda v: pt.checkpoint(lambda a: a * v)(v).sum())(f64(3.0))   # arg and closure
    assert float(same[0]) == 6.0
    _, t = pt.jvp(lambda v: pt.checkpoint(lambda a: a * v)(v), (f64(3.0),), (f64(1.0),))
    assert float(t[0]) == 6.0


def test_custom_rules_refuse_closures_over_differentiated_values():
    def loss(v):
        f = pt.custom_jvp(lambda a: a * v)
        f.defjvp(lambda p, t: (f(*p), t[0] * v))
        return f(v).sum()

    with pytest.raises(pt.PootError, match="closure"):
        pt.grad(loss)(f64(2.0))


def test_checkpoint_takes_jaxs_policy_prevent_cse_and_static_argnums():
    """Options that change what the backward pass keeps, not its values, run as JAX code passes them."""
    f = pt.checkpoint(lambda a, n: pt.sum(pt.sin(a)) * n, static_argnums=(1,), policy=None, prevent_cse=True)
    x = np.array([0.0, 1.0, 2.5])
    np.testing.assert_allclose(pt.grad(f)(pt.asarray(x), 2).numpy(), 2 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(pt.jit(pt.grad(f), static_argnums=1)(pt.asarray(x), 3).numpy(), 3 * np.cos(x),
                               rtol=1e-12)
    g = pt.checkpoint(lambda a: pt.sum(pt.sin(a)), policy=lambda *args, **kwargs: True)
    np.testing.assert_allclose(pt.grad(g)(pt.asarray(x)).numpy(), np.cos(x), rtol=1e-12)
    with pytest.raises(pt.ArgumentError, match=r"options \['concrete'\] are not supported"):
        pt.checkpoint(lambda a: a, concrete=True)
