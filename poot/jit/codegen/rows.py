"""Row kernels: reductions over axes A of a shape S computed once per row (the kept coordinates),
then the roots: per-row results (a reduction with its epilogue) and row-wide results (softmax,
layer_norm) written in a pass over the row, recomputing the cheap prologue instead of storing it (on
the CPU a transcendental one is stored into the output by the reduction's pass instead: `stashes`).

CPU: one workgroup of one thread per row; the reduction loops accumulate with reassociable ops so
LLVM vectorizes them. GPU: when A holds the innermost axis, one workgroup per row, its threads
striding over the row and combining partials by warp shuffles and one shared round where the target
has shuffles (gpu_lanes.shuffles), else a shared-memory tree; otherwise one thread per row (the
rows are then the contiguous axis, so neighbouring threads read neighbouring elements).
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.fuse.indexing import ravel, unravel
from poot.graph.ops import OPS
from poot.jit.kir.builder import binary, cast, const, select, unary
from poot.jit.kir.model import Access, Index, Load
from poot.jit.codegen.common import GPU_WORKGROUP, KernelContext, Launch, StepCode, acc_dtype, ceil_div, groups_for
from poot.jit.codegen.gpu_lanes import (VECTOR_BYTES, WARP, access_bytes, butterfly, fold_pairwise, lane_loop, shuffles,
                                       vector_width)
from poot.jit.llvm.targets import KernelStyle


class Reduction:
    """How one reduction equation accumulates: identity, combine, finalize."""

    def __init__(self, e, ctx: KernelContext, reassoc: bool):
        self.e, self.ctx = e, ctx
        self.op = e.op
        self.src = e.inputs[0].aval.dtype
        self.out = e.out.aval.dtype
        self.is_arg = OPS[e.op].kind == "argreduce"
        self.acc = self.src if self.is_arg else acc_dtype(self.src)
        self.reassoc = reassoc and dt.is_float(self.acc)

    def identity(self):
        d, op = self.acc, self.op
        if op == "reduce_sum":
            return const(False if d is dt.bool_ else 0, d)
        if op == "reduce_prod":
            return const(True if d is dt.bool_ else 1, d)
        big = op in ("reduce_max", "argmax")
        if d is dt.bool_:
            return const(not big, d)
        if dt.is_float(d):
            return const(float("-inf") if big else float("inf"), d)
        info = dt.iinfo(d)
        return const(info.min if big else info.max, d)

    def combine(self, acc, v):
        """acc op v (not for arg-reductions)."""
        d, op = self.acc, self.op
        if d is dt.bool_:
            return binary("or" if op in ("reduce_sum", "reduce_max") else "and", acc, v)
        base = {"reduce_sum": "add", "reduce_prod": "mul", "reduce_max": "max", "reduce_min": "min"}[op]
        return binary(base + "_reassoc" if self.reassoc else base, acc, v)

    def finalize(self, acc, best):
        return cast(best, dt.int64) if self.is_arg else cast(acc, self.out)

    def better(self, best, v):
        """For argmax/argmin: does `v` replace `best`? (the first NaN wins, as in NumPy)"""
        cmp = binary("gt" if self.op == "argmax" else "lt", v, best)
        if dt.is_float(self.acc):
            cmp = binary("or", cmp, binary("and", unary("isnan", v), unary("not", unary("isnan", best))))
        return cmp


# A float sum over a long row folds its input SUM_BLOCK positions at a time (vectorized, reassociable
# adds) and adds each block's sum into a compensated total. One accumulator per vector lane over the
# whole row lost most digits of a variance: 2**21 float32 values near 1000 came out 0.14 for 0.083,
# as each lane's sum grew until an added value kept two bits. The blocks cost one scalar step per
# SUM_BLOCK positions; the error is then that of a SUM_BLOCK-long sum, close to NumPy's pairwise one.
SUM_BLOCK = 4096


def sums_in_blocks(red: Reduction, length: int) -> bool:
    """Whether `red` over `length` positions folds in blocks into a compensated total."""
    return red.op == "reduce_sum" and not red.is_arg and dt.is_float(red.acc) and length > SUM_BLOCK


def add_compensated(kb, total, comp, part) -> None:
    """total += part, the rounding error kept in comp (Neumaier's variant of Kahan's sum; plain adds,
    which LLVM may not reassociate away)."""
    t = kb.let("tsum", binary("add", total, part))
    big = binary("ge", unary("abs", total), unary("abs", part))
    lost = select(big, binary("add", binary("sub", total, t), part), binary("add", binary("sub", part, t), total))
    kb.assign(comp, binary("add", comp, lost))
    kb.assign(total, t)


def in_blocks(ctx, accs, reds, start, stop, step: int, fold) -> list:
    """Run `fold(j0, j1)` (which folds positions [j0, j1) by `step` into `accs`) over [start, stop)
    one SUM_BLOCK of positions at a time, adding each block's accumulators into compensated totals;
    returns the totals' values."""
    kb = ctx.kb
    totals = [(kb.local("total", r.acc, r.identity()), kb.local("comp", r.acc, r.identity())) for r in reds]
    with kb.for_("jb", start, stop, step=SUM_BLOCK * step, dtype=ctx.idt) as jb:
        for acc, r in zip(accs, reds):
            kb.assign(acc, r.identity())
        fold(jb, kb.let("je", binary("min", binary("add", jb, SUM_BLOCK * step), stop)))
        for acc, (total, comp) in zip(accs, totals):
            add_compensated(kb, total, comp, acc)
    return [kb.let("acc", binary("add", total, comp)) for total, comp in totals]


