"""Pointwise kernels: every root of one shape, one output element at a time.

CPU: workgroups of one thread, each handling a block of CPU_BLOCK elements with an inner loop LLVM
vectorizes. When every load index is affine in the flat position the loop runs over the flat index;
otherwise (transposes, broadcasts, pads) it runs over the last dimension inside a row, so the inner
loop stays affine and the row's div/mod happens once per row. A small result that is a nest of
concatenates (an array stacked from many parts) is stored piece by piece instead (_generate_pieces).
GPUs have their own schedule (gpu_pointwise.py)."""
from __future__ import annotations

import math
from dataclasses import replace

from poot.fuse.access import leaf_forms
from poot.fuse.indexing import Clamp, Coord, Div, Form, Mod, ravel, strides, unravel
from poot.jit.kir.builder import binary, const
from poot.jit.kir.model import Access
from poot.jit.codegen.pieces import concat_pieces
from poot.jit.codegen.common import CPU_BLOCK, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.llvm.targets import KernelStyle

STREAM_BYTES = 16 << 20    # CPU results at least this big are stored past the caches (Access.STREAM)
KERNEL_INPUTS = 128        # a small CPU result stacked from more inputs is computed by several kernels
CHUNK_PIECES = 16          # pieces one work unit of such a kernel stores
MAX_PIECES = CPU_BLOCK     # a result split into more pieces is computed whole (values.py: a select tree)


def _affine(forms) -> bool:
    def ok(f: Form) -> bool:
        return all(not isinstance(a, (Div, Mod, Clamp)) for a, _ in f.terms)
    return all(ok(f) for _, idx in forms for f in idx)


def _members(step, plan) -> set[int]:
    """Ids of the values computed inside the kernel. The step's inputs are a set, so a kernel reading
    thousands of buffers (an array stacked from many scalars) costs one lookup per value, not a scan."""
    out, inputs = set(), {i.id for i in step.inputs}
    for r in step.outputs:
        stack = [r]
        while stack:
            v = stack.pop()
            e = plan.producer.get(v.id)
            if e is None or v.id in out or (v is not r and v.id in inputs):
                continue
            out.add(v.id)
            stack.extend(e.inputs)
    return out


def generate_pointwise(step, plan, style: KernelStyle) -> StepCode:
    shape = step.shape
    total = math.prod(shape)
    if total == 0:
        return StepCode()
    if style is KernelStyle.CPU and total <= CPU_BLOCK and len(step.outputs) == 1 \
            and getattr(plan.producer.get(step.outputs[0].id), "op", None) in ("concatenate", "reshape"):
        pieces = concat_pieces(step.outputs[0], plan.producer, _members(step, plan), MAX_PIECES)
        if len(pieces) > 1:
            return _generate_pieces(step, plan, style, pieces)
    flat = False
    if style is KernelStyle.CPU:
        probe_idx = unravel(Form.of(Coord("i", total)), shape)
        members = _members(step, plan)
        flat = _affine(leaf_forms(plan.producer, members, [(r, probe_idx) for r in step.outputs]))
    # a flat loop writes each output in whole, aligned blocks: big ones bypass the caches
    stream = flat and min(v.aval.nbytes for v in step.outputs) >= STREAM_BYTES
    ctx = KernelContext(step, plan, style, out_access=Access.STREAM if stream else Access.WRITE)
    kb, gen = ctx.kb, ctx.gen

    def store_all(idx):
        linear = ctx.gen.index(ravel(idx, shape))
        for name, root in zip(ctx.out_names, step.outputs):
            kb.store(name, linear, gen.value(root, idx))

    g = ctx.thread()
    if flat or len(shape) < 2:
        start = kb.let("start", binary("mul", g, CPU_BLOCK))
        end = kb.let("end", binary("min", binary("add", start, CPU_BLOCK), const(total, ctx.idt)))
        with kb.for_("i", start, end, dtype=ctx.idt) as i:
            gen.push()
            store_all(unravel(ctx.coord("i", total, i), shape))
            gen.pop()
        units = ceil_div(total, CPU_BLOCK)
    else:
        inner = shape[-1]
        rows = total // inner
        nblocks = ceil_div(inner, CPU_BLOCK)
        row = kb.let("row", binary("div", g, nblocks) if nblocks > 1 else g)
        row_idx = unravel(ctx.coord("row", rows, row), shape[:-1])
        if nblocks > 1:
            j0 = kb.let("j0", binary("mul", binary("rem", g, nblocks), CPU_BLOCK))
            j1 = kb.let("j1", binary("min", binary("add", j0, CPU_BLOCK), const(inner, ctx.idt)))
        else:
            j0, j1 = const(0, ctx.idt), const(inner, ctx.idt)
        with kb.for_("j", j0, j1, dtype=ctx.idt) as j:
            gen.push()
            store_all(row_idx + [ctx.coord("j", inner, j)])
            gen.pop()
        units = rows * nblocks
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(units))])


