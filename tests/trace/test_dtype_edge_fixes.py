"""Dtype edge cases against NumPy 2: isclose with infinities, the nan-statistics of complex
arrays, angle of negative reals, fmod with INT_MIN, sinc/angle result dtypes, max's initial overflow,
gcd of INT_MIN, choice's probability tolerance, full-range 64-bit integers, complex scalars in float-only
functions, full/arange argument errors and linspace's dtype of NumPy scalars. Values, dtypes and shapes
are compared with NumPy, eagerly and inside @pt.jit."""
import warnings

import numpy as np
import pytest

import poot as pt


def _same(got, want, rtol=1e-7):
    want = np.asarray(want)
    got_np = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got_np.shape == want.shape
    assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got_np, want, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


def _vulkan():
    try:
        with pt.device("vulkan"):
            pt.ones(1).numpy()
    except pt.PootError as e:
        pytest.skip(f"no vulkan device: {e}")
    return pt.device("vulkan")


# --- 1. isclose / allclose with infinities -------------------------------------------------------
_X = np.array([1.0, -np.inf, np.inf, np.nan, 1e308, 1 + 1e-9, -np.inf])
_Y = np.array([np.inf, np.inf, np.inf, np.nan, np.inf, 1.0, -np.inf])


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_infinities_are_close_only_to_the_same_infinity(equal_nan):
    _same(pt.isclose(pt.asarray(_X), pt.asarray(_Y), equal_nan=equal_nan), np.isclose(_X, _Y, equal_nan=equal_nan))
    assert pt.allclose(pt.asarray(np.array([1.0])), pt.asarray(np.array([np.inf]))) is False
    f = pt.jit(lambda a, b: pt.isclose(a, b))
    _same(f(pt.asarray(_X), pt.asarray(_Y)), np.isclose(_X, _Y))


def test_isclose_complex_infinities():
    x = np.array([1 + 1j, complex(np.inf, 0), complex(np.nan, 1)])
    y = np.array([complex(np.inf, 0), complex(np.inf, 0), complex(np.nan, 1)])
    _same(pt.isclose(pt.asarray(x), pt.asarray(y)), np.isclose(x, y))


def test_isclose_infinities_on_vulkan():
    with _vulkan():
        x, y = np.where(_X == 1e308, 3e38, _X).astype(np.float32), _Y.astype(np.float32)
        _same(pt.isclose(pt.asarray(x), pt.asarray(y)), np.isclose(x, y))


# --- 2. nanmean / nanvar / nanstd of complex arrays ------------------------------------------------
_C = np.array([[1, 2j, np.nan], [complex(1, np.nan), 3 + 1j, 2]])


