"""What scientific scripts meet: complex lstsq, NumPy operands on a poot operand's device,
split at a poot array of indices."""
import numpy as np
import pytest

import poot as pt
from poot.errors import DeviceError, TracerError


def _vulkan():
    try:
        return pt.asarray(np.linspace(0, 2, 5), device="vulkan")
    except pt.PootError as e:
        pytest.skip(f"no vulkan device: {e}")


# --- lstsq with complex operands ---

def test_lstsq_complex_square_matches_numpy():
    a = np.array([[1 + 1j, 2], [0, 1 - 1j]])
    b = np.array([1.0 + 0j, 1j])
    got = pt.linalg.lstsq(pt.asarray(a), pt.asarray(b), rcond=None)
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(got[0].numpy(), want[0], atol=1e-12)
    assert got[0].dtype == np.complex128
    assert got[1].numpy().shape == want[1].shape == (0,)
    assert got[1].dtype == want[1].dtype == np.float64
    assert int(got[2]) == want[2]
    np.testing.assert_allclose(got[3].numpy(), want[3])
    assert got[3].dtype == want[3].dtype


def test_lstsq_complex_tall_residuals_real():
    a = np.stack([np.ones(4), np.arange(4.0)], 1) + 1j * np.array([[0, 1], [1, 0], [0, 0], [2, 1]])
    b = np.array([[1, 2j, 3, 1 - 1j], [0, 1, 1j, 2]]).T
    got = pt.linalg.lstsq(pt.asarray(a), pt.asarray(b), rcond=None)
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(got[0].numpy(), want[0], atol=1e-12)
    np.testing.assert_allclose(got[1].numpy(), want[1])
    assert got[1].dtype == want[1].dtype == np.float64
    assert int(got[2]) == want[2] == 2


def test_lstsq_complex64_residual_dtype_and_real_b():
    a = np.stack([np.ones(4), np.arange(4.0)], 1).astype(np.complex64)
    z = np.array([1, 2, 3, 5], dtype=np.float32)
    got = pt.linalg.lstsq(pt.asarray(a), pt.asarray(z), rcond=None)
    want = np.linalg.lstsq(a, z, rcond=None)
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-4)
    assert got[1].dtype == want[1].dtype == np.float32


def test_polyfit_full_complex_residuals():
    x = np.arange(5.0)
    y = np.array([1, 2j, 3, 1 - 1j, 4 + 2j])
    got = pt.polyfit(pt.asarray(x), pt.asarray(y), 1, full=True)
    want = np.polyfit(x, y, 1, full=True)
    np.testing.assert_allclose(got[0].numpy(), want[0], atol=1e-12)
    np.testing.assert_allclose(got[1].numpy(), want[1])
    assert got[1].dtype == want[1].dtype


def test_lstsq_complex_jit():
    a = np.array([[1 + 1j, 2], [0, 1 - 1j], [1, 1j]])
    b = np.array([1.0 + 0j, 1j, 2])
    f = pt.jit(lambda a, b: pt.linalg.lstsq(a, b)[:2])
    x, r = f(pt.asarray(a), pt.asarray(b))
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(x.numpy(), want[0], atol=1e-12)
    np.testing.assert_allclose(r.numpy(), want[1])
    assert r.dtype == np.float64


# --- NumPy operands follow the poot operand's device ---

def test_numpy_operands_join_on_cpu_keep_values():
    a = pt.asarray([1.0, 2.0])
    np.testing.assert_array_equal(pt.concatenate([a, np.zeros(2)]).numpy(), [1, 2, 0, 0])
    np.testing.assert_array_equal(pt.stack([np.ones(2), a]).numpy(), [[1, 1], [1, 2]])
    np.testing.assert_array_equal(pt.column_stack([a, np.ones(2)]).numpy(), [[1, 1], [2, 1]])


