"""NumPy functions of numpy_tail, numpy_inplace, numpy_queries and numpy_poly against NumPy: values,
dtypes and shapes (hypothesis over small shapes and dtypes), edge cases (empty, 0-d, NaN, negative
axes), the in-place writes seen through the caller's array, bad input raising poot errors, and each
shape-static function once inside @pt.jit."""
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import poot as pt

FEW = settings(max_examples=12, deadline=None)
_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
_FLOAT_DTYPES = st.sampled_from([np.float16, np.float32, np.float64])
_INT_DTYPES = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8])


def _tol(dtype):
    d = np.dtype(dtype)
    return {"rtol": 1e-12, "atol": 1e-300} if d in (np.float64, np.complex128) or d.kind in "iub" else \
        {"rtol": 5e-6, "atol": 1e-30} if d in (np.float32, np.complex64) else {"rtol": 2e-3, "atol": 1e-6}


def same(got, want, **tol):
    """got (poot arrays, tuples, lists) equals want (NumPy) in shape, dtype and values."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, **tol)
        return
    g = got.numpy() if isinstance(got, pt.Array) else np.asarray(got)
    w = np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, equal_nan=True, **(tol or _tol(w.dtype)))


def floats(dtype, shape=_SHAPES, lo=-50, hi=50, nan=False):
    width = np.dtype(dtype).itemsize * 8
    return hnp.arrays(dtype, shape, elements=st.floats(lo, hi, allow_nan=nan, width=width))


# --- elementwise ---------------------------------------------------------------------------------
@FEW
@given(st.data(), _FLOAT_DTYPES)
def test_float_unary_functions_match_numpy(data, dtype):
    a = data.draw(floats(dtype))
    x = pt.asarray(a)
    with np.errstate(all="ignore"):
        same(pt.cbrt(x), np.cbrt(a))
        same(pt.fix(x), np.fix(a))
        # NumPy's float16 spacing of a negative number is positive (and for -2**k the gap toward
        # zero): a quirk of its half-precision loop, not of spacing; compared on magnitudes there
        b = np.abs(a) if dtype == np.float16 else a
        same(pt.spacing(pt.asarray(b)), np.spacing(b))
        z = np.array([-0.0, 0.0], dtype)          # NumPy steps up from either zero
        same(pt.spacing(pt.asarray(z)), np.spacing(z))
        same(pt.frexp(x), np.frexp(a))
        # NumPy evaluates float16 i0 in float16, whose exp overflows from |x| > 11; poot computes
        # half precision in float32 and rounds once, so those are compared below that
        b = np.clip(a, -10, 10) if dtype == np.float16 else a
        same(pt.i0(pt.asarray(b)), np.i0(b), **({"rtol": 1e-12} if dtype == np.float64 else _tol(dtype)))


@FEW
@given(st.data(), _INT_DTYPES)
def test_float_unary_functions_promote_integers(data, dtype):
    a = data.draw(hnp.arrays(dtype, _SHAPES, elements=st.integers(0, 100)))
    x = pt.asarray(a)
    for name in ("cbrt", "fix", "spacing", "i0", "frexp"):
        same(getattr(pt, name)(x), getattr(np, name)(a))


def test_float_unary_edge_values():
    a = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 5e-324, 1 - 1e-16, 2.0 ** 60, -27.0, 700.0])
    x = pt.asarray(a)
    with np.errstate(all="ignore"):
        for name in ("cbrt", "fix", "spacing", "frexp"):
            same(getattr(pt, name)(x), getattr(np, name)(a))
        same(pt.i0(pt.asarray(a[np.isfinite(a)])), np.i0(a[np.isfinite(a)]), rtol=1e-13)
    same(pt.cbrt(pt.asarray(np.float32(-8.0))), np.cbrt(np.float32(-8.0)))     # 0-d


@FEW
@given(st.data(), _INT_DTYPES, _INT_DTYPES)
def test_gcd_lcm_match_numpy(data, d1, d2):
    s1, s2 = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=4)).input_shapes
    a = data.draw(hnp.arrays(d1, s1, elements=st.integers(0, 60)))
    b = data.draw(hnp.arrays(d2, s2, elements=st.integers(0, 60)))
    if np.dtype(d1).kind == "i":
        a = a - np.asarray(30, d1)
    same(pt.gcd(pt.asarray(a), pt.asarray(b)), np.gcd(a, b))
    same(pt.lcm(pt.asarray(a), pt.asarray(b)), np.lcm(a, b))
    same(pt.gcd(pt.asarray(a), 6), np.gcd(a, 6))


@FEW
@given(st.data(), _FLOAT_DTYPES, st.sampled_from([np.int8, np.int32, np.int64]))
def test_ldexp_and_logaddexp2_match_numpy(data, dtype, edtype):
    a = data.draw(floats(dtype, shape=(5,)))
    e = data.draw(hnp.arrays(edtype, (5,), elements=st.integers(-10, 10)))
    same(pt.ldexp(pt.asarray(a), pt.asarray(e)), np.ldexp(a, e))
    b = data.draw(floats(dtype, shape=(5,)))
    same(pt.logaddexp2(pt.asarray(a), pt.asarray(b)), np.logaddexp2(a, b))
    same(pt.logaddexp2(pt.asarray(a), 1.5), np.logaddexp2(a, 1.5))


def test_ldexp_logaddexp2_edges_and_integers():
    y = np.array([1.5, -2.0, 1e-300, 1e300, np.inf, np.nan, 0.0])
    e = np.array([3, -2, 1100, -1100, 5, 1, 7], np.int32)
    same(pt.ldexp(pt.asarray(y), pt.asarray(e)), np.ldexp(y, e))
    same(pt.ldexp(pt.asarray(np.arange(3, dtype=np.int32)), 2), np.ldexp(np.arange(3, dtype=np.int32), 2))
    a = np.array([np.inf, -np.inf, -np.inf, 3.0, np.nan])
    b = np.array([np.inf, -np.inf, 2.0, 3.0, 1.0])
    with np.errstate(all="ignore"):
        same(pt.logaddexp2(pt.asarray(a), pt.asarray(b)), np.logaddexp2(a, b))
    i, j = np.int8([1, 2]), np.int8([3, -4])
    same(pt.logaddexp2(pt.asarray(i), pt.asarray(j)), np.logaddexp2(i, j))


@FEW
@given(st.integers(0, 12), st.floats(0, 20))
def test_kaiser_matches_numpy(M, beta):
    same(pt.kaiser(M, beta), np.kaiser(M, beta), rtol=1e-12, atol=1e-15)


def test_elementwise_refuse_bad_dtypes():
    for call in (lambda: pt.gcd(pt.ones(2), pt.ones(2)), lambda: pt.lcm(pt.ones(2), 2),
                 lambda: pt.ldexp(pt.ones(2), pt.ones(2)), lambda: pt.cbrt(pt.asarray([1j])),
                 lambda: pt.i0(pt.asarray([1j])), lambda: pt.fix(pt.asarray([1j]))):
        with pytest.raises(pt.PootError):
            call()


# --- editing arrays ------------------------------------------------------------------------------
_MATRIX = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@FEW
@given(st.data(), st.sampled_from([np.float64, np.int32, np.bool_]))
def test_insert_delete_match_numpy(data, dtype):
    a = data.draw(hnp.arrays(dtype, _MATRIX))
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    n = a.size if axis is None else a.shape[axis]
    idx = data.draw(st.lists(st.integers(-n, n - 1) if n else st.nothing(), max_size=3))
    same(pt.delete(pt.asarray(a), idx, axis=axis), np.delete(a, idx, axis=axis))
    same(pt.delete(pt.asarray(a), slice(None, None, 2), axis=axis), np.delete(a, slice(None, None, 2), axis=axis))
    pos = data.draw(st.lists(st.integers(-n, n), min_size=1, max_size=3))
    same(pt.insert(pt.asarray(a), pos, 1, axis=axis), np.insert(a, pos, 1, axis=axis))
    same(pt.insert(pt.asarray(a), pos[0], 0, axis=axis), np.insert(a, pos[0], 0, axis=axis))


def test_insert_value_shapes_follow_numpy():
    m = np.arange(12.0).reshape(3, 4)
    x = pt.asarray(m)
    for obj, values, axis in [(1, [7, 8, 9], 1), ([1, 3], [[5], [6], [7]], 1), ([2], [[5], [6], [7]], 1),
                              (-1, 9, None), (slice(0, 2), 0, 0), ([0, 0, 4], [1, 2, 3], 1)]:
        same(pt.insert(x, obj, values, axis=axis), np.insert(m, obj, values, axis=axis))
    same(pt.insert(x, 1, pt.asarray([1.0, 2, 3, 4]), axis=0), np.insert(m, 1, [1.0, 2, 3, 4], axis=0))
    same(pt.delete(x, pt.asarray([0, 2]), axis=0), np.delete(m, [0, 2], axis=0))
    same(pt.delete(x, np.array([True, False, True]), axis=0), np.delete(m, np.array([True, False, True]), axis=0))
    with pytest.raises(pt.PootError):
        pt.insert(x, 9, 0.0, axis=0)
    with pytest.raises(pt.PootError):
        pt.delete(x, [5], axis=0)
    with pytest.raises(pt.PootError):
        pt.insert(x, 1, [1, 2, 3], axis=0)
    with pytest.raises(pt.AxisError):
        pt.delete(x, 0, axis=2)


@FEW
@given(st.data())
def test_block_resize_rollaxis_match_numpy(data):
    a = data.draw(hnp.arrays(np.float64, (2, 3), elements=st.floats(-5, 5)))
    b = data.draw(hnp.arrays(np.int32, (2, 1), elements=st.integers(-5, 5)))
    c = data.draw(hnp.arrays(np.float32, (1, 4), elements=st.floats(-5, 5, width=32)))
    A, B, C = (pt.asarray(v) for v in (a, b, c))
    same(pt.block([[A, B], [C]]), np.block([[a, b], [c]]))
    same(pt.block([A[0], B[:, 0], 7]), np.block([a[0], b[:, 0], 7]))
    same(pt.block([[[A]], [[A]]]), np.block([[[a]], [[a]]]))
    same(pt.block(A), np.block(a))
    shape = data.draw(st.one_of(st.integers(0, 7), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
    same(pt.resize(A, shape), np.resize(a, shape))
    same(pt.resize(pt.zeros(0), shape), np.resize(np.zeros(0), shape))
    t = np.zeros((2, 3, 4, 5))
    ax = data.draw(st.integers(-4, 3))
    start = data.draw(st.integers(-4, 4))
    assert pt.rollaxis(pt.asarray(t), ax, start).shape == np.rollaxis(t, ax, start).shape


def test_block_resize_rollaxis_errors():
    with pytest.raises(pt.ShapeError):
        pt.block([[pt.ones(2)], pt.ones(2)])
    with pytest.raises(pt.ShapeError):
        pt.block([])
    with pytest.raises(pt.ShapeError):
        pt.resize(pt.ones(3), (-1, 2))
    with pytest.raises(pt.PootError):
        pt.rollaxis(pt.ones((2, 3)), 0, 5)
    with pytest.raises(pt.AxisError):
        pt.rollaxis(pt.ones((2, 3)), 3)


@FEW
@given(st.data())
def test_trim_zeros_matches_numpy(data):
    a = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=6),
                             elements=st.sampled_from([0, 0, 0, 1, -2])))
    trim = data.draw(st.sampled_from(["fb", "f", "b", "BF"]))
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    same(pt.trim_zeros(pt.asarray(a), trim, axis=axis), np.trim_zeros(a, trim, axis=axis))
    with pytest.raises(pt.PootError):
        pt.trim_zeros(pt.asarray(a), "x")


@FEW
@given(st.data(), st.sampled_from(["raise", "wrap", "clip"]))
def test_choose_matches_numpy(data, mode):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=4, max_dims=3, max_side=3)).input_shapes
    k = 3
    lo, hi = (0, k - 1) if mode == "raise" else (-5, 7)
    a = data.draw(hnp.arrays(np.int64, shapes[0], elements=st.integers(lo, hi)))
    choices = [data.draw(hnp.arrays(d, s, elements=st.integers(-9, 9)))
               for d, s in zip([np.int8, np.float32, np.int64], shapes[1:])]
    same(pt.choose(pt.asarray(a), [pt.asarray(c) for c in choices], mode=mode),
         np.choose(a, choices, mode=mode))


def test_choose_errors():
    with pytest.raises(pt.PootError):
        pt.choose([0, 3], [pt.ones(2), pt.zeros(2)])
    with pytest.raises(pt.PootError):
        pt.choose([0, -1], [pt.ones(2), pt.zeros(2)])
    with pytest.raises(pt.PootError):
        pt.choose(pt.asarray([0.0]), [pt.ones(2)])
    with pytest.raises(pt.PootError):
        pt.choose([0], [pt.ones(2)], mode="nope")


# --- products ------------------------------------------------------------------------------------
@FEW
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int32, np.complex128]))
def test_matvec_vecmat_match_numpy(data, dtype):
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    m, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    el = st.integers(-5, 5)
    A = data.draw(hnp.arrays(dtype, batch + (m, n), elements=el))
    v = data.draw(hnp.arrays(dtype, (n,), elements=el))
    u = data.draw(hnp.arrays(dtype, batch[-1:] + (m,), elements=el))
    if np.dtype(dtype).kind == "c":
        u = u + 1j * u[::-1]
    same(pt.matvec(pt.asarray(A), pt.asarray(v)), np.matvec(A, v))
    same(pt.vecmat(pt.asarray(u), pt.asarray(A)), np.vecmat(u, A))
    with pytest.raises(pt.ShapeError):
        pt.matvec(pt.asarray(A), pt.ones(n + 1))
    with pytest.raises(pt.ShapeError):
        pt.vecmat(pt.ones(m + 1), pt.asarray(A))


@FEW
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int8, np.uint16, np.bool_]), st.booleans())
def test_cumulative_prod_matches_numpy(data, dtype, initial):
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                             elements=st.integers(0, 1) if dtype == np.bool_ else st.integers(0, 3)))
    axis = None if a.ndim == 1 and data.draw(st.booleans()) else data.draw(st.integers(-a.ndim, a.ndim - 1))
    same(pt.cumulative_prod(pt.asarray(a), axis=axis, include_initial=initial),
         np.cumulative_prod(a, axis=axis, include_initial=initial))
    if a.ndim > 1:
        with pytest.raises(pt.PootError):
            pt.cumulative_prod(pt.asarray(a))


# --- in-place writes -----------------------------------------------------------------------------
def _written(base, np_write, pt_write):
    """The caller's poot array after pt_write, and the NumPy array after np_write (both in place)."""
    a = base.copy()
    x = pt.asarray(base)
    assert pt_write(x) is None
    np_write(a)
    same(x, a)


