"""Indexing and index assignment against NumPy: ints, slices with any step, None, ..., integer
arrays (several, broadcast together, adjacent or not), boolean masks; every dtype; plain, sliced,
transposed and negative-step operands; index arrays given as NumPy arrays, lists and poot arrays."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

from .helpers import ALL, values

BASE = (4, 5, 6)
LAYOUTS = {  # name -> (base shape, view): every view has shape (4, 5, 6)
    "plain": ((4, 5, 6), lambda a: a),
    "sliced": ((8, 5, 12), lambda a: a[::2, :, 1::2]),
    "transposed": ((6, 5, 4), lambda a: a.transpose(2, 1, 0)),
    "negstep": ((4, 10, 6), lambda a: a[::-1, ::-2, ::-1]),
}
MASK = values(pt.bool_, BASE, 11)

GET = {
    "int": 1, "neg_int": -1, "ints": (1, 2), "all_ints": (1, 2, 3), "neg_ints": (-1, -2, -3),
    "full": slice(None), "range": slice(1, 3), "reverse": slice(None, None, -1),
    "neg_step": (slice(3, 0, -2), slice(None), slice(-1, None, -3)), "tail": slice(-2, None),
    "empty_slice": slice(1, 1), "past_end": slice(10, 20), "int_last": (slice(None), 2),
    "ellipsis": (Ellipsis, 1), "ellipsis_mid": (0, Ellipsis, 1), "none": (None, 1),
    "none_mid": (1, None, slice(None, None, 2)), "ellipsis_none": (Ellipsis, None),
    "array": [0, 2], "array_2d": [[0, 1], [2, 3]], "two_arrays": ([0, 2], [1, 3]),
    "array_axis1": (slice(None), [0, 4]), "arrays_split": ([0, 1], slice(None), [2, 5]),
    "ellipsis_array": (Ellipsis, [1, 0]), "int_and_array": (1, slice(None), [0, 2]),
    "neg_array": ([-1, 0],), "broadcast_arrays": (np.array([[1], [2]]), np.array([0, 3])),
    "arrays_adjacent": (slice(None), [0, 1], [2, 3]), "arrays_with_none": ([0, 1], None, [1, 2]),
    "none_then_array": (None, [0, 1]), "array_slice_int": ([2, 0], slice(1, 4), -1),
    "mask_1d": np.array([True, False, True, True]), "mask_full": MASK,
    "mask_last": (Ellipsis, np.array([True, False, True, False, True, True])),
    "mask_2d": MASK[:, :, 0], "empty_array": (np.array([], np.int64),),
    "np_int": (np.int64(2), np.int32(-1)), "zero_d_array": (np.array(1),),
}


def _as_poot_index(idx):
    """The same index with every array in it as a poot array (masks included)."""
    if isinstance(idx, tuple):
        return tuple(_as_poot_index(i) for i in idx)
    if isinstance(idx, (list, np.ndarray)):
        return pt.asarray(np.asarray(idx))
    return idx


@pytest.mark.parametrize("name", list(GET))
def test_getitem_matches_numpy(device, name):
    idx = GET[name]
    cases = []
    for dtype in ALL:
        for layout, (shape, view) in LAYOUTS.items():
            base = values(dtype, shape, 3)
            a, x = view(base), view(pt.asarray(base))
            expected = a[idx]
            cases.append((dtype, layout, "numpy index", x[idx], expected))
            cases.append((dtype, layout, "poot index", x[_as_poot_index(idx)], expected))
    pt.realize(*(c[3] for c in cases))
    for dtype, layout, how, r, expected in cases:
        assert r.dtype is dtype
        assert_close(r.numpy(), np.asarray(expected), dtype, 1, f"{name} {layout} {how} {dtype}")


def test_getitem_on_0d_and_1d(device):
    a = np.array(3.5)
    x = pt.asarray(a)
    assert x[()].numpy() == a[()] and x[None].shape == a[None].shape and x[...].shape == ()
    v = np.arange(7.0)
    y = pt.asarray(v)
    for idx in (3, slice(None, None, -3), [6, 0, 6], np.array([[1, 2]]), v > 2.5, (None, slice(2, 5))):
        assert_close(y[idx].numpy(), v[idx], pt.float64)


SET = {  # name -> (index, value): value is a Python scalar or a NumPy array
    "int": (1, 0), "ints": ((1, 2), 7), "slice_broadcast": (slice(1, 3), np.arange(6)),
    "ellipsis": ((Ellipsis, 0), 1), "negative_step": (slice(None, None, -2), 5),
    "step_both": ((slice(3, 0, -2), slice(None), slice(-1, None, -3)), np.ones((2, 5, 2))),
    "none": ((None, 1), 3), "array": ([0, 2], 9), "two_arrays": (([0, 1], [1, 2]), np.arange(12).reshape(2, 6)),
    "arrays_split": (([0, 1], slice(None), [2, 5]), np.arange(10).reshape(2, 5)),
    "duplicates": (([0, 0],), 3), "mask_scalar": (MASK, 0), "mask_row": (MASK[:, :, 0], np.arange(6)),
    "mask_values": (MASK, np.arange(int(MASK.sum()))), "empty": (slice(2, 2), 4),
    "array_int": ((slice(None), [1, 3], 2), np.arange(8).reshape(4, 2)),
}


@pytest.mark.parametrize("name", list(SET))
def test_setitem_matches_numpy(device, name):
    idx, value = SET[name]
    cases = []
    for dtype in ALL:
        for layout, (shape, view) in LAYOUTS.items():
            base = values(dtype, shape, 3)
            a = view(base).copy()
            v = value if np.isscalar(value) else np.asarray(value).astype(dtype.np)
            a[idx] = v
            for how, index in (("numpy index", idx), ("poot index", _as_poot_index(idx))):
                x = view(pt.asarray(base))
                before = x
                x[idx if how == "numpy index" else index] = v
                assert x is before  # the same handle, rebound to the new value
                cases.append((dtype, layout, how, x, a))
    pt.realize(*(c[3] for c in cases))
    for dtype, layout, how, r, expected in cases:
        assert r.dtype is dtype
        assert_close(r.numpy(), expected, dtype, 1, f"{name} {layout} {how} {dtype}")


def test_setitem_does_not_change_other_handles(device):
    x = pt.asarray(np.zeros(4))
    y = x[1:3]
    z = x.copy()
    x[1:3] = 5.0
    assert y.numpy().tolist() == [0.0, 0.0] and z.numpy().tolist() == [0.0] * 4
    assert x.numpy().tolist() == [0.0, 5.0, 5.0, 0.0]


def test_setitem_casts_like_numpy(device):
    x = pt.asarray(np.zeros(3, np.int32))
    x[0] = 2.7
    x[1:] = np.array([1.9, -1.9])
    assert x.numpy().tolist() == [2, 1, -1] and x.dtype is pt.int32


def test_mask_assignment_with_a_lazy_mask_does_not_realize(device):
    x = pt.asarray(np.arange(6.0))
    m = x > 2
    x[m] = 0.0
    assert not m.is_realized and not x.is_realized
    assert x.numpy().tolist() == [0, 1, 2, 0, 0, 0]


def test_add_at_scatters_with_duplicates(device):
    x = pt.zeros(4)
    np.add.at(x, [0, 1, 1, 3], 1.0)
    e = np.zeros(4)
    np.add.at(e, [0, 1, 1, 3], 1.0)
    assert x.numpy().tolist() == e.tolist()


def test_lazy_index_arrays_are_bounds_checked(device):
    x = pt.asarray(np.arange(5.0))
    assert x[pt.asarray(np.array([-1, -5, 2]))].numpy().tolist() == [4.0, 0.0, 2.0]  # negatives count from the end
    with pytest.raises(pt.PootIndexError, match="out of bounds"):   # as NumPy (tests/trace/test_index_bounds.py)
        x[pt.asarray(np.array([-1, 7, 2]))].numpy()


@pytest.mark.parametrize("dtype", [pt.float32, pt.int8, pt.bool_], ids=str)
def test_take_and_take_along_axis(device, dtype):
    a = values(dtype, (4, 5), 2)
    x = pt.asarray(a)
    assert_close(pt.take(x, [3, 0, 3]).numpy(), np.take(a, [3, 0, 3]), dtype)
    assert_close(pt.take(x, [[1], [0]], axis=1).numpy(), np.take(a, [[1], [0]], axis=1), dtype)
    ind = np.argsort(values(pt.float32, (4, 5), 1), axis=1)
    assert_close(pt.take_along_axis(x, ind, 1).numpy(), np.take_along_axis(a, ind, 1), dtype)
    assert [n.tolist() for n in pt.nonzero(x)] == [n.tolist() for n in np.nonzero(a)]
