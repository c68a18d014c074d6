"""Bugs a user found in the transformations, each pinned: cholesky's derivative (JAX's symmetric
reading), vmap of a guarded branch or loop body that indexes, closed-over writes under vmap, a
custom_vjp whose fwd calls the function itself, and the messages of common mistakes. Also: reverse
mode through vmap of a cond whose untaken branch has an infinite derivative, interp's slope at its
sample points, complex primals under jvp/vjp, eigh's and det's gradients (JAX's values), checks of
custom_jvp rules, custom_vjp defaults, leaked tracers, abs's slope at zero (JAX's 1), and an
AttributeError of the user's own function under a transform (left as it is)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.errors import ArgumentError, DTypeError, KernelIndexError, NotBuiltError
from poot.trace.closed_over import ClosedOverWriteError
from poot.transforms.batching_core import BatchingError

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
WEIGHTS = np.arange(9.0).reshape(3, 3)


def _sym(a):
    return (a + a.T) / 2


def _numeric_grad(f, a, step=1e-6):
    """Central differences of scalar `f` at float64 `a`, entry by entry."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = step
        g[idx] = (f(a + d) - f(a - d)) / (2 * step)
    return g


# --- 1. cholesky ---------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradient_is_symmetric_and_that_of_the_symmetrized_input(upper):
    def loss(a):
        return pt.sum(pt.linalg.cholesky(a, upper=upper) * pt.asarray(WEIGHTS))

    def reference(a):
        low = np.linalg.cholesky(_sym(a))
        return np.sum((low.T if upper else low) * WEIGHTS)

    g = pt.grad(loss)(pt.asarray(A)).numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, _numeric_grad(reference, A), rtol=1e-6, atol=1e-8)


def test_cholesky_jvp_follows_the_symmetric_part_of_the_tangent():
    t = np.random.default_rng(0).standard_normal((3, 3))          # not symmetric
    _, got = pt.jvp(pt.linalg.cholesky, (pt.asarray(A),), (pt.asarray(t),))
    step = 1e-6
    numeric = (np.linalg.cholesky(A + step * _sym(t)) - np.linalg.cholesky(A - step * _sym(t))) / (2 * step)
    np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-6, atol=1e-8)
    _, along_sym = pt.jvp(pt.linalg.cholesky, (pt.asarray(A),), (pt.asarray(_sym(t)),))
    np.testing.assert_allclose(got.numpy(), along_sym.numpy(), rtol=1e-12, atol=1e-12)


# --- 2. vmap of a guarded branch or loop body ----------------------------------------------------------
X = np.arange(5.0)


def _guarded(limit):
    x = pt.asarray(X)
    return lambda i: pt.cond(i < limit, lambda: x[i], lambda: pt.asarray(-1.0))


def test_vmap_cond_branch_not_taken_does_not_trap():
    want = [0, 1, 2, 3, 4, -1, -1, -1]
    np.testing.assert_array_equal(pt.vmap(_guarded(5))(pt.arange(8)).numpy(), want)
    np.testing.assert_array_equal(pt.jit(pt.vmap(_guarded(5)))(pt.arange(8)).numpy(), want)


def test_vmap_cond_when_no_example_takes_the_indexing_branch():
    np.testing.assert_array_equal(pt.vmap(_guarded(5))(pt.arange(5, 8)).numpy(), [-1, -1, -1])


def test_vmap_cond_taken_branch_still_traps_on_a_bad_index():
    with pytest.raises(KernelIndexError):
        pt.vmap(_guarded(7))(pt.arange(8)).numpy()


def test_vmap_cond_guarded_index_in_the_false_branch_and_nested_vmap():
    x = pt.asarray(X)
    f = lambda i: pt.cond(i >= 5, lambda: pt.asarray(-1.0), lambda: x[i])   # noqa: E731
    np.testing.assert_array_equal(pt.vmap(f)(pt.arange(8)).numpy(), [0, 1, 2, 3, 4, -1, -1, -1])
    ids = pt.asarray(np.array([[0, 1, 2, 3], [3, 4, 5, 6]]))
    np.testing.assert_array_equal(pt.vmap(pt.vmap(f))(ids).numpy(), [[0, 1, 2, 3], [3, 4, -1, -1]])