def test_numpy_operands_follow_vulkan_operand():
    a = _vulkan()
    x = np.linspace(0, 2, 5)
    z = np.zeros(2)
    cases = {
        "concatenate": (lambda: pt.concatenate([a, z]), np.concatenate([x, z])),
        "stack": (lambda: pt.stack([np.ones(5), a]), np.stack([np.ones(5), x])),
        "vstack": (lambda: pt.vstack([a, np.ones(5)]), np.vstack([x, np.ones(5)])),
        "hstack": (lambda: pt.hstack([z, a]), np.hstack([z, x])),
        "column_stack": (lambda: pt.column_stack([a, np.ones(5)]), np.column_stack([x, np.ones(5)])),
        "append": (lambda: pt.append(a, z), np.append(x, z)),
        "isin": (lambda: pt.isin(a, np.array([0.5, 2.0])), np.isin(x, np.array([0.5, 2.0]))),
        "searchsorted": (lambda: pt.searchsorted(np.arange(3.0), a), np.searchsorted(np.arange(3.0), x)),
        "interp": (lambda: pt.interp(a, np.arange(3.0), np.arange(3.0) ** 2),
                   np.interp(x, np.arange(3.0), np.arange(3.0) ** 2)),
        "polyval": (lambda: pt.polyval(np.array([1.0, 2.0]), a), np.polyval([1.0, 2.0], x)),
        "convolve": (lambda: pt.convolve(a, np.ones(2)), np.convolve(x, np.ones(2))),
    }
    for name, (fn, want) in cases.items():
        got = fn()
        assert got.device == "vulkan", name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=name)
        assert got.dtype == want.dtype, name


def test_poot_operands_on_different_devices_still_refused():
    a = _vulkan()
    with pytest.raises(DeviceError, match="concatenate"):
        pt.concatenate([a, np.zeros(2), pt.zeros(2)])


# --- split at a poot array of indices ---

def test_split_at_poot_indices():
    v = np.arange(6)
    got = pt.split(pt.asarray(v), pt.asarray([2, 4]))
    want = np.split(v, np.array([2, 4]))
    assert [p.numpy().tolist() for p in got] == [p.tolist() for p in want]
    assert got[0].dtype == want[0].dtype


def test_array_split_groups_idiom():
    g = np.array([0, 0, 1, 1, 1, 3])
    v = np.arange(6.0)
    cuts = pt.flatnonzero(pt.diff(pt.asarray(g))) + 1
    got = pt.array_split(pt.asarray(v), cuts)
    want = np.array_split(v, np.flatnonzero(np.diff(g)) + 1)
    assert [p.numpy().tolist() for p in got] == [p.tolist() for p in want]
    got = pt.array_split(pt.asarray(v), pt.asarray(4))       # a 0-d array: a section count
    assert [p.shape for p in got] == [p.shape for p in np.array_split(v, 4)]


def test_split_poot_indices_refused_when_not_integer():
    with pytest.raises(pt.PootError, match="integers"):
        pt.split(pt.arange(6), pt.asarray([2.0]))


def test_split_traced_indices_raise_tracer_error():
    f = pt.jit(lambda v, i: pt.split(v, i)[0])
    with pytest.raises(TracerError, match="split points must be concrete"):
        f(pt.arange(6), pt.asarray([2, 4]))


@pytest.mark.parametrize("a, b", [(np.array([1, 2], np.int8), 3), (np.array([1.0, 2.0], np.float32), 2.0),
                                  (np.array([True, False]), True), (3, np.array([1, 2], np.int16))])
def test_dot_makes_an_array_of_a_python_scalar_as_numpy_does(a, b):
    want = np.dot(a, b)
    got = pt.dot(*[pt.asarray(v) if isinstance(v, np.ndarray) else v for v in (a, b)]).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_insert_converts_numpy_values_on_the_arrays_device():
    try:
        a = pt.asarray(np.arange(5.0), device="vulkan")
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"no vulkan device here: {e}")
    got = pt.insert(a, 2, np.array([9.0, 8.0]))
    assert got.device == a.device
    np.testing.assert_array_equal(got.numpy(), np.insert(np.arange(5.0), 2, [9.0, 8.0]))
