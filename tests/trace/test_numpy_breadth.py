"""NumPy functions beyond the array API standard (poot/trace/numpy_more.py), pad's index modes, the
in-place operators and methods, np.dtype of poot dtypes: each against NumPy on every test device,
eagerly and (for the lazy ones) inside @pt.jit."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from tolerance import assert_close

SETTINGS = settings(max_examples=int(os.environ.get("POOT_PROPERTY_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def rng(seed=0):
    return np.random.default_rng(seed)


def np_quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def check(got, want, dtype=None, ops=8):
    got = got.numpy() if isinstance(got, pt.Array) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert_close(got, want, pt.dtypes.as_dtype(dtype or want.dtype), ops=ops)


def jitted(fn, *args):
    f = pt.jit(fn)
    f(*args)
    out = f(*args)
    assert f.trace_count == 1
    return out


def with_nans(shape, dtype=np.float64, seed=0, frac=0.25):
    r = rng(seed)
    a = r.standard_normal(shape).astype(dtype)
    a[r.random(shape) < frac] = np.nan
    return a


# --- nan reductions -----------------------------------------------------------------------------
NAN_FUNCS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanmedian",
             "nancumsum", "median"]


@pytest.mark.parametrize("name", NAN_FUNCS)
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_reductions(name, axis, dtype, device):
    a = with_nans((5, 6), dtype)
    a[2, :] = np.nan                     # an all-NaN row
    want = np_quiet(getattr(np, name), a, axis=axis)
    check(getattr(pt, name)(pt.asarray(a), axis=axis), want, ops=16)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nanarg(name, device):
    a = with_nans((5, 6))
    check(getattr(pt, name)(pt.asarray(a), axis=1), getattr(np, name)(a, axis=1))
    check(getattr(pt, name)(pt.asarray(a)), getattr(np, name)(a))
    a[1, :] = np.nan   # NumPy raises for an all-NaN slice; lazily poot gives -1
    assert getattr(pt, name)(pt.asarray(a), axis=1).numpy()[1] == -1


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanmedian", "median"])
def test_nan_reductions_ints_keepdims_and_jit(name, device):
    a = rng(1).integers(-9, 9, (4, 3)).astype(np.int32)
    check(getattr(pt, name)(pt.asarray(a), axis=0, keepdims=True),
          getattr(np, name)(a, axis=0, keepdims=True))
    f = with_nans((4, 3), np.float32)
    check(jitted(lambda v: getattr(pt, name)(v, axis=-1), pt.asarray(f)), np_quiet(getattr(np, name), f, axis=-1))


def test_median_empty_and_0d(device):
    check(pt.median(pt.asarray(np.zeros(0))), np_quiet(np.median, np.zeros(0)))
    check(pt.median(pt.asarray(np.float32(3))), np.median(np.float32(3)))


# --- quantiles ----------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_quantile_properties(data, device):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), label="shape")
    nd = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.just(tuple(range(nd)))), label="axis")
    q = data.draw(st.one_of(st.floats(0, 100), st.lists(st.floats(0, 100), min_size=1, max_size=3)),
                  label="q")
    keep = data.draw(st.booleans(), label="keepdims")
    nan = data.draw(st.booleans(), label="nan")
    a = with_nans(shape, seed=data.draw(st.integers(0, 99)), frac=0.3 if nan else 0.0)
    name = data.draw(st.sampled_from(["percentile", "nanpercentile"]), label="fn")
    want = np_quiet(getattr(np, name), a, q, axis=axis, keepdims=keep)
    check(getattr(pt, name)(pt.asarray(a), q, axis=axis, keepdims=keep), want)
    qq = np.asarray(q) / 100
    want = np_quiet(getattr(np, name.replace("percentile", "quantile")), a, qq, axis=axis, keepdims=keep)
    check(getattr(pt, name.replace("percentile", "quantile"))(pt.asarray(a), qq, axis=axis, keepdims=keep),
          want)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_quantile_dtypes_and_jit(dtype, device):
    a = rng(2).integers(0, 50, (7, 4)).astype(dtype)
    for q in (0.3, [0.1, 0.5, 1.0]):
        check(pt.quantile(pt.asarray(a), q, axis=0), np.quantile(a, q, axis=0))
    check(jitted(lambda v: pt.percentile(v, [25, 75], axis=1), pt.asarray(a)),
          np.percentile(a, [25, 75], axis=1))
    with pytest.raises(pt.PootError):
        pt.quantile(pt.asarray(a), 1.5)


# --- differences, signals ----------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_diff_properties(data, device):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), label="shape")
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1), label="axis")
    n = data.draw(st.integers(0, 3), label="n")
    dtype = data.draw(st.sampled_from([np.float32, np.int16, np.bool_]), label="dtype")
    a = (rng(3).standard_normal(shape) * 4).astype(dtype)
    kw = {}
    if data.draw(st.booleans(), label="prepend"):
        kw["prepend"] = 1
    if data.draw(st.booleans(), label="append"):
        kw["append"] = np.zeros(shape[:axis % nd] + (2,) + shape[axis % nd + 1:], dtype)
    check(pt.diff(pt.asarray(a), n, axis, **kw), np.diff(a, n, axis, **kw))


def test_diff_errors_and_jit(device):
    with pytest.raises(pt.PootError):
        pt.diff(pt.asarray(np.float32(1)))
    a = rng(4).standard_normal((3, 5))
    check(jitted(lambda v: pt.diff(v, 2), pt.asarray(a)), np.diff(a, 2))


@pytest.mark.parametrize("n,m", [(5, 3), (3, 5), (4, 4), (6, 2), (2, 7), (1, 1), (5, 1)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(n, m, mode, device):
    r = rng(n * 10 + m)
    u, v = r.standard_normal(n).astype(np.float32), r.standard_normal(m).astype(np.float32)
    check(pt.convolve(u, v, mode), np.convolve(u, v, mode), ops=m + n)
    check(pt.correlate(pt.asarray(u), pt.asarray(v), mode), np.correlate(u, v, mode), ops=m + n)
    i, j = r.integers(-5, 5, n), r.integers(-5, 5, m)
    check(pt.convolve(i, j, mode), np.convolve(i, j, mode))


def test_convolve_jit_and_errors(device):
    u, v = rng(5).standard_normal(9), rng(6).standard_normal(4)
    check(jitted(lambda a, b: pt.convolve(a, b, "same"), pt.asarray(u), pt.asarray(v)),
          np.convolve(u, v, "same"))
    with pytest.raises(pt.PootError):
        pt.convolve(np.zeros(0), v)


@pytest.mark.parametrize("kw", [{}, {"left": -9.0, "right": 9.0}, {"period": 3.0}])
def test_interp(kw, device):
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, -1.0, 2.0])
    x = np.array([-1.0, 0.0, 0.5, 1.0, 3.0, 4.0, 5.0, np.nan] if not kw.get("period") else
                 [-1.0, 0.0, 0.5, 1.0, 3.0, 4.0, 5.0])
    check(pt.interp(x, xp, fp, **kw), np.interp(x, xp, fp, **kw))
    check(jitted(lambda a: pt.interp(a, xp, fp, **kw), pt.asarray(x.astype(np.float32))),
          np.interp(x.astype(np.float32), xp, fp, **kw))
    check(pt.interp(x, xp[:1], fp[:1]), np.interp(x, xp[:1], fp[:1]))


# --- statistics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"rowvar": False}, {"bias": True}, {"ddof": 0},
                                {"fweights": [1, 2, 1, 1, 3, 1]},
                                {"aweights": [1.0, 2.0, 0.5, 1.0, 3.0, 1.0]}])
def test_cov(kw, device):
    c = rng(7).standard_normal((3, 6))
    if kw.get("rowvar") is False:
        c = c.T
    check(pt.cov(c, **kw), np.cov(c, **kw))
    check(pt.cov(c.astype(np.float32)[0]), np.cov(c.astype(np.float32)[0]))


def test_corrcoef_and_jit(device):
    c = rng(8).standard_normal((4, 10))
    check(pt.corrcoef(c), np.corrcoef(c))
    check(pt.corrcoef(c[0], c[1]), np.corrcoef(c[0], c[1]))
    check(jitted(lambda v: pt.cov(v), pt.asarray(c)), np.cov(c))


@pytest.mark.parametrize("kw", [{}, {"bins": 4}, {"bins": [-1.0, 0.0, 0.5, 3.0]}, {"range": (-1, 1)},
                                {"density": True}, {"weights": True}, {"bins": 3, "density": True,
                                                                       "weights": True}])
def test_histogram(kw, device):
    a = rng(9).standard_normal(50).astype(np.float32)
    w = rng(10).random(50)
    kw = dict(kw)
    if kw.get("weights"):
        kw["weights"] = w
    counts, edges = np.histogram(a, **kw)
    got = pt.histogram(pt.asarray(a), **kw)
    check(got[0], counts)
    check(got[1], edges)
    got = jitted(lambda v: pt.histogram(v, **kw), pt.asarray(a))
    check(got[0], counts)


def test_histogram_edges(device):
    check(pt.histogram(pt.asarray(np.zeros(0)))[1], np.histogram(np.zeros(0))[1])
    check(pt.histogram(pt.asarray(np.ones(4)), 3)[0], np.histogram(np.ones(4), 3)[0])
    check(pt.histogram(pt.asarray(np.arange(10)), 3)[1], np.histogram(np.arange(10), 3)[1])
    with pytest.raises(pt.PootError):
        pt.histogram(pt.asarray(np.array([1.0, np.nan])))[0].numpy()   # range not finite
    with pytest.raises(pt.PootError):
        pt.histogram(pt.asarray(np.ones(3)), range=(2, 1))


# --- sets and counts ----------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_unique_properties(data, device):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=0, max_size=2).map(tuple), label="shape")
    a = rng(data.draw(st.integers(0, 99))).integers(-3, 3, shape).astype(np.float32)
    if a.size and data.draw(st.booleans(), label="nan"):
        a.reshape(-1)[0] = np.nan
    flags = {k: data.draw(st.booleans(), label=k) for k in ("return_index", "return_inverse",
                                                             "return_counts")}
    want = np.unique(a, **flags)
    got = pt.unique(pt.asarray(a), **flags)
    if not isinstance(want, tuple):
        want, got = (want,), (got,)
    for g, w in zip(got, want):
        check(g, w.astype(np.int64) if w.dtype.kind == "i" else w)


def test_unique_axis_and_jit(device):
    a = np.array([[1, 2], [1, 2], [0, 5]], np.int32)
    check(pt.unique(pt.asarray(a), axis=0), np.unique(a, axis=0))
    with pytest.raises(pt.TracerError):
        jitted(lambda v: pt.unique(v), pt.asarray(a))


@SETTINGS
@given(data=st.data())
def test_isin_properties(data, device):
    e = rng(data.draw(st.integers(0, 99))).integers(0, 10, data.draw(st.sampled_from([(), (4,), (3, 5)])))
    t = data.draw(st.lists(st.integers(0, 12), max_size=6), label="test")
    invert = data.draw(st.booleans(), label="invert")
    check(pt.isin(pt.asarray(e), t, invert=invert), np.isin(e, t, invert=invert))


def test_isin_large_and_jit(device):
    e = rng(11).integers(0, 5000, 3000)
    t = rng(12).integers(0, 5000, 1000)
    check(pt.isin(e, t), np.isin(e, t))
    check(jitted(lambda a: pt.isin(a, [1.0, 2.5]), pt.asarray(np.array([1.0, 2.0, 2.5, np.nan]))),
          np.isin([1.0, 2.0, 2.5, np.nan], [1.0, 2.5]))


@pytest.mark.parametrize("kw", [{}, {"minlength": 12}, {"weights": True}])
def test_bincount(kw, device):
    x = rng(13).integers(0, 7, 30)
    kw = dict(kw)
    if kw.get("weights"):
        kw["weights"] = rng(14).random(30)
    check(pt.bincount(pt.asarray(x), **kw), np.bincount(x, **kw))
    check(pt.bincount(pt.asarray(np.zeros(0, np.int64)), minlength=3), np.bincount(np.zeros(0, np.int64), minlength=3))
    with pytest.raises(pt.PootError):
        pt.bincount(pt.asarray(np.array([1, -1])))
    check(jitted(lambda v: pt.bincount(v, length=9), pt.asarray(x)), np.bincount(x, minlength=9))


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 0, 3)])
def test_argwhere(shape, device):
    a = rng(15).integers(0, 2, shape).astype(bool)
    check(pt.argwhere(pt.asarray(a)), np.argwhere(a).astype(np.int64))


# --- stacking, indices, files -------------------------------------------------------------------
def test_stacking(device):
    a, b = np.arange(3.0), np.arange(3.0) * 2
    m = np.arange(6).reshape(2, 3)
    check(pt.column_stack([a, b]), np.column_stack([a, b]))
    check(pt.column_stack([m.T, a]), np.column_stack([m.T, a]))
    check(pt.dstack([m, m]), np.dstack([m, m]))
    check(pt.dstack([a, b]), np.dstack([a, b]))
    for v in (np.float32(2), a, m, m[None]):
        check(pt.atleast_3d(v), np.atleast_3d(v))
    check(jitted(lambda x: pt.column_stack([x, x]), pt.asarray(a)), np.column_stack([a, a]))


@pytest.mark.parametrize("n,k,m", [(4, 0, None), (4, 1, 6), (5, -2, 3), (0, 0, None)])
def test_tri_indices(n, k, m, device):
    for name in ("triu_indices", "tril_indices"):
        for g, w in zip(getattr(pt, name)(n, k, m), getattr(np, name)(n, k, m)):
            check(g, w.astype(np.int64))
    a = np.zeros((3, 5))
    for g, w in zip(pt.triu_indices_from(a, 1), np.triu_indices_from(a, 1)):
        check(g, w.astype(np.int64))


def test_save_load(tmp_path, device):
    a = rng(16).standard_normal((3, 4)).astype(np.float32)
    p = tmp_path / "a.npy"
    pt.save(p, pt.asarray(a))
    np.testing.assert_array_equal(np.load(p), a)
    b = pt.load(p)
    assert isinstance(b, pt.Array) and b.device == device
    check(b, a)


# --- linalg.norm --------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(ord, device):
    c = rng(17).standard_normal((3, 5))
    check(pt.linalg.norm(c, ord), np.linalg.norm(c, ord))
    t = rng(18).standard_normal((2, 3, 4))
    check(pt.linalg.norm(t, ord, axis=(2, 0), keepdims=True), np.linalg.norm(t, ord, axis=(2, 0), keepdims=True))


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, 0.5, np.inf, -np.inf])
def test_vector_norm(ord, device):
    c = rng(19).standard_normal((3, 5)).astype(np.float32)
    check(pt.linalg.norm(c, ord, axis=1), np.linalg.norm(c, ord, axis=1), ops=16)
    check(pt.linalg.norm(c[0], ord, keepdims=True), np.linalg.norm(c[0], ord, keepdims=True), ops=16)
    i = np.arange(6).reshape(2, 3)
    check(pt.linalg.norm(i, ord, axis=-1), np.linalg.norm(i, ord, axis=-1))
    check(pt.linalg.norm(i), np.linalg.norm(i))
    check(jitted(lambda v: pt.linalg.norm(v, ord, axis=0), pt.asarray(c)), np.linalg.norm(c, ord, axis=0), ops=16)


# --- pad modes ----------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_pad_modes_properties(data, device):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), label="shape")
    mode = data.draw(st.sampled_from(["edge", "reflect", "symmetric", "wrap"]), label="mode")
    widths = [tuple(data.draw(st.integers(0, 6), label="w") for _ in range(2)) for _ in shape]
    a = rng(20).integers(0, 100, shape).astype(np.int32)
    check(pt.pad(pt.asarray(a), widths, mode), np.pad(a, widths, mode))


def test_pad_jit_and_errors(device):
    a = rng(21).standard_normal((3, 4))
    check(jitted(lambda v: pt.pad(v, 2, "reflect") * 2, pt.asarray(a)), np.pad(a, 2, "reflect") * 2)
    with pytest.raises(pt.PootError):
        pt.pad(pt.zeros((0, 2)), 1, "edge")
    with pytest.raises(pt.NotBuiltError):
        pt.pad(pt.zeros((3,)), 1, lambda vector, width, axis, kwargs: None)   # a function as mode


# --- methods ------------------------------------------------------------------------------------
def test_sort_argsort_methods(device):
    a = rng(22).standard_normal((3, 5))
    x = pt.asarray(a)
    alias = x
    old = x.copy()
    x.sort()
    check(alias, np.sort(a))                   # the object itself is sorted
    check(old, a)                              # another handle keeps the old value
    x = pt.asarray(a)
    x.sort(axis=0)
    check(x, np.sort(a, axis=0))
    check(pt.asarray(a).argsort(), np.argsort(a, kind="stable"))
    check(pt.asarray(a).argsort(axis=None), np.argsort(a, axis=None, kind="stable"))


def test_flat_and_fill(device):
    a = np.arange(12).reshape(3, 4)
    x = pt.asarray(a)
    assert [int(v) for v in x.flat] == list(a.flat)
    assert len(x.flat) == 12
    check(x.flat[5], a.flat[5])
    check(x.flat[2:7], a.flat[2:7])
    np.testing.assert_array_equal(np.asarray(x.flat), np.asarray(a.flat))
    x.fill(7)
    b = a.copy()
    b.fill(7)
    check(x, b)


def test_numpy_dtype_interop(device):
    assert np.dtype(pt.float32) == np.float32
    assert np.dtype(pt.int8) == np.int8
    assert np.zeros(2, dtype=pt.uint16).dtype == np.uint16
    assert pt.float32 == "float32" and pt.float32 == np.float32 and pt.float32 == np.dtype("f4")
    for other in ({}, "not a dtype", 3, None, [1], object()):
        assert (pt.float32 == other) is False
        assert (pt.float32 != other) is True