def test_vmap_cond_guarded_index_differentiates():
    def h(w, i):
        return pt.cond(i < 5, lambda w: w[i] * 2.0, lambda w: pt.sum(w), w)

    w = pt.asarray(X)
    per_example = pt.vmap(pt.grad(h), in_axes=(None, 0))(w, pt.arange(8)).numpy()
    want = np.vstack([2 * np.eye(5), np.ones((3, 5))])
    np.testing.assert_allclose(per_example, want)
    total = pt.grad(lambda w: pt.sum(pt.vmap(h, in_axes=(None, 0))(w, pt.arange(8))))(w)
    np.testing.assert_allclose(total.numpy(), want.sum(axis=0))


def test_vmap_while_done_example_does_not_trap_in_later_trips():
    x = pt.arange(6.0)

    def walk(step):     # reads x[c] while c < 5: c ends at 6 for step 2, and x has no x[6]
        return pt.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + step, c[1] + x[c[0]]), (0, 0.0))[1]

    np.testing.assert_allclose(pt.vmap(walk)(pt.asarray(np.array([2, 1]))).numpy(), [6.0, 10.0])


def test_vmap_while_running_example_still_traps():
    x = pt.arange(4.0)

    def walk(n):
        return pt.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + x[c[0]]), (0, 0.0))[1]

    with pytest.raises(KernelIndexError):
        pt.vmap(walk)(pt.asarray(np.array([2, 6]))).numpy()


# --- 3. closed-over writes under vmap ------------------------------------------------------------------
def test_vmap_write_into_closed_over_array_is_refused_and_undone():
    w = pt.zeros(3)

    def f(r):
        w[0] = r[0]
        return r * 2

    with pytest.raises(ClosedOverWriteError, match=r"pt\.vmap\(f\): .*'w'"):
        pt.vmap(f)(pt.ones((2, 3)))
    np.testing.assert_array_equal(w.numpy(), [0, 0, 0])


def test_vmap_write_into_unmapped_argument_still_works():
    w = pt.zeros(3)

    def f(r, w):
        w[0] = 5.0
        return r * 2

    pt.vmap(f, in_axes=(0, None))(pt.ones((2, 3)), w)
    np.testing.assert_array_equal(w.numpy(), [5, 0, 0])


# --- 4. custom_vjp whose fwd calls the function ------------------------------------------------------------
@pt.custom_vjp
def _sin(x):
    return pt.sin(x)


_sin.defvjp(lambda x: (_sin(x), x), lambda x, g: (g * pt.cos(x),))


def test_custom_vjp_fwd_calling_the_function():
    xn = np.array([0.1, 0.5, 1.0])
    x = pt.asarray(xn)
    np.testing.assert_allclose(pt.grad(lambda x: _sin(x).sum())(x).numpy(), np.cos(xn))
    np.testing.assert_allclose(pt.jit(pt.grad(lambda x: _sin(x).sum()))(x).numpy(), np.cos(xn))
    out, pull = pt.vjp(_sin, x)
    np.testing.assert_allclose(out.numpy(), np.sin(xn))
    np.testing.assert_allclose(pull(pt.ones(3, dtype=pt.float64))[0].numpy(), np.cos(xn))
    second = pt.grad(lambda y: pt.grad(lambda x: _sin(x).sum())(y).sum())(x)
    np.testing.assert_allclose(second.numpy(), -np.sin(xn))
    with pytest.raises(pt.PootError, match="reverse-mode rule"):     # as in JAX, not a RecursionError
        pt.jvp(_sin, (x,), (pt.ones(3, dtype=pt.float64),))


# --- 5. messages ---------------------------------------------------------------------------------
def test_grad_of_a_tree_with_a_string_leaf_names_grad_the_path_and_type():
    params = {"w": pt.ones(3, dtype=pt.float64), "name": "fc1"}
    with pytest.raises(ArgumentError, match=r"grad: argument 0\['name'\] has type str"):
        pt.grad(lambda p: pt.sum(p["w"] ** 2))(params)


