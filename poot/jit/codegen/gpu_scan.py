"""Blocked scans (cumsum, cumprod) for GPU kernel styles.

One thread walking a whole line is a long chain of dependent steps (slow on any GPU) and, on lavapipe,
wrong past 65535 elements: its shader compiler caps a loop at 65535 iterations. Each line is cut into
blocks of B elements instead, with B = max(MIN_BLOCK, ceil(sqrt(n))), so that neither the blocks nor
their count exceed 32768 for lines up to 2^30 elements:

1. one thread per (line, block) combines its block's elements into a total (temporary [blocks, lines]);
2. one thread per line turns its block totals, in place, into exclusive running offsets;
3. one thread per (line, block) walks its block again from its offset and writes the running values.

Thread t handles block t // lines of line t % lines, so neighbouring threads read neighbouring lines:
loads coalesce when the scanned axis is not the innermost one, and the temporary's accesses always do.
Pass 3 applies each element in order starting from the offset, so integers are exact (wrapping adds and
products are associative); floats round differently from NumPy's strictly sequential order only
through the block totals, as blocked reductions do.
"""
from __future__ import annotations

import math

from poot.fuse.indexing import ravel, unravel
from poot.jit.kir.builder import binary, const
from poot.jit.codegen.common import GPU_WORKGROUP, KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.llvm.targets import KernelStyle

MIN_BLOCK = 256          # elements per block at least: short lines keep the one-pass scan


def block_size(n: int) -> int:
    """Elements per block for a line of `n`: about sqrt(n), so passes 1-3 each loop at most that often."""
    return max(MIN_BLOCK, math.isqrt(max(n - 1, 0)) + 1)


def blocked(n: int) -> bool:
    """Whether a line of `n` elements is scanned in blocks (more than one block)."""
    return n > block_size(n)


class _ScanLayout:
    """The geometry shared by the three passes."""

    def __init__(self, step):
        e = step.eqn
        self.eqn, self.shape, self.axis = e, e.out.aval.shape, e.params["axis"]
        self.n = self.shape[self.axis]
        self.other = tuple(d for i, d in enumerate(self.shape) if i != self.axis)
        self.lines = math.prod(self.other)
        self.B = block_size(self.n)
        self.blocks = ceil_div(self.n, self.B)
        self.threads = self.lines * self.blocks
        self.dtype = e.out.aval.dtype
        self.combine = "add" if e.op == "cumsum" else "mul"

    def identity(self):
        return const(0 if self.combine == "add" else 1, self.dtype)

    def context(self, step, plan, suffix: str, with_outputs: bool = False) -> KernelContext:
        return KernelContext(step, plan, KernelStyle.GPU, name=f"{step.name}_{suffix}",
                             with_outputs=with_outputs, extra_sizes=(self.threads, self.n + self.B))

    def walk_block(self, ctx: KernelContext, t, acc, store_to: str | None = None) -> None:
        """acc = acc (+|*) each element of thread t's block in order; each running value is stored to
        `store_to` when given."""
        kb, gen = ctx.kb, ctx.gen
        line = unravel(ctx.coord("line", self.lines, kb.let("line", binary("rem", t, self.lines))), self.other)
        j0 = kb.let("j0", binary("mul", binary("div", t, self.lines), self.B))
        j1 = kb.let("j1", binary("min", binary("add", j0, self.B), const(self.n, ctx.idt)))
        with kb.for_("j", j0, j1, dtype=ctx.idt) as j:
            gen.push()
            idx = list(line)
            idx.insert(self.axis, ctx.coord("j", self.n, j))
            kb.assign(acc, binary(self.combine, acc, gen.value(self.eqn.inputs[0], idx)))
            if store_to is not None:
                kb.store(store_to, gen.index(ravel(idx, self.shape)), acc)
            gen.pop()


def generate_gpu_scan(step, plan) -> StepCode:
    """The three launches of a blocked scan along the step's axis (see the module's docstring)."""
    g = _ScanLayout(step)
    code = StepCode(temps=[g.threads * g.dtype.itemsize])

    totals = g.context(step, plan, "blocks")
    kb = totals.kb
    buf = totals.temp_buffer("totals", g.dtype, 0)
    t = totals.thread()
    with kb.if_(binary("lt", t, g.threads)):
        acc = kb.local("acc", g.dtype, g.identity())
        g.walk_block(totals, t, acc)
        kb.store(buf, t, acc)
    code.launches.append(Launch(totals.build(), totals.bindings, groups_for(ceil_div(g.threads, GPU_WORKGROUP))))

    offsets = g.context(step, plan, "offsets")
    kb = offsets.kb
    buf = offsets.temp_buffer("totals", g.dtype, 0)
    line = offsets.thread()
    with kb.if_(binary("lt", line, g.lines)):
        acc = kb.local("acc", g.dtype, g.identity())
        with kb.for_("k", 0, g.blocks, dtype=offsets.idt) as k:
            at = kb.let("at", binary("add", binary("mul", k, g.lines), line))
            total = kb.let("total", kb.load(buf, at, g.dtype))
            kb.store(buf, at, acc)
            kb.assign(acc, binary(g.combine, acc, total))
    code.launches.append(Launch(offsets.build(), offsets.bindings, groups_for(ceil_div(g.lines, GPU_WORKGROUP))))

    apply = g.context(step, plan, "apply", with_outputs=True)
    kb = apply.kb
    buf = apply.temp_buffer("offsets", g.dtype, 0)
    t = apply.thread()
    with kb.if_(binary("lt", t, g.threads)):
        acc = kb.local("acc", g.dtype, kb.load(buf, t, g.dtype))
        g.walk_block(apply, t, acc, store_to=apply.out_names[0])
    code.launches.append(Launch(apply.build(), apply.bindings, groups_for(ceil_div(g.threads, GPU_WORKGROUP))))
    return code
