"""The array API standard 2024.12 as libraries consume it: the version handshake and the "max
dimensions" capability, the 2024.12 additions called with the standard's keyword defaults (eager and
under @pt.jit), capabilities() answering for the context it is asked in, `x[b] = v` with a 0-d
boolean array inside @pt.jit, and SciPy's array API functions traced by @pt.jit (in a child process,
as SciPy reads SCIPY_ARRAY_API when it is imported)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close


def test_2024_12_handshake_and_max_dimensions():
    x = pt.asarray([1.0, 2.0])
    assert pt.__array_api_version__ == "2024.12"
    for v in ("2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is pt
    with pytest.raises(pt.APIVersionError, match="2025.12"):
        x.__array_namespace__(api_version="2025.12")
    caps = pt.__array_namespace_info__().capabilities()
    assert caps["max dimensions"] == 64
    assert pt.sum(pt.ones((1,) * caps["max dimensions"])).item() == 1.0
    with pytest.raises(pt.ShapeError):
        pt.ones((1,) * (caps["max dimensions"] + 1))


D = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 8.0]])

# the 2024.12 additions, every keyword spelled out at the standard's default (None included)
ADDITIONS = {
    "diff": (lambda xp, x: xp.diff(x, axis=-1, n=1, prepend=None, append=None), lambda x: np.diff(x)),
    "diff_prepend_only": (lambda xp, x: xp.diff(x, axis=0, n=1, prepend=x[:1], append=None),
                          lambda x: np.diff(x, axis=0, prepend=x[:1])),
    "diff_append_only": (lambda xp, x: xp.diff(x, n=2, prepend=None, append=x[:, :1]),
                         lambda x: np.diff(x, n=2, append=x[:, :1])),
    "cumulative_prod": (lambda xp, x: xp.cumulative_prod(x, axis=1, dtype=None, include_initial=True),
                        lambda x: np.cumulative_prod(x, axis=1, include_initial=True)),
    "count_nonzero": (lambda xp, x: xp.count_nonzero(x - 2.0, axis=None, keepdims=False),
                      lambda x: np.count_nonzero(x - 2.0)),
    "take_along_axis": (lambda xp, x: xp.take_along_axis(x, xp.argsort(x, axis=1), axis=-1),
                        lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=-1)),
    "nextafter_scalar": (lambda xp, x: xp.nextafter(x, 0.0), lambda x: np.nextafter(x, 0.0)),
    "reciprocal": (lambda xp, x: xp.reciprocal(x), lambda x: np.reciprocal(x)),
}


@pytest.mark.parametrize("name", sorted(ADDITIONS))
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "jit"])
def test_2024_12_additions_with_standard_defaults(name, traced):
    run, ref = ADDITIONS[name]
    fn = pt.jit(lambda x: run(pt, x)) if traced else (lambda x: run(pt, x))
    got = fn(pt.asarray(D))
    want = ref(D)
    assert np.dtype(got.dtype) == want.dtype, (got.dtype, want.dtype)
    assert_close(got, want, got.dtype, err_msg=name)


def test_capabilities_answer_for_the_context():
    """Boolean indexing and data-dependent shapes work eagerly and raise TracerError in a trace:
    capabilities() says which holds where it is called."""
    info = pt.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert info.capabilities()["data-dependent shapes"] is True
    seen = {}

    @pt.jit
    def f(x):
        seen.update(info.capabilities())
        return x + 1.0

    f(pt.ones(2))
    assert seen == {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}
    assert info.capabilities()["boolean indexing"] is True


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("value", ["scalar", "row", "leading1"])
def test_setitem_0d_bool_traces(flag, value):
    """`x[b] = v` with a 0-d boolean array b is where(b, v, x): eager and @pt.jit give NumPy's result,
    the value cast to x's dtype."""
    base = np.arange(6, dtype=np.int32).reshape(2, 3)
    val = {"scalar": 7.9, "row": np.array([10.0, 20.0, 30.0]),
           "leading1": np.full((1, 2, 3), -5.0)}[value]
    want = base.copy()
    want[np.asarray(flag)] = val

    def f(x, b):
        x[b] = val if np.isscalar(val) else pt.asarray(val)
        return x

    for fn in (f, pt.jit(f)):
        got = fn(pt.asarray(base), pt.asarray(flag))
        assert got.dtype == pt.int32
        np.testing.assert_array_equal(got.numpy(), want)


def test_setitem_0d_bool_value_fitting_only_false_reads_b():
    """A value shaped for x[False] (a leading axis of 0) is legal only when b is False, as in NumPy."""
    x = pt.asarray([2.0, 3.0])
    x[pt.asarray(False)] = pt.zeros((0, 2))
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0])
    with pytest.raises(pt.ShapeError):
        y = pt.asarray([2.0, 3.0])
        y[pt.asarray(True)] = pt.ones((2, 2))


def test_repeat_array_counts_name_the_negative_count():
    np.testing.assert_array_equal(pt.repeat(pt.asarray([[1, 2], [3, 4]]), pt.asarray([0, 2]), axis=1).numpy(),
                                  np.repeat(np.array([[1, 2], [3, 4]]), [0, 2], axis=1))
    with pytest.raises(pt.ShapeError, match="repeats must be non-negative, got -1"):
        pt.repeat(pt.asarray([1, 2]), pt.asarray([1, -1]))
    with pytest.raises(pt.ShapeError, match="do not match axis 0"):
        pt.repeat(pt.asarray([1, 2]), pt.asarray([1, 2, 3]))


CHILD = r"""
import json
import numpy as np
import scipy.special as sp, scipy.stats as st
from scipy._lib.array_api_compat import array_namespace
import scipy._lib.array_api_extra as xpx
import poot as pt

x = np.random.default_rng(0).normal(size=(4, 6)) + 3.0
p = np.abs(x[0]) / np.abs(x[0]).sum()
cases = {
    "rel_entr": (lambda a: sp.rel_entr(a, a[::-1]), p),     # apply_where, boolean-indexing path eagerly
    "variation": (lambda a: st.variation(a, axis=1), x),
    "tmean": (lambda a: st.tmean(a), x),
    "at_0d_bool": (lambda a: xpx.at(a)[a[0, 0] > 0.0].set(0.0, copy=True), x),  # x[b] = v, 0-d b
    "zscore": (lambda a: st.zscore(a, axis=0), x),
    "logsumexp": (lambda a: sp.logsumexp(a, axis=1), x),
}
out = {"namespace": array_namespace(pt.asarray(x), api_version="2024.12") is pt}
for name, (f, a) in cases.items():
    ref = np.asarray(f(a))
    eager = f(pt.asarray(a))
    traced = pt.jit(f)(pt.asarray(a))
    out[name] = {"types": [type(eager).__module__, type(traced).__module__],
                 "eager_err": float(np.max(np.abs(np.asarray(eager) - ref))),
                 "jit_err": float(np.max(np.abs(np.asarray(traced) - ref))),
                 "shape": [list(np.shape(traced)), list(ref.shape)]}
print(json.dumps(out))
"""


def test_scipy_array_api_functions_trace():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          check=False, timeout=300, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out.pop("namespace") is True
    for name, r in out.items():
        assert r["types"] == ["poot.trace.array", "poot.trace.array"], (name, r)
        assert r["shape"][0] == r["shape"][1], (name, r)
        assert r["eager_err"] <= 1e-12 and r["jit_err"] <= 1e-12, (name, r)