@FEW
@given(st.data(), st.sampled_from([np.float64, np.int16, np.float32]), st.sampled_from(["raise", "wrap", "clip"]))
def test_put_matches_numpy(data, dtype, mode):
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
                             elements=st.integers(-9, 9)))
    n = a.size
    lo, hi = (-n, n - 1) if mode == "raise" else (-3 * n, 3 * n)
    ind = data.draw(st.lists(st.integers(lo, hi), max_size=4, unique_by=lambda i: i % n))
    if mode == "clip":
        assume(len({min(max(i, 0), n - 1) for i in ind}) == len(ind))
    v = data.draw(st.lists(st.integers(-5, 5), min_size=1, max_size=3))
    _written(a, lambda y: np.put(y, ind, v, mode=mode), lambda y: pt.put(y, ind, v, mode=mode))


@FEW
@given(st.data())
def test_put_along_axis_putmask_place_copyto_match_numpy(data):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                             elements=st.floats(-9, 9)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    shape = list(a.shape)
    shape[axis] = 1
    ind = data.draw(hnp.arrays(np.int64, tuple(shape), elements=st.integers(-a.shape[axis], a.shape[axis] - 1)))
    _written(a, lambda y: np.put_along_axis(y, ind, -1.5, axis=axis),
             lambda y: pt.put_along_axis(y, ind, -1.5, axis=axis))
    flat = np.array(data.draw(st.lists(st.integers(0, a.size - 1), min_size=1, max_size=3, unique=True)))
    _written(a, lambda y: np.put_along_axis(y, flat, 7.0, axis=None),
             lambda y: pt.put_along_axis(y, pt.asarray(flat), 7.0, axis=None))
    mask = data.draw(hnp.arrays(np.bool_, a.shape))
    vals = data.draw(st.lists(st.integers(-5, 5), min_size=1, max_size=4))
    _written(a, lambda y: np.putmask(y, mask, vals), lambda y: pt.putmask(y, pt.asarray(mask), vals))
    _written(a, lambda y: np.place(y, mask, vals), lambda y: pt.place(y, pt.asarray(mask), pt.asarray(vals)))
    src = data.draw(hnp.arrays(np.int32, a.shape[data.draw(st.integers(0, a.ndim)):], elements=st.integers(-5, 5)))
    _written(a, lambda y: np.copyto(y, src, where=mask), lambda y: pt.copyto(y, pt.asarray(src), where=mask))
    _written(a, lambda y: np.copyto(y, 2), lambda y: pt.copyto(y, 2))


