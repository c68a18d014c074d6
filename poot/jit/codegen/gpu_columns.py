"""GPU column reductions: the reduced axes leave the innermost axis kept (`x.sum(axis=0)` of a matrix).

The row schedule gives each thread one output and walks all K reduced positions; neighbouring threads
read neighbouring elements, so loads coalesce, but a 16384 x 16384 sum over axis 0 then has only 16384
threads: 64 workgroups on a GPU of 132 multiprocessors, a few warps each, far too few loads in flight
to reach the memory bandwidth. Here the K positions are cut into P pieces: launch 1 runs one thread per
(piece, output) -- still coalesced along the outputs -- and writes partial accumulators to a temporary
laid out [P, outputs]; launch 2 combines the P partials of each output (a small read) and applies the
epilogue. P depends on the shape only (never on the device), so results are the same on every GPU.
Only for independent reductions without row-wide results; anything else keeps the row schedule.
"""
from __future__ import annotations

import math

from poot.fuse.indexing import unravel
from poot.jit.kir.builder import binary, const
from poot.jit.codegen.common import GPU_WORKGROUP, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.codegen.rows import Reduction, accumulate, layout
from poot.jit.codegen.split import fold_partials
from poot.jit.llvm.targets import KernelStyle

TARGET_THREADS = 1 << 18     # threads launch 1 aims for: enough loads in flight on a large GPU
MIN_PIECE = 64               # reduced positions per piece at least


def pieces_for(step, plan) -> int:
    """How many pieces a GPU column reduction of `step` is cut into; 1 where this schedule does not apply."""
    from poot.jit.codegen.split import independent

    shape, axes, _, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    if not shape or (len(shape) - 1) in axes or nrows == 0 or nrows >= TARGET_THREADS:
        return 1
    if any(v.aval.shape == shape for v in step.outputs) or not independent(step, plan):
        return 1
    want = min(ceil_div(TARGET_THREADS, nrows), K // MIN_PIECE)
    return ceil_div(K, ceil_div(K, want)) if want > 1 else 1


def generate_gpu_columns(step, plan, pieces: int) -> StepCode:
    shape, axes, kept, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    chunk = ceil_div(K, pieces)
    code = StepCode()
    part = KernelContext(step, plan, KernelStyle.GPU, name=step.name + "_cols", with_outputs=False,
                         extra_sizes=(nrows * pieces,))
    kb = part.kb
    reds = [Reduction(e, part, False) for e in step.reductions]
    slots = []
    for k, red in enumerate(reds):
        code.temps += [nrows * pieces * red.acc.itemsize, nrows * pieces * part.idt.itemsize if red.is_arg else 0]
        vals = part.temp_buffer(f"t{k}", red.acc, 2 * k)
        slots.append((vals, part.temp_buffer(f"ti{k}", part.idt, 2 * k + 1) if red.is_arg else None))
    t = part.thread()
    with kb.if_(binary("lt", t, nrows * pieces)):
        col = kb.let("col", binary("rem", t, nrows))
        piece = kb.let("piece", binary("div", t, nrows))
        j0 = kb.let("j0", binary("mul", piece, chunk))
        j1 = kb.let("j1", binary("min", binary("add", j0, chunk), const(K, part.idt)))
        row_idx = unravel(part.coord("row", nrows, col), kept_shape)
        for red, (vals, idxs) in zip(reds, slots):
            acc, best = accumulate(part, red, row_idx, j0, j1, 1)
            kb.store(vals, t, acc)
            if idxs:
                kb.store(idxs, t, best)
    code.launches.append(Launch(part.build(), part.bindings, groups_for(ceil_div(nrows * pieces, GPU_WORKGROUP))))

    comb = KernelContext(step, plan, KernelStyle.GPU, name=step.name + "_comb", extra_sizes=(nrows * pieces,))
    kb, gen = comb.kb, comb.gen
    rslots = [(comb.temp_buffer(f"p{k}", red.acc, 2 * k),
               comb.temp_buffer(f"pi{k}", comb.idt, 2 * k + 1) if red.is_arg else None) for k, red in enumerate(reds)]
    row = comb.thread()
    with kb.if_(binary("lt", row, nrows)):
        row_form = comb.coord("row", nrows, row)
        for red, (vals, idxs) in zip(reds, rslots):
            red = Reduction(red.e, comb, False)
            acc, best = fold_partials(comb, red, vals, idxs, 0, pieces, 1,   # pieces in order: the first best wins ties
                                      lambda p: binary("add", binary("mul", p, nrows), row))
            gen.reduced[red.e.out.id] = kb.let("red", red.finalize(acc, best))
        for name, r in zip(comb.out_names, step.outputs):
            kb.store(name, row, gen.value(r, unravel(row_form, r.aval.shape)))
    code.launches.append(Launch(comb.build(), comb.bindings, groups_for(ceil_div(nrows, GPU_WORKGROUP))))
    return code