def test_vmap_in_axes_tuple_of_another_length_says_so():
    with pytest.raises(BatchingError, match="tuple of 3 entries but the value there is a tuple of 2"):
        pt.vmap(lambda p: p[0] + p[1], in_axes=((0, None, 0),))((pt.ones(3), pt.ones(3)))


def test_fori_loop_bound_traced_by_jit_names_static_argnums():
    w = pt.ones(3, dtype=pt.float64)

    def step(w, n):
        return pt.grad(lambda w: pt.sum(pt.fori_loop(0, n, lambda i, h: h * w, w)))(w)

    with pytest.raises(NotBuiltError, match=r"(?s)upper bound is traced.*static_argnums"):
        pt.jit(step)(w, 3)
    np.testing.assert_allclose(pt.jit(step, static_argnums=1)(w, 3).numpy(), [4.0] * 3)   # d(w^4)/dw


def test_vjp_cotangent_of_another_float_dtype_is_refused():
    _, pull = pt.vjp(lambda x: x * 2, pt.ones(3, dtype=pt.float64))
    with pytest.raises(DTypeError, match="float32; the result there is float64"):
        pull(pt.ones(3, dtype=pt.float32))
    _, pull = pt.vjp(lambda x: pt.sum(x * 2), pt.ones(3, dtype=pt.float32))
    assert pull(1.0)[0].dtype == pt.float32          # a Python scalar takes the result's dtype


def test_jit_static_argnums_past_the_arity_is_refused():
    with pytest.raises(ArgumentError, match=r"static_argnums holds 3, .* takes 1 positional argument"):
        pt.jit(lambda x: x, static_argnums=3)(pt.ones(2))
    got = pt.jit(lambda *a: a[0] * a[1], static_argnums=1)(pt.ones(2), 3)     # *args: any index
    np.testing.assert_array_equal(got.numpy(), [3, 3])


# --- vmap of a cond whose untaken branch has an infinite derivative --------------------------------
def _entropy(p):
    return pt.cond(p > 0, lambda: -p * pt.log(p), lambda: p * 0.0)


P = np.array([0.0, 0.25, 0.5])
ENTROPY_GRAD = [0.0, 0.38629436111989063, -0.30685281944005466]     # JAX: grad(vmap(cond))


def test_grad_of_vmap_cond_ignores_the_untaken_branch_infinite_derivative():
    g = pt.grad(lambda q: pt.vmap(_entropy)(q).sum())(pt.asarray(P)).numpy()
    np.testing.assert_allclose(g, ENTROPY_GRAD, atol=1e-12)
    j = pt.jacrev(pt.vmap(_entropy))(pt.asarray(P)).numpy()
    np.testing.assert_allclose(j, np.diag(ENTROPY_GRAD), atol=1e-12)
    g = pt.jit(pt.grad(lambda q: pt.vmap(_entropy)(q).sum()))(pt.asarray(P)).numpy()
    np.testing.assert_allclose(g, ENTROPY_GRAD, atol=1e-12)
    np.testing.assert_allclose(pt.vmap(_entropy)(pt.asarray(P)).numpy(),
                               [0.0, 0.34657359027997264, 0.34657359027997264],
                               atol=1e-12)


def _grad_vmap(fun, x):
    return pt.grad(lambda v: pt.vmap(fun)(v).sum())(pt.asarray(np.array(x))).numpy()


def test_grad_of_vmap_cond_sqrt_and_log_of_negatives():
    sqrt = _grad_vmap(lambda x: pt.cond(x > 0, lambda: pt.sqrt(x), lambda: x), [-1.0, 4.0])
    np.testing.assert_allclose(sqrt, [1.0, 0.25])
    xlog = _grad_vmap(lambda x: pt.cond(x > 0, lambda: pt.log(x) * x, lambda: x), [-1.0, 2.0])
    np.testing.assert_allclose(xlog, [1.0, 1.6931471805599454])
    nobody = _grad_vmap(lambda x: pt.cond(x > 0, lambda q: pt.log(q) * q, lambda q: q, x), [-1.0, -2.0])
    np.testing.assert_allclose(nobody, [1.0, 1.0])