@FEW
@given(st.data(), st.booleans())
def test_fill_diagonal_matches_numpy(data, wrap):
    shape = data.draw(st.one_of(st.tuples(st.integers(1, 7), st.integers(1, 5)),
                                st.integers(1, 3).map(lambda n: (n, n, n))))
    a = np.zeros(shape, np.int32)
    val = data.draw(st.one_of(st.integers(-5, 5), st.lists(st.integers(-5, 5), min_size=1, max_size=3)))
    _written(a, lambda y: np.fill_diagonal(y, val, wrap=wrap), lambda y: pt.fill_diagonal(y, val, wrap=wrap))
    n = shape[0]
    same(pt.diag_indices(n, len(shape)), np.diag_indices(n, len(shape)))
    if len(set(shape)) == 1:
        same(pt.diag_indices_from(pt.asarray(a)), np.diag_indices_from(a))


def test_in_place_writes_keep_other_handles_and_check_input():
    x = pt.arange(6.0)
    old = x
    view = x + 0
    pt.put(x, [0], [9.0])
    assert x.numpy()[0] == 9.0 and view.numpy()[0] == 0.0 and old is x
    with pytest.raises(pt.PootError):
        pt.put(np.zeros(3), [0], [1.0])
    with pytest.raises(pt.PootIndexError):
        pt.put(x, [6], [1.0])
    with pytest.raises(pt.PootError):
        pt.put(x, [1.5], [1.0])
    with pytest.raises(pt.ShapeError):
        pt.putmask(x, pt.ones(3, dtype=pt.bool), 1.0)
    with pytest.raises(pt.ShapeError):
        pt.place(x, np.ones(6, bool), [])
    with pytest.raises(pt.DTypeError):
        pt.copyto(pt.zeros(3, dtype=pt.int32), pt.ones(3))
    with pytest.raises(pt.DTypeError):
        pt.copyto(pt.zeros(3, dtype=pt.int32), 1.5)
    with pytest.raises(pt.ShapeError):
        pt.copyto(pt.zeros(3), pt.ones(4))
    with pytest.raises(pt.ShapeError):
        pt.fill_diagonal(pt.zeros(3), 1.0)
    with pytest.raises(pt.ShapeError):
        pt.fill_diagonal(pt.zeros((2, 3, 3)), 1.0)
    with pytest.raises(pt.ShapeError):
        pt.diag_indices_from(pt.zeros((2, 3)))
    with pytest.raises(pt.ShapeError):
        pt.put_along_axis(pt.zeros((2, 3)), np.zeros(2, int), 1.0, axis=0)
    y = pt.zeros(3, dtype=pt.int8)
    pt.copyto(y, pt.asarray([1.7, -2.2, 3.9]), casting="unsafe")
    same(y, np.array([1, -2, 3], np.int8))


