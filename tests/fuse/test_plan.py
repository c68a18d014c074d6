"""The fusion planner: how many kernels representative graphs become, and what passes remove."""
import math

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.devices.base import Capabilities
from poot.fuse.passes import optimize
from poot.fuse.plan import plan_fusion
from poot.jit.codegen import generate
from poot.jit.kir.verify import verify

from .graphs import G, layer_norm, softmax

CPU = Capabilities(name="cpu", target="cpu")
GPU = Capabilities(name="gpu", target="ptx")


def kernels(graph):
    plan = plan_fusion(graph)
    for caps in (CPU, GPU):   # every generated kernel of every step verifies, for both styles
        for step in plan.kernel_steps:
            for launch in generate(step, plan, caps).launches:
                verify(launch.kernel)
    return plan.kernel_steps


def test_softmax_is_one_kernel():
    g = G()
    x = g.input((16, 32))
    (k,) = kernels(g.graph(softmax(g, x)))
    assert k.kind == "row" and [e.op for e in k.reductions] == ["reduce_max", "reduce_sum"]


def test_softmax_over_a_leading_axis_is_one_kernel():
    g = G()
    x = g.input((16, 32))
    (k,) = kernels(g.graph(softmax(g, x, axis=0)))
    assert k.axes == (0,)


def test_layer_norm_is_one_kernel():
    g = G()
    x = g.input((8, 64))
    (k,) = kernels(g.graph(layer_norm(g, x)))
    assert k.kind == "row" and len(k.reductions) == 2


def test_reduction_with_pointwise_prologue_is_one_kernel():
    g = G()
    a, b, c = g.input((32, 8)), g.input((32, 8)), g.input((32, 8))
    s = g.op("reduce_sum", g.op("mul", g.op("add", a, b), c), axes=(0, 1))
    (k,) = kernels(g.graph(g.op("reshape", s, shape=())))
    assert {v.id for v in k.inputs} == {a.id, b.id, c.id}


def test_variance_with_keepdims_false_is_one_kernel():
    g = G()
    x = g.input((8, 16))
    m = g.op("reshape", g.op("mul", g.op("reduce_sum", x, axes=(1,)), g.const(1 / 16)), shape=(8,))
    d = g.op("sub", x, g.op("reshape", m, shape=(8, 1)))
    v = g.op("reduce_sum", g.op("mul", d, d), axes=(1,))
    (k,) = kernels(g.graph(g.op("reshape", v, shape=(8,))))
    assert k.kind == "row"


def test_transpose_feeding_an_add_is_one_kernel_without_a_copy():
    g = G()
    a, b = g.input((16, 8)), g.input((8, 16))
    (k,) = kernels(g.graph(g.op("add", a, g.op("transpose", b, perm=(1, 0)))))
    assert k.kind == "pointwise" and {v.id for v in k.inputs} == {a.id, b.id}


def test_movement_chain_fuses_into_loads():
    g = G()
    x = g.input((4, 6))
    y = g.op("slice", x, starts=(3, 5), steps=(-1, -2), sizes=(4, 3))        # flips with a step
    y = g.op("broadcast", g.op("reshape", y, shape=(1, 12)), shape=(5, 12))
    y = g.op("pad", y, widths=((1, 0), (0, 2)), value=0.0)
    (k,) = kernels(g.graph(g.op("exp", y)))
    assert k.kind == "pointwise" and [v.id for v in k.inputs] == [x.id]


def test_reduction_read_at_another_row_is_stored():
    g = G()
    x = g.input((8, 8))
    s = g.op("reshape", g.op("reduce_sum", x, axes=(1,)), shape=(1, 8))   # row sums laid along columns
    out = g.op("add", x, g.op("broadcast", s, shape=(8, 8)))
    ks = kernels(g.graph(out))
    assert [k.kind for k in ks] == ["row", "pointwise"]