def test_grad_of_vmap_cond_in_a_fori_loop_body():
    def f(x):
        return pt.fori_loop(0, 2, lambda i, c: pt.cond(x > 0, lambda: c * pt.log(x), lambda: c + x), 1.0)
    np.testing.assert_allclose(_grad_vmap(f, [0.0, 2.0]), [2.0, 0.6931471805599453])    # JAX


# --- interp's derivative in x at the sample points ---------------------------------------------------
def test_interp_derivative_at_sample_points_is_the_right_segment_slope():
    xp, fp = pt.asarray([0.0, 1.0, 2.0]), pt.asarray([0.0, 2.0, 3.0])
    got = [float(pt.grad(lambda a: pt.interp(a, xp, fp))(pt.asarray(v))) for v in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)]
    assert got == [2.0, 2.0, 1.0, 1.0, 1.0, 0.0]        # JAX
    x = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, np.nan])
    np.testing.assert_array_equal(pt.interp(pt.asarray(x), xp, fp).numpy(), np.interp(x, [0, 1, 2], [0, 2, 3]))


def test_interp_values_at_repeated_and_infinite_sample_points_stay_numpys():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, np.inf, np.nan])
    xp, fp = np.array([0.0, 1.0, 1.0, 2.0, np.inf]), np.array([1.0, -0.0, 5.0, 3.0, 7.0])
    got = pt.interp(pt.asarray(x), pt.asarray(xp), pt.asarray(fp)).numpy()
    np.testing.assert_array_equal(got, np.interp(x, xp, fp))


# --- complex primals and results under jvp / vjp / linearize ------------------------------------------
Z = np.array([0.1 + 0.2j, 0.3 - 1.0j])


@pytest.mark.parametrize("call", [
    lambda z, one: pt.jvp(lambda a: a * a, (z,), (one,)),
    lambda z, one: pt.jvp(pt.abs, (z,), (one,)),
    lambda z, one: pt.vjp(lambda a: a * a, z)[1](one),
    lambda z, one: pt.linearize(lambda a: a * 2.0, z)[1](one),
])
def test_complex_primal_is_refused_not_given_a_zero_derivative(call):
    z, one = pt.asarray(Z), pt.ones(2, dtype=pt.complex128)
    with pytest.raises(NotBuiltError, match=r"primals\[0\] is complex128: complex derivatives are not built"):
        call(z, one)


def test_vjp_of_a_complex_result_is_refused_naming_it():
    x, one = pt.asarray([0.5, 1.5]), pt.ones(2, dtype=pt.complex128)
    result, pull = pt.vjp(lambda a, b: (b * 2.0, a * (1 + 1j)), x, x)
    np.testing.assert_allclose(result[1].numpy(), [0.5 + 0.5j, 1.5 + 1.5j])
    with pytest.raises(NotBuiltError, match=r"vjp: result\[1\] is complex128"):
        pull((x, one))


# --- eigh: the eigenvector gradient is symmetrized as JAX's ------------------------------------------
EIGH_A = np.array([[2.0, 0.3, 0.1], [0.3, 3.0, 0.2], [0.1, 0.2, 5.0]])


def test_eigh_eigenvector_gradient_is_jaxs_symmetric_one():
    w = pt.asarray(WEIGHTS)
    vectors = pt.grad(lambda a: (pt.abs(pt.linalg.eigh(a)[1]) * w).sum())(pt.asarray(EIGH_A)).numpy()
    np.testing.assert_allclose(vectors, [[0.6404350671799803, 1.1152268694082996, 1.6404653998862142],
                                         [1.1152268694082996, 0.00552149279712275, 2.337797463779904],
                                         [1.6404653998862142, 2.337797463779904, -0.6459565599771023]],
                               rtol=1e-9, atol=1e-12)

    def both(a):
        w_, v = pt.linalg.eigh(a)
        return (w_ * pt.arange(3.0)).sum() + (pt.abs(v) * w).sum()
    np.testing.assert_allclose(pt.grad(both)(pt.asarray(EIGH_A)).numpy(),
                               [[0.7123799132388375, 1.374657295254946, 1.6970163490544539],
                                [1.374657295254946, 0.9465657994051577, 2.4379052389353153],
                                [1.6970163490544539, 2.4379052389353153, 1.3410542873560058]], rtol=1e-9)