# --- queries and conversions ---------------------------------------------------------------------
def test_queries_match_numpy():
    z = np.zeros((2, 3, 4))
    x = pt.asarray(z)
    assert pt.ndim(x) == 3 and pt.ndim([[1, 2]]) == 2 and pt.ndim(5) == 0
    assert pt.shape(x) == (2, 3, 4) and pt.shape([[1], [2]]) == (2, 1) and pt.shape(1.0) == ()
    assert pt.size(x) == 24 and pt.size(x, -1) == 4 and pt.size(x, (0, 2)) == 8 and pt.size([1, 2]) == 2
    with pytest.raises(pt.AxisError):
        pt.size(x, 3)
    for v in (3, 3.0, 1j, True, np.float32(2), "s", [1], None, np.zeros(())):
        assert pt.isscalar(v) == np.isscalar(v)
    assert not pt.isscalar(pt.asarray(3.0))
    for a, b in [(pt.float32, np.floating), (pt.int8, pt.int16), (np.int32, np.signedinteger),
                 (pt.uint8, np.integer), (pt.complex64, np.complexfloating), (pt.bool, np.number)]:
        na = a.np if isinstance(a, pt.DType) else a
        nb = b.np if isinstance(b, pt.DType) else b
        assert pt.issubdtype(a, b) == np.issubdtype(na, nb)
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
             "float32", "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            assert pt.promote_types(a, getattr(pt, b)) == np.promote_types(a, b), (a, b)
    for v in (0, 10, -300, 70000, 1e50, 1.5, 2j, True):
        assert pt.min_scalar_type(v) == np.min_scalar_type(v), v
    assert pt.min_scalar_type(pt.ones(3, dtype=pt.int16)) is pt.int16
    assert pt.min_scalar_type(pt.asarray(200)) == np.uint8


