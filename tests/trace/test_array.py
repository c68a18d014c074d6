"""The Array handle: attributes, realization methods, operators (reflected and in-place), NumPy
interop (__array__, __array_ufunc__, __array_function__), pickling and printing."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import poot as pt
from poot.trace import context
from tolerance import assert_close


def test_attributes(device):
    x = pt.zeros((2, 3), dtype=pt.float32)
    assert (x.shape, x.dtype, x.ndim, x.size, x.nbytes, x.itemsize) == ((2, 3), pt.float32, 2, 6, 24, 4)
    assert x.device == device and x.dtype == np.float32 and x.T.shape == (3, 2)
    assert pt.zeros((2, 3, 4)).mT.shape == (2, 4, 3) and isinstance(x, pt.ndarray)


def test_numpy_is_read_only_and_zero_copy(device):
    x = pt.asarray(np.arange(4.0)) * 2
    a, b = x.numpy(), np.asarray(x)
    assert not a.flags.writeable and not b.flags.writeable and a.tolist() == [0, 2, 4, 6]
    if context.backend(device).caps.target == "cpu":
        assert np.shares_memory(a, b)
    c = np.array(x)
    c[0] = 9  # np.array copies: writable, and x is unchanged
    assert x.tolist() == [0, 2, 4, 6] and np.asarray(x, dtype=np.float32).dtype == np.float32


def test_scalar_conversions(device):
    x = pt.asarray(np.array([2.5]))
    assert float(x[0]) == 2.5 and int(x[0]) == 2 and bool(x) is True and x.item() == 2.5
    with pytest.raises(TypeError, match="0-d"):    # NumPy 2 and JAX: 0-d arrays only
        float(x)
    i = pt.asarray(np.int64(3))
    assert [0, 1, 2, 3, 4][i] == 3 and complex(i) == 3
    with pytest.raises(TypeError):
        [0, 1][pt.asarray(1.0)]
    with pytest.raises(pt.ShapeError, match="size 1"):
        float(pt.zeros(3))
    assert pt.zeros((2, 2)).item(1, 1) == 0.0


def test_len_iter_tolist_contains(device):
    x = pt.asarray(np.arange(6).reshape(3, 2))
    assert len(x) == 3 and [r.tolist() for r in x] == [[0, 1], [2, 3], [4, 5]]
    assert x.tolist() == [[0, 1], [2, 3], [4, 5]] and 3 in x and 7 not in x
    with pytest.raises(TypeError):
        len(pt.asarray(1.0))
    with pytest.raises(TypeError):
        iter(pt.asarray(1.0))
    a, b = pt.random.split(pt.random.key(0))
    assert a.shape == (2,)


def test_repr_shows_values_shape_dtype_device(device):
    r = repr(pt.asarray(np.array([1.5, 2.0], np.float32)))
    assert r == f"Array([1.5, 2. ], shape=(2,), dtype=float32, device={device})"
    assert str(pt.arange(3)) == "[0 1 2]" and f"{pt.asarray(2.5):.2f}" == "2.50"
    assert "bfloat16" in repr(pt.ones(2, dtype=pt.bfloat16))


OPERATORS = [  # (expression on two operands, for NumPy arrays and poot arrays; does it use b?)
    (lambda a, b: a + b, 1), (lambda a, b: a - b, 1), (lambda a, b: a * b, 1), (lambda a, b: a / b, 1),
    (lambda a, b: a // b, 1), (lambda a, b: a % b, 1), (lambda a, b: a ** 2, 0), (lambda a, b: -a, 0),
    (lambda a, b: +a, 0), (lambda a, b: abs(a), 0), (lambda a, b: a < b, 1), (lambda a, b: a <= b, 1),
    (lambda a, b: a > b, 1), (lambda a, b: a >= b, 1), (lambda a, b: a == b, 1),
    (lambda a, b: a != b, 1), (lambda a, b: 2 - a, 0), (lambda a, b: 3.0 / b, 1),
    (lambda a, b: 2 ** a, 0), (lambda a, b: 1 + a, 0), (lambda a, b: a @ b.T, 1),
    (lambda a, b: divmod(a, b)[1], 1), (lambda a, b: a ** b, 1),
]
INT_OPERATORS = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a,
                 lambda a, b: a << 2, lambda a, b: a >> 1, lambda a, b: 255 & a]


@pytest.mark.parametrize("k", range(len(OPERATORS)))
def test_operators_match_numpy(device, k):
    a = np.linspace(0.5, 3.0, 12).reshape(3, 4)
    b = np.linspace(-2.0, 2.5, 12).reshape(3, 4)
    b[b == 0] = 1
    fn, uses_b = OPERATORS[k]
    r = fn(pt.asarray(a), pt.asarray(b))
    e = fn(a, b)
    assert r.dtype.np == e.dtype
    assert_close(r.numpy(), e, r.dtype, 4)
    if uses_b:
        mixed = fn(a, pt.asarray(b))  # a NumPy left operand defers to poot
        assert isinstance(mixed, pt.Array) and np.allclose(mixed.numpy(), e)


@pytest.mark.parametrize("k", range(len(INT_OPERATORS)))
def test_integer_operators_match_numpy(device, k):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(12, 0, -1, dtype=np.int32).reshape(3, 4)
    fn = INT_OPERATORS[k]
    assert np.array_equal(fn(pt.asarray(a), pt.asarray(b)).numpy(), fn(a, b))


def test_in_place_operators_update_the_object_and_keep_the_dtype(device):
    x = pt.asarray(np.arange(3, dtype=np.float32))
    y = x                 # the same object: it sees the update, as in NumPy
    z = x.copy()          # another handle on the old value keeps it
    x += 1
    x *= np.float64(2)  # the result is cast back to float32 (NumPy's same-kind rule)
    assert y is x and y.tolist() == [2, 4, 6] and z.tolist() == [0, 1, 2]
    assert x.dtype is pt.float32
    i = pt.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(pt.DTypeError, match="same-kind"):
        i += 1.5
    i //= 2
    i @= pt.ones((3, 3), dtype=pt.int32)
    assert i.tolist() == [1, 1, 1] and i.dtype is pt.int32


def test_ufuncs_and_functions_dispatch_to_poot(device):
    a = np.linspace(-1, 1, 6).reshape(2, 3)
    x = pt.asarray(a)
    for fn in (np.exp, np.sin, np.abs, np.negative, np.sqrt, np.isnan, np.floor):
        r = fn(x)
        assert isinstance(r, pt.Array)
        with np.errstate(invalid="ignore"):
            assert_close(r.numpy(), fn(a), r.dtype, 2)
    assert isinstance(np.add(x, 1), pt.Array) and isinstance(np.matmul(x, x.T), pt.Array)
    assert isinstance(np.maximum(a, x), pt.Array)
    assert_close(np.sum(x, axis=0).numpy(), a.sum(axis=0), pt.float64, 4)
    assert_close(np.where(x > 0, x, 0).numpy(), np.where(a > 0, a, 0), pt.float64)
    assert_close(np.concatenate([x, x]).numpy(), np.concatenate([a, a]), pt.float64)
    assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and np.size(x) == 6
    assert isinstance(np.trace(x), pt.Array) and np.isclose(float(np.trace(x)), np.trace(a))


def test_unknown_numpy_functions_fall_back_to_numpy(device):
    a = np.array([3.0, 1.0, 2.0])
    x = pt.asarray(a)
    r = np.asfortranarray(x)  # not in poot: realized, computed by NumPy, returned as a NumPy array
    assert isinstance(r, np.ndarray) and r.tolist() == [3, 1, 2]
    for got in (np.sort(x), np.sinc(x)):      # poot's own: lazy poot arrays
        assert isinstance(got, pt.Array)
    assert np.sort(x).numpy().tolist() == [1, 2, 3] and np.allclose(np.sinc(x).numpy(), np.sinc(a))
    out = np.empty(3)
    np.exp(x, out=out)
    assert np.allclose(out, np.exp(a))
    with pytest.raises(pt.DTypeError, match="immutable"):
        np.exp(a, out=x)


def test_pickle_and_copy(device):
    x = pt.asarray(np.arange(3.0)) + 1
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, pt.Array) and y.tolist() == [1, 2, 3]
    import copy

    z = copy.deepcopy(x)
    z[0] = 7
    assert x.tolist() == [1, 2, 3] and z.tolist() == [7, 2, 3]


def test_array_namespace(device):
    assert pt.asarray(1.0).__array_namespace__() is pt
    assert pt.result_type(pt.zeros(1, dtype=pt.int8), 1.0) is pt.float64
    assert pt.result_type(np.float32, pt.int16) is pt.float32


def test_format_spec_of_an_array_is_refused_as_numpy_does():
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    assert f"{x}" == str(np.arange(6.0).reshape(2, 3))
    assert f"{pt.asarray(2.25):.1f}" == f"{np.float64(2.25):.1f}"
    with pytest.raises(pt.ArgumentError, match="0-d"):       # NumPy: TypeError, which this is too
        f"{x:.2f}"
