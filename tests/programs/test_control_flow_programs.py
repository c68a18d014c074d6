"""Numerical programs built on structured control flow, as JAX users write them with `pt.lax`:
integrators (RK4 with fori_loop, leapfrog with scan over a NamedTuple carry, an adaptive step with
while_loop), optimizers (Adam with grad inside the loop), root finding (a batched bisection under
pt.vmap, each element stopping on its own), recurrences (a GRU over a sequence with its gradient,
Viterbi in log space), complex-valued loops (the Mandelbrot iteration, a phase rotation), weak
Python-scalar carries in scan, and the mistakes users make (a float loop condition, a vector switch
index, mismatched structures), which must raise poot errors naming the user's line.
Expected values come from the same programs run with NumPy and Python loops, eagerly and under @pt.jit."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

lax = pt.lax


def _close(got, expected, ops=8):
    e = np.asarray(expected)
    assert isinstance(got, pt.Array), type(got)
    a = got.numpy()
    assert a.dtype == e.dtype, f"{a.dtype} != {e.dtype}"
    assert_close(a, e, pt.dtypes.as_dtype(e.dtype), ops=ops)


def _wrap(jit):
    return pt.jit if jit else (lambda f: f)


# --- integrators ---------------------------------------------------------------------------------
@pytest.mark.parametrize("jit", [False, True])
def test_rk4_harmonic_oscillator_with_fori_loop(jit):
    def rhs(xp, y):
        return xp.stack([y[1], -y[0]])

    def step(xp, y, h=0.01):
        k1 = rhs(xp, y)
        k2 = rhs(xp, y + h / 2 * k1)
        k3 = rhs(xp, y + h / 2 * k2)
        k4 = rhs(xp, y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    y0 = np.array([1.0, 0.0], np.float32)
    got = _wrap(jit)(lambda y: lax.fori_loop(0, 200, lambda i, y: step(pt, y), y))(pt.asarray(y0))
    y = y0
    for _ in range(200):
        y = step(np, y)
    _close(got, y, ops=400)


class Phase(NamedTuple):
    q: object
    p: object
    t: object


@pytest.mark.parametrize("jit", [False, True])
def test_leapfrog_scan_with_a_namedtuple_carry_and_an_int_counter(jit):
    def step(s, _):
        p_half = s.p - 0.05 * s.q
        q = s.q + 0.1 * p_half
        p = p_half - 0.05 * q
        return Phase(q, p, s.t + 1), 0.5 * (p * p).sum() + 0.5 * (q * q).sum()

    q0 = np.linspace(-1, 1, 4).astype(np.float32)
    run = _wrap(jit)(lambda q, p: lax.scan(step, Phase(q, p, 0), None, length=50))
    state, energy = run(pt.asarray(q0), pt.zeros(4, dtype=pt.float32))
    assert isinstance(state, Phase)
    s, es = Phase(q0, np.zeros(4, np.float32), 0), []
    for _ in range(50):
        s, e = step(s, None)
        es.append(e)
    _close(state.q, s.q, ops=100)
    _close(energy, np.array(es, np.float32), ops=100)
    assert state.t.dtype == pt.int64 and int(state.t) == 50


@pytest.mark.parametrize("jit", [False, True])
def test_adaptive_heun_step_with_a_dict_carry_in_while_loop(jit):
    def solve(xp, y0, T=1.0):
        def body(c):
            h = xp.minimum(c["h"], T - c["t"])
            euler = c["y"] - h * c["y"]
            heun = c["y"] + h / 2 * (-c["y"] - euler)
            err = xp.abs(heun - euler).max()
            ok = err < 1e-4
            return {"t": xp.where(ok, c["t"] + h, c["t"]), "y": xp.where(ok, heun, c["y"]),
                    "h": h * xp.clip(0.9 * xp.sqrt(1e-4 / (err + 1e-12)), 0.2, 5.0), "n": c["n"] + 1}
        c = {"t": xp.asarray(0.0), "y": y0, "h": xp.asarray(0.1), "n": 0}
        if xp is np:
            while c["t"] < T:
                c = body(c)
            return c
        return lax.while_loop(lambda c: c["t"] < T, body, c)

    y0 = np.array([1.0, 2.0])
    got = _wrap(jit)(lambda y: solve(pt, y))(pt.asarray(y0))
    want = solve(np, y0)
    assert int(got["n"]) == want["n"]
    _close(got["y"], want["y"], ops=4 * want["n"])
    _close(got["t"], want["t"], ops=4 * want["n"])


# --- optimizers and root finding -----------------------------------------------------------------
def test_adam_with_grad_inside_fori_loop_and_a_dict_state():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 3))
    b = A @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(20)

    def body(i, s):
        g = pt.grad(lambda w: pt.mean((pt.asarray(A) @ w - pt.asarray(b)) ** 2))(s["w"])
        m = 0.9 * s["m"] + 0.1 * g
        v = 0.999 * s["v"] + 0.001 * g * g
        t = i + 1
        step = 0.05 * (m / (1 - 0.9 ** t)) / (pt.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        return {"w": s["w"] - step, "m": m, "v": v}

    z = pt.zeros(3)
    got = pt.jit(lambda z: lax.fori_loop(0, 100, body, {"w": z, "m": z, "v": z}))(z)
    w, m, v = np.zeros(3), np.zeros(3), np.zeros(3)
    for t in range(1, 101):
        g = 2 * A.T @ (A @ w - b) / len(b)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w = w - 0.05 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    _close(got["w"], w, ops=2000)


def test_bisection_under_vmap_stops_each_element_on_its_own():
    def bisect(c):
        def body(s):
            lo, hi, k = s
            mid = 0.5 * (lo + hi)
            left = mid ** 3 - c > 0
            return pt.where(left, lo, mid), pt.where(left, mid, hi), k + 1
        return lax.while_loop(lambda s: (s[1] - s[0] > 1e-10) & (s[2] < 200), body,
                              (pt.asarray(0.0), pt.maximum(c, 1.0), 0))

    cs = np.array([0.5, 2.0, 8.0, 27.0, 100.0])
    lo, _, k = pt.jit(pt.vmap(bisect))(pt.asarray(cs))
    want_k = []
    for c in cs:
        a, b, n = 0.0, max(c, 1.0), 0
        while b - a > 1e-10 and n < 200:
            mid = 0.5 * (a + b)
            a, b, n = (a, mid, n + 1) if mid ** 3 - c > 0 else (mid, b, n + 1)
        want_k.append(n)
    _close(k, np.array(want_k))
    _close(lo, np.cbrt(cs), ops=1e6)


# --- recurrences ---------------------------------------------------------------------------------
def test_gru_over_a_sequence_and_its_gradient_through_scan():
    rng = np.random.default_rng(1)
    H, D, T = 4, 3, 6
    W = {k: rng.standard_normal(s) * 0.3 for k, s in
         {"Wz": (D, H), "Uz": (H, H), "Wh": (D, H), "Uh": (H, H)}.items()}
    xs = rng.standard_normal((T, D))

    def loss(xp, W, xs, scan):
        def cell(h, x):
            z = 1 / (1 + xp.exp(-(x @ W["Wz"] + h @ W["Uz"])))
            h = (1 - z) * h + z * xp.tanh(x @ W["Wh"] + h @ W["Uh"])
            return h, h.sum()
        h, ys = scan(cell, xp.zeros(H), xs)
        return (ys ** 2).sum() + h @ h

    def np_scan(f, c, xs):
        ys = []
        for x in xs:
            c, y = f(c, x)
            ys.append(y)
        return c, np.array(ys)

    Wp = {k: pt.asarray(v) for k, v in W.items()}
    _close(loss(pt, Wp, pt.asarray(xs), lax.scan), loss(np, W, xs, np_scan), ops=64)
    g = pt.jit(pt.grad(lambda xs: loss(pt, Wp, xs, lax.scan)))(pt.asarray(xs))
    eps, num = 1e-6, np.zeros_like(xs)      # central differences in float64
    for idx in np.ndindex(xs.shape):
        d = np.zeros_like(xs)
        d[idx] = eps
        num[idx] = (loss(np, W, xs + d, np_scan) - loss(np, W, xs - d, np_scan)) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-6, atol=1e-7)


def test_viterbi_in_log_space_with_a_reverse_scan_backtrack():
    rng = np.random.default_rng(2)
    K, T = 3, 10
    logA = np.log(rng.dirichlet(np.ones(K), K))
    logB = np.log(rng.dirichlet(np.ones(4), K))
    ob = rng.integers(0, 4, T)

    @pt.jit
    def viterbi(logA, logB, ob):
        def step(d, o):
            s = d[:, None] + logA
            return s.max(0) + logB[:, o], s.argmax(0)
        d, back = lax.scan(step, np.log(1 / K) + logB[:, ob[0]], ob[1:])
        first, path = lax.scan(lambda s, b: (b[s], s), d.argmax(), back, reverse=True)
        return pt.concatenate([first[None], path]), d.max()

    path, score = viterbi(pt.asarray(logA), pt.asarray(logB), pt.asarray(ob))
    d, back = np.log(1 / K) + logB[:, ob[0]], []
    for o in ob[1:]:
        s = d[:, None] + logA
        d = s.max(0) + logB[:, o]
        back.append(s.argmax(0))
    want = [int(d.argmax())]
    for b in back[::-1]:
        want.append(int(b[want[-1]]))
    _close(path, np.array(want[::-1]))
    _close(score, d.max(), ops=4 * T)


# --- complex values in loops and branches -------------------------------------------------------
@pytest.mark.parametrize("jit", [False, True])
def test_mandelbrot_iteration_with_a_complex_carry(jit):
    re, im = np.meshgrid(np.linspace(-2, 1, 7), np.linspace(-1.2, 1.2, 5))
    c = (re + 1j * im).astype(np.complex64)

    def body(i, s):
        z, count = s
        inside = pt.abs(z) <= 2
        z = pt.where(inside, z * z + cp, z)
        return z, count + (pt.abs(z) <= 2)

    cp = pt.asarray(c)
    z, count = _wrap(jit)(lambda c: lax.fori_loop(0, 20, body, (pt.zeros_like(c), pt.zeros(c.shape, dtype=pt.int32))))(cp)
    zn, cn = np.zeros_like(c), np.zeros(c.shape, np.int32)
    for _ in range(20):
        zn = np.where(np.abs(zn) <= 2, zn * zn + c, zn)
        cn = cn + (np.abs(zn) <= 2)
    _close(count, cn)
    bounded = np.abs(zn) <= 2
    np.testing.assert_allclose(z.numpy()[bounded], zn[bounded], rtol=1e-4, atol=1e-5)


def test_complex_values_in_while_cond_and_scan():
    n = lax.while_loop(lambda s: pt.abs(s[0]) < 10, lambda s: (s[0] * (1 + 1j), s[1] + 1), (pt.asarray(1 + 0j), 0))
    z, k = 1 + 0j, 0
    while abs(z) < 10:
        z, k = z * (1 + 1j), k + 1
    _close(n[0], np.complex128(z))
    assert int(n[1]) == k
    _close(lax.cond(pt.asarray(True), lambda z: z * 1j, lambda z: z, pt.asarray([1 + 2j])), np.array([-2 + 1j]))
    w = np.exp(1j * np.arange(4.0))
    _, ys = lax.scan(lambda z, w: (z * w, z), pt.asarray(1 + 0j), pt.asarray(w))
    _close(ys, np.concatenate([[1 + 0j], np.cumprod(w)[:-1]]))
    # a real carry whose body computes with complex values
    got = lax.fori_loop(0, 3, lambda i, s: s + pt.abs(pt.exp(1j * s) * 2), pt.asarray([0.5, 1.0]))
    _close(got, np.array([6.5, 7.0]))


# --- weak Python-scalar carries ------------------------------------------------------------------
def test_scan_widens_a_python_int_carry_that_meets_a_float_like_fori_loop():
    c, ys = lax.scan(lambda c, x: (c + 0.5, c), 0, pt.arange(3.0))
    _close(c, np.float64(1.5))
    _close(ys, np.array([0.0, 0.5, 1.0]))
    c, ys = lax.scan(lambda c, _: (c * 0.5 + 1, c), 1, None, length=3)
    _close(c, np.float64(lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1, 1)))
    (f, n), _ = lax.scan(lambda c, _: ((c[0] + 0.5, c[1] + 1), c), (0, 0), None, length=3)
    _close(f, np.float64(1.5))
    _close(n, np.int64(3))
    c, _ = lax.scan(lambda c, x: (c + x, c), 0.0, pt.arange(3, dtype=pt.float32))
    _close(c, np.float32(3.0))


@pytest.mark.parametrize("pred", [True, False])
def test_a_python_scalar_branch_promotes_with_an_array_branch_as_where_does(pred):
    p = pt.asarray(pred)
    i32 = np.array([2, 3], np.int32)
    for weak, other in ((1.5, i32), (7, np.array([False, True])), (2 + 1j, i32.astype(np.float32)),
                        (True, i32), (0.5, i32.astype(np.float32))):
        got = lax.cond(p, lambda x, w=weak: w, lambda x: x, pt.asarray(other[0]))
        _close(got, np.where(pred, weak, other[0]))
        got = lax.cond(p, lambda x: x, lambda x, w=weak: w, pt.asarray(other[0]))
        _close(got, np.where(pred, other[0], weak))
    _close(lax.switch(pt.asarray(0 if pred else 1), [lambda x: 0.5, lambda x: x], pt.asarray(np.int32(3))),
           np.float64(0.5 if pred else 3.0))


# --- mistakes, named at the user's line ---------------------------------------------------------
def test_a_float_while_condition_is_refused_and_an_integer_one_counts_down():
    with pytest.raises(pt.DTypeError, match=r"cond_fun must return a boolean.*f64\[\]") as e:
        lax.while_loop(lambda c: c - 3.0, lambda c: c + 0.7, pt.asarray(0.0))
    assert "test_control_flow_programs.py" in str(e.value)
    assert int(lax.while_loop(lambda c: c, lambda c: c - 1, pt.asarray(3))) == 0
    n, total = pt.vmap(lambda n: lax.while_loop(lambda c: c[0], lambda c: (c[0] - 1, c[1] + 2.0), (n, 0.0)))(
        pt.asarray([3, 0, 5]))
    _close(n, np.zeros(3, np.int64))
    _close(total, np.array([6.0, 0.0, 10.0]))


def test_switch_refuses_a_vector_index_and_names_itself_in_its_errors():
    x = pt.arange(4.0)
    with pytest.raises(pt.ShapeError, match=r"switch: the branch index must be a scalar"):
        lax.switch(pt.asarray([0, 1]), [lambda a: a + 1, lambda a: a], x)
    with pytest.raises(pt.ShapeError, match=r"^switch at .*test_control_flow_programs.py.*one returns \*, another \(\*,\)"):
        lax.switch(pt.asarray(1), [lambda a: a, lambda a: (a,)], x)
    with pytest.raises(pt.ArgumentError, match="branches must be a sequence of functions"):
        lax.switch(pt.asarray(0), lambda a: a, x)
    _close(pt.vmap(lambda i, a: lax.switch(i, [lambda a: a + 1, lambda a: -a], a))(pt.asarray([0, 1]), pt.asarray([1.0, 2.0])),
           np.array([2.0, -2.0]))


def test_structure_mismatches_show_both_structures():
    with pytest.raises(pt.ShapeError, match=r"\[\*, \*\] for the carry \(\*, \*\)"):
        lax.fori_loop(0, 3, lambda i, c: [c[0] + 1, c[1]], (0, 1.0))
    with pytest.raises(pt.ShapeError, match=r"true_fun returns \(\*, \*\), false_fun \*"):
        lax.cond(pt.asarray(True), lambda a: (a, a), lambda a: a, 1.0)
    with pytest.raises(pt.ShapeError, match=r"\(\*, \*\) for init \*"):
        lax.scan(lambda c, x: ((c, c), x), 0.0, pt.ones(3))
    with pytest.raises(pt.ShapeError, match=r"must be a scalar; it is an array of shape \(2,\)"):
        lax.cond(np.array([True, False]), lambda a: a, lambda a: a, 1.0)


def test_linear_recurrence_with_associative_scan_and_its_mistakes():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 1, 9)
    b = rng.standard_normal(9)

    def combine(left, right):           # h_t = a_t h_{t-1} + b_t, composed
        return left[0] * right[0], right[0] * left[1] + right[1]

    h, want = pt.jit(lambda a, b: lax.associative_scan(combine, (a, b))[1])(pt.asarray(a), pt.asarray(b)), []
    acc = 0.0
    for ai, bi in zip(a, b):
        acc = ai * acc + bi
        want.append(acc)
    _close(h, np.array(want), ops=20)
    with pytest.raises(pt.ShapeError, match=r"fn returns \(\*,\), but elems is \(\*, \*\)"):
        lax.associative_scan(lambda l, r: (l[0] * r[0],), (pt.asarray(a), pt.asarray(b)))
    with pytest.raises(pt.DTypeError, match="fn returns float64 for int64 operands"):
        lax.associative_scan(lambda l, r: l + r + 0.5, pt.arange(4))
    with pytest.raises(pt.ShapeError, match=r"fn returns f64\[\] for operands f64\[4\]"):
        lax.associative_scan(lambda l, r: (l * r).sum(), pt.asarray(b[:5]))
    with pytest.raises(pt.AxisError, match="axis 2 is out of bounds"):
        lax.associative_scan(pt.add, pt.asarray(b), axis=2)


def test_lax_select_n_slicing_and_round_in_loop_bodies():
    a = np.arange(24.0).reshape(2, 3, 4)
    w = np.array([[0, 1, 2, 1], [2, 2, 0, 1], [1, 0, 0, 2]])
    cases = [a[0] * k for k in (1.0, 10.0, 100.0)]
    _close(lax.select_n(pt.asarray(w), *map(pt.asarray, cases)), np.choose(w, cases))
    _close(lax.select_n(pt.asarray(w > 0), pt.asarray(cases[0]), pt.asarray(cases[1])), np.where(w > 0, cases[1], cases[0]))
    # a select_n on the loop index picks one update per trip
    got = pt.jit(lambda x: lax.fori_loop(0, 5, lambda k, v: lax.select_n(k % 2, v * 2, v + 1), x))(pt.asarray(1.0))
    v = 1.0
    for k in range(5):
        v = v * 2 if k % 2 == 0 else v + 1
    _close(got, np.float64(v))
    with pytest.raises(pt.DTypeError, match="a bool which picks between two cases"):
        lax.select_n(pt.asarray(True), pt.ones(2), pt.ones(2), pt.ones(2))
    _close(lax.slice(pt.asarray(a), (0, 1, 0), (2, 3, 4), (1, 1, 2)), a[0:2, 1:3, 0:4:2])
    _close(lax.slice_in_dim(pt.asarray(a), -3, -1, axis=-1), a[..., -3:-1])
    _close(lax.slice_in_dim(pt.asarray(a), 1, None, axis=1), a[:, 1:])
    _close(lax.index_in_dim(pt.asarray(a), -1, axis=1), a[:, -1:])
    _close(lax.index_in_dim(pt.asarray(a), 2, axis=2, keepdims=False), a[:, :, 2])
    # ties away from zero (C's round, exact at 0.49999999999999994); TO_NEAREST_EVEN is NumPy's
    x = np.array([-2.5, -1.5, -0.5, 0.49999999999999994, 0.5, 1.5, 2.5, 3.7, -0.0, np.inf, np.nan])
    _close(lax.round(pt.asarray(x)), np.array([-3, -2, -1, 0, 1, 2, 3, 4, -0.0, np.inf, np.nan]))
    _close(lax.round(pt.asarray(x.astype(np.float32)), lax.RoundingMethod.TO_NEAREST_EVEN),
           np.round(x.astype(np.float32)))
    with pytest.raises(pt.DTypeError, match="floating-point"):
        lax.round(pt.arange(3))


def test_a_promoted_carry_says_how_to_convert_it_back():
    x = pt.zeros(2, dtype=pt.float32)
    with pytest.raises(pt.ShapeError, match=r"carry is f64\[2\] but must be f32\[2\].*astype\(pt.float32\)"):
        lax.fori_loop(1, 4, lambda i, c: c + pt.sqrt(i), x)
