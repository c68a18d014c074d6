"""pt.vmap as a transform: control flow stays one construct (or becomes masking), composition with
itself and with @pt.jit, pytrees of arguments and results, random keys, and its error messages.
Every result is checked against a Python loop over the batch or NumPy."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from poot import dtypes as dt
from poot.trace import lazy
from poot.transforms.batching import BatchingError
from tolerance import assert_close


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def loop(fn, *arrays, in_axes=0, out_axes=0):
    """The batch computed one example at a time (NumPy arrays in, NumPy array out)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(arrays)
    size = next(np.shape(a)[ax] for a, ax in zip(arrays, axes) if ax is not None)
    outs = [fn(*[pt.array(a if ax is None else np.take(a, b, axis=ax)) for a, ax in zip(arrays, axes)]).numpy()
            for b in range(size)]
    return np.stack(outs, axis=out_axes)


def graph_ops(fn, *args) -> list[str]:
    return [e.op for e in pt.jit(fn).lower(*args).graph.eqns]


# --- control flow ----------------------------------------------------------------------------------
def branchy(p, x):
    return pt.cond(p, lambda v: pt.exp(v).sum() * v, lambda v: v - v.max(), x)


def test_cond_with_unbatched_predicate_stays_one_construct(device):
    x = rand(4, 3)
    for p in (True, False):
        f = pt.vmap(branchy, in_axes=(None, 0))
        got = f(pt.array(p), pt.array(x))
        assert_close(got.numpy(), loop(branchy, np.array(p), x, in_axes=(None, 0)), dt.float64, ops=4)
    ops = graph_ops(pt.vmap(branchy, in_axes=(None, 0)), pt.array(True), pt.array(x))
    assert "cond" in ops and "select" not in ops


def test_cond_with_batched_predicate_selects_per_example(device):
    p, x = np.array([True, False, True, False]), rand(4, 3)
    got = pt.vmap(branchy)(pt.array(p), pt.array(x))
    assert_close(got.numpy(), loop(branchy, p, x), dt.float64, ops=4)
    ops = graph_ops(pt.vmap(branchy), pt.array(p), pt.array(x))
    assert "select" in ops and "cond" not in ops


def collatz_steps(n):
    """Steps until 1: a while loop whose trip count differs per example."""
    def body(c):
        m, k = c
        return pt.where(m % 2 == 0, m // 2, 3 * m + 1), k + 1
    return pt.while_loop(lambda c: c[0] > 1, body, (n, 0))


def test_while_with_batched_predicate_runs_until_all_are_done(device):
    n = np.array([1, 6, 7, 27, 2])
    steps = pt.vmap(collatz_steps)(pt.array(n))
    expect = [0, 8, 16, 111, 1]
    np.testing.assert_array_equal(steps[1].numpy(), expect)
    np.testing.assert_array_equal(steps[0].numpy(), np.ones(5, np.int64))


def test_while_with_unbatched_predicate_keeps_the_counter_unbatched(device):
    def f(x):
        return pt.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, x))[1]

    x = rand(3, 2)
    assert_close(pt.vmap(f)(pt.array(x)).numpy(), loop(f, x), dt.float64, ops=8)
    graph = pt.jit(pt.vmap(f)).lower(pt.array(x)).graph
    loops = [e for e in graph.eqns if e.op == "while"]
    assert loops and loops[0].params["region"].out_avals[0].shape == ()   # the counter: one scalar


def test_fori_loop_with_batched_carry_and_captured_values(device):
    def f(x, w):
        return pt.fori_loop(0, 4, lambda i, h: pt.tanh(h @ w + i), x)

    x, w = rand(5, 3), rand(5, 3, 3, seed=1)
    got = pt.vmap(f)(pt.array(x), pt.array(w))
    assert_close(got.numpy(), loop(f, x, w), dt.float64, ops=16)
    got = pt.vmap(f, in_axes=(0, None))(pt.array(x), pt.array(w[0]))
    assert_close(got.numpy(), loop(f, x, w[0], in_axes=(0, None)), dt.float64, ops=16)
    assert graph_ops(pt.vmap(f), pt.array(x), pt.array(w)).count("fori") == 1   # not unrolled


