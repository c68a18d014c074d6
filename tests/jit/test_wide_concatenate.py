"""Arrays built from many lazy pieces (`pt.asarray` of nested lists of scalars, `pt.stack` and
`pt.concatenate` of many small slices): a nest of concatenates, computed piece by piece on the CPU
(several kernels where it reads more than 128 buffers: n=12 below reads 144 scalars) and as a select
tree on GPUs. Values match NumPy exactly."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

DTYPES = [np.float32, np.float64, np.int32, np.int64]


def _values(n: int, dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 12])
def test_outer_product_of_lazy_scalars(device, n, dtype):
    a, b = _values(n, dtype, 0), _values(n, dtype, 1)
    x1, x2 = pt.asarray(a), pt.asarray(b)
    got = pt.asarray([[x1[i] * x2[j] for j in range(n)] for i in range(n)]).numpy()
    want = np.array([[a[i] * b[j] for j in range(n)] for i in range(n)], dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_of_many_scalars(device, dtype):
    a = _values(300, dtype, 2)
    x = pt.asarray(a)
    got = pt.stack([x[i] + x[299 - i] for i in range(300)]).numpy()
    np.testing.assert_array_equal(got, a + a[::-1])


def test_nested_lists_three_deep(device):
    a = _values(24, np.float64, 3)
    x = pt.asarray(a)
    got = pt.asarray([[[x[4 * i + 2 * j + k] for k in range(2)] for j in range(2)] for i in range(6)])
    np.testing.assert_array_equal(got.numpy(), a.reshape(6, 2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate_of_small_slices(device, dtype):
    a = _values(90, dtype, 4)
    x = pt.asarray(a)
    parts = [x[i:i + 3] * 2 + x[i + 1:i + 4] for i in range(0, 87, 3)]
    want = np.concatenate([a[i:i + 3] * 2 + a[i + 1:i + 4] for i in range(0, 87, 3)])
    np.testing.assert_array_equal(pt.concatenate(parts).numpy(), want)


def test_concatenate_along_inner_axis_of_2d_slices(device):
    a = _values(4 * 50, np.float32, 5).reshape(4, 50)
    x = pt.asarray(a)
    got = pt.concatenate([x[:, i:i + 2] - x[:, i + 1:i + 3] for i in range(0, 48, 2)], axis=1)
    want = np.concatenate([a[:, i:i + 2] - a[:, i + 1:i + 3] for i in range(0, 48, 2)], axis=1)
    np.testing.assert_array_equal(got.numpy(), want)


def test_stack_of_rows_along_axis_1(device):
    a = _values(8 * 30, np.int32, 6).reshape(8, 30)
    x = pt.asarray(a)
    got = pt.stack([x[i] * 3 for i in range(8)], axis=1)
    np.testing.assert_array_equal(got.numpy(), np.stack([a[i] * 3 for i in range(8)], axis=1))


def test_empty_and_wide_pieces_together(device):
    a = _values(40, np.float64, 7)
    x = pt.asarray(a)
    parts = [x[:0], x[5:25], x[3:3]] + [x[i] for i in range(10)] + [x[30:40] * 2]
    want = np.concatenate([a[5:25]] + [a[i:i + 1] for i in range(10)] + [a[30:40] * 2])
    got = pt.concatenate([p.reshape(-1) if p.ndim == 0 else p for p in parts])
    np.testing.assert_array_equal(got.numpy(), want)


def test_only_empty_pieces_then_read_by_other_ops(device):
    """Every piece empty along the axis: the result has no element, and ops reading it (a negation, a
    sum to 0) still compile."""
    x = pt.asarray(np.zeros((2, 0, 3)))
    got = pt.concatenate([-(-x), x * 2], axis=1)
    assert got.numpy().shape == (2, 0, 3)
    assert float((-got).sum().numpy()) == 0.0


def test_wide_concatenate_read_through_other_ops(device):
    a = _values(200, np.float32, 8)
    x = pt.asarray(a)
    stacked = pt.stack([x[i] for i in range(200)])
    np.testing.assert_array_equal((stacked * 2 + 1).numpy(), a * 2 + 1)        # the root is no concatenate
    np.testing.assert_array_equal(stacked[37:45].numpy(), a[37:45])          # a few of the pieces
    np.testing.assert_array_equal(stacked.reshape(20, 10)[3].numpy(), a[30:40])


def test_concatenate_appended_in_a_loop(device):
    a = _values(400, np.float32, 9)
    x = pt.asarray(a)
    acc = x[0:1]
    for i in range(1, 400):                 # 399 nested concatenates, each reading the one before
        acc = pt.concatenate([acc, x[i:i + 1] * 2])
    np.testing.assert_array_equal(acc.numpy(), np.concatenate([a[:1], a[1:] * 2]))
