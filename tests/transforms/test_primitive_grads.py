"""Every differentiable primitive's forward- and reverse-mode derivative against central finite
differences in float64 (tests/transforms/checks.py), on the device under test.

The cases record the primitives directly (`bind`) where the public API would hide which one is
checked; `test_every_rule_is_checked` asserts that the cases together reach every op that has a
rule."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import poot as pt
from poot import dtypes as dt
from poot.trace import pytree
from poot.transforms.jvp_rules import JVP_RULES
from poot.transforms.prims import bind
from poot.transforms.tracing import Traced
from poot.transforms.vjp_rules import VJP_RULES

from .checks import check_derivatives

_rng = np.random.default_rng(1234)


def normal(*shape):
    return lambda: _rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return lambda: _rng.uniform(lo, hi, shape)


def ints(values):
    return pt.asarray(np.asarray(values, dtype=np.int64))


def unary(op, make=None):
    return (lambda x: bind(op, x), [make or normal(3, 4)])


def binary(op, a=None, b=None):
    return (lambda x, y: bind(op, x, y), [a or normal(3, 4), b or normal(3, 4)])


def _set_slice(x, v):
    return bind("update_slice", x, v, starts=(1, 3), steps=(1, -2), sizes=(2, 2))


def _spd(a):
    return a @ pt.matrix_transpose(a) + 3.0 * pt.eye(a.shape[-1], dtype=pt.float64)


def _attention32(q, k, v):
    """The fused attention primitive runs in float32 (its flash kernels' dtypes): checked through
    conversions, with float32 finite-difference tolerances (float64 checks of its rule against the
    NumPy oracle are in test_attention_grad.py)."""
    q, k, v = (x.astype(pt.float32) for x in (q, k, v))
    out = bind("attention", q, k, v, scale=0.6, softcap=0.0, left=None, right=1, zero_empty=True)
    return out.astype(pt.float64)


_CUMPROD_ZEROS = np.ones((2, 9, 3))
_CUMPROD_ZEROS[0, 4, 0] = _CUMPROD_ZEROS[0, [2, 6], 1] = _CUMPROD_ZEROS[1, [3, 4], 2] = 0.0
_CUMPROD_ZEROS[1, 0, 0] = _CUMPROD_ZEROS[1, 8, 1] = 0.0

CASES = {
    **{op: unary(op) for op in ("exp", "expm1", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh",
                                "asinh", "erf", "neg", "abs")},
    **{op: unary(op, uniform(0.3, 3.0, 3, 4)) for op in ("log", "log1p", "log2", "log10", "sqrt")},
    **{op: unary(op, uniform(-0.8, 0.8, 5)) for op in ("asin", "acos", "atanh")},
    "acosh": unary("acosh", uniform(1.2, 3.0, 5)),
    **{op: binary(op) for op in ("add", "sub", "mul", "max", "min", "atan2", "hypot", "logaddexp",
                                 "copysign")},
    "div": binary("div", b=uniform(0.5, 2.0, 3, 4)),
    "pow": binary("pow", a=uniform(0.5, 2.0, 3, 4)),
    "mod": binary("mod", b=uniform(0.5, 2.0, 3, 4)),
    "add_broadcast": (lambda x, y: x + y, [normal(3, 1), normal(4)]),
    "select": (lambda x, y: bind("select", bind("gt", x, y), x * 2.0, y), [normal(3, 4), normal(4)]),
    "convert": (lambda x: bind("convert", bind("convert", x, dtype=dt.float32), dtype=dt.float64) * x,
                [normal(4)]),
    "reduce_sum": (lambda x: bind("reduce_sum", x, axes=(0, 2)), [normal(2, 3, 4)]),
    "reduce_max": (lambda x: bind("reduce_max", x, axes=(1,)), [normal(3, 4)]),
    "reduce_min": (lambda x: bind("reduce_min", x, axes=(0, 1)), [normal(3, 4)]),
    "reduce_prod": (lambda x: bind("reduce_prod", x, axes=(0, 2)), [normal(2, 3, 3)]),
    "reduce_prod_with_zero": (lambda x: bind("reduce_prod", x, axes=(1,)),
                              [lambda: _rng.standard_normal((2, 4)) * np.array([1.0, 0.0, 1.0, 1.0])]),
    "cumsum": (lambda x: bind("cumsum", x, axis=1), [normal(3, 4)]),
    "cumprod": (lambda x: bind("cumprod", x, axis=0), [uniform(0.5, 2.0, 4, 2)]),
    # zeros (one, several, adjacent, first or last in a line) along the middle axis: no division by x
    "cumprod_with_zeros": (lambda x: bind("cumprod", x, axis=1),
                           [lambda: _rng.uniform(0.5, 2.0, (2, 9, 3)) * _CUMPROD_ZEROS]),
    "reshape": (lambda x: bind("reshape", x, shape=(2, 6)) * 1.5, [normal(3, 4)]),
    "broadcast": (lambda x: bind("broadcast", x, shape=(2, 3, 4)), [normal(3, 1)]),
    "transpose": (lambda x: bind("transpose", x, perm=(2, 0, 1)), [normal(2, 3, 4)]),
    "slice": (lambda x: bind("slice", x, starts=(1, 3), steps=(1, -2), sizes=(2, 2)), [normal(3, 4)]),
    "pad": (lambda x: bind("pad", x, widths=((1, 2), (0, 1)), value=0.5), [normal(2, 3)]),
    "concatenate": (lambda x, y, z: bind("concatenate", x, y, z, axis=1),
                    [normal(2, 1), normal(2, 3), normal(2, 2)]),
    "take": (lambda x: bind("take", x, ints([[0, 2], [2, 1]]), axis=1), [normal(3, 4)]),
    "scatter_set": (lambda x, u: bind("scatter", x, ints([2, 0]), u, mode="set"),
                    [normal(3, 4), normal(2, 4)]),
    # duplicate indices: only the update the forward leaves in place (the last) gets a cotangent
    "scatter_set_duplicates": (lambda x, u: bind("scatter", x, ints([[1, 2], [1, 1]]), u, mode="set"),
                               [normal(3, 2), normal(2, 2, 2)]),
    "scatter_add": (lambda x, u: bind("scatter", x, ints([1, 1, 0]), u, mode="add"),
                    [normal(3, 2), normal(3, 2)]),
    "update_slice": (_set_slice, [normal(3, 4), normal(2, 2)]),
    "matmul": (lambda a, b: bind("matmul", a, b), [normal(3, 4), normal(4, 2)]),
    "matmul_batched": (lambda a, b: bind("matmul", a, b), [normal(2, 3, 4), normal(1, 4, 2)]),
    "cond_true": (lambda x, y: pt.cond(x[0] > -100.0, lambda a, b: a * b, lambda a, b: pt.sin(a), x, y),
                  [normal(4), normal(4)]),
    "cond_false": (lambda x, y: pt.cond(x[0] > 100.0, lambda a, b: a * b, lambda a, b: pt.sin(a) * y, x, y),
                   [normal(4), normal(4)]),
    "fori": (lambda x, w: pt.fori_loop(1, 4, lambda i, c: (pt.sin(c[0] * w) + i, c[1] * c[0]), (x, w)),
             [normal(3), normal(3)]),
    "sort": (lambda x: bind("sort", x, axis=1, descending=True), [normal(3, 5)]),
    "solve": (lambda a, b: pt.linalg.solve(a, b), [lambda: _rng.standard_normal((3, 3)) + 3 * np.eye(3),
                                                   normal(3, 2)]),
    "inv": (lambda a: pt.linalg.inv(a), [lambda: _rng.standard_normal((3, 3)) + 3 * np.eye(3)]),
    "det": (lambda a: pt.linalg.det(a), [normal(2, 3, 3)]),
    "slogdet": (lambda a: pt.linalg.slogdet(a)[1], [normal(3, 3)]),
    "cholesky": (lambda a: pt.linalg.cholesky(_spd(a)), [normal(3, 3)]),
    "cholesky_upper": (lambda a: pt.linalg.cholesky(_spd(a), upper=True), [normal(3, 3)]),
    "eigh": (lambda a: (pt.linalg.eigh(a + pt.matrix_transpose(a))[0],
                        pt.abs(pt.linalg.eigh(a + pt.matrix_transpose(a))[1])), [normal(3, 3)]),
    "eigvalsh": (lambda a: pt.linalg.eigvalsh(a + pt.matrix_transpose(a)), [normal(3, 3)]),
    "svd": (lambda a: tuple(pt.abs(r) for r in pt.linalg.svd(a, full_matrices=False)), [normal(4, 3)]),
    "svdvals": (lambda a: pt.linalg.svdvals(a), [normal(2, 3, 4)]),
    "qr": (lambda a: tuple(pt.abs(r) for r in pt.linalg.qr(a)), [normal(4, 3)]),
    "pinv": (lambda a: pt.linalg.pinv(a), [normal(2, 3, 4)]),
    "attention": (_attention32, [normal(1, 2, 3, 4), normal(1, 1, 5, 4), normal(1, 1, 5, 2)]),
}

# forward mode only: reverse mode through while_loop is refused (tests/transforms/test_control.py)
JVP_ONLY = {
    "while": (lambda x: pt.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * pt.sin(c[1])),
                                      (0, x))[1], [normal(3)]),
}

TOLERANCE = {"convert": {"rtol": 1e-5, "atol": 1e-6, "step": 1e-2},
             "attention": {"rtol": 2e-3, "atol": 2e-4, "step": 1e-2}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_derivative(name, device):
    fn, makers = CASES[name]
    check_derivatives(fn, [m() for m in makers], **TOLERANCE.get(name, {}))


@pytest.mark.parametrize("name", sorted(JVP_ONLY))
def test_forward_only_derivative(name, device):
    fn, makers = JVP_ONLY[name]
    check_derivatives(fn, [m() for m in makers], modes=("jvp",))


@settings(max_examples=12, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div", "max", "hypot"]),
       seed=st.integers(0, 2**16))
def test_broadcasting_binary_ops(shapes, op, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(0.5, 2.0, s) * rng.choice([-1, 1], s) for s in shapes.input_shapes)
    fns = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
           "div": lambda x, y: x / y, "max": pt.maximum, "hypot": pt.hypot}
    check_derivatives(fns[op], [a, b], seed=seed)


@settings(max_examples=10, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), data=st.data(),
       op=st.sampled_from(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]))
def test_reductions_over_random_axes(shape, data, op):
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1), label="axes")))
    perm = tuple(data.draw(st.permutations(range(len(shape))), label="perm"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    check_derivatives(lambda v: bind(op, bind("transpose", v, perm=perm), axes=axes), [x], seed=seed)


def _ops_reached(fn, makers) -> set:
    arrays = [pt.asarray(m()) for m in makers]
    traced = Traced(fn, [a._node for a in arrays], pytree.flatten(tuple(arrays))[1], "coverage")
    return {n.op for n in traced.eqns}


# collectives exist only inside a vmap that binds their axis name, whose batching rule turns them into
# reductions before a trace here could see them: their rules are checked under vmap(grad) and
# vmap(jvp) against closed forms in tests/programs/test_vmap_programs.py
UNDER_NAMED_VMAP = {"psum", "pmax", "pmin"}


def test_every_rule_is_checked():
    reached = set(UNDER_NAMED_VMAP)
    for fn, makers in CASES.values():
        reached |= _ops_reached(fn, makers)
    missing_vjp = set(VJP_RULES) - reached
    assert not missing_vjp, f"no finite-difference case reaches {sorted(missing_vjp)}"
    for fn, makers in JVP_ONLY.values():
        reached |= _ops_reached(fn, makers)
    missing_jvp = set(JVP_RULES) - reached
    assert not missing_jvp, f"no finite-difference case reaches {sorted(missing_jvp)}"
