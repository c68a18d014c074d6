"""Python ints that do not fit an integer array (NumPy 2's OverflowError, in `.at` updates, branches
and loop carries), 0-d boolean indices in `.at[...]`, reverse mode through a fori_loop whose array
bounds are concrete, weak loop carries the body would narrow, and the `pt.lax` names `sort`, `pad`,
`full`, `full_like`, `lgamma`, `digamma`, `erf_inv`, `gather`.

Expected values are NumPy's, or JAX's written out (the tests do not import jax)."""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import poot as pt
from poot import lax
from tests.tolerance import assert_close


def _eager_and_jit(f):
    return [f, pt.jit(f)]


# --- a Python int that does not fit ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32"])
def test_python_int_out_of_range_in_at_updates_is_refused(dtype):
    info = np.iinfo(dtype)
    x = pt.zeros(3, dtype=dtype)
    for v in (int(info.max) + 1, int(info.min) - 1):
        for update in ("set", "add", "multiply", "min", "max"):
            for f in _eager_and_jit(lambda a, update=update, v=v: getattr(a.at[0], update)(v)):
                with pytest.raises(OverflowError, match=f"Python integer {v} is out of bounds for {dtype}"):
                    f(x)
        with pytest.raises(pt.ScalarOverflowError, match=r"at\[\.\.\.\]\.set"):
            x.at[[0, 1]].set([1, v])
    np.testing.assert_array_equal(x.at[0].set(int(info.max)).numpy(), np.array([info.max, 0, 0], dtype=dtype))


def test_python_int_out_of_range_in_branches_and_carries_is_refused():
    u = pt.asarray(5, dtype=pt.uint8)
    tries = [
        lambda: lax.cond(pt.asarray(True), lambda: 300, lambda: u),
        lambda: lax.cond(pt.asarray(False), lambda: u, lambda: -1),
        lambda: lax.switch(pt.asarray(1), [lambda: 300, lambda: u]),
        lambda: lax.fori_loop(0, 0, lambda i, c: u, 300),          # zero trips gave 44
        lambda: lax.fori_loop(0, 3, lambda i, c: c + u, 300),
        lambda: lax.while_loop(lambda c: c < 3, lambda c: u, 300),
        lambda: lax.scan(lambda c, _: (u, None), 256, None, length=2),
        lambda: pt.jit(lambda p: lax.cond(p, lambda: 300, lambda: u))(pt.asarray(True)),
    ]
    for f in tries:
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            f()
    assert lax.cond(pt.asarray(True), lambda: 200, lambda: u).dtype == pt.uint8
    assert int(lax.cond(pt.asarray(True), lambda: 200, lambda: u)) == 200


def test_jitted_python_int_arguments_are_checked_where_they_meet_small_ints():
    x = pt.arange(3, dtype=pt.uint8)
    u = pt.asarray(5, dtype=pt.uint8)

    def write(a, v):
        a[0] = v
        return a
    checked = [pt.jit(lambda a, v: a.at[0].set(v)), pt.jit(write),
               pt.jit(lambda a, v: lax.cond(pt.asarray(True), lambda: v, lambda: u) + a)]
    for f in checked:       # (write updates the array passed: each call gets its own)
        with pytest.raises(OverflowError, match="Python integer 300 is out of bounds for uint8"):
            f(pt.arange(3, dtype=pt.uint8), 300)
        assert f(pt.arange(3, dtype=pt.uint8), 200).numpy()[0] == 200
    # only the argument that meets the uint8 array must fit it, not every Python int of the call
    f = pt.jit(lambda a, n: (lax.fori_loop(0, 3, lambda i, c: c + i, a), pt.arange(3.0) * n))
    np.testing.assert_array_equal(f(x, 1000)[0].numpy(), [3, 4, 5])
    g = pt.jit(lambda a, v, n: (a + v, n))
    assert int(g(x, 5, 300)[1]) == 300
    with pytest.raises(OverflowError):
        g(x, 300, 5)


def test_python_int_out_of_range_in_insert_and_initial_is_an_overflow_error():
    x = pt.arange(3, dtype=pt.uint8)
    for f in (lambda: pt.insert(x, 0, 300), lambda: pt.insert(x, [0, 1], [1, -1]),
              lambda: pt.max(x, initial=-1), lambda: pt.min(x.astype(pt.int8), initial=1000)):
        with pytest.raises(OverflowError, match="out of bounds"):
            f()
    np.testing.assert_array_equal(pt.insert(x, 0, 255).numpy(), np.insert(np.arange(3, dtype=np.uint8), 0, 255))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint64"])
