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


_ceiling = []


def need_ceiling():
    """ceiling.c compiled for this CPU (gcc -O3 -march=native -fopenmp) and loaded with ctypes, once
    per run; skips where gcc or OpenMP is missing. Its threads: THREADS, as poot's."""
    if not _ceiling:
        import ctypes
        import shutil
        import subprocess
        import tempfile

        if shutil.which("gcc") is None:
            pytest.skip("gcc is not installed: no C ceiling")
        out = os.path.join(tempfile.mkdtemp(), "ceiling.so")
        src = os.path.join(os.path.dirname(__file__), "ceiling.c")
        r = subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", src, "-o", out],
                           capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"ceiling.c did not build: {r.stderr.strip()[:200]}")
        os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
        lib = ctypes.CDLL(out)
        lib.full_reduce.restype = ctypes.c_float
        lib.full_reduce.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
        lib.axis_reduce.restype = None
        lib.axis_reduce.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_int, ctypes.c_int,
                                    ctypes.c_void_p]
        _ceiling.append(lib)
    return _ceiling[0]
