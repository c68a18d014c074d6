"""searchsorted, histogram and unique built from lazy operations on GPU devices (poot/trace/device_search.py,
device_histogram.py) against NumPy, on every device of POOT_TEST_DEVICES (the lazy forms on GPU devices,
the host ops on the CPU) and on the CPU device with the lazy forms forced (POOT_GPU_SORT=kernels: CI
checks them where no GPU is).

searchsorted and unique compute nothing but comparisons, so they are compared exactly (values bitwise:
-0.0 and +0.0 tie, the first occurrence's bits are kept); histogram's counts exactly, its densities and
weighted sums within the dtype's tolerance. 16-bit floats are compared with NumPy on their float32 values,
as the host ops compute them.
"""
from __future__ import annotations

import collections
import os
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from poot.jit.runtime import execute
from poot.trace.device_search import runs_device_kernels
from poot.trace.context import backend, current
from test_gpu_sort import _is_float, tricky as _tricky
from tolerance import assert_close

HALF = (np.float16, ml_dtypes.bfloat16)
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
FLOAT_POOL = [0.0, -0.0, np.nan, 1.5, -1.5, np.inf, -np.inf, 2.0, 1e-3, -7.25]
SIZES = [0, 1, 2, 3, 7, 33]


def tricky(dtype, shape, rng) -> np.ndarray:
    """test_gpu_sort's values with many ties, floats from this file's pool (no -NaN)."""
    return _tricky(dtype, shape, rng, FLOAT_POOL)


def wide(a: np.ndarray) -> np.ndarray:
    """16-bit floats as float32 (exact; ml_dtypes' own comparisons in NumPy's sorts differ)."""
    return a.astype(np.float32) if a.dtype in HALF else a


def bits(v: np.ndarray) -> np.ndarray:
    return v.view(f"u{v.dtype.itemsize}") if v.dtype.kind in "fV" else v


def _skip_unsupported(dtype) -> None:
    caps = backend(current()).caps
    if np.dtype(dtype).itemsize == 8 and not (caps.float64 and caps.int64):
        pytest.skip("no 64-bit types on this device")


LAZY_CPU = "cpu-lazy"


def _test_devices() -> list[str]:
    return [d.strip() for d in os.environ.get("POOT_TEST_DEVICES", "cpu").split(",") if d.strip()]


@pytest.fixture(params=_test_devices() + [LAZY_CPU])
def where_run(request, monkeypatch):
    """Each device of POOT_TEST_DEVICES as configured (as the `device` fixture), then the CPU device
    with the lazy forms forced (POOT_GPU_SORT=kernels) and a program cache of its own."""
    if request.param == LAZY_CPU:
        monkeypatch.setenv("POOT_GPU_SORT", "kernels")
        monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
        name = "cpu"
    else:
        name = request.param
    try:
        ctx = pt.device(name)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device '{name}' is unavailable here: {e}")
    with ctx:
        yield request.param


# --- searchsorted ----------------------------------------------------------------------------------
def check_searchsorted(a: np.ndarray, v: np.ndarray, jit: bool) -> None:
    a = a[np.argsort(wide(a), kind="stable")]

    def both(x1, x2):
        return pt.searchsorted(x1, x2, side="left"), pt.searchsorted(x1, x2, side="right")

    fn = pt.jit(both) if jit else both
    args = (pt.asarray(a), pt.asarray(v))
    if jit:
        fn(*args)                               # the second call replays the recorded program
    got = [r.numpy() for r in fn(*args)]
    for side, g in zip(("left", "right"), got):
        want = np.searchsorted(wide(a), wide(v), side=side)
        where = f"{a.dtype.name} x1{a.shape} x2{v.shape} side={side}"
        assert g.dtype == np.int64 and g.shape == v.shape, where
        np.testing.assert_array_equal(g, want, err_msg=where)


@st.composite
def search_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.sampled_from(SIZES))
    vshape = draw(st.sampled_from([(), (0,), (5,), (2, 3)]))
    return dtype, n, vshape, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=search_cases())
def test_searchsorted_matches_numpy(where_run, case):
    dtype, n, vshape, seed = case
    _skip_unsupported(dtype)
    rng = np.random.default_rng(seed)
    check_searchsorted(tricky(dtype, (n,), rng), tricky(dtype, vshape, rng), jit=False)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int64, np.uint8, np.bool_])
def test_searchsorted_jitted(where_run, dtype):
    _skip_unsupported(dtype)
    rng = np.random.default_rng(5)
    check_searchsorted(tricky(dtype, (33,), rng), tricky(dtype, (4, 3), rng), jit=True)


def test_searchsorted_mixed_dtypes_and_sorter(where_run):
    a = np.array([3, -1, 7, 7, 2], np.int32)
    sorter = np.argsort(a, kind="stable")
    v = np.array([[7.5, -1.0], [np.nan, 2.0]], np.float32)
    got = pt.searchsorted(pt.asarray(a), pt.asarray(v), side="right", sorter=pt.asarray(sorter)).numpy()
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side="right", sorter=sorter))


