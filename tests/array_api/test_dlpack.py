"""DLPack on the CPU: poot arrays export to NumPy (and any consumer) and import from any CPU
producer; from_dlpack copies (poot arrays are immutable), so copy=False is refused."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_round_trip_through_numpy(dtype):
    a = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    x = pt.asarray(a) + pt.zeros((), dtype=getattr(pt, dtype)) if dtype != "bool" else pt.asarray(a)
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    back = np.from_dlpack(x)  # realizes x, then shares its buffer read-only
    np.testing.assert_array_equal(back, a)
    y = pt.from_dlpack(a)
    assert y.dtype == getattr(pt, dtype) and y.shape == (2, 3)
    np.testing.assert_array_equal(y.numpy(), a)


def test_from_dlpack_copies_and_takes_views():
    a = np.arange(10.0)
    view = a[::3]  # non-contiguous producer
    y = pt.from_dlpack(view)
    a[0] = 99.0
    assert y.numpy().tolist() == [0.0, 3.0, 6.0, 9.0]  # a copy: later writes do not leak in
    z = pt.from_dlpack(pt.asarray([1.0, 2.0]), device="cpu")
    assert z.numpy().tolist() == [1.0, 2.0] and pt.from_dlpack(np.zeros(())).shape == ()


def test_copy_false_is_a_buffer_error():
    with pytest.raises(BufferError, match="copy=False"):
        pt.from_dlpack(np.ones(2), copy=False)
    with pytest.raises(pt.CopyError):
        pt.from_dlpack(np.ones(2), copy=False)


def test_dlpack_keywords():
    x = pt.asarray([1.0, 2.0])
    cap = x.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=None)
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(pt.DTypeError, match="cannot read a object through DLPack.*on the CPU"):
        pt.from_dlpack(object())