@pytest.mark.parametrize("name", ["nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_statistics_skip_complex_nans(name, axis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(_C, axis=axis)
    _same(getattr(pt, name)(pt.asarray(_C), axis=axis), want)


def test_nan_statistics_of_complex64_keep_the_precision_and_jit():
    c = _C.astype(np.complex64)
    _same(pt.nanmean(pt.asarray(c)), np.nanmean(c), rtol=1e-5)
    _same(pt.nanvar(pt.asarray(c), axis=1, keepdims=True), np.nanvar(c, axis=1, keepdims=True), rtol=1e-5)
    f = pt.jit(lambda v: pt.nanstd(v, axis=1))
    _same(f(pt.asarray(_C)), np.nanstd(_C, axis=1))


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_complex_median_sorts_lexicographically(name, axis):
    c = np.array([[3 + 1j, 1 + 5j, 1 + 2j, np.nan, 2], [1, 2, 3, 4, 5j], [complex(1, np.nan), 2, 1j, 0, -1],
                  [np.nan] * 5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(c, axis=axis)
    _same(getattr(pt, name)(pt.asarray(c), axis=axis), want)
    _same(pt.jit(lambda v: getattr(pt, name)(v, axis=axis))(pt.asarray(c)), want)


def test_complex_quantile_is_still_refused():
    with pytest.raises(pt.DTypeError, match="real array"):
        pt.quantile(pt.asarray(np.array([1j, 2])), 0.5)


# --- 3. angle of negative reals, and 5. its dtype --------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.float16, np.float32,
                                   np.float64, np.complex64])
@pytest.mark.parametrize("deg", [False, True])
def test_angle_of_real_input_is_pi_for_negatives_with_numpys_dtype(dtype, deg):
    a = np.array([1, 0, 1], dtype) if dtype in (np.bool_, np.uint8) else np.array([1, 0, -1, -2], dtype)
    _same(pt.angle(pt.asarray(a), deg=deg), np.angle(a, deg=deg), rtol=1e-3)


def test_angle_of_negative_reals_jit_and_vulkan():
    a = np.array([-1.0, 2.0, -0.0])
    f = pt.jit(lambda v: pt.angle(v, deg=True))
    _same(f(pt.asarray(a)), np.angle(a, deg=True))
    with _vulkan():
        b = a.astype(np.float32)
        _same(pt.angle(pt.asarray(b)), np.angle(b), rtol=1e-6)


# --- 4. fmod with INT_MIN mixed with floats --------------------------------------------------------
_FMOD = [(np.array([0.001]), np.array([-128], np.int8)), (np.array([-2**31], np.int32), 7.0),
         (np.array([-128, 5, -7], np.int8), np.array([2.5, -3.0, 0.75], np.float32)),
         (np.array([-2**63], np.int64), np.array([7.0]))]


@pytest.mark.parametrize("x1, x2", _FMOD)
def test_fmod_of_int_min_promotes_before_abs(x1, x2):
    _same(pt.fmod(pt.asarray(x1), x2 if isinstance(x2, float) else pt.asarray(x2)), np.fmod(x1, x2))


def test_fmod_of_int_min_jit_and_vulkan():
    x1, x2 = np.array([-2**31, 9], np.int32), np.array([7.0, -4.0], np.float32)
    f = pt.jit(lambda a, b: pt.fmod(a, b))
    _same(f(pt.asarray(x1), pt.asarray(x2)), np.fmod(x1, x2))
    with _vulkan():
        _same(pt.fmod(pt.asarray(np.array([0.001], np.float32)), pt.asarray(np.array([-128], np.int8))),
              np.fmod(np.array([0.001], np.float32), np.array([-128], np.int8)))


# --- 5. sinc result dtype --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32])
def test_sinc_result_dtype_is_numpys(dtype):
    a = np.array([1, 0, 1], dtype) if dtype is np.bool_ else np.array([1, 0, 2], dtype)
    _same(pt.sinc(pt.asarray(a)), np.sinc(a), rtol=1e-3)
    _same(pt.jit(pt.sinc)(pt.asarray(a)), np.sinc(a), rtol=1e-3)


# --- 6. max / min initial out of the dtype's range ------------------------------------------------
@pytest.mark.parametrize("initial", [1000, -129, 2**70])
def test_extreme_initial_that_does_not_fit_is_an_error(initial):
    x = pt.asarray(np.array([1, 2], np.int8))
    for fn in (pt.max, pt.min):
        with pytest.raises(pt.ScalarOverflowError, match=r"initial=.*int8"):
            fn(x, initial=initial)
    with pytest.raises(OverflowError):
        np.max(np.array([1, 2], np.int8), initial=initial)


def test_extreme_initial_that_fits_still_works():
    a = np.array([1, 2], np.int8)
    _same(pt.max(pt.asarray(a), initial=127), np.max(a, initial=127))
    _same(pt.min(pt.asarray(a), initial=-128), np.min(a, initial=-128))
    _same(pt.jit(lambda v: pt.max(v, initial=5))(pt.asarray(a)), np.max(a, initial=5))
    with pytest.raises(OverflowError, match="uint8"):
        pt.max(pt.asarray(a.astype(np.uint8)), initial=-1)


# --- 7. gcd / lcm of INT_MIN -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_gcd_lcm_work_on_unsigned_magnitudes(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x = np.concatenate([np.array([6, info.min, info.min, 0, 12, 7, info.max], dtype),
                        rng.integers(info.min, info.max, 30, dtype=dtype, endpoint=True)])
    y = np.concatenate([np.array([info.min, info.min, 0, info.min, info.min, 3, info.min], dtype),
                        rng.integers(info.min, info.max, 30, dtype=dtype, endpoint=True)])
    for name in ("gcd", "lcm"):
        _same(getattr(pt, name)(pt.asarray(x), pt.asarray(y)), getattr(np, name)(x, y))


def test_gcd_of_int_min_jit():
    x, y = np.array([6, 12], np.int8), np.array([-128, -128], np.int8)
    _same(pt.jit(pt.gcd)(pt.asarray(x), pt.asarray(y)), np.gcd(x, y))
    _same(pt.gcd(pt.asarray(x), 4), np.gcd(x, 4))


