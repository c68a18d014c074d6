"""NumPy semantics of in-place operators with complex operands, `out=` given to NumPy functions,
Python protocols (pow's 3-argument form, `in`, `==` with a string), the `flat` and `shape` setters,
and the names and classes of the errors a few calls raise."""
import numpy as np
import pytest

import poot as pt


# --- complex operands of augmented operators ------------------------------------------------------
@pytest.mark.parametrize("make", [lambda m: m.asarray([1.0, 2.0])[0], lambda m: m.asarray([1.0, 2.0]).sum()])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_complex_inplace_on_a_0d_element_rebinds_to_the_complex_value(make, op):
    results = []
    for m in (np, pt):
        s = make(m)
        if op == "add":
            s += 1j
        else:
            s *= 1 + 1j
        results.append(complex(s))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("y", [1j, [1j, 1j, 1j]])
def test_complex_inplace_on_a_real_array_is_the_same_kind_dtype_error(dtype, y):
    with pytest.raises(TypeError):          # NumPy: UFuncTypeError (Cannot cast ufunc 'add' output...)
        a = np.ones(3, dtype)
        a += np.asarray(y)
    x = pt.ones(3, dtype=dtype)
    with pytest.raises(pt.DTypeError, match=r"complex(64|128) and cannot be cast back"):
        x += pt.asarray(y) if isinstance(y, list) else y
    np.testing.assert_array_equal(x.numpy(), np.ones(3, dtype))


def test_complex_inplace_on_a_complex_array_still_works():
    x, a = pt.asarray([1j, 2.0]), np.asarray([1j, 2.0])
    x += 1 + 1j
    a += 1 + 1j
    np.testing.assert_array_equal(x.numpy(), a)


# --- out=<poot array> given to NumPy's functions ----------------------------------------------------
_OUT_CALLS = {
    "clip": lambda x: np.clip(x, 0, 1, out=x),
    "cumsum": lambda x: np.cumsum(x, out=x),
    "round": lambda x: np.round(x, 0, out=x),
    "mean": lambda x: np.mean(x.reshape(2, 3), axis=0, out=pt.zeros(3)),
    "sum": lambda x: np.sum(x.reshape(2, 3), axis=0, out=pt.zeros(3)),
    "dot": lambda x: np.dot(x.reshape(2, 3), x.reshape(3, 2), out=pt.zeros((2, 2))),
}


@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
def test_numpy_function_with_a_poot_out_is_refused_as_the_ufunc_path_does(name):
    x = pt.asarray(np.arange(6.0) - 2)
    with pytest.raises(pt.OutError, match=rf"np\.{name}: out= is not supported \(poot arrays are immutable"):
        _OUT_CALLS[name](x)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0) - 2)


def test_numpy_function_with_a_numpy_out_still_writes_it():
    x = pt.asarray(np.arange(6.0) - 2)
    got, want = np.zeros(6), np.zeros(6)
    np.clip(x, 0, 1, out=got)
    np.clip(np.arange(6.0) - 2, 0, 1, out=want)
    np.testing.assert_array_equal(got, want)


# --- pow, flat and shape --------------------------------------------------------------------------
def test_three_argument_pow_is_an_argument_error_naming_the_form():
    with pytest.raises(TypeError):
        pow(np.asarray(3), 2, 5)
    with pytest.raises(pt.ArgumentError, match=r"pow\(x, y, mod\): the 3-argument form"):
        pow(pt.asarray(3), 2, 5)
    assert int(pow(pt.asarray(3), 2)) == 9 and int(pt.asarray(3) ** 2) == 9