# --- det's gradient at a singular matrix: the cofactor matrix, as JAX -----------------------------------
@pytest.mark.parametrize("a, expected", [
    ([[1.0, 2.0], [2.0, 4.0]], [[4.0, -2.0], [-2.0, 1.0]]),
    ([[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]),
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]]),
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    ([[2.0, 1.0], [0.5, 3.0]], [[3.0, -0.5], [-1.0, 2.0]]),
])
def test_det_gradient_is_the_cofactor_matrix_singular_or_not(a, expected):
    got = pt.grad(pt.linalg.det)(pt.asarray(np.array(a))).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_det_gradient_of_a_batch_with_a_singular_matrix_and_its_hessian():
    batch = pt.asarray(np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [0.5, 3.0]]]))
    expected = [[[4.0, -2.0], [-2.0, 1.0]], [[3.0, -0.5], [-1.0, 2.0]]]
    np.testing.assert_allclose(pt.grad(lambda b: pt.linalg.det(b).sum())(batch).numpy(), expected, atol=1e-9)
    np.testing.assert_allclose(pt.vmap(pt.grad(pt.linalg.det))(batch).numpy(), expected, atol=1e-9)
    np.testing.assert_allclose(pt.grad(lambda b: pt.vmap(pt.linalg.det)(b).sum())(batch).numpy(), expected,
                               atol=1e-9)
    hess = pt.hessian(pt.linalg.det)(pt.asarray([[2.0, 1.0], [0.5, 3.0]])).numpy().reshape(4, 4)
    np.testing.assert_allclose(hess, np.fliplr(np.diag([1.0, -1.0, -1.0, 1.0])), atol=1e-12)


# --- custom_jvp rules of the wrong type; custom_vjp defaults --------------------------------------------
def _sin_with(rule):
    @pt.custom_jvp
    def f(a):
        return pt.sin(a)
    f.defjvp(rule)
    return f


@pytest.mark.parametrize("rule, error, message", [
    (lambda p, t: (pt.sin(p[0])[:1], t[0]), pt.ShapeError, r"primal output 0 is float64\[1\]; the function's"),
    (lambda p, t: (pt.sin(p[0]).astype(pt.float32), t[0]), DTypeError, r"primal output 0 is float32\[2\]"),
    (lambda p, t: (pt.sin(p[0]), t[0].astype(pt.float32)), DTypeError, r"output tangent 0 is float32"),
    (lambda p, t: (pt.sin(p[0]), t[0][:1]), pt.ShapeError, r"output tangent 0 has shape \(1,\)"),
])
def test_custom_jvp_rule_of_the_wrong_type_is_refused(rule, error, message):
    f, x = _sin_with(rule), pt.asarray([0.3, 0.5])
    with pytest.raises(error, match=message):
        pt.jvp(f, (x,), (pt.ones(2, dtype=pt.float64),))
    with pytest.raises(error, match=message):
        pt.grad(lambda a: f(a).sum())(x)


def test_custom_jvp_rule_returning_a_python_scalar_tangent_is_accepted():
    f = _sin_with(lambda p, t: (pt.sin(p[0]), pt.cos(p[0]) * t[0] + 0.0))
    np.testing.assert_allclose(pt.grad(lambda a: f(a).sum())(pt.asarray([0.3, 0.5])).numpy(),
                               np.cos([0.3, 0.5]))


