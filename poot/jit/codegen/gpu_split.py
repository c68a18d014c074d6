"""GPU split reductions: few rows, each very long (`x.sum()` over 256M elements; split.choose picks it).

Launch 1: each row is cut into P pieces of whole loop steps (P from the shape alone), one workgroup
per (row, piece); its threads walk the piece `vector_width` consecutive elements at a time into that
many accumulators (gpu_lanes.lane_loop: 16-byte loads, two per input in flight), fold them pairwise, and
combine the 256 partials (warp shuffles, then one shared round, where gpu_lanes.shuffles allows; else a
shared-memory tree). Arg-reductions keep one element per step (the index rule).
Launch 2: one workgroup per row combines its P partials, the threads striding over them, then through
shared memory, and thread 0 applies the epilogue. (One thread walking the 4096 partials, one L2 read after
another, was the slow part of the 256M-element sum: 0.348 ms before this and the 16-byte loads, 0.256 after;
at most MAX_PIECES_GPU partials per row since.)
The order of every combine is fixed, so a result is the same on every run and every GPU.
"""
from __future__ import annotations

import math

from poot.fuse.indexing import unravel
from poot.jit.kir.builder import binary, cast, const
from poot.jit.kir.model import Index
from poot.jit.codegen.common import GPU_WORKGROUP, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.codegen.gpu_lanes import UNROLL, shuffles, vector_width
from poot.jit.codegen.rows import Reduction, accumulate, lane_partial, layout, workgroup_combine
from poot.jit.codegen.split import SPLIT_PIECE_GPU, _temps, fold_partials
from poot.jit.llvm.targets import KernelStyle

# partials per row at most: 512 pieces of a 64M-element sum on the H200 took wgpu 0.076 ms against 0.091 with
# 4096 (raw Vulkan 0.078 / 0.080; bench_reductions --split-pieces): fewer partials shorten the combine launch
MAX_PIECES_GPU = 512


def generate_gpu_split(step, plan, caps=None) -> StepCode:
    shape, axes, kept, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    if nrows == 0:
        return StepCode()
    vec = vector_width([v.aval.dtype for v in step.inputs])
    block = GPU_WORKGROUP * vec * UNROLL
    chunk = ceil_div(ceil_div(K, min(ceil_div(K, SPLIT_PIECE_GPU), MAX_PIECES_GPU)), block) * block
    P = ceil_div(K, chunk)
    code = StepCode()
    part = KernelContext(step, plan, KernelStyle.GPU, name=step.name + "_part", with_outputs=False)
    kb = part.kb
    reds = [Reduction(e, part, False) for e in step.reductions]
    slots = _temps(part, reds, code, nrows * P)
    g = kb.let("g", cast(Index("group", 0), part.idt))
    row = kb.let("row", binary("div", g, P))
    j0 = kb.let("j0", binary("mul", binary("rem", g, P), chunk))
    j1 = kb.let("j1", binary("min", binary("add", j0, chunk), const(K, part.idt)))
    row_idx = unravel(part.coord("row", nrows, row), kept_shape)
    lane = kb.let("lane", cast(Index("local", 0), part.idt))
    shuffle = shuffles(caps)
    for red, (vals, idxs) in zip(reds, slots):
        if red.is_arg:
            acc, best = accumulate(part, red, row_idx, binary("add", j0, lane), j1, GPU_WORKGROUP)
        else:
            acc, best = lane_partial(part, red, row_idx, lane, GPU_WORKGROUP, vec, j0, j1), None
        acc, best = workgroup_combine(part, red, acc, best, lane, GPU_WORKGROUP, shuffle)
        with kb.if_(binary("eq", lane, 0)):
            kb.store(vals, g, acc)
            if idxs:
                kb.store(idxs, g, best)
    code.launches.append(Launch(part.build(), part.bindings, groups_for(nrows * P)))

    comb = KernelContext(step, plan, KernelStyle.GPU, name=step.name + "_comb")
    kb, gen = comb.kb, comb.gen
    row = kb.let("row", cast(Index("group", 0), comb.idt))
    lane = kb.let("lane", cast(Index("local", 0), comb.idt))
    row_form = comb.coord("row", nrows, row)
    for k, red in enumerate(reds):
        red = Reduction(red.e, comb, False)
        vals = comb.temp_buffer(f"p{k}", red.acc, 2 * k)
        idxs = comb.temp_buffer(f"pi{k}", comb.idt, 2 * k + 1) if red.is_arg else None
        acc, best = fold_partials(comb, red, vals, idxs, lane, P, GPU_WORKGROUP,   # each thread in piece order
                                  lambda p: binary("add", binary("mul", row, P), p))
        total, where = workgroup_combine(comb, red, acc, best, lane, GPU_WORKGROUP, shuffle)
        gen.reduced[red.e.out.id] = kb.let("red", red.finalize(total, where))
    with kb.if_(binary("eq", lane, 0)):
        for name, r in zip(comb.out_names, step.outputs):
            kb.store(name, row, gen.value(r, unravel(row_form, r.aval.shape)))
    code.launches.append(Launch(comb.build(), comb.bindings, groups_for(nrows)))
    return code
