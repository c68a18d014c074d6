"""JAX's names a program written for `jax` reaches for: key-first samplers (PRNGKey, categorical,
truncated_normal, gumbel, permutation), lax.associative_scan and sort_key_val, and the top-level
eval_shape, ShapeDtypeStruct, block_until_ready, device_put and jacobian. Samplers are checked against
their distributions' moments; everything else against NumPy."""
import math

import numpy as np
import pytest

import poot as pt


def test_prngkey_is_key():
    np.testing.assert_array_equal(pt.random.PRNGKey(7).numpy(), pt.random.key(7).numpy())


def test_categorical_draws_by_softmax_along_the_axis():
    p = np.array([0.1, 0.2, 0.7])
    draws = pt.random.categorical(pt.random.PRNGKey(0), np.log(p), shape=(40000,)).numpy()
    assert draws.shape == (40000,) and draws.dtype == np.int64
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, p, atol=0.01)
    # categories along axis 0: a draw per column; a category of probability 0 is never drawn
    logits = np.log(np.array([[0.5, 1e-40], [0.5, 1.0], [0.0, 0.0]]) + 1e-300)
    cols = pt.random.categorical(pt.random.key(3), logits, axis=0, shape=(500, 2)).numpy()
    assert cols.shape == (500, 2) and set(np.unique(cols[:, 0])) <= {0, 1} and (cols[:, 1] == 1).all()
    jitted = pt.jit(lambda k, l: pt.random.categorical(k, l))(pt.random.key(5), pt.zeros((64, 4)))
    assert jitted.shape == (64,) and len(np.unique(jitted.numpy())) > 1
    with pytest.raises(pt.ShapeError, match="batch shape"):
        pt.random.categorical(pt.random.key(0), np.zeros((2, 3)), shape=(5,))


def _phi(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype", [pt.float32, pt.float64])
def test_truncated_normal_stays_inside_and_has_the_truncated_moments(dtype):
    a, b = -1.0, 2.0
    x = pt.random.truncated_normal(pt.random.key(1), a, b, (200000,), dtype=dtype).numpy()
    assert x.dtype == dtype.np and (x > a).all() and (x < b).all()
    z = _cdf(b) - _cdf(a)
    mean = (_phi(a) - _phi(b)) / z
    var = 1 + (a * _phi(a) - b * _phi(b)) / z - mean ** 2
    assert abs(x.mean() - mean) < 0.01 and abs(x.var() - var) < 0.01
    # array bounds broadcast to the default shape; a one-sided bound
    lo = pt.asarray(np.array([-3.0, 0.0, 1.0]))
    y = pt.random.truncated_normal(pt.random.key(2), lo, np.inf, dtype=dtype).numpy()
    assert y.shape == (3,) and (y > lo.numpy()).all() and np.isfinite(y).all()


def test_key_first_gumbel_and_permutation_and_numpy_forms():
    g = pt.random.gumbel(pt.random.key(4), (100000,)).numpy()
    assert abs(g.mean() - 0.5772156649) < 0.02 and abs(g.var() - math.pi ** 2 / 6) < 0.05
    assert pt.random.gumbel(size=3).shape == (3,)                        # NumPy's global form
    perm = pt.random.permutation(pt.random.key(0), 50).numpy()
    np.testing.assert_array_equal(np.sort(perm), np.arange(50))
    assert not np.array_equal(perm, np.arange(50))
    m = np.arange(12).reshape(3, 4)
    rows = pt.random.permutation(pt.random.key(1), m, axis=1).numpy()
    np.testing.assert_array_equal(np.sort(rows, axis=1), m)
    np.testing.assert_array_equal(rows[1] - rows[0], 4)                 # every row permuted alike
    assert sorted(pt.random.permutation(5).numpy().tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(pt.ArgumentError, match="permutation"):
        pt.random.permutation(pt.random.key(0))                         # a key alone: no x


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_of_a_noncommutative_product(reverse):
    m = np.random.default_rng(0).standard_normal((9, 2, 2))
    got = pt.lax.associative_scan(lambda a, b: a @ b, pt.asarray(m), reverse=reverse).numpy()
    want = np.empty_like(m)
    order = range(8, -1, -1) if reverse else range(9)
    acc = None
    for i in order:                           # JAX: the scan of the reversed axis, fn(earlier, later)
        acc = m[i] if acc is None else acc @ m[i]
        want[i] = acc
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_associative_scan_of_a_pytree_along_an_axis_and_under_jit():
    x = np.random.default_rng(1).standard_normal((3, 11))
    total, peak = pt.lax.associative_scan(lambda a, b: (a[0] + b[0], pt.maximum(a[1], b[1])),
                                          (pt.asarray(x), pt.asarray(-x)), axis=1)
    np.testing.assert_allclose(total.numpy(), np.cumsum(x, axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(peak.numpy(), np.maximum.accumulate(-x, axis=1))
    f = pt.jit(lambda v: pt.lax.associative_scan(pt.add, v))
    np.testing.assert_allclose(f(pt.asarray(x[0])).numpy(), np.cumsum(x[0]), rtol=1e-12)


def test_sort_key_val_is_a_stable_sort_carrying_the_values():
    rng = np.random.default_rng(2)
    k, v = rng.integers(0, 4, (3, 10)), rng.standard_normal((3, 10))
    sk, sv = pt.lax.sort_key_val(pt.asarray(k), pt.asarray(v))
    order = np.argsort(k, axis=-1, kind="stable")
    np.testing.assert_array_equal(sk.numpy(), np.take_along_axis(k, order, -1))
    np.testing.assert_array_equal(sv.numpy(), np.take_along_axis(v, order, -1))


def test_eval_shape_computes_nothing_and_returns_structs():
    calls = []

    def f(a, b, n):
        calls.append(1)
        return {"prod": a @ b, "rows": a.reshape(n, -1).sum(axis=1)}

    out = pt.eval_shape(f, pt.ShapeDtypeStruct((4, 6), pt.float32), np.zeros((6, 5)), 2)
    assert out == {"prod": pt.ShapeDtypeStruct((4, 5), pt.float64), "rows": pt.ShapeDtypeStruct((2,), pt.float32)}
    assert calls == [1] and out["prod"].ndim == 2 and out["prod"].size == 20


def test_block_until_ready_device_put_and_jacobian():
    tree = {"a": pt.ones(3) * 2, "b": [pt.arange(2)]}
    assert pt.block_until_ready(tree) is tree
    np.testing.assert_array_equal(tree["a"].numpy(), 2.0)
    put = pt.device_put({"x": np.arange(3.0), "y": pt.ones(2)}, "cpu")
    assert isinstance(put["x"], pt.Array) and put["x"].device == "cpu"
    np.testing.assert_array_equal(put["x"].numpy(), np.arange(3.0))
    np.testing.assert_allclose(pt.jacobian(lambda x: x ** 2)(pt.asarray(np.arange(3.0))).numpy(),
                               np.diag(2 * np.arange(3.0)))
