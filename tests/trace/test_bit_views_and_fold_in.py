"""`x.view(dtype)` reinterprets bits between dtypes of one width; `pt.random.fold_in` takes traced ints."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt

PAIRS = [(np.float32, np.uint32), (np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64),
         (np.uint64, np.float64), (np.float16, np.uint16), (np.float16, ml_dtypes.bfloat16),
         (np.int8, np.uint8), (np.uint16, np.int16)]


@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda d: np.dtype(d).name)
def test_view_matches_numpy(device, src, dst):
    rng = np.random.default_rng(0)
    if np.dtype(src).kind == "f":
        x = np.concatenate([rng.standard_normal(13) * 100, [0.0, -0.0, np.inf, -np.inf]]).astype(src)
    else:
        info = np.iinfo(src)
        x = rng.integers(info.min, info.max, 17, dtype=src, endpoint=True)
    got = pt.array(x).view(dst).numpy()
    want = x.view(dst)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_view_round_trip_and_jit(device):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    f = pt.jit(lambda a: (a.view(pt.uint32) ^ 0x80000000).view(pt.float32))   # flip the sign bit
    np.testing.assert_array_equal(f(pt.array(x)).numpy(), -x)
    a = pt.array(x)
    assert a.view() is a and a.view(pt.float32) is a


def test_view_refuses_other_widths():
    a = pt.array(np.ones(4, np.float32))
    with pytest.raises(pt.DTypeError, match="float32 .32 bits. cannot be viewed as float64"):
        a.view(pt.float64)
    with pytest.raises(pt.DTypeError, match="same width"):
        pt.array(np.ones(4, np.uint8)).view(pt.bool_)


@pytest.mark.parametrize("data", [0, 5, 2**31 + 7, 2**32 + 5])
def test_fold_in_traced_equals_python_int(device, data):
    key = pt.random.key(42)
    want = pt.random.fold_in(key, data).numpy()
    got = pt.random.fold_in(key, pt.asarray(data, dtype=pt.int64)).numpy()
    np.testing.assert_array_equal(got, want)
    jitted = pt.jit(lambda k, i: pt.random.fold_in(k, i))
    np.testing.assert_array_equal(jitted(key, pt.asarray(data, dtype=pt.int64)).numpy(), want)


def test_fold_in_inside_a_loop_gives_each_step_its_key(device):
    key = pt.random.key(1)

    def body(i, acc):
        return acc + pt.random.uniform(pt.random.fold_in(key, i), (), dtype=pt.float32)

    total = pt.fori_loop(0, 4, body, pt.asarray(0.0, dtype=pt.float32))
    want = sum(float(pt.random.uniform(pt.random.fold_in(key, i), (), dtype=pt.float32)) for i in range(4))
    np.testing.assert_allclose(float(total), want, rtol=1e-6)


def test_fold_in_refuses_non_integers():
    key = pt.random.key(0)
    with pytest.raises(pt.DTypeError, match="integer scalar"):
        pt.random.fold_in(key, pt.asarray(1.5))
    with pytest.raises(pt.DTypeError, match="integer"):
        pt.random.fold_in(key, 1.5)
