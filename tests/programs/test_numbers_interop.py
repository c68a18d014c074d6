"""Numbers and NumPy interop as a NumPy user meets them: NumPy-written code (np.fft, np.cbrt, np.ldexp,
np.unravel_index, np.linspace...) handed poot arrays stays lazy, returns poot arrays and traces under
@pt.jit, with NumPy's values and dtypes; conversion errors name what was wrong with NumPy's exception
classes; a write lost into a temporary names the user's line."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

from .harness import check_program


# a NumPy-written spectral step: the user's code calls np.* directly on whatever arrays it is given
def spectrum_step(xp, x, keep):
    F = np.fft.rfft(x, axis=-1)
    power = np.abs(F) ** 2
    F = np.where(power >= np.quantile(power, keep, axis=-1, keepdims=True), F, 0)
    smooth = np.fft.irfft(F, n=x.shape[-1], axis=-1)
    peak = np.unravel_index(np.argmax(power), power.shape)
    spectrum = np.fft.fftshift(np.fft.fft(x), axes=-1)
    # the phase of the bins that hold signal: a bin the filter emptied holds rounding noise, whose
    # angle (0 or pi, say) depends on the last bit of each device's FFT
    strong = np.abs(spectrum) > 1e-6 * np.abs(spectrum).max()
    return smooth, power, np.stack(peak), np.where(strong, np.angle(spectrum), 0.0)


def spectrum_run(xp, step, x):
    out = None
    for keep in (0.5, 0.75):
        out = step(xp, x, keep)
        x = out[0]
    return out


def test_numpy_fft_code_on_poot_arrays(device):
    r = np.random.default_rng(3)
    t = np.linspace(0, 1, 64, endpoint=False)
    x = np.sin(2 * np.pi * 5 * t) + 0.3 * r.normal(size=(3, 64))
    check_program(device, spectrum_run, spectrum_step, (x,), ops=(400, 400, 1, 400))


def test_numpy_fft_functions_stay_lazy_and_trace():
    x = np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32)
    calls = {
        "fft": lambda a: np.fft.fft(a, n=10),
        "ifft": lambda a: np.fft.ifft(np.fft.fft(a), norm="ortho"),
        "rfft": lambda a: np.fft.rfft(a, axis=0),
        "irfft": lambda a: np.fft.irfft(np.fft.rfft(a), n=8),
        "fft2": lambda a: np.fft.fft2(a),
        "rfftn": lambda a: np.fft.rfftn(a),
        "ifftshift": lambda a: np.fft.ifftshift(a, axes=1),
    }
    for name, f in calls.items():
        expected = f(x)
        for got in (f(pt.asarray(x)), pt.jit(f)(pt.asarray(x))):
            assert isinstance(got, pt.Array), f"np.fft.{name} on a poot array gave {type(got).__name__}"
            assert got.dtype == expected.dtype, name
            assert_close(got.numpy(), expected, expected.dtype, ops=64, err_msg=name)


@pytest.mark.parametrize("name,args", [
    ("cbrt", (np.array([-8.0, 27.0, 0.5], np.float32),)),
    ("fabs", (np.array([-3, 4, 0], np.int16),)),
    ("fmod", (np.array([-7, 7, 5], np.int32), np.array([2, -3, 5], np.int32))),
    ("fmod", (np.array([-7.5, 7.5], np.float32), 2.0)),
    ("frexp", (np.array([0.5, -12.0, 3e-3]),)),
    ("modf", (np.array([-2.5, 3.25], np.float32),)),
    ("ldexp", (np.array([0.75, -1.5], np.float32), np.array([3, -2], np.int32))),
    ("heaviside", (np.array([-1.0, 0.0, 2.0]), 0.5)),
    ("logaddexp2", (np.array([1.0, 100.0], np.float32), np.array([1.0, -3.0], np.float32))),
    ("gcd", (np.array([12, -18, 7], np.int64), 6)),
    ("lcm", (np.array([4, 6, 9], np.uint8), 3)),
    ("spacing", (np.array([1.0, -1e10]),)),
])
def test_numpy_ufuncs_on_poot_arrays(name, args):
    """np.cbrt(x) and the other NumPy ufuncs poot has as functions answer lazily with poot arrays
    (NumPy's fallback would read x to the host and fail inside @pt.jit)."""
    ufunc = getattr(np, name)
    expected = ufunc(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    pargs = [pt.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    eager = ufunc(*pargs)
    jitted = pt.jit(lambda *a: ufunc(*a))(*pargs)
    for got in (eager, jitted):
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert isinstance(g, pt.Array), f"np.{name} on poot arrays gave {type(g).__name__}"
            assert g.dtype == e.dtype, f"np.{name}: {g.dtype} where NumPy gives {e.dtype}"
            assert_close(g.numpy(), e, e.dtype, err_msg=name)


def test_index_and_range_helpers_on_poot_arrays():
    a = np.random.default_rng(5).permutation(24).reshape(4, 6).astype(np.float32)

    def f(x):
        i, j = np.unravel_index(np.argmax(x), x.shape)
        flat = np.ravel_multi_index((np.argmin(x, axis=0), np.arange(6)), x.shape)
        grid = np.linspace(x.min(), x.max(), 5)
        steps = np.piecewise(x, [x < 10, x >= 10], [lambda v: -v, lambda v: v / 2])
        return np.stack([i, j]), flat, grid, steps

    expected = f(a)
    for got in (f(pt.asarray(a)), pt.jit(f)(pt.asarray(a))):
        for g, e in zip(got, expected):
            assert isinstance(g, pt.Array)
            assert g.dtype == e.dtype
            assert_close(g.numpy(), e, e.dtype, ops=4)


def test_numpy_functions_left_to_numpy_eagerly_trace_under_jit():
    """np.cov, np.corrcoef and np.apply_along_axis stay NumPy's on concrete poot arrays (an ndarray
    back), and inside @pt.jit, where NumPy cannot read a traced array, poot's own answer."""
    a = np.random.default_rng(2).normal(size=(3, 7)).astype(np.float32)

    def f(x):
        return (np.cov(x), np.corrcoef(x, rowvar=False),
                np.apply_along_axis(lambda r: r.max() - r.min(), 1, x))

    expected = f(a)
    assert all(isinstance(g, np.ndarray) for g in f(pt.asarray(a)))
    for g, e in zip(pt.jit(f)(pt.asarray(a)), expected):
        assert isinstance(g, pt.Array)
        assert g.dtype == e.dtype, f"{g.dtype} where NumPy gives {e.dtype}"
        assert_close(g.numpy(), e, e.dtype, ops=16)


def test_lost_write_names_the_users_line():
    z = pt.zeros((3, 3))
    with pytest.raises(pt.CopyError, match=r"test_numbers_interop\.py"):
        z[1][0] = 5
    c = pt.asarray(np.array([1 + 2j, 3 - 1j]))
    with pytest.raises(pt.CopyError, match=r"Z\.real = r"):
        c.real[0] = 5
    r = c.real                      # what the message says to do instead
    r[0] = 5
    c.real = r
    assert c.tolist() == [5 + 2j, 3 - 1j]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sqrt_and_log_near_the_largest_value(dtype):
    """sqrt and log of a complex number whose modulus passes the dtype's largest value stay finite, as
    NumPy's (2 sqrt(z/4), log 2 + log|z/2|), and keep the special values."""
    big = float(np.finfo(dtype).max) * 0.9
    z = np.array([big + big * 1j, -big + 1j, big - big * 1j, -big - 0j, 1 + 2j, complex(-4, -0.0), 0j,
                  complex(np.inf, 1), complex(1, -np.inf), complex(-np.inf, np.nan)], dtype)
    for name in ("sqrt", "log", "log10"):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(z)
        for got in (getattr(pt, name)(pt.asarray(z)), pt.jit(getattr(pt, name))(pt.asarray(z))):
            assert got.dtype == expected.dtype
            assert_close(got.numpy(), expected, expected.dtype, ops=4, err_msg=name)


def test_interleaved_pairs_viewed_as_complex():
    """IQ samples stored as interleaved float32 (re, im, re, im...) read with raw.view(np.complex64),
    processed, and written back as pairs with z.view(np.float32), as NumPy reads the same memory."""
    raw = np.random.default_rng(4).normal(size=(3, 16)).astype(np.float32)

    def f(r):
        z = r.view(np.complex64)
        rotated = z * np.exp(1j * np.float32(0.25)).astype(np.complex64)
        return rotated.view(np.float32), np.abs(z), r.astype(np.float64).view(np.complex128).sum(axis=1)

    expected = f(raw)
    for got in (f(pt.asarray(raw)), pt.jit(f)(pt.asarray(raw))):
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            assert_close(g.numpy(), e, e.dtype, ops=16)
    with pytest.raises(pt.ShapeError, match="even"):
        pt.asarray(raw[:, :5]).view(np.complex64)
    with pytest.raises(pt.DTypeError):
        pt.asarray(raw).view(np.complex128)           # float32 pairs are complex64, not complex128


def test_explicit_setitem_calls_on_held_arrays():
    """`x.__setitem__(i, v)` (a lambda, map over updates) writes a held array as `x[i] = v` does; on a
    temporary it is refused as the statement is."""
    a = pt.asarray(np.arange(4.0))
    a.__setitem__(0, 9.0)
    list(map(a.__setitem__, [1, 2], [7.0, 8.0]))
    c = pt.asarray(np.array([1 + 1j, 2, 3j], np.complex64))
    (lambda z: z.__setitem__(slice(0, 2), pt.asarray(np.ones(2, np.float32))))(c)
    assert a.tolist() == [9.0, 7.0, 8.0, 3.0]
    assert c.tolist() == [1, 1, 3j]
    z = pt.zeros((2, 2))
    with pytest.raises(pt.CopyError):
        z[1].__setitem__(0, 5.0)


def test_format_specs_of_0d_arrays():
    x = pt.asarray(np.float32(1 / 3))
    assert f"{x:.3f}" == "0.333" and f"{pt.asarray(np.int64(7)):05d}" == "00007"
    assert format(pt.asarray(np.array(1.5 + 2j)), ".1f") == "1.5+2.0j"
    with pytest.raises(pt.ArgumentValueError, match=r"'d'.*f32\[\]") as e:    # NumPy: ValueError too
        f"{x:d}"
    assert isinstance(e.value, ValueError)


def test_math_trunc_floor_ceil_of_reductions():
    """math.trunc/floor/ceil of a reduction's 0-d result, as a NumPy float64 scalar answers (integers
    exactly: no trip through float)."""
    import math

    x = pt.asarray(np.array([-1.25, -1.5]))
    assert (math.trunc(x.sum()), math.floor(x.sum()), math.ceil(x.sum())) == (-2, -3, -2)
    big = pt.asarray(np.array([2 ** 60, 1]))
    assert math.trunc(big.sum()) == math.floor(big.sum()) == 2 ** 60 + 1
    with pytest.raises(pt.ArgumentValueError):
        math.trunc(pt.asarray(np.nan))
    with pytest.raises(TypeError):
        math.trunc(x)                                # two elements: no scalar


def test_values_that_do_not_fit_the_dtype_asked_for():
    with pytest.raises(pt.DomainError, match="int32") as e:
        pt.asarray([np.nan, 1.0], dtype=pt.int32)
    assert isinstance(e.value, ValueError)          # NumPy's class for it
    with pytest.raises(pt.DTypeError, match="float64") as e:
        pt.asarray([1j], dtype=pt.float64)
    assert isinstance(e.value, TypeError)
    with pytest.raises(pt.ShapeError):               # a ragged list is still a shape problem
        pt.asarray([[1, 2], [3]], dtype=pt.float64)
