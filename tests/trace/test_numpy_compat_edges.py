"""Places where NumPy users' habits meet poot: dtype strings read as NumPy reads them, float-only
functions' result dtypes with Python scalars, shapes with negative sizes, and the exception types NumPy
code catches."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_dtype_strings_follow_numpy_where_numpy_reads_them():
    a = np.array([2**40, 300, -1])
    for code in ("i8", "u8", "i4", "f4", "f8", "u1", "i2", "c16", "int64", "float32"):
        got = pt.asarray(a).astype(code)
        want = a.astype(code)
        assert str(got.dtype) == str(want.dtype), code
        np.testing.assert_array_equal(got.numpy(), want)
    assert pt.int64 == "i8" and pt.int8 != "i8" and pt.uint64 == "u8"
    assert pt.iinfo("i8").max == np.iinfo(np.int64).max
    assert pt.zeros(2, dtype="f32").dtype == pt.float32 and pt.zeros(2, dtype="bf16").dtype == pt.bfloat16
    with pytest.raises(pt.DTypeError, match="'f16'"):       # NumPy's float128
        pt.zeros(2, dtype="f16")


@pytest.mark.parametrize("name", ["hypot", "arctan2", "copysign", "logaddexp", "logaddexp2", "nextafter",
                                  "heaviside"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int64, np.float16, np.float32])
def test_float_only_functions_take_numpys_dtype_with_python_scalars(name, dtype):
    a = np.array([0, 1, 3], dtype)
    for other in (True, 2, 2.5, np.array([1, 0, 2], np.uint8)):
        want = getattr(np, name)(a, other)
        got = getattr(pt, name)(pt.asarray(a), pt.asarray(other) if isinstance(other, np.ndarray) else other)
        assert str(got.dtype) == str(want.dtype), (name, dtype, other)
        np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=2e-3)


def test_negative_sizes_are_refused_by_broadcast_to_and_tile():
    with pytest.raises(pt.ShapeError, match="negative"):
        pt.broadcast_to(pt.arange(3), (-2, 3))
    with pytest.raises(pt.ShapeError, match="repetition count"):
        pt.tile(pt.arange(3), -1)
    np.testing.assert_array_equal(pt.tile(pt.arange(3), np.int64(2)).numpy(), np.tile(np.arange(3), 2))
    np.testing.assert_array_equal(pt.tile(pt.arange(3), (2, 1)).numpy(), np.tile(np.arange(3), (2, 1)))
    with pytest.raises(pt.TracerError, match="static"):
        pt.jit(lambda x, n: pt.tile(x, n))(pt.arange(3), 2)


def test_exception_types_numpy_code_catches():
    for convert in (float, int, complex):
        with pytest.raises(TypeError):
            convert(pt.ones(3))
    with pytest.raises(ValueError):
        pt.ones(3).item()
    with pytest.raises(ValueError):
        bool(pt.ones(3))
    for call in (lambda: pt.linalg.inv(pt.ones((2, 3))), lambda: pt.linalg.det(pt.ones(3)),
                 lambda: pt.linalg.matrix_power(pt.ones((2, 3)), 2), lambda: pt.linalg.lstsq(pt.ones(3), pt.ones(3))):
        with pytest.raises(np.linalg.LinAlgError):
            call()
        with pytest.raises(pt.ShapeError):
            call()
    with pytest.raises(ValueError):
        pt.ones(3).sum(axis=5)


def test_dtype_aliases_and_abstract_kinds():
    for name in ("intp", "int_", "double", "single", "half", "intc", "uintp", "cdouble", "csingle", "byte", "ubyte",
                 "short", "ushort", "longlong"):
        assert str(getattr(pt, name)) == np.dtype(getattr(np, name)).name, name
    assert pt.issubdtype(pt.float32, pt.floating) and not pt.issubdtype(pt.int8, pt.floating)
    assert pt.issubdtype(pt.uint16, pt.unsignedinteger) and pt.issubdtype(pt.complex64, pt.inexact)
    assert pt.dtype("i8") is pt.int64 and pt.dtype(pt.ones(2, dtype=pt.float32)) is pt.float32


def test_errstate_accepts_what_poot_never_reports_and_refuses_raising():
    with pt.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal((pt.ones(2) / 0).numpy(), [np.inf, np.inf])

    @pt.errstate(all="warn")
    def f(x):
        return x / 0

    assert np.isinf(f(pt.ones(1)).numpy()).all()
    old = pt.seterr(over="ignore")
    assert pt.geterr() == old and set(old) == {"divide", "over", "under", "invalid"}
    for bad in ({"all": "raise"}, {"divide": "log"}):
        with pytest.raises(pt.NotBuiltError, match="isfinite"):
            pt.errstate(**bad)
    with pytest.raises(pt.PootError, match="not one of"):
        pt.errstate(over="loud")


def test_fromfunction_and_vectorize_match_numpy():
    fn = lambda i, j: i + 10 * j  # noqa: E731
    np.testing.assert_array_equal(pt.fromfunction(fn, (2, 3)).numpy(), np.fromfunction(fn, (2, 3)))
    branchy = lambda a, b: a - b if a > b else a + b  # noqa: E731
    x = np.array([[1, 4], [7, -2]])
    np.testing.assert_array_equal(pt.vectorize(branchy)(pt.asarray(x), 2).numpy(), np.vectorize(branchy)(x, 2))
    with pytest.raises(pt.TracerError):
        pt.jit(lambda a: pt.vectorize(branchy)(a, 2))(pt.asarray(x))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_match_numpy(axis, bitorder):
    bits = np.random.default_rng(3).random((3, 11)) < 0.5
    packed = pt.packbits(pt.asarray(bits), axis=axis, bitorder=bitorder)
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    assert packed.dtype == pt.uint8
    np.testing.assert_array_equal(packed.numpy(), want)
    for count in (None, 3, 30, -2):
        np.testing.assert_array_equal(pt.unpackbits(packed, axis=axis, count=count, bitorder=bitorder).numpy(),
                                      np.unpackbits(want, axis=axis, count=count, bitorder=bitorder))


def test_text_files_round_trip(tmp_path):
    f = tmp_path / "x.csv"
    x = np.arange(6.0).reshape(2, 3) / 7
    pt.savetxt(f, pt.asarray(x), delimiter=",")
    np.testing.assert_allclose(pt.loadtxt(f, delimiter=",").numpy(), x, rtol=1e-15)
    np.testing.assert_allclose(pt.genfromtxt(f, delimiter=",").numpy(), x, rtol=1e-15)
    np.testing.assert_array_equal(pt.asarray([1, 3, 5]).searchsorted([2, 5], side="right").numpy(), [1, 3])


def test_power_one_half_is_numpys_sqrt():
    x = np.array([-np.inf, -0.0, 4.0, -4.0, 2.0])
    with np.errstate(invalid="ignore"):
        want = np.power(x, 0.5)
    a = pt.asarray(x)
    np.testing.assert_array_equal(pt.power(a, 0.5).numpy(), want)
    np.testing.assert_array_equal((a ** 0.5).numpy(), want)
    np.testing.assert_array_equal(pt.jit(lambda v: v ** 0.5)(a).numpy(), want)
    for i in range(len(x)):          # element reads: host values
        got = (a[i] ** 0.5).numpy()
        np.testing.assert_array_equal(got, want[i])
        assert np.signbit(got) == np.signbit(want[i])


def test_dtype_calls_on_python_ints_check_the_range_as_numpy_does():
    assert pt.uint64(2**63).item() == 2**63 and pt.uint64(2**64 - 1).dtype == pt.uint64
    assert pt.int8(-128).item() == -128 and pt.float32(3).dtype == pt.float32
    for cast, value in ((pt.uint8, -1), (pt.int8, 300), (pt.uint32, 2**32), (pt.int64, 2**63)):
        with pytest.raises(pt.DTypeError, match="out of bounds"):
            cast(value)
    assert pt.int8(3.7).item() == 3                     # a float is cast, as np.int8(3.7) is


def test_clip_with_bounds_of_another_kind_promotes_as_numpy_does():
    x = np.arange(5)
    for lo, hi in ((1.5, 3.5), (-np.inf, 2.5)):
        got = pt.clip(pt.asarray(x), lo, hi)
        want = np.clip(x, lo, hi)
        assert got.dtype == pt.float64
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(pt.clip(pt.asarray([True, False]), 2, 5).numpy(), np.clip([True, False], 2, 5))
    assert pt.clip(pt.arange(5, dtype=pt.int8), 1, 300).dtype == pt.int8        # same kind: x's dtype (the standard)


@pytest.mark.parametrize("expr", ["mgrid[0:3, 0:5:2]", "mgrid[-1:1:5j, 0:2]", "mgrid[0:4]", "mgrid[0:1:0.25]",
                                  "r_[1:4, [5, 6], 7]", "r_[-1:1:3j]", "c_[[1, 2, 3], [4, 5, 6]]"])
def test_index_tricks_match_numpy(expr):
    want = eval("np." + expr)
    got = eval("pt." + expr)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)
    for a, b in zip(pt.ogrid[0:3, 0:2], np.ogrid[0:3, 0:2]):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b)
    assert pt.s_[1:3] == np.s_[1:3]


def test_print_options_are_numpys():
    with pt.printoptions(precision=2):
        assert "1.23" in str(pt.asarray([1.23456])) and "1.234" not in str(pt.asarray([1.23456]))
    assert pt.get_printoptions()["precision"] == np.get_printoptions()["precision"]


def test_arrays_are_unhashable_with_advice():
    with pytest.raises(TypeError, match=r"\.item\(\)"):
        set(pt.asarray([3, 1, 3]))
    with pytest.raises(pt.PootError):
        hash(pt.asarray(1.0))
    assert set(pt.asarray([3, 1, 3]).tolist()) == {1, 3}


def test_general_eigenproblems_are_complex_and_right():
    m = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
    w, v = pt.linalg.eig(pt.asarray(m))
    assert w.dtype == pt.complex128 and v.dtype == pt.complex128
    np.testing.assert_allclose(m @ v.numpy(), v.numpy() * w.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(w.numpy()), np.sort_complex(np.linalg.eigvals(m).astype(complex)),
                               atol=1e-12)
    rot = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)
    vals = pt.linalg.eigvals(pt.asarray(rot))
    assert vals.dtype == pt.complex64
    np.testing.assert_allclose(np.sort(vals.numpy().imag), [-1.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(vals.numpy().real, 0.0, atol=1e-6)
    assert pt.linalg.lstsq(pt.eye(3), pt.ones(3))[2].dtype == pt.int32
