"""Batching rules of the array primitives (poot/graph/ops.py): elementwise, sources, reductions,
scans, movement, indexing and contraction.

Each rule takes the operand nodes with their batch axes (None: unbatched) and the equation's
parameters, and records the batched computation as poot primitives, returning `(node, batch_axis)`;
it is registered as the op's `batch` rule in the op registry (poot/graph/registry.py) when this
module is imported.
Most rules move the batch axis to the front (a transpose the fusion pass folds into its consumer) and
shift the axis parameters by one; the indexing rules turn a per-example gather or scatter into one
gather or scatter over a flattened `batch * axis` dimension with offset indices.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.graph.registry import get, ops, rule
from poot.trace import lazy
from poot.transforms.batching_core import (BatchContext, example_ndim, move_axis, record, to_front,
                                           with_rank)


# --- elementwise ---------------------------------------------------------------------------------
def elementwise(op: str):
    """Batched operands go to the front and get the rank of the widest example, so that NumPy
    broadcasting pairs example axes with example axes; unbatched operands broadcast as they are."""
    def rule(ctx: BatchContext, nodes, dims, **params):
        rank = max(example_ndim(n, d) for n, d in zip(nodes, dims))
        ins = [n if d is None else with_rank(to_front(ctx, n, d), rank) for n, d in zip(nodes, dims)]
        return record(op, ins, **params), 0
    return rule


# --- reductions and scans ------------------------------------------------------------------------
def reduce(op: str):
    def rule(ctx, nodes, dims, axes):
        return record(op, (to_front(ctx, nodes[0], dims[0]),), axes=tuple(a + 1 for a in axes)), 0
    return rule


def along_axis(op: str):
    """argmax/argmin, cumsum/cumprod, sort/argsort: one `axis` parameter, shifted past the batch axis."""
    def rule(ctx, nodes, dims, axis, **params):
        return record(op, (to_front(ctx, nodes[0], dims[0]),), axis=axis + 1, **params), 0
    return rule


# --- movement ------------------------------------------------------------------------------------
@rule("batch", "reshape")
def _reshape(ctx, nodes, dims, shape):
    x = to_front(ctx, nodes[0], dims[0])
    return record("reshape", (x,), shape=(ctx.size,) + tuple(shape)), 0


@rule("batch", "broadcast")
def _broadcast(ctx, nodes, dims, shape):
    x = with_rank(to_front(ctx, nodes[0], dims[0]), len(shape))
    return record("broadcast", (x,), shape=(ctx.size,) + tuple(shape)), 0


@rule("batch", "transpose")
def _transpose(ctx, nodes, dims, perm):
    x = to_front(ctx, nodes[0], dims[0])
    return record("transpose", (x,), perm=(0,) + tuple(p + 1 for p in perm)), 0


@rule("batch", "slice")
def _slice(ctx, nodes, dims, starts, steps, sizes):
    x = to_front(ctx, nodes[0], dims[0])
    return record("slice", (x,), starts=(0,) + tuple(starts), steps=(1,) + tuple(steps),
                  sizes=(ctx.size,) + tuple(sizes)), 0


@rule("batch", "pad")
def _pad(ctx, nodes, dims, widths, value):
    x = to_front(ctx, nodes[0], dims[0])
    return record("pad", (x,), widths=((0, 0),) + tuple(tuple(w) for w in widths), value=value), 0


@rule("batch", "concatenate")
def _concatenate(ctx, nodes, dims, axis):
    ins = [to_front(ctx, n, d) for n, d in zip(nodes, dims)]
    return record("concatenate", ins, axis=axis + 1), 0


# --- indexing ------------------------------------------------------------------------------------
def _batch_offsets(ctx, idx, extent: int):
    """Front-batched indices `idx` (B, *i) plus `b * extent` for batch element b: positions in an
    axis that holds the B examples' axes of length `extent` one after another.

    The flat gather or scatter only checks its positions against B * extent, where an index out of
    one example's [0, extent) lands in a neighbour's data, so each index is first checked against
    `extent` itself: a take from an iota is the index when in range, and traps with the per-example
    bounds error otherwise (as the unbatched take or scatter would; it costs no memory)."""
    if idx.aval.dtype is not dt.int64:       # b * extent may not fit a narrow index dtype
        idx = record("convert", (idx,), dtype=dt.int64)
    whole = lazy.record("iota", (), {"shape": (extent,), "axis": 0, "dtype": dt.int64}, idx.device)
    idx = record("take", (whole, idx), axis=0)
    b = idx.aval.shape[0]
    rows = lazy.record("iota", (), {"shape": (b,) + (1,) * (idx.aval.ndim - 1), "axis": 0,
                                    "dtype": dt.int64}, idx.device)
    scale = lazy.constant(extent, dt.int64, idx.device)
    return record("add", (idx, record("mul", (rows, scale))))


@rule("batch", "take")
def _take(ctx, nodes, dims, axis):
    (a, idx), (da, di) = nodes, dims
    if di is None:              # the same indices into every example
        return record("take", (to_front(ctx, a, da), idx), axis=axis + 1), 0
    if da is None:              # one table, per-example indices: the batch axis lands where idx goes
        return record("take", (a, idx), axis=axis), axis + di
    # both batched: gather from (B * n, *rest) with the indices offset by b * n
    a = to_front(ctx, a, da)
    a = move_axis(a, axis + 1, 1)
    n, rest = a.aval.shape[1], a.aval.shape[2:]
    flat = record("reshape", (a,), shape=(ctx.size * n,) + rest)
    idx = to_front(ctx, idx, di)
    out = record("take", (flat, _batch_offsets(ctx, idx, n)), axis=0)   # (B, *i, *pre, *post)
    k = idx.aval.ndim - 1
    perm = (0,) + tuple(range(1 + k, 1 + k + axis)) + tuple(range(1, 1 + k)) \
        + tuple(range(1 + k + axis, out.aval.ndim))
    return record("transpose", (out,), perm=perm), 0


@rule("batch", "scatter")
def _scatter(ctx, nodes, dims, mode):
    """Every operand batched at the front; the B targets become one (B * n, *rest) target, which the
    offset indices address example by example."""
    a, idx, upd = (to_front(ctx, n, d) for n, d in zip(nodes, dims))
    n, rest = a.aval.shape[1], a.aval.shape[2:]
    flat = record("reshape", (a,), shape=(ctx.size * n,) + rest)
    out = record("scatter", (flat, _batch_offsets(ctx, idx, n), upd), mode=mode)
    return record("reshape", (out,), shape=a.aval.shape), 0


@rule("batch", "update_slice")
def _update_slice(ctx, nodes, dims, starts, steps, sizes):
    a, v = (to_front(ctx, n, d) for n, d in zip(nodes, dims))
    return record("update_slice", (a, v), starts=(0,) + tuple(starts), steps=(1,) + tuple(steps),
                  sizes=(ctx.size,) + tuple(sizes)), 0


# --- contraction ---------------------------------------------------------------------------------
@rule("batch", "matmul")
def _matmul(ctx, nodes, dims):
    """A batched operand's batch axis becomes the leading matmul batch axis: both operands get the
    same number of axes after it, and an unbatched operand broadcasts over it."""
    rank = max(example_ndim(n, d) for n, d in zip(nodes, dims))
    ins = [n if d is None else with_rank(to_front(ctx, n, d), rank) for n, d in zip(nodes, dims)]
    return record("matmul", ins), 0


# the families whose rule is made per op: every elementwise op, reduction and one-axis op
for _op in ops():
    if _op.kind == "elementwise":
        _op.register(batch=elementwise(_op.name))
    elif _op.kind == "reduce":
        _op.register(batch=reduce(_op.name))
    elif _op.kind in ("argreduce", "scan"):
        _op.register(batch=along_axis(_op.name))

# Sources take no operands, so they are never batched: `eval_graph` records them unchanged.
get("full").without(batch="a constant has no operands to be batched")
get("iota").without(batch="an index sequence has no operands to be batched")


# --- attention -----------------------------------------------------------------------------------
@rule("batch", "attention")
def _attention(ctx, nodes, dims, **params):
    """The primitive already has a leading batch axis B: the vmapped axis N is merged into it
    (N * B examples, q, k, v and a full-batch mask reshaped), and split off the result again."""
    n = ctx.size
    q, k, v = (to_front(ctx, x, d) for x, d in zip(nodes[:3], dims[:3]))   # [N, B, H, L, D]
    b = q.aval.shape[1]

    def merged(x):
        return record("reshape", (x,), shape=(n * x.aval.shape[1],) + x.aval.shape[2:])

    ins = [merged(q), merged(k), merged(v)]
    if len(nodes) == 4:
        mask, md = nodes[3], dims[3]
        if md is not None or mask.aval.shape[0] != 1:       # a per-example or per-B mask: N * B rows
            mask = to_front(ctx, mask, md)
            if mask.aval.shape[1] != b:                      # one mask row for every B
                mask = record("broadcast", (mask,), shape=(n, b) + mask.aval.shape[2:])
            mask = merged(mask)
        ins.append(mask)                                     # else [1, ...]: broadcast as it is
    out = record("attention", tuple(ins), **params)
    return record("reshape", (out,), shape=(n, b) + out.aval.shape[1:]), 0


# --- sample ----------------------------------------------------------------------------------------
@rule("batch", "sample")
def _sample(ctx, nodes, dims, **params):
    """Rows are independent: the vmapped axis N is merged into the rows (N * R rows of logits, each with
    its bits; unbatched bits are the same for every example, as the same key is), and split off again."""
    n = ctx.size
    logits, words = (to_front(ctx, x, d) for x, d in zip(nodes, dims))
    rows, vocab = logits.aval.shape[1:]
    flat = record("reshape", (logits,), shape=(n * rows, vocab))
    out = record("sample", (flat, record("reshape", (words,), shape=(n * rows,))), **params)
    return record("reshape", (out,), shape=(n, rows)), 0


# --- qmatmul ---------------------------------------------------------------------------------------
@rule("batch", "qmatmul")
def _qmatmul(ctx, nodes, dims, **params):
    """One weight for every example: the vmapped rows of x join its rows (N * B of them) and split off
    again. A weight that differs per example has no kernel: it is refused by name."""
    words, scales, x = nodes
    if dims[0] is not None or dims[1] is not None:
        from poot.errors import NotBuiltError

        raise NotBuiltError("vmap of a quantized product over its weight: the quantized GEMV takes one "
                            "weight; vmap over x only, or dequantize() the weights")
    n = ctx.size
    x = to_front(ctx, x, dims[2])
    b, k = x.aval.shape[1:]
    out = record("qmatmul", (words, scales, record("reshape", (x,), shape=(n * b, k))), **params)
    return record("reshape", (out,), shape=(n, b, out.aval.shape[1])), 0