def accumulate(ctx, red: Reduction, row_idx, start, stop, step: int, j_offset=None, stash_to=None):
    """Loop j over [start, stop) by `step`, folding the reduction's input at (row, j) into fresh
    accumulator locals; returns (acc, best-index-or-None). `j_offset` is added to j for arg
    reductions whose loop covers a piece of the row. `stash_to`: an output buffer of the step's
    shape that also receives each input value (see `stashes`). Long float sums fold in blocks
    (`in_blocks`)."""
    kb, gen = ctx.kb, ctx.gen
    shape, axes, kept, _, red_shape = layout(ctx.step)
    K = math.prod(red_shape)
    acc = kb.local("acc", red.acc, red.identity())
    if red.is_arg and red.reassoc and step == 1 and j_offset is None and stash_to is None:
        return arg_in_blocks(ctx, red, row_idx, start, stop)
    best = kb.local("arg", ctx.idt, const(0, ctx.idt)) if red.is_arg else None

    def fold(j0, j1):
        with kb.for_("j", j0, j1, step=step, dtype=ctx.idt) as j:
            gen.push()
            idx = full_index(shape, axes, kept, row_idx, unravel(ctx.coord("j", K, j), red_shape))
            raw = gen.value(red.e.inputs[0], idx)
            if stash_to is not None:
                kb.store(stash_to, gen.index(ravel(idx, shape)), raw)
            v = cast(raw, red.acc)
            if red.is_arg:
                v = kb.let("v", v)
                take = kb.let("take", red.better(acc, v))
                kb.assign(acc, select(take, v, acc))
                kb.assign(best, select(take, j if j_offset is None else binary("add", j, j_offset), best))
            else:
                kb.assign(acc, red.combine(acc, v))
            gen.pop()

    if sums_in_blocks(red, K // step):
        return in_blocks(ctx, [acc], [red], start, stop, step, fold)[0], None
    fold(start, stop)
    return acc, best


# An argmax/argmin over a CPU row takes the maximum of each ARG_BLOCK positions (a vectorized max, as
# reduce_max's), keeps the first block whose maximum beats the best so far, then finds the first position
# of that block holding it. A select of the value and its index per element is a loop-carried chain LLVM
# does not vectorize: it ran 40x slower than NumPy's argmax, the max at NumPy's speed.
ARG_BLOCK = 256


def arg_in_blocks(ctx, red: Reduction, row_idx, start, stop):
    """(best value, its first index) of arg-reduction `red` over positions [start, stop) of the row:
    NumPy's answer (the first of equal values; the first NaN, which llvm.maximum/minimum propagate
    into its block's maximum, wins)."""
    kb = ctx.kb
    pick = "max_reassoc" if red.op == "argmax" else "min_reassoc"
    best = kb.local("best", red.acc, red.identity())
    block = kb.local("bblk", ctx.idt, start)
    top = kb.local("btop", red.acc, red.identity())
    with kb.for_("jb", start, stop, step=ARG_BLOCK, dtype=ctx.idt) as jb:
        kb.assign(top, red.identity())
        with kb.for_("j", jb, binary("min", binary("add", jb, ARG_BLOCK), stop), dtype=ctx.idt) as j:
            kb.assign(top, binary(pick, top, _row_value(ctx, red, row_idx, j)))
        take = kb.let("take", red.better(best, top))
        kb.assign(best, select(take, top, best))
        kb.assign(block, select(take, jb, block))
    arg = kb.local("arg", ctx.idt, block)
    found = kb.local("found", dt.bool_, const(False, dt.bool_))
    with kb.for_("j", block, binary("min", binary("add", block, ARG_BLOCK), stop), dtype=ctx.idt) as j:
        v = kb.let("v", _row_value(ctx, red, row_idx, j))
        hit = binary("eq", v, best)
        if dt.is_float(red.acc):
            hit = binary("or", hit, binary("and", unary("isnan", v), unary("isnan", best)))
        first = kb.let("first", binary("and", hit, unary("not", found)))
        kb.assign(arg, select(first, j, arg))
        kb.assign(found, binary("or", found, hit))
    return best, arg


def _row_value(ctx, red: Reduction, row_idx, j):
    """The reduction's input at position j of the row, in its accumulator dtype."""
    shape, axes, kept, _, red_shape = layout(ctx.step)
    ctx.gen.push()
    idx = full_index(shape, axes, kept, row_idx, unravel(ctx.coord("j", math.prod(red_shape), j), red_shape))
    v = ctx.kb.let("rv", cast(ctx.gen.value(red.e.inputs[0], idx), red.acc))
    ctx.gen.pop()
    return v


# ops worth a store and a load to avoid computing twice
TRANSCENDENTAL = frozenset({"exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
                            "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                            "erf", "pow", "hypot", "logaddexp"})
STASH_ROW_BYTES = 1 << 19     # rows up to this size stay in the core's cache between the passes


def stashes(step, plan) -> dict[int, int]:
    """CPU row kernels whose row-wide output recomputes a transcendental reduction input (softmax:
    `exp(x - m)` is summed, then divided by the sum): {reduction out id: output position}. The
    reduction's loop also stores its input into that output, and the output pass reads it back
    instead of evaluating it again; the row is still in cache, so this halves the exp work."""
    shape = step.shape
    K = math.prod(shape[d] for d in step.axes)
    inputs = {v.id for v in step.inputs} | {e.out.id for e in step.reductions}
    out: dict[int, int] = {}
    for pos, r in enumerate(step.outputs):
        if r.aval.shape != shape or K * r.aval.dtype.itemsize > STASH_ROW_BYTES:
            continue
        same_index = _same_index_values(r, plan.producer, inputs)
        for e in step.reductions:
            src = e.inputs[0]
            if (e.out.id not in out and src.id in same_index and src.aval.dtype == r.aval.dtype
                    and src.aval.shape == shape and _uses_any(src, plan.producer, inputs, TRANSCENDENTAL)):
                out[e.out.id] = pos
                break
    return out


def _same_index_values(root, producer, stop) -> set[int]:
    """Ids of the values `root[i]` reads at the same index i (elementwise operands of its shape)."""
    seen, stack = set(), [root]
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        e = producer.get(v.id)
        if v.id in stop or e is None or OPS[e.op].kind != "elementwise":
            continue
        stack.extend(u for u in e.inputs if u.aval.shape == v.aval.shape)
    return seen


def _uses_any(v, producer, stop, ops) -> bool:
    seen, stack = set(), [v]
    while stack:
        u = stack.pop()
        if u.id in seen or u.id in stop:
            continue
        seen.add(u.id)
        e = producer.get(u.id)
        if e is None:
            continue
        if e.op in ops:
            return True
        if OPS[e.op].kind in ("elementwise", "movement"):
            stack.extend(e.inputs)
    return False


def layout(step):
    shape, axes = step.shape, step.axes
    kept = [d for d in range(len(shape)) if d not in axes]
    kept_shape = tuple(shape[d] for d in kept)
    red_shape = tuple(shape[d] for d in axes)
    return shape, axes, kept, kept_shape, red_shape


def full_index(shape, axes, kept, row_idx, red_idx):
    full = [None] * len(shape)
    for d, f in zip(kept, row_idx):
        full[d] = f
    for d, f in zip(axes, red_idx):
        full[d] = f
    return full


def generate_row(step, plan, style: KernelStyle, caps=None) -> StepCode:
    shape, axes, kept, kept_shape, red_shape = layout(step)
    nrows, K = math.prod(kept_shape), math.prod(red_shape)
    if nrows == 0:
        return StepCode()
    from poot.jit.codegen.split import choose, generate_columns, generate_split
    from poot.jit.codegen.streams import generate_row_blocks, row_blocks_apply

    strategy = choose(step, plan, style)
    if strategy == "split":
        return generate_split(step, plan, style)
    if strategy == "columns":
        return generate_columns(step, plan, style)
    cooperative = style is KernelStyle.GPU and (len(shape) - 1) in axes and K > 32
    if style is KernelStyle.CPU and row_blocks_apply(step, nrows):
        return generate_row_blocks(step, plan, style, nrows, K)
    if style is KernelStyle.CPU:
        stash = stashes(step, plan)
        ctx = KernelContext(step, plan, style, out_access=Access.READ_WRITE if stash else Access.WRITE)
        row = ctx.thread()
        _row_body(ctx, row, nrows, K, shape, axes, kept, kept_shape, red_shape, lanes=None, stash=stash)
        return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(nrows))])
    if cooperative:
        ctx = KernelContext(step, plan, style)
        row = ctx.kb.let("row", cast(Index("group", 0), ctx.idt))
        dtypes = [v.aval.dtype for v in step.inputs + step.outputs]
        _row_body(ctx, row, nrows, K, shape, axes, kept, kept_shape, red_shape, lanes=GPU_WORKGROUP,
                  shuffle=shuffles(caps), access=access_bytes(caps, dtypes, VECTOR_BYTES))
        return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(nrows))])
    ctx = KernelContext(step, plan, style)
    row = ctx.thread()
    with ctx.kb.if_(binary("lt", row, nrows)):
        _row_body(ctx, row, nrows, K, shape, axes, kept, kept_shape, red_shape, lanes=None)
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(ceil_div(nrows, GPU_WORKGROUP)))])


