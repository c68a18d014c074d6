"""A write into a temporary array nothing holds (`Z[1][0] = v`, `Z.T[0] = v`, `Z.reshape(-1)[0] = v`)
would be lost, since poot's indexing, .T and reshape give new arrays where NumPy gives views: it is
refused with a CopyError instead of changing nothing. Writes into arrays held by a name, an attribute,
a list or a dict, and NumPy's one-index forms, work as before."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("write", [
    lambda Z: Z[1].__setitem__(0, 99.0),
    lambda Z: Z.T.__setitem__(0, 1.0),
    lambda Z: Z.reshape(-1).__setitem__(0, 1.0),
    lambda Z: Z[:, 1:].__setitem__((0, 0), 1.0),
], ids=["row-then-element", "transpose", "reshape", "slice"])
def test_a_write_into_a_temporary_is_refused(write):
    Z = pt.zeros((3, 3))
    with pytest.raises(pt.CopyError, match="temporary array nothing holds"):
        write(Z)
    assert (Z.numpy() == 0).all()


def test_chained_index_assignment_is_refused_and_the_one_index_form_works():
    Z = pt.zeros((3, 3))
    with pytest.raises(pt.CopyError, match=r"Z\[1, 0\] = v"):
        Z[1][0] = 99.0
    Z[1, 0] = 99.0
    want = np.zeros((3, 3))
    want[1, 0] = 99.0
    np.testing.assert_array_equal(Z.numpy(), want)


def test_held_arrays_take_writes():
    class Holder:
        pass

    h = Holder()
    h.a = pt.zeros(3)
    h.a[0] = 1.0
    rows = [pt.zeros(3)]
    rows[0][1] = 2.0
    named = {"k": pt.zeros(3)}
    named["k"][2] = 3.0
    r = pt.zeros((2, 3))[1]
    r[0] = 5.0

    def set_first(x):
        x[0] = 7.0
        return x

    assert h.a.numpy().tolist() == [1, 0, 0] and rows[0].numpy().tolist() == [0, 2, 0]
    assert named["k"].numpy().tolist() == [0, 0, 3] and r.numpy().tolist() == [5, 0, 0]
    assert set_first(pt.zeros(2)).numpy().tolist() == [7, 0]
    assert pt.jit(lambda x: set_first(x * 2))(pt.ones(2)).numpy().tolist() == [7, 2]
