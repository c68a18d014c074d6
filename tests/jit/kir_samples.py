"""Sample KIR kernels shared by the jit tests (verifier, JSON, lowering, ptxas, CPU runs)."""
from __future__ import annotations

from poot import dtypes as dt
from poot.jit.kir import builder as B
from poot.jit.kir.model import (Access, Barrier, Binary, Break, Const, Continue, If, Index, Len, Load,
                                Read, Return, Store, Unary)

IN, OUT, INOUT = Access.READ, Access.WRITE, Access.READ_WRITE


def add_kernel(dtype=dt.float32, wg=64, checks=True):
    """c[i] = a[i] + b[i] for i < len(c), one element per thread."""
    kb = B.KernelBuilder(f"add_{dtype.short}", workgroup=(wg, 1, 1), checks=checks)
    a, b, c = kb.buffer("a", dtype, IN), kb.buffer("b", dtype, IN), kb.buffer("c", dtype, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(c))):
        kb.store(c, i, B.add(kb.load(a, i, dtype), kb.load(b, i, dtype)))
    return kb.build()


def unary_kernel(op, dtype=dt.float32, wg=64):
    """y[i] = op(x[i])."""
    kb = B.KernelBuilder(f"u_{op}_{dtype.short}", workgroup=(wg, 1, 1))
    x, y = kb.buffer("x", dtype, IN), kb.buffer("y", dtype, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(y))):
        kb.store(y, i, B.unary(op, kb.load(x, i, dtype)))
    return kb.build()


def binary_kernel(op, dtype=dt.float32, out_dtype=None, wg=64):
    """z[i] = op(x[i], y[i])."""
    kb = B.KernelBuilder(f"b_{op}_{dtype.short}", workgroup=(wg, 1, 1))
    x, y = kb.buffer("x", dtype, IN), kb.buffer("y", dtype, IN)
    z = kb.buffer("z", out_dtype or (dt.bool_ if op in ("eq", "ne", "lt", "le", "gt", "ge") else dtype), OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(z))):
        kb.store(z, i, B.binary(op, kb.load(x, i, dtype), kb.load(y, i, dtype)))
    return kb.build()


def cast_kernel(src, dst, wg=64):
    kb = B.KernelBuilder(f"cast_{src.short}_{dst.short}", workgroup=(wg, 1, 1))
    x, y = kb.buffer("x", src, IN), kb.buffer("y", dst, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(y))):
        kb.store(y, i, B.cast(kb.load(x, i, src), dst))
    return kb.build()


def chain_kernel(checks=False):
    """out = 2*a + b*c - exp(a)/(1 + b*b), CPU style: workgroup (1,1,1), each thread walks a chunk of
    `chunk` elements (a scalar param) with an inner For loop."""
    f = dt.float32
    kb = B.KernelBuilder("chain", workgroup=(1, 1, 1), checks=checks)
    a, b, c, o = (kb.buffer("a", f, IN), kb.buffer("b", f, IN), kb.buffer("c", f, IN), kb.buffer("out", f, OUT))
    chunk = kb.scalar("chunk", dt.uint32)
    n = Len(o)
    start = kb.let("start", B.mul(B.index("thread", 0), chunk))
    stop = kb.let("stop", Binary("min", B.add(start, chunk), n, dt.uint32))
    with kb.for_("i", start, stop) as i:
        va, vb, vc = kb.load(a, i, f), kb.load(b, i, f), kb.load(c, i, f)
        e = B.unary("exp", va)
        val = B.sub(B.add(B.mul(2.0, va), B.mul(vb, vc)),
                    Binary("div", e, B.add(1.0, B.mul(vb, vb)), f))
        kb.store(o, i, val)
    return kb.build()


def multi_acc_sum_kernel(nacc=4):
    """out[t] = sum of x over thread t's chunk, with `nacc` independent accumulators."""
    f = dt.float32
    kb = B.KernelBuilder("msum", workgroup=(1, 1, 1), checks=False)
    x, o = kb.buffer("x", f, IN), kb.buffer("out", f, OUT)
    chunk = kb.scalar("chunk", dt.uint32)     # a multiple of nacc
    t = kb.let("t", B.index("thread", 0))
    base = kb.let("base", B.mul(t, chunk))
    accs = [kb.local(f"acc{j}", f, 0.0) for j in range(nacc)]
    with kb.for_("k", B.const(0, dt.uint32), B.binary("div", chunk, nacc)) as k:
        for j, acc in enumerate(accs):
            idx = B.add(base, B.add(B.mul(k, nacc), j))
            kb.assign(acc, B.add(acc, kb.load(x, idx, f)))
    total = accs[0]
    for acc in accs[1:]:
        total = B.add(total, acc)
    kb.store(o, t, total)
    return kb.build()


def reduce_shared_kernel(wg=64, dtype=dt.float32):
    """out[group] = sum of x over the group's wg elements: shared-memory tree reduction with barriers."""
    kb = B.KernelBuilder(f"rsum_{dtype.short}", workgroup=(wg, 1, 1))
    x, o = kb.buffer("x", dtype, IN), kb.buffer("out", dtype, OUT)
    sh = kb.shared("tile", dtype, wg)
    lid = kb.let("lid", B.index("local", 0))
    i = kb.let("i", B.index("thread", 0))
    kb.store(sh, lid, B.select(B.lt(i, Len(x)), kb.load(x, B.select(B.lt(i, Len(x)), i, B.const(0, dt.uint32)), dtype),
                               B.const(0, dtype)))
    kb.barrier()
    s = kb.local("s", dt.uint32, wg // 2)
    with kb.while_(B.binary("gt", s, B.const(0, dt.uint32))):
        with kb.if_(B.lt(lid, s)):
            kb.store(sh, lid, B.add(kb.load(sh, lid, dtype), kb.load(sh, B.add(lid, s), dtype)))
        kb.barrier()
        kb.assign(s, B.binary("shr", s, B.const(1, dt.uint32)))
    with kb.if_(B.binary("eq", lid, B.const(0, dt.uint32))):
        kb.store(o, B.index("group", 0), kb.load(sh, B.const(0, dt.uint32), dtype))
    return kb.build()


def atomic_sum_kernel(dtype=dt.float32):
    kb = B.KernelBuilder(f"asum_{dtype.short}", workgroup=(64, 1, 1))
    x, o = kb.buffer("x", dtype, IN), kb.buffer("out", dtype, INOUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(x))):
        kb.atomic_add(o, B.const(0, dt.uint32), kb.load(x, i, dtype))
    return kb.build()