def _row_body(ctx, row, nrows, K, shape, axes, kept, kept_shape, red_shape, lanes, stash=None, shuffle=False,
              access=VECTOR_BYTES):
    """Emit one row's work. `lanes`: None for one thread per row, else the workgroup's threads
    cooperate over the row (GPU; `shuffle`: combine with warp shuffles; `access`: bytes a lane takes
    per block, gpu_lanes.access_bytes). `stash`: see `stashes`."""
    stash = stash or {}
    kb, gen = ctx.kb, ctx.gen
    row_form = ctx.coord("row", nrows, row)
    row_idx = unravel(row_form, kept_shape)
    reassoc = ctx.style is KernelStyle.CPU
    lane = kb.let("lane", cast(Index("local", 0), ctx.idt)) if lanes else None

    # cooperating lanes take `vec` consecutive positions per step (16-byte accesses, gpu_lanes.lane_loop)
    vec = vector_width([v.aval.dtype for v in ctx.step.inputs + ctx.step.outputs], access) if lanes else 1
    for e in ctx.step.reductions:
        red = Reduction(e, ctx, reassoc)
        start = lane if lanes else const(0, ctx.idt)
        into = ctx.out_names[stash[e.out.id]] if e.out.id in stash else None
        if lanes and not red.is_arg:
            acc, best = lane_partial(ctx, red, row_idx, lane, lanes, vec, 0, K), None
        else:
            acc, best = accumulate(ctx, red, row_idx, start, const(K, ctx.idt), lanes or 1, stash_to=into)
        if lanes:
            acc, best = workgroup_combine(ctx, red, acc, best, lane, lanes, shuffle)
        gen.reduced[e.out.id] = kb.let("red", red.finalize(acc, best))
    full_roots = [(n, r) for n, r in zip(ctx.out_names, ctx.step.outputs) if r.aval.shape == shape]
    row_roots = [(n, r) for n, r in zip(ctx.out_names, ctx.step.outputs) if r.aval.shape != shape]
    if row_roots:
        def emit_row_roots():
            for name, r in row_roots:
                kb.store(name, row, gen.value(r, unravel(row_form, r.aval.shape)))
        if lanes:
            with kb.if_(binary("eq", lane, 0)):
                gen.push()
                emit_row_roots()
                gen.pop()
        else:
            emit_row_roots()
    if full_roots:
        def emit_full_roots(base, slot):
            gen.push()
            idx = full_index(shape, axes, kept, row_idx, unravel(ctx.coord("k", K, base) + slot, red_shape))
            linear = gen.index(ravel(idx, shape))
            for e in ctx.step.reductions:       # stashed values are read back, not recomputed
                if e.out.id in stash:
                    src = e.inputs[0]
                    gen._bind(("v", src.id, tuple(idx)),
                              Load(ctx.out_names[stash[e.out.id]], linear, src.aval.dtype), "st")
            for name, r in full_roots:
                kb.store(name, linear, gen.value(r, idx))
            gen.pop()
        if lanes:
            lane_loop(ctx, lane, lanes, vec, 0, K, emit_full_roots)
        else:
            with kb.for_("k", const(0, ctx.idt), const(K, ctx.idt), dtype=ctx.idt) as k:
                emit_full_roots(k, 0)


