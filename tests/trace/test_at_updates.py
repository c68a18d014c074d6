"""`x.at[idx]`: JAX's functional indexed updates, eagerly, under @pt.jit, pt.vmap and pt.grad.
Expected values are JAX's (written out here: the tests do not import jax)."""
import numpy as np
import pytest

import poot as pt

IDX = np.array([0, 0, 7, -1, -7])        # a repeat, one past the end, a wrapped negative, one before


def x5():
    return pt.asarray(np.arange(5.0))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("method, value, want", [
    ("set", 9.0, [9, 1, 2, 3, 9]),
    ("add", 1.0, [2, 1, 2, 3, 5]),
    ("subtract", 1.0, [-2, 1, 2, 3, 3]),
    ("multiply", 2.0, [0, 1, 2, 3, 8]),
    ("divide", 2.0, [0, 1, 2, 3, 2]),
    ("power", 2.0, [0, 1, 2, 3, 16]),
    ("min", 0.5, [0, 1, 2, 3, 0.5]),
    ("max", 10.0, [10, 1, 2, 3, 10]),
])
def test_updates_drop_out_of_range_and_accumulate(lazy, method, value, want):
    x = x5()
    idx = pt.asarray(IDX) if lazy else IDX
    got = getattr(x.at[idx], method)(value)
    assert np.allclose(got.numpy(), want)
    assert np.array_equal(x.numpy(), np.arange(5.0))          # x unchanged


def test_repeated_multiply_and_divide_fold_every_update():
    x = pt.asarray(np.array([3.0, 1.0, 2.0]))
    assert np.allclose(x.at[np.array([1, 1, 1])].multiply(2.0).numpy(), [3, 8, 2])
    assert np.allclose(x.at[np.array([0, 0])].divide(2.0).numpy(), [0.75, 1, 2])
    v = pt.asarray(np.array([5.0, -1.0, 4.0]))
    assert np.allclose(x.at[pt.asarray(np.array([2, 2, 2]))].min(v).numpy(), [3, 1, -1])
    assert np.allclose(x.at[pt.asarray(np.array([2, 0, 2]))].max(v).numpy(), [3, 1, 5])


def test_get_clamps_by_default_and_fills_on_request():
    x = x5()
    i = np.array([7, -7, -1])
    assert x.at[i].get().tolist() == [4, 0, 4]
    got = x.at[pt.asarray(i)].get(mode="fill").numpy()
    assert np.isnan(got[:2]).all() and got[2] == 4
    assert x.at[i].get(mode="fill", fill_value=3.0).tolist() == [3, 3, 4]
    assert pt.arange(5).at[np.array([7])].get(mode="fill").tolist() == [np.iinfo(np.int64).min]


def test_clip_mode_clamps_updates():
    assert x5().at[np.array([7, -7, -1])].set(9.0, mode="clip").tolist() == [9, 1, 2, 3, 9]
    assert x5().at[7].add(1.0, mode="promise_in_bounds").tolist() == [0, 1, 2, 3, 5]


def test_apply_runs_once_per_occurrence():
    got = x5().at[np.array([0, 0, 3])].apply(lambda v: v + 1)
    assert got.tolist() == [2, 1, 2, 4, 4]
    got = x5().at[pt.asarray(np.array([0, 0, 3]))].apply(lambda v: v * 2)
    assert got.tolist() == [0, 1, 2, 6, 4]


