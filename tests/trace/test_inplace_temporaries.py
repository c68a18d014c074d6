"""In-place functions (NumPy's through __array_function__/__array_ufunc__, and poot's own) rebind the
poot Array they are given. Into an array held by a name they write as NumPy does; into a temporary
nothing holds (`np.fill_diagonal(a.reshape(1, 3), 7)`, where NumPy writes `a` through the view) the
write would reach nothing, so it is refused with a CopyError and `a` is left as it was, never changed
in part or silently left behind."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import poot as pt

# name -> a NumPy-style call writing into the array `make()` gives, made in the call's own argument
# list (as `np.fill_diagonal(a.reshape(1, 3), 7)` makes it): a temporary when make() makes a new one
WRITES = {
    "np.fill_diagonal": lambda np_, make: np_.fill_diagonal(make(), 7.0),
    "np.put": lambda np_, make: np_.put(make(), [0, 2], [5.0, 6.0]),
    "np.putmask": lambda np_, make: np_.putmask(make(), np.array([[True, False, True]]), 9.0),
    "np.place": lambda np_, make: np_.place(make(), np.array([[False, True, True]]), [4.0, 8.0]),
    "np.copyto": lambda np_, make: np_.copyto(make(), 3.0, where=np.array([[True, False, False]])),
    "np.put_along_axis": lambda np_, make: np_.put_along_axis(make(), np.array([[1]]), 2.5, axis=1),
    "np.add.at": lambda np_, make: np_.add.at(make(), (0, [0, 0, 1]), 1.0),
    "np.negative.at": lambda np_, make: np_.negative.at(make(), (0, [1])),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_into_a_held_array_matches_numpy(device, name):
    want = np.arange(3.0).reshape(1, 3)
    WRITES[name](np, lambda: want)
    x = pt.asarray(np.arange(3.0)).reshape(1, 3)
    WRITES[name](np, lambda: x)
    np.testing.assert_array_equal(x.numpy(), want)


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_into_a_temporary_is_refused_not_lost(device, name):
    base = np.arange(3.0)
    through_view = base.copy()
    WRITES[name](np, lambda: through_view.reshape(1, 3))     # NumPy writes through the view
    assert not np.array_equal(through_view, base)
    a = pt.asarray(base)
    with pytest.raises(pt.CopyError, match=r"temporary nothing holds.*the write would be lost"):
        WRITES[name](np, lambda: a.reshape(1, 3))
    np.testing.assert_array_equal(a.numpy(), base)


POOT_WRITES = {
    "put": lambda make: pt.put(make(), [0], [5.0]),
    "putmask": lambda make: pt.putmask(make(), pt.ones((1, 3), dtype=pt.bool), 1.0),
    "place": lambda make: pt.place(make(), np.ones((1, 3), bool), [1.0]),
    "copyto": lambda make: pt.copyto(make(), 2.0),
    "fill_diagonal": lambda make: pt.fill_diagonal(make(), 7.0),
    "put_along_axis": lambda make: pt.put_along_axis(make(), np.array([[0]]), 1.0, axis=1),
    "add.at": lambda make: pt.add.at(make(), (0, 0), 1.0),
    "negative.at": lambda make: pt.negative.at(make(), (0, 0)),
    "x.put": lambda make: make().put([0], 1.0),
    "x.partition": lambda make: make().partition(0),
    "random.shuffle": lambda make: pt.random.shuffle(make()),
    "Generator.shuffle": lambda make: pt.random.default_rng(0).shuffle(make()),
}


@pytest.mark.parametrize("name", sorted(POOT_WRITES))
def test_poots_own_in_place_functions_refuse_a_temporary(device, name):
    a = pt.asarray(np.array([3.0, 1.0, 2.0]))
    with pytest.raises(pt.CopyError, match=rf"^{name}: the array it writes into is a temporary"):
        POOT_WRITES[name](lambda: a.reshape(1, 3))
    np.testing.assert_array_equal(a.numpy(), [3.0, 1.0, 2.0])
    held = a.reshape(1, 3)
    POOT_WRITES[name](lambda: held)           # held by a name: written, as NumPy writes its argument
    assert held.shape == (1, 3)


def test_a_held_array_inside_a_function_and_a_list_is_written(device):
    def fill(n):
        c = pt.zeros((n, n))
        np.fill_diagonal(c, 1.0)
        pt.put(c, [1], 5.0)
        return c

    want = np.eye(3)
    want.flat[1] = 5.0
    np.testing.assert_array_equal(fill(3).numpy(), want)
    arrays = [pt.zeros((2, 2))]
    np.fill_diagonal(arrays[0], 2.0)
    np.testing.assert_array_equal(arrays[0].numpy(), 2.0 * np.eye(2))


def test_other_argument_errors_come_before_the_temporary(device):
    with pytest.raises(pt.ShapeError, match="fill_diagonal: array must be at least 2-d"):
        pt.fill_diagonal(pt.zeros(3), 1.0)
    with pytest.raises(pt.DTypeError, match="copyto: cannot cast"):
        np.copyto(pt.zeros(3, dtype=pt.int32), pt.ones(3))


def test_numpy_shuffle_of_a_held_poot_array_is_a_permutation(device):
    x = pt.asarray(np.arange(5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # NumPy: "not a subclass of 'Sequence'"
        np.random.default_rng(0).shuffle(x)
    assert sorted(x.numpy().tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]
