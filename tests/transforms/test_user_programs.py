"""Short user programs that once gave wrong numbers or leaked internal failures, kept as regression
tests: derivatives through complex views, weakly typed loop results, jitted methods reading the
object's arrays, and donating an array that pending work still reads."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close


def f64(*values):
    return pt.asarray(np.asarray(values, dtype=np.float64))


# --- derivatives through complex values: refused, never a silent zero ---------------------------
@pytest.mark.parametrize("fn", [
    lambda x: pt.real(pt.fft.fft(x)).sum(),
    lambda x: pt.abs(pt.fft.rfft(x)).sum(),
    lambda x: pt.imag(x * (1 + 2j)).sum(),
    lambda x: pt.real(x.astype(pt.complex128)).sum(),
], ids=["real-fft", "abs-rfft", "imag-of-product", "real-of-cast"])
def test_grad_through_complex_views_is_refused_not_zero(fn):
    x = f64(1.0, 2.0, 0.5)
    with pytest.raises(pt.NotBuiltError, match="complex|Fourier"):
        pt.grad(fn)(x)
    with pytest.raises(pt.NotBuiltError, match="complex|Fourier"):
        pt.jvp(fn, (x,), (pt.ones(3, dtype=pt.float64),))


def test_complex_values_off_the_derivative_path_still_differentiate():
    spectrum = pt.abs(pt.fft.fft(f64(1.0, -1.0, 2.0)))        # a constant for the derivative
    g = pt.grad(lambda w: (w * spectrum).sum())(f64(0.0, 0.0, 0.0))
    assert_close(g.numpy(), np.abs(np.fft.fft([1.0, -1.0, 2.0])), pt.float64, ops=8)


# --- weakly typed results of loop bodies ---------------------------------------------------------
def test_fori_loop_body_returning_a_weak_value_of_the_loop_index():
    out = pt.fori_loop(0, 3, lambda i, v: i * 0.5, pt.zeros((), dtype=pt.float32))
    assert out.dtype == pt.float32
    assert float(out) == 1.0


def test_while_loop_with_an_integer_condition_counts_down():
    out = pt.while_loop(lambda c: c, lambda c: c - 1, pt.asarray(np.int64(3)))
    assert int(out) == 0
    jitted = pt.jit(lambda n: pt.while_loop(lambda c: c[0], lambda c: (c[0] - 1, c[1] + 2.0), (n, 0.0)))
    n, total = jitted(pt.asarray(np.int64(4)))
    assert int(n) == 0 and float(total) == 8.0


# --- jitted methods ------------------------------------------------------------------------------
class _Linear:
    def __init__(self, w):
        self.w = w

    @pt.jit
    def apply(self, x):
        return x @ self.w

    @pt.jit
    def double(self, x):
        return x * 2


def test_jitted_method_reading_the_objects_array_is_refused_naming_it():
    model = _Linear(pt.ones((2, 2)))
    with pytest.raises(pt.PootError, match=r"self\.w.*static_argnums") as info:
        model.apply(pt.ones(2))
    assert "test_user_programs.py" in str(info.value)
    np.testing.assert_array_equal(model.double(pt.ones(2)).numpy(), [2.0, 2.0])   # reads no array


def test_dataclass_or_static_argument_give_the_array_a_clear_meaning():
    @dataclasses.dataclass
    class Params:
        w: object

    step = pt.jit(lambda p, x: x @ p.w)
    p = Params(pt.ones((2, 2)))
    np.testing.assert_array_equal(step(p, pt.ones(2)).numpy(), [2.0, 2.0])
    p.w = pt.ones((2, 2)) * 5                       # a pytree leaf: the next call sees the new value
    np.testing.assert_array_equal(step(p, pt.ones(2)).numpy(), [10.0, 10.0])
    baked = pt.jit(lambda m, x: x @ m.w, static_argnums=0)
    np.testing.assert_array_equal(baked(_Linear(pt.ones((2, 2))), pt.ones(2)).numpy(), [2.0, 2.0])


# --- donation ------------------------------------------------------------------------------------
def test_donating_an_array_that_pending_work_still_reads():
    step = pt.jit(lambda w, g: w - 0.5 * g, donate_argnums=0)
    w = pt.asarray(np.arange(4.0))
    pt.realize(w)
    head = w[:2] * 10                               # pending: reads w's values
    new_w = step(w, pt.ones(4, dtype=pt.float64))
    np.testing.assert_array_equal(head.numpy(), [0.0, 10.0])
    np.testing.assert_array_equal(new_w.numpy(), np.arange(4.0) - 0.5)
    with pytest.raises(pt.PootError, match="donated"):
        w.numpy()


def test_donation_in_a_training_loop_reuses_the_buffer():
    step = pt.jit(lambda w, g: pt.cumsum(w - 0.1 * g), donate_argnums=0)
    w, g = pt.asarray(np.ones(256)), pt.ones(256, dtype=pt.float64)
    pt.realize(w)
    want = np.ones(256)
    for _ in range(3):
        address = _address(w)
        w = step(w, g)
        assert address is None or _address(w) == address     # the result took the donated buffer
        want = np.cumsum(want - 0.1)
    assert_close(w.numpy(), want, pt.float64, ops=256 * 3)


def _address(x):
    """The host address of a realized CPU array's buffer (None on other devices)."""
    handle = x._node.buf.handle
    return handle.__array_interface__["data"][0] if x.device == "cpu" else None


