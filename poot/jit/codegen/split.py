"""Reduction schedules for the shapes one-row-per-workgroup serves badly.

- Split: few rows, each very long (`x.sum()` over 1e8 elements). The row is cut into P pieces reduced
  in parallel into a temporary of partials, then a second launch combines the P partials per row and
  applies the epilogue. Only for reductions that do not read one another and steps without row-wide
  results. `choose` decides for CPUs and GPUs; GPUs have their own kernels (gpu_split.py).
- Columns (CPU): the reduced axes do not hold the innermost axis (`x.sum(axis=0)`). A workgroup owns a
  block of consecutive rows and walks the reduced positions in the outer loop, keeping the block's
  accumulators in a temporary, so the inner loop runs over contiguous memory and vectorizes. With
  fewer blocks than cores to feed, the reduced positions are cut into pieces too (partials, then a
  combine launch).
"""
from __future__ import annotations

import math

from poot.fuse.indexing import ravel, unravel
from poot.jit.kir.builder import binary, cast, const, select
from poot.jit.kir.model import Index, Load
from poot.jit.codegen.common import GPU_WORKGROUP, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.codegen.gpu_lanes import fold_pairwise
from poot.jit.codegen.rows import Reduction, accumulate, full_index, layout
from poot.jit.codegen.streams import STREAMS, accumulate_parts
from poot.jit.llvm.targets import KernelStyle

SPLIT_PIECE_CPU = 1 << 16        # elements per partial on the CPU
SPLIT_PIECE_GPU = GPU_WORKGROUP * 64
MAX_PIECES = 4096                # partials per row at most
COLUMN_BLOCK = 8192              # kept positions per CPU workgroup in the column schedule: whole
                                 # rows of a 4096-wide array are read in order (blocks of 256 that
                                 # stride over the rows measured ~1.7x slower on one core)
COLUMN_PARALLEL = 8              # workgroups the column schedule aims for, splitting K if needed
COLUMN_MIN_PIECE = 64            # reduced positions per piece at least


def independent(step, plan) -> bool:
    """No reduction of the step reads another one."""
    reds = {e.out.id for e in step.reductions}
    leaves = {v.id for v in step.inputs}
    for e in step.reductions:
        stack, seen = [e.inputs[0]], set()
        while stack:
            v = stack.pop()
            if v.id in seen or v.id in leaves:
                continue
            seen.add(v.id)
            if v.id in reds:
                return False
            p = plan.producer.get(v.id)
            if p is not None:
                stack.extend(p.inputs)
    return True


def choose(step, plan, style: KernelStyle) -> str:
    """'split', 'columns' or 'rows' for a row step."""
    shape, axes, _, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    row_wide = any(r.aval.shape == shape for r in step.outputs)
    piece = SPLIT_PIECE_CPU if style is KernelStyle.CPU else SPLIT_PIECE_GPU
    if not row_wide and K >= 2 * piece and nrows < (16 if style is KernelStyle.CPU else 512) \
            and independent(step, plan):
        return "split"
    if style is KernelStyle.CPU and (len(shape) - 1) not in axes and nrows >= 8 and K > 1:
        return "columns"
    return "rows"


def generate_split(step, plan, style: KernelStyle) -> StepCode:
    """The CPU split: a workgroup of one thread per (row, piece), then one thread per row combining."""
    shape, axes, kept, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    chunk = ceil_div(K, min(ceil_div(K, SPLIT_PIECE_CPU), MAX_PIECES))
    P = ceil_div(K, chunk)
    code = StepCode()
    # launch 1: partials[row * P + piece]
    part = KernelContext(step, plan, style, name=step.name + "_part", with_outputs=False)
    kb, gen = part.kb, part.gen
    reds = [Reduction(e, part, True) for e in step.reductions]
    slots = _temps(part, reds, code, nrows * P)
    g = kb.let("g", cast(Index("group", 0), part.idt))
    row = kb.let("row", binary("div", g, P))
    j0 = kb.let("j0", binary("mul", binary("rem", g, P), chunk))
    j1 = kb.let("j1", binary("min", binary("add", j0, chunk), const(K, part.idt)))
    row_idx = unravel(part.coord("row", nrows, row), kept_shape)
    for red, (vals, idxs) in zip(reds, slots):
        if red.is_arg:
            acc, best = accumulate(part, red, row_idx, j0, j1, 1)
        else:
            acc, best = accumulate_parts(part, red, row_idx, j0, j1), None
        kb.store(vals, g, acc)
        if idxs:
            kb.store(idxs, g, best)
    code.launches.append(Launch(part.build(), part.bindings, groups_for(nrows * P)))
    # launch 2: combine the partials of each row, then the epilogue
    comb = KernelContext(step, plan, style, name=step.name + "_comb")
    kb, gen = comb.kb, comb.gen
    rslots = [(comb.temp_buffer(f"p{k}", red.acc, 2 * k), comb.temp_buffer(f"pi{k}", comb.idt, 2 * k + 1)
               if red.is_arg else None) for k, red in enumerate(reds)]
    row = comb.thread()
    row_form = comb.coord("row", nrows, row)
    for red, (vals, idxs) in zip(reds, rslots):
        red = Reduction(red.e, comb, False)
        acc, best = fold_partials(comb, red, vals, idxs, 0, P, 1, lambda p: binary("add", binary("mul", row, P), p))
        gen.reduced[red.e.out.id] = kb.let("red", red.finalize(acc, best))
    for name, r in zip(comb.out_names, step.outputs):
        kb.store(name, row, gen.value(r, unravel(row_form, r.aval.shape)))
    code.launches.append(Launch(comb.build(), comb.bindings, groups_for(nrows)))
    return code


