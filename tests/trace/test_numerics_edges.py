"""Edge cases of poot's numerical functions against NumPy: norms of empty arrays, norm's axis given
as a float or something that is no axis, condition numbers of singular matrices in a stack (eager and
under @pt.jit), and digitize of complex values."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("shape, ord", [((0,), math.inf), ((0, 3), math.inf), ((0, 3), 1),
                                        ((3, 0), math.inf), ((0, 3), 2), ((2, 0, 3), None)])
def test_norm_of_empty_arrays_is_zero_like_numpy(shape, ord):
    x = np.zeros(shape)
    axis = (1, 2) if len(shape) == 3 else None
    want = np.linalg.norm(x, ord, axis=axis)
    for f in (pt.linalg.norm, pt.jit(pt.linalg.norm, static_argnums=(1, 2))):
        got = f(pt.asarray(x), ord, axis)
        assert got.dtype == want.dtype and got.shape == np.shape(want)
        np.testing.assert_array_equal(got.numpy(), want)


def test_vector_and_matrix_norm_of_empty_arrays():
    x = np.zeros((2, 0, 3))
    np.testing.assert_array_equal(pt.linalg.matrix_norm(pt.asarray(x), ord=2).numpy(),
                                  np.linalg.matrix_norm(x, ord=2))
    np.testing.assert_array_equal(pt.linalg.vector_norm(pt.asarray(x), ord=math.inf, axis=1).numpy(),
                                  np.linalg.vector_norm(x, ord=math.inf, axis=1))


def test_norm_of_empty_min_orders_still_raise():
    with pytest.raises(pt.PootError):
        pt.linalg.norm(pt.zeros((0, 3)), -math.inf).numpy()


def test_norm_axis_given_as_float_is_taken_as_numpy_does():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(pt.linalg.norm(pt.asarray(x), axis=1.0).numpy(),
                               np.linalg.norm(x, axis=1.0))


def test_norm_axis_that_is_no_axis_names_the_argument():
    with pytest.raises(pt.ArgumentError, match="linalg.norm: 'axis' must be None"):
        pt.linalg.norm(pt.ones((3, 3)), axis="rows")


@pytest.mark.parametrize("p", [1, -1, math.inf, -math.inf, "fro"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_cond_of_singular_matrices_in_a_stack_is_inf(p, dtype):
    x = np.stack([np.array([[1, 2], [2, 4]]), np.eye(2), np.array([[1, 2], [3, 4]]),
                  np.zeros((2, 2))]).astype(dtype)
    want = np.linalg.cond(x, p)
    eps = np.finfo(dtype).eps
    for f in (pt.linalg.cond, pt.jit(pt.linalg.cond, static_argnums=1)):
        got = f(pt.asarray(x), p)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=100 * eps)


def test_cond_nuc_of_a_singular_matrix_is_inf():
    """NumPy's own 'nuc' takes singular values of the NaN inverse and raises; poot gives inf as for
    the other norm-based orders."""
    x = np.stack([np.array([[1, 2], [2, 4.0]]), np.eye(2)])
    np.testing.assert_array_equal(pt.linalg.cond(pt.asarray(x), "nuc").numpy(), [np.inf, 4.0])


def test_cond_keeps_nan_of_a_matrix_with_nan():
    x = np.stack([np.array([[1, np.nan], [0, 1]]), np.array([[1, 2], [2, 4.0]])])
    np.testing.assert_array_equal(pt.linalg.cond(pt.asarray(x), 1).numpy(), np.linalg.cond(x, 1))


def test_digitize_refuses_complex_values_as_numpy():
    with pytest.raises(TypeError, match="x may not be complex"):
        np.digitize(np.ones(3) + 1j, [1.0, 2.0])
    for f in (pt.digitize, pt.jit(pt.digitize)):
        with pytest.raises(pt.DTypeError, match="digitize: x may not be complex"):
            f(pt.ones(3) + 1j, pt.asarray([1.0, 2.0]))


@pytest.mark.parametrize("bins", [[0.0, 1.0, np.nan], [1.0, 2.0, np.nan, np.nan], [np.nan, np.nan],
                                  [2.0, 2.0, 1.0], [1.0, 1.0, 2.0], [5.0], [3.0, 2.0, 1.0]])
@pytest.mark.parametrize("right", [False, True])
def test_digitize_direction_of_bins_with_nan_as_numpy(bins, right):
    """NumPy calls bins rising where their first two differing neighbours rise: bins ending in NaN
    (searchsorted's order) rise, though their first bin is not <= their last."""
    x = np.array([-1, 0, 1, 1.5, 2, 2.5, 3, 4, np.nan])
    want = np.digitize(x, bins, right=right)
    for f in (pt.digitize, pt.jit(pt.digitize, static_argnums=2)):
        got = f(pt.asarray(x), pt.asarray(np.array(bins)), right)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("f", ["cov", "corrcoef"])
def test_cov_of_one_row_with_rowvar_false_has_a_variable_per_column(f):
    """NumPy 2 transposes every 2-D m for rowvar=False: a single row is one observation of each
    column's variable (a NaN matrix, ddof 1 leaving no degrees of freedom), not one variable."""
    m = np.arange(5.0)[None]
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = getattr(np, f)(m, rowvar=False)
    for g in (getattr(pt, f), pt.jit(lambda a: getattr(pt, f)(a, rowvar=False))):
        got = g(pt.asarray(m), rowvar=False) if g is getattr(pt, f) else g(pt.asarray(m))
        assert got.shape == want.shape == (5, 5)
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_allclose(pt.cov(pt.asarray(m.T), rowvar=False).numpy(), np.cov(m.T, rowvar=False))
