"""The host's parallel sort (poot/devices/cpu_sort.py) against NumPy's: every dtype it compiles a loop
for, NaNs, signed zeros, heavy ties, presorted input, several buckets; its stable argsort against
NumPy's stable one; then through poot's sort, argsort and unique on arrays long enough to take it,
where stability is checked too."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.devices import cpu_sort
from poot.graph import host_sort

N = 3 * (1 << 15) + 7          # long enough for 2 to 8 buckets once MIN_PER_THREAD is lowered below


@pytest.fixture
def many_buckets(monkeypatch):
    """Buckets on any machine: the per-thread minimum lowered, the core count raised (the threads
    are Python threads, so 8 of them run on 2 cores, only slower)."""
    monkeypatch.setattr(cpu_sort, "MIN_PER_THREAD", 1 << 12)
    monkeypatch.setattr(cpu_sort, "cores", lambda: 8)


def _values(dtype, kind: str, rng) -> np.ndarray:
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if kind == "random":
        if dtype is np.bool_:
            return rng.integers(0, 2, N).astype(bool)
        if info is not None:
            return rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
        a = (rng.standard_normal(N) * 100).astype(dtype)
        a[rng.integers(0, N, 300)] = np.nan
        a[rng.integers(0, N, 300)] = -0.0
        a[rng.integers(0, N, 300)] = 0.0
        a[rng.integers(0, N, 30)] = np.inf
        a[rng.integers(0, N, 30)] = -np.inf
        return a
    if kind == "ties":                        # few distinct values: buckets of very different sizes
        return rng.integers(0, 3, N).astype(dtype)
    if kind == "constant":
        return np.full(N, 1, dtype)
    if kind == "sorted":
        return np.sort(_values(dtype, "random", rng))
    if kind == "reversed":
        return np.sort(_values(dtype, "random", rng))[::-1].copy()
    raise AssertionError(kind)


DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["random", "ties", "constant", "sorted", "reversed"])
def test_sort_into_matches_numpy(many_buckets, dtype, kind):
    a = _values(dtype, kind, np.random.default_rng(7))
    before = a.copy()
    out = np.empty_like(a)
    cpu_sort.sort_into(a, out)
    want = np.sort(a)
    np.testing.assert_array_equal(out, want)
    # the values themselves, zeros' signs included, are all there (only their order among ties
    # is free): compare the sorted bit patterns
    bits = f"u{a.itemsize}"
    np.testing.assert_array_equal(np.sort(out.view(bits)), np.sort(a.view(bits)))
    np.testing.assert_array_equal(a, before)              # the source is left alone


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["random", "ties", "constant", "sorted", "reversed"])
def test_argsort_into_is_numpys_stable_argsort(many_buckets, dtype, kind):
    """Each value's index travels with it into its bucket; ties (heavy in "ties" and "constant",
    NaNs and signed zeros in "random") come out in index order, across buckets too."""
    a = _values(dtype, kind, np.random.default_rng(11))
    out = np.full(a.size, -1, np.int64)
    cpu_sort.argsort_into(a, out, host_sort._stable_1d)
    np.testing.assert_array_equal(out, np.argsort(a, kind="stable"))


def test_argsort_into_of_all_nans_and_short_rows(many_buckets):
    for a in (np.full(N, np.nan), np.arange(10, dtype=np.int64)[::-1].copy(), np.zeros(0, np.float64)):
        out = np.empty(a.size, np.int64)
        cpu_sort.argsort_into(a, out, host_sort._stable_1d)
        np.testing.assert_array_equal(out, np.argsort(a, kind="stable"))


def test_all_nan_and_short_inputs_take_numpys_sort(many_buckets):
    for a in (np.full(N, np.nan, np.float32), np.arange(10, dtype=np.float64)[::-1].copy(),
              np.zeros(0, np.int32)):
        out = np.empty_like(a)
        cpu_sort.sort_into(a, out)
        np.testing.assert_array_equal(out, np.sort(a))


def test_dtypes_without_a_loop_take_numpys_sort(many_buckets):
    a = np.random.default_rng(1).standard_normal(N).astype(np.float16)
    out = np.empty_like(a)
    cpu_sort.sort_into(a, out)
    np.testing.assert_array_equal(out, np.sort(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint16],
                         ids=lambda d: np.dtype(d).name)
def test_poot_sort_argsort_unique_on_long_arrays(many_buckets, monkeypatch, dtype):
    """The programs' host steps hand the parallel sort to sort, argsort (32-bit keys; 64-bit values
    through its indexed partition) and unique: the results equal NumPy's stable ones, eagerly and
    under jit."""
    monkeypatch.setattr(cpu_sort, "_LOOPS", cpu_sort._Loops())      # records which loops get built
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, N).astype(dtype) if dtype is not np.uint16 else rng.integers(0, 99, N).astype(dtype)
    if a.dtype.kind == "f":
        a[::997] = np.nan
        a[::1013] = -0.0
    x = pt.asarray(a)
    s = pt.sort(x).numpy()
    assert any(char == a.dtype.char for char, _ in cpu_sort._LOOPS._fns), "the host step took NumPy's sort"
    np.testing.assert_array_equal(s.view(f"u{a.itemsize}"), np.sort(a, kind="stable").view(f"u{a.itemsize}"))
    np.testing.assert_array_equal(pt.argsort(x).numpy(), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(pt.argsort(x, descending=True).numpy(),
                                  np.flip(len(a) - 1 - np.argsort(a[::-1], kind="stable")))
    jitted = pt.jit(lambda v: (pt.sort(v), pt.argsort(v)))
    js, ji = jitted(x)
    np.testing.assert_array_equal(js.numpy(), np.sort(a))
    np.testing.assert_array_equal(ji.numpy(), np.argsort(a, kind="stable"))
    vals, counts = pt.unique_counts(x)
    want_vals, want_counts = np.unique(a, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(vals.numpy(), want_vals)
    np.testing.assert_array_equal(counts.numpy(), want_counts)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["random", "ties", "constant"])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_unique_per_bucket_matches_numpy(many_buckets, dtype, kind, equal_nan):
    """unique's values and counts, each bucket reduced on its own thread, equal NumPy's (each NaN
    its own value unless equal_nan)."""
    a = _values(dtype, kind, np.random.default_rng(5))
    got = host_sort.unique(a, index=False, inverse=False, counts=True, equal_nan=equal_nan,
                           sort_1d=cpu_sort.sort_into)
    values, counts = np.unique(a, return_counts=True, equal_nan=equal_nan)
    np.testing.assert_array_equal(got[0], values)
    np.testing.assert_array_equal(got[3], counts)
    alone = host_sort.unique(a, index=False, inverse=False, counts=False, equal_nan=equal_nan,
                             sort_1d=cpu_sort.sort_into)
    np.testing.assert_array_equal(alone[0], values)
    assert alone[3] is None
