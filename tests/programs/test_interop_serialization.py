"""poot arrays crossing into NumPy, JAX and Python's own protocols as their users expect: pickling and
copying every dtype and shape, np.save, NumPy 2's `__array__(dtype, copy)`, DLPack both ways, bytes(),
Python scalar conversions with NumPy 2's rules, and the errors of a traced array naming the conversion."""
from __future__ import annotations

import copy
import io
import math
import pickle
import re
import sys

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "bool", "int8", "uint64"]


def _values(name):
    host = np.arange(12).reshape(3, 4) % 5
    return host.astype(pt.dtypes.as_dtype(name).np)


def _same(got, expected, what):
    assert isinstance(got, pt.Array), f"{what}: {type(got).__name__}, not a poot Array"
    assert got.dtype == expected.dtype and got.shape == expected.shape, \
        f"{what}: {got.dtype}{got.shape}, expected {expected.dtype}{expected.shape}"
    assert_close(got.numpy(), expected, pt.dtypes.as_dtype(expected.dtype), err_msg=what)


@pytest.mark.parametrize("name", DTYPES)
def test_pickle_copy_and_np_save_keep_dtype_shape_and_values(device, name):
    import cloudpickle

    host = _values(name)
    x = pt.asarray(host)
    lazy = ~x if name == "bool" else x + x
    cases = {"2-d": (x, host), "transposed": (x.T, host.T),
             "lazy": (lazy, ~host if name == "bool" else host + host), "0-d": (x[1, 2], host[1, 2]),
             "empty": (x[:0], host[:0]), "strided": (x[:, ::-2], host[:, ::-2])}
    for label, (arr, ref) in cases.items():
        ref = np.asarray(ref)
        for how, fn in (("pickle", lambda v: pickle.loads(pickle.dumps(v))),
                        ("cloudpickle", lambda v: cloudpickle.loads(cloudpickle.dumps(v))),
                        ("copy", copy.copy), ("deepcopy", copy.deepcopy)):
            _same(fn(arr), ref, f"{how} of a {label} {name} array")
        buf = io.BytesIO()
        np.save(buf, arr)
        buf.seek(0)
        loaded = np.load(buf)
        if name != "bfloat16":        # NumPy's .npy format stores ml_dtypes' bfloat16 as raw |V2
            assert loaded.dtype == ref.dtype and np.array_equal(loaded, ref), f"np.save of a {label} array"


def test_ndarray_dump_and_dumps(device, tmp_path):
    host = np.linspace(-1, 1, 6).reshape(2, 3)
    x = pt.asarray(host) * 3
    _same(pickle.loads(x.dumps()), host * 3, "x.dumps()")
    x.dump(tmp_path / "x.pkl")
    with open(tmp_path / "x.pkl", "rb") as f:
        _same(pickle.load(f), host * 3, "x.dump(path)")
    buf = io.BytesIO()
    x.dump(buf)
    buf.seek(0)
    _same(pickle.load(buf), host * 3, "x.dump(file)")


