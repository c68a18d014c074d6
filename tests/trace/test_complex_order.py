"""Ordering complex values as NumPy 2 does (lexicographic on (real, imaginary), NaN parts last or
propagated): sort, argsort, maximum/minimum, max/min, argmax/argmin, clip, round per part, cumprod,
the nan-ignoring forms; eager and under @pt.jit, checked against NumPy on hypothesis-drawn arrays
with NaN and infinite parts and ties in the real part."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poot as pt
from tests.tolerance import assert_close

# few distinct parts so that real parts tie often; NaN, infinities and signed zeros among them
PARTS = [0.0, -0.0, 1.0, -1.5, 2.0, math.inf, -math.inf, math.nan]
CDT = [np.complex64, np.complex128]


@st.composite
def complex_arrays(draw, min_dims=0, max_dims=3, min_side=0, finite=False, shape=None, dtype=None):
    if shape is None:
        ndim = draw(st.integers(min_dims, max_dims))
        shape = tuple(draw(st.lists(st.integers(min_side, 4), min_size=ndim, max_size=ndim)))
    n = math.prod(shape)
    pool = PARTS[:5] if finite else PARTS
    re = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    im = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    d = dtype or draw(st.sampled_from(CDT))
    a = np.empty(shape, d)
    a.real, a.imag = np.reshape(re, shape), np.reshape(im, shape)     # 1j * inf would be nan + inf j
    return a


def _axes(draw, a):
    """None or an axis of `a`, negative half of the time."""
    if a.ndim == 0 or draw(st.booleans()):
        return None
    ax = draw(st.integers(0, a.ndim - 1))
    return ax - a.ndim if draw(st.booleans()) else ax


def assert_same(got, want, msg=""):
    """Equal values (NaN where NumPy has NaN in either part), equal shape and dtype."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{msg}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "c":
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(part(got), part(want), err_msg=msg)
    else:
        np.testing.assert_array_equal(got, want, err_msg=msg)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_sort_argsort(data):
    a = data.draw(complex_arrays(min_dims=1))
    ax = data.draw(st.integers(-a.ndim, a.ndim - 1))
    x = pt.asarray(a)
    assert_same(pt.sort(x, axis=ax).numpy(), np.sort(a, axis=ax, kind="stable"), "sort")
    assert_same(pt.argsort(x, axis=ax).numpy(), np.argsort(a, axis=ax, kind="stable"), "argsort")
    want = np.flip(np.argsort(np.flip(a, axis=ax), axis=ax, kind="stable"), axis=ax)
    want = (a.shape[ax] - 1 - want) if a.size else want
    assert_same(pt.argsort(x, axis=ax, descending=True).numpy(), want.astype(np.int64), "argsort desc")
    assert_same(pt.sort(x, axis=ax, descending=True).numpy(),
                np.flip(np.sort(a, axis=ax, kind="stable"), axis=ax), "sort desc")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_maximum_minimum_clip(data):
    a = data.draw(complex_arrays(max_dims=2))
    b_shape = a.shape[data.draw(st.integers(0, a.ndim)):]        # a suffix: broadcastable
    b = data.draw(complex_arrays(shape=b_shape, dtype=a.dtype))
    x, y = pt.asarray(a), pt.asarray(b)
    assert_same(pt.maximum(x, y).numpy(), np.maximum(a, b), "maximum")
    assert_same(pt.minimum(x, y).numpy(), np.minimum(a, b), "minimum")
    lo, hi = a.dtype.type(-1 + 1j), a.dtype.type(1 - 1j)
    assert_same(pt.clip(x, lo, hi).numpy(), np.clip(a, lo, hi), "clip")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_comparisons_fmax_fmin_rint(data):
    """<, <=, >, >= (the real parts decide only when no imaginary part is NaN), fmax/fmin (a NaN part
    loses) and rint per part, against NumPy; operators, functions and a Python complex scalar."""
    a = data.draw(complex_arrays(max_dims=2))
    b_shape = a.shape[data.draw(st.integers(0, a.ndim)):]
    b = data.draw(complex_arrays(shape=b_shape, dtype=a.dtype))
    x, y = pt.asarray(a), pt.asarray(b)
    with np.errstate(invalid="ignore"):
        for name in ("less", "less_equal", "greater", "greater_equal"):
            assert_same(getattr(pt, name)(x, y).numpy(), getattr(np, name)(a, b), name)
        assert_same((x < y).numpy(), a < b, "<")
        assert_same((x >= 1 + 2j).numpy(), a >= 1 + 2j, ">= scalar")
        for name in ("fmax", "fmin"):
            assert_same(getattr(pt, name)(x, y).numpy(), getattr(np, name)(a, b), name)
        assert_same(pt.rint(x * 2.5).numpy(), np.rint(a * a.dtype.type(2.5)), "rint")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_searchsorted(data):
    """Counts against NumPy's sort order (NaN parts last, in its order of them), both sides."""
    a = np.sort(data.draw(complex_arrays(min_dims=1, max_dims=1)))
    v = data.draw(complex_arrays(max_dims=2, dtype=a.dtype))
    for side in ("left", "right"):
        got = pt.searchsorted(pt.asarray(a), pt.asarray(v), side=side).numpy()
        assert_same(got, np.asarray(np.searchsorted(a, v, side=side)), side)