# --- composition ---------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(inner=st.integers(-2, 1), outer=st.integers(-3, 2), out_inner=st.integers(-2, 1),
       out_outer=st.integers(-3, 2))
def test_nested_vmap_is_a_double_loop(inner, outer, out_inner, out_outer):
    def f(r):
        return pt.exp(r) / pt.exp(r).sum()

    x = rand(2, 3, 4)   # outer maps one axis of x, inner one axis of what is left
    with pt.device("oracle"):
        got = pt.vmap(pt.vmap(f, in_axes=inner, out_axes=out_inner), in_axes=outer, out_axes=out_outer)(pt.array(x))
        expect = loop(lambda y: pt.array(loop(f, y.numpy(), in_axes=inner, out_axes=out_inner)), x,
                      in_axes=outer % 3, out_axes=out_outer)
    assert_close(got.numpy(), expect, dt.float64, ops=8)


def test_vmap_under_jit_traces_once(device):
    @pt.jit
    def batched_norms(x, scale):
        return pt.vmap(lambda r: pt.sqrt((r * r).sum()) * scale)(x)

    for seed in range(3):
        x = rand(4, 6, seed=seed)
        assert_close(batched_norms(pt.array(x), 2.0).numpy(), 2 * np.linalg.norm(x, axis=1), dt.float64, ops=8)
    assert batched_norms.trace_count == 1


def test_jit_under_vmap_inlines(device):
    inner = pt.jit(lambda r, m: (r @ m).max())
    x, m = rand(3, 4), rand(4, 2, seed=1)
    got = pt.vmap(inner, in_axes=(0, None))(pt.array(x), pt.array(m))
    assert_close(got.numpy(), (x @ m).max(axis=1), dt.float64, ops=4)
    assert inner.trace_count == 0    # inlined into the vmap trace, never compiled on its own


def test_vmap_of_a_small_program_matches_numpy(device):
    """A batch of two-layer MLP evaluations with per-example weights and a shared bias."""
    def mlp(x, w1, w2, b):
        h = pt.maximum(x @ w1 + b, 0.0)
        return pt.softmax(h @ w2, axis=-1) if hasattr(pt, "softmax") else pt.exp(h @ w2)

    x, w1, w2, b = rand(6, 5), rand(6, 5, 4, seed=1), rand(4, 3, seed=2), rand(4, seed=3)
    got = pt.vmap(mlp, in_axes=(0, 0, None, None))(*map(pt.array, (x, w1, w2, b)))
    assert_close(got.numpy(), loop(mlp, x, w1, w2, b, in_axes=(0, 0, None, None)), dt.float64, ops=16)


# --- array API under vmap ----------------------------------------------------------------------------
def test_indexing_and_assignment_with_batched_indices(device):
    def f(x, i, v):
        y = x[i] * 2.0          # gather with a per-example index array
        x[1:3] = v              # slice assignment of a per-example value
        x[i[0]] = -1.0          # assignment at a per-example position
        return y.sum() + x

    x, i, v = rand(4, 5), np.array([[0, 3], [4, 4], [1, 2], [2, 0]]), rand(4, 2, seed=1)
    got = pt.vmap(f)(pt.array(x), pt.array(i), pt.array(v))
    assert_close(got.numpy(), loop(f, x, i, v), dt.float64, ops=4)


def index_error(device):
    """What an out-of-range lazy index raises: the kernels' PootIndexError (KernelIndexError), or on
    the oracle NumPy's own IndexError. (NumPy's take also wraps an index below -n that the frontend
    has counted from the end once, where a kernel traps: the oracle runs only the positive cases.)"""
    return IndexError if device == "oracle" else pt.PootIndexError