def test_conversions_match_numpy():
    same(pt.asanyarray([1, 2]), np.asanyarray([1, 2]))
    same(pt.asanyarray([1, 2], dtype=np.float32), np.asanyarray([1, 2], dtype=np.float32))
    for v in (5.0, [1, 2], np.zeros((2, 0))):
        same(pt.ascontiguousarray(v), np.ascontiguousarray(v))
    same(pt.asarray_chkfinite([1.0, 2.0]), np.asarray_chkfinite([1.0, 2.0]))
    same(pt.asarray_chkfinite([1, 2]), np.asarray_chkfinite([1, 2]))
    for bad in ([1.0, np.nan], [np.inf], [1j * np.inf]):
        with pytest.raises(pt.DomainError):
            pt.asarray_chkfinite(bad)
    for v in ([1 + 1e-16j, 2], [1 + 1e-3j], [1.0, 2.0], np.zeros(0, complex), [1 + 1e-8j]):
        a = np.asarray(v)
        same(pt.real_if_close(pt.asarray(a)), np.real_if_close(a))
        same(pt.real_if_close(pt.asarray(a), tol=1e-7), np.real_if_close(a, tol=1e-7))
    for a, b in [([1, 2], [[1, 2], [1, 2]]), ([1, 2], [1, 2, 3]), ([1, 2], [[1, 2], [1, 3]]), (1, [1, 1]),
                 ([], []), ([np.nan], [np.nan])]:
        assert pt.array_equiv(pt.asarray(a), b) == np.array_equiv(a, b)


# --- callables -----------------------------------------------------------------------------------
@FEW
@given(st.data())
def test_apply_along_and_over_axes_match_numpy(data):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3),
                             elements=st.floats(-5, 5)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    x = pt.asarray(a)
    same(pt.apply_along_axis(pt.sum, axis, x), np.apply_along_axis(np.sum, axis, a))
    same(pt.apply_along_axis(lambda v: pt.stack([v.min(), v.max()]), axis, x),
         np.apply_along_axis(lambda v: np.stack([v.min(), v.max()]), axis, a))
    same(pt.apply_along_axis(lambda v, k: pt.outer(v, v) * k, axis, x, 2),
         np.apply_along_axis(lambda v, k: np.outer(v, v) * k, axis, a, 2))
    axes = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), max_size=2))
    same(pt.apply_over_axes(pt.sum, x, axes), np.apply_over_axes(np.sum, a, axes))
    same(pt.apply_over_axes(lambda v, ax: pt.max(v, axis=ax, keepdims=True), x, axis),
         np.apply_over_axes(lambda v, ax: np.max(v, axis=ax, keepdims=True), a, axis))


def test_apply_errors():
    with pytest.raises(pt.ShapeError):
        pt.apply_along_axis(pt.sum, 0, pt.zeros((3, 0)))
    with pytest.raises(pt.AxisError):
        pt.apply_along_axis(pt.sum, 2, pt.zeros((3, 2)))
    with pytest.raises(pt.ShapeError):
        pt.apply_over_axes(lambda v, ax: pt.sum(v), pt.zeros((3, 2, 2)), [0])


@FEW
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int32]))
def test_piecewise_matches_numpy(data, dtype):
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                             elements=st.integers(-5, 5)))
    x = pt.asarray(a)
    c1, c2 = a < 0, a > 2
    same(pt.piecewise(x, [c1, c2], [lambda v: -v, lambda v: v * 2]),
         np.piecewise(a, [c1, c2], [lambda v: -v, lambda v: v * 2]))
    same(pt.piecewise(x, [pt.asarray(c1), c2], [1.5, 2, lambda v: v * v]),
         np.piecewise(a, [c1, c2], [1.5, 2, lambda v: v * v]))
    if a.ndim == 1 and a.size:      # a bare condition (NumPy reads a 2-D one's rows as conditions)
        same(pt.piecewise(x, c1, [7, lambda v, k: v + k], 3), np.piecewise(a, c1, [7, lambda v, k: v + k], 3))
        same(pt.piecewise(x, pt.asarray(c1), [7, 1]), np.piecewise(a, c1, [7, 1]))
    with pytest.raises(pt.ShapeError):
        pt.piecewise(x, [c1, c2], [1])


def test_piecewise_0d_scalar_conditions():
    a = np.array(3.0)
    same(pt.piecewise(pt.asarray(a), [True, False], [1, 2]), np.piecewise(a, [True, False], [1, 2]))
    same(pt.piecewise(pt.asarray(a), True, [lambda v: v + 1]), np.piecewise(a, True, [lambda v: v + 1]))


# --- polynomials ---------------------------------------------------------------------------------
_COEFFS = st.sampled_from([np.float64, np.float32, np.int32, np.int64])


