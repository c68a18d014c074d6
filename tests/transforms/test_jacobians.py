"""pt.jacrev, pt.jacfwd, pt.hessian and pt.linearize (JAX's semantics): values against central
finite differences in float64 and against closed forms, the nested structure of pytree Jacobians,
argnums and has_aux, composition with @pt.jit, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

RNG = np.random.default_rng(7)


def f64(a):
    return pt.asarray(np.asarray(a, dtype=np.float64))


def numeric_jacobian(fn, x: np.ndarray, step=1e-6) -> np.ndarray:
    """Central differences of NumPy-in, NumPy-out `fn` at `x`: shape fn(x).shape + x.shape."""
    x = np.asarray(x, dtype=np.float64)
    y0 = np.asarray(fn(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = step
        jac[(Ellipsis,) + idx] = (np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * step)
    return jac


def through_poot(fn):
    """`fn` over poot arrays as a NumPy function (for the finite differences)."""
    return lambda x: fn(f64(x)).numpy()


def softmax(x):
    e = pt.exp(x - x.max())
    return e / e.sum()


A = RNG.standard_normal((3, 4))
FUNCTIONS = {
    "matvec": (lambda x: f64(A) @ x, (4,)),
    "sin": (lambda x: pt.sin(x), (5,)),
    "softmax": (softmax, (6,)),
    "matrix_in_out": (lambda x: pt.tanh(x @ x.T), (2, 3)),
    "scalar_out": (lambda x: (x ** 3).sum(), (4,)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("jac", [pt.jacrev, pt.jacfwd], ids=["jacrev", "jacfwd"])
def test_jacobian_matches_finite_differences(name, jac):
    fn, shape = FUNCTIONS[name]
    x = RNG.standard_normal(shape)
    got = jac(fn)(f64(x))
    want = numeric_jacobian(through_poot(fn), x)
    assert got.shape == want.shape and got.dtype == pt.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


def test_closed_forms():
    x = RNG.standard_normal(5)
    np.testing.assert_allclose(pt.jacrev(lambda v: f64(A) @ v)(f64(x[:4])).numpy(), A, rtol=1e-13)
    np.testing.assert_allclose(pt.jacfwd(lambda v: f64(A) @ v)(f64(x[:4])).numpy(), A, rtol=1e-13)
    np.testing.assert_allclose(pt.jacrev(pt.sin)(f64(x)).numpy(), np.diag(np.cos(x)), rtol=1e-13, atol=0)
    s = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    for jac in (pt.jacrev, pt.jacfwd):
        np.testing.assert_allclose(jac(softmax)(f64(x)).numpy(), np.diag(s) - np.outer(s, s),
                                   rtol=1e-12, atol=1e-15)


def test_jacrev_equals_jacfwd_on_a_small_network():
    w = RNG.standard_normal((3, 4))

    def net(x):
        return pt.tanh(f64(w) @ pt.sin(x)) * x[:3]

    x = f64(RNG.standard_normal(4))
    r, f = pt.jacrev(net)(x).numpy(), pt.jacfwd(net)(x).numpy()
    assert r.shape == (3, 4) and np.abs(r).max() > 0.1
    np.testing.assert_allclose(r, f, rtol=1e-12, atol=1e-14)


def test_two_arguments_with_a_tuple_of_argnums():
    def f(x, y):
        return x * pt.sin(y) + x ** 2

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    for jac in (pt.jacrev, pt.jacfwd):
        jx, jy = jac(f, argnums=(0, 1))(f64(x), f64(y))
        np.testing.assert_allclose(jx.numpy(), np.diag(np.sin(y) + 2 * x), rtol=1e-13)
        np.testing.assert_allclose(jy.numpy(), np.diag(x * np.cos(y)), rtol=1e-13)
        only_y = jac(f, argnums=1)(f64(x), f64(y))
        assert isinstance(only_y, pt.Array)
        np.testing.assert_allclose(only_y.numpy(), jy.numpy(), rtol=1e-15)
        neg = jac(f, argnums=-1)(f64(x), f64(y))
        np.testing.assert_allclose(neg.numpy(), jy.numpy(), rtol=1e-15)


def test_argument_shapes_of_different_sizes():
    """Blocks of arguments with different sizes, results of different sizes (offsets matter)."""
    def f(a, b):
        return {"p": (a[:, None] * b[None, :]).sum(0), "q": a.sum() * b[0]}

    a, b = RNG.standard_normal(2), RNG.standard_normal(3)
    for jac in (pt.jacrev, pt.jacfwd):
        j = jac(f, argnums=(0, 1))(f64(a), f64(b))
        assert set(j) == {"p", "q"} and isinstance(j["p"], tuple)
        assert j["p"][0].shape == (3, 2) and j["p"][1].shape == (3, 3)
        assert j["q"][0].shape == (2,) and j["q"][1].shape == (3,)
        np.testing.assert_allclose(j["p"][0].numpy(), np.tile(b[:, None], (1, 2)), rtol=1e-13)
        np.testing.assert_allclose(j["p"][1].numpy(), np.eye(3) * a.sum(), rtol=1e-13)
        np.testing.assert_allclose(j["q"][0].numpy(), np.full(2, b[0]), rtol=1e-13)
        np.testing.assert_allclose(j["q"][1].numpy(), [a.sum(), 0, 0], rtol=1e-13, atol=0)


def test_dict_input_and_output_nest_as_in_jax():
    """The result's structure outside, the argument's inside; block shape = result + argument."""
    def f(params):
        w, b = params["w"], params["b"]
        h = w @ b
        return {"h": h, "n": (h * h).sum()}

    w, b = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    params = {"w": f64(w), "b": f64(b)}
    for jac in (pt.jacrev, pt.jacfwd):
        j = jac(f)(params)
        assert set(j) == {"h", "n"} and set(j["h"]) == {"w", "b"} and set(j["n"]) == {"w", "b"}
        assert j["h"]["w"].shape == (2, 2, 3) and j["h"]["b"].shape == (2, 3)
        assert j["n"]["w"].shape == (2, 3) and j["n"]["b"].shape == (3,)
        np.testing.assert_allclose(j["h"]["b"].numpy(), w, rtol=1e-13)
        want_hw = np.zeros((2, 2, 3))
        want_hw[0, 0], want_hw[1, 1] = b, b
        np.testing.assert_allclose(j["h"]["w"].numpy(), want_hw, rtol=1e-13, atol=0)
        h = w @ b
        np.testing.assert_allclose(j["n"]["b"].numpy(), 2 * w.T @ h, rtol=1e-12)
        np.testing.assert_allclose(j["n"]["w"].numpy(), 2 * np.outer(h, b), rtol=1e-12)


def test_list_and_tuple_results():
    x = RNG.standard_normal(3)
    for jac in (pt.jacrev, pt.jacfwd):
        j = jac(lambda v: [pt.sin(v), (v.sum(), pt.exp(v[0]))])(f64(x))
        assert isinstance(j, list) and isinstance(j[1], tuple)
        np.testing.assert_allclose(j[0].numpy(), np.diag(np.cos(x)), rtol=1e-13, atol=0)
        np.testing.assert_allclose(j[1][0].numpy(), np.ones(3), rtol=0)
        np.testing.assert_allclose(j[1][1].numpy(), [np.exp(x[0]), 0, 0], rtol=1e-13, atol=0)


@pytest.mark.parametrize("jac", [pt.jacrev, pt.jacfwd], ids=["jacrev", "jacfwd"])
def test_has_aux(jac):
    def f(x):
        y = pt.sin(x) * 2.0
        return y, {"mean": y.mean(), "tag": x[0] + 1}

    x = RNG.standard_normal(4)
    j, aux = jac(f, has_aux=True)(f64(x))
    np.testing.assert_allclose(j.numpy(), np.diag(2 * np.cos(x)), rtol=1e-13, atol=0)
    assert set(aux) == {"mean", "tag"}
    np.testing.assert_allclose(float(aux["mean"]), (2 * np.sin(x)).mean(), rtol=1e-13)
    np.testing.assert_allclose(float(aux["tag"]), x[0] + 1, rtol=1e-13)


def test_hessian_of_a_quadratic_form_is_a_plus_a_transpose():
    a = RNG.standard_normal((4, 4))
    x = f64(RNG.standard_normal(4))
    h = pt.hessian(lambda v: v @ (f64(a) @ v))(x)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h.numpy(), a + a.T, rtol=1e-12, atol=1e-13)


def test_hessian_of_a_nonlinear_function_and_of_two_arguments():
    x = RNG.standard_normal(3)
    h = pt.hessian(lambda v: pt.sin(v).sum() * v[0])(f64(x)).numpy()
    want = np.diag(-np.sin(x) * x[0])
    want[0, :] += np.cos(x)
    want[:, 0] += np.cos(x)
    np.testing.assert_allclose(h, want, rtol=1e-12, atol=1e-13)
    # nested tuples for a tuple of argnums: H[i][j] = d2f / dxi dxj
    hh = pt.hessian(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(f64(x), f64(x[::-1].copy()))
    np.testing.assert_allclose(hh[0][0].numpy(), np.diag(2 * x[::-1]), rtol=1e-13, atol=0)
    np.testing.assert_allclose(hh[0][1].numpy(), np.diag(2 * x), rtol=1e-13, atol=0)
    np.testing.assert_allclose(hh[1][0].numpy(), np.diag(2 * x), rtol=1e-13, atol=0)
    np.testing.assert_allclose(hh[1][1].numpy(), np.zeros((3, 3)), atol=0)


def test_inside_jit_and_jit_of_jacobian():
    @pt.jit
    def both(x):
        return pt.jacrev(softmax)(x), pt.jacfwd(softmax)(x), pt.hessian(lambda v: (v ** 4).sum())(x)

    x = RNG.standard_normal(5)
    s = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    r, f, h = both(f64(x))
    np.testing.assert_allclose(r.numpy(), np.diag(s) - np.outer(s, s), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h.numpy(), np.diag(12 * x ** 2), rtol=1e-12, atol=1e-14)
    x2 = RNG.standard_normal(5)      # the replayed program gives the new point's Jacobian
    r2 = pt.jit(pt.jacrev(pt.sin))(f64(x2))
    np.testing.assert_allclose(r2.numpy(), np.diag(np.cos(x2)), rtol=1e-13, atol=0)


def test_float32_and_python_scalars():
    x = np.linspace(0.1, 1.0, 3).astype(np.float32)
    j = pt.jacrev(pt.exp)(pt.asarray(x))
    assert j.dtype == pt.float32
    np.testing.assert_allclose(j.numpy(), np.diag(np.exp(x)), rtol=1e-6)
    d = pt.jacfwd(lambda t: t * t * t)(2.0)
    assert d.shape == ()
    assert float(d) == pytest.approx(12.0)


def test_linearize():
    x = RNG.standard_normal(3)
    out, f_jvp = pt.linearize(lambda v: pt.sin(v) * v, f64(x))
    np.testing.assert_allclose(out.numpy(), np.sin(x) * x, rtol=1e-14)
    for _ in range(2):
        t = RNG.standard_normal(3)
        np.testing.assert_allclose(f_jvp(f64(t)).numpy(), (np.cos(x) * x + np.sin(x)) * t, rtol=1e-13)
    out, f_jvp, aux = pt.linearize(lambda a, b: (a * b, a.sum()), f64(x), f64(2 * x), has_aux=True)
    np.testing.assert_allclose(f_jvp(f64(np.ones(3)), f64(np.zeros(3))).numpy(), 2 * x, rtol=1e-14)
    assert float(aux) == pytest.approx(x.sum())
    with pytest.raises(pt.ArgumentError, match="one tangent per primal"):
        f_jvp(f64(np.ones(3)))


# --- errors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("jac", [pt.jacrev, pt.jacfwd, pt.hessian], ids=["jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("argnums,match", [
    (2, r"argnums 2 does not fit a call with 2 positional"),
    ((0, 0), r"names an argument twice"),
    ((), r"argnums is empty"),
    ("0", r"argnums must be an int or a tuple of ints; got str"),
    ((0, 1.0), r"holds float"),
])
def test_bad_argnums(jac, argnums, match):
    x = f64([1.0, 2.0])
    with pytest.raises(pt.ArgumentError, match=match):
        jac(lambda a, b: (a * b).sum(), argnums=argnums)(x, x)


@pytest.mark.parametrize("jac", [pt.jacrev, pt.jacfwd], ids=["jacrev", "jacfwd"])
def test_integer_and_non_array_inputs_are_refused(jac):
    with pytest.raises(pt.DTypeError, match=r"jac(rev|fwd) requires floating-point arguments.*argument 0 is int"):
        jac(lambda v: v * 2.0)(pt.arange(3))
    with pytest.raises(pt.DTypeError, match=r"argument 0\['i'\] is int"):
        jac(lambda d: d["f"] * 2.0)({"f": f64([1.0]), "i": pt.arange(2)})
    with pytest.raises(pt.ArgumentError, match=r"argument 0\[1\] has type str"):
        jac(lambda t: t[0] * 2.0)((f64([1.0]), "label"))
    with pytest.raises(pt.DTypeError, match=r"argument 0 is complex"):
        jac(lambda v: v * 2)(pt.asarray(np.ones(2, dtype=np.complex128)))


def test_jacrev_refuses_integer_results_and_non_array_results():
    with pytest.raises(pt.DTypeError, match=r"jacrev requires floating-point results.*int"):
        pt.jacrev(lambda v: (v > 0).astype(pt.int32))(f64([1.0, -1.0]))
    with pytest.raises(pt.PootError):
        pt.jacrev(lambda v: "text")(f64([1.0]))


def test_bad_functions_and_unbuilt_options():
    with pytest.raises(pt.PootError, match="jacrev needs a function"):
        pt.jacrev(3)
    with pytest.raises(pt.NotBuiltError, match="holomorphic"):
        pt.jacfwd(pt.sin, holomorphic=True)
    with pytest.raises(pt.NotBuiltError, match="allow_int"):
        pt.jacrev(pt.sin, allow_int=True)
    with pytest.raises(pt.PootError, match="linearize needs a function"):
        pt.linearize(None, 1.0)


def test_errors_are_poot_errors_not_bare_python_ones():
    for call in (lambda: pt.jacrev(pt.sin, argnums=5)(f64([1.0])),
                 lambda: pt.jacfwd(pt.sin)(pt.arange(2)),
                 lambda: pt.jacfwd(pt.sin)(object())):
        with pytest.raises(pt.PootError):
            call()


def test_nested_jacobians_and_vmap_of_a_jacobian():
    x = RNG.standard_normal(3)
    cube = lambda v: (v ** 3).sum()    # noqa: E731
    for outer in (pt.jacrev, pt.jacfwd):
        for inner in (pt.jacrev, pt.jacfwd):
            np.testing.assert_allclose(outer(inner(cube))(f64(x)).numpy(), np.diag(6 * x), rtol=1e-13, atol=0)
    xs = RNG.standard_normal((2, 3))
    per_row = pt.vmap(pt.jacrev(pt.sin))(f64(xs)).numpy()
    assert per_row.shape == (2, 3, 3)
    for r in range(2):
        np.testing.assert_allclose(per_row[r], np.diag(np.cos(xs[r])), rtol=1e-13, atol=0)