@pytest.mark.parametrize("gather", [lambda r, i: r[i], lambda r, i: pt.take(r, i)], ids=["getitem", "take"])
def test_batched_gather_checks_each_examples_bounds(gather, device):
    """The batched gather reads one flat (batch * n) axis: an index out of one example's [0, n) must
    raise as in the loop, not read a neighbour's row; negative indices in [-n, 0) count per example."""
    rows = rand(3, 4)
    i = np.array([-1, 0, -4])
    assert_close(pt.vmap(gather)(pt.array(rows), pt.array(i)).numpy(), loop(gather, rows, i), dt.float64)
    for bad in ([4, 0, 0], [0, 0, 7]) if device == "oracle" else ([4, 0, 0], [0, -5, 0], [0, 0, 7]):
        with pytest.raises(index_error(device), match="size 4"):
            pt.vmap(gather)(pt.array(rows), pt.array(np.array(bad))).numpy()


def test_batched_scatter_checks_each_examples_bounds(device):
    """The scatter primitive itself (as a vjp records it): an index past one example's rows must trap,
    not write into the next example's rows."""
    def put(a, i, u):
        return pt.Array(lazy.record("scatter", (a._node, i._node, u._node), {"mode": "set"}))

    a, u = rand(2, 3), rand(2, 1, seed=1)
    ok = np.array([[2], [0]])
    assert_close(pt.vmap(put)(*map(pt.array, (a, ok, u))).numpy(), loop(put, a, ok, u), dt.float64)
    for bad in ([[3], [0]],) if device == "oracle" else ([[3], [0]], [[0], [-1]]):
        with pytest.raises(index_error(device), match="size 3"):
            pt.vmap(put)(pt.array(a), pt.array(np.array(bad)), pt.array(u)).numpy()


def test_sort_cumsum_where_along_mapped_axes(device):
    def f(x):
        s = pt.sort(x)
        return pt.where(s > 0, pt.cumsum(s, axis=-1), s * 0.5)

    x = rand(3, 5, 4)
    got = pt.vmap(f, in_axes=1, out_axes=-1)(pt.array(x))
    assert_close(got.numpy(), loop(f, x, in_axes=1, out_axes=-1), dt.float64, ops=5)


def test_random_with_batched_keys_matches_each_key():
    """On the oracle: the Threefry graph is large, and compiling it is not what this checks."""
    with pt.device("oracle"):
        keys = pt.random.split(pt.random.key(7), 4)
        got = pt.vmap(lambda k: pt.random.normal(k, (3,)))(keys)
        expect = np.stack([pt.random.normal(keys[b], (3,)).numpy() for b in range(4)])
        assert_close(got.numpy(), expect, dt.float64, ops=4)
        shared = pt.vmap(lambda x, k: x + pt.random.uniform(k, (2,)), in_axes=(0, None))(pt.zeros((3, 2)), keys[0])
        once = pt.random.uniform(keys[0], (2,)).numpy()
        assert_close(shared.numpy(), np.broadcast_to(once, (3, 2)), dt.float64)


# --- pytrees ---------------------------------------------------------------------------------------
class Pair(NamedTuple):
    a: object
    b: object


@dataclasses.dataclass
class Params:
    w: object
    bias: object


def test_pytrees_of_arguments_and_results(device):
    def f(params, pair, scale):
        y = pair.a @ params.w + params.bias
        return {"y": y * scale, "stats": (y.max(), pair.b)}

    w, bias, a, b = rand(4, 3, 2), rand(2), rand(3, 4, seed=1), rand(5, seed=2)
    in_axes = (Params(w=0, bias=None), Pair(a=1, b=None), None)
    out = pt.vmap(f, in_axes=in_axes, out_axes={"y": 1, "stats": (0, None)})(
        Params(pt.array(w), pt.array(bias)), Pair(pt.array(a), pt.array(b)), 3.0)
    y = np.stack([(a[:, k] @ w[k] + bias) for k in range(4)], axis=1)
    assert_close(out["y"].numpy(), 3.0 * y, dt.float64, ops=4)
    assert_close(out["stats"][0].numpy(), y.max(axis=0), dt.float64, ops=4)
    assert_close(out["stats"][1].numpy(), b, dt.float64)         # unbatched, returned as is


def test_keyword_arguments_map_along_axis_0_and_lists_read_as_tuples(device):
    f = pt.vmap(lambda x, y=None: x * y, in_axes=[1])
    got = f(pt.array(rand(2, 3)), y=pt.array(rand(3, 2, seed=1)))
    assert_close(got.numpy(), rand(2, 3).T * rand(3, 2, seed=1), dt.float64)