@FEW
@given(st.data(), _COEFFS, _COEFFS)
def test_polynomial_arithmetic_matches_numpy(data, d1, d2):
    p = data.draw(hnp.arrays(d1, st.integers(1, 5), elements=st.integers(-5, 5)))
    q = data.draw(hnp.arrays(d2, st.integers(1, 5), elements=st.integers(-5, 5)))
    x = data.draw(hnp.arrays(d2, _SHAPES, elements=st.integers(-3, 3)))
    P, Q = pt.asarray(p), pt.asarray(q)
    same(pt.polyval(P, pt.asarray(x)), np.polyval(p, x))
    same(pt.polyval(P, 1.5), np.polyval(p, 1.5))
    same(pt.polyadd(P, Q), np.polyadd(p, q))
    same(pt.polysub(P, Q), np.polysub(p, q))
    same(pt.polymul(P, Q), np.polymul(p, q))
    m = data.draw(st.integers(0, 6))
    same(pt.polyder(P, m), np.polyder(p, m))
    k = data.draw(st.one_of(st.none(), st.integers(-3, 3), st.lists(st.integers(-3, 3), min_size=m, max_size=m)))
    same(pt.polyint(P, m, k), np.polyint(p, m, k))


def test_polynomial_edges_and_errors():
    same(pt.polyval(pt.zeros(0), pt.asarray([1.0, 2.0])), np.polyval(np.zeros(0), [1.0, 2.0]))
    same(pt.polyadd([1, 2], [3]), np.polyadd([1, 2], [3]))
    with pytest.raises(pt.ShapeError):
        pt.polyder(pt.ones(3), -1)
    with pytest.raises(pt.ShapeError):
        pt.polyint(pt.ones(3), -1)
    with pytest.raises(pt.ShapeError):
        pt.polyint(pt.ones(3), 2, [1])
    with pytest.raises(pt.ShapeError):
        pt.polymul(pt.ones((2, 2)), pt.ones(2))


@FEW
@given(st.data(), st.integers(0, 3))
def test_polyfit_matches_numpy(data, deg):
    n = data.draw(st.integers(deg + 2, 9))
    x = np.linspace(-1, 1, n) + data.draw(hnp.arrays(np.float64, n, elements=st.floats(0, 0.05)))
    y = data.draw(hnp.arrays(np.float64, data.draw(st.sampled_from([(n,), (n, 2)])), elements=st.floats(-5, 5)))
    w = data.draw(st.one_of(st.none(), hnp.arrays(np.float64, n, elements=st.floats(0.5, 2))))
    tol = {"rtol": 1e-7, "atol": 1e-9}
    same(pt.polyfit(pt.asarray(x), pt.asarray(y), deg, w=w), np.polyfit(x, y, deg, w=w), **tol)
    c, res, rank, s, rcond = pt.polyfit(pt.asarray(x), pt.asarray(y), deg, full=True)
    want = np.polyfit(x, y, deg, full=True)
    same(c, want[0], **tol)
    same(res, want[1], rtol=1e-6, atol=1e-9)
    assert int(rank) == int(want[2]) and rcond == want[4]
    same(s, want[3], **tol)
    if n > deg + 1:
        same(pt.polyfit(pt.asarray(x), pt.asarray(y), deg, cov=True), np.polyfit(x, y, deg, cov=True),
             rtol=1e-6, atol=1e-9)
    same(pt.polyfit(pt.asarray(x), pt.asarray(y), deg, cov="unscaled"),
         np.polyfit(x, y, deg, cov="unscaled"), rtol=1e-6, atol=1e-9)


def test_polyfit_errors():
    with pytest.raises(pt.ShapeError):
        pt.polyfit(pt.ones(3), pt.ones(3), -1)
    with pytest.raises(pt.ShapeError):
        pt.polyfit(pt.ones((3, 1)), pt.ones(3), 1)
    with pytest.raises(pt.ShapeError):
        pt.polyfit(pt.ones(3), pt.ones(4), 1)
    with pytest.raises(pt.ShapeError):
        pt.polyfit(pt.arange(3.0), pt.ones(3), 1, w=pt.ones(2))


# --- gradient and unwrap -------------------------------------------------------------------------
@FEW
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int16]), st.sampled_from([1, 2]))
def test_gradient_matches_numpy(data, dtype, edge_order):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=edge_order + 1, max_side=5))
    a = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-20, 20)))
    ndim = a.ndim
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                               st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)))
    axes = list(range(ndim)) if axis is None else [axis % ndim] if isinstance(axis, int) else [k for k in axis]
    kind = data.draw(st.sampled_from(["none", "scalar", "each"]))
    args = []
    if kind == "scalar":
        args = [data.draw(st.sampled_from([0.5, 2, 3.0]))]
    elif kind == "each":
        for ax in axes:
            steps = data.draw(hnp.arrays(np.float64, a.shape[ax], elements=st.floats(0.25, 2)))
            coords = np.cumsum(steps)
            args.append(data.draw(st.sampled_from([coords, 1.5, np.arange(a.shape[ax]) * 2])))
    tol = {"rtol": 1e-9, "atol": 1e-9} if np.dtype(dtype) != np.float32 else {"rtol": 1e-4, "atol": 1e-4}
    same(pt.gradient(pt.asarray(a), *args, axis=axis, edge_order=edge_order),
         np.gradient(a, *args, axis=axis, edge_order=edge_order), **tol)
    if kind == "each":      # coordinates held in poot arrays
        pargs = [pt.asarray(c) if np.ndim(c) else c for c in args]
        same(pt.gradient(pt.asarray(a), *pargs, axis=axis, edge_order=edge_order),
             np.gradient(a, *args, axis=axis, edge_order=edge_order), **tol)


