"""Casts of bool and bfloat16 scalar kernel parameters to every dtype, on every device in
POOT_TEST_DEVICES, against NumPy: float -> int truncates and saturates, bool -> number is 0 or 1.

SPIR-V devices pass a scalar in a 32-bit metadata word; a narrow integer's cast to 32 bits is that
word extended, but a bool's or a bfloat16's cast must convert the value (a bfloat16's word is its bit
pattern), and so must the implicit widening of `f32 + bf16`."""
import ml_dtypes
import numpy as np
import pytest

import poot as pt

TARGETS = {"bool": (pt.bool_, np.bool_), "int8": (pt.i8, np.int8), "uint8": (pt.u8, np.uint8),
           "int16": (pt.i16, np.int16), "uint16": (pt.u16, np.uint16), "int32": (pt.i32, np.int32),
           "uint32": (pt.u32, np.uint32), "int64": (pt.i64, np.int64), "uint64": (pt.u64, np.uint64),
           "float16": (pt.f16, np.float16), "bfloat16": (pt.bf16, ml_dtypes.bfloat16),
           "float32": (pt.f32, np.float32), "float64": (pt.f64, np.float64)}
SOURCES = {"bool": (pt.bool_, [True, False]), "bfloat16": (pt.bf16, [2.5, -3.75, 300.0, -200.0, 0.0])}


def _cast_kernel(src, dst):
    @pt.kernel
    def cast_scalar(o: pt.Out[dst], a: src):
        if pt.thread_index() == 0:
            o[0] = dst(a)
    return cast_scalar


def _expected(value, np_dst):
    """NumPy's cast, with the saturation of float -> int (truncation toward zero, then clamping)."""
    x = np.float64(value)
    if np.issubdtype(np_dst, np.integer):
        info = np.iinfo(np_dst)
        return np.array([min(max(np.trunc(x), info.min), info.max)]).astype(np_dst)
    return np.array([x]).astype(np_dst)


@pytest.mark.parametrize("dst", list(TARGETS))
@pytest.mark.parametrize("src", list(SOURCES))
def test_scalar_param_cast(device, src, dst):
    src_t, values = SOURCES[src]
    dst_t, np_dst = TARGETS[dst]
    k = _cast_kernel(src_t, dst_t)
    for value in values:
        o = np.zeros(1, np_dst)
        k.launch(pt.Context(device), o, value, threads=(1, 1, 1))
        want = _expected(value, np_dst)
        assert o.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), (src, value, dst, o[0], want)


@pt.kernel
def add_bf16_scalar(x: pt.In[pt.f32], o: pt.Out[pt.f32], h: pt.bf16):
    i = pt.thread_index()
    if i < len(o):
        o[i] = x[i] + h


@pt.kernel
def mul_bf16_scalar_f64(x: pt.In[pt.f64], o: pt.Out[pt.f64], h: pt.bf16):
    i = pt.thread_index()
    if i < len(o):
        o[i] = x[i] * h


@pt.kernel
def add_bool_scalar(x: pt.In[pt.i64], o: pt.Out[pt.i64], flag: pt.bool_):
    i = pt.thread_index()
    if i < len(o):
        o[i] = x[i] + pt.i64(flag)


def test_scalar_param_implicit_widening(device):
    x32 = np.array([1.0, -2.5, 1e-3], np.float32)
    o32 = np.zeros(3, np.float32)
    add_bf16_scalar(pt.Context(device), x32, o32, 2.5)
    np.testing.assert_array_equal(o32, x32 + np.float32(2.5))
    x64 = np.array([1.0, -2.5, 1e-300])
    o64 = np.zeros(3)
    mul_bf16_scalar_f64(pt.Context(device), x64, o64, -3.75)
    np.testing.assert_array_equal(o64, x64 * -3.75)
    xi = np.array([1, -(2 ** 40), 7], np.int64)
    oi = np.zeros(3, np.int64)
    add_bool_scalar(pt.Context(device), xi, oi, True)
    np.testing.assert_array_equal(oi, xi + 1)
