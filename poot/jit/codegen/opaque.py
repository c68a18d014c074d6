"""Kernels for the opaque ops: scans (cumsum, cumprod), scatter, and matmul on GPU-shaped targets.
(On the CPU, matmul runs through the BLAS NumPy links, or cpu_gemv.py's kernels for products with a few
result columns or rows: see poot/jit/runtime/matvec.py.)"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.fuse.indexing import Form, ravel, unravel
from poot.jit.kir.builder import binary, cast, const
from poot.jit.kir.model import Access
from poot.jit.codegen import gpu_scan
from poot.jit.codegen.common import KernelContext, Launch, StepCode, ceil_div, groups_for
from poot.jit.llvm.targets import KernelStyle


def generate_scan(step, plan, style: KernelStyle) -> StepCode:
    """One thread per line along the axis, accumulating in order (NumPy's sequential result). On GPUs,
    lines longer than a block are scanned in blocks instead (poot/jit/codegen/gpu_scan.py)."""
    e = step.eqn
    shape, axis = e.out.aval.shape, e.params["axis"]
    n = shape[axis]
    other = tuple(d for i, d in enumerate(shape) if i != axis)
    lines = math.prod(other)
    if lines == 0 or n == 0:
        return StepCode()
    if style is KernelStyle.GPU and gpu_scan.blocked(n):
        return gpu_scan.generate_gpu_scan(step, plan)
    ctx = KernelContext(step, plan, style)
    kb, gen = ctx.kb, ctx.gen
    t = ctx.thread()
    dtype = e.out.aval.dtype
    combine = "add" if e.op == "cumsum" else "mul"
    with kb.if_(binary("lt", t, lines)):
        line = unravel(ctx.coord("line", lines, t), other)
        acc = kb.local("acc", dtype, const(0 if combine == "add" else 1, dtype))
        with kb.for_("j", 0, n, dtype=ctx.idt) as j:
            gen.push()
            idx = list(line)
            idx.insert(axis, ctx.coord("j", n, j))
            lin = gen.index(ravel(idx, shape))
            kb.assign(acc, binary(combine, acc, gen.value(e.inputs[0], idx)))
            kb.store(ctx.out_names[0], lin, acc)
            gen.pop()
    wg = kb.workgroup[0]
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(ceil_div(lines, wg)))])


# updates one GPU thread applies per launch of an ordered scatter-add: lavapipe ends a shader
# invocation's loops after 65535 iterations in all (a per-invocation limiter), so longer runs of updates
# are split over launches of one kernel, which the device runs in order
SERIAL_UPDATES_PER_LAUNCH = 32768


def generate_scatter(step, plan, style: KernelStyle) -> StepCode:
    """out = x; out[idx[i]] = updates[i] (mode set) or += (mode add), along axis 0.

    Two launches: a copy, then the writes. The writes run on one thread on the CPU so duplicate
    indices behave as in NumPy (the last write wins; adds accumulate); on GPUs one thread per index
    with atomic adds, and for mode set an unspecified one of the duplicates wins. A GPU add without
    an atomic for its dtype stays ordered: one thread per element of a row walks the updates in
    order, SERIAL_UPDATES_PER_LAUNCH of them per launch."""
    e = step.eqn
    x, ind, upd = e.inputs
    shape = x.aval.shape
    total = math.prod(shape)
    code = StepCode()
    if total == 0:
        return code
    copy = KernelContext(step, plan, style, name=step.name + "_copy")
    t = copy.thread()
    with copy.kb.if_(binary("lt", t, total)):
        i = copy.coord("i", total, t)
        copy.kb.store(copy.out_names[0], t, copy.gen.value(x, unravel(i, shape)))
    wg = copy.kb.workgroup[0]
    source = next((k for k, v in enumerate(step.inputs) if v.id == x.id), None)   # x read as stored
    pair = None if source is None else (source, len(step.inputs))
    code.launches.append(Launch(copy.build(), copy.bindings, groups_for(ceil_div(total, wg)), copy=pair))
    nidx, inner, n0 = ind.aval.size, math.prod(shape[1:]), shape[0]
    if nidx == 0 or inner == 0:
        return code
    w = KernelContext(step, plan, style, name=step.name + "_write", out_access=Access.READ_WRITE)
    kb, gen = w.kb, w.gen
    out = w.out_names[0]
    mode = e.params["mode"]
    atomic = style is not KernelStyle.CPU and mode == "add" and x.aval.dtype in (dt.float32, dt.int32, dt.uint32)

    def target_row(k):
        """(coordinate form of update k, the row of `out` it goes to)."""
        kf = w.coord("k", nidx, k)
        return kf, gen.checked_index(gen.value(ind, unravel(kf, ind.aval.shape)), n0,
                                     f"scatter index out of bounds for an axis of size {n0}", e.where)

    def update(kf, pos, el):
        """Apply update kf to element el of row pos."""
        gen.push()
        ef = w.coord("e", inner, el)
        src = gen.value(upd, unravel(kf * inner + ef, upd.aval.shape))
        dst = kb.let("dst", binary("add", binary("mul", pos, inner), el))
        if mode == "set":
            kb.store(out, dst, src)
        elif atomic:
            kb.atomic_add(out, dst, src)
        else:
            kb.store(out, dst, binary("add", kb.load(out, dst, x.aval.dtype), src))
        gen.pop()

    def each_element(k):
        gen.push()
        kf, pos = target_row(k)
        with kb.for_("e", 0, inner, dtype=w.idt) as el:
            update(kf, pos, el)
        gen.pop()

    if style is KernelStyle.CPU:          # one thread, every update in order
        with kb.for_("k", 0, nidx, dtype=w.idt) as k:
            each_element(k)
        code.launches.append(Launch(w.build(), w.bindings, groups_for(1)))
    elif mode == "add" and not atomic:    # ordered: a thread per row element, a launch per run of updates
        el = w.thread()
        first = kb.scalar("first", w.idt)
        last = kb.let("last", binary("min", binary("add", first, SERIAL_UPDATES_PER_LAUNCH), nidx))
        with kb.if_(binary("lt", el, inner)):
            with kb.for_("k", first, last, dtype=w.idt) as k:
                gen.push()
                kf, pos = target_row(k)
                update(kf, pos, el)
                gen.pop()
        kernel, groups = w.build(), groups_for(ceil_div(inner, kb.workgroup[0]))
        code.launches += [Launch(kernel, w.bindings, groups, scalars=(k0,))
                          for k0 in range(0, nidx, SERIAL_UPDATES_PER_LAUNCH)]
    else:                                 # a thread per update
        t = w.thread()
        with kb.if_(binary("lt", t, nidx)):
            each_element(t)
        code.launches.append(Launch(w.build(), w.bindings, groups_for(ceil_div(nidx, kb.workgroup[0]))))
    return code


def generate_matmul(step, plan, style: KernelStyle) -> StepCode:
    """C[b, m, n] = sum_k A[b, m, k] B[b, k, n], one thread per output element, f32 accumulation for
    16-bit floats. (A tiled, shared-memory GEMM and the GEMV assets take over hot shapes.)

    On GPUs a K above SERIAL_UPDATES_PER_LAUNCH is walked over several launches of one kernel (each
    taking the next run of k, the running sums kept in a temporary between them): lavapipe ends an
    invocation's loops after 65535 iterations. The sums are added in the same order either way."""
    e = step.eqn
    a, b = e.inputs
    out = e.out.aval
    K = a.aval.shape[-1]
    total = out.size
    if total == 0:
        return StepCode()
    ctx = KernelContext(step, plan, style)
    kb, gen = ctx.kb, ctx.gen
    acc_t = dt.float32 if out.dtype in (dt.float16, dt.bfloat16) else out.dtype
    runs = 1 if style is KernelStyle.CPU else max(1, ceil_div(K, SERIAL_UPDATES_PER_LAUNCH))
    partial = ctx.temp_buffer("partial", acc_t, 0) if runs > 1 else None
    first = kb.scalar("first", ctx.idt) if runs > 1 else const(0, ctx.idt)
    t = ctx.thread()
    with kb.if_(binary("lt", t, total)):
        idx = unravel(ctx.coord("i", total, t), out.shape)
        acc = kb.local("acc", acc_t, const(0, acc_t))
        stop = K
        if runs > 1:
            with kb.if_(binary("gt", first, 0)):
                kb.assign(acc, kb.load(partial, t, acc_t))
            stop = kb.let("stop", binary("min", binary("add", first, SERIAL_UPDATES_PER_LAUNCH), K))
        with kb.for_("kk", first, stop, dtype=ctx.idt) as kk:
            gen.push()
            kf = ctx.coord("kk", K, kk)
            ai = _batch(idx[:-2], out.shape[:-2], a.aval.shape[:-2]) + [idx[-2], kf]
            bi = _batch(idx[:-2], out.shape[:-2], b.aval.shape[:-2]) + [kf, idx[-1]]
            prod = binary("mul", cast(gen.value(a, ai), acc_t), cast(gen.value(b, bi), acc_t))
            kb.assign(acc, binary("add", acc, prod))
            gen.pop()
        if runs > 1:
            with kb.if_(binary("lt", stop, K)):
                kb.store(partial, t, acc)
            with kb.else_():
                kb.store(ctx.out_names[0], t, cast(acc, out.dtype))
        else:
            kb.store(ctx.out_names[0], t, cast(acc, out.dtype))
    groups = groups_for(ceil_div(total, kb.workgroup[0]))
    if runs == 1:
        return StepCode([Launch(ctx.build(), ctx.bindings, groups)])
    kernel = ctx.build()
    return StepCode([Launch(kernel, ctx.bindings, groups, scalars=(k0,))
                     for k0 in range(0, K, SERIAL_UPDATES_PER_LAUNCH)], temps=[total * acc_t.itemsize])


def _batch(idx, out_batch, in_batch):
    lead = len(out_batch) - len(in_batch)
    return [Form(0, ()) if n == 1 else idx[lead + d] for d, n in enumerate(in_batch)]
