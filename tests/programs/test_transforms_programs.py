"""Programs a JAX user writes with the transformations: training with value_and_grad and a hand-written
Adam over a pytree of parameters, per-example gradients, Jacobians and Hessians, a vmapped Newton
solver, an RNN differentiated through scan, loops with pytree carries, cond/switch under vmap, jit's
static and donated arguments, gradients of the non-smooth and sorting functions, custom rules and
random keys in jitted loops. Each is checked against NumPy with hand-derived derivatives (or finite
differences), eagerly and under @pt.jit, with tolerances from the dtype."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import poot as pt
from tolerance import assert_close

from .harness import check_program


class Dense(NamedTuple):
    w: object
    b: object


# -- 1. MLP trained with value_and_grad and Adam written by hand over a pytree ----------------------
def _mlp_grads_numpy(params, X, Y):
    """Loss and gradients of mean((tanh(X W0 + b0) W1 + b1 - Y)^2) + 0.01 |W0|_1, by hand."""
    l0, l1 = params["layers"]
    h = np.tanh(X @ l0.w + l0.b)
    out = h @ l1.w + l1.b
    r = out - Y
    loss = (r * r).mean() + 0.01 * np.abs(l0.w).sum()
    d_out = 2 * r / r.size
    d_h = (d_out @ l1.w.T) * (1 - h * h)
    sign = np.where(l0.w >= 0, 1.0, -1.0).astype(X.dtype)     # JAX's slope of |w|, 1 at w = 0
    grads = {"layers": [Dense(X.T @ d_h + 0.01 * sign, d_h.sum(0)), Dense(h.T @ d_out, d_out.sum(0))]}
    return loss, grads


def _mlp_loss(params, X, Y):
    l0, l1 = params["layers"]
    h = pt.tanh(X @ l0.w + l0.b)
    out = h @ l1.w + l1.b
    return pt.mean((out - Y) ** 2) + 0.01 * pt.sum(pt.abs(l0.w))


def _tree_map(xp, f, *trees):
    if xp is np:        # the same structure, mapped by hand (NumPy has no pytrees)
        t = trees[0]
        if isinstance(t, dict):
            return {k: _tree_map(xp, f, *[s[k] for s in trees]) for k in t}
        if isinstance(t, Dense):
            return Dense(*[_tree_map(xp, f, *c) for c in zip(*trees)])
        if isinstance(t, list):
            return [_tree_map(xp, f, *c) for c in zip(*trees)]
        return f(*trees)
    return pt.tree_map(f, *trees)


def adam_step(xp, params, m, v, t, X, Y):
    if xp is np:
        loss, g = _mlp_grads_numpy(params, X, Y)
    else:
        loss, g = pt.value_and_grad(_mlp_loss)(params, X, Y)
    m = _tree_map(xp, lambda m, g: 0.9 * m + 0.1 * g, m, g)
    v = _tree_map(xp, lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
    params = _tree_map(xp, lambda p, m, v: p - 0.01 * (m / (1 - 0.9 ** t)) / (xp.sqrt(v / (1 - 0.999 ** t)) + 1e-8),
                       params, m, v)
    return params, m, v, loss


def adam_run(xp, step, X, Y, W0, W1):
    as_array = np.asarray if xp is np else pt.asarray
    params = {"layers": [Dense(as_array(W0), xp.zeros(8, dtype=X.dtype)),
                         Dense(as_array(W1), xp.zeros(2, dtype=X.dtype))]}
    m = _tree_map(xp, lambda p: p * 0, params)
    v = _tree_map(xp, lambda p: p * 0, params)
    losses = []
    for t in range(1, 16):
        params, m, v, loss = step(xp, params, m, v, t, X, Y)
        losses.append(loss)
    (l0, l1) = params["layers"]
    return l0.w, l0.b, l1.w, l1.b, xp.stack(losses)


def test_mlp_trained_with_value_and_grad_and_adam_over_a_pytree(device):
    r = np.random.default_rng(0)
    W0 = (r.standard_normal((4, 8)) * 0.3).astype(np.float32)
    W0[0, :3] = 0.0                                   # weights at the kink of the L1 penalty
    inputs = (r.standard_normal((16, 4)).astype(np.float32), r.standard_normal((16, 2)).astype(np.float32),
              W0, (r.standard_normal((8, 2)) * 0.3).astype(np.float32))
    # Adam divides by sqrt(v): early steps amplify float32 rounding, far below 1e-3 relative
    check_program(device, adam_run, adam_step, inputs, ops=2000)


# -- 2. per-example gradients ----------------------------------------------------------------------
def _logistic(w, x, y):
    z = x @ w
    return pt.log1p(pt.exp(-z)) + (1 - y) * z


def test_per_example_gradients_with_vmap_of_grad_and_grad_of_vmap(device):
    r = np.random.default_rng(1)
    X, Y, w = r.standard_normal((12, 3)), (r.random(12) < 0.5).astype(np.float64), r.standard_normal(3)
    p = 1 / (1 + np.exp(-(X @ w)))
    want = (p - Y)[:, None] * X                        # d/dw of each example's logistic loss
    per_example = pt.vmap(pt.grad(_logistic), in_axes=(None, 0, 0))
    for f in (per_example, pt.jit(per_example)):
        assert_close(f(pt.asarray(w), pt.asarray(X), pt.asarray(Y)).numpy(), want, pt.float64, ops=20)
    total = pt.grad(lambda w: pt.sum(pt.vmap(_logistic, in_axes=(None, 0, 0))(w, pt.asarray(X), pt.asarray(Y))))
    assert_close(total(pt.asarray(w)).numpy(), want.sum(0), pt.float64, ops=40)


# -- 3. Jacobians and Hessians ---------------------------------------------------------------------
def test_jacfwd_jacrev_hessian_against_hand_derivatives(device):
    r = np.random.default_rng(2)
    A, x = r.standard_normal((3, 3)), r.standard_normal(3)
    f = lambda u: pt.tanh(pt.asarray(A) @ u) * pt.sum(u * u)           # noqa: E731
    t = np.tanh(A @ x)
    want = (1 - t * t)[:, None] * A * (x @ x) + 2 * np.outer(t, x)
    for jac in (pt.jacfwd(f), pt.jacrev(f), pt.jit(pt.jacrev(f))):
        assert_close(jac(pt.asarray(x)).numpy(), want, pt.float64, ops=20)
    # Hessian of sum(tanh(A u)) * |u|^2 = s(u) q(u): s'' q + 2 (s' q'^T + q' s'^T) + s q''
    s, ds = t.sum(), A.T @ (1 - t * t)
    d2s = A.T @ np.diag(-2 * t * (1 - t * t)) @ A
    want_h = d2s * (x @ x) + 2 * (np.outer(ds, x) + np.outer(x, ds)) + 2 * s * np.eye(3)
    h = pt.hessian(lambda u: pt.sum(f(u)))
    for hess in (h, pt.jit(h)):
        assert_close(hess(pt.asarray(x)).numpy(), want_h, pt.float64, ops=40)


# -- 4. vmapped Newton solvers ---------------------------------------------------------------------
def _cube_root(c):
    def cond(s):
        x, i = s
        return (pt.abs(x ** 3 - c) > 1e-12) & (i < 60)

    def body(s):
        x, i = s
        return x - (x ** 3 - c) / (3 * x ** 2), i + 1

    return pt.lax.while_loop(cond, body, (c * 0 + 1.0, 0))


def _circle_line(c):
    """x0^2 + x1^2 = c and x0 = x1: Newton with the Jacobian from jacfwd, a fixed 25 steps."""
    F = lambda x: pt.stack([x[0] ** 2 + x[1] ** 2 - c, x[0] - x[1]])       # noqa: E731
    body = lambda i, x: x - pt.linalg.solve(pt.jacfwd(F)(x), F(x))        # noqa: E731
    return pt.lax.fori_loop(0, 25, body, pt.asarray(np.array([1.0, 0.5])))


def test_vmapped_newton_solvers(device):
    cs = np.array([1.0, 8.0, 27.0, 2.0, 0.5])
    for f in (pt.vmap(_cube_root), pt.jit(pt.vmap(_cube_root))):
        root, trips = f(pt.asarray(cs))
        assert_close(root.numpy(), np.cbrt(cs), pt.float64, ops=10)
        assert trips.dtype == pt.int64 and trips.numpy()[0] == 0 and (trips.numpy()[1:] > 0).all()
    want = np.repeat(np.sqrt(cs / 2)[:, None], 2, axis=1)
    for f in (pt.vmap(_circle_line), pt.jit(pt.vmap(_circle_line))):
        assert_close(f(pt.asarray(cs)).numpy(), want, pt.float64, ops=10)


# -- 5. an RNN differentiated through scan ---------------------------------------------------------
def _rnn_numpy(W, U, xs):
    """Loss sum_t |h_t|^2 of h_t = tanh(h_{t-1} W + x_t U), and its gradients by backpropagation."""
    hs = [np.zeros(W.shape[0])]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ W + x @ U))
    loss = sum((h * h).sum() for h in hs[1:])
    dW, dU, dh = np.zeros_like(W), np.zeros_like(U), np.zeros(W.shape[0])
    for t in range(len(xs), 0, -1):
        dh = dh + 2 * hs[t]
        dz = dh * (1 - hs[t] ** 2)
        dW += np.outer(hs[t - 1], dz)
        dU += np.outer(xs[t - 1], dz)
        dh = dz @ W.T
    return loss, dW, dU


def _rnn_loss(p, xs):
    def body(h, x):
        h = pt.tanh(h @ p["W"] + x @ p["U"])
        return h, pt.sum(h * h)

    _, ys = pt.lax.scan(body, pt.zeros(p["W"].shape[0], dtype=p["W"].dtype), xs)
    return pt.sum(ys)


def test_rnn_gradient_through_scan(device):
    r = np.random.default_rng(3)
    W, U, xs = r.standard_normal((4, 4)) * 0.4, r.standard_normal((3, 4)), r.standard_normal((7, 3))
    loss, dW, dU = _rnn_numpy(W, U, xs)
    vg = pt.value_and_grad(_rnn_loss)
    for f in (vg, pt.jit(vg)):
        value, g = f({"W": pt.asarray(W), "U": pt.asarray(U)}, pt.asarray(xs))
        assert_close(value.numpy(), loss, pt.float64, ops=50)
        assert_close(g["W"].numpy(), dW, pt.float64, ops=50)
        assert_close(g["U"].numpy(), dU, pt.float64, ops=50)


# -- 6. loops with pytree carries -----------------------------------------------------------------
class Carry(NamedTuple):
    x: object
    count: object
    trail: object


def _affine_loop(a):
    """x <- a x + 1 six times from x = a, counting trips and writing x before each into a trail."""
    def body(i, c):
        trail = pt.lax.dynamic_update_slice(c.trail, pt.reshape(c.x, (1,)), (i,))
        return Carry(a * c.x + 1.0, c.count + 1, trail)

    c = pt.lax.fori_loop(0, 6, body, Carry(a, 0, pt.zeros(6, dtype=pt.float64)))
    return c.x + pt.sum(c.trail), c


def test_fori_loop_with_a_namedtuple_carry_differentiates(device):
    a = 0.7
    xs, dxs = [a], [1.0]                                 # the values and their derivatives in a
    for _ in range(6):
        xs.append(a * xs[-1] + 1.0)
        dxs.append(xs[-2] + a * dxs[-1])
    vg = pt.value_and_grad(_affine_loop, has_aux=True)
    for f in (vg, pt.jit(vg)):
        (value, carry), g = f(pt.asarray(a))
        assert_close(value.numpy(), xs[6] + sum(xs[:6]), pt.float64, ops=20)
        assert_close(g.numpy(), dxs[6] + sum(dxs[:6]), pt.float64, ops=40)
        assert int(carry.count) == 6 and carry.trail.shape == (6,)


def test_while_loop_with_a_dict_carry_differentiates_forward(device):
    def grow(a):
        c = pt.lax.while_loop(lambda c: c["v"][0] < 10.0,
                              lambda c: {"v": (c["v"][0] * 1.5 + 0.1, c["v"][1] + c["v"][0]), "k": c["k"] + 1},
                              {"v": (a, a * 0.0), "k": 0})
        return c["v"][1]

    v, dv, total, dtotal, a = 1.0, 1.0, 0.0, 0.0, 1.0
    while v < 10.0:
        total, dtotal = total + v, dtotal + dv
        v, dv = v * 1.5 + 0.1, dv * 1.5
    out, tangent = pt.jvp(grow, (pt.asarray(a),), (pt.asarray(1.0),))
    assert_close(out.numpy(), total, pt.float64, ops=20)
    assert_close(tangent.numpy(), dtotal, pt.float64, ops=20)
    assert_close(pt.jit(pt.jacfwd(grow))(pt.asarray(a)).numpy(), dtotal, pt.float64, ops=20)


# -- 7. cond and switch under vmap, and their gradients --------------------------------------------
def _piecewise(x, i):
    y = pt.lax.cond(x > 0, lambda x: pt.log1p(x) * 2, lambda x: pt.exp(x) - 1, x)
    return pt.lax.switch(i, [lambda v: v ** 2, pt.sin, lambda v: -v], y)


def test_cond_and_switch_under_vmap_and_grad(device):
    xs, idx = np.array([-1.2, 0.3, 2.0, -0.1, 0.9, 1.5, -2.0]), np.array([0, 1, 2, 1, 0, 2, 7])
    y = np.where(xs > 0, 2 * np.log1p(np.abs(xs)), np.expm1(xs))
    dy = np.where(xs > 0, 2 / (1 + np.abs(xs)), np.exp(xs))
    k = np.clip(idx, 0, 2)                                # switch clamps its index, as in JAX
    want = np.choose(k, [y ** 2, np.sin(y), -y])
    dwant = np.choose(k, [2 * y, np.cos(y), -np.ones_like(y)]) * dy
    for f in (pt.vmap(_piecewise), pt.jit(pt.vmap(_piecewise))):
        assert_close(f(pt.asarray(xs), pt.asarray(idx)).numpy(), want, pt.float64, ops=10)
    for f in (pt.vmap(pt.grad(_piecewise)), pt.jit(pt.vmap(pt.grad(_piecewise)))):
        assert_close(f(pt.asarray(xs), pt.asarray(idx)).numpy(), dwant, pt.float64, ops=10)
    g = pt.grad(lambda x: pt.sum(pt.vmap(_piecewise)(x, pt.asarray(idx))))(pt.asarray(xs))
    assert_close(g.numpy(), dwant, pt.float64, ops=10)


# -- 8. jit: static arguments, donation -----------------------------------------------------------
def test_jit_static_argnums_argnames_and_donation_in_a_loop(device):
    calls = []

    def smooth(x, n, *, mode="sum"):
        calls.append((n, mode))
        for _ in range(n):
            x = pt.sin(x)
        return pt.sum(x) if mode == "sum" else pt.max(x)

    f = pt.jit(smooth, static_argnums=(1,), static_argnames=("mode",))
    xn = np.random.default_rng(4).standard_normal(5)
    x = pt.asarray(xn)
    for n in (1, 2, 1, 2):
        for mode in ("sum", "max", "sum"):
            ref = xn.copy()
            for _ in range(n):
                ref = np.sin(ref)
            assert_close(f(x, n, mode=mode).numpy(), ref.sum() if mode == "sum" else ref.max(), pt.float64, ops=5)
    assert len(calls) == 4 and f.trace_count == 4       # one trace per (n, mode), then the cache

    update = pt.jit(lambda p, g, lr: pt.tree_map(lambda a, b: a - lr * b, p, g), donate_argnums=(0,))
    p = {"w": pt.ones(4, dtype=pt.float64), "b": [pt.zeros(2, dtype=pt.float64)]}
    g = {"w": pt.ones(4, dtype=pt.float64), "b": [pt.ones(2, dtype=pt.float64)]}
    for lr in (0.1, 0.2, 0.3):                         # a Python float is traced, not baked in
        p = update(p, g, lr)
    assert update.trace_count == 1
    assert_close(p["w"].numpy(), np.full(4, 0.4), pt.float64, ops=5)
    assert_close(p["b"][0].numpy(), np.full(2, -0.6), pt.float64, ops=5)


# -- 9. gradients of non-smooth, sorting and normalizing functions ---------------------------------
def test_gradients_of_where_maximum_abs_sort_cumsum_logsumexp_softmax_norm(device):
    x = np.array([[-1.0, 0.0, 2.0, 0.5, -0.3], [0.7, -2.0, 1.1, 0.0, 3.0]])
    w = np.arange(5.0)
    cases = [
        (lambda v: pt.sum(pt.where(v > 0, v ** 2, pt.sin(v))), np.where(x > 0, 2 * x, np.cos(x))),
        (lambda v: pt.sum(pt.maximum(v, 0.5) * 2), 2 * np.where(x > 0.5, 1.0, np.where(x == 0.5, 0.5, 0.0))),
        (lambda v: pt.sum(pt.abs(v)), np.where(x >= 0, 1.0, -1.0)),          # JAX's slope: 1 at 0
        (lambda v: pt.linalg.norm(v, ord=1, axis=1).sum(), np.where(x >= 0, 1.0, -1.0)),
        (lambda v: pt.sum(pt.sort(v, axis=1) * pt.asarray(w)), np.take_along_axis(
            np.broadcast_to(w, x.shape), np.argsort(np.argsort(x, axis=1), axis=1), axis=1)),
        (lambda v: pt.sum(pt.cumsum(v, axis=1) * pt.asarray(w)), np.broadcast_to(w[::-1].cumsum()[::-1], x.shape)),
        (lambda v: pt.sum(pt.nn.logsumexp(v, axis=1)), np.exp(x) / np.exp(x).sum(1, keepdims=True)),
        (lambda v: pt.linalg.norm(v), x / np.linalg.norm(x)),
    ]
    s = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    cases.append((lambda v: pt.sum(pt.nn.softmax(v, axis=1) * pt.asarray(w)), s * (w - (s * w).sum(1, keepdims=True))))
    for i, (f, want) in enumerate(cases):
        for g in (pt.grad(f), pt.jit(pt.grad(f))):
            assert_close(g(pt.asarray(x)).numpy(), want, pt.float64, ops=20, err_msg=f"case {i}")


def test_gradient_matches_central_differences_in_float64_and_float32(device):
    def f(v):
        y = pt.nn.softmax(v.reshape(3, 4), axis=1)
        return pt.sum(pt.sort(y.ravel())[::2] * pt.cumsum(v)[::2]) + pt.linalg.norm(v)

    x = np.random.default_rng(5).standard_normal(12)
    fd = np.array([(float(f(pt.asarray(x + e))) - float(f(pt.asarray(x - e)))) / 2e-6 for e in np.eye(12) * 1e-6])
    assert_close(pt.grad(f)(pt.asarray(x)).numpy(), fd, pt.float64, ops=1e7)      # fd's own error ~1e-9
    g32 = pt.jit(pt.grad(f))(pt.asarray(x.astype(np.float32)))
    assert g32.dtype == pt.float32
    assert_close(g32.numpy(), fd.astype(np.float32), pt.float32, ops=100)


# -- 10. stop_gradient and custom rules ------------------------------------------------------------
def test_stop_gradient_custom_jvp_and_custom_vjp(device):
    x = np.array([0.0, 1.0, 60.0, -5.0])
    g = pt.grad(lambda v: pt.sum(v * pt.stop_gradient(v) ** 2 + pt.stop_gradient(pt.sin(v)) * v))(pt.asarray(x))
    assert_close(g.numpy(), x ** 2 + np.sin(x), pt.float64, ops=5)

    @pt.custom_jvp
    def softplus(v):
        return pt.log(1.0 + pt.exp(v))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * (1 - 1 / (1 + pt.exp(p[0])))))
    sig = 1 / (1 + np.exp(-x))
    for f in (pt.vmap(pt.grad(softplus)), pt.jit(pt.vmap(pt.grad(softplus)))):
        assert_close(f(pt.asarray(x)).numpy(), sig, pt.float64, ops=5)
    assert_close(pt.vmap(pt.grad(pt.grad(softplus)))(pt.asarray(x)).numpy(), sig * (1 - sig), pt.float64, ops=10)

    @pt.custom_vjp
    def clip_gradient(v):
        return v

    clip_gradient.defvjp(lambda v: (v, None), lambda _, ct: (pt.clip(ct, -0.5, 0.5),))
    g = pt.jit(pt.grad(lambda v: pt.sum(clip_gradient(v) * pt.arange(4.0, dtype=pt.float64))))(pt.asarray(x))
    assert_close(g.numpy(), np.clip(np.arange(4.0), -0.5, 0.5), pt.float64, ops=1)


# -- 11. random keys split inside jitted loops -----------------------------------------------------
def test_random_keys_split_inside_jitted_loops(device):
    @pt.jit
    def step(key, x):
        key, sub = pt.random.split(key)
        return key, x + 0.1 * pt.random.normal(sub, x.shape)

    key, x = pt.random.key(0), pt.zeros(4000)
    for _ in range(5):
        key, x = step(key, x)
    assert step.trace_count == 1
    assert abs(float(x.std()) - 0.1 * np.sqrt(5)) < 0.02    # five independent draws add up

    def walk(key):
        def body(i, c):
            k, s = c
            k, sub = pt.random.split(k)
            return k, s + pt.random.uniform(sub, (200,))
        return pt.lax.fori_loop(0, 10, body, (key, pt.zeros(200)))[1]

    eager, jitted = walk(pt.random.key(1)).numpy(), pt.jit(walk)(pt.random.key(1)).numpy()
    assert_close(jitted, eager, pt.dtypes.as_dtype(eager.dtype), ops=10)
    assert abs(eager.mean() - 5.0) < 0.2
    keys = pt.random.split(pt.random.key(2), 4)
    batched = pt.vmap(lambda k: pt.random.normal(k, (3,)))(keys).numpy()
    assert_close(batched, np.stack([pt.random.normal(keys[i], (3,)).numpy() for i in range(4)]),
                 pt.dtypes.as_dtype(batched.dtype), ops=1)