def axpy_kernel():
    """y[i] = alpha * x[i] + y[i] + f64(offset) for i < n (scalars: f32 alpha, i64 offset, u32 n)."""
    f = dt.float32
    kb = B.KernelBuilder("axpy", workgroup=(32, 1, 1))
    x, y = kb.buffer("x", f, IN), kb.buffer("y", f, INOUT)
    alpha, off, n = kb.scalar("alpha", f), kb.scalar("offset", dt.int64), kb.scalar("n", dt.uint32)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, n)):
        kb.store(y, i, B.add(B.add(B.mul(alpha, kb.load(x, i, f)), kb.load(y, i, f)), B.cast(off, f)))
    return kb.build()


def loops_kernel():
    """out[t] = sum over j in range(t) of j, skipping j % 3 == 1, stopping when the sum passes 100
    (For, While, Break, Continue, early Return for t >= len)."""
    u = dt.uint32
    kb = B.KernelBuilder("loops", workgroup=(16, 1, 1))
    o = kb.buffer("out", u, OUT)
    t = kb.let("t", B.index("thread", 0))
    with kb.if_(B.binary("ge", t, Len(o))):
        kb.ret()
    acc = kb.local("acc", u, 0)
    with kb.for_("j", B.const(0, u), t) as j:
        with kb.if_(B.binary("eq", B.binary("rem", j, B.const(3, u)), B.const(1, u))):
            kb.cont()
        kb.assign(acc, B.add(acc, j))
        with kb.if_(B.binary("gt", acc, B.const(100, u))):
            kb.brk()
    w = kb.local("w", u, 0)
    with kb.while_(B.lt(w, B.const(3, u))):
        kb.assign(w, B.add(w, B.const(1, u)))
    kb.store(o, t, B.add(acc, w))
    return kb.build()


def grid3d_kernel():
    """out[z, y, x] = x + 10*y + 100*z over a 3-D grid of (4,2,2) workgroups."""
    u = dt.uint32
    kb = B.KernelBuilder("grid3d", workgroup=(4, 2, 2))
    o = kb.buffer("out", u, OUT)
    x, y, z = (kb.let(n, B.index("thread", a)) for a, n in enumerate("xyz"))
    nx = B.mul(B.index("num_groups", 0), B.const(4, u))
    ny = B.mul(B.index("num_groups", 1), B.const(2, u))
    kb.store(o, B.add(x, B.mul(nx, B.add(y, B.mul(ny, z)))),
             B.add(x, B.add(B.mul(y, B.const(10, u)), B.mul(z, B.const(100, u)))))
    return kb.build()


def all_kernels():
    """(name, kernel) for every sample: what the lowering / ptxas tests iterate over."""
    ks = [add_kernel(), add_kernel(dt.float16), add_kernel(dt.bfloat16), add_kernel(dt.int64), add_kernel(dt.float64),
          chain_kernel(), multi_acc_sum_kernel(), reduce_shared_kernel(), atomic_sum_kernel(),
          atomic_sum_kernel(dt.int32), axpy_kernel(), loops_kernel(), grid3d_kernel(),
          unary_kernel("sin"), unary_kernel("erf", dt.float64), binary_kernel("pow"),
          binary_kernel("div", dt.int32), binary_kernel("shr", dt.int16), binary_kernel("max", dt.bfloat16),
          binary_kernel("rem"), binary_kernel("rem", dt.float64), binary_kernel("rem", dt.float16),
          cast_kernel(dt.float32, dt.int8), cast_kernel(dt.float64, dt.bfloat16), cast_kernel(dt.bool_, dt.float16)]
    return [(k.name, k) for k in ks]


def multi_acc_sum_kernel64(nacc=4):
    """As multi_acc_sum_kernel, with 64-bit index arithmetic (what lets LLVM prove the loads of one
    iteration consecutive and vectorize them: 32-bit index math may wrap)."""
    f, u64 = dt.float32, dt.uint64
    kb = B.KernelBuilder("msum64", workgroup=(1, 1, 1), checks=False)
    x, o = kb.buffer("x", f, IN), kb.buffer("out", f, OUT)
    chunk = kb.scalar("chunk", u64)
    t = kb.let("t", B.index("thread", 0))
    base = kb.let("base", B.mul(B.cast(t, u64), chunk))
    accs = [kb.local(f"acc{j}", f, 0.0) for j in range(nacc)]
    with kb.for_("k", B.const(0, u64), B.binary("div", chunk, nacc)) as k:
        for j, acc in enumerate(accs):
            idx = B.add(base, B.add(B.mul(k, nacc), j))
            kb.assign(acc, B.add(acc, kb.load(x, idx, f)))
    total = accs[0]
    for acc in accs[1:]:
        total = B.add(total, acc)
    kb.store(o, t, total)
    return kb.build()
