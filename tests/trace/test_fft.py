"""pt.fft: the lazy frequency and shift helpers bit for bit against numpy.fft, and the transforms
(host steps over pocketfft) against numpy.fft: values, dtypes, n/axis/s/axes/norm, @pt.jit, errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 70), st.sampled_from([1.0, 0.1, 3, 2.5e-3, 1e6]))
def test_frequencies_match_numpy_bitwise(n, d):
    np.testing.assert_array_equal(pt.fft.fftfreq(n, d=d).numpy(), np.fft.fftfreq(n, d=d))
    np.testing.assert_array_equal(pt.fft.rfftfreq(n, d=d).numpy(), np.fft.rfftfreq(n, d=d))


def test_frequency_dtype_device_and_errors():
    f = pt.fft.fftfreq(6, d=0.5, dtype=pt.float32, device="cpu")
    assert f.dtype is pt.float32
    np.testing.assert_array_equal(f.numpy(), np.fft.fftfreq(6, d=0.5).astype(np.float32))
    assert pt.fft.rfftfreq(7).dtype is pt.float64
    with pytest.raises(pt.ShapeError, match="positive"):
        pt.fft.fftfreq(0)
    with pytest.raises(pt.DTypeError, match="real floating"):
        pt.fft.rfftfreq(4, dtype=pt.int32)


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (2, 3, 4), (4, 0, 3)])
@pytest.mark.parametrize("axes", [None, 0, -1, (0, -1), [-1, 0]])
def test_shifts_match_numpy(shape, axes):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.fft.fftshift(x, axes=axes).numpy(), np.fft.fftshift(a, axes=axes))
    np.testing.assert_array_equal(pt.fft.ifftshift(x, axes=axes).numpy(), np.fft.ifftshift(a, axes=axes))
    np.testing.assert_array_equal(pt.fft.ifftshift(pt.fft.fftshift(x, axes=axes), axes=axes).numpy(), a)


def test_helpers_work_inside_jit():
    @pt.jit
    def centred(x):
        return pt.fft.fftshift(x) * pt.fft.fftshift(pt.fft.fftfreq(x.shape[0]))

    a = np.arange(7.0)
    np.testing.assert_array_equal(centred(pt.asarray(a)).numpy(),
                                  np.fft.fftshift(a) * np.fft.fftshift(np.fft.fftfreq(7)))


_ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
_REAL_IN = ("rfft", "ihfft", "rfftn", "rfft2")


def _operand(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if name not in _REAL_IN:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _assert_matches(got, want, single):
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-5 if single else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name", _ONE_D)
def test_one_axis_transforms_match_numpy(device, name, norm, single):
    dtype = (np.float32 if name in _REAL_IN else np.complex64) if single else np.float64
    a = _operand(name, (3, 8), dtype if single or name in _REAL_IN else np.complex128)
    x = pt.asarray(a)
    f, g = getattr(pt.fft, name), getattr(np.fft, name)
    _assert_matches(f(x, norm=norm).numpy(), g(a, norm=norm), single)
    _assert_matches(f(x, n=5, axis=0, norm=norm).numpy(), g(a, n=5, axis=0, norm=norm), single)
    _assert_matches(f(x, n=11).numpy(), g(a, n=11), single)


@pytest.mark.parametrize("name", _N_D)
def test_many_axes_transforms_match_numpy(device, name):
    a = _operand(name, (4, 6, 5), np.float64 if name in _REAL_IN else np.complex128)
    x = pt.asarray(a)
    f, g = getattr(pt.fft, name), getattr(np.fft, name)
    _assert_matches(f(x).numpy(), g(a), False)
    _assert_matches(f(x, s=(3, 8)).numpy(), g(a, s=(3, 8), axes=(1, 2)), False)   # the last axes
    _assert_matches(f(x, axes=(0, 2), norm="ortho").numpy(), g(a, axes=(0, 2), norm="ortho"), False)
    _assert_matches(f(x, s=(5, 4), axes=(2, 0)).numpy(), g(a, s=(5, 4), axes=(2, 0)), False)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.bool_, np.float32])
def test_precision_follows_numpy(dtype):
    a = (np.arange(8) % 3).astype(dtype)
    for name in ("fft", "rfft", "ihfft"):
        got, want = getattr(pt.fft, name)(pt.asarray(a)).numpy(), getattr(np.fft, name)(a)
        _assert_matches(got, want, want.dtype == np.complex64)


def test_round_trips_and_jit():
    a = np.random.default_rng(5).standard_normal((4, 10))

    @pt.jit
    def smooth(x):
        spectrum = pt.fft.rfft(x, axis=-1)
        keep = pt.arange(spectrum.shape[-1]) < 3
        return pt.fft.irfft(pt.where(keep, spectrum, 0), n=x.shape[-1], axis=-1)

    want = np.fft.rfft(a, axis=-1)
    want[:, 3:] = 0
    np.testing.assert_allclose(smooth(pt.asarray(a)).numpy(), np.fft.irfft(want, n=10, axis=-1), atol=1e-12)
    np.testing.assert_allclose(smooth(pt.asarray(a + 1)).numpy(), np.fft.irfft(
        np.where(np.arange(6) < 3, np.fft.rfft(a + 1), 0), n=10), atol=1e-12)
    x = pt.asarray(a.astype(np.complex64))
    np.testing.assert_allclose(pt.fft.ifft(pt.fft.fft(x)).numpy(), a, atol=1e-5)
    np.testing.assert_allclose(pt.fft.irfftn(pt.fft.rfftn(pt.asarray(a)), s=a.shape).numpy(), a, atol=1e-12)


@pytest.mark.parametrize("name", _ONE_D[:4] + _N_D[:4])
def test_norm_is_checked(name):
    with pytest.raises(pt.ShapeError, match="norm must be one of"):
        getattr(pt.fft, name)(pt.ones((4, 4)), norm="sideways")


def test_transforms_are_reported():
    assert pt.__array_namespace_info__().extensions()["fft"] is True


def test_transform_argument_checks():
    with pytest.raises(pt.AxisError):
        pt.fft.fft(pt.ones(4), axis=1)
    with pytest.raises(pt.ShapeError, match="positive"):
        pt.fft.rfft(pt.ones(4), n=0)
    with pytest.raises(pt.ShapeError, match="same length"):
        pt.fft.fftn(pt.ones((2, 2)), s=(2,), axes=(0, 1))
    with pytest.raises(pt.AxisError, match="repeat"):
        pt.fft.fftn(pt.ones((2, 2)), axes=(0, 0))
    with pytest.raises(pt.ShapeError, match="at least one dimension"):
        pt.fft.fft(pt.asarray(1.0))
    with pytest.raises(pt.ShapeError, match="invalid number of data points"):
        pt.fft.fft(pt.ones((0, 3)), axis=0)
    with pytest.raises(pt.ShapeError, match="invalid number of data points"):
        pt.fft.irfft(pt.ones(1))
    with pytest.raises(pt.DTypeError, match="real input"):
        pt.fft.rfftn(pt.ones(3, dtype=pt.complex64))
