"""Plans of long eager loops stay linear and their kernels small: a loop that keeps a 0-d loss per step
and stacks them, or rebinds `w` through a reduction every step, used to plan in quadratic time and fuse
hundreds of reductions into one kernel whose LLVM compile took minutes. Each case checks the plan's
shape and the values against NumPy."""
import numpy as np

import poot as pt
from poot.fuse.indexing import Coord, Div, Form, Mod
from poot.fuse.plan import MAX_KERNEL_BUFFERS, MAX_ROW_REDUCTIONS, plan_fusion
from poot.graph import evaluate

from .graphs import G


def _bindings(step) -> int:
    return len(step.inputs) + len(step.outputs) + 2 * len(step.reductions)


def test_a_chain_of_reductions_is_cut_into_kernels_of_few_reductions():
    g = G()
    w = g.input((8,))
    for _ in range(60):   # w = w - 1e-3 * (w - w.mean())
        m = g.op("mul", g.op("reduce_sum", w, axes=(0,)), g.const(1 / 8))
        w = g.op("sub", w, g.op("mul", g.const(1e-3), g.op("sub", w, m)))
    plan = plan_fusion(g.graph(w))
    assert all(len(s.reductions) <= MAX_ROW_REDUCTIONS for s in plan.kernel_steps), str(plan)
    assert all(_bindings(s) <= MAX_KERNEL_BUFFERS for s in plan.kernel_steps)
    arg = np.arange(8, dtype=np.float32)
    want = arg.astype(np.float64)
    for _ in range(60):
        want = want - 1e-3 * (want - want.mean())
    np.testing.assert_allclose(evaluate(g.graph(w), [arg])[0], want, rtol=1e-5)


def test_losses_kept_by_an_eager_loop_plan_and_run_quickly():
    rng = np.random.default_rng(0)
    target = rng.standard_normal(500).astype(np.float32)
    w, t = pt.ones(500), pt.asarray(target)
    wn = np.ones(500, np.float32)
    losses, want = [], []
    for _ in range(600):        # past the pending-depth bound, so part of it realizes inside the loop
        r = w - t
        losses.append((r * r).sum())
        w = w - 0.01 * r
        rn = wn - target
        want.append((rn * rn).sum())
        wn = wn - np.float32(0.01) * rn
    np.testing.assert_allclose(pt.stack(losses).numpy(), np.array(want), rtol=1e-4)


def test_many_means_stacked_run_as_several_kernels():
    x = np.random.default_rng(1).standard_normal(64)
    got = pt.stack([((pt.asarray(x) - float(i)) ** 2).mean() for i in range(300)]).numpy()
    np.testing.assert_allclose(got, [((x - float(i)) ** 2).mean() for i in range(300)], rtol=1e-12)


def test_a_loop_of_reshaped_transposes_plans_in_linear_time():
    """Each step reads the previous index twice (its // and its %): the index is a DAG whose tree
    doubles per step, which hashing, sorting and range analysis once walked whole (minutes at 16)."""
    a = np.arange(24.0).reshape(4, 6)
    x, want = pt.asarray(a), a
    for _ in range(40):
        x = x.reshape(6, 4).T + 1
        want = want.reshape(6, 4).T + 1
    np.testing.assert_array_equal(x.numpy(), want)


def test_index_forms_compare_and_sort_by_structure():
    i, j = Coord("i0", 4), Coord("i1", 6)
    f = Form.of(i) * 6 + Form.of(j)
    g = Form.of(j) + Form.of(i) * 6
    assert f == g and hash(f) == hash(g) and f.sort_key() == g.sort_key()
    assert [a.name for a, _ in f.terms] == ["i0", "i1"]
    assert (f // 6) == Form.of(i) and (f % 6) == Form.of(j)
    assert Div(f, 5) != Mod(f, 5) and Div(f, 5) == Div(g, 5)


def test_a_stack_of_many_row_results_is_narrowed_in_few_rounds(monkeypatch):
    """A sum over the stack of 150 per-row results reads more than MAX_KERNEL_BUFFERS values; the
    planner stores sub-stacks until it fits, all in one round (one round per stored value re-walked the
    whole graph each time: 150 rows took 150 rounds)."""
    import poot.fuse.plan as plan_module

    rounds = []
    real = plan_module._Planner._read_at_many_indices

    def counted(self):
        rounds.append(1)
        return real(self)

    monkeypatch.setattr(plan_module._Planner, "_read_at_many_indices", counted)
    xn = np.random.default_rng(3).random((150, 64))
    x = pt.asarray(xn)
    got = float(pt.vstack([r * 2 for r in x]).sum())
    monkeypatch.undo()
    assert len(rounds) <= 8, len(rounds)
    np.testing.assert_allclose(got, (xn * 2).sum(), rtol=1e-12)
