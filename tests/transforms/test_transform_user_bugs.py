"""Bugs a user found in the transformations, each pinned: cholesky's derivative (JAX's symmetric
reading), vmap of a guarded branch or loop body that indexes, closed-over writes under vmap, a
custom_vjp whose fwd calls the function itself, and the messages of common mistakes."""
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
