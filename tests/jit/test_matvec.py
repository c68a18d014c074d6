"""CPU matrix-vector products: the GEMV asset or BLAS, chosen by a measured size rule; NumPy's answer
either way."""
import numpy as np
import pytest

import poot as pt
from poot.jit.runtime import execute, matvec


def _matvec_steps():
    steps = []
    for prog in execute._PROGRAMS.values():
        for _, actions, _ in prog.steps:
            steps += [a[1] for a in actions if a[0] == "host" and isinstance(a[1], matvec.MatvecStep)]
    return steps


def _product(n, k, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, k)).astype(np.float32)
    x = rng.standard_normal(k).astype(np.float32)
    ref = w.astype(np.float64) @ x.astype(np.float64)
    tol = dict(rtol=1e-5, atol=4 * np.finfo(np.float32).eps * np.sqrt(k) * np.abs(w).max() * np.abs(x).max())
    return w, x, ref, tol


@pytest.mark.parametrize("path", ["asset", "blas", "auto"])
@pytest.mark.parametrize("n, k", [(37, 300), (256, 1000), (1, 5)])
def test_matvec_matches_numpy_on_the_chosen_path(monkeypatch, path, n, k):
    monkeypatch.setenv("POOT_CPU_GEMV", path)
    w, x, ref, tol = _product(n, k)
    execute._PROGRAMS.clear()
    with pt.device("cpu"):
        got = (pt.asarray(w) @ pt.asarray(x)).numpy()
    np.testing.assert_allclose(got, ref, **tol)
    steps = _matvec_steps()
    assert len(steps) == 1
    rule = "asset" if n * k <= matvec.ASSET_MAX_ELEMENTS else "blas"
    assert steps[0].last_path == (rule if path == "auto" else path)


def test_a_fused_epilogue_reads_the_routed_result(monkeypatch):
    monkeypatch.setenv("POOT_CPU_GEMV", "asset")
    w, x, ref, tol = _product(64, 128, seed=1)
    with pt.device("cpu"):
        got = pt.maximum(pt.asarray(w) @ pt.asarray(x) + 1.0, 0.0).numpy()
    np.testing.assert_allclose(got, np.maximum(ref + 1.0, 0.0), **tol)


def test_only_f32_matrix_times_vector_is_routed():
    from poot.devices import get
    from poot.fuse.plan import plan_fusion
    from poot.trace.lazy import build_graph

    with pt.device("cpu"):
        a = pt.asarray(np.ones((4, 3), np.float32))
        cases = {"matvec": a @ pt.asarray(np.ones(3, np.float32)),
                 "matmat": a @ pt.asarray(np.ones((3, 2), np.float32)),
                 "f64": pt.asarray(np.ones((4, 3))) @ pt.asarray(np.ones(3))}
    for name, y in cases.items():
        plan = plan_fusion(build_graph([y._node])[0])
        eqn = next(s.eqn for s in plan.steps if s.kind == "matmul")
        routed = matvec.route_matvec(eqn, get("cpu"))
        assert (routed is not None) == (name == "matvec"), name


def test_a_bad_override_is_refused(monkeypatch):
    monkeypatch.setenv("POOT_CPU_GEMV", "fastest")
    with pytest.raises(pt.PootError, match="POOT_CPU_GEMV is 'fastest'"):
        matvec.forced()
