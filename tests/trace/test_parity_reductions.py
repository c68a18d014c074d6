"""Reductions and scans against NumPy: every dtype, axis int/tuple/None/negative, keepdims, 0-d, empty
and non-contiguous inputs, NumPy's result dtypes; where NumPy refuses (an empty max, a bad axis),
poot raises a PootError of the same builtin class."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from tolerance import assert_close

from .helpers import ALL, ALL_LAYOUTS, expected_result_dtype, ids, layout_pair, reference_input, round_to

REDUCTIONS = [  # (name, kwargs for both, takes keepdims)
    ("sum", {}, True), ("prod", {}, True), ("mean", {}, True), ("var", {}, True),
    ("var", {"ddof": 1}, True), ("std", {}, True), ("max", {}, True), ("min", {}, True),
    ("argmax", {}, True), ("argmin", {}, True), ("any", {}, True), ("all", {}, True),
    ("cumsum", {}, False), ("cumprod", {}, False), ("count_nonzero", {}, True),
]
AXES = [None, 0, -1, (0, 1), (-1, 0), ()]


def _cases(name, kw, keep, layout, a):
    for axis in AXES:
        if name in ("argmax", "argmin", "cumsum", "cumprod") and isinstance(axis, tuple):
            continue
        for keepdims in ((False, True) if keep else (None,)):
            kwargs = dict(kw, axis=axis)
            if keepdims is not None:
                kwargs["keepdims"] = keepdims
            yield kwargs


def _numpy(name, a, kwargs):
    fn = getattr(np, name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(a, **kwargs)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("name,kw,keep", REDUCTIONS, ids=[f"{r[0]}{r[1] or ''}" for r in REDUCTIONS])
def test_reduction_matches_numpy(device, name, kw, keep, dtype):
    fn = getattr(pt, name)
    cases = []
    for layout in ALL_LAYOUTS:
        a, x = layout_pair(dtype, layout)
        for kwargs in _cases(name, kw, keep, layout, a):
            try:
                expected = _numpy(name, reference_input(a, dtype), kwargs)
                np_dtype = _numpy(name, a if dtype is not dt.bfloat16 else a.astype(np.float16), kwargs)
            except (ValueError, IndexError, TypeError) as e:
                kind = type(e).__mro__[1] if type(e).__name__ == "AxisError" else type(e)
                with pytest.raises(pt.PootError) as info:
                    fn(x, **kwargs)
                assert isinstance(info.value, (ValueError, IndexError, TypeError)), (layout, kwargs)
                assert isinstance(info.value, kind) or type(e).__name__ == "AxisError", (layout, kwargs)
                continue
            cases.append((layout, kwargs, fn(x, **kwargs), np.asarray(expected),
                          np.asarray(np_dtype).dtype, max(1, a.size)))
    pt.realize(*(c[2] for c in cases))
    for layout, kwargs, r, expected, np_dtype, n in cases:
        what = f"{name} {layout} {kwargs}"
        assert r.dtype is expected_result_dtype(np_dtype, dtype), what
        assert_close(r.numpy(), round_to(expected, r.dtype), r.dtype, 2 * n, what)


@pytest.mark.parametrize("name,src,acc", [("sum", dt.int8, dt.int8), ("sum", dt.int8, dt.float32),
                                          ("mean", dt.int32, dt.float32), ("cumsum", dt.uint8, dt.uint8),
                                          ("prod", dt.float32, dt.float64)])
def test_explicit_dtype(device, name, src, acc):
    a, x = layout_pair(src, "plain")
    r = getattr(pt, name)(x, axis=0, dtype=acc)
    e = getattr(np, name)(a, axis=0, dtype=acc.np)
    assert r.dtype is acc
    assert_close(r.numpy(), e, acc, 8)


def test_reductions_as_methods_and_numpy_functions(device):
    a, x = layout_pair(dt.float32, "sliced")
    assert_close(x.sum(axis=0).numpy(), a.sum(axis=0), pt.float32, 8)
    assert_close(np.sum(x, axis=0).numpy(), a.sum(axis=0), pt.float32, 8)
    assert isinstance(np.mean(x), pt.Array) and isinstance(np.max(x, axis=1), pt.Array)
    assert_close(np.add.reduce(x, axis=1).numpy(), np.add.reduce(a, axis=1), pt.float32, 8)
    assert_close(np.maximum.reduce(x).numpy(), np.maximum.reduce(a), pt.float32)
    assert_close(np.add.accumulate(x).numpy(), np.add.accumulate(a), pt.float32, 8)
    assert_close(x.std(axis=1, correction=1).numpy(), a.std(axis=1, ddof=1), pt.float32, 16)
    assert_close(pt.var(x, correction=0.5).numpy(), np.var(a, ddof=0.5), pt.float32, 32)
    assert int(pt.argmax(x)) == int(np.argmax(a))


def test_initial_for_empty_max(device):
    x = pt.zeros((0, 3))
    assert_close(pt.max(x, axis=0, initial=-1.0).numpy(), np.max(np.zeros((0, 3)), axis=0, initial=-1),
                 pt.float64)
    with pytest.raises(pt.ShapeError, match="no identity"):
        pt.max(x, axis=0)


def test_nan_propagates_through_max_and_argmax(device):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    x = pt.asarray(a)
    assert_close(pt.max(x, axis=1).numpy(), np.max(a, axis=1), pt.float64)
    assert pt.argmax(x, axis=1).tolist() == np.argmax(a, axis=1).tolist()
    assert_close(pt.sum(x, axis=1).numpy(), np.sum(a, axis=1), pt.float64)
