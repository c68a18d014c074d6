"""Pointwise kernels: every root of one shape, one output element at a time.

CPU: workgroups of one thread, each handling a block of CPU_BLOCK elements with an inner loop LLVM
vectorizes. When every load index is affine in the flat position the loop runs over the flat index;
otherwise (transposes, broadcasts, pads) it runs over the last dimension inside a row, so the inner
loop stays affine and the row's div/mod happens once per row. GPUs have their own schedule
(gpu_pointwise.py)."""
from __future__ import annotations

import math

from poot.fuse.access import leaf_forms
from poot.fuse.indexing import Clamp, Coord, Div, Form, Mod, ravel, unravel
from poot.jit.kir.builder import binary, const
from poot.jit.kir.model import Access
from poot.jit.codegen.common import CPU_BLOCK, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.llvm.targets import KernelStyle

STREAM_BYTES = 16 << 20    # CPU results at least this big are stored past the caches (Access.STREAM)


def _affine(forms) -> bool:
    def ok(f: Form) -> bool:
        return all(not isinstance(a, (Div, Mod, Clamp)) for a, _ in f.terms)
    return all(ok(f) for _, idx in forms for f in idx)


def _members(step, plan) -> set[int]:
    out = set()
    for r in step.outputs:
        stack = [r]
        while stack:
            v = stack.pop()
            e = plan.producer.get(v.id)
            if e is None or v.id in out or (v is not r and any(v.id == i.id for i in step.inputs)):
                continue
            out.add(v.id)
            stack.extend(e.inputs)
    return out


def generate_pointwise(step, plan, style: KernelStyle) -> StepCode:
    shape = step.shape
    total = math.prod(shape)
    if total == 0:
        return StepCode()
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