@pytest.mark.parametrize("a", [np.array([3, 1, 2], np.int8), np.array([[2, 1], [0, 5]], np.uint16),
                               np.array([3.0, math.nan, -0.0, 1.0], np.float32), np.array([True, False]),
                               np.array([1 + 2j, 1 + 1j, complex(math.nan, 0), 0j], np.complex64)])
def test_sort_complex(a):
    assert_same(pt.sort_complex(pt.asarray(a)).numpy(), np.sort_complex(a), str(a.dtype))


def test_comparisons_under_jit_and_floor_refused():
    a = np.array([1 + 2j, 1 + 3j, complex(1, math.nan), 0 + 5j], np.complex64)
    f = pt.jit(lambda x, y: (x < y, pt.fmax(x, y), pt.rint(x)))
    got = f(pt.asarray(a), pt.asarray(a[::-1].copy()))
    with np.errstate(invalid="ignore"):
        for g, w in zip(got, (a < a[::-1], np.fmax(a, a[::-1]), np.rint(a))):
            assert_same(g.numpy(), w)
    with pytest.raises(pt.DTypeError, match="floor"):          # NumPy refuses complex floor too
        pt.floor(pt.asarray(a))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_max_min_argmax_argmin(data):
    a = data.draw(complex_arrays(min_side=1))
    ax = _axes(data.draw, a)
    keep = data.draw(st.booleans())
    x = pt.asarray(a)
    for name in ("max", "min", "argmax", "argmin"):
        got = getattr(pt, name)(x, axis=ax, keepdims=keep).numpy()
        assert_same(got, np.asarray(getattr(np, name)(a, axis=ax, keepdims=keep)), f"{name} axis={ax}")


def test_reductions_over_several_axes_and_initial():
    a = (np.arange(24) % 5 + 1j * (np.arange(24) % 3)).reshape(2, 3, 4).astype(np.complex64)
    a[1, 2, 0] = complex(math.nan, 1)
    x = pt.asarray(a)
    for axes in ((0, 2), (-1, 0), (), (0, 1, 2)):
        assert_same(pt.max(x, axis=axes).numpy(), np.max(a, axis=axes), f"max {axes}")
        assert_same(pt.min(x, axis=axes, keepdims=True).numpy(), np.min(a, axis=axes, keepdims=True),
                    f"min {axes}")
    b = a[:1]
    assert_same(pt.max(pt.asarray(b), axis=1, initial=3 + 9j).numpy(), np.max(b, axis=1, initial=3 + 9j),
                "initial")
    e = np.zeros((0, 3), np.complex128)
    assert_same(pt.max(pt.asarray(e), axis=0, initial=1j).numpy(), np.max(e, axis=0, initial=1j), "empty")
    with pytest.raises(pt.ShapeError):
        pt.max(pt.asarray(e), axis=0)
    with pytest.raises(pt.ShapeError):
        pt.argmax(pt.asarray(e))


