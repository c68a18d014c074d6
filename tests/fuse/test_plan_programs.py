"""Random multi-step programs, the way users write them: a handful of named arrays updated in a loop
by matmuls, scans, row updates, sorts, control flow and fused elementwise/reduction regions, with
intermediates shared between pending arrays and realizes of random subsets at random points. Each
program runs on the test device and, step for step, in NumPy; every array must agree at the end.

This is the planner's property test: whatever DAG the frontend records (opaque steps between fused
regions, values read by several later steps, partial realizes in any order) plans and runs right."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from tolerance import assert_close

N = 6          # every array is N x N: any two combine, transpose and matmul


def _matmul(xp, a, b):
    return xp.tanh((a @ b) * (1.0 / N))


def _center(xp, a, axis):
    return a - a.mean(axis=axis, keepdims=True)


def _scale_by_max(xp, a, axis):
    return a / (1.0 + xp.abs(a).max(axis=axis, keepdims=True))


def _scan(xp, a, axis):
    return xp.cumsum(a, axis=axis) * (1.0 / N)


def _halve_loop(xp, a, b):
    """x <- x / 2 + b / 4, three times: a fori_loop in poot, a Python loop in NumPy."""
    if xp is np:
        for _ in range(3):
            a = a * 0.5 + b * 0.25
        return a
    return pt.fori_loop(0, 3, lambda i, x: x * 0.5 + b * 0.25, a)


def _branch(xp, a, b):
    """A data-dependent choice: cond in poot (traced both ways), if in NumPy. The predicate is a max
    against an odd threshold: a max is exact, where two sums could tie and round either way."""
    if xp is np:
        return a - b if a.max() > 0.3183 else a + b
    return pt.cond(a.max() > 0.3183, lambda x, y: x - y, lambda x, y: x + y, a, b)


STEPS = {
    # name: (arity, fn(xp, *arrays, param)) ; param is an axis in {0, 1}
    "add": (2, lambda xp, a, b, ax: a + b),
    "mul": (2, lambda xp, a, b, ax: a * b),
    "axpy": (2, lambda xp, a, b, ax: a - 0.1 * b),
    "exp": (1, lambda xp, a, ax: xp.exp(-xp.abs(a))),
    "sin": (1, lambda xp, a, ax: xp.sin(a)),
    "transpose": (1, lambda xp, a, ax: a.T),
    "matmul": (2, lambda xp, a, b, ax: _matmul(xp, a, b)),
    "matmul_t": (2, lambda xp, a, b, ax: _matmul(xp, a.T, b)),
    "matmul_nt": (2, lambda xp, a, b, ax: _matmul(xp, a, b.T)),
    "center": (1, lambda xp, a, ax: _center(xp, a, ax)),
    "scale": (1, lambda xp, a, ax: _scale_by_max(xp, a, ax)),
    "cumsum": (1, lambda xp, a, ax: _scan(xp, a, ax)),
    "sort": (1, lambda xp, a, ax: xp.sort(a, axis=ax)),
    "fori": (2, lambda xp, a, b, ax: _halve_loop(xp, a, b)),
    "cond": (2, lambda xp, a, b, ax: _branch(xp, a, b)),
}


@st.composite
def programs(draw, max_steps=14):
    """A list of instructions over a pool of 3 named arrays (it grows as steps append results)."""
    prog = []
    size = 3

    def step(depth=0):     # an operand is a named array, or (at depth < 2) an unnamed temporary
        name = draw(st.sampled_from(sorted(STEPS)))
        args = tuple(step(depth + 1) if depth < 2 and draw(st.integers(0, 3)) == 0
                     else draw(st.integers(0, size - 1)) for _ in range(STEPS[name][0]))
        return name, args, draw(st.integers(0, 1))

    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(["step", "assign", "assign", "update", "row", "realize", "read"]))
        if kind == "realize":    # pt.realize of some of the arrays
            prog.append(("realize", draw(st.sets(st.integers(0, size - 1), min_size=1, max_size=size))))
        elif kind == "read":     # float(pool[i].sum()): a realize of a value nobody keeps
            prog.append(("read", draw(st.integers(0, size - 1))))
        elif kind == "row":      # pool[i][r, :] = pool[j][c, :] (an in-place row update)
            prog.append(("row", draw(st.integers(0, size - 1)), draw(st.integers(0, N - 1)),
                         draw(st.integers(0, size - 1)), draw(st.integers(0, N - 1))))
        elif kind == "assign":   # pool[i] = f(...): the old value stays referenced by pending work only
            prog.append(("assign", draw(st.integers(0, size - 1)), *step()))
        elif kind == "update":   # pool[i], pool[j] = f(...), g(...): both read the old values
            i, j = draw(st.lists(st.integers(0, size - 1), min_size=2, max_size=2, unique=True))
            prog.append(("update", (i, *step()), (j, *step())))
        else:                    # a new named value
            prog.append(("step", *step()))
            size += 1
    return prog


def run(xp, prog, pool):
    pool = list(pool)

    def value(name, args, axis):
        return STEPS[name][1](xp, *[value(*a) if isinstance(a, tuple) else pool[a] for a in args], axis)

    for ins in prog:
        if ins[0] == "realize":
            if xp is pt:
                pt.realize(*[pool[i] for i in sorted(ins[1])])
        elif ins[0] == "read":
            float(pool[ins[1]].sum())
        elif ins[0] == "row":
            _, i, r, j, c = ins
            if xp is np:
                pool[i] = pool[i].copy()       # NumPy's copy: poot's arrays are values too
            pool[i][r, :] = pool[j][c, :]
        elif ins[0] == "update":
            (i, *f), (j, *g) = ins[1:]
            pool[i], pool[j] = value(*f), value(*g)
        elif ins[0] == "assign":
            pool[ins[1]] = value(*ins[2:])
        else:
            pool.append(value(*ins[1:]))
    return pool


def _start(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(N, N)).astype(np.float32) for _ in range(3)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prog=programs(), seed=st.integers(0, 2**16))
def test_random_multi_step_programs_match_numpy(device, prog, seed):
    start = _start(seed)
    expected = run(np, prog, start)
    got = run(pt, prog, [pt.asarray(a) for a in start])
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_close(g.numpy(), e.astype(np.float32), pt.float32, ops=64,
                     err_msg=f"array {k} of {prog}")


def test_a_two_layer_training_loop_plans(device):
    """The program that made the planner's steps wait on each other ("fusion plan has a dependency
    cycle" at the second iteration): a two-layer linear net updating both layers from the old ones,
    with a float() of the output each iteration."""
    rng = np.random.default_rng(0)
    x, a, b = (rng.normal(size=s).astype(np.float32) for s in ((16, 5), (5, 6), (6, 3)))
    X, A, B = pt.asarray(x), pt.asarray(a), pt.asarray(b)
    for _ in range(4):
        h, g = X @ A, X @ A @ B
        A, B = A - 0.01 * (X.T @ (g @ B.T)), B - 0.01 * (h.T @ g)
        hn, gn = x @ a, x @ a @ b
        a, b = a - np.float32(0.01) * (x.T @ (gn @ b.T)), b - np.float32(0.01) * (hn.T @ gn)
        assert abs(float(g.sum()) - float(gn.sum())) <= 1e-4 * np.abs(gn).sum()
    assert_close(A.numpy(), a, pt.float32, ops=64)
    assert_close(B.numpy(), b, pt.float32, ops=64)


def test_planning_reaches_its_fixpoint_on_empty_gathers(device):
    """A reduction over gathers of empty arrays: the planner kept asking to store a value it had
    already stored and never finished (found by tests/trace/test_properties.py)."""
    x0 = pt.asarray(np.zeros((3, 0), np.float32))
    v3 = (pt.sin(x0) - pt.asarray(np.zeros(0, np.float32))).astype(pt.bool_).max(axis=0, keepdims=True)
    v5 = pt.take(v3.astype(pt.float32), pt.asarray(np.array([0, 0, 0])), axis=0)
    v8 = pt.take(pt.tanh(v5) * pt.asarray(np.zeros(0, np.float32)), pt.asarray(np.array([1, 2])), axis=0)
    assert (v8.sum(keepdims=True) - 1.0).numpy().tolist() == [[-1.0]]