def lane_partial(ctx, red, row_idx, lane, lanes: int, vec: int, j0, j1):
    """This thread's partial of a non-arg reduction over positions [j0, j1) of the row, `lanes` threads
    striding together (gpu_lanes.lane_loop): `vec` accumulators, folded pairwise."""
    kb, gen = ctx.kb, ctx.gen
    shape, axes, kept, _, red_shape = layout(ctx.step)
    K = math.prod(red_shape)
    accs = [kb.local("acc", red.acc, red.identity()) for _ in range(vec)]

    def body(base, slot):
        gen.push()
        idx = full_index(shape, axes, kept, row_idx, unravel(ctx.coord("j", K, base) + slot, red_shape))
        kb.assign(accs[slot], red.combine(accs[slot], cast(gen.value(red.e.inputs[0], idx), red.acc)))
        gen.pop()

    lane_loop(ctx, lane, lanes, vec, j0, j1, body)
    return kb.let("lacc", fold_pairwise(accs, red.combine))


def workgroup_combine(ctx, red, acc, best, lane, lanes, shuffle: bool = False):
    """Combine each thread's partial across the workgroup's `lanes` threads; every thread gets the
    result. `shuffle` (gpu_lanes.shuffles): a warp butterfly, then one shared round across the warps;
    else a shared-memory tree."""
    if shuffle and lanes % WARP == 0:
        return _shuffle_combine(ctx, red, acc, best, lane, lanes)
    kb = ctx.kb
    vals = kb.shared("sv", red.acc, lanes)
    idxs = kb.shared("si", ctx.idt, lanes) if red.is_arg else None
    kb.store(vals, lane, acc)
    if idxs:
        kb.store(idxs, lane, best)
    kb.barrier()
    s = lanes // 2
    while s >= 1:
        with kb.if_(binary("lt", lane, s)):
            other = binary("add", lane, s)
            own = (kb.let("ca", kb.load(vals, lane, red.acc)),)
            far = (kb.let("cb", kb.load(vals, other, red.acc)),)
            if idxs:
                own += (kb.let("ia", kb.load(idxs, lane, ctx.idt)),)
                far += (kb.let("ib", kb.load(idxs, other, ctx.idt)),)
            for arr, v in zip((vals, idxs), _pair(ctx, red, own, far)):
                kb.store(arr, lane, v)
        kb.barrier()
        s //= 2
    out = kb.let("wr", kb.load(vals, const(0, ctx.idt), red.acc))
    out_idx = kb.let("wi", kb.load(idxs, const(0, ctx.idt), ctx.idt)) if idxs else None
    kb.barrier()   # the shared arrays are reused by the next reduction
    return out, out_idx


