"""The planner's buffer budget (plan_fusion max_buffers): no step binds more buffers than a device allows
(Vulkan adapters: 8 to 32 storage buffers per kernel), whether many roots would share a step or one root
loads many values; the planned kernels still compute the oracle's results (run on the CPU device)."""
import numpy as np
import pytest

from poot import devices
from poot.fuse.plan import MAX_KERNEL_BUFFERS, plan_fusion
from poot.graph import evaluate
from poot.jit.runtime.execute import buffer_to_numpy, numpy_to_buffer
from poot.jit.runtime.program import Program

from .graphs import G


def _bindings(step) -> int:
    return len(step.inputs) + len(step.outputs) + 2 * len(step.reductions)


def _planned(graph, budget):
    plan = plan_fusion(graph, max_buffers=budget)
    assert all(_bindings(s) <= budget for s in plan.kernel_steps), str(plan)
    cpu = devices.get("cpu")
    args = [np.arange(v.aval.size, dtype=np.float32).reshape(v.aval.shape) + k for k, v in enumerate(graph.inputs)]
    outs = Program(plan, cpu).run([numpy_to_buffer(a, cpu) for a in args])
    for got, want, v in zip(outs, evaluate(graph, args), graph.outputs):
        np.testing.assert_allclose(buffer_to_numpy(got, v.aval), want, rtol=1e-6)
    return plan


@pytest.mark.parametrize("budget", [6, 30])
def test_many_independent_roots_are_cut_into_steps_that_fit(budget):
    g = G()
    xs = [g.input((4, 5)) for _ in range(60)]
    outs = [g.op("mul", x, g.const(2.0)) for x in xs]
    unbounded = plan_fusion(g.graph(*outs))     # bound only by what a kernel may bind to compile fast
    assert len(unbounded.kernel_steps) == -(-120 // MAX_KERNEL_BUFFERS)
    assert all(_bindings(s) <= MAX_KERNEL_BUFFERS for s in unbounded.kernel_steps)
    plan = _planned(g.graph(*outs), budget)
    assert len(plan.kernel_steps) == -(-120 // budget)
    assert sorted(v.id for s in plan.kernel_steps for v in s.outputs) == sorted(v.id for v in outs)


@pytest.mark.parametrize("budget", [5, 8, 30])
def test_one_root_loading_many_values_gets_part_of_its_closure_stored(budget):
    g = G()
    xs = [g.input((3, 4)) for _ in range(40)]
    acc = xs[0]
    for x in xs[1:]:
        acc = g.op("add", acc, x)
    plan = _planned(g.graph(acc), budget)
    assert len(plan.kernel_steps) > 1


def test_row_steps_count_two_partials_per_reduction():
    g = G()
    xs = [g.input((8, 16)) for _ in range(10)]
    outs = [g.op("reduce_sum", x, axes=(1,)) for x in xs]
    plan = _planned(g.graph(*outs), 8)     # 1 input + 1 output + 2 partials: two roots per step
    assert len(plan.kernel_steps) == 5 and all(s.kind == "row" for s in plan.kernel_steps)


def test_no_budget_keeps_the_plan_within_the_compile_bound():
    g = G()
    xs = [g.input((4,)) for _ in range(30)]
    outs = [g.op("neg", x) for x in xs]
    assert len(plan_fusion(g.graph(*outs)).kernel_steps) == 1
    xs = [g.input((4,)) for _ in range(50)]
    outs = [g.op("neg", x) for x in xs]
    assert len(plan_fusion(g.graph(*outs)).kernel_steps) == 2


@pytest.mark.parametrize("budget", [6, 32])
def test_a_concatenate_of_more_arrays_than_the_budget_becomes_a_tree(budget):
    """`pt.stack` of the 40 values a loop kept, on a device binding 32 buffers per kernel."""
    g = G()
    xs = [g.input((3,)) for _ in range(40)]
    out = g.op("concatenate", *[g.op("mul", x, g.const(2.0)) for x in xs], axis=0)
    plan = _planned(g.graph(out), budget)
    assert len(plan.kernel_steps) > 1