def test_reshape_of_an_input_is_an_alias_not_a_kernel():
    g = G()
    x = g.input((4, 8))
    plan = plan_fusion(g.graph(g.op("reshape", x, shape=(32,))))
    assert [s.kind for s in plan.steps] == ["alias"]


def test_independent_outputs_of_one_shape_share_a_kernel():
    g = G()
    a, b = g.input((64,)), g.input((64,))
    (k,) = kernels(g.graph(g.op("add", a, b), g.op("mul", a, b)))
    assert len(k.outputs) == 2


def test_expensive_value_used_by_two_kernels_is_stored_once():
    g = G()
    x = g.input((32, 32))
    e = g.op("exp", g.op("sin", g.op("exp", g.op("tanh", x))))
    s0 = g.op("reduce_sum", e, axes=(0,))
    s1 = g.op("reduce_sum", e, axes=(1,))
    ks = kernels(g.graph(s0, s1))
    assert sum(e.id in {v.id for v in k.outputs} for k in ks) == 1


def test_intermediates_are_freed_after_their_last_use():
    g = G()
    x = g.input((8, 8))
    s = g.op("reshape", g.op("reduce_sum", x, axes=(1,)), shape=(1, 8))
    out = g.op("add", x, g.op("broadcast", s, shape=(8, 8)))
    plan = plan_fusion(g.graph(out))
    stored = plan.steps[0].outputs[0]
    assert plan.free_after[1] == [stored] and plan.free_after[0] == []


def test_cse_and_dce_and_folding():
    g = G()
    x = g.input((4,))
    a = g.op("add", x, g.op("mul", g.const(2.0), g.const(3.0)))
    b = g.op("add", x, g.op("mul", g.const(2.0), g.const(3.0)))
    g.op("exp", x)                                                 # dead
    graph = optimize(g.graph(g.op("mul", a, b)))
    ops = [e.op for e in graph.eqns]
    assert ops.count("add") == 1 and "exp" not in ops
    assert [e.params["value"] for e in graph.eqns if e.op == "full"] == [6.0]


def test_identity_movement_and_casts_vanish():
    g = G()
    x = g.input((4, 4), dt.float32)
    y = g.op("convert", g.op("convert", x, dtype=dt.float64), dtype=dt.float32)
    y = g.op("transpose", g.op("transpose", y, perm=(1, 0)), perm=(1, 0))
    graph = optimize(g.graph(g.op("reshape", y, shape=(4, 4))))
    assert graph.eqns == [] and graph.outputs[0] is x


@pytest.mark.parametrize("op", ["reduce_max", "argmax", "argmin", "reduce_prod"])
def test_every_reduction_kind_generates_verified_kernels(op):
    g = G()
    x = g.input((6, 40))
    params = {"axis": 1} if op.startswith("arg") else {"axes": (1,)}
    assert len(kernels(g.graph(g.op(op, x, **params)))) == 1


def test_scan_scatter_and_matmul_are_their_own_steps():
    g = G()
    x, w = g.input((8, 4)), g.input((4, 3))
    idx = g.input((2,), dt.int64)
    c = g.op("cumsum", g.op("exp", x), axis=0)
    m = g.op("matmul", c, w)
    upd = g.input((2, 3))
    s = g.op("scatter", m, idx, upd, mode="add")
    ks = kernels(g.graph(s))
    assert [k.kind for k in ks] == ["pointwise", "scan", "matmul", "scatter"]


def test_long_reduction_is_split_into_parallel_partials():
    g = G()
    x = g.input((1 << 20,))
    s = g.op("reshape", g.op("reduce_sum", x, axes=(0,)), shape=())
    plan = plan_fusion(g.graph(s))
    for caps in (CPU, GPU):
        code = generate(plan.steps[0], plan, caps)
        assert len(code.launches) == 2 and code.launches[0].groups[0] > 1 and code.temps
        for launch in code.launches:
            verify(launch.kernel)


