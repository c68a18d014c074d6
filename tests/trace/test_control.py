"""pt.cond, pt.fori_loop and pt.while_loop: NumPy's answers, eagerly and inside @pt.jit, one
construct in the graph (never unrolled), captured values, pytree carries, and clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

F32_TOL = dict(rtol=8 * np.finfo(np.float32).eps, atol=8 * np.finfo(np.float32).eps)


def test_fori_loop_matches_a_python_loop(device):
    a = np.linspace(-1, 1, 7).astype(np.float32)
    x = pt.array(a)
    out = pt.fori_loop(0, 5, lambda i, acc: acc * 0.5 + x * i, pt.zeros(7, dtype=pt.float32))
    ref = np.zeros(7, np.float32)
    for i in range(5):
        ref = ref * np.float32(0.5) + a * np.float32(i)
    assert out.dtype == pt.float32
    np.testing.assert_allclose(out.numpy(), ref, **F32_TOL)


def test_fori_loop_with_a_pytree_carry_and_negative_or_empty_ranges(device):
    def body(i, c):
        return {"n": c["n"] + 1, "s": (c["s"][0] + i, c["s"][1] * 2)}

    init = {"n": pt.array(np.int64(0)), "s": (pt.array(np.int64(0)), pt.ones(3))}
    out = pt.fori_loop(2, 6, body, init)
    assert int(out["n"]) == 4 and int(out["s"][0]) == 2 + 3 + 4 + 5
    np.testing.assert_array_equal(out["s"][1].numpy(), [16.0] * 3)
    empty = pt.fori_loop(5, 2, body, init)                 # range(5, 2) runs nothing
    assert int(empty["n"]) == 0


def test_a_long_loop_is_one_construct_not_an_unrolled_graph(device):
    x = pt.fori_loop(0, 10_000, lambda i, v: v + 1.0, pt.zeros(4))
    from poot.trace import lazy

    graph, _ = lazy.build_graph([x._node])
    assert [e.op for e in graph.eqns if e.op != "full"] == ["fori"]   # zeros(4) is a `full`
    np.testing.assert_array_equal(x.numpy(), [10_000.0] * 4)


def test_while_loop_matches_numpy(device):
    def cond_fun(c):
        return c[1] > 1e-6

    def body(c):     # Newton's iteration for sqrt(2), counting steps
        x, err, n = c
        nx = 0.5 * (x + 2.0 / x)
        return nx, pt.abs(nx - x), n + 1

    x, err, n = pt.while_loop(cond_fun, body, (pt.array(1.0), pt.array(1.0), 0))
    assert float(x) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    ref_x, ref_n, ref_err = 1.0, 0, 1.0
    while ref_err > 1e-6:
        nx = 0.5 * (ref_x + 2.0 / ref_x)
        ref_x, ref_err, ref_n = nx, abs(nx - ref_x), ref_n + 1
    assert int(n) == ref_n


def test_while_loop_that_never_runs_returns_its_input(device):
    x = pt.array(np.arange(3.0))
    y = pt.while_loop(lambda v: v.sum() > 100, lambda v: v * 2, x)
    np.testing.assert_array_equal(y.numpy(), np.arange(3.0))


def test_cond_runs_the_chosen_branch(device):
    a = np.array([1.0, -2.0, 3.0], np.float32)
    x = pt.array(a)
    for sign in (1, -1):
        y = pt.cond((x * sign).sum() > 0, lambda v, k: v * k, lambda v, k: v - k, x * sign, 2.0)
        ref = (a * sign) * 2 if (a * sign).sum() > 0 else (a * sign) - 2
        assert y.dtype == pt.float32
        np.testing.assert_allclose(y.numpy(), ref, **F32_TOL)
    assert pt.cond(True, lambda: 1, lambda: 2) == 1      # a Python bool simply picks a branch


def test_cond_and_loops_inside_jit_with_traced_bounds(device):
    @pt.jit
    def power_iteration(m, n):
        v = pt.ones(m.shape[0]) / np.sqrt(m.shape[0])

        def body(i, v):
            w = m @ v
            return w / pt.sqrt((w * w).sum())

        v = pt.fori_loop(0, n, body, v)
        lam = (v * (m @ v)).sum()
        return pt.cond(lam > 0, lambda: lam, lambda: -lam)

    r = np.random.default_rng(3)
    q = np.linalg.qr(r.standard_normal((6, 6)))[0]
    m_np = q @ np.diag([5.0, 2, 1, 0.5, 0.2, 0.1]) @ q.T
    for n in (50, 80):
        assert float(power_iteration(pt.array(m_np), n)) == pytest.approx(5.0, rel=1e-8)
    assert power_iteration.trace_count == 1                # the bound n is a traced scalar


def test_bodies_capture_outer_arrays_and_loops_nest(device):
    w = pt.array(np.arange(4.0))

    def outer(i, acc):
        return pt.fori_loop(0, 3, lambda j, a: a + w * j, acc) + i

    out = pt.fori_loop(0, 2, outer, pt.zeros(4))
    ref = np.zeros(4)
    for i in range(2):
        for j in range(3):
            ref = ref + np.arange(4.0) * j
        ref = ref + i
    np.testing.assert_array_equal(out.numpy(), ref)


def test_a_python_scalar_carry_takes_the_bodys_dtype(device):
    x = pt.array(np.arange(4, dtype=np.float32))
    total = pt.fori_loop(0, 3, lambda i, acc: acc + x.sum(), 0.0)
    assert total.dtype == pt.float32 and float(total) == 18.0


def test_a_body_that_changes_the_carry_is_refused_with_its_path(device):
    with pytest.raises(pt.ShapeError, match=r"carry\[1\] is f64\[4\] but must be f64\[2\]"):
        pt.fori_loop(0, 3, lambda i, c: (c[0], pt.concatenate([c[1], c[1]])), (pt.ones(1), pt.ones(2)))
    with pytest.raises(pt.ShapeError, match="different structure"):
        pt.while_loop(lambda c: c.sum() < 3, lambda c: (c, c), pt.ones(1))
    with pytest.raises(pt.ShapeError, match="cond_fun must return one scalar"):
        pt.while_loop(lambda c: c < 3, lambda c: c + 1, pt.ones(2))


def test_cond_branches_must_agree(device):
    x = pt.ones(3)
    with pytest.raises(pt.ShapeError, match="must be"):
        pt.cond(x.sum() > 0, lambda v: v, lambda v: v[:2], x)
    with pytest.raises(pt.ShapeError, match="different structures"):
        pt.cond(x.sum() > 0, lambda v: (v, v), lambda v: v, x)
    with pytest.raises(pt.ShapeError, match="pred must be a scalar"):
        pt.cond(x > 0, lambda v: v, lambda v: v, x)


def test_non_array_carries_are_refused(device):
    with pytest.raises(pt.PootError, match="a str is not an array"):
        pt.fori_loop(0, 2, lambda i, c: c, "text")


def test_python_control_flow_in_a_body_raises_tracer_error(device):
    def body(i, v):
        if v.sum() > 0:
            return v
        return -v

    with pytest.raises(pt.TracerError, match="pt.cond"):
        pt.fori_loop(0, 2, body, pt.ones(2))
