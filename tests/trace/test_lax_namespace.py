"""`pt.lax`, `pt.dynamic_slice` and `pt.top_k`: jax.lax's names and semantics (expected values are
JAX's, written out here; the tests do not import jax)."""
import numpy as np
import pytest

import poot as pt

lax = pt.lax
A = np.arange(20.0).reshape(4, 5)


@pytest.mark.parametrize("starts, want", [
    ((1, 2), A[1:3, 2:5]), ((3, 4), A[2:4, 2:5]), ((-1, -2), A[2:4, 2:5]), ((-9, 0), A[0:2, 0:3]),
])
def test_dynamic_slice_clamps_and_wraps(starts, want):
    assert np.array_equal(pt.dynamic_slice(pt.asarray(A), starts, (2, 3)).numpy(), want)
    traced = tuple(pt.asarray(s) for s in starts)
    assert np.array_equal(pt.dynamic_slice(pt.asarray(A), traced, (2, 3)).numpy(), want)


def test_dynamic_slice_jit_vmap_grad():
    f = pt.jit(lambda x, i: pt.dynamic_slice(x, (i, 1), (2, 3)))
    for i, rows in [(0, [0, 1]), (3, [2, 3]), (-1, [2, 3]), (7, [2, 3])]:
        assert np.array_equal(f(pt.asarray(A), i).numpy(), A[rows, 1:4])
    assert f.trace_count == 1
    got = pt.vmap(lambda r, i: pt.dynamic_slice(r, (i,), (2,)))(pt.asarray(A), pt.asarray(np.array([0, 4, -1, 2])))
    assert np.array_equal(got.numpy(), [[0, 1], [8, 9], [13, 14], [17, 18]])
    g = pt.grad(lambda x: (pt.dynamic_slice(x, (pt.asarray(1), 1), (2, 3)) ** 2).sum())(pt.asarray(A))
    want = np.zeros_like(A)
    want[1:3, 1:4] = 2 * A[1:3, 1:4]
    assert np.allclose(g.numpy(), want)


def test_in_dim_forms_and_update_slice():
    x = pt.asarray(A)
    assert lax.dynamic_index_in_dim(x, -1, 1, False).tolist() == A[:, 4].tolist()
    assert lax.dynamic_index_in_dim(x, 2).shape == (1, 5)
    assert np.array_equal(lax.dynamic_slice_in_dim(x, 3, 2, 0).numpy(), A[2:4])
    want = A.copy()
    want[2:4, 3:5] = -1
    got = lax.dynamic_update_slice(x, pt.asarray(-np.ones((2, 2))), (-2, -1))
    assert np.array_equal(got.numpy(), want)
    want = A.copy()
    want[2] = 0
    assert np.array_equal(lax.dynamic_update_index_in_dim(x, pt.zeros(5, dtype=pt.float64), 2, 0).numpy(), want)


def test_top_k_order_ties_nan_and_axis():
    y = pt.asarray(np.array([[1.0, 3.0, 3.0, 2.0, np.nan], [5, 5, 5, 1, 0]]))
    v, i = pt.top_k(y, 3)
    assert i.dtype == pt.int32 and i.tolist() == [[4, 1, 2], [0, 1, 2]]
    assert np.isnan(v.numpy()[0, 0]) and v.numpy()[0, 1:].tolist() == [3, 3] and v.numpy()[1].tolist() == [5] * 3
    v, i = pt.top_k(y.T, 1, axis=0)
    assert i.tolist() == [[4, 0]]
    assert pt.top_k(y, 0)[0].shape == (2, 0)
    with pytest.raises(pt.PootError, match="k=6"):
        pt.top_k(y, 6)


def test_top_k_jit_vmap_grad():
    z = pt.asarray(np.array([[1.0, 3.0, 3.0, 2.0], [5, 4, 5, 1]]))
    v, i = pt.jit(lambda a: pt.top_k(a, 2))(z)
    assert v.tolist() == [[3, 3], [5, 5]] and i.tolist() == [[1, 2], [0, 2]]
    v, i = pt.vmap(lambda a: pt.top_k(a, 2))(z)
    assert i.tolist() == [[1, 2], [0, 2]]
    g = pt.grad(lambda a: (pt.top_k(a, 2)[0] ** 2).sum())(z)
    assert g.tolist() == [[0, 6, 6, 0], [10, 0, 10, 0]]