def test_cpu_softmax_evaluates_exp_once_per_element():
    """The summed exp(x - max) is stored into the output and read back by the division pass."""
    from poot.jit.kir.text import format_kernel

    g = G()
    x = g.input((8, 1000))
    plan = plan_fusion(g.graph(softmax(g, x)))
    code = generate(plan.steps[0], plan, CPU)
    assert len(code.launches) == 1
    text = format_kernel(code.launches[0].kernel)
    assert text.count("exp(") == 1, text
    verify(code.launches[0].kernel)


def test_softmax_and_log_softmax_rows_match_numpy(device):
    a = np.random.default_rng(3).standard_normal((33, 1000)).astype(np.float32) * 10
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    tol = 8 * np.finfo(np.float32).eps
    np.testing.assert_allclose(pt.nn.softmax(pt.asarray(a), axis=-1).numpy(),
                               e / e.sum(axis=-1, keepdims=True), rtol=tol, atol=1e-30)
    np.testing.assert_allclose(pt.nn.log_softmax(pt.asarray(a), axis=-1).numpy(),
                               a - a.max(axis=-1, keepdims=True) - np.log(e.sum(axis=-1, keepdims=True)),
                               rtol=tol, atol=tol * 100)


@pytest.mark.parametrize("op", ["reduce_sum", "argmax"])
@pytest.mark.parametrize("rows, groups", [(64, [(1, 1, 1)]), (4096, [(8, 1, 1), (1, 1, 1)])])
def test_reduction_over_a_leading_axis_uses_the_column_schedule_on_cpu(op, rows, groups):
    """Whole rows per workgroup; a long reduced axis is cut into pieces (partials, then a combine)."""
    g = G()
    x = g.input((rows, 512))
    params = {"axis": 0} if op == "argmax" else {"axes": (0,)}
    plan = plan_fusion(g.graph(g.op(op, x, **params)))
    code = generate(plan.steps[0], plan, CPU)
    assert code.temps and [launch.groups for launch in code.launches] == groups
    for launch in code.launches:
        verify(launch.kernel)


@pytest.mark.parametrize("shape, axis", [((4096, 40), 0), ((300, 7, 33), (0, 1)), ((100_000, 3), 0)])
def test_column_schedule_in_pieces_matches_numpy(device, shape, axis):
    """Partials combined in piece order: sums agree, and argmax/argmin keep the first occurrence of a
    tie and of a NaN."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 5, shape).astype(np.float32)      # many ties
    a.reshape(-1)[[3 * shape[-1] + 1, (shape[0] - 2) * math.prod(shape[1:]) + 1]] = np.nan
    x = pt.asarray(a)
    np.testing.assert_allclose(x.sum(axis=axis).numpy(), np.sum(a, axis=axis), rtol=1e-6)
    np.testing.assert_array_equal(x.max(axis=axis).numpy(), np.max(a, axis=axis))
    if isinstance(axis, int):
        np.testing.assert_array_equal(x.argmax(axis=axis).numpy(), np.argmax(a, axis=axis))
        np.testing.assert_array_equal(x.argmin(axis=axis).numpy(), np.argmin(a, axis=axis))


def test_an_input_seen_through_an_alias_is_never_freed(device):
    """A flattened input shares the input's buffer: freeing the alias must not hand the input's memory
    to a later kernel (cumsum over the flat view beside cumsums over the axes once read overwritten rows)."""
    a = np.arange(12, dtype=np.float64).reshape(3, 4) + 1
    x = pt.asarray(a)
    flat, rows, cols = pt.cumsum(x), pt.cumsum(x, axis=0), pt.cumsum(x, axis=-1)
    pt.realize(flat, rows, cols)
    assert np.array_equal(flat.numpy(), np.cumsum(a))
    assert np.array_equal(rows.numpy(), np.cumsum(a, axis=0))
    assert np.array_equal(cols.numpy(), np.cumsum(a, axis=-1))
