"""What GPU schedules share to earn the memory bandwidth: 16-byte accesses and loops that give a thread
several elements.

A thread that handles `vector_width` consecutive elements per step, starting at a multiple of that
width, issues loads and stores the backend merges into one 16-byte access per buffer (NVPTX and AMDGPU
run LLVM's load-store vectorizer; the kernel entry declares every buffer 16-byte aligned, which holds
because each is a whole device allocation). The consecutive elements go to separate accumulators in a
reduction, so their adds do not wait on one another. Nothing here changes what is computed: the order
of every sum is fixed by the shape alone.
"""
from __future__ import annotations

from ..kir.builder import binary, const

VECTOR_BYTES = 16
MAX_VECTOR = 8
UNROLL = 2           # blocks per loop step: two 16-byte loads per buffer in flight per thread


UNKNOWN_CORES = 128  # multiprocessors assumed where the device does not count them (wgpu, vulkan say 1)


def multiprocessors(caps) -> int:
    """The device's multiprocessor count for sizing grids; UNKNOWN_CORES where it reports none or 1."""
    return caps.cores if caps.cores and caps.cores > 1 else UNKNOWN_CORES


def vector_width(dtypes) -> int:
    """Elements per 16-byte access of the narrowest of `dtypes` (bool and 8-bit types capped at 8)."""
    narrowest = min((d.itemsize for d in dtypes), default=4)
    return max(1, min(MAX_VECTOR, VECTOR_BYTES // max(narrowest, 1)))


def lane_loop(ctx, lane, lanes: int, vec: int, j0, j1, body, unroll: int = UNROLL) -> None:
    """Cover positions [j0, j1) with `lanes` threads: steps of `unroll` blocks of lanes * vec positions,
    each thread taking `vec` consecutive ones per block (`body(j, slot)` with slot 0..vec-1; the
    blocks of a step are separate loads, in flight together), then the positions left after the last
    whole step strided by lanes (`body(j, 0)`). j0 must be a multiple of vec for the 16-byte access."""
    kb, idt = ctx.kb, ctx.idt
    j0 = const(j0, idt) if isinstance(j0, int) else j0
    j1 = const(j1, idt) if isinstance(j1, int) else j1
    tail = j0
    if vec > 1:
        block = lanes * vec
        step = block * unroll
        tail = kb.let("jv", binary("add", j0, binary("mul", binary("div", binary("sub", j1, j0), step), step)))
        with kb.for_("jb", binary("add", j0, binary("mul", lane, vec)), tail, step=step, dtype=idt) as jb:
            for u in range(unroll):
                at = binary("add", jb, u * block) if u else jb
                for v in range(vec):
                    body(binary("add", at, v) if v else at, v)
    with kb.for_("jt", binary("add", tail, lane), j1, step=lanes, dtype=idt) as jt:
        body(jt, 0)


def fold_pairwise(values, combine):
    """Combine accumulators pairwise ((a0+a1)+(a2+a3)...): a fixed order, shallower than a chain."""
    values = list(values)
    while len(values) > 1:
        values = [combine(values[k], values[k + 1]) if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]