# --- unique ----------------------------------------------------------------------------------------
def unique_reference(a: np.ndarray, size, fill_value, equal_nan: bool) -> list:
    """NumPy's unique (values, first indices, inverse of a's shape, counts), padded to `size` as the
    host op pads (values with fill_value, default the smallest; the rest with 0)."""
    flat = a.reshape(-1)
    v, i, inv, c = np.unique(wide(flat), return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=equal_nan)
    v = flat[i]                                  # the first occurrence's own bits (-0.0 or +0.0)
    inv = inv.reshape(a.shape)
    if size is None:
        return [v, i, inv, c]
    fill = v[0] if fill_value is None and v.size else (0 if fill_value is None else fill_value)

    def pad(x, f):
        out = np.full(size, f, dtype=x.dtype)
        out[:min(size, x.size)] = x[:size]
        return out

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [pad(v, np.asarray(fill).astype(a.dtype)), pad(i, 0), inv, pad(c, 0)]


def check_unique(a: np.ndarray, size=None, fill_value=None, jit=False) -> None:
    want = unique_reference(a, size, fill_value, equal_nan=False)
    fn = (lambda x: pt.unique_all(x, size=size, fill_value=fill_value))
    if jit:
        fn = pt.jit(fn)
        fn(pt.asarray(a))
    got = [r.numpy() for r in fn(pt.asarray(a))]
    where = f"{a.dtype.name}{a.shape} size={size} fill_value={fill_value}"
    assert got[0].dtype == a.dtype and all(g.dtype == np.int64 for g in got[1:]), where
    for name, g, w in zip(("values", "indices", "inverse", "counts"), got, want):
        assert g.shape == w.shape, f"{where}: {name} {g.shape} != {w.shape}"
        np.testing.assert_array_equal(bits(g), bits(w), err_msg=f"{where}: {name}")


@st.composite
def unique_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from([(0,), (1,), (7,), (3, 5), (33,)]))
    size = draw(st.sampled_from([None, 0, 1, 4, 40]))
    fill = draw(st.sampled_from([None, 2]))
    return dtype, shape, size, fill, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=unique_cases())
def test_unique_all_matches_numpy(where_run, case):
    dtype, shape, size, fill, seed = case
    _skip_unsupported(dtype)
    check_unique(tricky(dtype, shape, np.random.default_rng(seed)), size, fill)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint64])
def test_unique_jitted_with_size(where_run, dtype):
    _skip_unsupported(dtype)
    a = tricky(dtype, (4, 9), np.random.default_rng(11))
    check_unique(a, size=5, jit=True)
    check_unique(a, size=50, fill_value=3, jit=True)