def test_custom_vjp_defaults_are_filled_in_as_jax_does():
    @pt.custom_vjp
    def scaled(x, scale=2.0):
        return x * scale
    scaled.defvjp(lambda x, scale=2.0: (x * scale, scale), lambda s, g: (g * s, None))
    x = pt.asarray([1.0, 2.0])
    for call in (lambda v: scaled(v), lambda v: scaled(v, 2.0), lambda v: scaled(v, scale=2.0)):
        np.testing.assert_allclose(pt.grad(lambda v: call(v).sum())(x).numpy(), [2.0, 2.0])


def test_custom_vjp_wrong_cotangent_count_says_expected_and_got():
    @pt.custom_vjp
    def scaled(x, scale=2.0):
        return x * scale
    scaled.defvjp(lambda x, scale=2.0: (x * scale, scale), lambda s, g: (g * s,))
    with pytest.raises(pt.PootError, match="a tuple of 2 cotangents .* got a tuple of 1"):
        pt.grad(lambda v: scaled(v).sum())(pt.asarray([1.0, 2.0]))


# --- a tracer leaked out of its trace -------------------------------------------------------------------
def _leaked_from_jit():
    leak = []

    @pt.jit
    def f(a):
        leak.append(a * 2)
        return a.sum()
    f(pt.ones(3))
    return leak[0]


def _leaked_from_vmap():
    leak = []
    pt.vmap(lambda x: leak.append(x) or x)(pt.ones((2, 3)))
    return leak[0]


def _leaked_from_fori():
    leak = []
    pt.fori_loop(0, 2, lambda i, c: leak.append(c) or c, pt.ones(3))
    return leak[0]


@pytest.mark.parametrize("leaked", [_leaked_from_jit, _leaked_from_vmap, _leaked_from_fori])
def test_a_leaked_tracer_is_reported_as_leaked(leaked):
    from poot.errors import TracerError
    value = leaked()
    with pytest.raises(pt.LeakedTracerError, match=r"\.numpy\(\) uses a leaked tracer: .* traced at .*test_transform"):
        (value * 2).numpy()
    with pytest.raises(TracerError, match="leaked tracer"):
        pt.jit(lambda b: b + value)(pt.ones(3))


def test_python_control_flow_on_a_live_tracer_keeps_its_advice():
    from poot.errors import TracerError

    @pt.jit
    def f(a):
        return a if a.sum() > 0 else -a
    with pytest.raises(TracerError, match="Python control flow cannot depend on it") as info:
        f(pt.ones(2))
    assert "leaked" not in str(info.value)


@pytest.mark.parametrize("tangent, op", [
    (lambda p, t: t ** 2, "pow"), (lambda p, t: pt.exp(t), "exp"), (lambda p, t: pt.maximum(t, 0.0), "max"),
    (lambda p, t: t * t, "mul"),
])
def test_custom_jvp_rule_not_linear_in_the_tangent_is_refused_in_reverse_mode(tangent, op):
    f, x = _sin_with(lambda p, t: (pt.sin(p[0]), tangent(p[0], t[0]))), pt.asarray([0.3, 0.5])
    with pytest.raises(NotBuiltError, match=f"must be linear in the input tangents; here they go through '{op}'"):
        pt.grad(lambda a: f(a).sum())(x)


@pytest.mark.parametrize("tangent, expected", [
    (lambda p, t: pt.cos(p) * t, np.cos([0.3, 0.5])),
    (lambda p, t: t / pt.cos(p), 1 / np.cos([0.3, 0.5])),
    (lambda p, t: pt.where(p > 0.4, t, -t), [-1.0, 1.0]),
    (lambda p, t: pt.cumsum(t) + t[::-1] @ pt.ones((2, 2), dtype=pt.float64), [4.0, 3.0]),
])
def test_custom_jvp_rule_linear_in_the_tangent_still_transposes(tangent, expected):
    f, x = _sin_with(lambda p, t: (pt.sin(p[0]), tangent(p[0], t[0]))), pt.asarray([0.3, 0.5])
    np.testing.assert_allclose(pt.grad(lambda a: f(a).sum())(x).numpy(), expected)


