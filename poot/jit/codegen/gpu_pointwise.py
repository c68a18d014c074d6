"""GPU pointwise kernels: a grid-stride loop over the flat position, several elements per thread.

One thread per element spent more on its own start (reading the grid from meta, unfolding the block id,
bounds) than on a short chain, and a grid of a million 256-thread workgroups kept the block scheduler
busy. Here the grid is a fixed number of workgroups per multiprocessor and each thread walks the flat
positions by the grid's size. Where every load index is affine in the flat position, a thread takes
`vector_width` consecutive elements per step (16-byte loads and stores, gpu_lanes.py; 4-byte on wgpu,
whose Capabilities.vector_store_bytes says why, and for 8- and 16-bit elements on SPIR-V: access_bytes)
and the elements past the last whole vector are a scalar tail; otherwise (broadcasts through div/mod,
transposes) one element per step. Indices are int32 unless an array needs int64 (KernelContext). A chain
holding a loop of its own (an integer power) keeps one thread per element: wgpu's SPIR-V translator (naga)
rejected that loop over 8- and 16-bit integers nested in the grid-stride loop.
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.fuse.access import leaf_forms
from poot.fuse.indexing import Coord, Form, ravel, unravel
from poot.jit.kir.builder import binary, const
from poot.jit.codegen.common import KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.codegen.gpu_lanes import access_bytes, multiprocessors, store_bytes, vector_width
from poot.jit.codegen.pointwise import _affine, _members
from poot.jit.llvm.targets import KernelStyle

GROUPS_PER_CORE = 32          # workgroups per multiprocessor (256 threads each): a few waves of full occupancy
MAX_UNROLLED_OPS = 512        # equations x vector width: longer chains take fewer elements per step


def generate_gpu_pointwise(step, plan, caps) -> StepCode:
    shape = step.shape
    total = math.prod(shape)
    if total == 0:
        return StepCode()
    ctx = KernelContext(step, plan, KernelStyle.GPU)
    kb, gen = ctx.kb, ctx.gen
    members = _members(step, plan)
    probe = unravel(Form.of(Coord("i", total)), shape)
    flat = _affine(leaf_forms(plan.producer, members, [(r, probe) for r in step.outputs]))
    dtypes = [v.aval.dtype for v in step.inputs + step.outputs]
    vec = vector_width(dtypes, access_bytes(caps, dtypes, store_bytes(caps))) if flat else 1
    while vec > 1 and vec * len(members) > MAX_UNROLLED_OPS:
        vec //= 2
    units = total // vec
    wg = kb.workgroup[0]
    groups = max(1, min(ceil_div(units, wg), multiprocessors(caps) * GROUPS_PER_CORE))
    t = ctx.thread()

    def store_at(i):
        gen.push()
        idx = unravel(ctx.coord("i", total, i), shape)
        linear = gen.index(ravel(idx, shape))
        for name, root in zip(ctx.out_names, step.outputs):
            kb.store(name, linear, gen.value(root, idx))
        gen.pop()

    if any(plan.producer[v].op == "pow" and not dt.is_float(plan.producer[v].out.aval.dtype) for v in members):
        with kb.if_(binary("lt", t, total)):
            store_at(t)
        return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(ceil_div(total, wg)))])
    with kb.for_("u", t, const(units, ctx.idt), step=groups * wg, dtype=ctx.idt) as u:
        base = kb.let("base", binary("mul", u, vec)) if vec > 1 else u
        for k in range(vec):
            store_at(binary("add", base, k) if k else base)
    rest = total - units * vec
    if rest:
        with kb.if_(binary("lt", t, rest)):
            store_at(binary("add", t, units * vec))
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(groups))])