def fold_partials(ctx, red, vals, idxs, start, stop, step: int, at):
    """Fold the partials vals[at(p)] for p in range(start, stop, step) into fresh accumulators, in that
    order (arg-reductions take their index from idxs[at(p)]; the first best wins ties)."""
    kb = ctx.kb
    acc = kb.local("acc", red.acc, red.identity())
    best = kb.local("arg", ctx.idt, const(0, ctx.idt)) if red.is_arg else None
    with kb.for_("p", start, stop, step=step, dtype=ctx.idt) as p:
        i = at(p)
        v = kb.let("v", Load(vals, i, red.acc))
        if red.is_arg:
            take = kb.let("take", red.better(acc, v))
            kb.assign(acc, select(take, v, acc))
            kb.assign(best, select(take, Load(idxs, i, ctx.idt), best))
        else:
            kb.assign(acc, red.combine(acc, v))
    return acc, best


def _temps(ctx, reds, code: StepCode, n: int):
    """Declare (value, index) temporaries per reduction; temp numbers are 2k and 2k+1."""
    slots = []
    for k, red in enumerate(reds):
        while len(code.temps) < 2 * k + 2:
            code.temps.append(0)
        code.temps[2 * k] = n * red.acc.itemsize
        vals = ctx.temp_buffer(f"t{k}", red.acc, 2 * k)
        idxs = None
        if red.is_arg:
            code.temps[2 * k + 1] = n * ctx.idt.itemsize
            idxs = ctx.temp_buffer(f"ti{k}", ctx.idt, 2 * k + 1)
        slots.append((vals, idxs))
    return slots


