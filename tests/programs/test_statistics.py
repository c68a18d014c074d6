"""Order statistics (sort, median, quantiles, ranks, searchsorted, unique counts) and scan
workloads (moving averages through cumsum, a prefix-sum histogram, compounding with cumprod)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

from .harness import check_program

GRADES = 6  # grades 0..5 all occur, so unique_counts has this many values


# -- 10. statistics with sort / median / unique -----------------------------------------------------
def unique_counts(xp, x):
    # poot under @jit needs a static number of unique values (size=); NumPy has no such argument
    return xp.unique_counts(x) if xp is np else xp.unique_counts(x, size=GRADES)


def describe(xp, x, M, grades):
    n = x.shape[0]
    s = xp.sort(x)
    median = 0.5 * (s[(n - 1) // 2] + s[n // 2])
    q1, q3 = s[n // 4], s[(3 * n) // 4]
    mad = xp.sort(xp.abs(x - median))[n // 2]
    trimmed = s[n // 10: n - n // 10].mean()
    ranks = xp.argsort(xp.argsort(x))
    outliers = ((x < q1 - 1.5 * (q3 - q1)) | (x > q3 + 1.5 * (q3 - q1))).sum()
    col_median = xp.sort(M, axis=0)[M.shape[0] // 2]
    thresholds = xp.asarray([-1.0, 0.0, 1.0, 2.0], dtype=x.dtype)
    below = xp.searchsorted(s, thresholds)
    values, counts = unique_counts(xp, grades)
    mode = values[xp.argmax(counts)]
    mean_grade_by_rank = (values * counts).sum() / n
    return median, q3 - q1, mad, trimmed, ranks, outliers, col_median, below, values, counts, mode, \
        mean_grade_by_rank


def describe_run(xp, step, x, M, grades):
    return step(xp, x, M, grades)


def describe_inputs(dtype):
    r = np.random.default_rng(10)
    x = np.concatenate([r.normal(size=249), [6.0, -7.0, 8.0, 9.5, -5.5]])  # 254: an even length
    grades = np.concatenate([np.arange(GRADES), r.integers(0, GRADES, size=200)])
    return x.astype(dtype), r.normal(size=(31, 5)).astype(dtype), grades


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_statistics_sort_median_unique(device, dtype):
    check_program(device, describe_run, describe, describe_inputs(dtype), ops=16)


# -- 13. cumulative sums and scans ------------------------------------------------------------------
W, BINS, LO, HI = 8, 12, -3.0, 3.0


def moving_average(xp, x, w):
    c = xp.cumsum(x, axis=-1)
    c = xp.concatenate([xp.zeros_like(c[..., :1]), c], axis=-1)
    return (c[..., w:] - c[..., :-w]) / w


def scans(xp, x, rates):
    ma = moving_average(xp, x, W)
    # histogram: bin index per sample, counts by a one-hot sum, the CDF and bin starts by prefix sums
    width = (HI - LO) / BINS
    b = xp.clip(xp.floor((x[0] - LO) / width), 0, BINS - 1).astype(xp.int64)
    counts = (b[:, None] == xp.arange(BINS)[None, :]).astype(xp.int64).sum(axis=0)
    cdf = xp.cumsum(counts)
    starts = cdf - counts                      # exclusive scan: where each bin begins when sorted
    # the same counts from the sorted samples and searchsorted on the bin edges
    edges = LO + width * xp.arange(1, BINS, dtype=x.dtype)
    inner = xp.searchsorted(xp.sort(x[0]), edges)
    growth = xp.cumprod(1.0 + rates)           # compounding
    running_max = x[1]                         # a running maximum by doubling (log-step scan)
    shift = 1
    while shift < x.shape[1]:
        running_max = xp.maximum(running_max, xp.concatenate(
            [xp.full(shift, -xp.inf, dtype=x.dtype), running_max[:-shift]]))
        shift *= 2
    return ma, counts, cdf, starts, inner, growth, running_max


def scans_run(xp, step, x, rates):
    return step(xp, x, rates)


def scans_inputs(dtype):
    r = np.random.default_rng(11)
    x = r.normal(size=(3, 300))
    x[0, :4] = [-5.0, 5.0, -3.0, 2.99]  # clipped into the end bins
    return x.astype(dtype), (0.01 * r.normal(size=40)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_cumsum_scans(device, dtype):
    # cumsum's error is relative to the running sum (|c| <~ 40 here), not to the moving average
    check_program(device, scans_run, scans, scans_inputs(dtype), ops=(1024, 1, 1, 1, 1, 64, 1))
    ma, counts, cdf, starts, inner, *_ = scans_run(np, scans, *scans_inputs(dtype))
    assert cdf[-1] == 300 and np.array_equal(np.diff(inner), counts[1:-1])
