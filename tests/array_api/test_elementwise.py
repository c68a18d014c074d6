"""Each elementwise function of the standard: its result dtype (the standard's rule for that
function), and its values against NumPy on 0-d, empty and broadcast operands of every dtype kind it
takes."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

FLOAT_UNARY = {  # name -> NumPy function, domain of the test values
    "acos": (np.arccos, "unit"), "acosh": (np.arccosh, "ge1"), "asin": (np.arcsin, "unit"),
    "asinh": (np.arcsinh, None), "atan": (np.arctan, None), "atanh": (np.arctanh, "unit"),
    "cos": (np.cos, None), "cosh": (np.cosh, None), "exp": (np.exp, None), "expm1": (np.expm1, None),
    "log": (np.log, "pos"), "log1p": (np.log1p, "pos"), "log2": (np.log2, "pos"),
    "log10": (np.log10, "pos"), "sin": (np.sin, None), "sinh": (np.sinh, None), "sqrt": (np.sqrt, "pos"),
    "tan": (np.tan, None), "tanh": (np.tanh, None),
}
NUMERIC_UNARY = {"abs": np.abs, "negative": np.negative, "positive": np.positive, "square": np.square,
                 "sign": np.sign, "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.round,
                 "conj": np.conj, "real": np.real, "imag": np.imag}
PREDICATES = {"isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "signbit": np.signbit}
ARITH = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
         "minimum": np.minimum, "floor_divide": np.floor_divide, "remainder": np.remainder,
         "pow": np.power}
FLOAT_BINARY = {"divide": np.divide, "atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot,
                "logaddexp": np.logaddexp}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
           "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}

SHAPES = {"0d": ((), ()), "empty": ((0, 3), (3,)), "broadcast": ((2, 1), (3,))}


def data(dtype, shape, seed=0, domain=None):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.random(shape) < 0.5
    if d.kind == "u":
        return rng.integers(0, 8, shape).astype(d)
    if d.kind == "i":
        return rng.integers(-6, 7, shape).astype(d)
    x = rng.standard_normal(shape) * 2
    x = {"unit": np.clip(x / 3, -0.95, 0.95), "ge1": np.abs(x) + 1, "pos": np.abs(x) + 0.1}.get(domain, x)
    return x.astype(d)


def _check(r, expected, dtype, ops=2):
    assert isinstance(r, pt.Array)
    assert r.dtype == pt.asarray(np.zeros((), expected.dtype)).dtype, (r.dtype, expected.dtype)
    assert r.shape == expected.shape
    assert_close(r.numpy(), expected, r.dtype if r.dtype.kind != "b" else pt.bool, ops=ops)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_keeps_the_float_dtype(name, dtype, shape, device):
    fn, domain = FLOAT_UNARY[name]
    x = data(dtype, SHAPES[shape][0], domain=domain)
    _check(getattr(pt, name)(pt.asarray(x)), fn(x), dtype, ops=4)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(NUMERIC_UNARY))
def test_numeric_unary_keeps_the_dtype(name, dtype, device):
    for shape in ((), (0,), (2, 3)):
        x = data(dtype, shape)
        if name in ("negative", "abs", "sign") and dtype == "uint8":
            continue  # unsigned negation wraps in both; checked by the kernel tests
        _check(getattr(pt, name)(pt.asarray(x)), np.asarray(NUMERIC_UNARY[name](x)), dtype)


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_predicates_return_bool(name, dtype, device):
    x = data(dtype, (4,))
    if name == "signbit" and dtype == "int16":
        return  # the standard defines signbit for floats only
    r = getattr(pt, name)(pt.asarray(x))
    assert r.dtype is pt.bool
    np.testing.assert_array_equal(r.numpy(), PREDICATES[name](x))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtypes", [("int8", "int8"), ("int8", "uint8"), ("uint16", "uint32"),
                                    ("float32", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("name", sorted(ARITH))
def test_arithmetic_promotes_and_broadcasts(name, dtypes, shape, device):
    a = data(dtypes[0], SHAPES[shape][0], 1)
    b = data(dtypes[1], SHAPES[shape][1], 2)
    if name in ("floor_divide", "remainder") and np.dtype(dtypes[1]).kind in "iu":
        b = np.where(b == 0, 3, b).astype(b.dtype)  # integer division by zero is unspecified
    if name == "pow" and np.dtype(dtypes[1]).kind in "iu":
        b = np.abs(b) % 3  # negative integer powers are unspecified
        a = np.clip(a, -3, 3).astype(a.dtype)
    with np.errstate(all="ignore"):
        want = ARITH[name](a, b)
    _check(getattr(pt, name)(pt.asarray(a), pt.asarray(b)), want, want.dtype, ops=4)


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary(name, dtypes, device):
    for sa, sb in SHAPES.values():
        a, b = data(dtypes[0], sa, 1), data(dtypes[1], sb, 2)
        with np.errstate(all="ignore"):
            want = FLOAT_BINARY[name](a, b)
        _check(getattr(pt, name)(pt.asarray(a), pt.asarray(b)), want, want.dtype, ops=4)


@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int8", "uint8"), ("float32", "float64")])
@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons_return_bool(name, dtypes, device):
    for sa, sb in SHAPES.values():
        a, b = data(dtypes[0], sa, 1), data(dtypes[1], sb, 2)
        if name not in ("equal", "not_equal") and dtypes[0] == "bool":
            continue  # the standard orders real-valued data only
        r = getattr(pt, name)(pt.asarray(a), pt.asarray(b))
        assert r.dtype is pt.bool
        np.testing.assert_array_equal(r.numpy(), COMPARE[name](a, b))


@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int8", "int8"), ("int16", "uint8"),
                                    ("uint64", "uint64")])
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_bitwise(name, dtypes, device):
    a, b = data(dtypes[0], (2, 1), 1), data(dtypes[1], (3,), 2)
    if "shift" in name:
        if dtypes[0] == "bool":
            return  # shifts take integers only
        b = (np.abs(b) % 4).astype(b.dtype)
    r = getattr(pt, name)(pt.asarray(a), pt.asarray(b))
    want = BITWISE[name](a, b)
    assert r.dtype == pt.asarray(want).dtype
    np.testing.assert_array_equal(r.numpy(), want)
    np.testing.assert_array_equal(pt.bitwise_invert(pt.asarray(a)).numpy(), np.invert(a))


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical(name, device):
    a, b = data("bool", (2, 1), 1), data("bool", (3,), 2)
    r = getattr(pt, name)(pt.asarray(a), pt.asarray(b))
    assert r.dtype is pt.bool
    np.testing.assert_array_equal(r.numpy(), LOGICAL[name](a, b))
    np.testing.assert_array_equal(pt.logical_not(pt.asarray(a)).numpy(), ~a)


def test_bitwise_right_shift_is_arithmetic(device):
    x = pt.asarray(np.array([-8, -7, 7], np.int8))
    np.testing.assert_array_equal(pt.bitwise_right_shift(x, 1).numpy(), [-4, -4, 3])


def test_round_is_half_to_even(device):
    x = pt.asarray([0.5, 1.5, 2.5, -0.5, -2.5, 3.4999])
    np.testing.assert_array_equal(pt.round(x).numpy(), [0.0, 2.0, 2.0, -0.0, -2.0, 3.0])


def test_clip(device):
    x = pt.asarray(np.array([-3, 0, 5, 9], np.int16))
    r = pt.clip(x, 0, 6)
    assert r.dtype is pt.int16
    np.testing.assert_array_equal(r.numpy(), [0, 0, 5, 6])
    np.testing.assert_array_equal(pt.clip(x).numpy(), x.numpy())  # no bounds: x itself
    f = pt.asarray([np.nan, -2.0, 2.0])
    np.testing.assert_array_equal(pt.clip(f, max=1.0).numpy(), [np.nan, -2.0, 1.0])
    lo = pt.asarray([[0.0], [-5.0]])
    assert pt.clip(f, min=lo, max=1.0).shape == (2, 3)
    r = pt.clip(pt.asarray([1.0, 2.0]), min=pt.asarray(np.nan), max=pt.asarray([1.5, np.nan]))
    assert np.isnan(r.numpy()).all()  # the standard: a NaN bound gives NaN


def test_bad_operands_are_named():
    with pytest.raises(pt.ShapeError, match=r"add.*\(2,\).*\(3,\)"):
        pt.add(pt.ones(2), pt.ones(3))
    with pytest.raises(pt.DTypeError, match="bitwise_and does not accept float64"):
        pt.bitwise_and(pt.ones(2), pt.ones(2))
    with pytest.raises(pt.DTypeError, match="subtract is not defined for bool"):
        pt.subtract(pt.asarray([True]), pt.asarray([False]))
