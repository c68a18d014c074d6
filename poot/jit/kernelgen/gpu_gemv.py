"""GPU matrix-vector products: C[b, m, 0] = sum_k A[b, m, k] B[b, k, 0] (the planner's `matmul` with one
output column, what `w @ x` for a vector x becomes).

The generic matmul schedule gives each thread one output and walks K alone: a 4096 x 4096 GEMV then runs
16 workgroups and reads each row of A with one thread (uncoalesced); it measured 2.8% of the H200's copy
bandwidth. Here a workgroup owns one output: its threads stride over the row of A together (coalesced
loads; 16-bit weights are loaded narrow and multiplied in float32), then combine their partials through
shared memory (rows.workgroup_combine). The vector is re-read by every workgroup and stays in cache.
"""
from __future__ import annotations

from ... import dtypes as dt
from ...fuse.indexing import unravel
from ..kir.builder import binary, cast, const
from ..kir.model import Index
from .common import GPU_WORKGROUP, KernelContext, Launch, StepCode, groups_for
from .opaque import _batch
from .rows import workgroup_combine

MIN_K = 2 * GPU_WORKGROUP    # shorter rows keep one thread per output


def applies(step) -> bool:
    a, _ = step.eqn.inputs
    out = step.eqn.out.aval
    return out.shape[-1] == 1 and a.aval.shape[-1] >= MIN_K and out.size > 0 and dt.is_float(out.dtype)


class _Sum:
    """The part of rows.Reduction that workgroup_combine uses: a sum in the accumulator dtype."""

    is_arg = False

    def __init__(self, acc):
        self.acc = acc

    def combine(self, a, b):
        return binary("add", a, b)


def generate_gpu_gemv(step, plan) -> StepCode:
    e = step.eqn
    a, b = e.inputs
    out = e.out.aval
    K = a.aval.shape[-1]
    acc_t = dt.float32 if out.dtype in (dt.float16, dt.bfloat16) else out.dtype
    ctx = KernelContext(step, plan, "gpu")
    kb, gen = ctx.kb, ctx.gen
    row = kb.let("row", cast(Index("group", 0), ctx.idt))
    lane = kb.let("lane", cast(Index("local", 0), ctx.idt))
    idx = unravel(ctx.coord("i", out.size, row), out.shape)
    acc = kb.local("acc", acc_t, const(0, acc_t))
    with kb.for_("kk", lane, K, step=GPU_WORKGROUP, dtype=ctx.idt) as kk:
        gen.push()
        kf = ctx.coord("kk", K, kk)
        ai = _batch(idx[:-2], out.shape[:-2], a.aval.shape[:-2]) + [idx[-2], kf]
        bi = _batch(idx[:-2], out.shape[:-2], b.aval.shape[:-2]) + [kf, idx[-1]]
        prod = binary("mul", cast(gen.value(a, ai), acc_t), cast(gen.value(b, bi), acc_t))
        kb.assign(acc, binary("add", acc, prod))
        gen.pop()
    total, _ = workgroup_combine(ctx, _Sum(acc_t), acc, None, lane, GPU_WORKGROUP)
    with kb.if_(binary("eq", lane, 0)):
        kb.store(ctx.out_names[0], row, cast(total, out.dtype))
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(out.size))])
