"""NumPy scripts run with `import poot as np`: 0-d array bounds and counts, assignment broadcasting and
casting, round() and comparisons with None, the numpy.testing and stride_tricks namespaces, index
iterators, ndarray methods, the global-state random functions, and index functions' bounds, each
checked against NumPy or against the poot error NumPy's error becomes."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


# --- axis errors ----------------------------------------------------------------------------------
def test_unique_with_an_axis_out_of_range_raises_poots_axis_error():
    with pytest.raises(pt.AxisError, match="axis 3 is out of bounds") as info:
        pt.unique(pt.ones((2, 2)), axis=3)
    assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)
    np.testing.assert_array_equal(pt.unique(pt.asarray([[1, 2], [1, 2]]), axis=-2).numpy(), [[1, 2]])


# --- 0-d array bounds and counts ------------------------------------------------------------------
def test_arange_takes_0d_array_bounds_as_numpy_does(device):
    labels = pt.asarray([0, 2, 1])
    np.testing.assert_array_equal(pt.arange(labels.max() + 1).numpy(), np.arange(3))
    got = pt.arange(pt.asarray(1), pt.asarray(7), pt.asarray(2))
    np.testing.assert_array_equal(got.numpy(), np.arange(1, 7, 2))
    half = pt.arange(pt.asarray(2.5))
    assert half.dtype == pt.float64 and half.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(pt.DTypeError, match="0-d real"):
        pt.arange(pt.asarray([3]))


def test_histogram_takes_a_0d_array_bin_count(device):
    x = np.array([0.0, 1.0, 2.0, 2.5])
    counts, edges = pt.histogram(pt.asarray(x), bins=pt.asarray([0, 2, 1]).max() + 1)
    want_counts, want_edges = np.histogram(x, bins=np.array(3))
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_allclose(edges.numpy(), want_edges)
    with pytest.raises(pt.DTypeError, match="integer count"):
        pt.histogram(pt.asarray(x), bins=pt.asarray(2.5))


def test_0d_array_bounds_inside_jit_are_a_tracer_error():
    @pt.jit
    def f(x):
        return pt.arange(x.max() + 1)

    with pytest.raises(pt.TracerError):
        f(pt.asarray([1, 2]))


# --- assignment -----------------------------------------------------------------------------------
def test_assigned_values_drop_leading_unit_axes_as_numpy_does(device):
    x, want = pt.zeros(4), np.zeros(4)
    x[1:3] = pt.asarray([[9.0, 8.0]])
    want[1:3] = np.array([[9.0, 8.0]])
    np.testing.assert_array_equal(x.numpy(), want)
    m, mw = pt.zeros((2, 3)), np.zeros((2, 3))
    m[0] = pt.asarray([[[1.0, 2.0, 3.0]]])
    mw[0] = np.array([[[1.0, 2.0, 3.0]]])
    m[pt.asarray([1])] = pt.ones((1, 1, 3))
    mw[np.array([1])] = np.ones((1, 1, 3))
    np.testing.assert_array_equal(m.numpy(), mw)
    with pytest.raises(pt.ShapeError, match="could not broadcast"):
        x[1:3] = pt.ones((2, 2))


def test_element_update_of_an_int_array_casts_on_store(device):
    y, yw = pt.arange(6), np.arange(6)
    y[2] += 2.5
    yw[2] += 2.5
    y[3] = 4.5
    yw[3] = 4.5
    y[4] *= 1.5
    yw[4] *= 1.5
    assert y.dtype == pt.int64
    np.testing.assert_array_equal(y.numpy(), yw)
    total = pt.arange(3).sum()
    total += 0.5                     # NumPy's scalar: `s = s + 0.5`
    assert total.dtype == pt.float64 and float(total) == 3.5


def test_whole_array_in_place_update_keeps_the_same_kind_rule():
    y = pt.arange(6)
    with pytest.raises(pt.DTypeError, match="same-kind"):
        y += 2.5


# --- Python protocols -----------------------------------------------------------------------------
def test_round_of_a_0d_array_is_a_python_int_and_with_digits_an_array(device):
    r = round(pt.asarray(2.6))
    assert type(r) is int and r == round(np.float64(2.6)) == 3
    assert round(pt.asarray(2.5)) == round(np.float64(2.5)) == 2
    assert type(round(pt.asarray(7))) is int
    a = round(pt.asarray(2.66), 1)
    assert isinstance(a, pt.Array) and float(a) == pytest.approx(2.7)
    np.testing.assert_allclose(round(pt.asarray([1.26, 2.5]), 1).numpy(), np.round([1.26, 2.5], 1))
    with pytest.raises(pt.DomainError):
        round(pt.asarray(np.inf))


def test_comparing_with_none_is_elementwise(device):
    a = pt.arange(3)
    np.testing.assert_array_equal((a == None).numpy(), np.arange(3) == None)  # noqa: E711
    np.testing.assert_array_equal((a != None).numpy(), np.arange(3) != None)  # noqa: E711
    assert (a == None).shape == (3,) and (a == 1).tolist() == [False, True, False]  # noqa: E711


# --- namespaces and names -------------------------------------------------------------------------
def test_testing_assertions_take_poot_arrays():
    pt.testing.assert_allclose(pt.asarray([1.0, 2.0]), [1.0, 2.0 + 1e-12])
    pt.testing.assert_array_equal(pt.arange(3), np.arange(3))
    pt.testing.assert_equal({"a": [pt.asarray(1)]}, {"a": [1]})
    pt.testing.assert_array_almost_equal(pt.asarray([1.0]), [1.0000001])
    pt.testing.assert_almost_equal(pt.asarray(1.0), 1.0000001)
    pt.testing.assert_array_less(pt.asarray([1, 2]), pt.asarray([2, 3]))
    with pytest.raises(AssertionError):
        pt.testing.assert_array_equal(pt.arange(3), [0, 1, 3])
    with pytest.raises(AssertionError):
        pt.testing.assert_array_less(pt.asarray([1.0, 2.0]), [1.0, 2.0])
    pt.testing.assert_raises(pt.ShapeError, pt.reshape, pt.arange(3), (2, 2))


@pytest.mark.parametrize("window,axis", [((2, 3), None), (3, 1), ((2, 2), (1, 1)), ((2,), (0,)), (0, 1),
                                         ((4, 6), None), (2, -1)])
def test_sliding_window_view_matches_numpy(device, window, axis):
    x = np.arange(24.0).reshape(4, 6)
    got = pt.lib.stride_tricks.sliding_window_view(pt.asarray(x), window, axis)
    want = np.lib.stride_tricks.sliding_window_view(x, window, axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_sliding_window_view_is_lazy_and_as_strided_reads_inside_the_array():
    @pt.jit
    def moving_sum(x):
        return pt.lib.stride_tricks.sliding_window_view(x, 3).sum(axis=-1)

    np.testing.assert_allclose(moving_sum(pt.arange(6.0)).numpy(), [3.0, 6.0, 9.0, 12.0])
    with pytest.raises(pt.ShapeError, match="cannot be larger"):
        pt.lib.stride_tricks.sliding_window_view(pt.arange(3), 4)
    with pytest.raises(pt.ShapeError, match="outside the 4 elements"):
        pt.lib.stride_tricks.as_strided(pt.arange(4), (2, 4), (8, 8))


def test_ndindex_ndenumerate_and_euler_gamma_are_numpys():
    assert list(pt.ndindex(2, 3)) == list(np.ndindex(2, 3))
    assert list(pt.ndindex((1, 2))) == list(np.ndindex((1, 2))) and list(pt.ndindex()) == [()]
    a = np.array([[1, 2], [3, 4]])
    assert list(pt.ndenumerate(pt.asarray(a))) == list(np.ndenumerate(a))
    assert pt.euler_gamma == np.euler_gamma
    with pytest.raises(pt.ShapeError):
        pt.ndindex(-1)


# --- ndarray methods ------------------------------------------------------------------------------
def test_array_methods_match_numpys(device):
    a, n = pt.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(a.compress([True, False], axis=0).numpy(), n.compress([True, False], axis=0))
    np.testing.assert_array_equal(pt.asarray([0, 1]).choose([[1, 2], [3, 4]]).numpy(),
                                  np.array([0, 1]).choose([[1, 2], [3, 4]]))
    assert a.tobytes() == n.tobytes() and a.tobytes("F") == n.tobytes("F")
    assert a.strides == n.strides and pt.ones((2, 1, 3), dtype=pt.float32).strides == (12, 12, 4)
    assert pt.asarray(1.0).strides == ()
    b, bn = pt.arange(5), np.arange(5)
    b.put([0, 2], [9, 8])
    bn.put([0, 2], [9, 8])
    np.testing.assert_array_equal(b.numpy(), bn)
    c = pt.asarray([3, 1, 2, 0])
    c.partition(1)
    assert c.numpy()[1] == 1 and c.numpy()[0] <= 1 <= c.numpy()[2:].min()
    assert pt.asarray([3, 1, 2, 0]).argpartition(1).numpy()[1] == 1


def test_real_and_imag_setters_rebind_the_array(device):
    z, zn = pt.zeros(2, dtype=pt.complex128), np.zeros(2, dtype=np.complex128)
    z.imag = [1.0, 2.0]
    zn.imag = [1.0, 2.0]
    z.real = 3
    zn.real = 3
    np.testing.assert_array_equal(z.numpy(), zn)
    r, rn = pt.arange(3), np.arange(3)
    r.real = 5.7
    rn.real = 5.7
    np.testing.assert_array_equal(r.numpy(), rn)
    with pytest.raises(pt.DTypeError, match="no imaginary part"):
        r.imag = 1


# --- global-state random --------------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [("binomial", (10, 0.5)), ("poisson", (3.0,)), ("gamma", (2.0,)),
                                       ("beta", (1.0, 2.0)), ("lognormal", ()), ("laplace", ()),
                                       ("dirichlet", ([1.0, 2.0],)),
                                       ("multivariate_normal", ([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]))])
def test_global_random_functions_draw_from_the_seeded_generator(name, args):
    pt.random.seed(7)
    first = getattr(pt.random, name)(*args, size=4).numpy()
    pt.random.seed(7)
    again = getattr(pt.random, name)(*args, size=4).numpy()
    want = getattr(pt.random.default_rng(7), name)(*args, size=4).numpy()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, want)
    assert first.shape == getattr(np.random.default_rng(0), name)(*args, size=4).shape


def test_random_state_round_trips():
    pt.random.seed(3)
    pt.random.rand(2)
    state = pt.random.get_state()
    a = pt.random.binomial(10, 0.5, size=4).numpy(), pt.random.normal(size=2).numpy()
    pt.random.set_state(state)
    b = pt.random.binomial(10, 0.5, size=4).numpy(), pt.random.normal(size=2).numpy()
    pt.random.set_state(pt.random.get_state(legacy=False))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(pt.DomainError, match="MT19937"):
        pt.random.set_state(np.random.RandomState(0).get_state())


# --- index functions' bounds ----------------------------------------------------------------------
def test_index_functions_trap_out_of_range_entries_held_in_arrays(device):
    with pytest.raises(pt.PootIndexError):
        pt.ravel_multi_index((pt.asarray([5]), pt.asarray([0])), (2, 2)).numpy()
    with pytest.raises(pt.PootIndexError):
        pt.ravel_multi_index((pt.asarray([-1]), pt.asarray([0])), (2, 2)).numpy()
    with pytest.raises(pt.PootIndexError):
        pt.unravel_index(pt.asarray([4]), (2, 2))[0].numpy()
    got = pt.ravel_multi_index((pt.asarray([1, 0]), pt.asarray([1, 1])), (2, 2))
    np.testing.assert_array_equal(got.numpy(), np.ravel_multi_index(([1, 0], [1, 1]), (2, 2)))
    wrapped = pt.ravel_multi_index((pt.asarray([5]), pt.asarray([0])), (2, 2), mode="wrap")
    np.testing.assert_array_equal(wrapped.numpy(), np.ravel_multi_index(([5], [0]), (2, 2), mode="wrap"))
    rows, cols = pt.unravel_index(pt.asarray([3, 1]), (2, 2))
    np.testing.assert_array_equal(rows.numpy(), [1, 0])
    np.testing.assert_array_equal(cols.numpy(), [1, 1])