def _pair(ctx, red, own, other):
    """(value,) or (value, index) of `own` combined with `other`; for arg-reductions the better one, the
    lower index winning ties (NaN ties too) so the first occurrence is kept. Commutative."""
    if not red.is_arg:
        return (red.combine(own[0], other[0]),)
    (a, ia), (b, ib) = own, other
    tie = binary("eq", a, b)
    if dt.is_float(red.acc):
        tie = binary("or", tie, binary("and", unary("isnan", a), unary("isnan", b)))
    take = ctx.kb.let("tk", binary("or", red.better(a, b), binary("and", tie, binary("lt", ib, ia))))
    return select(take, b, a), select(take, ib, ia)


def _shuffle_combine(ctx, red, acc, best, lane, lanes):
    kb = ctx.kb

    def combine(own, other):
        return tuple(kb.let("cv", v) for v in _pair(ctx, red, own, other))
    own = butterfly(kb, (acc, best) if red.is_arg else (acc,), combine)
    warps = lanes // WARP
    if warps > 1:
        arrays = [kb.shared("sv", red.acc, warps)] + ([kb.shared("si", ctx.idt, warps)] if red.is_arg else [])
        with kb.if_(binary("eq", binary("rem", lane, WARP), 0)):
            for arr, v in zip(arrays, own):
                kb.store(arr, binary("div", lane, WARP), v)
        kb.barrier()
        types = (red.acc, ctx.idt)
        parts = [tuple(kb.load(arr, const(w, ctx.idt), t) for arr, t in zip(arrays, types)) for w in range(warps)]
        own = fold_pairwise(parts, combine)
        kb.barrier()   # the shared arrays are reused by the next reduction
    out = kb.let("wr", own[0])
    return out, (kb.let("wi", own[1]) if red.is_arg else None)