def test_gradient_errors():
    with pytest.raises(pt.ShapeError):
        pt.gradient(pt.ones(2), edge_order=2)
    with pytest.raises(pt.ShapeError):
        pt.gradient(pt.ones(4), edge_order=3)
    with pytest.raises(pt.ShapeError):
        pt.gradient(pt.ones((3, 3)), 1.0, 2.0, 3.0)
    with pytest.raises(pt.ShapeError):
        pt.gradient(pt.ones(4), [1.0, 2.0])
    with pytest.raises(pt.AxisError):
        pt.gradient(pt.ones(4), axis=1)
    with pytest.raises(pt.DTypeError):
        pt.gradient(pt.ones(4, dtype=pt.bool))


@FEW
@given(st.data(), st.sampled_from([np.float64, np.float32, np.int32, np.int64]))
def test_unwrap_matches_numpy(data, dtype):
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=6),
                             elements=st.integers(-20, 20)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    period = data.draw(st.sampled_from([2 * np.pi, 6, 5, 4.5]))
    discont = data.draw(st.sampled_from([None, 1.0, 4]))
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
    same(pt.unwrap(pt.asarray(a), discont=discont, axis=axis, period=period),
         np.unwrap(a, discont=discont, axis=axis, period=period), **tol)


# --- histograms ----------------------------------------------------------------------------------
@FEW
@given(st.data(), st.sampled_from([np.float64, np.int32]))
def test_histogramdd_and_2d_match_numpy(data, dtype):
    n = data.draw(st.integers(0, 12))
    D = data.draw(st.integers(1, 3))
    s = data.draw(hnp.arrays(dtype, (n, D), elements=st.integers(-4, 4)))
    bins = data.draw(st.one_of(st.integers(1, 4), st.lists(st.integers(1, 4), min_size=D, max_size=D),
                               st.just([np.array([-3.0, -1, 0, 2.5])] * D)))
    rng = data.draw(st.one_of(st.none(), st.just([(-2, 3)] * D)))
    w = data.draw(st.one_of(st.none(), hnp.arrays(np.float64, n, elements=st.floats(0, 2))))
    density = data.draw(st.booleans()) and n > 0
    with np.errstate(all="ignore"):
        want = np.histogramdd(s, bins=bins, range=rng, weights=w, density=density)
        got = pt.histogramdd(pt.asarray(s), bins=bins, range=rng, weights=w, density=density)
    same(got[0], want[0], rtol=1e-12, atol=1e-12)
    same(got[1], want[1])
    if D == 2:
        x, y = s[:, 0], s[:, 1]
        with np.errstate(all="ignore"):
            w2 = np.histogram2d(x, y, bins=bins, range=rng, weights=w, density=density)
            g2 = pt.histogram2d(pt.asarray(x), pt.asarray(y), bins=bins, range=rng, weights=w, density=density)
        same(g2, w2, rtol=1e-12, atol=1e-12)


def test_histogram_edges_and_errors():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=40), rng.normal(size=40)
    same(pt.histogram2d(pt.asarray(x), pt.asarray(y), bins=[-2, 0, 1, 3]), np.histogram2d(x, y, bins=[-2, 0, 1, 3]))
    same(pt.histogram2d(pt.asarray(x), pt.asarray(y), bins=[3, [-1, 0, 2]]), np.histogram2d(x, y, bins=[3, [-1, 0, 2]]))
    same(pt.histogramdd([pt.asarray(x), pt.asarray(y)], bins=3), np.histogramdd([x, y], bins=3))
    same(pt.histogramdd(pt.asarray(np.ones(5)), bins=3), np.histogramdd(np.ones(5), bins=3))
    with pytest.raises(pt.ShapeError):
        pt.histogramdd(pt.ones((4, 2)), bins=[2, 2, 2])
    with pytest.raises(pt.ShapeError):
        pt.histogramdd(pt.ones((4, 2)), bins=0)
    with pytest.raises(pt.ShapeError):
        pt.histogramdd(pt.ones((4, 1)), bins=[[1.0, 0.0]])
    with pytest.raises(pt.ShapeError):
        pt.histogramdd(pt.ones((4, 1)), range=[(2, 1)])
    with pytest.raises(pt.ShapeError):
        pt.histogram2d(pt.ones(3), pt.ones(4))


# --- inside @pt.jit ------------------------------------------------------------------------------
def _write_all(y):
    y = y + 0
    pt.put(y, [0, 1], [5.0, 6.0])
    pt.put_along_axis(y, np.zeros((3, 1), int), 1.0, axis=1)
    pt.putmask(y, y > 5, 0.0)
    pt.place(y, y < 2, [7.0, 8.0])
    pt.copyto(y, 3.0, where=y > 9)
    pt.fill_diagonal(y, -1.0)
    return y


