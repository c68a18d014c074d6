"""Index maps of fusible ops: at which index each operand is read when an op's output is wanted at
`index` (a list of Forms, one per output dimension). Movement ops become index arithmetic here."""
from __future__ import annotations

from ..graph import Eqn
from .indexing import Data, Form, clamp, floordiv, reshape_index

ZERO = Form(0, ())


def broadcast_index(index: list[Form], out_shape, in_shape) -> list[Form]:
    """NumPy broadcasting read: leading dims dropped, size-1 dims read at 0."""
    lead = len(out_shape) - len(in_shape)
    return [ZERO if n == 1 else index[lead + d] for d, n in enumerate(in_shape)]


def operand_index(e: Eqn, k: int, index: list[Form]) -> list[Form]:
    """The index at which operand `k` of `e` is read for output element `index`."""
    op, p = e.op, e.params
    x = e.inputs[k].aval
    out_shape = e.out.aval.shape
    if op == "reshape":
        return reshape_index(index, out_shape, x.shape)
    if op == "transpose":
        src = [ZERO] * len(out_shape)
        for d, pd in enumerate(p["perm"]):
            src[pd] = index[d]
        return src
    if op == "slice":
        return [Form.of(s) + f * st if n != 1 else Form.of(s)
                for f, s, st, n in zip(index, p["starts"], p["steps"], x.shape)]
    if op == "pad":
        return [clamp(f - lo, n) if (lo or hi) else f for f, (lo, hi), n in zip(index, p["widths"], x.shape)]
    if op == "concatenate":
        ax = p["axis"]
        off = sum(a.aval.shape[ax] for a in e.inputs[:k])
        src = list(index)
        src[ax] = clamp(index[ax] - off, x.shape[ax])
        return src
    if op == "take":
        ax = p["axis"]
        m = e.inputs[1].aval.ndim
        if k == 1:
            return index[ax:ax + m]
        return index[:ax] + [Form.of(Data(id(e), x.shape[ax]))] + index[ax + m:]
    if op == "update_slice":
        if k == 0:
            return index
        src = []
        for f, s, st, n in zip(index, p["starts"], p["steps"], p["sizes"]):
            rel = (f - s) if st > 0 else (Form.of(s) - f)
            src.append(clamp(floordiv(rel, abs(st)), n) if n != 1 else ZERO)
        return src
    # elementwise (and select): NumPy broadcasting
    return broadcast_index(index, out_shape, x.shape)


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
