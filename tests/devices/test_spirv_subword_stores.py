"""Concurrent stores to sub-word elements (bool, int8/uint8, int16/uint16, bfloat16: two or four to a
32-bit word on SPIR-V devices) on every device in POOT_TEST_DEVICES.

Many threads storing one value to one element (a "found" flag, a "seen" mark) must leave that value
whatever their number: a store built as an xor of the field's old bits with the new lets two such
stores cancel. Threads writing the other fields of the same word must keep theirs, and threads storing
different values to one element must leave one of those values, not a blend of their bits."""

import ml_dtypes
import numpy as np
import pytest

import poot as pt

DTYPES = {"bool": (pt.bool_, np.bool_), "int8": (pt.i8, np.int8), "uint8": (pt.u8, np.uint8),
          "int16": (pt.i16, np.int16), "uint16": (pt.u16, np.uint16), "bfloat16": (pt.bf16, ml_dtypes.bfloat16)}
# a value that differs from zero in several bits of the field, and a second one sharing none of them
VALUES = {"bool": (True, False), "int8": (-3, 84), "uint8": (165, 90), "int16": (-23131, 23130),
          "uint16": (0xA5A5, 0x5A5A), "bfloat16": (-1.5, 3.25)}


def _same_value_kernel(t):
    @pt.kernel
    def store_one(v: pt.In[t], o: pt.Out[t]):
        i = pt.thread_index()
        if i < len(v):
            o[0] = v[0]
    return store_one


def _mark_kernel(t):
    @pt.kernel
    def mark(idx: pt.In[pt.i32], v: pt.In[t], o: pt.Out[t]):
        i = pt.thread_index()
        if i < len(idx):
            o[idx[i]] = v[i]
    return mark


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("writers", [1, 2, 3, 8, 64, 200])
def test_same_value_from_many_threads(device, name, writers):
    t, np_t = DTYPES[name]
    v = np.full(writers, VALUES[name][0], np_t)
    o = np.zeros(4, np_t)
    _same_value_kernel(t)(pt.Context(device), v, o)
    np.testing.assert_array_equal(o.view(np.uint8), np.array([VALUES[name][0], 0, 0, 0], np_t).view(np.uint8))


@pytest.mark.parametrize("name", list(DTYPES))
def test_marks_with_repeated_indices_keep_neighbours(device, name):
    """Slots written by 1..4 threads each, every word's fields written concurrently by other threads."""
    t, np_t = DTYPES[name]
    a, b = VALUES[name]
    idx = np.array([0, 0, 1, 1, 1, 2, 3, 3, 3, 3, 5, 6, 6, 7] * 3, np.int32)
    v = np.where(idx % 2 == 0, np.array(a, np_t), np.array(b, np_t)).astype(np_t)
    o = np.zeros(9, np_t)
    _mark_kernel(t).launch(pt.Context(device), idx, v, o, threads=(len(idx), 1, 1))
    want = np.zeros(9, np_t)
    want[idx] = v
    np.testing.assert_array_equal(o.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("name", [n for n in DTYPES if n != "bool"])
def test_different_values_leave_one_of_them(device, name):
    """64 threads store one of two values with disjoint bits to element 1 (and its neighbours stay 0)."""
    t, np_t = DTYPES[name]
    a, b = VALUES[name]
    idx = np.ones(64, np.int32)
    v = np.where(np.arange(64) % 2 == 0, np.array(a, np_t), np.array(b, np_t)).astype(np_t)
    o = np.zeros(4, np_t)
    _mark_kernel(t).launch(pt.Context(device), idx, v, o, threads=(64, 1, 1))
    bits = o.view(np.uint8).reshape(4, -1)
    zero = np.zeros(bits.shape[1], np.uint8)
    for k in (0, 2, 3):
        np.testing.assert_array_equal(bits[k], zero)
    assert any(np.array_equal(bits[1], np.array([w], np_t).view(np.uint8)) for w in (a, b)), o