def test_numpy2_array_protocol_copy_rules(device):
    x = pt.asarray(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2
    ref = np.arange(6, dtype=np.float32).reshape(2, 3) * 2
    assert np.array_equal(np.array(x, copy=None), ref)
    assert np.array(x, copy=True).flags.writeable
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.array(x, dtype=np.float32, copy=False).dtype == np.float32   # no change: nothing to copy
    # NumPy (and JAX) refuse a dtype change under copy=False: it cannot be done without a copy
    with pytest.raises(ValueError, match="copy=False"):
        np.array(x, dtype=np.float64, copy=False)
    with pytest.raises(pt.CopyError):
        np.array(x.astype(pt.bfloat16), dtype=np.float32, copy=False)
    # pt.array's copy=False is NumPy 2's too: host data always needs a copy into device memory
    with pytest.raises(ValueError):
        np.array([1.0, 2.0], copy=False)
    with pytest.raises(pt.CopyError):
        pt.array([1.0, 2.0], copy=False)
    with pytest.raises(pt.CopyError):
        pt.array(np.ones(3), copy=False)
    with pytest.raises(pt.CopyError):
        pt.array(x, dtype=pt.float64, copy=False)
    assert pt.array(x, copy=False) is x and pt.array(x, copy=False, ndmin=3).shape == (1, 2, 3)


def test_python_scalar_conversions_follow_numpy2(device):
    one = np.ones((1, 1))
    x = pt.asarray(one)
    for conv in (int, float, complex, math.floor, math.ceil, math.trunc):
        with pytest.raises(TypeError):            # NumPy 2 (and JAX): only a 0-d array is a number
            conv(one)
        with pytest.raises(TypeError, match="0-d"):
            conv(x)
        assert conv(x[0, 0]) == conv(one[0, 0])
    assert bool(x) is bool(one) is True and x.item() == one.item() == 1.0
    assert x.astype(pt.int32)[0, 0].__index__() == 1
    with pytest.raises(TypeError):
        [1, 2][pt.asarray(np.array([1]))]


def test_bytes_matches_numpy(device):
    for host in (np.arange(5, dtype=np.int32), np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3),
                 np.array(3), np.array(3, dtype=np.uint8), np.array(2.5), np.array(True),
                 np.ones(4, dtype=np.float16), np.array([1 + 2j], dtype=np.complex64)):
        assert bytes(pt.asarray(host)) == bytes(host), host


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ from Python needs 3.12 (PEP 688)")
def test_memoryview_reads_the_values(device):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = memoryview(pt.asarray(host))
    assert m.readonly and m.format == "f" and m.shape == (2, 3) and m.tolist() == host.tolist()


# DLPack exchanges CPU memory: these run on the CPU whatever the test devices
def test_dlpack_bfloat16_both_ways():
    import jax.numpy as jnp

    x = pt.ones(3, dtype=pt.bfloat16, device="cpu")
    with pytest.raises(BufferError):        # what a DLPack consumer expects, and a poot DTypeError
        np.from_dlpack(x)
    with pytest.raises(pt.DTypeError, match="bfloat16"):
        np.from_dlpack(x)
    assert jnp.asarray(x).dtype == jnp.bfloat16          # through __array__ instead
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = pt.from_dlpack(jnp.asarray(host).astype(jnp.bfloat16), device="cpu")
    assert got.dtype == pt.bfloat16 and got.shape == (2, 3)
    assert got.numpy().astype(np.float32).tolist() == host.tolist()
    with pytest.raises(pt.CopyError):
        pt.from_dlpack(jnp.asarray(host).astype(jnp.bfloat16), copy=False)
    f = pt.from_dlpack(jnp.asarray(host), device="cpu")
    assert f.dtype == pt.float32 and np.array_equal(np.from_dlpack(f), host)


def test_dlpack_export_elsewhere_than_cpu_memory_is_a_buffer_error():
    x = pt.asarray(np.arange(3.0), device="cpu")
    assert np.array_equal(np.from_dlpack(x, device="cpu"), np.arange(3.0))
    with pytest.raises(BufferError):           # the array API standard's error for an unsupported dl_device
        x.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    with pytest.raises(pt.DeviceError, match="dl_device"):
        x.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    try:
        gpu = pt.ones(3, device="wgpu")
    except pt.DeviceUnavailableError:
        return
    with pytest.raises(BufferError):           # an array in another device's memory, the same
        np.from_dlpack(gpu)


def test_traced_array_errors_name_the_conversion():
    x = pt.ones((2, 3), dtype=pt.float32, device="cpu")
    for what, body in (("np.asarray()", np.asarray), (".tolist()", lambda v: v.tolist()),
                       ("pickling", pickle.dumps), ("__dlpack__", np.from_dlpack)):
        with pytest.raises(pt.TracerError, match=re.escape(what)):
            pt.jit(lambda v, body=body: body(v))(x)


def test_protocol_errors_name_the_users_line(device):
    here = f"{__file__.rsplit('/', 1)[-1]}:"
    for call in (lambda: hash(pt.ones(2)), lambda: len(pt.ones(())), lambda: iter(pt.ones(()))):
        with pytest.raises(TypeError) as info:
            call()
        assert isinstance(info.value, pt.PootError) and here in str(info.value), str(info.value)
