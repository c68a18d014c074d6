"""DLPack on the CPU: poot arrays export to NumPy (and any consumer) and import from any CPU
producer; from_dlpack always copies host data in, so copy=False raises BufferError (CopyError)."""
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


def _aligned(n):
    raw = np.zeros(n + 8)
    off = (-raw.ctypes.data % 64) // 8
    return raw[off:off + n]


def test_copy_false_never_aliases_host_memory():
    """Even memory poot could adopt (C-contiguous, 64-byte aligned, writable) is refused: a poot array is
    an immutable value, and the producer could still write the memory under it."""
    a = _aligned(4)
    with pytest.raises(pt.CopyError, match="never alias host memory") as err:
        pt.from_dlpack(a, copy=False)
    assert isinstance(err.value, BufferError)
    y = pt.from_dlpack(a)
    a[0] = 7.0
    assert y.numpy().tolist() == [0.0, 0.0, 0.0, 0.0]
    x = pt.asarray([1.0, 2.0])
    assert pt.from_dlpack(x, copy=False) is x
    shared = np.from_dlpack(x, copy=False)       # DLPack 1.0 consumers share read-only memory
    assert shared.tolist() == [1.0, 2.0] and not shared.flags.writeable


def test_copy_false_is_a_buffer_error_when_sharing_is_impossible():
    with pytest.raises(BufferError, match="copy=False"):
        pt.from_dlpack(np.ones(8)[::2], copy=False)
    with pytest.raises(pt.CopyError, match="max_version"):
        pt.asarray([1.0, 2.0]).__dlpack__(copy=False)     # a legacy consumer cannot be told read-only
    a = _aligned(4)
    a.flags.writeable = False
    with pytest.raises(pt.CopyError, match="never alias"):
        pt.from_dlpack(a, copy=False)


def test_dlpack_keywords():
    x = pt.asarray([1.0, 2.0])
    cap = x.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=None)
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(pt.DTypeError, match="cannot read a object through DLPack.*on the CPU"):
        pt.from_dlpack(object())


@pytest.mark.parametrize("dtype", [pt.bool, pt.float32])
def test_empty_array_exports_without_a_copy_for_any_consumer(dtype):
    """A legacy consumer (no max_version) cannot be told memory is read-only, so a non-empty array's
    copy=False export is refused; an empty array has no bytes to protect and exports as NumPy's does."""
    x = pt.zeros((0,), dtype=dtype)
    back = np.from_dlpack(x, copy=False)
    assert back.shape == (0,) and back.dtype == dtype.np
    with pytest.raises(pt.CopyError, match="read-only"):
        pt.asarray([1.0, 2.0]).__dlpack__(copy=False)
