"""complex64 and complex128: dtypes and promotion (NumPy 2), creation and conversion, and the
elementwise functions against NumPy, eagerly and under @pt.jit, with hypothesis-drawn values and the
edge cases (0-d, empty, infinite and NaN parts)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from poot import dtypes as dt
from tests.tolerance import tolerance

CDTYPES = [pt.complex64, pt.complex128]


def assert_complex_close(actual, expected, ops: float = 8, err_msg: str = "") -> None:
    """Both parts within the dtype's tolerance of NumPy's, relative to 1 + |expected| (a complex
    formula rounds the parts together); NaN and infinite parts where NumPy has them."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype and a.shape == e.shape, f"{a.dtype}{a.shape} != {e.dtype}{e.shape} {err_msg}"
    tol = tolerance(dt.real_dtype(dt.as_dtype(e.dtype)) if e.dtype.kind == "c" else e.dtype, ops)
    scale = 1.0 + np.abs(e.astype(np.complex128))
    for part in (np.real, np.imag):
        pa, pe = part(a).astype(np.float64), part(e).astype(np.float64)
        assert np.array_equal(np.isnan(pa), np.isnan(pe)), f"NaN parts differ {err_msg}:\n{a}\n{e}"
        inf = np.isinf(pe)
        assert np.array_equal(pa[inf], pe[inf]), f"infinite parts differ {err_msg}:\n{a}\n{e}"
        fin = np.isfinite(pe) & np.isfinite(scale)
        err = np.abs(pa[fin] - pe[fin])
        assert (err <= tol * scale[fin]).all(), f"parts differ beyond {tol:.3g} {err_msg}:\n{a}\n{e}"


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype.np)


# --- dtypes and promotion -------------------------------------------------------------------------
def test_dtypes_are_numpys():
    assert np.dtype(pt.complex64) == np.complex64 and np.dtype(pt.complex128) == np.complex128
    assert pt.c64 is pt.complex64 and dt.as_dtype("complex128") is pt.complex128
    assert dt.as_dtype(np.complex64) is pt.complex64 and dt.as_dtype(complex) is pt.complex128
    assert pt.isdtype(pt.complex64, "complex floating") and pt.isdtype(pt.complex128, "numeric")
    assert not pt.isdtype(pt.complex64, "real floating")
    assert pt.finfo(pt.complex64).dtype is pt.float32 and pt.finfo(pt.complex128).bits == 64
    assert pt.finfo(pt.complex64).eps == np.finfo(np.float32).eps
    info = pt.__array_namespace_info__()
    assert info.dtypes(kind="complex floating") == {"complex64": pt.complex64, "complex128": pt.complex128}
    assert info.default_dtypes()["complex floating"] is pt.complex128


@pytest.mark.parametrize("a", [pt.bool, pt.int8, pt.int16, pt.int32, pt.int64, pt.uint8, pt.uint64,
                               pt.float16, pt.float32, pt.float64, pt.complex64, pt.complex128])
@pytest.mark.parametrize("c", CDTYPES)
def test_promotion_matches_numpy(a, c):
    assert dt.result_type(a, c) == np.result_type(a.np, c.np)
    assert pt.result_type(a, c) is dt.result_type(c, a)


@pytest.mark.parametrize("d", [pt.bool, pt.int8, pt.int64, pt.float16, pt.float32, pt.float64, pt.complex64])
def test_python_complex_scalars_are_weak(d):
    x = pt.zeros(2, dtype=d)
    expected = (np.zeros(2, d.np) + 1j).dtype
    assert (x + 1j).dtype == expected and (1j * x).dtype == expected
    assert (pt.zeros(2, dtype=pt.complex64) * 2.5).dtype is pt.complex64
    assert (pt.zeros(2, dtype=pt.complex64) + 3).dtype is pt.complex64


# --- creation and conversion ----------------------------------------------------------------------
@pytest.mark.parametrize("d", CDTYPES)
def test_creation_and_round_trip(device, d):
    a = sample((3, 4), d)
    x = pt.asarray(a)
    assert x.dtype is d and x.shape == (3, 4)
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(pt.zeros((2, 2), dtype=d).numpy(), np.zeros((2, 2), d.np))
    np.testing.assert_array_equal(pt.ones(3, dtype=d).numpy(), np.ones(3, d.np))
    np.testing.assert_array_equal(pt.full((2,), 1 - 2j, dtype=d).numpy(), np.full(2, 1 - 2j, d.np))
    assert pt.full((2,), 1j).dtype is pt.complex128
    assert pt.asarray(2 + 3j).dtype is pt.complex128 and complex(pt.asarray(2 + 3j)) == 2 + 3j
    assert pt.asarray([1, 2j]).dtype is pt.complex128
    assert x[1, 2].item() == a[1, 2]