def test_multi_axis_slices_newaxis_ellipsis_and_masks():
    a = np.arange(20.0).reshape(4, 5)
    x = pt.asarray(a)
    want = a.copy()
    want[1:3, [0, 4]] = -1
    assert np.array_equal(x.at[1:3, np.array([0, 0, 4])].set(-1.0).numpy(), want)
    want = a.copy()
    want[::-1, 4] += 1
    assert np.array_equal(x.at[::-1, 7].add(1.0).numpy(), a)                   # out of range: dropped
    assert np.array_equal(x.at[::-1, -1].add(1.0).numpy(), want)
    assert np.array_equal(x.at[..., 2].get().numpy(), a[..., 2])
    assert x.at[None, 2, np.array([[1, 1], [3, -2]])].get().shape == (1, 2, 2)
    mask = np.array([True, False, True, True])
    want = a.copy()
    want[mask] = 0
    assert np.array_equal(x.at[mask].set(0.0).numpy(), want)
    row = pt.asarray(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    want = a.copy()
    want[2] = [1, 2, 3, 4, 5]
    assert np.array_equal(x.at[2].set(row).numpy(), want)


def test_integer_and_bool_targets():
    assert pt.arange(4).at[np.array([1, 1])].add(2).tolist() == [0, 5, 2, 3]
    assert pt.arange(4).at[np.array([1, 1])].max(7).tolist() == [0, 7, 2, 3]
    b = pt.zeros(3, dtype=pt.bool_)
    assert b.at[np.array([2, 2])].set(True).tolist() == [False, False, True]


def test_under_jit():
    f = pt.jit(lambda x, i: (x.at[i].add(1.0), x.at[i].max(10.0), x.at[i].get(),
                             x.at[i].get(mode="fill", fill_value=-1.0), x.at[i].apply(lambda v: v + 1)))
    i = pt.asarray(np.array([0, 0, 7, -1]))
    add, mx, get, fill, app = f(x5(), i)
    assert add.tolist() == [2, 1, 2, 3, 5]
    assert mx.tolist() == [10, 1, 2, 3, 10]
    assert get.tolist() == [0, 0, 4, 4]
    assert fill.tolist() == [0, 0, -1, 4]
    assert app.tolist() == [2, 1, 2, 3, 5]


def test_under_vmap():
    xs = pt.asarray(np.arange(12.0).reshape(3, 4))
    ids = pt.asarray(np.array([0, 3, 9]))
    got = pt.vmap(lambda r, j: r.at[j].set(-1.0))(xs, ids).numpy()
    assert np.array_equal(got, [[-1, 1, 2, 3], [4, 5, 6, -1], [8, 9, 10, 11]])
    got = pt.vmap(lambda r, j: r.at[j].multiply(2.0))(xs, ids).numpy()
    assert np.array_equal(got, [[0, 1, 2, 3], [4, 5, 6, 14], [8, 9, 10, 11]])
    got = pt.vmap(lambda r: r.at[np.array([1, 1])].add(1.0))(xs).numpy()
    assert np.array_equal(got[:, 1], [3, 7, 11])


def test_gradients():
    x = x5()
    i = pt.asarray(np.array([0, 0, 7, -1]))
    g = pt.grad(lambda x: (x.at[i].multiply(3.0) ** 2).sum())(x)
    assert np.allclose(g.numpy(), [0, 2, 4, 6, 72])
    g = pt.grad(lambda v: (x.at[i].set(v) * x).sum())(pt.asarray(2.0))
    assert np.isclose(float(g), 4.0)
    g = pt.grad(lambda x: x.at[i].max(2.5).sum())(x)
    assert np.allclose(g.numpy(), [0, 1, 1, 1, 1])
    g = pt.grad(lambda x: x.at[1:3].get().sum() + x.at[i].get(mode="fill", fill_value=0.0).sum())(x)
    assert np.allclose(g.numpy(), [2, 1, 1, 0, 1])
    g = pt.grad(lambda v: x.at[i].add(v).sum())(pt.asarray(np.array([1.0, 1.0, 1.0, 1.0])))
    assert np.allclose(g.numpy(), [1, 1, 0, 1])                                # the dropped update: 0


def test_bad_mode_and_index():
    with pytest.raises(pt.PootError, match="mode"):
        x5().at[0].set(1.0, mode="wrap")
    with pytest.raises(pt.PootError, match="integers"):
        x5().at[np.array([0.5])].get()
    with pytest.raises(pt.PootError, match="too many"):
        x5().at[0, 0].get()