# --- argument handling of grad and the custom rules ----------------------------------------------
def test_grad_refuses_an_argument_listed_twice_in_argnums():
    with pytest.raises(pt.PootError, match="names an argument twice"):
        pt.grad(lambda a, b: (a * b).sum(), argnums=(0, 0))(f64(1.0, 2.0), f64(3.0, 4.0))


def test_custom_vjp_with_keyword_arguments_and_nondiff_argnums():
    def apply(fn, x, scale):
        return fn(x) * scale

    rule = pt.custom_vjp(apply, nondiff_argnums=(0,))
    rule.defvjp(lambda fn, x, scale: (fn(x) * scale, (x, scale)),
                lambda fn, res, ct: (ct * res[1] * 100.0, (ct * fn(res[0])).sum()))
    x = f64(1.0, 2.0, 3.0)
    gx, gs = pt.grad(lambda x, s: rule(pt.sin, x, scale=s).sum(), argnums=(0, 1))(x, f64(2.0)[0])
    assert_close(gx.numpy(), np.full(3, 200.0), pt.float64)
    assert_close(gs.numpy(), np.sin([1.0, 2.0, 3.0]).sum(), pt.float64, ops=4)
    jitted = pt.jit(pt.grad(lambda x: rule(pt.sin, x, 2.0).sum()))
    assert_close(jitted(x).numpy(), np.full(3, 200.0), pt.float64)
    assert_close(rule(pt.sin, x=x, scale=2.0).numpy(), 2 * np.sin([1.0, 2.0, 3.0]), pt.float64)


def test_custom_jvp_with_nondiff_argnums_and_a_misshapen_tangent():
    power = pt.custom_jvp(lambda x, n: x ** n, nondiff_argnums=(1,))
    power.defjvp(lambda n, primals, tangents: (primals[0] ** n, 10 * n * primals[0] ** (n - 1) * tangents[0]))
    x = f64(1.0, 2.0, 3.0)
    _, t = pt.jvp(lambda x: power(x, 3), (x,), (pt.ones(3, dtype=pt.float64),))
    assert_close(t.numpy(), 30 * np.array([1.0, 4.0, 9.0]), pt.float64, ops=4)
    assert_close(pt.grad(lambda x: power(x, n=2).sum())(x).numpy(), 20 * x.numpy(), pt.float64, ops=4)

    bad = pt.custom_jvp(pt.sin)
    bad.defjvp(lambda p, t: (pt.sin(p[0]), t[0][:2]))
    with pytest.raises(pt.ShapeError, match=r"custom_jvp function 'sin'.*\(2,\).*\(3,\)"):
        pt.jvp(bad, (x,), (x,))


def test_fori_loop_refuses_a_float_bound_instead_of_truncating_it():
    with pytest.raises(pt.PootError, match="upper must be an integer"):
        pt.fori_loop(0, 2.5, lambda i, c: c + 1, pt.asarray(0.0))
    assert float(pt.fori_loop(np.int64(0), np.int32(3), lambda i, c: c + 1, pt.asarray(0.0))) == 3.0


# --- derivatives of the SVD and QR factorizations -------------------------------------------------
def test_nuclear_and_spectral_norm_gradients_are_the_singular_vectors():
    a = np.random.default_rng(3).standard_normal((5, 3))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    nuclear = pt.grad(lambda m: pt.linalg.matrix_norm(m, ord="nuc"))(pt.asarray(a))
    assert_close(nuclear.numpy(), u @ vh, pt.float64, ops=64)
    spectral = pt.jit(pt.grad(lambda m: pt.linalg.svd(m, full_matrices=False)[1][0]))(pt.asarray(a))
    assert_close(spectral.numpy(), np.outer(u[:, 0], vh[0]), pt.float64, ops=64)
    with pytest.raises(pt.NotBuiltError, match="full_matrices=False"):
        pt.grad(lambda m: pt.linalg.svd(m)[0].sum())(pt.asarray(a))


