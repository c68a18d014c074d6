"""`@pt.kernel` functions with their backward kernels: `pt.kernel_call` records a kernel in the lazy
graph, `pt.custom_vjp` pairs it with the backward kernel. Checked against the pure-poot version and
central finite differences (float64), under @pt.jit, in a training loop against a NumPy reference,
and the errors that say what to do when a kernel meets a derivative without a rule."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close
from tests.transforms.checks import check_derivatives


@pt.kernel
def softplus_forward(x: pt.In[pt.f64], y: pt.Out[pt.f64]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = pt.log1p(pt.exp(x[i]))


@pt.kernel
def softplus_backward(x: pt.In[pt.f64], g: pt.In[pt.f64], dx: pt.Out[pt.f64]):
    i = pt.thread_index()
    if i < len(dx):
        dx[i] = g[i] / (1.0 + pt.exp(-x[i]))


@pt.kernel
def scale_add_forward(a: pt.In[pt.f64], b: pt.In[pt.f64], s: pt.f64, out: pt.Out[pt.f64]):
    i = pt.thread_index()
    if i < len(out):
        out[i] = a[i] * s + b[i]


@pt.kernel
def scale_add_backward(g: pt.In[pt.f64], s: pt.f64, da: pt.Out[pt.f64], db: pt.Out[pt.f64]):
    i = pt.thread_index()
    if i < len(da):
        da[i] = g[i] * s
        db[i] = g[i]


@pt.custom_vjp
def softplus(x):
    return pt.kernel_call(softplus_forward, x, x.shape)


def _softplus_fwd(x):
    return pt.kernel_call(softplus_forward, x, x.shape), x


def _softplus_bwd(x, g):
    return (pt.kernel_call(softplus_backward, x, g, x.shape),)


softplus.defvjp(_softplus_fwd, _softplus_bwd)


@pt.custom_vjp
def scale_add(a, b):            # a * 3 + b, both arguments differentiated
    return pt.kernel_call(scale_add_forward, a, b, 3.0, a.shape)


scale_add.defvjp(lambda a, b: (pt.kernel_call(scale_add_forward, a, b, 3.0, a.shape), None),
                 lambda _, g: pt.kernel_call(scale_add_backward, g, 3.0, g.shape, g.shape))


def test_kernel_call_values_eager_jitted_and_vmapped():
    x = np.linspace(-3, 3, 11)
    want = np.log1p(np.exp(x))
    assert_close(pt.kernel_call(softplus_forward, pt.asarray(x), x.shape).numpy(), want, np.float64, ops=4)
    jitted = pt.jit(lambda v: pt.kernel_call(softplus_forward, v, v.shape) * 2.0)
    assert_close(jitted(pt.asarray(x)).numpy(), 2 * want, np.float64, ops=4)
    batch = np.arange(12.0).reshape(3, 4) / 4
    got = pt.vmap(lambda r: pt.kernel_call(softplus_forward, r, r.shape))(pt.asarray(batch))
    assert_close(got.numpy(), np.log1p(np.exp(batch)), np.float64, ops=4)
    da, db = pt.kernel_call(scale_add_backward, pt.asarray(x), 2.0, x.shape, x.shape)
    assert_close(da.numpy(), 2 * x, np.float64)
    np.testing.assert_array_equal(db.numpy(), x)


def test_gradients_match_the_pure_poot_version_and_finite_differences():
    x = pt.asarray(np.linspace(-2, 2, 9))
    got = pt.grad(lambda v: (softplus(v) * v).sum())(x)
    want = pt.grad(lambda v: (pt.log1p(pt.exp(v)) * v).sum())(x)
    assert_close(got.numpy(), want.numpy(), np.float64, ops=8)
    assert_close(pt.jit(pt.grad(lambda v: (softplus(v) * v).sum()))(x).numpy(), want.numpy(), np.float64, ops=8)
    rng = np.random.default_rng(0)
    check_derivatives(lambda a, b: softplus(scale_add(a, b)), [rng.standard_normal(5), rng.standard_normal(5)],
                      modes=("vjp",))


def test_training_loop_with_kernel_layer_matches_numpy():
    rng = np.random.default_rng(1)
    x, w_true = rng.standard_normal((32, 3)), np.array([0.5, -1.0, 2.0])
    y = np.log1p(np.exp(x @ w_true))

    @pt.jit
    def step(w, xs, ys):
        def loss(w):
            return ((softplus(xs @ w) - ys) ** 2).mean()
        value, g = pt.value_and_grad(loss)(w)
        return w - 0.5 * g, value

    w, w_np = pt.zeros(3, dtype=pt.float64), np.zeros(3)
    losses, losses_np = [], []
    xs, ys = pt.asarray(x), pt.asarray(y)
    for _ in range(25):
        w, value = step(w, xs, ys)
        losses.append(float(value))
        z = x @ w_np
        err = np.log1p(np.exp(z)) - y
        losses_np.append(float((err ** 2).mean()))
        w_np = w_np - 0.5 * x.T @ (2 * err / len(y) / (1 + np.exp(-z)))
    np.testing.assert_allclose(losses, losses_np, rtol=1e-10)
    assert losses[-1] < 0.1 * losses[0]
    assert_close(w.numpy(), w_np, np.float64, ops=100)


def test_a_kernel_without_a_rule_is_named_in_the_error():
    x = pt.asarray(np.ones(3))
    with pytest.raises(pt.NotBuiltError, match=r"kernel 'softplus_forward' .* pt\.custom_vjp"):
        pt.grad(lambda v: pt.kernel_call(softplus_forward, v, v.shape).sum())(x)
    with pytest.raises(pt.NotBuiltError, match=r"jvp: cannot differentiate kernel 'softplus_forward'"):
        pt.jvp(lambda v: pt.kernel_call(softplus_forward, v, v.shape), (x,), (x,))

    def in_place(v):
        y = pt.zeros(3, dtype=pt.float64)
        softplus_forward(pt.Context("cpu"), v, y)
        return y.sum()

    with pytest.raises(pt.NotBuiltError, match=r"kernel 'softplus_forward' is launched in place .* "
                                                r"pt\.kernel_call"):
        pt.grad(in_place)(x)


def test_kernel_call_argument_errors():
    x = pt.asarray(np.ones(3))
    with pytest.raises(pt.PootError, match=r"takes 2 arguments \(x, y\), got 1"):
        pt.kernel_call(softplus_forward, x)
    with pytest.raises(pt.DTypeError, match=r"buffer 'x' is float64, the array is float32"):
        pt.kernel_call(softplus_forward, x.astype(pt.float32), (3,))
    with pytest.raises(pt.ShapeError, match=r"'y' is an Out buffer; pass the shape"):
        pt.kernel_call(softplus_forward, x, "3")
    with pytest.raises(pt.PootError, match="needs a @pt.kernel function"):
        pt.kernel_call(lambda a: a, x)
