"""A value a kernel reads at several different indices (a stencil's shifted reads) is recomputed
there only while that is cheap; otherwise it is stored. Without the rule, N lazy stencil steps became
one kernel evaluating the first step at every position the later steps reach (5 steps of a 2-D heat
stencil took minutes to compile)."""
import numpy as np
import pytest

import poot as pt
from poot.devices.base import Capabilities
from poot.fuse.plan import plan_fusion
from poot.jit.codegen import generate
from poot.jit.kir.model import Load
from poot.jit.kir.verify import verify

from .graphs import G

CPU = Capabilities(name="cpu", target="cpu")


def stencil(g: G, x, steps: int, alpha: float = 0.2):
    """`steps` explicit steps of the 1-D heat equation with fixed ends (NumPy's `u[1:-1] = ...`)."""
    n = x.aval.shape[0]

    def part(start):
        return g.op("slice", x, starts=(start,), steps=(1,), sizes=(n - 2,))
    for _ in range(steps):
        left, mid, right = part(0), part(1), part(2)
        lap = g.op("sub", g.op("add", left, right), g.op("mul", mid, g.const(2.0)))
        inner = g.op("add", mid, g.op("mul", lap, g.const(alpha)))
        x = g.op("update_slice", x, inner, starts=(1,), steps=(1,), sizes=(n - 2,))
    return x


def _walk(body):
    for s in body:
        yield s
        for block in ("then", "orelse", "body"):
            yield from _walk(getattr(s, block, ()) or ())


def _exprs(e):
    yield e
    for name in ("index", "value", "x", "a", "b", "c", "cond", "start", "stop"):
        sub = getattr(e, name, None)
        if sub is not None and not isinstance(sub, (str, int, float)):
            yield from _exprs(sub)


def loads(kernel) -> int:
    """Number of buffer loads in a kernel's body (each computed position of a value costs its loads)."""
    n = 0
    for s in _walk(kernel.body):
        for name in ("index", "value", "cond", "start", "stop"):
            sub = getattr(s, name, None)
            if sub is not None and not isinstance(sub, (str, int)):
                n += sum(isinstance(x, Load) for x in _exprs(sub))
    return n


@pytest.mark.parametrize("steps", [2, 5, 12])
def test_each_stencil_step_is_one_small_kernel(steps):
    g = G()
    x = g.input((64,))
    graph = g.graph(stencil(g, x, steps))
    plan = plan_fusion(graph)
    ks = plan.kernel_steps
    assert len(ks) == steps and all(k.kind == "pointwise" for k in ks)
    for k in ks:
        (launch,) = generate(k, plan, CPU).launches
        verify(launch.kernel)
        assert len(k.inputs) == 1 and loads(launch.kernel) <= 4   # old value + three shifted reads


def test_planned_work_stays_linear_in_the_number_of_steps():
    """Every equation is computed by at most a bounded number of kernels (no closure re-walks the
    steps before it)."""
    for steps in (10, 40):
        g = G()
        graph = g.graph(stencil(g, g.input((32,)), steps))
        plan = plan_fusion(graph)
        closure = sum(len(plan_closure) for plan_closure in _closures(plan))
        assert closure <= 2 * len(plan.graph.eqns)


def _closures(plan):
    made = {v.id for s in plan.steps for v in s.outputs} | {v.id for v in plan.graph.inputs}
    for s in plan.kernel_steps:
        seen, stack = set(), list(s.outputs)
        while stack:
            v = stack.pop()
            e = plan.producer.get(v.id)
            if e is None or v.id in seen or (v.id in made and v not in s.outputs):
                continue
            seen.add(v.id)
            stack.extend(e.inputs)
        yield seen


def test_a_cheap_value_read_at_two_offsets_is_recomputed():
    g = G()
    a = g.input((100,))
    e = g.op("exp", a)                                   # cost 4: recomputing it once is cheap
    d = g.op("sub", g.op("slice", e, starts=(1,), steps=(1,), sizes=(99,)),
             g.op("slice", e, starts=(0,), steps=(1,), sizes=(99,)))
    (k,) = plan_fusion(g.graph(d)).kernel_steps
    assert [v.id for v in k.inputs] == [a.id]


def test_an_expensive_value_read_at_two_offsets_is_stored():
    g = G()
    a = g.input((100,))
    e = g.op("exp", g.op("sin", g.op("exp", a)))         # cost 12: stored, then read twice
    d = g.op("sub", g.op("slice", e, starts=(1,), steps=(1,), sizes=(99,)),
             g.op("slice", e, starts=(0,), steps=(1,), sizes=(99,)))
    ks = plan_fusion(g.graph(d)).kernel_steps
    assert [k.outputs[0].id for k in ks] == [e.id, d.id]


def test_a_reduction_after_many_stencil_steps_plans_small_kernels():
    g = G()
    x = g.input((4, 32))
    n = 32
    for _ in range(8):
        l = g.op("slice", x, starts=(0, 0), steps=(1, 1), sizes=(4, n - 1))
        r = g.op("slice", x, starts=(0, 1), steps=(1, 1), sizes=(4, n - 1))
        x = g.op("update_slice", x, g.op("mul", g.op("add", l, r), g.const(0.5)),
                 starts=(0, 1), steps=(1, 1), sizes=(4, n - 1))
    plan = plan_fusion(g.graph(g.op("reduce_sum", x, axes=(1,))))
    ks = plan.kernel_steps
    # the first step is cheap enough to recompute in the second; the last one runs in the reduction's
    assert len(ks) == 7 and ks[-1].kind == "row" and all(len(k.inputs) == 1 for k in ks)


def test_heat_stencil_steps_match_numpy(device):
    n, alpha = 24, 0.2
    u0 = np.random.default_rng(5).random((n, n))
    u, p = u0.copy(), pt.asarray(u0)
    for _ in range(12):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        new = u.copy()
        new[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * lap
        u = new
        lap = p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4.0 * p[1:-1, 1:-1]
        new = p.copy()
        new[1:-1, 1:-1] = p[1:-1, 1:-1] + alpha * lap
        p = new
    np.testing.assert_allclose(p.numpy(), u, rtol=1e-12, atol=1e-12)
