"""Indexing and assignment bugs found by comparing poot with NumPy 2 (each test failed before its fix)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_add_at_on_bool_is_logical_or(device):
    x = pt.zeros(3, dtype=pt.bool)
    pt.add.at(x, pt.asarray(np.array([0, 0])), True)
    np.testing.assert_array_equal(x.numpy(), [True, False, False])
    y = pt.asarray(np.array([False, True, False, False]))
    pt.add.at(y, [0, 2, 2, 3], pt.asarray(np.array([False, False, True, False])))
    want = np.array([False, True, False, False])
    np.add.at(want, [0, 2, 2, 3], np.array([False, False, True, False]))
    np.testing.assert_array_equal(y.numpy(), want)


def test_add_at_on_bool_under_jit(device):
    @pt.jit
    def f(x, i):
        pt.add.at(x, i, True)
        return x

    got = f(pt.zeros(4, dtype=pt.bool), pt.asarray(np.array([3, 1, 3])))
    np.testing.assert_array_equal(got.numpy(), [False, True, False, True])


@pytest.mark.parametrize("bad", [
    lambda x: x[1.0:3],
    lambda x: x.__setitem__(1, 1 + 2j),
    lambda x: len(x[0]),
    lambda x: list(x[0]),
])
def test_bare_type_errors_are_poot_errors(device, bad):
    x = pt.asarray(np.arange(10.))
    with pytest.raises(pt.PootError) as info:
        bad(x)
    assert isinstance(info.value, TypeError)          # NumPy raises TypeError for each


def test_empty_index_array_on_an_empty_axis(device):
    e = pt.zeros((0, 3))
    i = pt.asarray(np.array([], np.intp))
    assert e[i].shape == (0, 3)
    assert pt.take(e, i, axis=0).shape == (0, 3)


def test_range_index(device):
    x = pt.asarray(np.arange(10.))
    np.testing.assert_array_equal(x[range(2, 5)].numpy(), np.arange(10.)[range(2, 5)])
    x[range(1, 9, 3)] = -1.0
    want = np.arange(10.)
    want[range(1, 9, 3)] = -1.0
    np.testing.assert_array_equal(x.numpy(), want)


def test_compress_ignores_extra_false_entries(device):
    m = np.arange(6.).reshape(3, 2)
    cond = [False, True, True, False, False]
    np.testing.assert_array_equal(pt.compress(cond, pt.asarray(m), axis=0).numpy(),
                                  np.compress(cond, m, axis=0))
    with pytest.raises(pt.PootError):
        pt.compress([False, True, True, True], pt.asarray(m), axis=0)


def test_unravel_and_ravel_in_fortran_order(device):
    flat = np.array([0, 5, 7, 11])
    got = pt.unravel_index(pt.asarray(flat), (3, 4), order="F")
    for g, w in zip(got, np.unravel_index(flat, (3, 4), order="F")):
        np.testing.assert_array_equal(g.numpy(), w)
    mi = (np.array([0, 2, 1]), np.array([3, 1, 0]))
    np.testing.assert_array_equal(pt.ravel_multi_index(mi, (3, 4), order="F").numpy(),
                                  np.ravel_multi_index(mi, (3, 4), order="F"))
    np.testing.assert_array_equal(pt.ravel_multi_index(mi, (3, 4)).numpy(), np.ravel_multi_index(mi, (3, 4)))


def test_sequence_into_one_element_raises(device):
    x = pt.asarray(np.arange(5.))
    for v in (pt.asarray([7.0]), [7.0]):
        with pytest.raises(pt.PootError) as info:
            x[2] = v
        assert isinstance(info.value, ValueError)      # NumPy 2: ValueError
    x[2] = pt.asarray(7.0)                              # a 0-d value still fits
    y = pt.zeros((3, 2))
    y[1] = pt.asarray(np.array([[1., 2.]]))              # leading 1s are dropped, as NumPy does
    np.testing.assert_array_equal(x.numpy(), [0., 1., 7., 3., 4.])
    np.testing.assert_array_equal(y.numpy()[1], [1., 2.])
