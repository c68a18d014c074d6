"""A one-row product with a transposed matrix, `x @ w.T` (what a linear layer writes for one token),
becomes the matrix-vector product `w @ x` that reads w in place (a dtype conversion of the transpose,
`x @ w.T.astype(t)` as type promotion writes it, becomes the conversion of w itself).

Why: the planner stores every operand of a matmul, so `x @ w.T` first wrote the [K, N] transpose of the
whole weight (a read and a write of every weight byte) and then multiplied by it: three passes over the
largest array of the program where one suffices. For one row of x the two products are the same sums,
element by element:

    matmul(x[..., 1, K], transpose(w)[..., K, N])   ==   reshape(matmul(w[..., N, K], x'[..., K, 1]))

where x' is x reshaped (one row is also one column: no data moves) and the result is reshaped back. The
GEMV kernels (poot/jit/codegen/cpu_gemv.py, gpu_gemv.py) then stream the rows of w. The transpose stays
for any other reader, and goes with DCE otherwise. Products of several rows keep the transpose: turning
them around would transpose the activations and the result instead, which is not always cheaper.
"""
from __future__ import annotations

from poot.graph import Aval, Eqn, Graph, Var


def read_transposed_in_place(graph: Graph) -> Graph:
    """`graph` with each one-row `x @ transpose(w)` (the transpose swapping the last two axes) turned
    into `w @ x` as above."""
    if not any(e.op == "matmul" for e in graph.eqns):
        return graph
    producer = {e.out.id: e for e in graph.eqns}
    eqns: list[Eqn] = []
    changed = False
    for e in graph.eqns:
        new = _turned(e, producer) if e.op == "matmul" else None
        eqns.extend(new or (e,))
        changed = changed or new is not None
    return Graph(graph.inputs, eqns, graph.outputs) if changed else graph


def _turned(e: Eqn, producer) -> list[Eqn] | None:
    x, t = e.inputs
    if x.aval.shape[-2] != 1:
        return None
    tr = producer.get(t.id)
    widen = None
    if tr is not None and tr.op == "convert":      # x @ w.T.astype(...): w converted, not its transpose
        widen, tr = tr, producer.get(tr.inputs[0].id)
    nd = t.aval.ndim
    swap = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    if tr is None or tr.op != "transpose" or tuple(tr.params["perm"]) != swap:
        return None
    w = tr.inputs[0]
    out = []
    if widen is not None:
        converted = Var(Aval(w.aval.shape, t.aval.dtype))
        out.append(Eqn("convert", (w,), widen.params, converted, widen.where))
        w = converted
    k = x.aval.shape[-1]
    column = Var(Aval(x.aval.shape[:-2] + (k, 1), x.aval.dtype))
    product = Var(Aval(e.out.aval.shape[:-2] + (w.aval.shape[-2], 1), e.out.aval.dtype))
    return out + [Eqn("reshape", (x,), {"shape": column.aval.shape}, column, e.where),
                  Eqn("matmul", (w, column), e.params, product, e.where),
                  Eqn("reshape", (product,), {"shape": e.out.aval.shape}, e.out, e.where)]


__all__ = ["read_transposed_in_place"]
