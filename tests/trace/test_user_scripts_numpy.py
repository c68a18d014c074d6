"""NumPy user scripts that once gave wrong numbers or crashed: each case runs the same code with NumPy
and with poot and compares (tests/tolerance.py), eager and, where the result's shape is static, inside
@pt.jit."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import as_numpy
from tests.tolerance import assert_close as _assert_real_close

RNG = np.random.default_rng(1234)


def assert_close(actual, expected, dtype, ops=1, err_msg=""):
    """tests/tolerance.assert_close, with complex values compared part by part (both parts must
    match; the shared comparison reads only real values)."""
    a, e = np.asarray(actual), np.asarray(expected)
    if np.dtype(dtype).kind != "c" and a.dtype.kind != "c" and e.dtype.kind != "c":
        _assert_real_close(a, e, dtype, ops, err_msg)
        return
    real = np.finfo(np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.float64).dtype
    assert a.dtype.kind == "c", f"expected complex values, got {a.dtype}{err_msg}"
    _assert_real_close(a.real, e.real, real, ops, f"real part {err_msg}")
    _assert_real_close(a.imag, e.imag, real, ops, f"imaginary part {err_msg}")


def _complex(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# --- linalg.norm of complex arrays (the imaginary part was dropped) ---------------------------------
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ord_", [None, 1, -1, 2, -2, math.inf, -math.inf, 0, 3, 0.5])
def test_vector_norm_of_complex_uses_the_modulus(dtype, ord_):
    z = _complex((7,), dtype)
    got = pt.linalg.norm(pt.asarray(z), ord=ord_)
    expected = np.linalg.norm(z, ord=ord_)
    assert got.dtype == expected.dtype
    assert_close(got.numpy(), expected, expected.dtype, ops=8)


@pytest.mark.parametrize("ord_", [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("axis", [None, (1, 0), (-1, -2)])
def test_matrix_norm_of_complex_uses_the_modulus(ord_, axis):
    z = _complex((3, 4))
    expected = np.linalg.norm(z, ord=ord_, axis=axis)
    assert_close(pt.linalg.norm(pt.asarray(z), ord=ord_, axis=axis).numpy(), expected, np.float64, ops=16)


def test_norm_of_complex_inside_jit():
    z = _complex((5,))
    got = pt.jit(lambda v: pt.linalg.norm(v))(pt.asarray(z))
    assert_close(got.numpy(), np.linalg.norm(z), np.float64, ops=8)


# --- correlate conjugates its second operand -------------------------------------------------------
@given(n=st.integers(1, 9), m=st.integers(1, 9), mode=st.sampled_from(["valid", "same", "full"]),
       seed=st.integers(0, 2**16))
def test_correlate_of_complex_conjugates_v(n, m, mode, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    v = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    assert_close(pt.correlate(pt.asarray(a), pt.asarray(v), mode=mode).numpy(),
                 np.correlate(a, v, mode=mode), np.complex128, ops=2 * max(n, m))


def test_correlate_of_real_and_complex_operands():
    a, v = np.array([1.0, 2.0, -1.0, 0.5]), np.array([1j, 2 - 1j])
    assert_close(pt.correlate(a, pt.asarray(v), mode="full").numpy(), np.correlate(a, v, mode="full"),
                 np.complex128, ops=4)
    assert_close(pt.correlate(pt.asarray(v), a, mode="full").numpy(), np.correlate(v, a, mode="full"),
                 np.complex128, ops=4)


# --- interp of complex fp (the imaginary part was dropped) -----------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"left": 5j, "right": -1 + 2j}, {"period": 2.5}])
def test_interp_of_complex_fp_interpolates_both_parts(kwargs):
    x = np.array([-1.0, 0.0, 0.5, 1.5, 2.0, 3.0])
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([1 + 1j, 2.0, 3j])
    got = pt.interp(pt.asarray(x), pt.asarray(xp), pt.asarray(fp), **kwargs)
    expected = np.interp(x, xp, fp, **kwargs)
    assert got.dtype == pt.complex128
    assert_close(got.numpy(), expected, np.complex128, ops=4)


def test_interp_of_complex_fp_inside_jit():
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([1 + 1j, 2.0, 3j], np.complex64)
    f = pt.jit(lambda x: pt.interp(x, xp, fp))
    x = np.array([0.25, 1.75])
    assert_close(f(pt.asarray(x)).numpy(), np.interp(x, xp, fp), np.complex128, ops=4)


@pytest.mark.parametrize("which", ["x", "xp"])
def test_interp_refuses_complex_sample_points(which):
    args = {"x": np.array([0.5]), "xp": np.array([0.0, 1.0]), "fp": np.array([0.0, 1.0])}
    args[which] = args[which] + 1j
    with pytest.raises(pt.DTypeError, match=f"interp: {which} must be real"):
        pt.interp(pt.asarray(args["x"]), pt.asarray(args["xp"]), pt.asarray(args["fp"]))


# --- cov and corrcoef of complex variables (the imaginary parts were dropped) ----------------------
@pytest.mark.parametrize("kwargs", [{}, {"rowvar": False}, {"bias": True}, {"aweights": [1.0, 2.0, 0.5]},
                                    {"fweights": [1, 2, 1]}])
def test_cov_of_complex_variables_conjugates(kwargs):
    z = _complex((4, 3)) if kwargs.get("rowvar") is False else _complex((3, 3))
    expected = np.cov(z, **kwargs)
    got = pt.cov(pt.asarray(z), **kwargs)
    assert got.dtype == pt.complex128
    assert_close(got.numpy(), expected, np.complex128, ops=16)


def test_corrcoef_of_complex_variables():
    z, y = _complex((3, 6), np.complex64), RNG.standard_normal(6)
    assert_close(pt.corrcoef(pt.asarray(z)).numpy(), np.corrcoef(z), np.complex64, ops=16)
    assert_close(pt.corrcoef(pt.asarray(z[0]), y).numpy(), np.corrcoef(z[0], y), np.complex128, ops=16)


def test_bincount_refuses_complex_weights():
    with pytest.raises(pt.DTypeError, match="bincount: weights must be real"):
        pt.bincount(pt.asarray(np.array([0, 1, 1])), weights=pt.asarray(np.array([1j, 2, 3])))


# --- NumPy's positional arguments and variadic forms -----------------------------------------------
def test_atleast_nd_take_several_arrays():
    a, b = 3.0, np.arange(3.0)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        got = getattr(pt, name)(pt.asarray(a), pt.asarray(b))
        expected = getattr(np, name)(a, b)
        assert isinstance(got, tuple) and len(got) == 2
        for g, e in zip(got, expected):
            assert_close(g.numpy(), e, np.float64)


def test_sort_and_argsort_take_numpy_positional_axis_none_and_kind():
    x = RNG.integers(-5, 5, size=(3, 4))
    p = pt.asarray(x)
    assert_close(pt.sort(p, 0).numpy(), np.sort(x, 0), np.int64)
    assert_close(pt.sort(p, axis=None).numpy(), np.sort(x, axis=None), np.int64)
    assert_close(pt.argsort(p, None, "stable").numpy(), np.argsort(x, None, "stable"), np.int64)
    assert_close(pt.argsort(p, 0, kind="mergesort").numpy(), np.argsort(x, 0, kind="mergesort"), np.int64)
    assert_close(pt.jit(lambda v: pt.sort(v, axis=None))(p).numpy(), np.sort(x, axis=None), np.int64)
    with pytest.raises(pt.ShapeError, match="kind must be"):
        pt.sort(p, kind="bogus")


def test_searchsorted_side_by_position():
    a, v = np.array([1, 2, 2, 3]), np.array([2, 0, 5])
    assert_close(pt.searchsorted(pt.asarray(a), pt.asarray(v), "right").numpy(),
                 np.searchsorted(a, v, "right"), np.int64)


def test_like_functions_take_dtype_by_position():
    x = pt.asarray(np.arange(4))
    for name in ("zeros_like", "ones_like", "empty_like"):
        got = getattr(pt, name)(x, pt.float32)
        assert got.dtype == pt.float32 and got.shape == (4,)
    assert_close(pt.ones_like(x, pt.float32).numpy(), np.ones_like(np.arange(4), np.float32), np.float32)


def test_fft_functions_take_numpy_positional_arguments_and_norm_none():
    x = RNG.standard_normal((4, 6))
    cases = [("fft", (5, 0, "ortho")), ("ifft", (None, 0)), ("rfft", (7, 1, None)), ("irfft", (None, 0)),
             ("fftn", (None, (0,))), ("rfft2", ((4, 4), (0, 1), "forward"))]
    for name, args in cases:
        got = getattr(pt.fft, name)(pt.asarray(x), *args)
        expected = getattr(np.fft, name)(x, *args)
        assert_close(got.numpy(), expected, expected.dtype, ops=32, err_msg=name)
    assert_close(pt.fft.fftshift(pt.asarray(x), 0).numpy(), np.fft.fftshift(x, 0), np.float64)
    assert_close(pt.fft.fftfreq(8, 0.1).numpy(), np.fft.fftfreq(8, 0.1), np.float64)
    assert_close(pt.fft.rfftfreq(9, 0.5).numpy(), np.fft.rfftfreq(9, 0.5), np.float64)


# --- pad: a constant per axis and side, and {axis: width} -------------------------------------------
@st.composite
def _constant_pad_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    widths = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in range(ndim))
    values = draw(st.sampled_from(["pair", "per_axis", "one_per_axis"]))
    if values == "pair":
        cv = (draw(st.integers(-9, 9)), draw(st.integers(-9, 9)))
    elif values == "per_axis":
        cv = tuple((draw(st.integers(-9, 9)), draw(st.integers(-9, 9))) for _ in range(ndim))
    else:
        cv = tuple((draw(st.integers(-9, 9)),) for _ in range(ndim))
    return shape, widths, cv, draw(st.sampled_from([np.int32, np.float64, np.uint8]))


@given(_constant_pad_case())
def test_pad_constant_values_per_axis_and_side(case):
    shape, widths, cv, dtype = case
    x = np.arange(math.prod(shape)).reshape(shape).astype(dtype)
    with np.errstate(over="ignore"):
        expected = np.pad(x, widths, constant_values=np.asarray(cv).astype(dtype))
    got = pt.pad(pt.asarray(x), widths, constant_values=np.asarray(cv).astype(dtype))
    assert got.dtype == expected.dtype
    assert_close(got.numpy(), expected, dtype)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap", "mean", "linear_ramp"])
def test_pad_width_as_a_dict_of_axes(mode):
    x = np.arange(12.0).reshape(3, 4)
    for widths in ({-1: 2}, {0: (1, 0)}, {0: 1, 1: (0, 2)}):
        expected = np.pad(x, widths, mode=mode)
        assert_close(pt.pad(pt.asarray(x), widths, mode=mode).numpy(), expected, np.float64, ops=4)


def test_pad_constant_values_that_do_not_fit_raise_a_poot_error():
    with pytest.raises(pt.ShapeError, match="constant_values"):
        pt.pad(pt.ones((2, 3)), 1, constant_values=[1, 2, 3])


# --- einsum over zero-length axes ------------------------------------------------------------------
@pytest.mark.parametrize("subscripts,shapes", [("ij->j", [(0, 3)]), ("ij->i", [(0, 3)]), ("ij->", [(0, 3)]),
                                               ("ij,jk->ik", [(0, 3), (3, 2)]),
                                               ("ij,jk->ik", [(2, 0), (0, 2)]),
                                               ("i,i->i", [(1,), (4,)])])
def test_einsum_with_empty_or_broadcast_axes(subscripts, shapes):
    ops = [RNG.standard_normal(s) for s in shapes]
    expected = np.einsum(subscripts, *ops)
    assert_close(pt.einsum(subscripts, *[pt.asarray(o) for o in ops]).numpy(), expected, np.float64, ops=4)


# --- Generator.integers with array bounds, seeds from a SeedSequence -------------------------------
@pytest.mark.parametrize("endpoint", [False, True])
def test_integers_with_array_bounds_stay_in_each_range(endpoint):
    rng = pt.random.default_rng(5)
    low, high = np.array([0, 10, -7]), np.array([5, 12, -3])
    r = rng.integers(pt.asarray(low), high, size=(2000, 3), endpoint=endpoint).numpy()
    top = high if endpoint else high - 1
    assert r.dtype == np.int64
    assert (r.min(axis=0) == low).all() and (r.max(axis=0) == top).all()


def test_integers_with_empty_array_ranges_raise_a_poot_error():
    with pytest.raises(pt.ShapeError, match="low >= high"):
        pt.random.default_rng(0).integers([3, 4], [3, 9])


def test_default_rng_from_a_seed_sequence_is_deterministic():
    a = pt.random.default_rng(np.random.SeedSequence(3)).random(4).numpy()
    b = pt.random.default_rng(np.random.SeedSequence(3)).random(4).numpy()
    assert np.array_equal(a, b) and ((0 <= a) & (a < 1)).all()
    with pytest.raises(pt.DTypeError, match="default_rng: seed"):
        pt.random.default_rng(1.5)


# --- files ---------------------------------------------------------------------------------------
def test_savez_round_trips_and_bfloat16_is_refused(tmp_path):
    a, b = np.arange(5), np.array([1 + 2j, -3j])
    pt.savez(tmp_path / "pair.npz", pt.asarray(a), named=pt.asarray(b))
    pt.savez_compressed(tmp_path / "small.npz", a=a)
    got = pt.load(tmp_path / "pair.npz")
    assert_close(as_numpy(got["arr_0"]), a, np.int64)
    assert_close(as_numpy(got["named"]), b, np.complex128)
    assert_close(np.load(tmp_path / "small.npz")["a"], a, np.int64)
    with pytest.raises(pt.DTypeError, match="bfloat16"):
        pt.save(tmp_path / "half.npy", pt.ones(2, dtype=pt.bfloat16))


# --- NumPy functions poot lacked, against NumPy ----------------------------------------------------
_X = RNG.standard_normal((3, 4))
_I = RNG.integers(-5, 9, size=(3, 4))
_V = np.array([1.0, 2.0, 4.0, 7.0])
_SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 0.0, -3.5, 2.5])

EVERYDAY = {
    "ptp": lambda xp, a: xp.ptp(a, axis=1),
    "average_weights": lambda xp, a: xp.average(a, axis=1, weights=_V),
    "average_returned": lambda xp, a: xp.average(a, axis=0, weights=[1.0, 2.0, 3.0], returned=True),
    "nan_to_num": lambda xp, a: xp.nan_to_num(xp.asarray(_SPECIAL) * a[0, 0], nan=-1.0, posinf=9.0),
    "divmod": lambda xp, a: xp.divmod(a, -0.7),
    "modf": lambda xp, a: xp.modf(xp.asarray(_SPECIAL) + a[0, 0] * 0),
    "fmod": lambda xp, a: xp.fmod(a * 5, 1.5),
    "fmod_int": lambda xp, a: xp.fmod(xp.asarray(_I), -4),
    "heaviside": lambda xp, a: xp.heaviside(xp.asarray(_SPECIAL), 0.5),
    "sinc": lambda xp, a: xp.sinc(a),
    "isposinf": lambda xp, a: (xp.isposinf(xp.asarray(_SPECIAL)), xp.isneginf(xp.asarray(_SPECIAL))),
    "digitize": lambda xp, a: (xp.digitize(a, [-1.0, 0.0, 1.0]),
                               xp.digitize(a, [1.0, 0.0, -1.0], right=True)),
    "ediff1d": lambda xp, a: xp.ediff1d(a, to_begin=-99.0, to_end=[1.0, 2.0]),
    "trapezoid": lambda xp, a: (xp.trapezoid(a, dx=0.5, axis=0), xp.trapezoid(a, x=_V)),
    "diag": lambda xp, a: (xp.diag(a, 1), xp.diag(a[0], -2)),
    "diagflat": lambda xp, a: xp.diagflat(a[:2, :2], 1),
    "tri": lambda xp, a: xp.tri(3, 5, 1) * a[0, 0],
    "vander": lambda xp, a: xp.vander(a[0], 3, increasing=True),
    "kron": lambda xp, a: xp.kron(a[:2, :2], a),
    "cross": lambda xp, a: (xp.cross(a[:, :3], a[:, 1:]), xp.cross(a[:, :3], a[:, 1:], axis=0)),
    "rot90": lambda xp, a: (xp.rot90(a), xp.rot90(a, 2), xp.rot90(a, -1)),
    "flips": lambda xp, a: (xp.fliplr(a), xp.flipud(a)),
    "splits": lambda xp, a: (xp.hsplit(a, 2), xp.vsplit(a, [1])),
    "logspace": lambda xp, a: xp.logspace(0, 3, 4, base=2) * a[0, 0],
    "geomspace": lambda xp, a: (xp.geomspace(1, 1000, 4) * a[0, 0], xp.geomspace(-1, -256, 5)),
    "indices": lambda xp, a: xp.indices((2, 3)),
    "unravel_index": lambda xp, a: xp.unravel_index(xp.asarray(np.array([1, 7, 11])), (3, 4)),
    "ravel_multi_index": lambda xp, a: xp.ravel_multi_index((np.array([5, -1]), np.array([1, 9])), (3, 4),
                                                            mode=("wrap", "clip")),
    "ix_": lambda xp, a: a[xp.ix_([0, 2], [1, 3])],
    "select": lambda xp, a: xp.select([a > 1, a < -1], [a, -a], default=0.5),
    "windows": lambda xp, a: tuple(getattr(xp, w)(m) * a[0, 0] for w in ("hanning", "hamming", "blackman",
                                                                        "bartlett") for m in (1, 6, 9)),
    "append": lambda xp, a: xp.append(a, [1.0, 2.0]),
    "lexsort": lambda xp, a: xp.lexsort((xp.asarray(_I[0]), xp.asarray(_I[1]))),
    "compress": lambda xp, a: xp.compress([True, False, True], a, axis=0),
    "sets": lambda xp, a: (xp.intersect1d(xp.asarray(_I), [1, 3, 5]), xp.union1d(xp.asarray(_I[0]), [100]),
                           xp.setdiff1d(xp.asarray(_I[0]), [1]),
                           xp.setxor1d(xp.asarray(_I[0]), xp.asarray(_I[1]))),
}


def _leaves(t):
    return [y for e in t for y in _leaves(e)] if isinstance(t, (tuple, list)) else [t]


@pytest.mark.parametrize("name", sorted(EVERYDAY))
def test_everyday_numpy_function_matches_numpy(name):
    fn = EVERYDAY[name]
    with np.errstate(all="ignore"):
        expected = _leaves(fn(np, _X))
    got = _leaves(fn(pt, pt.asarray(_X)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g = as_numpy(g)
        assert g.dtype == np.asarray(e).dtype, name
        assert_close(g, e, np.asarray(e).dtype, ops=8, err_msg=name)


def test_everyday_functions_trace_inside_jit():
    lazy = [n for n in sorted(EVERYDAY) if n not in ("compress", "sets")]
    f = pt.jit(lambda a: [EVERYDAY[n](pt, a) for n in lazy])
    for name, got in zip(lazy, f(pt.asarray(_X))):
        with np.errstate(all="ignore"):
            expected = _leaves(EVERYDAY[name](np, _X))
        for g, e in zip(_leaves(got), expected):
            assert_close(as_numpy(g), e, np.asarray(e).dtype, ops=8, err_msg=name)


@given(st.lists(st.integers(-9, 9), min_size=1, max_size=12), st.integers(0, 11))
def test_partition_meets_numpys_contract(values, k):
    x = np.array(values)
    k = k % len(values)
    got = pt.partition(pt.asarray(x), k).numpy()
    by_index = x[pt.argpartition(pt.asarray(x), k).numpy()]
    for p in (got, by_index):
        assert p[k] == np.partition(x, k)[k]
        assert (p[:k] <= p[k]).all() and (p[k + 1:] >= p[k]).all()


# --- histogram bin estimators ('auto', 'fd', ...) and histogram_bin_edges -------------------------
@pytest.mark.filterwarnings("ignore:The number of bins estimated may be suboptimal")
@pytest.mark.parametrize("estimator", ["auto", "fd", "sturges", "sqrt", "doane", "scott", "rice", "stone"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_histogram_bin_estimators_match_numpy(estimator, dtype):
    data = (RNG.standard_normal(300) * 20).astype(dtype)
    for range_ in (None, (-10, 10)):
        counts, edges = pt.histogram(pt.asarray(data), bins=estimator, range=range_)
        expected_counts, expected_edges = np.histogram(data, bins=estimator, range=range_)
        assert_close(counts.numpy(), expected_counts, np.int64)
        assert_close(edges.numpy(), expected_edges, expected_edges.dtype, ops=4)
        assert_close(pt.histogram_bin_edges(pt.asarray(data), estimator, range_).numpy(), expected_edges,
                     expected_edges.dtype, ops=4)


def test_histogram_bin_edges_for_a_count_is_lazy_and_estimators_refuse_weights_and_jit():
    data = RNG.standard_normal(50)
    got = pt.jit(lambda v: pt.histogram_bin_edges(v, 7))(pt.asarray(data))
    assert_close(got.numpy(), np.histogram_bin_edges(data, 7), np.float64, ops=4)
    with pytest.raises(pt.DTypeError, match="does not take weights"):
        pt.histogram(pt.asarray(data), bins="auto", weights=pt.asarray(data))
    with pytest.raises(pt.TracerError, match="number of bins depends on the values"):
        pt.jit(lambda v: pt.histogram(v, bins="auto"))(pt.asarray(data))


# --- NumPy-style calls of pt.random's key-based functions draw from the global-state generator -------
@pytest.mark.parametrize("call,shape", [(lambda: pt.random.normal(size=3), (3,)),
                                        (lambda: pt.random.normal(0.0, 1.0, 3), (3,)),
                                        (lambda: pt.random.uniform(size=(2, 2)), (2, 2)),
                                        (lambda: pt.random.randint(0, 5, size=3), (3,))])
def test_numpy_style_random_calls_draw_from_the_global_generator(call, shape):
    pt.random.seed(3)
    first = call()
    pt.random.seed(3)
    assert first.shape == shape
    np.testing.assert_array_equal(first.numpy(), call().numpy())


def test_numpy_random_names_without_a_global_function_point_to_default_rng():
    with pytest.raises(AttributeError, match=r"rng\.integers"):
        pt.random.integers(0, 5)
    with pytest.raises(AttributeError, match="default_rng"):
        pt.random.RandomState(0)
    k = pt.random.key(0)
    assert pt.random.normal(k, (3,)).shape == (3,) and pt.random.randint(k, (2,), 0, 5).dtype == pt.int64


def test_svd_takes_numpys_compute_uv_and_positional_full_matrices():
    m = RNG.standard_normal((4, 3))
    assert_close(pt.linalg.svd(pt.asarray(m), compute_uv=False).numpy(), np.linalg.svd(m, compute_uv=False),
                 np.float64, ops=16)
    u, s, vh = pt.linalg.svd(pt.asarray(m), False)
    assert u.shape == (4, 3)
    assert_close(((u * s[None, :]) @ vh).numpy(), m, np.float64, ops=16)


@pytest.mark.parametrize("start,stop,num,kwargs", [
    (np.array([0.0, 1.0]), np.array([1.0, 3.0]), 4, {"axis": 1}),
    (0.0, np.array([1.0, 3.0]), 3, {}),
    (np.array([0, 1]), 5, 3, {"dtype": np.int64, "endpoint": False}),
    (np.array([[0.0], [1.0]], np.float32), np.array([2.0, 4.0, 8.0], np.float32), 5, {"axis": -1}),
    (np.array([1j, 2.0]), 3.0, 3, {}),
])
def test_linspace_with_array_ends(start, stop, num, kwargs):
    expected = np.linspace(start, stop, num, **kwargs)
    got = pt.linspace(pt.asarray(start) if isinstance(start, np.ndarray) else start, stop, num, **kwargs)
    assert got.dtype == expected.dtype
    assert_close(got.numpy(), expected, expected.dtype, ops=4)


# --- NumPy keywords spelled out at their defaults (out=None, order='C', optimize=...) run unchanged --
_DEFAULT_KEYWORDS = [
    lambda xp, a: xp.clip(a, 1, 5, out=None),
    lambda xp, a: xp.concatenate([a, a], axis=0, out=None),
    lambda xp, a: xp.stack([a, a], 1, out=None, dtype=xp.float32),
    lambda xp, a: xp.einsum("ij->i", a, optimize=True),
    lambda xp, a: xp.matmul(a, a.T, out=None),
    lambda xp, a: xp.dot(a, a.T, out=None),
    lambda xp, a: xp.zeros((2, 2), dtype=xp.float32, order="C"),
    lambda xp, a: xp.full(3, 2, order="C"),
    lambda xp, a: xp.asarray(a, order="C"),
    lambda xp, a: xp.copy(a, order="K"),
]


@pytest.mark.parametrize("k", range(len(_DEFAULT_KEYWORDS)))
def test_numpy_default_keywords_are_accepted(k):
    a = np.arange(12.0).reshape(3, 4)
    expected = _DEFAULT_KEYWORDS[k](np, a)
    got = _DEFAULT_KEYWORDS[k](pt, pt.asarray(a))
    assert got.dtype == expected.dtype
    assert_close(got.numpy(), expected, expected.dtype, ops=4)


def test_other_out_and_order_values_raise_poot_errors():
    a = pt.ones((2, 2))
    with pytest.raises(pt.ShapeError, match="clip: out= is not supported"):
        pt.clip(a, 0, 1, out=a)
    with pytest.raises(pt.ShapeError, match="order='X'"):
        pt.zeros(2, order="X")


# --- pad's reflect_type='odd' ----------------------------------------------------------------------
@given(n=st.integers(1, 5), lo=st.integers(0, 12), hi=st.integers(0, 12),
       mode=st.sampled_from(["reflect", "symmetric"]), dtype=st.sampled_from([np.float64, np.int32, np.uint8]))
def test_pad_odd_reflection_matches_numpy(n, lo, hi, mode, dtype):
    x = (np.arange(n) * 3 % 7 + 1).astype(dtype)
    with np.errstate(over="ignore"):
        expected = np.pad(x, (lo, hi), mode=mode, reflect_type="odd")
    got = pt.pad(pt.asarray(x), (lo, hi), mode=mode, reflect_type="odd")
    assert got.dtype == expected.dtype
    assert_close(got.numpy(), expected, dtype, ops=4)


def test_pad_odd_reflection_of_a_matrix_inside_jit():
    x = RNG.standard_normal((3, 4))
    got = pt.jit(lambda a: pt.pad(a, ((1, 2), (3, 0)), mode="reflect", reflect_type="odd"))(pt.asarray(x))
    assert_close(got.numpy(), np.pad(x, ((1, 2), (3, 0)), mode="reflect", reflect_type="odd"), np.float64, ops=4)


# --- reductions with where= ------------------------------------------------------------------------
_WHERE_CASES = {
    "sum": lambda xp, a, m: xp.sum(a, axis=0, where=m),
    "sum_row_mask": lambda xp, a, m: xp.sum(a, axis=1, where=m[0], keepdims=True),
    "prod": lambda xp, a, m: xp.prod(a, axis=1, where=m),
    "mean": lambda xp, a, m: (xp.mean(a, where=m), xp.mean(a, axis=0, where=m)),
    "var_std": lambda xp, a, m: (xp.var(a, axis=0, where=m, ddof=1), xp.std(a, axis=1, where=m)),
    "max_min": lambda xp, a, m: (xp.max(a, axis=1, where=m, initial=-10.0), xp.min(a, where=m, initial=10.0)),
    "all_any": lambda xp, a, m: (xp.all(a > -1, axis=0, where=m), xp.any(a > 1, where=m)),
    "ufunc_reduce": lambda xp, a, m: xp.add.reduce(a, axis=1, where=m),
    "nansum": lambda xp, a, m: xp.nansum(a, where=m),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # NumPy warns on the empty selections (NaN)
@pytest.mark.parametrize("name", sorted(_WHERE_CASES))
def test_reductions_with_where_match_numpy(name):
    a = RNG.standard_normal((3, 4))
    a[1, 1] = 0.0
    m = a > 0
    fn = _WHERE_CASES[name]
    expected = _leaves(fn(np, a, m))
    for got in (_leaves(fn(pt, pt.asarray(a), pt.asarray(m))),
                _leaves(pt.jit(lambda x, w: fn(pt, x, w))(pt.asarray(a), pt.asarray(m)))):
        for g, e in zip(got, expected):
            assert_close(as_numpy(g), e, np.asarray(e).dtype, ops=8, err_msg=name)


def test_max_with_where_needs_initial_as_numpy():
    with pytest.raises(pt.ShapeError, match="specify 'initial'"):
        pt.max(pt.ones(3), where=pt.asarray(np.array([True, False, True])))
