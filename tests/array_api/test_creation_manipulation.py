"""Creation functions (defaults, dtype=, device=, copy=) and manipulation functions of the standard,
on 0-d, empty and ordinary arrays, against the standard's text."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_default_dtypes(device):
    assert pt.asarray(1).dtype is pt.int64 and pt.asarray(1.5).dtype is pt.float64
    assert pt.asarray(True).dtype is pt.bool and pt.asarray([1, 2.0]).dtype is pt.float64
    for fn in (pt.zeros, pt.ones, pt.empty):
        assert fn((2,)).dtype is pt.float64 and fn(()).shape == () and fn((0, 2)).shape == (0, 2)
    assert pt.full((2,), 3).dtype is pt.int64 and pt.full((2,), True).dtype is pt.bool
    assert pt.arange(3).dtype is pt.int64 and pt.arange(3.0).dtype is pt.float64
    assert pt.eye(2).dtype is pt.float64 and pt.linspace(0, 1, 3).dtype is pt.float64


def test_creation_with_dtype_and_device(device):
    for fn in (pt.zeros, pt.ones, pt.empty):
        x = fn((2, 3), dtype=pt.int16, device=device)
        assert (x.dtype, x.shape, x.device) == (pt.int16, (2, 3), device)
    x = pt.full((2,), 7, dtype=pt.uint8, device=device)
    np.testing.assert_array_equal(x.numpy(), [7, 7])
    for fn in (pt.zeros_like, pt.ones_like, pt.empty_like):
        y = fn(x)
        assert (y.dtype, y.shape, y.device) == (pt.uint8, (2,), device)
        assert fn(x, dtype=pt.float32).dtype is pt.float32
    np.testing.assert_array_equal(pt.full_like(x, 4).numpy(), [4, 4])
    assert pt.asarray([1, 2], dtype=pt.int8, device=device).device == device


def test_arange_linspace_eye(device):
    np.testing.assert_array_equal(pt.arange(5).numpy(), np.arange(5))
    np.testing.assert_array_equal(pt.arange(2, 11, 3).numpy(), np.arange(2, 11, 3))
    np.testing.assert_array_equal(pt.arange(5, 1, -2).numpy(), [5, 3])
    assert pt.arange(3, 3).shape == (0,) and pt.arange(0.0, 1.0, 0.25).shape == (4,)
    np.testing.assert_allclose(pt.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(pt.linspace(0, 1, 4, endpoint=False).numpy(), [0, 0.25, 0.5, 0.75])
    assert pt.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_array_equal(pt.eye(2, 3, k=1).numpy(), np.eye(2, 3, k=1))
    np.testing.assert_array_equal(pt.eye(3, k=-1, dtype=pt.int8).numpy(), np.eye(3, k=-1))
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(pt.tril(pt.asarray(a), k=1).numpy(), np.tril(a, 1))
    np.testing.assert_array_equal(pt.triu(pt.asarray(a), k=-1).numpy(), np.triu(a, -1))
    xs, ys = pt.meshgrid(pt.arange(3), pt.arange(2))
    assert xs.shape == (2, 3) and pt.meshgrid(pt.arange(3), pt.arange(2), indexing="ij")[0].shape == (3, 2)


def test_asarray_copy_semantics():
    x = pt.asarray([1.0, 2.0])
    assert pt.asarray(x) is x and pt.asarray(x, copy=False) is x
    y = pt.asarray(x, copy=True)
    assert y is not x
    y[0] = 5.0  # a copy: writing it leaves x alone
    assert x.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(pt.CopyError, match="dtype float32"):
        pt.asarray(x, dtype=pt.float32, copy=False)
    host = np.array([1, 2])
    z = pt.asarray(host)
    host[0] = 9
    assert z.numpy().tolist() == [1, 2]  # host data is always copied in


def test_astype_copy_semantics(device):
    x = pt.asarray([1.7, -1.7])
    assert pt.astype(x, pt.float64, copy=False) is x
    assert pt.astype(x, pt.float64) is not x
    np.testing.assert_array_equal(pt.astype(x, pt.int32).numpy(), [1, -1])
    assert pt.astype(x, pt.float32, device=device).device == device
    assert x.astype(pt.float64, copy=False) is x


def test_expand_dims_squeeze(device):
    x = pt.ones((2, 3))
    assert pt.expand_dims(x).shape == (1, 2, 3)  # the standard's default axis=0
    assert pt.expand_dims(x, axis=-1).shape == (2, 3, 1) and pt.expand_dims(x, axis=1).shape == (2, 1, 3)
    assert pt.expand_dims(pt.asarray(1.0)).shape == (1,)
    assert pt.squeeze(pt.ones((1, 2, 1)), axis=0).shape == (2, 1)
    assert pt.squeeze(pt.ones((1, 2, 1)), axis=(0, 2)).shape == (2,)
    with pytest.raises(pt.ShapeError, match="cannot remove axis 1"):
        pt.squeeze(x, axis=1)
    with pytest.raises(pt.AxisError):
        pt.expand_dims(x, axis=4)


def test_concat_stack_unstack(device):
    a, b = np.arange(6).reshape(2, 3), np.arange(6, 12).reshape(2, 3)
    x, y = pt.asarray(a), pt.asarray(b)
    np.testing.assert_array_equal(pt.concat([x, y]).numpy(), np.concatenate([a, b]))
    np.testing.assert_array_equal(pt.concat([x, y], axis=-1).numpy(), np.concatenate([a, b], -1))
    np.testing.assert_array_equal(pt.concat([x, y], axis=None).numpy(), np.concatenate([a, b], None))
    assert pt.concat([x, pt.ones((0, 3), dtype=pt.int8)]).dtype is pt.int64
    np.testing.assert_array_equal(pt.stack([x, y], axis=1).numpy(), np.stack([a, b], 1))
    assert pt.stack([pt.asarray(1), pt.asarray(2)]).shape == (2,)
    parts = pt.unstack(x, axis=1)
    assert isinstance(parts, tuple) and len(parts) == 3
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.numpy(), a[:, i])
    assert pt.unstack(pt.ones((0, 2))) == ()
    np.testing.assert_array_equal(pt.stack(pt.unstack(x)).numpy(), a)
    with pytest.raises(pt.AxisError):
        pt.unstack(pt.asarray(1.0))


def test_movement_functions(device):
    a = np.arange(24).reshape(2, 3, 4)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.permute_dims(x, (2, 0, 1)).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(pt.moveaxis(x, 0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(pt.moveaxis(x, (0, 1), (2, 0)).numpy(), np.moveaxis(a, (0, 1), (2, 0)))
    np.testing.assert_array_equal(pt.flip(x).numpy(), np.flip(a))
    np.testing.assert_array_equal(pt.flip(x, axis=(0, 2)).numpy(), np.flip(a, (0, 2)))
    np.testing.assert_array_equal(pt.roll(x, 2).numpy(), np.roll(a, 2))
    np.testing.assert_array_equal(pt.roll(x, (1, -1), axis=(0, 2)).numpy(), np.roll(a, (1, -1), (0, 2)))
    np.testing.assert_array_equal(pt.reshape(x, (4, -1)).numpy(), a.reshape(4, -1))
    assert pt.reshape(x, (24,), copy=True).shape == (24,)
    np.testing.assert_array_equal(pt.matrix_transpose(x).numpy(), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(pt.broadcast_to(pt.asarray([1, 2]), (3, 2)).numpy(), [[1, 2]] * 3)
    p, q = pt.broadcast_arrays(pt.ones((2, 1)), pt.ones((3,)), )
    assert p.shape == q.shape == (2, 3)
    np.testing.assert_array_equal(pt.tile(pt.asarray([1, 2]), (2, 2)).numpy(), np.tile([1, 2], (2, 2)))
    with pytest.raises(pt.ShapeError, match="cannot reshape"):
        pt.reshape(x, (5, 5))


def test_repeat(device):
    a = np.arange(6).reshape(2, 3)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.repeat(x, 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(pt.repeat(x, 2, axis=1).numpy(), np.repeat(a, 2, axis=1))
    counts = pt.asarray([0, 3])  # a data-dependent shape: the counts are realized
    np.testing.assert_array_equal(pt.repeat(x, counts, axis=0).numpy(), np.repeat(a, [0, 3], axis=0))
    assert pt.repeat(pt.ones((0,)), 3).shape == (0,)


def test_take_and_indexing(device):
    a = np.arange(12.0).reshape(3, 4)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.take(x, pt.asarray([2, 0]), axis=0).numpy(), a[[2, 0]])
    np.testing.assert_array_equal(pt.take(x, pt.asarray([3, 3]), axis=1).numpy(), a[:, [3, 3]])
    np.testing.assert_array_equal(pt.take(pt.asarray([5, 6, 7]), pt.asarray([2])).numpy(), [7])
    np.testing.assert_array_equal(x[1, ...].numpy(), a[1, ...])
    np.testing.assert_array_equal(x[None, :, ::-2].numpy(), a[None, :, ::-2])
    np.testing.assert_array_equal(x[x > 5.0].numpy(), a[a > 5.0])  # boolean mask: realizes
    assert x[pt.zeros((3, 4), dtype=pt.bool)].shape == (0,)
    y = pt.asarray(a)
    y[y > 5.0] = 0.0
    np.testing.assert_array_equal(y.numpy(), np.where(a > 5.0, 0.0, a))
    with pytest.raises(pt.PootIndexError, match="out of bounds"):
        x[3]