@pytest.mark.parametrize("d", CDTYPES)
def test_astype_between_real_and_complex(device, d):
    a = sample((5,), d)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.asarray(a.real).astype(d).numpy(), a.real.astype(d.np))
    np.testing.assert_array_equal(x.astype(pt.complex128).numpy(), a.astype(np.complex128))
    np.testing.assert_array_equal(x.astype(pt.complex64).numpy(), a.astype(np.complex64))
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary part"):
        r = x.astype(pt.float32)
    np.testing.assert_array_equal(r.numpy(), a.real.astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        b = np.array([0, 1j, 2, 0j], d.np)
        np.testing.assert_array_equal(pt.asarray(b).astype(pt.bool).numpy(), b.astype(bool))
        np.testing.assert_array_equal(pt.asarray(b * 3).astype(pt.int32).numpy(), (b * 3).astype(np.int32))


@pytest.mark.parametrize("d", CDTYPES)
def test_parts_conjugate_and_angle(device, d):
    a = sample((2, 3), d)
    x = pt.asarray(a)
    for got, want in [(pt.real(x), a.real), (pt.imag(x), a.imag), (x.real, a.real), (x.imag, a.imag),
                      (pt.conj(x), a.conj()), (x.conjugate(), a.conj()), (pt.conjugate(x), a.conj())]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert_complex_close(pt.angle(x).numpy(), np.angle(a))
    np.testing.assert_allclose(pt.angle(x, deg=True).numpy(), np.angle(a, deg=True), rtol=1e-5)
    np.testing.assert_array_equal(pt.iscomplex(x).numpy(), np.iscomplex(a))
    assert pt.iscomplexobj(x) and not pt.iscomplexobj(pt.ones(2)) and pt.isrealobj(pt.ones(2))
    np.testing.assert_array_equal(pt.real(pt.ones(2)).numpy(), np.ones(2))
    np.testing.assert_array_equal(pt.imag(pt.ones(2)).numpy(), np.zeros(2))


# --- elementwise ----------------------------------------------------------------------------------
UNARY = ["negative", "positive", "conj", "square", "exp", "expm1", "log", "log1p", "log2", "log10",
         "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
         "arccosh", "arctanh", "sign", "reciprocal", "abs",
         "isnan", "isinf", "isfinite"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "equal", "not_equal"]


def _check(got, want, err_msg=""):
    want = np.asarray(want)
    if want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        assert_complex_close(got, want, err_msg=err_msg)


@pytest.mark.parametrize("d", CDTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(device, d, name):
    a = sample((3, 4), d, seed=1)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    _check(getattr(pt, name)(pt.asarray(a)).numpy(), want, name)


@pytest.mark.parametrize("d", CDTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(device, d, name):
    a, b = sample((3, 4), d, seed=2), sample((4,), d, seed=3)
    x, y = pt.asarray(a), pt.asarray(b)
    f, g = getattr(pt, name), getattr(np, name)
    _check(f(x, y).numpy(), g(a, b), name)
    _check(f(x, 2.5).numpy(), g(a, d.np.type(2.5)), name + " with a float")
    _check(f(1.5 - 0.5j, x).numpy(), g(d.np.type(1.5 - 0.5j), a), name + " with a complex")
    r = np.random.default_rng(4).standard_normal(4).astype(dt.real_dtype(d).np)
    _check(f(x, pt.asarray(r)).numpy(), g(a, r), name + " with a real array")


def test_operators_and_mixed_precision(device):
    a, r = sample((4,), pt.complex64), np.linspace(-2, 2, 4)
    x = pt.asarray(a)
    _check((x * pt.asarray(r)).numpy(), a * r)                     # float64 * complex64 -> complex128
    _check((pt.asarray(r.astype(np.float32)) - x).numpy(), r.astype(np.float32) - a)
    _check((-x + x * 1j - 2 / x).numpy(), -a + a * np.complex64(1j) - np.complex64(2) / a)
    for n in (2, 3, -2, 0, 2.0):          # small integer powers multiply, as NumPy does
        _check((x ** n).numpy(), a ** n)
    np.testing.assert_array_equal((pt.asarray(1j * a.imag) ** 2).numpy(), (1j * a.imag) ** 2)
    _check((x ** 2.5).numpy(), a ** np.float32(2.5))
    _check((abs(x)).numpy(), np.abs(a))
    np.testing.assert_array_equal((x == a[0]).numpy(), a == a[0])


@pytest.mark.parametrize("d", CDTYPES)
def test_infinite_and_nan_parts(device, d):
    inf, nan = np.inf, np.nan
    a = np.array([complex(inf, 0), complex(0, -inf), complex(nan, 1), complex(1, nan), complex(-inf, nan),
                  0j, complex(-0.0, 0.0), complex(inf, inf)], d.np)
    x = pt.asarray(a)
    for name in ["isnan", "isinf", "isfinite", "real", "imag", "conj", "negative"]:
        np.testing.assert_array_equal(getattr(pt, name)(x).numpy(), getattr(np, name)(a), err_msg=name)
    np.testing.assert_array_equal(pt.abs(x).numpy(), np.abs(a))
    np.testing.assert_array_equal((x == x).numpy(), a == a)
    np.testing.assert_array_equal((x + x).numpy(), a + a)
    with np.errstate(all="ignore"):
        _check(pt.exp(pt.asarray(np.array([complex(-inf, 0), complex(inf, 0), 0j], d.np))).numpy(),
               np.exp(np.array([complex(-inf, 0), complex(inf, 0), 0j], d.np)))
        _check(pt.sqrt(pt.asarray(a[[0, 1, 5, 6]])).numpy(), np.sqrt(a[[0, 1, 5, 6]]))
        _check(pt.log(pt.asarray(a[[5]])).numpy(), np.log(a[[5]]))
        num = np.array([1 + 2j, -3 + 0j, 0j], d.np)
        _check((pt.asarray(num) / 0j).numpy(), num / d.np.type(0j))     # NumPy: each part / |0|


@pytest.mark.parametrize("d", CDTYPES)
def test_zero_d_and_empty(device, d):
    z = pt.asarray(np.asarray(1 + 2j, d.np))
    assert z.shape == () and z.dtype is d
    _check((z * z + 1).numpy(), np.asarray(1 + 2j, d.np) ** 2 + 1)
    e = pt.zeros((0, 3), dtype=d)
    assert (e * e).numpy().shape == (0, 3) and pt.exp(e).dtype is d
    np.testing.assert_array_equal(e.sum(axis=0).numpy(), np.zeros(3, d.np))
    np.testing.assert_array_equal(e.prod(axis=0).numpy(), np.ones(3, d.np))


_finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.complex_numbers(max_magnitude=1e3, allow_nan=False, allow_infinity=False),
                min_size=1, max_size=6),
       st.sampled_from(["multiply", "divide", "add", "subtract"]), st.sampled_from(CDTYPES))
def test_binary_on_drawn_values(values, name, d):
    a = np.array(values, d.np)
    b = a[::-1] + np.asarray(0.5 - 0.25j, d.np)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    _check(getattr(pt, name)(pt.asarray(a), pt.asarray(b)).numpy(), want, name)


@settings(max_examples=20, deadline=None)
@given(_finite, _finite, st.sampled_from(["exp", "log", "sqrt", "sin", "tanh", "square", "abs", "arcsinh",
                                          "arccos"]))
def test_unary_on_drawn_values(re, im, name):
    a = np.array([complex(re, im) / 100], np.complex128)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    _check(getattr(pt, name)(pt.asarray(a)).numpy(), want, name)


def test_unsupported_ops_refuse_clearly():
    x = pt.asarray(sample((3,), pt.complex64))
    with pytest.raises(pt.DTypeError, match="complex64"):
        x & x
    with pytest.raises(pt.DTypeError, match="complex64"):
        pt.floor(x)
    with pytest.raises(pt.DTypeError, match="real input"):
        pt.fft.rfft(x)


@pytest.mark.parametrize("name", ["arcsinh", "arcsin", "arctanh", "arctan", "arccosh", "arccos"])
def test_inverse_functions_keep_tiny_parts_and_precision_near_branch_points(device, name):
    """Kahan's forms: each part within a few ulps of NumPy's, relative to that part, for tiny arguments,
    points near +-1 and +-i, and moderate ones (a log(w + sqrt(w^2 + 1)) form gave 8e-8 relative error
    at 1e-9 and lost the real part of atanh(1e-300 + 0.5j))."""
    rings = [m * np.exp(1j * t) for m in (1e-300, 1e-30, 1e-9, 1e-2, 0.5, 1.0, 3.0, 1e5)
             for t in np.linspace(0, 2 * np.pi, 9)[:-1]]
    z = np.array(rings + [1e-9 + 0j, 1e-300 + 0.5j, 0.5 + 1e-300j, 1 + 1e-9j, 1 + 1e-20j, -1 + 1e-20j,
                          1e-9 + 1j, 1e-20 + 1j, 2 + 0j, complex(2, -0.0), 0.5j, 2j, 1.0000001 + 0j])
    got = getattr(pt, name)(pt.asarray(z)).numpy()
    with np.errstate(all="ignore"):     # atanh(+-1) is infinite
        want = getattr(np, name)(z)
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        fin = np.isfinite(w)
        assert np.array_equal(g[~fin], w[~fin])
        # relative to the part; to 1e-14 |w| for a part negligible beside |w|; subnormal parts to the
        # smallest normal number (their own precision is less)
        scale = np.maximum(np.maximum(np.abs(w[fin]), 1e-14 * np.abs(want[fin])), np.finfo(np.float64).tiny)
        assert (np.abs(g[fin] - w[fin]) <= 8 * np.finfo(np.float64).eps * scale).all(), \
            f"{name}: {z[fin][np.argmax(np.abs(g[fin] - w[fin]) / scale)]}"
