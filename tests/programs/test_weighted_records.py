"""A data-wrangling program over survey records: weighted quantiles of incomes by region (NumPy 2's
quantile(weights=, method='inverted_cdf')), and matching records by 64-bit ids held as int64 on one
side and uint64 hashes on the other, with a sentinel id just past int64. Run as NumPy, eagerly and
with the step jitted (tests/programs/harness.py)."""
from __future__ import annotations

import numpy as np

from .harness import check_program

SENTINEL = 2**63          # "no id": one past int64's largest value


def survey_step(xp, income, weight, region, ids, hashes):
    by_region = xp.stack([xp.where(region == r, weight, 0.0) for r in range(3)])      # (3, n)
    deciles = xp.stack([xp.quantile(income, [0.1, 0.5, 0.9], weights=by_region[r], method="inverted_cdf")
                        for r in range(3)])
    overall = xp.percentile(income, [25, 75], weights=weight, method="inverted_cdf")
    matched = xp.isin(ids, hashes)                       # int64 ids against uint64 hashes: exact
    real = ids < SENTINEL                                # every int64 is below the sentinel
    same = ids[:, None] == hashes[None, :]
    first = xp.argmax(same, axis=1)
    return deciles, overall, matched, real, same.sum(axis=1), first


def survey_run(xp, step, income, weight, region, ids, hashes):
    return step(xp, income, weight, region, ids, hashes)


def survey_inputs():
    r = np.random.default_rng(47)
    n = 60
    income = np.round(r.lognormal(10, 0.6, size=n), 2)
    weight = r.integers(0, 5, size=n).astype(np.float64)
    weight[:3] = 1.0                                      # every region weighs something
    region = np.concatenate([np.arange(3), r.integers(0, 3, size=n - 3)])
    big = 2**63 - 1
    ids = np.array([big, big - 1, 2**53 + 1, -1, 5, 2**62], np.int64)
    hashes = np.array([2**63, big - 1, 2**53, 2**64 - 1, 5, 2**62 + 1], np.uint64)
    return income, weight, region, ids, hashes


def test_weighted_quantiles_and_64_bit_id_matching(device):
    check_program(device, survey_run, survey_step, survey_inputs(), ops=1)
    _, _, matched, _, counts, _ = survey_run(np, survey_step, *survey_inputs())
    assert matched.tolist() == [False, True, False, False, True, False]     # not rounded through float64
    assert counts.tolist() == [0, 1, 0, 0, 1, 0]