_M = np.arange(12.0).reshape(3, 4) - 4
_JITTED = {
    "cbrt": (pt.cbrt, _M), "fix": (pt.fix, _M / 3), "spacing": (pt.spacing, _M), "i0": (pt.i0, _M),
    "frexp": (pt.frexp, _M), "logaddexp2": (lambda x: pt.logaddexp2(x, x[::-1]), _M),
    "ldexp": (lambda x: pt.ldexp(x, pt.asarray([1, -2, 3, 0])), _M),
    "gcd": (lambda x: pt.gcd(x, x[::-1] + 3), np.arange(12).reshape(3, 4)),
    "lcm": (lambda x: pt.lcm(x, x[::-1] + 3), np.arange(12).reshape(3, 4)),
    "kaiser": (lambda x: x[0, 0] * pt.kaiser(6, 4.0), _M),
    "gradient": (lambda x: pt.gradient(x, 0.5, [0.0, 1, 3, 4], edge_order=2), _M),
    "insert": (lambda x: pt.insert(x, [1, 3], 9.0, axis=1), _M), "delete": (lambda x: pt.delete(x, -1, 0), _M),
    "block": (lambda x: pt.block([[x, x[:, :1]], [x[:1], x[:1, :1]]]), _M),
    "resize": (lambda x: pt.resize(x, (5, 3)), _M), "rollaxis": (lambda x: pt.rollaxis(x, 1), _M),
    "in-place writes": (_write_all, _M), "diag_indices": (lambda x: x[pt.diag_indices(3)], _M),
    "unwrap": (pt.unwrap, _M), "cumulative_prod": (lambda x: pt.cumulative_prod(x, axis=-1), _M / 4),
    "matvec": (lambda x: pt.matvec(x, x[0]), _M), "vecmat": (lambda x: pt.vecmat(x[:, 0], x), _M),
    "choose": (lambda x: pt.choose(pt.asarray([[0, 1, 1, 0]]), [x, -x]), _M),
    "asanyarray": (pt.asanyarray, _M), "ascontiguousarray": (lambda x: pt.ascontiguousarray(x[0, 0]), _M),
    "apply_along_axis": (lambda x: pt.apply_along_axis(pt.cumsum, 0, x), _M),
    "apply_over_axes": (lambda x: pt.apply_over_axes(pt.sum, x, [1]), _M),
    "piecewise": (lambda x: pt.piecewise(x, [x > 3], [lambda v: v * 2, -1.0]), _M),
    "polyval": (lambda x: pt.polyval(x[0], x), _M), "polyadd": (lambda x: pt.polyadd(x[0], x[1, :2]), _M),
    "polysub": (lambda x: pt.polysub(x[0, :3], x[1]), _M), "polyder": (lambda x: pt.polyder(x[0], 2), _M),
    "polyint": (lambda x: pt.polyint(x[0], 2, 1.0), _M),
    "polyfit": (lambda x: pt.polyfit(x[0], x[1] ** 2, 2), _M),
    "histogram2d": (lambda x: pt.histogram2d(x[0], x[1], bins=3), _M),
    "histogramdd": (lambda x: pt.histogramdd(x, bins=(2, 3, 2, 2)), _M),
    "shape queries": (lambda x: x * (pt.ndim(x) + pt.size(x, 0)) + pt.zeros(pt.shape(x)), _M),
}


@pytest.mark.parametrize("name", sorted(_JITTED))
def test_functions_inside_jit_match_eager(name):
    fn, a = _JITTED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = fn(pt.asarray(a))
        traced = pt.jit(fn)(pt.asarray(a))
    flat = lambda r: [v for item in (r if isinstance(r, (tuple, list)) else [r])  # noqa: E731
                      for v in (item if isinstance(item, (tuple, list)) else [item])]
    for e, t in zip(flat(eager), flat(traced), strict=True):
        same(t, e.numpy(), rtol=1e-12, atol=1e-12)


def test_value_reading_functions_refuse_inside_jit():
    for fn in (pt.trim_zeros, pt.real_if_close, pt.asarray_chkfinite, lambda x: pt.polymul(x, x),
               lambda x: pt.delete(x, pt.asarray([0])), lambda x: pt.array_equiv(x, x)):
        with pytest.raises(pt.TracerError):
            pt.jit(fn)(pt.asarray([0.0, 1.0, 0.0]) + 0j if fn is pt.real_if_close else pt.asarray([0.0, 1.0, 0.0]))


def test_numpy_functions_called_on_poot_arrays_reach_poot():
    """np.put / np.fill_diagonal / np.copyto on a poot array change that array (NumPy's own versions
    would change a converted copy and leave it as it was); np.insert, np.gradient, np.polyval return
    poot arrays equal to NumPy's."""
    a = pt.asarray(np.arange(6.0))
    np.put(a, [0, 2], [9, 8])
    np.testing.assert_array_equal(a.numpy(), [9, 1, 8, 3, 4, 5])
    m = pt.zeros((3, 3))
    np.fill_diagonal(m, 5)
    np.testing.assert_array_equal(m.numpy(), np.eye(3) * 5)
    b = pt.asarray(np.arange(5.0))
    np.copyto(b, 1.5)
    np.testing.assert_array_equal(b.numpy(), np.full(5, 1.5))
    for got, want in ((np.insert(pt.asarray([1, 2, 3]), 1, 7), np.insert([1, 2, 3], 1, 7)),
                      (np.gradient(pt.asarray([1.0, 4.0, 9.0])), np.gradient([1.0, 4.0, 9.0])),
                      (np.polyval(pt.asarray([1.0, 2.0]), pt.asarray([3.0])), np.polyval([1.0, 2.0], [3.0]))):
        assert isinstance(got, pt.Array)
        np.testing.assert_array_equal(got.numpy(), want)
