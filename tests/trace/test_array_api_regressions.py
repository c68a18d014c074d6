"""Regressions found by the array API test suite: dtype equality with foreign objects, vecdot's
contracted sizes, NumPy's 0-d boolean indices, and constants keyed by their bits (signed zeros, NaNs)."""
import numpy as np
import pytest

import poot as pt


class _Weird:
    """An object whose dtype-like attributes raise when read."""

    @property
    def dtype(self):
        raise ValueError("no dtype here")

    def __str__(self):
        raise ValueError("no name either")


@pytest.mark.parametrize("other", [{}, [], "foo", "float99", 3, None, object(), np.complex64, "c16",
                                   np.dtype("complex128"), (1, 2), _Weird()])
def test_dtype_equality_with_foreign_objects_is_false(other):
    assert (pt.float32 == other) is False
    assert (pt.float32 != other) is True
    assert (other == pt.float32) is False


def test_dtype_equality_with_real_dtypes():
    assert pt.float32 == np.float32 and pt.float32 == "float32" and pt.float32 == np.dtype("f4")
    assert pt.int64 != pt.int32 and pt.int64 != "int32"


@pytest.mark.parametrize("s1,s2", [((0,), (1,)), ((3,), (4,)), ((2, 1), (2, 3)), ((5, 3), (2,))])
def test_vecdot_refuses_mismatched_contracted_axes(s1, s2):
    with pytest.raises(ValueError):
        np.vecdot(np.ones(s1), np.ones(s2))
    with pytest.raises(pt.ShapeError, match="contracted axis"):
        pt.vecdot(pt.ones(s1), pt.ones(s2))


def test_vecdot_matching_axes_still_broadcast():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    np.testing.assert_allclose(pt.vecdot(pt.asarray(a), pt.asarray(b)).numpy(), np.vecdot(a, b))
    a2 = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(pt.vecdot(pt.asarray(a2), pt.asarray(a2), axis=0).numpy(),
                               np.vecdot(a2, a2, axis=0))


_BOOL_INDICES = [True, False, np.bool_(True), np.array(False), (slice(None), True), (Ellipsis, True),
                 (False, slice(None)), ([0, 1], True), (True, [0, 1]), (0, True, 1), (True, True),
                 (None, False, Ellipsis, [1]), (slice(None), True, [0, 2])]


@pytest.mark.parametrize("idx", _BOOL_INDICES, ids=repr)
def test_zero_d_boolean_index_follows_numpy(idx):
    a = np.arange(6.0).reshape(2, 3)
    got = pt.asarray(a)[idx].numpy()
    want = a[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_zero_d_boolean_poot_index_and_assignment():
    a = np.arange(6.0).reshape(2, 3)
    x = pt.asarray(a)
    assert x[pt.asarray(True)].shape == (1, 2, 3) and x[pt.asarray(False)].shape == (0, 2, 3)
    assert pt.asarray(3.0)[True].numpy().tolist() == [3.0]
    for idx, v in ((True, 5.0), (False, 5.0), ((0, True), 7.0)):
        y, b = pt.asarray(a), a.copy()
        y[idx] = v
        b[idx] = v
        np.testing.assert_array_equal(y.numpy(), b)


def test_zero_d_boolean_poot_index_refused_while_tracing():
    f = pt.jit(lambda x, m: x[m])
    with pytest.raises(pt.TracerError, match="0-d boolean"):
        f(pt.ones(3), pt.asarray(True))


def _signs(x):
    return np.signbit(np.asarray(x)).tolist()


def test_constants_keep_signed_zeros_and_nan_signs():
    nan = float("nan")
    assert _signs(pt.asarray(nan)) == False and _signs(pt.asarray(-nan)) == True    # noqa: E712
    assert _signs(pt.asarray(np.float32(nan))) == False and _signs(pt.asarray(-np.float32(nan))) == True  # noqa: E712
    assert _signs(pt.full((2,), 0.0)) == [False] * 2 and _signs(pt.full((2,), -0.0)) == [True] * 2
    z = pt.zeros(2)
    assert _signs(z * 0.0) == [False] * 2 and _signs(z * -0.0) == [True] * 2
    assert _signs(z * np.float64(-0.0)) == [True] * 2 and _signs(z * np.float64(0.0)) == [False] * 2
    one = pt.stack([pt.full((2,), 0.0), pt.full((2,), -0.0), pt.full((2,), nan), pt.full((2,), -nan)])
    assert _signs(one) == [[False] * 2, [True] * 2, [False] * 2, [True] * 2]
