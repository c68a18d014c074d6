"""A scatter with repeated indices into an array a SPIR-V device stores as fields of 32-bit words (bool,
int8, uint8, int16, uint16, bfloat16) keeps one write per element, as NumPy does (the last): each field
used to be written by an atomic xor of its old bits with the new, so two writes to one element combined
into the xor of their values (poot/trace/indexing.py `_scatter_by_winner`)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

DTYPES = ["int8", "uint8", "int16", "uint16", "bool", "bfloat16"]


@pytest.fixture(params=["vulkan", "wgpu"])
def spirv(request):
    try:
        ctx = pt.device(request.param)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device '{request.param}' is unavailable here: {e}")
    with ctx:
        yield request.param


def _values(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype == "bfloat16":            # values bfloat16 holds exactly
        return rng.integers(-60, 60, n).astype(np.float32) / 4
    return rng.integers(1, 100, n).astype(dtype)


def _poot(a, dtype):
    x = pt.asarray(a)
    return x.astype(pt.bfloat16) if dtype == "bfloat16" else x


def _host(x, dtype):
    return (x.astype(pt.float32) if dtype == "bfloat16" else x).numpy()


def _np_dtype(dtype):
    return np.float32 if dtype == "bfloat16" else dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_index_set_1d(spirv, dtype):
    idx = np.array([0, 0, 3, 3, 3, 5, 1, 5, 0, 6, 6])
    vals = _values(dtype, idx.size)
    if dtype not in ("bool",):                      # make the xor of two writes differ from the last
        vals[1], vals[0] = vals[0] + 1, vals[0]
    want = np.zeros(8, _np_dtype(dtype))
    want[idx] = vals
    x = _poot(np.zeros(8, _np_dtype(dtype)), dtype)
    x[pt.asarray(idx)] = _poot(vals, dtype)
    np.testing.assert_array_equal(_host(x, dtype), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_index_set_rows(spirv, dtype):
    idx = np.array([1, 2, 1, 1, 0, 2])
    vals = _values(dtype, idx.size * 5, seed=1).reshape(idx.size, 5)
    want = np.zeros((4, 5), _np_dtype(dtype))
    want[idx] = vals
    x = _poot(np.zeros((4, 5), _np_dtype(dtype)), dtype)
    x[pt.asarray(idx)] = _poot(vals, dtype)
    np.testing.assert_array_equal(_host(x, dtype), want)


def test_bool_mark_visited(spirv):
    visited = pt.zeros(6, dtype=pt.bool)
    visited[pt.asarray(np.array([1, 3, 3, 4, 4, 4]))] = True
    np.testing.assert_array_equal(visited.numpy(), [False, True, False, True, True, False])
    v = pt.zeros(3, dtype=pt.bool)
    v[pt.asarray(np.array([1, 1]))] = pt.asarray(np.array([True, False]))
    np.testing.assert_array_equal(v.numpy(), [False, False, False])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "bfloat16"])
def test_repeated_index_iadd_and_put(spirv, dtype):
    base = np.arange(1, 7).astype(_np_dtype(dtype))
    idx = np.array([0, 0, 2, 2, 2])
    add = np.array([3, 4, 1, 2, 5]).astype(_np_dtype(dtype))
    want = base.copy()
    want[idx] += add                                # no accumulation: the last write wins
    x = _poot(base, dtype)
    x[pt.asarray(idx)] += _poot(add, dtype)
    np.testing.assert_array_equal(_host(x, dtype), want)

    want = base.copy()
    np.put(want, [1, 1, 4], np.array([12, 3, 9]).astype(_np_dtype(dtype)))
    y = _poot(base, dtype)
    pt.put(y, pt.asarray(np.array([1, 1, 4])), _poot(np.array([12, 3, 9]).astype(_np_dtype(dtype)), dtype))
    np.testing.assert_array_equal(_host(y, dtype), want)


@pytest.mark.parametrize("dtype", ["int8", "bool"])
def test_repeated_index_set_under_jit(spirv, dtype):
    @pt.jit
    def f(x, i, v):
        x = x + 0 if dtype != "bool" else x | False
        x[i] = v
        return x

    idx = np.array([2, 2, 0, 2])
    vals = np.array([1, 0, 1, 0]).astype(dtype) if dtype == "bool" else np.array([44, 5, 7, 9], np.int8)
    want = np.zeros(4, dtype)
    want[idx] = vals
    got = f(pt.zeros(4, dtype=getattr(pt, "bool" if dtype == "bool" else dtype)), pt.asarray(idx),
            pt.asarray(vals))
    np.testing.assert_array_equal(got.numpy(), want)
