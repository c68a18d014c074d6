"""Batching rules of the host primitives (poot/graph/host.py, host_numpy.py): sorting, searching,
the fixed-size data-dependent ops and the linear-algebra factorizations.

The factorizations already take any number of leading batch axes, so batching them is putting the
batch axis first. Ops whose NumPy rule has no batch axis (searchsorted over a batched table, unique,
nonzero, histogram) are batched example by example: one host equation per batch element, stacked.
They run as host steps anyway (NumPy on the host), so this is their cost model, not a slower path.
Each rule is registered as the op's `batch` rule in the op registry when this module is imported.
"""
from __future__ import annotations

from poot.graph import OPS, Aval
from poot.graph import kernel_call as _kernel_call  # noqa: F401  (declares "kernel_call")
from poot.graph.registry import get
from poot.trace import lazy
from poot.transforms.batching_core import BatchContext, record, to_front
from poot.transforms.batching_rules import along_axis


def leading_batch(op: str):
    """Every operand batched at the front (an unbatched one broadcast): the op's own batch axes."""
    def rule(ctx: BatchContext, nodes, dims, **params):
        return record(op, [to_front(ctx, n, d) for n, d in zip(nodes, dims)], **params), 0
    return rule


def _example(ctx: BatchContext, node, dim: int, b: int):
    """Batch element `b` of a batched value (shared by the result equations of one op, so the
    program still computes a multi-result op once per element)."""
    def compute():
        shape = node.aval.shape
        starts = tuple(b if i == dim else 0 for i in range(len(shape)))
        sizes = tuple(1 if i == dim else d for i, d in enumerate(shape))
        part = record("slice", (node,), starts=starts, steps=(1,) * len(shape), sizes=sizes)
        return record("reshape", (part,), shape=shape[:dim] + shape[dim + 1:])
    return ctx.memoized(("example", id(node), dim, b), compute, node)


def per_example(op: str):
    def rule(ctx: BatchContext, nodes, dims, **params):
        if ctx.size == 0:           # no example to compute: an empty batch of the example's type
            example = [Aval(n.aval.shape[:d] + n.aval.shape[d + 1:], n.aval.dtype) if d is not None else n.aval
                       for n, d in zip(nodes, dims)]
            aval = OPS[op].shape_rule(example, **params)
            return lazy.constant(0, aval.dtype, ctx.device, (0,) + aval.shape), 0
        parts = []
        for b in range(ctx.size):
            ins = [n if d is None else _example(ctx, n, d, b) for n, d in zip(nodes, dims)]
            out = record(op, ins, **params)
            parts.append(record("reshape", (out,), shape=(1,) + out.aval.shape))
        if len(parts) == 1:
            return parts[0], 0
        return record("concatenate", parts, axis=0), 0
    return rule


def _searchsorted(ctx, nodes, dims, side):
    (a, v), (da, dv) = nodes, dims
    if da is None:          # one sorted table: the values' batch axis is the result's
        return record("searchsorted", (a, v), side=side), dv
    return per_example("searchsorted")(ctx, nodes, dims, side=side)


_LINALG = ("eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "cholesky", "inv", "det", "slogdet", "solve",
           "pinv")
# a @pt.kernel call (pt.kernel_call) sees flat buffers: it has no batch axis of its own
_PER_EXAMPLE = ("unique", "nonzero", "histogram", "kernel_call")


get("sort").register(batch=along_axis("sort"))
get("argsort").register(batch=along_axis("argsort"))
get("searchsorted").register(batch=_searchsorted)
for _name in _LINALG:
    get(_name).register(batch=leading_batch(_name))
for _name in _PER_EXAMPLE:
    get(_name).register(batch=per_example(_name))


def _fft(ctx: BatchContext, nodes, dims, axes, **params):
    """The transform's axes shift past the batch axis, put first."""
    (x,), (d,) = nodes, dims
    return record("fft", [to_front(ctx, x, d)], axes=tuple(a + 1 for a in axes), **params), 0


get("fft").register(batch=_fft)
# the complex linear algebra wraps the factorizations above, which take leading batch axes
get("host_complex").register(batch=leading_batch("host_complex"))
