"""Index maps of fusible ops: at which index each operand is read when an op's output is wanted at
`index` (a list of Forms, one per output dimension). Movement ops become index arithmetic here.

Each map is registered as the op's `access` rule in the op registry (poot/graph/registry.py),
`rule(e, k, index) -> index of operand k`; elementwise ops all read with NumPy broadcasting.
"""
from __future__ import annotations

import functools

from poot.errors import InternalError
from poot.graph import Eqn
from poot.graph.registry import OPS, Fusion, ops, rule
from poot.fuse.indexing import Data, Form, clamp, floordiv, reshape_index

ZERO = Form(0, ())


def broadcast_index(index: list[Form], out_shape, in_shape) -> list[Form]:
    """NumPy broadcasting read: leading dims dropped, size-1 dims read at 0."""
    lead = len(out_shape) - len(in_shape)
    return [ZERO if n == 1 else index[lead + d] for d, n in enumerate(in_shape)]


def operand_index(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    """The index at which operand `k` of `e` is read for output element `index`."""
    access = OPS[e.op].access
    if access is None:   # the planner computes only inline ops inside kernels, and each has a map
        raise InternalError(f"reading operand {k} of '{e.op}' inside a kernel",
                            LookupError(f"'{e.op}' ({OPS[e.op].fusion.value}) has no access rule"))
    return access(e, k, index)


def _broadcast(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    return broadcast_index(index, e.out.aval.shape, e.inputs[k].aval.shape)


for _op in ops(Fusion.ELEMENTWISE):
    _op.register(access=_broadcast)
for _op in ops(Fusion.SOURCE):
    _op.without(access="it has no operands: its value comes from the output index and its parameters")
for _op in ops(Fusion.REDUCTION):
    _op.without(access="its operand is read by the row kernel's own loop over the reduced axes")


@rule("access", "reshape")
def _reshape(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    return reshape_index(index, e.out.aval.shape, e.inputs[k].aval.shape)


@rule("access", "broadcast")
def _broadcast_to(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    return _broadcast(e, k, index)


@rule("access", "transpose")
def _transpose(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    src = [ZERO] * len(e.out.aval.shape)
    for d, pd in enumerate(e.params["perm"]):
        src[pd] = index[d]
    return src


@rule("access", "slice")
def _slice(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    p = e.params
    return [Form.of(s) + f * st if n != 1 else Form.of(s)
            for f, s, st, n in zip(index, p["starts"], p["steps"], e.inputs[k].aval.shape)]


@rule("access", "pad")
def _pad(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    return [clamp(f - lo, n) if (lo or hi) else f
            for f, (lo, hi), n in zip(index, e.params["widths"], e.inputs[k].aval.shape)]


@functools.lru_cache(maxsize=256)
def concat_offsets(e: Eqn) -> tuple[int, ...]:
    """Where each operand of concatenate `e` starts along its axis. Cached per equation: reading all
    pieces of a concatenate of thousands stays linear, not quadratic, in the piece count."""
    ax, acc, out = e.params["axis"], 0, []
    for a in e.inputs:
        out.append(acc)
        acc += a.aval.shape[ax]
    return tuple(out)


@rule("access", "concatenate")
def _concatenate(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    ax = e.params["axis"]
    off = concat_offsets(e)[k]
    src = list(index)
    src[ax] = clamp(index[ax] - off, e.inputs[k].aval.shape[ax])
    return src


@rule("access", "take")
def _take(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    ax = e.params["axis"]
    m = e.inputs[1].aval.ndim
    if k == 1:
        return index[ax:ax + m]
    return index[:ax] + [Form.of(Data(id(e), e.inputs[k].aval.shape[ax]))] + index[ax + m:]


@rule("access", "update_slice")
def _update_slice(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    if k == 0:
        return index
    p = e.params
    src = []
    for f, s, st, n in zip(index, p["starts"], p["steps"], p["sizes"]):
        rel = (f - s) if st > 0 else (Form.of(s) - f)
        src.append(clamp(floordiv(rel, abs(st)), n) if n != 1 else ZERO)
    return src


def leaf_forms(producer: dict, members: set[int], start: list[tuple]) -> list[tuple]:
    """(leaf var, index) pairs a kernel reads, walking from (root, index) pairs through `members`
    (the ids of the values computed inside the kernel). Used to pick a loop shape."""
    out, seen, stack = [], set(), list(start)
    while stack:
        v, idx = stack.pop()
        key = (v.id, tuple(idx))
        if key in seen:
            continue
        seen.add(key)
        e = producer.get(v.id)
        if e is None or v.id not in members:
            out.append((v, idx))
            continue
        for k, u in enumerate(e.inputs):
            stack.append((u, operand_index(e, k, idx)))
    return out