def test_axis_size_and_unbatched_results_broadcast(device):
    got = pt.vmap(lambda x: (x + 1.0, 2.0), in_axes=None, axis_size=3, out_axes=(1, 0))(pt.array(rand(2)))
    assert got[0].shape == (2, 3) and got[1].shape == (3,)
    assert_close(got[0].numpy(), np.broadcast_to((rand(2) + 1.0)[:, None], (2, 3)), dt.float64)
    assert_close(got[1].numpy(), np.full(3, 2.0), dt.float64)


def test_an_empty_batch_gives_empty_results(device):
    z = pt.ones((0, 4))
    assert pt.vmap(lambda x: pt.sort(x) * 2.0)(z).shape == (0, 4)
    assert pt.vmap(lambda x: pt.unique_all(x, size=3).values)(z).numpy().shape == (0, 3)
    n = pt.ones((0,), dtype=pt.int64)
    assert pt.vmap(lambda n: pt.while_loop(lambda c: c < n, lambda c: c + 1, 0))(n).numpy().shape == (0,)


# --- errors ----------------------------------------------------------------------------------------
def test_inconsistent_batch_sizes_name_the_arguments():
    with pytest.raises(BatchingError, match=r"inconsistent sizes") as e:
        pt.vmap(lambda x, params: x + params["w"])(pt.ones((3, 2)), {"w": pt.ones((4, 2))})
    assert "argument x " in str(e.value) and "argument params['w']" in str(e.value)
    assert "size 3" in str(e.value) and "size 4" in str(e.value)
    with pytest.raises(BatchingError, match=r"axis_size is 5"):
        pt.vmap(lambda x: x, axis_size=5)(pt.ones((3,)))


@pytest.mark.parametrize("call, message", [
    (lambda: pt.vmap(lambda x, y: x, in_axes=(0,))(pt.ones(2), pt.ones(2)), r"len\(in_axes\)=1, len\(args\)=2"),
    (lambda: pt.vmap(lambda x: x, in_axes=2)(pt.ones((2, 2))), r"argument x along axis 2.*rank .* only 2"),
    (lambda: pt.vmap(lambda x: x)(1.5), r"argument x along axis 0, but it is a float"),
    (lambda: pt.vmap(lambda x: x, out_axes=None)(pt.ones(2)), r"out_axes is None"),
    (lambda: pt.vmap(lambda x: x, out_axes=3)(pt.ones((2, 2))), r"out_axes 3 is out of range"),
    (lambda: pt.vmap(lambda x: x, in_axes=None)(pt.ones(2)), r"at least one non-None value in in_axes"),
    (lambda: pt.vmap(lambda d: d, in_axes=({"a": 0},))({"b": pt.ones(2)}), r"tree prefix"),
    (lambda: pt.vmap(lambda x: "text")(pt.ones(2)), r"returns arrays"),
])
def test_errors_say_what_is_wrong(call, message):
    with pytest.raises(BatchingError, match=message):
        call()


def test_bad_axis_specifications_are_refused_at_once():
    with pytest.raises(pt.PootError, match=r"in_axes holds 'x'"):
        pt.vmap(lambda x: x, in_axes=("x",))
    with pytest.raises(pt.PootError, match=r"needs a function"):
        pt.vmap(3)


def test_a_kernel_launch_inside_vmap_is_refused_by_name():
    @pt.kernel
    def double_into(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
        i = pt.thread_index()
        if i < len(c):
            c[i] = a[i] * 2.0

    ctx = pt.Context("cpu")

    def f(x):
        c = pt.zeros((4,), dtype=pt.float32)
        double_into(ctx, x, c)
        return c

    with pytest.raises(BatchingError, match=r"kernel 'double_into' is launched inside the mapped function"):
        pt.vmap(f)(pt.ones((3, 4), dtype=pt.float32))


def test_python_control_flow_on_a_mapped_value_is_a_tracer_error():
    with pytest.raises(pt.TracerError):
        pt.vmap(lambda x: x if float(x.sum()) > 0 else -x)(pt.ones((3, 2)))
