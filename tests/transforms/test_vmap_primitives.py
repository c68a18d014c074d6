"""pt.vmap, primitive by primitive: for every op of the graph op table, vmap of a function recording
it equals a Python loop over the batch, stacked, with hypothesis choosing the batch size, which
arguments are mapped, their in_axes and the out_axes.

The sweep runs on the "oracle" device (NumPy evaluates the graphs): vmap is a rewrite of the recorded
graph, and the oracle shows the rewritten graph means what the loop means without compiling a kernel
per drawn shape; a few draws per primitive also run on the test devices (the `device` fixture).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from poot import dtypes as dt
from poot.graph import OPS
from poot.graph.ops import (BINARY_ANY, BINARY_ARITH, BINARY_BITS, BINARY_COMPARE, BINARY_FLOAT,
                            BINARY_SHIFT, UNARY_BITS, UNARY_BOOL, UNARY_FLOAT, UNARY_NUMERIC,
                            UNARY_PREDICATE)
from poot.trace import context as _dev
from poot.trace import lazy
from poot.transforms.batching import BATCHING_RULES, UNBATCHABLE
from tolerance import assert_close

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def prim(op, *xs, **params):
    """One primitive recorded on arrays (the sweep tests primitives, not the API above them)."""
    return pt.Array(lazy.record(op, tuple(x._node for x in xs), params, _dev.current() if not xs else None))


# --- inputs ----------------------------------------------------------------------------------------
def values(kind: str, shape, rng) -> np.ndarray:
    if kind == "f":
        return rng.uniform(-2, 2, shape)
    if kind == "f32":                       # for primitives whose kernels exist in float32 only
        return rng.uniform(-2, 2, shape).astype(np.float32)
    if kind == "unit":                      # inside every float function's domain
        return rng.uniform(0.1, 0.9, shape)
    if kind == "ge1":
        return rng.uniform(1.1, 3.0, shape)
    if kind == "i":
        return rng.integers(-5, 6, shape).astype(np.int64)
    if kind == "pos_i":
        return rng.integers(1, 4, shape).astype(np.int64)
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "u32":
        return rng.integers(0, 2**32, shape, dtype=np.uint32)
    if kind.startswith("idx"):              # indices into an axis of that length
        return rng.integers(0, int(kind[3:]), shape).astype(np.int64)
    if kind == "spd":                       # symmetric positive definite matrices
        a = rng.uniform(-1, 1, shape)
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    raise ValueError(kind)


class Case:
    """A per-example function and its per-example arguments: (shape, kind) each."""

    def __init__(self, fn, *args, ops: int = 1):
        self.fn, self.args, self.ops = fn, args, ops


def _unary(op):
    kind = "ge1" if op == "acosh" else "unit"
    return Case(lambda x: prim(op, x), ((2, 3), kind))


CASES: dict[str, Case] = {}
for _op in UNARY_FLOAT:
    CASES[_op] = _unary(_op)
for _op in UNARY_NUMERIC:
    CASES[_op] = Case(lambda x, op=_op: prim(op, x), ((3,), "f"))
for _op in UNARY_PREDICATE:
    CASES[_op] = Case(lambda x, op=_op: prim(op, prim("div", x, x)), ((4,), "f"))
for _op in UNARY_BITS:
    CASES[_op] = Case(lambda x, op=_op: prim(op, x), ((3,), "i"))
for _op in UNARY_BOOL:
    CASES[_op] = Case(lambda x, op=_op: prim(op, x), ((3,), "b"))
for _op in list(BINARY_ARITH) + list(BINARY_ANY) + list(BINARY_COMPARE):
    kind = "pos_i" if _op in ("floordiv", "mod", "pow") else "i"
    CASES[_op] = Case(lambda x, y, op=_op: prim(op, x, y), ((2, 3), "i"), ((3,), kind))
for _op in BINARY_FLOAT:
    CASES[_op] = Case(lambda x, y, op=_op: prim(op, x, y), ((3,), "unit"), ((2, 3), "unit"))
for _op in BINARY_BITS:
    CASES[_op] = Case(lambda x, y, op=_op: prim(op, x, y), ((2, 3), "i"), ((), "i"))
for _op in BINARY_SHIFT:
    CASES[_op] = Case(lambda x, y, op=_op: prim(op, x, y), ((2, 3), "pos_i"), ((3,), "pos_i"))
CASES.update({
    "select": Case(lambda c, x, y: prim("select", c, x, y), ((3,), "b"), ((2, 3), "f"), ((), "f")),
    "convert": Case(lambda x: prim("convert", x, dtype=dt.int32), ((2, 3), "f")),
    "bitcast": Case(lambda x: prim("bitcast", x, dtype=dt.int64), ((2, 3), "f")),
    "full": Case(lambda x: x + prim("full", shape=(3,), value=2.0, dtype=dt.float64), ((3,), "f")),
    "iota": Case(lambda x: x * prim("iota", shape=(2, 3), axis=1, dtype=dt.float64), ((3,), "f")),
    "reduce_sum": Case(lambda x: prim("reduce_sum", x, axes=(0, 2)), ((2, 3, 2), "f"), ops=12),
    "reduce_prod": Case(lambda x: prim("reduce_prod", x, axes=(1,)), ((2, 3), "f"), ops=3),
    "reduce_max": Case(lambda x: prim("reduce_max", x, axes=(0, 1)), ((2, 3), "f")),
    "reduce_min": Case(lambda x: prim("reduce_min", x, axes=(1,)), ((2, 3), "i")),
    "argmax": Case(lambda x: prim("argmax", x, axis=1), ((2, 4), "f")),
    "argmin": Case(lambda x: prim("argmin", x, axis=0), ((3, 2), "i")),
    "cumsum": Case(lambda x: prim("cumsum", x, axis=1), ((2, 4), "f"), ops=4),
    "cumprod": Case(lambda x: prim("cumprod", x, axis=0), ((3, 2), "f"), ops=3),
    "reshape": Case(lambda x: prim("reshape", x, shape=(3, 2, 1)), ((2, 3), "f")),
    "broadcast": Case(lambda x: prim("broadcast", x, shape=(2, 4, 3)), ((4, 1), "f")),
    "transpose": Case(lambda x: prim("transpose", x, perm=(2, 0, 1)), ((2, 3, 4), "f")),
    "slice": Case(lambda x: prim("slice", x, starts=(1, 3), steps=(1, -2), sizes=(2, 2)), ((3, 4), "f")),
    "pad": Case(lambda x: prim("pad", x, widths=((1, 0), (2, 1)), value=7.0), ((2, 3), "f")),
    "concatenate": Case(lambda x, y: prim("concatenate", x, y, axis=1), ((2, 3), "f"), ((2, 1), "f")),
    "take": Case(lambda a, i: prim("take", a, i, axis=1), ((2, 5, 3), "f"), ((2, 2), "idx5")),
    "scatter": Case(lambda a, i, u: prim("scatter", a, i, u, mode="add"),
                    ((4, 2), "f"), ((3,), "idx4"), ((3, 2), "f"), ops=3),
    "update_slice": Case(lambda a, v: prim("update_slice", a, v, starts=(0, 1), steps=(2, 1), sizes=(2, 2)),
                         ((4, 3), "f"), ((2, 2), "f")),
    "matmul": Case(lambda a, b: prim("matmul", a, b), ((2, 3, 4), "f"), ((4, 2), "f"), ops=4),
    "attention": Case(lambda q, k, v, m: prim("attention", q, k, v, m, scale=0.5, softcap=0.0, left=None,
                                              right=1, zero_empty=True),
                      ((2, 2, 3, 4), "f32"), ((2, 1, 5, 4), "f32"), ((2, 1, 5, 2), "f32"), ((1, 2, 3, 5), "f32"),
                      ops=16),
    "qmatmul": Case(lambda x: prim("qmatmul", pt.asarray((np.arange(16, dtype=np.uint32) * 0x01030507).reshape(2, 8)),
                                   pt.asarray(np.array([0.5, 0.25], np.float32)), x, format="int8"),
                    ((3, 32), "f32")),
    "sample": Case(lambda x, w: prim("sample", x, w, greedy=False, temperature=0.7, top_k=4, p24=15000000, mp24=0),
                   ((3, 6), "f32"), ((3,), "u32")),
    "sort": Case(lambda x: pt.sort(x, axis=0, descending=True), ((4, 2), "f")),
    "argsort": Case(lambda x: pt.argsort(x, axis=1), ((2, 4), "i")),
    "searchsorted": Case(lambda a, v: prim("searchsorted", pt.sort(a), v, side="right"), ((5,), "f"), ((2, 3), "f")),
    "unique": Case(lambda x: pt.unique_all(x, size=4).values * 10 + pt.unique_all(x, size=4).counts,
                   ((6,), "pos_i")),
    "nonzero": Case(lambda x: pt.stack(pt.nonzero(x, size=5, fill_value=-1)), ((2, 3), "b")),
    "histogram": Case(lambda x: pt.histogram(x, bins=3, range=(-2.0, 2.0))[0], ((6,), "f")),
    "eigh": Case(lambda a: pt.abs(pt.linalg.eigh(a)[1]) + pt.linalg.eigh(a)[0], ((3, 3), "spd"), ops=64),
    "eigvalsh": Case(lambda a: pt.linalg.eigvalsh(a), ((3, 3), "spd"), ops=64),
    # eig and eigvals run inside host_complex (pt.linalg.eig); recorded here on real matrices with real
    # eigenvalues, as the wrapped op computes them
    "eig": Case(lambda a: pt.abs(prim("eig", a, index=1)) + prim("eig", a, index=0), ((3, 3), "spd"), ops=64),
    "eigvals": Case(lambda a: prim("eigvals", a), ((3, 3), "spd"), ops=64),
    "svd": Case(lambda a: pt.abs(pt.linalg.svd(a)[0]), ((3, 2), "f"), ops=64),
    "svdvals": Case(lambda a: pt.linalg.svdvals(a), ((2, 3), "f"), ops=64),
    "qr": Case(lambda a: pt.abs(pt.linalg.qr(a)[1]), ((3, 2), "f"), ops=64),
    "cholesky": Case(lambda a: pt.linalg.cholesky(a), ((3, 3), "spd"), ops=64),
    "inv": Case(lambda a: pt.linalg.inv(a), ((3, 3), "spd"), ops=64),
    "det": Case(lambda a: pt.linalg.det(a), ((3, 3), "spd"), ops=64),
    "slogdet": Case(lambda a: pt.linalg.slogdet(a)[1], ((3, 3), "spd"), ops=64),
    "solve": Case(lambda a, b: pt.linalg.solve(a, b), ((3, 3), "spd"), ((3, 2), "f"), ops=64),
    "pinv": Case(lambda a: pt.linalg.pinv(a), ((3, 2), "f"), ops=64),
    "cond": Case(lambda p, x, y: pt.cond(p, lambda a, b: a * b + 1.0, lambda a, b: a - b, x, y),
                 ((), "b"), ((3,), "f"), ((), "f")),
    "fori": Case(lambda x, y: pt.fori_loop(0, 3, lambda i, c: (c[0] * y + i, c[1] + 1), (x, 0))[0],
                 ((3,), "f"), ((), "f"), ops=6),
    "while": Case(lambda x, n: pt.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 1.5, c[1] + 1), (x, 0))[0],
                  ((2,), "f"), ((), "pos_i"), ops=6),
    "kernel_call": Case(lambda x, y: pt.kernel_call(_axpy, x, y, 1.5), ((2, 3), "f"), ((2, 3), "f"), ops=2),
    "fft": Case(lambda x: pt.abs(pt.fft.fft(x, axis=0)) + pt.fft.irfft(pt.fft.rfft(x), n=3), ((4, 3), "f"),
                ops=16),
    "host_complex": Case(lambda a: pt.abs(pt.linalg.inv(a * (1 + 0.5j))), ((3, 3), "spd"), ops=64),
    # collectives: a vmap named "k" inside the case binds them; an unnamed vmap inside that passes
    # them on (see COLLECTIVES below)
    **{op: Case(lambda x, op=op: pt.vmap(lambda r: pt.vmap(lambda e: e * getattr(pt.lax, op)(e, "k"))(r),
                                         axis_name="k")(x), ((2, 3), "f"), ops=4)
       for op in ("psum", "pmax", "pmin")},
    "axis_index": Case(lambda x: pt.vmap(lambda r: r * pt.lax.axis_index("k"), axis_name="k")(x), ((2, 3), "f")),
})
# the collectives only exist inside the vmap naming their axis, which replaces them: a case's graph,
# traced outside it, holds the reduction instead
COLLECTIVES = frozenset({"psum", "pmax", "pmin", "axis_index"})


@pt.kernel
def _axpy(x: pt.In[pt.f64], y: pt.InOut[pt.f64], a: pt.f64):
    """y = a * x + y, updated in place: through pt.kernel_call, a fresh result."""
    i = pt.thread_index()
    if i < len(y):
        y[i] = a * x[i] + y[i]


def loop_reference(fn, args, in_axes, out_axes, size):
    """`fn` applied to batch element b of each mapped argument, b = 0..size-1, stacked at out_axes."""
    outs = []
    for b in range(size):
        example = [pt.array(a if ax is None else np.take(a, b, axis=ax)) for a, ax in zip(args, in_axes)]
        outs.append(fn(*example).numpy())
    return np.stack(outs, axis=out_axes)


@st.composite
def batched_call(draw, case: Case):
    """Per-example arguments stacked along drawn axes: (arrays, in_axes, size, out_axes-or-None)."""
    size = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    mapped = draw(st.lists(st.booleans(), min_size=len(case.args), max_size=len(case.args)))
    if not any(mapped):
        mapped[draw(st.integers(0, len(case.args) - 1))] = True
    arrays, in_axes = [], []
    for (shape, kind), m in zip(case.args, mapped):
        if not m:
            arrays.append(values(kind, shape, rng))
            in_axes.append(None)
            continue
        axis = draw(st.integers(0, len(shape)))
        stacked = np.stack([values(kind, shape, rng) for _ in range(size)], axis=axis)
        arrays.append(stacked)
        in_axes.append(axis - len(shape) - 1 if draw(st.booleans()) else axis)  # negative axes too
    return arrays, tuple(in_axes), size, draw(st.integers(-1, 1))


def check_case(case: Case, call, device: str) -> None:
    arrays, in_axes, size, out_choice = call
    with pt.device(device):
        per_example_ndim = np.ndim(loop_reference(case.fn, arrays, in_axes, 0, 1)[0])
        out_axes = out_choice % (per_example_ndim + 1) if out_choice >= 0 else out_choice
        expect = loop_reference(case.fn, arrays, in_axes, out_axes, size)
        got = pt.vmap(case.fn, in_axes=in_axes, out_axes=out_axes)(*[pt.array(a) for a in arrays])
        assert got.shape == expect.shape
        assert_close(got.numpy(), expect, dt.as_dtype(expect.dtype), ops=case.ops,
                     err_msg=f"in_axes={in_axes} out_axes={out_axes} size={size}")


@pytest.mark.parametrize("op", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_vmap_matches_loop(op, data):
    check_case(CASES[op], data.draw(batched_call(CASES[op])), "oracle")


@pytest.mark.parametrize("op", sorted(CASES))
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_vmap_matches_loop_on_device(op, data, device):
    """The same on the test devices (compiled kernels), with fewer draws: compiling dominates."""
    check_case(CASES[op], data.draw(batched_call(CASES[op])), device)


# --- the table is complete ---------------------------------------------------------------------------
def test_every_primitive_has_a_batching_rule_or_a_reason():
    missing = [op for op in OPS if op not in BATCHING_RULES and op not in UNBATCHABLE]
    assert not missing, f"primitives with neither a batching rule nor a reason: {missing}"
    for op, reason in UNBATCHABLE.items():
        assert op in OPS and isinstance(reason, str) and len(reason) > 10, op
        assert op not in BATCHING_RULES, f"{op} is both batched and declared unbatchable"


def test_every_primitive_is_swept_and_recorded_by_its_case():
    assert sorted(CASES) == sorted(OPS), "a primitive without a vmap-vs-loop case (or a case for no op)"
    rng = np.random.default_rng(0)
    with pt.device("oracle"):
        for op, case in CASES.items():
            with lazy.scope() as inside:
                params = [lazy.placeholder(lazy.Aval(s, dt.as_dtype(values(k, s, rng).dtype)), "oracle")
                          for s, k in case.args]
                out = case.fn(*[pt.Array(p) for p in params])
            graph, _ = lazy.build_graph([out._node], inside)
            recorded = {e.op for e in graph.eqns}
            assert op in recorded or op in COLLECTIVES, f"the case for {op} records {sorted(recorded)}"