def _generate_pieces(step, plan, style: KernelStyle, pieces) -> StepCode:
    """The output piece by piece (poot/jit/codegen/pieces.py), each computed from its own value with
    no select: a one-element piece is a store at a constant index, a larger one a loop over its
    elements. LLVM's time grows faster than linearly with the buffers one kernel binds and the stores
    one block holds, so the pieces go to kernels of at most KERNEL_INPUTS inputs each, and in a
    kernel work unit `g` stores the pieces of chunk `g` (at most CHUNK_PIECES) in a block of its own;
    the units run in parallel."""
    launches, group, reads = [], [], set()
    for p in pieces:
        if group and len(reads | p.reads) > KERNEL_INPUTS:
            launches.append(_pieces_kernel(step, plan, style, group, reads, len(launches)))
            group, reads = [], set()
        group.append(p)
        reads |= p.reads
    launches.append(_pieces_kernel(step, plan, style, group, reads, len(launches)))
    return StepCode(launches)


def _pieces_kernel(step, plan, style, pieces, reads, k) -> Launch:
    part = replace(step, inputs=[v for v in step.inputs if v.id in reads])
    ctx = KernelContext(part, plan, style, name=f"{step.name}_{k}" if k else None)
    (out_name,) = ctx.out_names
    tid = ctx.thread()
    chunks = [pieces[c:c + CHUNK_PIECES] for c in range(0, len(pieces), CHUNK_PIECES)]
    for c, chunk in enumerate(chunks):
        with ctx.kb.if_(binary("eq", tid, const(c, ctx.idt))):
            for p in chunk:
                _store_piece(ctx, p, out_name, step.shape)
    return Launch(ctx.build(), ctx.bindings, groups_for(len(chunks)))


def _store_piece(ctx, p, out_name, shape) -> None:
    kb, gen = ctx.kb, ctx.gen
    count = math.prod(hi - lo for lo, hi in p.box)
    gen.push()
    if count == 1:
        linear = sum(lo * st for (lo, _), st in zip(p.box, strides(shape)))
        kb.store(out_name, const(linear, ctx.idt), gen.value(p.var, [Form(lo, ()) for lo, _ in p.src]))
    else:
        name = f"p{len(gen.coords)}"           # a fresh coordinate per loop
        with kb.for_(name, 0, const(count, ctx.idt), dtype=ctx.idt) as t:
            flat = ctx.coord(name, count, t)
            dst = [f + lo for f, (lo, hi) in zip(unravel(flat, tuple(hi - lo for lo, hi in p.box)), p.box)]
            src = [f + lo for f, (lo, hi) in zip(unravel(flat, tuple(hi - lo for lo, hi in p.src)), p.src)]
            kb.store(out_name, gen.index(ravel(dst, shape)), gen.value(p.var, src))
    gen.pop()
