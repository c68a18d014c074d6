"""The machinery under `pt.vmap`: batched values, the graph interpreter and the helpers rules share.

A batched value is a pair `(node, dim)`: a lazy node and the axis of it that runs over the batch, or
None when the value is the same for every batch element (it was never touched by a mapped input).
`BatchContext.eval_graph` runs a traced Graph on such pairs: each equation goes to the batching rule
of its primitive (`rule(ctx, nodes, dims, **params) -> (node, dim)`, JAX's convention), except that an
equation whose operands are all unbatched is recorded unchanged. Rules record plain primitives with
`lazy.record`, so the result is an ordinary lazy graph: it realizes eagerly, traces under `@pt.jit`,
and is traced again by an enclosing vmap.

Invariant kept by every rule: the output is batched whenever an operand is. `batched_outputs` relies
on it to tell, before running a loop body, which of its results will be batched.
"""
from __future__ import annotations

from poot.errors import PootError
from poot.graph import Graph
from poot.trace import lazy


class BatchingError(PootError):
    """A function cannot be vectorized by `pt.vmap` as written (the message says which operation and why)."""


class BatchContext:
    """One vmap application: the batch size, the device new constants go to, the rule table and
    memo tables, so that a multi-result primitive (a control construct, eigh, svd...) is batched
    once for all its result equations and shared operands are moved once."""

    def __init__(self, size: int, device: str, rules: dict, unbatchable: dict, axis_name=None):
        self.size, self.device, self.rules, self.unbatchable = size, device, rules, unbatchable
        self.axis_name = axis_name      # the name collectives give this batch axis (None: unnamed)
        self.memo: dict = {}

    def eval_graph(self, graph: Graph, values: list[tuple]) -> list[tuple]:
        """The batched outputs of `graph` given a batched value per input."""
        env = {v.id: val for v, val in zip(graph.inputs, values)}
        for eqn in graph.eqns:
            ins = [env[v.id] for v in eqn.inputs]
            nodes = tuple(n for n, _ in ins)
            dims = tuple(d for _, d in ins)
            # a collective over this vmap's named axis (or a loop or cond holding one) goes to its rule
            # even on unbatched operands: psum of a value every example shares is that value times
            # the batch size
            if all(d is None for d in dims) and not (self.axis_name is not None and names_axis(eqn, self.axis_name)):
                env[eqn.out.id] = (lazy.record(eqn.op, nodes, eqn.params, self.device if not nodes else None),
                                   None)
                continue
            rule = self.rules.get(eqn.op)
            if rule is None:
                reason = self.unbatchable.get(eqn.op, "no batching rule is written for it")
                raise BatchingError(f"vmap: the primitive '{eqn.op}' (recorded at {eqn.where or '<unknown>'}) "
                                    f"cannot be batched: {reason}")
            out = rule(self, nodes, dims, **eqn.params)
            env[eqn.out.id] = out
        return [env[v.id] for v in graph.outputs]

    def memoized(self, key, compute, keep):
        """`compute()` once per `key` within this vmap application. Keys hold node ids, so the memo
        also holds `keep` (the objects whose ids are in the key): an id is never reused meanwhile."""
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = (keep, compute())
        return hit[1]


def names_axis(eqn, axis_name) -> bool:
    """Whether equation `eqn` is a collective over the vmap axis `axis_name`, or a control construct
    whose bodies hold one."""
    params = eqn.params
    if not params:
        return False
    if params.get("axis_name") == axis_name:
        return True
    region = params.get("region")
    return region is not None and any(names_axis(e, axis_name) for g in region.graphs for e in g.eqns)


def batched_outputs(graph: Graph, flags: list[bool]) -> list[bool]:
    """Which outputs of `graph` depend on a batched input (`flags`: one per input): an upper bound
    on which ones `eval_graph` returns batched (see the module invariant)."""
    env = {v.id: f for v, f in zip(graph.inputs, flags)}
    for eqn in graph.eqns:
        env[eqn.out.id] = any(env[v.id] for v in eqn.inputs)
    return [env[v.id] for v in graph.outputs]


# --- moving batch axes -------------------------------------------------------------------------------
def record(op: str, nodes: tuple, **params) -> lazy.Node:
    return lazy.record(op, tuple(nodes), params)


def move_axis(node: lazy.Node, src: int, dst: int) -> lazy.Node:
    """`node` with axis `src` moved to position `dst` (a transpose; nothing when they are equal)."""
    if src == dst:
        return node
    perm = [i for i in range(node.aval.ndim) if i != src]
    perm.insert(dst, src)
    return record("transpose", (node,), perm=tuple(perm))


def to_front(ctx: BatchContext, node: lazy.Node, dim: int | None) -> lazy.Node:
    """A batched value with its batch axis first; an unbatched one broadcast to the batch size
    (every batch element the same), so the result always has the batch axis at 0."""
    if dim == 0:
        return node
    if dim is None:
        return ctx.memoized(("bcast", id(node)), lambda: broadcast_batch(ctx, node), node)
    return ctx.memoized(("front", id(node), dim), lambda: move_axis(node, dim, 0), node)


def broadcast_batch(ctx: BatchContext, node: lazy.Node) -> lazy.Node:
    return record("broadcast", (node,), shape=(ctx.size,) + node.aval.shape)


def front_if_batched(ctx: BatchContext, node: lazy.Node, dim: int | None) -> tuple[lazy.Node, int | None]:
    return (node, None) if dim is None else (to_front(ctx, node, dim), 0)


def force(ctx: BatchContext, node: lazy.Node, dim: int | None, batched: bool) -> lazy.Node:
    """A value as a loop carry or branch result needs it: front-batched when `batched` (broadcast if
    it happened to be unbatched), else as is (then it is unbatched: see the module invariant)."""
    return to_front(ctx, node, dim) if batched else node


def with_rank(node: lazy.Node, rank: int) -> lazy.Node:
    """A front-batched `(B, *s)` node reshaped to `(B, 1, ..., 1, *s)` with `rank` axes after the
    batch axis, so that NumPy broadcasting lines its example axes up with unbatched operands'."""
    shape = node.aval.shape
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return node
    return record("reshape", (node,), shape=shape[:1] + (1,) * missing + shape[1:])


def example_ndim(node: lazy.Node, dim: int | None) -> int:
    """The number of axes one batch element has."""
    return node.aval.ndim - (dim is not None)


def place(ctx: BatchContext, node: lazy.Node, dim: int | None, axis: int | None, what: str) -> lazy.Node:
    """A batched result with its batch axis at `axis` (out_axes); an unbatched one is broadcast
    along a new `axis`, or returned as is when `axis` is None."""
    if axis is None:
        if dim is not None:
            raise BatchingError(f"vmap: {what} depends on the mapped inputs, so it has a batch axis, but "
                                f"out_axes is None for it; give it an integer out_axes")
        return node
    ndim = example_ndim(node, dim) + 1
    if not -ndim <= axis < ndim:
        raise BatchingError(f"vmap: out_axes {axis} is out of range for {what}, which has {ndim} axes "
                            f"counting the batch axis")
    axis %= ndim
    if dim is None:
        node = broadcast_batch(ctx, node)
        dim = 0
    return move_axis(node, dim, axis)
