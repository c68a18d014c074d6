"""Shared data for the benchmarks. Every benchmark runs side by side with its baselines in one run;
compare the medians within a group (`--benchmark-group-by=group`), never absolute times."""
import os

import numpy as np
import pytest

try:
    import numexpr
except ImportError:          # numexpr is in the test extra; benchmarks skip it when missing
    numexpr = None

THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)


def need_numexpr():
    if numexpr is None:
        pytest.skip("numexpr is not installed")
    numexpr.set_num_threads(THREADS)
    return numexpr


def need_numba():
    """numba (not a poot dependency: benchmarks skip it when missing), on THREADS threads."""
    numba = pytest.importorskip("numba")
    numba.set_num_threads(min(THREADS, numba.config.NUMBA_NUM_THREADS))
    return numba