def generate_columns(step, plan, style: KernelStyle) -> StepCode:
    """One launch of column blocks over all K reduced positions or, when there are few blocks,
    independent reductions and no row-wide results, P launches' worth of (block, piece) workgroups
    writing partial accumulators, then a launch combining the P partials per column. P depends on
    the shape only (never on the core count), so results are the same on every machine."""
    shape, axes, kept, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    block = min(nrows, COLUMN_BLOCK)
    nblocks = ceil_div(nrows, block)
    row_wide = any(v.aval.shape == shape for v in step.outputs)
    pieces = 1
    if nblocks < COLUMN_PARALLEL and not row_wide and independent(step, plan):
        pieces = max(1, min(ceil_div(COLUMN_PARALLEL, nblocks), K // COLUMN_MIN_PIECE))
    chunk = ceil_div(K, pieces)
    pieces = ceil_div(K, chunk)
    code = StepCode()
    ctx = KernelContext(step, plan, style, name=step.name + ("_part" if pieces > 1 else ""),
                        with_outputs=pieces == 1)
    kb, gen = ctx.kb, ctx.gen
    reds = [Reduction(e, ctx, False) for e in step.reductions]
    slots = _temps(ctx, reds, code, nrows * pieces)
    g = ctx.thread()
    blk = kb.let("blk", binary("rem", g, nblocks)) if pieces > 1 else g
    piece = kb.let("piece", binary("div", g, nblocks)) if pieces > 1 else None
    r0 = kb.let("r0", binary("mul", blk, block))
    r1 = kb.let("r1", binary("min", binary("add", r0, block), const(nrows, ctx.idt)))
    j0 = kb.let("j0", binary("mul", piece, chunk)) if pieces > 1 else const(0, ctx.idt)
    j1 = kb.let("j1", binary("min", binary("add", j0, chunk), const(K, ctx.idt))) if pieces > 1 else const(K, ctx.idt)
    at0 = kb.let("at0", binary("mul", piece, nrows)) if pieces > 1 else None   # this piece's partials
    r = kb.local("r", ctx.idt)
    row_form = ctx.coord("row", nrows, r)
    row_idx = unravel(row_form, kept_shape)
    slot = (lambda: binary("add", at0, r)) if pieces > 1 else (lambda: r)

    def rows_loop():
        return kb.for_(r, r0, r1)

    for red, (vals, idxs) in zip(reds, slots):
        with rows_loop():
            kb.store(vals, slot(), red.identity())
            if idxs:
                kb.store(idxs, slot(), const(0, ctx.idt))
        def fold_pass(start, stop, width: int):
            """Fold positions [start, stop), `width` per pass over the block (streams.py)."""
            with kb.for_("j", start, stop, step=width, dtype=ctx.idt) as j:
                gen.push()
                red_idxs = [unravel(ctx.coord(f"j{s}", K, binary("add", j, s) if s else j), red_shape)
                            for s in range(width)]
                with rows_loop():
                    gen.push()
                    vs = [cast(gen.value(red.e.inputs[0], full_index(shape, axes, kept, row_idx, ri)), red.acc)
                          for ri in red_idxs]
                    v = kb.let("v", fold_pairwise(vs, red.combine) if width > 1 else vs[0])
                    at = slot()
                    cur = kb.let("cur", Load(vals, at, red.acc))
                    if red.is_arg:
                        take = kb.let("take", red.better(cur, v))
                        kb.store(vals, at, select(take, v, cur))
                        kb.store(idxs, at, select(take, j, Load(idxs, at, ctx.idt)))
                    else:
                        kb.store(vals, at, red.combine(cur, v))
                    gen.pop()
                gen.pop()

        if red.is_arg:
            fold_pass(j0, j1, 1)
        else:
            jm = kb.let("jm", binary("add", j0, binary("mul", binary("div", binary("sub", j1, j0), STREAMS),
                                                             STREAMS)))
            fold_pass(j0, jm, STREAMS)
            fold_pass(jm, j1, 1)
        if pieces == 1:
            gen.reduced[red.e.out.id] = red.finalize(Load(vals, r, red.acc), Load(idxs, r, ctx.idt) if idxs else None)
    if pieces == 1:
        _column_results(ctx, r, row_form, rows_loop, shape, axes, kept, row_idx, red_shape, K)
        code.launches.append(Launch(ctx.build(), ctx.bindings, groups_for(nblocks)))
        return code
    code.launches.append(Launch(ctx.build(), ctx.bindings, groups_for(nblocks * pieces)))
    # the combine launch: partials of pieces 1.. folded into piece 0's, in piece order (so an
    # arg-reduction keeps the first occurrence), then the results
    comb = KernelContext(step, plan, style, name=step.name + "_comb")
    kb, gen = comb.kb, comb.gen
    blk = comb.thread()
    r0 = kb.let("r0", binary("mul", blk, block))
    r1 = kb.let("r1", binary("min", binary("add", r0, block), const(nrows, comb.idt)))
    r = kb.local("r", comb.idt)
    row_form = comb.coord("row", nrows, r)

    def rows_loop():
        return kb.for_(r, r0, r1)

    for k, red in enumerate(reds):
        red = Reduction(red.e, comb, False)
        vals = comb.temp_buffer(f"p{k}", red.acc, 2 * k)
        idxs = comb.temp_buffer(f"pi{k}", comb.idt, 2 * k + 1) if red.is_arg else None
        with kb.for_("p", 1, pieces, dtype=comb.idt) as p:
            with rows_loop():
                at = binary("add", binary("mul", p, nrows), r)
                cur = kb.let("cur", Load(vals, r, red.acc))
                v = kb.let("v", Load(vals, at, red.acc))
                if red.is_arg:
                    take = kb.let("take", red.better(cur, v))
                    kb.store(vals, r, select(take, v, cur))
                    kb.store(idxs, r, select(take, Load(idxs, at, comb.idt), Load(idxs, r, comb.idt)))
                else:
                    kb.store(vals, r, red.combine(cur, v))
        gen.reduced[red.e.out.id] = red.finalize(Load(vals, r, red.acc), Load(idxs, r, comb.idt) if idxs else None)
    _column_results(comb, r, row_form, rows_loop, shape, axes, kept, unravel(row_form, kept_shape), red_shape, K)
    code.launches.append(Launch(comb.build(), comb.bindings, groups_for(nblocks)))
    return code


def _column_results(ctx, r, row_form, rows_loop, shape, axes, kept, row_idx, red_shape, K) -> None:
    """Store the step's outputs for the block's columns, the reductions being in `gen.reduced`."""
    kb, gen, step = ctx.kb, ctx.gen, ctx.step
    row_roots = [(n, v) for n, v in zip(ctx.out_names, step.outputs) if v.aval.shape != shape]
    full_roots = [(n, v) for n, v in zip(ctx.out_names, step.outputs) if v.aval.shape == shape]
    if row_roots:
        with rows_loop():
            gen.push()
            for name, v in row_roots:
                kb.store(name, r, gen.value(v, unravel(row_form, v.aval.shape)))
            gen.pop()
    if full_roots:
        with kb.for_("k", 0, K, dtype=ctx.idt) as k:
            gen.push()
            red_idx = unravel(ctx.coord("k", K, k), red_shape)
            with rows_loop():
                gen.push()
                idx = full_index(shape, axes, kept, row_idx, red_idx)
                at = gen.index(ravel(idx, shape))
                for name, v in full_roots:
                    kb.store(name, at, gen.value(v, idx))
                gen.pop()
            gen.pop()