# --- 8. choice's tolerance on the sum of p ---------------------------------------------------------
def test_choice_accepts_float32_probabilities_within_their_rounding():
    p = np.array([0.2, 0.3, 0.5], np.float32)
    assert abs(float(p.astype(np.float64).sum()) - 1) > 1e-8      # the sum is 1 only within float32
    r = pt.random.default_rng(0).choice(3, size=4, p=p)
    assert r.shape == (4,) and set(r.tolist()) <= {0, 1, 2}
    with pytest.raises(pt.PootError, match="sum to 1"):
        pt.random.default_rng(0).choice(3, size=4, p=np.array([0.2, 0.3, 0.51], np.float32))
    with pytest.raises(pt.PootError, match="sum to 1"):
        pt.random.default_rng(0).choice(3, size=4, p=[0.2, 0.3, 0.5 + 1e-6])
    f = pt.jit(lambda: pt.random.default_rng(1).choice(3, size=4, p=p))
    assert set(f().tolist()) <= {0, 1, 2}


# --- 9. full-range 64-bit integers ---------------------------------------------------------------
def test_integers_with_a_full_64_bit_span():
    g = pt.random.default_rng(0)
    r = g.integers(0, 2**64, size=2000, dtype=np.uint64)
    assert r.dtype == pt.uint64 and r.shape == (2000,) and max(r.tolist()) >= 2**63
    r = g.integers(-2**63, 2**63 - 1, size=2000, endpoint=True)
    assert r.dtype == pt.int64 and min(r.tolist()) < 0 < max(r.tolist())
    r = g.integers(0, 2**64 - 1, size=3, dtype=np.uint64, endpoint=True)
    assert r.dtype == pt.uint64
    f = pt.jit(lambda: pt.random.default_rng(3).integers(-2**63, 2**63, size=3))
    assert f().dtype == pt.int64
    with pytest.raises(pt.DTypeError):
        g.integers(0, 2**65, dtype=np.uint64)


# --- 10. complex Python scalars in float-only binary functions ------------------------------------
@pytest.mark.parametrize("name", ["hypot", "arctan2", "logaddexp", "logaddexp2", "copysign", "heaviside"])
def test_complex_scalar_in_a_float_only_function_is_a_dtype_error(name):
    x = pt.asarray(np.array([1, 2], np.int16))
    with pytest.raises(pt.DTypeError, match=name):
        getattr(pt, name)(x, 1j)
    with pytest.raises(TypeError):
        getattr(np, name)(np.array([1, 2], np.int16), 1j)
    with pytest.raises(pt.DTypeError, match=name):
        pt.jit(lambda v: getattr(pt, name)(v, 1j))(x)


def test_float_only_functions_keep_their_real_dtypes():
    a = np.array([1, 2], np.int16)
    _same(pt.hypot(pt.asarray(a), 2.0), np.hypot(a, 2.0))
    _same(pt.logaddexp2(pt.asarray(a), 1), np.logaddexp2(a, 1), rtol=1e-6)


# --- 11. full / arange argument errors --------------------------------------------------------------
def test_full_with_a_complex_value_into_a_real_dtype():
    with pytest.raises(pt.DTypeError, match="fill_value"):
        pt.full(2, 1j, dtype=pt.float32)
    with pytest.raises(pt.DTypeError, match="fill_value"):
        pt.jit(lambda: pt.full(2, 1j, dtype=pt.int8))()
    _same(pt.full(2, np.complex64(2 + 0j), dtype=pt.float32), np.full(2, 2.0, np.float32))
    _same(pt.full(2, 1j), np.full(2, 1j))


@pytest.mark.parametrize("args", [(0, np.nan), (0, np.inf), (np.float32(np.nan),), (0, 10, np.nan),
                                  (-np.inf, 0)])
def test_arange_with_a_non_finite_bound_cannot_compute_its_length(args):
    with pytest.raises(pt.DomainError, match="arange: cannot compute length"):
        pt.arange(*args)
    with pytest.raises(ValueError):
        pt.arange(*args)
    with pytest.raises(ValueError):
        np.arange(*args)


# --- 12. linspace of NumPy scalars -------------------------------------------------------------------
@pytest.mark.parametrize("start, stop", [(np.float32(0), np.float32(1)), (np.float32(0), 1),
                                         (np.float16(0), np.float32(1)), (np.int8(0), np.int8(1)), (0, 1),
                                         (0.0, 1j), (np.complex64(0), 1), (np.float32(0.1), np.float32(7.3))])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_dtype_of_scalar_ends_is_numpys(start, stop, endpoint):
    _same(pt.linspace(start, stop, 7, endpoint=endpoint), np.linspace(start, stop, 7, endpoint=endpoint),
          rtol=1e-6)


def test_linspace_of_float32_scalars_jit():
    f = pt.jit(lambda: pt.linspace(np.float32(0), np.float32(1), 5))
    _same(f(), np.linspace(np.float32(0), np.float32(1), 5))