def test_zero_d():
    a = np.complex128(complex(2, math.nan))
    x = pt.asarray(a)
    for name in ("max", "min", "argmax", "argmin"):
        assert_same(getattr(pt, name)(x).numpy(), np.asarray(getattr(np, name)(a)), name)
    assert_same(pt.round(x).numpy(), np.asarray(np.round(a)), "round")
    assert_same(pt.cumprod(x).numpy(), np.cumprod(a), "cumprod")
    with pytest.raises(pt.ShapeError):
        pt.sort(x)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_round(data):
    a = data.draw(complex_arrays())
    a = a * a.dtype.type(1.2345 - 0.6789j) if a.size else a
    dec = data.draw(st.integers(-1, 3))
    assert_same(pt.round(pt.asarray(a), dec).numpy(), np.round(a, dec), f"round {dec}")


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_cumprod(data):
    """Finite values: NumPy's running product up to rounding (a parallel scan reassociates it)."""
    a = data.draw(complex_arrays(finite=True))
    ax = _axes(data.draw, a)
    got, want = pt.cumprod(pt.asarray(a), axis=ax).numpy(), np.cumprod(a, axis=ax)
    assert got.dtype == want.dtype and got.shape == want.shape
    for part in (np.real, np.imag):
        assert_close(part(got), part(want), got.real.dtype, ops=8)


def test_cumprod_keeps_leading_infinities():
    """A value with no predecessor is kept as is, not multiplied by 1 + 0j (which gives NaN)."""
    a = np.array([complex(math.inf, 0), complex(-math.inf, math.inf)], np.complex128)
    assert_same(pt.cumprod(pt.asarray(a)[:1]).numpy(), np.cumprod(a[:1]), "first")
    assert_same(pt.cumprod(pt.asarray(a[1:])).numpy(), np.cumprod(a[1:]), "second")


def test_under_vmap():
    a = np.array([[1 + 2j, 1 + 1j, complex(math.nan, 0)], [0 + 5j, 2 - 1j, 2 - 1j]], np.complex64)
    x = pt.asarray(a)
    assert_same(pt.vmap(lambda v: pt.sort(v))(x).numpy(), np.sort(a, axis=1), "sort")
    assert_same(pt.vmap(lambda v: pt.argsort(v))(x).numpy(), np.argsort(a, axis=1, kind="stable"), "argsort")
    assert_same(pt.vmap(lambda v: pt.max(v))(x).numpy(), np.max(a, axis=1), "max")
    assert_same(pt.vmap(lambda v: pt.argmin(v))(x).numpy(), np.argmin(a, axis=1), "argmin")


def test_nan_ignoring_forms():
    a = np.array([[1 + 2j, complex(math.nan, 0), 3 - 1j], [complex(0, math.nan), -1j, 2 + 0j]],
                 np.complex64)
    x = pt.asarray(a)
    for name in ("nanmax", "nanmin", "nanargmax", "nanargmin", "nancumprod", "nansum"):
        assert_same(getattr(pt, name)(x, axis=1).numpy(), np.asarray(getattr(np, name)(a, axis=1)), name)


def test_under_jit():
    a = np.array([[1 + 2j, 1 + 1j, complex(math.nan, 0)], [0 + 5j, 2 - 1j, 2 - 1j]], np.complex64)

    @pt.jit
    def f(x):
        return (pt.sort(x, axis=1), pt.argsort(x, axis=0), pt.max(x, axis=0), pt.argmin(x),
                pt.maximum(x, x[:1]), pt.round(x * 1.37, 1), pt.cumprod(x[1]))

    want = (np.sort(a, axis=1), np.argsort(a, axis=0, kind="stable"), np.max(a, axis=0),
            np.asarray(np.argmin(a)), np.maximum(a, a[:1]), np.round(a * np.complex64(1.37), 1),
            np.cumprod(a[1]))
    for k, (g, w) in enumerate(zip(f(pt.asarray(a)), want)):
        if k == 6:
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
        else:
            assert_same(g.numpy(), w, str(k))


def test_real_results_unchanged():
    """The real paths keep their own ops (no complex lowering involved)."""
    a = np.array([3.0, math.nan, -1.0, 2.0], np.float32)
    x = pt.asarray(a)
    assert_same(pt.sort(x).numpy(), np.sort(a), "sort")
    assert_same(pt.max(x).numpy(), np.asarray(np.max(a)), "max")
    assert_same(pt.argmax(x).numpy(), np.asarray(np.argmax(a)), "argmax")
    assert_same(pt.cumprod(x).numpy(), np.cumprod(a), "cumprod")