def test_qr_gradient_of_log_abs_det_is_the_inverse_transpose():
    a = np.random.default_rng(4).standard_normal((4, 4)) + 4 * np.eye(4)
    g = pt.grad(lambda m: pt.log(pt.abs(pt.diagonal(pt.linalg.qr(m)[1]))).sum())(pt.asarray(a))
    assert_close(g.numpy(), np.linalg.inv(a).T, pt.float64, ops=64)


# --- least squares ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(10, 3), (3, 5)])
def test_lstsq_matches_numpy_eagerly_and_jitted(shape):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(shape), rng.standard_normal((shape[0], 2))
    want = np.linalg.lstsq(a, b, rcond=None)
    for got in (pt.linalg.lstsq(pt.asarray(a), pt.asarray(b)),
                pt.jit(pt.linalg.lstsq)(pt.asarray(a), pt.asarray(b))):
        assert_close(got[0].numpy(), want[0], pt.float64, ops=64)
        assert_close(got[1].numpy(), want[1], pt.float64, ops=64)
        assert int(got[2]) == want[2]
        assert_close(got[3].numpy(), want[3], pt.float64, ops=64)


def test_lstsq_of_a_rank_deficient_matrix_and_its_gradient():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal(6)
    a[:, 2] = a[:, 0] + a[:, 1]
    x, residuals, rank, _ = pt.linalg.lstsq(pt.asarray(a), pt.asarray(b))
    assert_close(x.numpy(), np.linalg.pinv(a) @ b, pt.float64, ops=64)
    assert int(rank) == 2 and residuals.shape == (0,)           # NumPy's empty residuals
    full = rng.standard_normal((7, 3))
    g = pt.grad(lambda v: (pt.linalg.lstsq(pt.asarray(full), v)[0] ** 2).sum())(pt.asarray(b[:1].repeat(7)))
    p = np.linalg.pinv(full)
    assert_close(g.numpy(), 2 * p.T @ (p @ b[:1].repeat(7)), pt.float64, ops=64)


# --- custom rules inside a vmap that is differentiated -------------------------------------------
def _scaled_product():
    f = pt.custom_vjp(lambda x, y: x * y)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * res[1] * 10.0, ct * res[0]))
    return f


def test_grad_of_vmap_uses_the_custom_vjp_rule_of_each_example():
    f = _scaled_product()
    rng = np.random.default_rng(8)
    xs, ys = pt.asarray(rng.standard_normal(3)), pt.asarray(rng.standard_normal(3))
    g = pt.grad(lambda x: pt.vmap(f)(x, ys).sum())(xs)
    assert_close(g.numpy(), 10 * ys.numpy(), pt.float64)
    gy = pt.jit(pt.grad(lambda y: pt.vmap(f, in_axes=(0, None))(xs, y).sum()))(f64(3.0)[0])
    assert_close(gy.numpy(), xs.numpy().sum(), pt.float64, ops=4)          # summed over the batch
    nested = pt.grad(lambda x: pt.vmap(pt.vmap(f, in_axes=(0, None)), in_axes=(None, 0))(x, ys).sum())(xs)
    assert_close(nested.numpy(), np.full(3, 10 * ys.numpy().sum()), pt.float64, ops=4)


def test_per_example_loss_with_a_clipped_gradient_reaches_the_closed_over_weights():
    clip = pt.custom_vjp(lambda x: x)
    clip.defvjp(lambda x: (x, None), lambda res, ct: (pt.clip(ct, -0.1, 0.1),))
    rng = np.random.default_rng(9)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    loss = lambda w: pt.vmap(lambda row: (clip(row @ w) ** 2).sum())(pt.asarray(x)).mean()  # noqa: E731
    want = sum(np.outer(row, np.clip(2 * (row @ w) / 4, -0.1, 0.1)) for row in x)
    assert_close(pt.grad(loss)(pt.asarray(w)).numpy(), want, pt.float64, ops=16)
    assert_close(pt.jit(pt.grad(loss))(pt.asarray(w)).numpy(), want, pt.float64, ops=16)
    assert_close(float(loss(pt.asarray(w))), ((x @ w) ** 2).sum(1).mean(), pt.float64, ops=16)


def test_forward_mode_through_vmap_of_a_custom_jvp():
    sp = pt.custom_jvp(lambda x: pt.log1p(pt.exp(x)))
    sp.defjvp(lambda p, t: (pt.log1p(pt.exp(p[0])), t[0] * 2.0))
    xs = f64(-1.0, 0.5, 2.0)
    _, t = pt.jvp(lambda a: pt.vmap(lambda v: sp(v * a))(xs), (f64(1.5)[0],), (f64(1.0)[0],))
    assert_close(t.numpy(), 2.0 * xs.numpy(), pt.float64)
    assert_close(pt.grad(lambda x: pt.vmap(sp)(x).sum())(xs).numpy(), np.full(3, 2.0), pt.float64)
