"""Splitting a pointwise kernel's output into pieces along concatenate boundaries.

An array stacked from many small parts (`asarray([[a*b for b in row] for a in col])`) is a nest of
concatenates. Computed element by element, each element selects among every part (values.py builds
a select tree): code, compile time and run time grow with the part count for every element. Split
instead, each piece of the output is one part's value over a box of indices, computed directly: the
kernel is one load and store per scalar part, or one loop per larger part, and no select at all.
"""
from __future__ import annotations

from dataclasses import dataclass

from poot.fuse.access import concat_offsets

Box = tuple[tuple[int, int], ...]     # per dimension: [lo, hi)


@dataclass(frozen=True)
class Piece:
    """The output elements `box` equal `var` (a value of the kernel, not a concatenate) at `src`: a
    box of the same extents up to unit dimensions, so both walk their elements in the same order.
    `reads`: ids of the kernel inputs `var` is computed from (all of them, a superset)."""
    box: Box
    var: object
    src: Box
    reads: frozenset


def concat_pieces(root, producer: dict, members: set[int], limit: int) -> list[Piece]:
    """Pieces covering `root`'s shape, split at the boundaries of the concatenates computed inside the
    kernel (`members`), looking through reshapes that only add or drop unit dimensions. At most
    `limit` pieces: past it, `root` over its whole shape as one piece. A walk with its own stack: a
    chain of thousands of appends (`acc = concatenate([acc, x])` in a loop) is no deep recursion."""
    reads: dict[int, frozenset] = {}
    whole = tuple((0, n) for n in root.aval.shape)
    out: list[Piece] = []
    # (value, its box, the same elements as a box of root, root's dimension of each of its dimensions)
    stack = [(root, whole, whole, tuple(range(len(whole))))]
    while stack:
        v, box, at, dims = stack.pop()
        e = producer.get(v.id) if v.id in members else None
        if e is not None and e.op == "concatenate":
            ax = e.params["axis"]
            lo, hi = box[ax]
            parts = []
            for u, off in zip(e.inputs, concat_offsets(e)):
                a, b = max(lo, off), min(hi, off + u.aval.shape[ax])
                if a < b:
                    sub = box[:ax] + ((a - off, b - off),) + box[ax + 1:]
                    r = dims[ax]
                    sub_at = at if r is None else at[:r] + ((at[r][0] + a - lo, at[r][0] + b - lo),) + at[r + 1:]
                    parts.append((u, sub, sub_at, dims))
            stack.extend(reversed(parts))          # popped left to right: pieces in output order
        elif e is not None and e.op == "reshape" and _unit_reshape(v.aval.shape, e.inputs[0].aval.shape):
            x = e.inputs[0]
            stack.append((x, _move(box, v.aval.shape, x.aval.shape), at,
                          _move_dims(dims, v.aval.shape, x.aval.shape)))
        else:
            out.append(Piece(at, v, box, _reads(v, producer, members, reads)))
            if len(out) > limit:
                return [Piece(whole, root, whole, _reads(root, producer, members, reads))]
    return out


def _reads(v, producer, members, memo) -> frozenset:
    """Ids of the kernel inputs below `v` (all of them: a superset of what one box reads)."""
    hit = memo.get(v.id)
    if hit is None:
        out, seen, stack = set(), set(), [v]
        while stack:
            u = stack.pop()
            if u.id in seen:
                continue
            seen.add(u.id)
            e = producer.get(u.id)
            if e is None or u.id not in members:
                out.add(u.id)
            else:
                stack.extend(e.inputs)
        hit = memo[v.id] = frozenset(out)
    return hit


def _unit_reshape(a, b) -> bool:
    """Whether shapes `a` and `b` differ only by dimensions of size 1."""
    return [n for n in a if n != 1] == [n for n in b if n != 1]


def _move(box: Box, src_shape, dst_shape) -> Box:
    """`box` in `src_shape` as a box of `dst_shape` (the two differ only by unit dimensions)."""
    ranges = iter([r for r, n in zip(box, src_shape) if n != 1])
    return tuple((0, 1) if n == 1 else next(ranges) for n in dst_shape)


def _move_dims(dims: tuple, src_shape, dst_shape) -> tuple:
    """`dims` (one entry per dimension of `src_shape`) for `dst_shape`: unit dimensions map to None."""
    kept = iter([d for d, n in zip(dims, src_shape) if n != 1])
    return tuple(None if n == 1 else next(kept) for n in dst_shape)