def test_det_hessian_at_singular_matrices_is_jaxs():
    two = pt.hessian(pt.linalg.det)(pt.asarray([[1.0, 2.0], [2.0, 4.0]])).numpy().reshape(4, 4)
    np.testing.assert_allclose(two, np.fliplr(np.diag([1.0, -1.0, -1.0, 1.0])), atol=1e-12)     # JAX
    three = pt.hessian(pt.linalg.det)(pt.asarray(np.diag([1.0, 1.0, 0.0]))).numpy().reshape(9, 9)
    expected = np.zeros((9, 9))
    for i, j, v in ((0, 8, 1.0), (4, 8, 1.0), (2, 6, -1.0), (5, 7, -1.0)):   # d2 det / da_i da_j, as JAX
        expected[i, j] = expected[j, i] = v
    np.testing.assert_allclose(three, expected, atol=1e-12)


def test_det_gradient_of_a_larger_rank_deficient_matrix():
    a = np.random.default_rng(0).normal(size=(6, 6))
    a[:, -1] = a[:, 0] + a[:, 1]
    u, s, vh = np.linalg.svd(a)
    cofactors = np.prod(s[:-1]) * np.linalg.det(u) * np.linalg.det(vh) * np.outer(u[:, -1], vh[-1])
    np.testing.assert_allclose(pt.grad(pt.linalg.det)(pt.asarray(a)).numpy(), cofactors, atol=1e-12)


def test_grad_of_vmap_cond_for_an_unbatched_operand_of_the_branch():
    xs = pt.asarray([-1.0, 4.0])

    def total(w):
        return pt.vmap(lambda x: pt.cond(x > 0, lambda: pt.sqrt(w * x), lambda: w))(xs).sum()
    assert float(pt.grad(total)(pt.asarray(2.0))) == pytest.approx(1.0 + 4.0 / (2.0 * np.sqrt(8.0)))


# --- abs's slope at zero, and exceptions of the user's own function under a transform -------------
def test_abs_slope_at_zero_is_jaxs_one_in_both_modes():
    """JAX differentiates |x| as +1 where x >= 0 (-0.0 too): an L1 penalty on weights that start at
    zero moves them. sign(x) gave 0 there, so such weights never left zero."""
    x = pt.asarray(np.array([-2.0, -0.0, 0.0, 3.0]))
    want = np.array([-1.0, 1.0, 1.0, 1.0])
    assert np.array_equal(pt.grad(lambda v: pt.sum(pt.abs(v)))(x).numpy(), want)
    assert np.array_equal(pt.jvp(pt.abs, (x,), (pt.ones(4, dtype=pt.float64),))[1].numpy(), want)
    assert np.array_equal(pt.vmap(pt.grad(pt.abs))(x).numpy(), want)
    assert np.array_equal(pt.hessian(lambda v: pt.sum(pt.abs(v)))(x).numpy(), np.zeros((4, 4)))
    assert np.array_equal(pt.grad(lambda v: pt.linalg.norm(v, ord=1))(x).numpy(), want)
    w = pt.zeros(3, dtype=pt.float32)
    step = pt.jit(lambda w: w - 0.1 * pt.grad(lambda w: pt.sum((w - 1.0) ** 2) + pt.sum(pt.abs(w)))(w))
    assert np.allclose(step(w).numpy(), 0.1)        # -0.1 * (2 * (0 - 1) + 1)


@pytest.mark.parametrize("transform", [pt.vmap, pt.grad, pt.jit, pt.jacrev],
                         ids=["vmap", "grad", "jit", "jacrev"])
def test_an_attribute_error_of_the_users_function_propagates_as_it_is(transform):
    """A name poot lacks (`pt.random.categoricalx`), looked up by the function being transformed, is
    that function's AttributeError, as when it runs eagerly; it was reported as the transform's own
    'an argument it could not use' (ArgumentAttributeError, named 'call__' for vmap)."""
    def f(x):
        return pt.random.categoricalx(x)

    with pytest.raises(AttributeError) as info:
        f(pt.ones(3))
    eager = str(info.value)
    with pytest.raises(AttributeError) as info:
        transform(f)(pt.ones(3))
    assert type(info.value) is AttributeError and str(info.value) == eager