def test_python_int_out_of_range_in_operators_matches_numpy(dtype):
    xs = np.array([0, 1, 2], dtype=dtype)
    big = int(np.iinfo(dtype).max) + 1
    for op in (operator.add, operator.mul, operator.floordiv, operator.and_, operator.lt, operator.ge,
               operator.eq, operator.ne):
        for v in (big, -1, 2 ** 64):
            try:
                want = op(xs, v)
            except OverflowError:
                for f in _eager_and_jit(lambda a, op=op, v=v: op(a, v)):
                    with pytest.raises(OverflowError):
                        f(pt.asarray(xs))
                continue
            for f in _eager_and_jit(lambda a, op=op, v=v: op(a, v)):
                got = f(pt.asarray(xs)).numpy()
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    y = pt.asarray(xs)
    with pytest.raises(OverflowError):
        y += big


# --- 0-d boolean indices in .at -------------------------------------------------------------------
X = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("index, value, want", [
    ((True,), 9.0, np.full((2, 3), 9.0)),
    ((False,), 9.0, X),
    ((0, True), 9.0, np.array([[9.0, 9, 9], [3, 4, 5]])),
    ((0, False), 9.0, X),
    ((True, slice(None), 1), 9.0, np.array([[0.0, 9, 2], [3, 9, 5]])),
    ((Ellipsis, True), np.array([[7.0], [8], [9]]), np.array([[7.0, 8, 9], [7, 8, 9]])),
    ((True, [0, 1]), X + 10, X + 10),
    ((True, True), 9.0, np.full((2, 3), 9.0)),
    ((True, False), 9.0, X),
])
def test_scalar_bool_index_in_at_set(index, value, want):
    idx = tuple(pt.asarray(i) if isinstance(i, bool) else i for i in index)
    v = pt.asarray(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(pt.asarray(X).at[idx].set(v).numpy(), want)
    np.testing.assert_array_equal(pt.asarray(X).at[index].set(v).numpy(), want)     # Python bools
    flags = [i for i in idx if isinstance(i, pt.Array)]

    def f(x, *bs):          # the flags traced: the update is kept where they hold
        it = iter(bs)
        return x.at[tuple(next(it) if isinstance(i, pt.Array) else i for i in idx)].set(v)
    np.testing.assert_array_equal(pt.jit(f)(pt.asarray(X), *flags).numpy(), want)


def test_scalar_bool_index_in_other_updates_and_get():
    x, t, f = pt.asarray(X), pt.asarray(True), pt.asarray(False)
    np.testing.assert_array_equal(x.at[t].add(1.0).numpy(), X + 1)
    np.testing.assert_array_equal(x.at[f].add(1.0).numpy(), X)
    np.testing.assert_array_equal(x.at[t].min(2.0).numpy(), np.minimum(X, 2))
    np.testing.assert_array_equal(x.at[f].max(100.0).numpy(), X)
    np.testing.assert_array_equal(pt.jit(lambda x, b: x.at[b].multiply(2.0))(x, t).numpy(), X * 2)
    np.testing.assert_array_equal(pt.jit(lambda x, b: x.at[b].multiply(2.0))(x, f).numpy(), X)
    np.testing.assert_array_equal(pt.asarray(5.0).at[t].set(9.0).numpy(), 9.0)
    assert x.at[t].get().shape == (1, 2, 3) and x.at[f].get().shape == (0, 2, 3)
    with pytest.raises(pt.TracerError, match="0-d boolean index"):
        pt.jit(lambda x, b: x.at[b].get())(x, f)


# --- reverse mode through fori_loop with concrete array bounds -------------------------------------
def test_grad_through_fori_loop_with_concrete_array_bounds():
    def loss(x, lo, hi):
        return lax.fori_loop(lo, hi, lambda i, c: c * x + i, x).sum()

    x = pt.asarray([0.5, 1.5])
    want = pt.grad(loss)(x, 0, 5).numpy()
    # c_0 = x, c_{k+1} = c_k x + k: c_5 = x^6 + x^3 + 2x^2 + 3x + 4
    xs = np.array([0.5, 1.5])
    assert_close(want, 6 * xs ** 5 + 3 * xs ** 2 + 4 * xs + 3, pt.float64, ops=8)
    assert_close(pt.grad(loss)(x, pt.asarray(0), pt.asarray(5)).numpy(), want, pt.float64)
    assert_close(pt.grad(lambda x: loss(x, pt.asarray(0), pt.asarray(2) + 3))(x).numpy(), want, pt.float64)
    _, pull = pt.vjp(lambda x: loss(x, pt.asarray(0), pt.asarray(5)), x)
    assert_close(pull(pt.asarray(1.0))[0].numpy(), want, pt.float64)
    with pytest.raises(pt.NotBuiltError, match="traced"):        # a traced bound has no trip count
        pt.jit(lambda x, n: pt.grad(lambda x: loss(x, 0, n))(x))(x, pt.asarray(5))


# --- a weak carry the body would narrow -----------------------------------------------------------
def test_python_float_carry_narrowed_to_an_integer_is_refused():
    a = pt.asarray(1, dtype=pt.int32)
    for f in (lambda: lax.fori_loop(0, 0, lambda i, c: a, 0.5),           # gave 0 (int32)
              lambda: lax.fori_loop(pt.asarray(0), pt.asarray(0), lambda i, c: a, 0.5),
              lambda: lax.while_loop(lambda c: False, lambda c: a, 0.5),
              lambda: lax.scan(lambda c, x: (a, None), 0.5, None, length=0),
              lambda: lax.fori_loop(0, 0, lambda i, c: pt.asarray(1.0, dtype=pt.float32), 1j),
              lambda: pt.jit(lambda n: lax.fori_loop(0, n, lambda i, c: a, 0.5))(0)):
        with pytest.raises(pt.DTypeError, match="must keep its kind"):
            f()
    # widening and same-kind carries keep working, the zero-trip result of one trip's dtype
    for trips in (0, 2):
        r = lax.fori_loop(0, trips, lambda i, c: pt.asarray(1.0, dtype=pt.float32), 3)
        assert r.dtype == pt.float32 and float(r) == (3.0 if trips == 0 else 1.0)
        r = lax.fori_loop(0, trips, lambda i, c: pt.asarray(1.0, dtype=pt.float16), 0.5)
        assert r.dtype == pt.float16 and float(r) == (0.5 if trips == 0 else 1.0)


# --- lax names ------------------------------------------------------------------------------------
def test_lax_sort():
    nan = np.nan
    x = np.array([3.0, -0.0, 0.0, nan, -np.inf, 1.0, 2.0])
    np.testing.assert_array_equal(lax.sort(pt.asarray(x)).numpy(), np.sort(x, kind="stable"))
    k, v = np.array([2, 1, 2, 1]), np.array([4.0, 2.0, 3.0, 1.0])
    got = lax.sort((pt.asarray(k), pt.asarray(v)))
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_array_equal(got[0].numpy(), [1, 1, 2, 2])
    np.testing.assert_array_equal(got[1].numpy(), [2.0, 1.0, 4.0, 3.0])     # keeps the order of equal keys
    got = pt.jit(lambda a, b, c: lax.sort([a, b, c], num_keys=2))(pt.asarray(k), pt.asarray(v), pt.arange(4))
    np.testing.assert_array_equal(got[1].numpy(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(got[2].numpy(), [3, 1, 2, 0])
    m = np.array([[3, 1], [1, 2]])
    np.testing.assert_array_equal(lax.sort(pt.asarray(m), dimension=0).numpy(), np.sort(m, axis=0))
    with pytest.raises(pt.ArgumentError, match="num_keys"):
        lax.sort(pt.asarray(k), num_keys=2)
    with pytest.raises(pt.ShapeError, match="one shape"):
        lax.sort((pt.asarray(k), pt.arange(3)))
    with pytest.raises(pt.AxisError):
        lax.sort(pt.asarray(3.0))


def test_lax_pad():
    y = np.arange(1.0, 7.0).reshape(2, 3)
    want = np.array([[0.0, 0, 0, 0, 0, 0], [1, 0, 2, 0, 3, 0], [4, 0, 5, 0, 6, 0],
                     [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    for f in _eager_and_jit(lambda a: lax.pad(a, 0.0, [(1, 2, 0), (0, 1, 1)])):
        np.testing.assert_array_equal(f(pt.asarray(y)).numpy(), want)
    np.testing.assert_array_equal(lax.pad(pt.asarray(y), -1.0, [(-1, 1, 0), (-1, -1, 2)]).numpy(),
                                  [[-1.0, -1, 5, -1, -1], [-1, -1, -1, -1, -1]])
    np.testing.assert_array_equal(lax.pad(pt.arange(1.0, 4.0), 0.0, [(-2, -2, 1)]).numpy(), [2.0])
    np.testing.assert_array_equal(lax.pad(pt.arange(3), 7, [(1, 1, 1)]).numpy(), [7, 0, 7, 1, 7, 2, 7])
    assert lax.pad(pt.ones(3), 0.0, [(-2, -1, 0)]).shape == (0,)
    got = pt.jit(lambda a, v: lax.pad(a, v, [(1, -1, 1), (2, 0, 0)]))(pt.asarray(y), pt.asarray(-5.0))
    np.testing.assert_array_equal(got.numpy(), [[-5.0, -5, -5, -5, -5], [-5, -5, 1, 2, 3], [-5, -5, -5, -5, -5]])
    g = pt.grad(lambda a: (lax.pad(a, 0.0, [(1, -1, 1), (-1, 2, 2)]) ** 2).sum())(pt.asarray(y))
    np.testing.assert_array_equal(g.numpy(), [[0.0, 4, 6], [0, 0, 0]])
    with pytest.raises(pt.ShapeError, match="negative"):
        lax.pad(pt.ones(3), 0.0, [(-2, -2, 0)])
    with pytest.raises(pt.DTypeError):
        lax.pad(pt.arange(3), 1.5, [(1, 1, 0)])
    with pytest.raises(pt.DTypeError):
        lax.pad(pt.asarray(y), pt.asarray(0, dtype=pt.int32), [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(pt.ArgumentError, match="interior"):
        lax.pad(pt.asarray(y), 0.0, [(0, 0, -1), (0, 0, 0)])


def test_lax_full_and_full_like():
    assert lax.full((2, 3), 1.5).dtype == pt.float64 and lax.full(3, 0).shape == (3,)
    assert lax.full((2,), 3, dtype=pt.float32).dtype == pt.float32
    assert lax.full((2,), pt.asarray(3, dtype=pt.float32)).dtype == pt.float32
    y = pt.ones((2, 3))
    np.testing.assert_array_equal(lax.full_like(y, 7, shape=(4,)).numpy(), [7.0] * 4)
    assert lax.full_like(y, 7, dtype=pt.int32).dtype == pt.int32
    np.testing.assert_array_equal(lax.full_like(pt.arange(3), 2.7).numpy(), [2, 2, 2])
    with pytest.raises(pt.ShapeError, match="scalar"):
        lax.full((2,), pt.zeros(2))


def test_lax_lgamma_digamma_erf_inv():
    inf, nan = np.inf, np.nan
    x = pt.asarray([0.5, -0.5, -1.0, 0.0, 3.0, -2.5, inf, -inf])
    want = [0.5 * math.log(math.pi), math.log(2 * math.sqrt(math.pi)), inf, inf, math.log(2.0),
            math.lgamma(-2.5), inf, inf]
    assert_close(lax.lgamma(x).numpy(), want, pt.float64, ops=8)
    d = lax.digamma(pt.asarray([0.5, 3.0, -1.0, 0.0, -0.0, inf, -inf])).numpy()
    euler = 0.5772156649015329
    assert_close(d, [-euler - 2 * math.log(2), 1.5 - euler, nan, nan, nan, inf, nan], pt.float64, ops=8)
    e = lax.erf_inv(pt.asarray([0.0, 0.5, -0.9, 1.0, -1.0, 1.5])).numpy()
    assert_close(e, [0.0, 0.4769362762044699, -1.1630871536766743, inf, -inf, nan], pt.float64, ops=8)
    assert lax.lgamma(pt.asarray([0.5], dtype=pt.float32)).dtype == pt.float32
    for f in (lax.lgamma, lax.digamma, lax.erf_inv):
        with pytest.raises(pt.DTypeError, match="floating"):
            f(pt.arange(3))


def test_lax_gather():
    x = np.arange(60.0).reshape(3, 4, 5)
    rows = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[2], [-1], [0], [3]])
    for f in _eager_and_jit(lambda a, i: lax.gather(a, i, rows, (1, 4, 5))):
        np.testing.assert_array_equal(f(pt.asarray(x), pt.asarray(idx)).numpy(), x[np.clip(idx[:, 0], 0, 2)])
    got = lax.gather(pt.asarray(x), pt.asarray(idx), rows, (1, 2, 3), mode="fill").numpy()
    want = x[np.clip(idx[:, 0], 0, 2), :2, :3]
    want[[1, 3]] = np.nan
    np.testing.assert_array_equal(got, want)
    # windows at (axis 2, axis 1) starts, slice axes placed around the batch axis
    win = lax.GatherDimensionNumbers(offset_dims=(0, 2, 3), collapsed_slice_dims=(), start_index_map=(2, 1))
    starts = np.array([[0, 1], [3, 2], [1, 0]])
    got = lax.gather(pt.asarray(x), pt.asarray(starts), win, (2, 2, 2)).numpy()
    want = np.stack([x[:2, r:r + 2, c:c + 2] for c, r in starts], axis=1)
    np.testing.assert_array_equal(got, want)
    # a batching axis: row b of the operand, column idx[b]
    per_row = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,),
                                         operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    cols = np.array([[3], [0], [2]])
    got = lax.gather(pt.asarray(x), pt.asarray(cols), per_row, (1, 1, 5)).numpy()
    np.testing.assert_array_equal(got, x[np.arange(3), cols[:, 0]])
    g = pt.grad(lambda a: (lax.gather(a, pt.asarray([[0], [0], [2]]), rows, (1, 4, 5)) ** 2).sum())(pt.asarray(x))
    np.testing.assert_array_equal(g.numpy(), 2 * x * np.array([2, 0, 1])[:, None, None])