def test_switch_refuses_a_float_index_as_jax_does():
    """A float index was truncated (1.7 ran branch 1), hiding the bug JAX reports as a TypeError."""
    branches = [lambda: 0.0, lambda: 1.0, lambda: 2.0]
    for index in (1.7, pt.asarray(1.7)):
        with pytest.raises(pt.DTypeError, match="branch index must be an integer, got float64"):
            lax.switch(index, branches)
    with pytest.raises(pt.DTypeError, match="branch index must be an integer"):
        pt.vmap(lambda i: lax.switch(i, branches))(pt.asarray(np.array([0.2, 1.9])))
    assert pt.vmap(lambda i: lax.switch(i, branches))(pt.asarray(np.array([0, 1, 7]))).tolist() == [0.0, 1.0, 2.0]


def test_switch_clamps_the_index():
    branches = [lambda a: a + 1, lambda a: a * 10, lambda a: -a]
    f = pt.jit(lambda i, a: lax.switch(i, branches, a))
    for i, want in [(-3, 3.0), (0, 3.0), (1, 20.0), (2, -2.0), (5, -2.0)]:
        assert float(lax.switch(i, branches, pt.asarray(2.0))) == want
        assert float(f(pt.asarray(i), pt.asarray(2.0))) == want
    got = pt.vmap(lambda i, a: lax.switch(i, branches, a))(pt.asarray(np.array([-1, 0, 1, 2, 9])), pt.arange(5.0))
    assert got.tolist() == [1, 2, 20, -3, -4]


def test_loops_map_select_and_stop_gradient():
    assert float(lax.fori_loop(0, 3, lambda i, c: c * 2 + i, pt.asarray(1.0), unroll=2)) == 12.0
    assert lax.map(lambda r: r.sum(), pt.asarray(A)).tolist() == A.sum(1).tolist()
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, pt.arange(3.0))
    assert float(c) == 3.0 and ys.tolist() == [0, 0, 1]
    assert lax.while_loop(lambda v: v < 10, lambda v: v * 2, pt.asarray(1)).tolist() == 16
    assert float(lax.cond(pt.asarray(True), lambda a: a + 1, lambda a: a - 1, pt.asarray(1.0))) == 2.0
    x = pt.asarray(A)
    assert np.array_equal(lax.select(x > 3, x, -x).numpy(), np.where(A > 3, A, -A))
    assert float(pt.grad(lambda a: (lax.stop_gradient(a) * a).sum())(pt.asarray(3.0))) == 3.0


def test_elementwise_and_shape_names():
    x = pt.asarray(A)
    assert np.array_equal(lax.clamp(2.0, x, 7.0).numpy(), np.clip(A, 2, 7))
    a, b = pt.asarray(np.array([-7, 7, -8, 6])), pt.asarray(np.array([2, -2, 2, 4]))
    assert lax.div(a, b).tolist() == [-3, -3, -4, 1]                            # toward zero
    assert lax.rem(a, b).tolist() == [-1, 1, 0, 2]                              # the dividend's sign
    assert np.allclose(lax.rsqrt(x + 1).numpy(), 1 / np.sqrt(A + 1))
    assert np.allclose(lax.logistic(x).numpy(), 1 / (1 + np.exp(-A)))
    assert np.allclose(lax.integer_pow(x, 3).numpy(), A ** 3)
    assert lax.broadcast_in_dim(pt.arange(3.0), (2, 3, 4), (1,)).numpy()[1, :, 2].tolist() == [0, 1, 2]
    assert np.array_equal(lax.reshape(x, (5, 4), (1, 0)).numpy(), A.T.reshape(5, 4))
    assert lax.iota(pt.int32, 4).tolist() == [0, 1, 2, 3]
    assert lax.convert_element_type(x, pt.int32).dtype == pt.int32
    assert lax.bitcast_convert_type(pt.asarray(np.float32(1.0)), pt.int32).tolist() == 1065353216
    assert lax.cumsum(x, 1, reverse=True).numpy()[0].tolist() == [10, 10, 9, 7, 4]
    assert lax.reduce_max(x, (0,)).tolist() == A.max(0).tolist()
    assert lax.argmax(x, 1, pt.int32).dtype == pt.int32
    rng = np.random.default_rng(0)
    p, q = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    got = lax.dot_general(pt.asarray(p), pt.asarray(q), (((2,), (1,)), ((0,), (0,))))
    assert np.allclose(got.numpy(), p @ q)
    assert np.allclose(lax.dot_general(x, x, (((1,), (1,)), ((), ()))).numpy(), A @ A.T)


def test_missing_names_say_so():
    assert "switch" in dir(lax) and "reduce_precision" not in dir(lax)
    with pytest.raises(AttributeError, match="poot.lax"):
        lax.reduce_precision
    with pytest.raises(AttributeError, match="NumPy's semantics"):
        lax.split
