"""Movement ops against NumPy: every dtype, 0-d, empty and non-contiguous inputs. Each case is one
expression written once and run with `m = numpy` and `m = poot`; where NumPy refuses the input (a
reshape of the wrong size, a split that is not even), poot raises a PootError of the same class."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

from .helpers import ALL, ALL_LAYOUTS, ids, layout_pair

MOVES = {
    "reshape_flat": lambda m, x: m.reshape(x, (-1,)),
    "reshape_infer": lambda m, x: m.reshape(x, (2, -1)),
    "reshape_method": lambda m, x: x.reshape(4, 3),
    "reshape_1": lambda m, x: x.reshape((1,) + x.shape + (1,)),
    "ravel": lambda m, x: m.ravel(x),
    "transpose": lambda m, x: m.transpose(x),
    "T": lambda m, x: x.T,
    "mT": lambda m, x: x.mT,
    "permute_dims": lambda m, x: m.permute_dims(m.expand_dims(x, 0), (2, 0, 1)),
    "swapaxes": lambda m, x: m.swapaxes(x, 0, -1),
    "moveaxis": lambda m, x: m.moveaxis(m.expand_dims(x, -1), 0, -1),
    "expand_dims": lambda m, x: m.expand_dims(x, (0, -1)),
    "squeeze_axis": lambda m, x: m.squeeze(m.expand_dims(x, 1), 1),
    "squeeze_all": lambda m, x: m.squeeze(m.expand_dims(x, (0, 2))),
    "broadcast_to": lambda m, x: m.broadcast_to(x, (2,) + x.shape),
    "broadcast_arrays": lambda m, x: m.broadcast_arrays(m.expand_dims(x, 0), m.ones((3,) + x.shape,
                                                                                  dtype=x.dtype))[0],
    "flip": lambda m, x: m.flip(x),
    "flip_axis": lambda m, x: m.flip(x, -1),
    "roll": lambda m, x: m.roll(x, 2),
    "roll_axis": lambda m, x: m.roll(x, -1, axis=1),
    "roll_tuple": lambda m, x: m.roll(x, (1, 2), axis=(0, 1)),
    "concatenate": lambda m, x: m.concatenate([x, x[::-1]], axis=0),
    "concatenate_last": lambda m, x: m.concatenate([x, x], axis=-1),
    "concatenate_flat": lambda m, x: m.concatenate([x, x], axis=None),
    "stack": lambda m, x: m.stack([x, x, x], axis=1),
    "stack_last": lambda m, x: m.stack([x, x], axis=-1),
    "vstack": lambda m, x: m.vstack([x, x]),
    "hstack": lambda m, x: m.hstack([x, x]),
    "split": lambda m, x: m.split(x, 2, axis=-1)[1],
    "split_indices": lambda m, x: m.split(x, [1, 3], axis=0)[2],
    "array_split": lambda m, x: m.array_split(x, 3, axis=-1)[0],
    "pad": lambda m, x: m.pad(x, 1),
    "pad_pairs": lambda m, x: m.pad(x, ((1, 0), (0, 2)), constant_values=3),
    "tile": lambda m, x: m.tile(x, 2),
    "tile_rank": lambda m, x: m.tile(x, (2, 1, 3)),
    "repeat": lambda m, x: m.repeat(x, 2),
    "repeat_axis": lambda m, x: m.repeat(x, 3, axis=0),
    "repeat_counts": lambda m, x: m.repeat(x, [1, 0, 2, 1], axis=-1),
    "atleast_2d": lambda m, x: m.atleast_2d(x),
    "copy": lambda m, x: m.copy(x),
    "astype_roundtrip": lambda m, x: x.astype(m.float64).astype(x.dtype),
}


def _pt_dtype(v):
    return pt.Array.dtype.fget(v) if isinstance(v, pt.Array) else None


@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("name", list(MOVES))
def test_movement_matches_numpy(device, name, dtype):
    fn = MOVES[name]
    cases = []
    for layout in ALL_LAYOUTS:
        a, x = layout_pair(dtype, layout)
        try:
            expected = fn(np, a)
        except (ValueError, IndexError, TypeError) as e:
            with pytest.raises(pt.PootError) as info:
                fn(pt, x)
            assert isinstance(info.value, type(e).__mro__[1] if type(e).__name__ == "AxisError"
                              else type(e)), (layout, info.value)
            continue
        cases.append((layout, fn(pt, x), np.asarray(expected)))
    pt.realize(*(c[1] for c in cases))
    for layout, r, expected in cases:
        assert r.dtype is dtype, layout
        assert r.shape == expected.shape, layout
        assert_close(r.numpy(), expected, dtype, 1, f"{name} {layout}")


def test_split_returns_all_parts(device):
    a = np.arange(12.0).reshape(3, 4)
    for mine, theirs in zip(pt.split(pt.asarray(a), 2, axis=1), np.split(a, 2, axis=1)):
        assert np.array_equal(mine.numpy(), theirs)
    for mine, theirs in zip(pt.array_split(a, 3), np.array_split(a, 3)):
        assert np.array_equal(mine.numpy(), theirs)


def test_concatenate_promotes_and_checks_devices(device):
    r = pt.concatenate([np.zeros(2, np.int8), np.ones(3, np.float32)])
    assert r.dtype is pt.float32 and r.numpy().tolist() == [0, 0, 1, 1, 1]
    assert pt.stack([1.0, 2.0]).dtype is pt.float64


def test_numpy_functions_on_poot_arrays_stay_lazy(device):
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    for r in (np.concatenate([x, x]), np.transpose(x), np.reshape(x, (3, 2)), np.flip(x),
              np.stack([x, x]), np.where(x > 2, x, -x), np.roll(x, 1), np.pad(x, 1)):
        assert isinstance(r, pt.Array)
    assert np.concatenate([x, x]).shape == (4, 3)
