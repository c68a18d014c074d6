"""pt.fft: the lazy frequency and shift helpers bit for bit against numpy.fft, and the transforms'
argument checks and their clear refusal while poot has no complex dtypes."""
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
_N_D = ["fftn", "ifftn", "rfftn", "irfftn"]


@pytest.mark.parametrize("name", _ONE_D + _N_D)
def test_transforms_refuse_clearly_without_complex_dtypes(name):
    f = getattr(pt.fft, name)
    assert callable(getattr(np.fft, name))
    with pytest.raises(pt.NotBuiltError, match=f"fft.{name}: complex dtypes are not supported yet"):
        f(pt.ones((4, 4)), norm="ortho")
    with pytest.raises(pt.ShapeError, match="norm must be one of"):
        f(pt.ones((4, 4)), norm="sideways")


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