def test_unique_of_a_long_array(where_run):
    """Ranks past 65535 (the running count is a scan longer than one of lavapipe's shader loops may run)
    and a values array whose length is read from the device."""
    a = np.random.default_rng(4).integers(-20000, 20000, 70001).astype(np.int32)
    values, counts = pt.unique_counts(pt.asarray(a))
    want_values, want_counts = np.unique(a, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    inverse = pt.unique_inverse(pt.asarray(a)).inverse_indices.numpy()
    np.testing.assert_array_equal(want_values[inverse], a)


def test_np_unique_merges_nans(where_run):
    """np.unique's equal_nan=True (its default) counts every NaN as one value; unique_* keep them apart."""
    a = np.array([[np.nan, 1.0, -0.0], [np.nan, 0.0, 1.0]], np.float32)
    v, i, inv, c = pt.unique(pt.asarray(a), return_index=True, return_inverse=True, return_counts=True)
    wv, wi, winv, wc = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in ((v, wv), (i, wi), (inv, winv), (c, wc)):
        np.testing.assert_array_equal(g.numpy(), w)
    assert pt.unique_values(pt.asarray(a)).shape == (4,)           # -0.0/0.0, 1.0, NaN, NaN
    assert pt.unique(pt.asarray(a), equal_nan=False).shape == (4,)


# --- histogram -------------------------------------------------------------------------------------
HIST_ARGS = [dict(bins=7), dict(bins=3, range=(-2.5, 4.0)), dict(bins=[-3.0, -1.0, 0.0, 0.5, 2.0, 10.0]),
             dict(bins=5, density=True), dict(bins=4, weighted=np.float32), dict(bins=[1, 2, 4], weighted=np.int64),
             dict(bins=1, range=(2.0, 2.0)), dict(bins=6, weighted=np.float64, density=True)]


def histogram_reference(a: np.ndarray, kw: dict):
    edges_given = isinstance(kw["bins"], list)
    counts, edges = np.histogram(wide(a), **kw)
    if a.dtype in HALF and not edges_given:
        edges = edges.astype(a.dtype)
    w = kw.get("weights")
    if w is not None and not kw.get("density"):
        counts = counts.astype(w.dtype)
    return counts, edges


def check_histogram(a: np.ndarray, kw: dict, seed: int, jit=False) -> None:
    kw = dict(kw)
    weighted = kw.pop("weighted", None)
    if weighted is not None:
        kw["weights"] = (np.random.default_rng(seed).standard_normal(a.shape) * 4).astype(weighted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = histogram_reference(a, kw)
    args = {k: (pt.asarray(v) if k == "weights" else v) for k, v in kw.items()}
    fn = (lambda x: pt.histogram(x, **args))
    if jit:
        fn = pt.jit(fn)
        fn(pt.asarray(a))
    got = [r.numpy() for r in fn(pt.asarray(a))]
    where = f"{a.dtype.name}{a.shape} {kw}"
    for name, g, w in zip(("counts", "edges"), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {name} {g.dtype}{g.shape} != {w.dtype}{w.shape}"
    np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{where}: edges")
    if got[0].dtype.kind in "iub":
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"{where}: counts")
    else:            # float32 weights are added in float32 (GPU atomics), NumPy adds them in float64
        w = kw.get("weights")
        added_in = np.float64 if w is None or w.dtype == np.float64 else np.float32
        assert_close(got[0], want[0], added_in, ops=max(a.size, 1), err_msg=f"{where}: counts")


def finite(dtype, shape, rng) -> np.ndarray:
    """Data NumPy accepts without range= (no NaN or infinity; no 64-bit extremes, whose range NumPy
    cannot widen by 0.5), with ties and values on the edges."""
    if _is_float(dtype):
        return (rng.integers(-12, 12, size=shape) / rng.choice([1, 3, 4])).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    low = 0 if np.dtype(dtype).kind == "u" else -12
    return rng.integers(low, low + 25, size=shape).astype(dtype)


@st.composite
def histogram_cases(draw):
    return (draw(st.sampled_from(DTYPES)), draw(st.sampled_from([(0,), (1,), (8,), (3, 11)])),
            draw(st.sampled_from(HIST_ARGS)), draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=histogram_cases())
def test_histogram_matches_numpy(where_run, case):
    dtype, shape, kw, seed = case
    _skip_unsupported(dtype)
    check_histogram(finite(dtype, shape, np.random.default_rng(seed)), kw, seed)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.float64])
def test_histogram_jitted(where_run, dtype):
    _skip_unsupported(dtype)
    a = finite(dtype, (40,), np.random.default_rng(2))
    for kw in (HIST_ARGS[0], HIST_ARGS[2], HIST_ARGS[4]):
        check_histogram(a, kw, 3, jit=True)


def test_histogram_drops_values_outside_and_nans(where_run):
    a = np.array([np.nan, -1.0, 0.0, 0.25, 0.5, 1.0, 1.0000001, np.inf], np.float32)
    for kw in (dict(bins=4, range=(0.0, 1.0)), dict(bins=[0.0, 0.5, 1.0])):
        check_histogram(a, kw, 0)


# --- planned programs ------------------------------------------------------------------------------
def _host_steps(lowered) -> list:
    return [a for _, actions, _ in lowered._prog.program.steps for kind, *a in actions if kind == "host"]


def test_on_gpus_the_plan_has_no_host_step(device, monkeypatch):
    rng = np.random.default_rng(1)
    x = pt.asarray(rng.standard_normal(300).astype(np.float32))
    table = pt.asarray(np.sort(rng.standard_normal(400)).astype(np.float32))  # 400 * 300 > SEARCH_FUSED_MAX

    def program(v):
        counts, edges = pt.histogram(v, bins=16)
        return (pt.searchsorted(table, v), counts, edges) + tuple(pt.unique_all(v, size=64))

    f = pt.jit(program)
    lowered = f.lower(x)
    if device == "oracle":
        return
    steps = _host_steps(lowered)
    if not runs_device_kernels(device):        # the CPU: NumPy on the program's own buffers is fastest
        assert len(steps) >= 3
        return
    assert not steps, "a GPU device's program kept a host step"
    names = {k.name.split("_", 1)[1] for k in lowered.kernels}
    assert {"argsort_tile"} <= names                              # unique's sort, as a kernel
    assert "device -> host" not in lowered.as_text("plan")
    got = [r.numpy() for r in f(x)]
    xs = x.numpy()
    np.testing.assert_array_equal(got[0], np.searchsorted(table.numpy(), xs))
    c, e = np.histogram(xs, bins=16)
    np.testing.assert_array_equal(got[1], c)
    np.testing.assert_array_equal(got[2], e)
    np.testing.assert_array_equal(got[3][:64], np.unique(xs)[:64])

    monkeypatch.setenv("POOT_GPU_SORT", "host")                    # the host ops again, on request
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    g = pt.jit(lambda v: pt.searchsorted(table, v) + 1)
    assert "device -> host" in g.lower(x).as_text("plan")
    np.testing.assert_array_equal(g(x).numpy(), np.searchsorted(table.numpy(), xs) + 1)