@pytest.mark.parametrize("value", [3, 2.5, [7.0, 8.0, 9.0, 10.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])
def test_flat_assignment_fills_every_element_cycling_values(value):
    x, a = pt.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
    y = x
    x.flat = value
    a.flat = value
    np.testing.assert_array_equal(y.numpy(), a)


@pytest.mark.parametrize("idx, value", [([0, 1, 2, 3], [7.0, 8.0]), (slice(1, 5), [7.0, 8.0, 9.0]),
                                        ([0, 1], [1.0, 2.0, 3.0]), ([1, 2], [[5.0], [6.0]]),
                                        (slice(None), 4.0), (2, 9.0)])
def test_flat_item_assignment_cycles_values_as_numpy(idx, value):
    x, a = pt.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
    x.flat[idx] = pt.asarray(value)
    a.flat[idx] = np.asarray(value)
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("shape", [(2, 3), (3, -1), 6, (1, 6, 1)])
def test_shape_assignment_reshapes_the_array_itself(shape):
    x, a = pt.arange(6), np.arange(6)
    alias = x
    x.shape = shape
    a.shape = shape
    assert alias.shape == a.shape
    np.testing.assert_array_equal(alias.numpy(), a)


def test_shape_assignment_of_another_size_is_a_shape_error():
    a = np.arange(6)
    with pytest.raises(ValueError):
        a.shape = (4,)
    x = pt.arange(6)
    with pytest.raises(pt.ShapeError, match="reshape"):
        x.shape = (4,)
    assert x.shape == (6,)


# --- messages and classes -------------------------------------------------------------------------
@pytest.mark.parametrize("call, cls, name", [
    (lambda m: int(m.asarray(float("nan"))), ValueError, "int()"),
    (lambda m: int(m.asarray(float("inf"))), OverflowError, "int()"),
])
def test_int_and_float_conversions_name_the_builtin(call, cls, name):
    with pytest.raises(cls):
        call(np)
    with pytest.raises(cls) as info:
        call(pt)
    assert isinstance(info.value, pt.PootError)
    assert str(info.value).startswith(name) and "__" not in str(info.value)


def test_float_of_complex_names_float():
    with pytest.raises(pt.PootError, match=r"^float\(\):") as info:
        float(pt.asarray(1 + 2j))
    assert "float__" not in str(info.value)


def test_fill_out_of_range_names_fill():
    with pytest.raises((OverflowError, ValueError)):
        np.zeros((2, 2), dtype=np.uint8).fill(-1)
    with pytest.raises(pt.DTypeError, match="^fill: Python integer -1"):
        pt.zeros((2, 2), dtype=pt.uint8).fill(-1)
    x = pt.zeros(3, dtype=pt.uint8)
    x.fill(255)
    np.testing.assert_array_equal(x.numpy(), np.full(3, 255, np.uint8))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum"])
def test_at_with_a_value_of_the_wrong_shape_names_the_ufunc_at(name):
    with pytest.raises(ValueError):
        getattr(np, name).at(np.zeros(3), [0], [1.0, 2.0])
    a = pt.zeros(3)     # held by a name: a temporary would be refused as a lost write first
    with pytest.raises(pt.ShapeError, match=rf"^{name}\.at: ") as info:
        getattr(pt, name).at(a, [0], [1.0, 2.0])
    assert str(info.value).count("(at ") == 1


def test_item_out_of_range_gives_numpys_words():
    with pytest.raises(IndexError):
        np.arange(6.0).item(100)
    with pytest.raises(pt.PootIndexError, match=r"^item: index 100 is out of bounds for axis 0 with size 6") as info:
        pt.arange(6.0).item(100)
    assert "could not use" not in str(info.value)
    assert pt.arange(6.0).item(3) == np.arange(6.0).item(3)


@pytest.mark.parametrize("method", ["sort", "argsort"])
def test_sort_kind_is_checked_as_numpy(method):
    a, x = np.asarray([3, 1, 2]), pt.asarray([3, 1, 2])
    with pytest.raises(ValueError, match="sort kind"):
        getattr(a, method)(kind="bogus")
    with pytest.raises(pt.ArgumentValueError, match="kind must be one of .*quicksort.*'bogus'"):
        getattr(x, method)(kind="bogus")
    with pytest.raises(pt.ArgumentError, match="must be str"):
        getattr(x, method)(kind=3)
    for kind in ("quicksort", "Q", "mergesort", "heapsort", "stable", None):
        a, x = np.asarray([3, 1, 2]), pt.asarray([3, 1, 2])
        got, want = getattr(x, method)(kind=kind), getattr(a, method)(kind=kind)
        np.testing.assert_array_equal(x.numpy() if got is None else got.numpy(), a if want is None else want)


@pytest.mark.parametrize("value", [None, "a", b"a"])
def test_in_with_none_or_a_string_is_false(value):
    assert (value in np.arange(3)) is False
    assert (value in pt.arange(3)) is False
    assert (1 in pt.arange(3)) is True and (5 in pt.arange(3)) is False


@pytest.mark.parametrize("other", ["a", b"a"])
def test_compare_with_a_string_is_an_array_as_numpy_2(other):
    a, x = np.arange(3), pt.arange(3)
    np.testing.assert_array_equal((x == other).numpy(), a == other)
    np.testing.assert_array_equal((x != other).numpy(), a != other)
    assert not (x == other).any()
