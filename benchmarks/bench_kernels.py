"""Kernel-level benchmarks: hand-built KIR kernels launched directly (no tracing, no planning), what the
compiler and the launch path cost, and the same SPIR-V kernels on the wgpu and raw Vulkan devices side by
side.

- chain: `2*a + b*c - exp(a)/(1 + b*b)` over float32 as one KIR kernel -- on the CPU each of `--threads`
  threads walks a chunk (beside NumPy and numexpr on as many threads); on a GPU one element per thread,
  with and without bounds checks (beside the device's own copy of the same bytes);
- sum: a GPU-shaped partial-sum kernel (strided accumulation, shared-memory tree), beside the copy;
- copy: out[i] = x[i] one element per thread, beside the device's buffer-to-buffer copy;
- gemv-asset: the committed GEMV asset launched on the CPU, beside NumPy's BLAS;
- compile: first-compile latency of a small elementwise kernel (caches off);
- dispatch: the per-launch cost of a compiled 10-element kernel;
- disk-hit: key + read + verify + link of a cached object in a fresh process (after imports and the
  one-time engine creation).

`poot_s` is the wall clock of the launch with its synchronize; on a GPU `kernel_s` is the kernel alone
by device timestamps (benchmarks/gpu_timing.py).

    python -m benchmarks.bench_kernels --sizes 10M --threads 2 --json out.json
    python -m benchmarks.bench_kernels --devices wgpu,vulkan --sizes 64M --cases chain,sum,copy
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks import common as C

WG = 256
GROUPS = 1024
CASES = ("chain", "sum", "copy", "gemv-asset", "compile", "dispatch", "disk-hit")


def kir():
    from poot import dtypes as dt
    from poot.jit.kir import builder as B
    from poot.jit.kir.model import Access, Binary, Len

    return dt, B, Access, Binary, Len


def chain_value(B, Binary, f, va, vb, vc):
    return B.sub(B.add(B.mul(2.0, va), B.mul(vb, vc)), Binary("div", B.unary("exp", va), B.add(1.0, B.mul(vb, vb)), f))


def cpu_chain_kernel(name="chain"):
    """Workgroup (1,1,1): thread t walks elements [t*chunk, min((t+1)*chunk, n)) (the CPU shape)."""
    dt, B, Access, Binary, Len = kir()
    f = dt.float32
    kb = B.KernelBuilder(name, workgroup=(1, 1, 1), checks=False)
    a, b, c = (kb.buffer(n, f, Access.READ) for n in "abc")
    out = kb.buffer("out", f, Access.WRITE)
    chunk = kb.scalar("chunk", dt.uint32)
    start = kb.let("start", B.mul(B.index("thread", 0), chunk))
    stop = kb.let("stop", Binary("min", B.add(start, chunk), Len(out), dt.uint32))
    with kb.for_("i", start, stop) as i:
        kb.store(out, i, chain_value(B, Binary, f, kb.load(a, i, f), kb.load(b, i, f), kb.load(c, i, f)))
    return kb.build()


def gpu_chain_kernel(checks: bool):
    dt, B, Access, Binary, Len = kir()
    f = dt.float32
    kb = B.KernelBuilder(f"bench_chain_{'checked' if checks else 'unchecked'}", workgroup=(WG, 1, 1), checks=checks)
    a, b, c = (kb.buffer(n, f, Access.READ) for n in "abc")
    o = kb.buffer("out", f, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        kb.store(o, i, chain_value(B, Binary, f, kb.load(a, i, f), kb.load(b, i, f), kb.load(c, i, f)))
    return kb.build()


def copy_kernel():
    dt, B, Access, _, Len = kir()
    f = dt.float32
    kb = B.KernelBuilder("bench_copy", workgroup=(WG, 1, 1), checks=False)
    x, o = kb.buffer("x", f, Access.READ), kb.buffer("out", f, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        kb.store(o, i, kb.load(x, i, f))
    return kb.build()


def partial_sums_kernel():
    dt, B, Access, _, Len = kir()
    f, u = dt.float32, dt.uint32
    kb = B.KernelBuilder("bench_partial_sums", workgroup=(WG, 1, 1), checks=False)
    x, o = kb.buffer("x", f, Access.READ), kb.buffer("partials", f, Access.WRITE)
    tile = kb.shared("tile", f, WG)
    lid = kb.let("lid", B.index("local", 0))
    stride = kb.let("stride", B.mul(B.index("num_groups", 0), B.const(WG, u)))
    acc = kb.local("acc", f, 0.0)
    j = kb.local("j", u, B.index("thread", 0))
    with kb.while_(B.lt(j, Len(x))):
        kb.assign(acc, B.add(acc, kb.load(x, j, f)))
        kb.assign(j, B.add(j, stride))
    kb.store(tile, lid, acc)
    kb.barrier()
    s = kb.local("s", u, WG // 2)
    with kb.while_(B.binary("gt", s, B.const(0, u))):
        with kb.if_(B.lt(lid, s)):
            kb.store(tile, lid, B.add(kb.load(tile, lid, f), kb.load(tile, B.add(lid, s), f)))
        kb.barrier()
        kb.assign(s, B.binary("shr", s, B.const(1, u)))
    with kb.if_(B.binary("eq", lid, B.const(0, u))):
        kb.store(o, B.index("group", 0), kb.load(tile, B.const(0, u), f))
    return kb.build()


def upload(dev, array):
    buf = dev.allocate(array.nbytes)
    dev.write(buf, array)
    return buf


def prepared(dev, kernel, buffers, groups: int, lengths):
    """[(program, dispatch arguments, grid)] of `kernel` over `buffers` (meta and trap added) on a GPU."""
    compile_kernel = C.runtime("compile").compile_kernel
    pack_meta = C.runtime("abi").pack_meta
    trap_buffer = C.runtime("launch").trap_buffer
    program = dev.load(compile_kernel(kernel, dev.caps.target, arch=dev.caps.compile_arch))
    return [(program, list(buffers) + [upload(dev, pack_meta(kernel, lengths, (), groups)), trap_buffer(dev)],
             (groups, 1, 1))]


def read_f32(dev, buf):
    return np.array(dev.read(buf)).view(np.float32)


def gpu_rows(args, kind: str, case: str, n: int) -> list[dict]:
    from benchmarks import gpu_timing

    dev, _ = C.device_or_none(kind)
    n = min(n, dev.caps.max_buffer_bytes // 4 // 4096 * 4096)
    rng = np.random.default_rng(0)
    variants = []
    if case == "chain":
        host = [rng.random(n, dtype=np.float32) for _ in range(3)]
        bufs = [upload(dev, x) for x in host] + [dev.allocate(4 * n)]
        want = chain_value_np(*host)
        for checks in (False, True):
            variants.append((f"{'checked' if checks else 'unchecked'}",
                             prepared(dev, gpu_chain_kernel(checks), bufs, -(-n // WG), [n] * 4), 16 * n,
                             lambda: C.check_close("chain kernel", read_f32(dev, bufs[3]), want, 1e-5, 1e-5)))
    elif case == "sum":
        host = rng.random(n, dtype=np.float32)
        out = dev.allocate(4 * GROUPS)
        variants.append(("", prepared(dev, partial_sums_kernel(), [upload(dev, host), out], GROUPS, [n, GROUPS]), 4 * n,
                         lambda: C.check_close("sum kernel", read_f32(dev, out).astype(np.float64).sum(),
                                               host.astype(np.float64).sum(), 1e-5)))
    else:
        x, out = upload(dev, np.ones(n, np.float32)), dev.allocate(4 * n)
        variants.append(("", prepared(dev, copy_kernel(), [x, out], -(-n // WG), [n, n]), 8 * n,
                         lambda: C.check_close("copy kernel", read_f32(dev, out)[::4099],
                                               np.ones(n, np.float32)[::4099], 0)))
    rows = []
    for label, launches, nbytes, check in variants:
        def call():
            for p, b, g in launches:
                dev.dispatch(p, b, g)
            dev.synchronize()
        call()
        check()
        poot_s = C.median_s(args, call)
        ks = None
        if kind == "wgpu" and "timestamp-query" in dev.features:
            ks = C.median(gpu_timing.wgpu_launches_s(dev, launches, args.repeat))
        elif kind == "vulkan" and dev.caps.extra.get("timestamps"):
            ks = C.median(gpu_timing.vulkan_launches_s(dev, launches, args.repeat))
        elif kind == "cuda":
            ks = gpu_timing.kernel_s(kind, dev, call, args.repeat)
        params = {"n": n, "dtype": "float32", **({"checks": label} if label else {})}
        rows += C.rows_against(f"kernel-{case}", params, kind, poot_s,
                               {"copy": gpu_timing.copy_s(kind, dev, nbytes)}, kernel_s=ks, bytes=nbytes)
    return rows


def chain_value_np(a, b, c):
    a, b, c = (x.astype(np.float64) for x in (a, b, c))
    return 2 * a + b * c - np.exp(a) / (1 + b * b)


def cpu_rows(args, case: str, n: int) -> list[dict]:
    from poot import devices

    launch = C.runtime("launch").launch
    dev = devices.get("cpu")
    threads = args.threads or C.cpu_threads()
    if case == "chain":
        rng = np.random.default_rng(0)
        a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        out = np.empty(n, np.float32)
        bufs = [dev.wrap(x) for x in (a, b, c, out)]
        k, chunk = cpu_chain_kernel(), -(-n // (16 * threads)) * 16
        call = lambda: launch(dev, k, bufs, {"chunk": chunk}, threads)  # noqa: E731
        call()
        C.check_close("cpu chain kernel", out, chain_value_np(a, b, c), 1e-5, 1e-5)
        base = {"numpy": lambda: np.subtract(2 * a + b * c, np.exp(a) / (1 + b * b), out=out)}
        ne = C.numexpr_module(threads)
        if ne is not None:
            base["numexpr"] = lambda: ne.evaluate("2*a + b*c - exp(a)/(1 + b*b)", local_dict={"a": a, "b": b, "c": c},
                                                  out=out)
        params, extra = {"n": n, "dtype": "float32", "threads": threads}, {"bytes": 16 * n}
    elif case == "gemv-asset":
        side = int(round(n ** 0.5)) // 16 * 16 or 16
        rng = np.random.default_rng(0)
        w, x = rng.standard_normal((side, side)).astype(np.float32), rng.standard_normal(side).astype(np.float32)
        y = np.zeros(side, np.float32)
        kernel = C.runtime("matvec").asset_kernel()
        bufs = [dev.wrap(w), dev.wrap(x), dev.wrap(y)]
        call = lambda: launch(dev, kernel, bufs, (), -(-side // kernel.workgroup[1]))  # noqa: E731
        call()
        C.check_close("gemv asset", y, w.astype(np.float64) @ x, 1e-4, 1e-4 * side ** 0.5)
        base = {"numpy": lambda: np.matmul(w, x, out=y)}
        params, extra = {"shape": f"{side}x{side}", "dtype": "float32"}, {"bytes": w.nbytes + 2 * x.nbytes}
    elif case == "compile":
        return [C.row("kernel-compile", {"kernel": "c = a + b, bounds-checked"}, "cpu", compile_s(args.repeat))]
    elif case == "dispatch":
        _, B, Access, _, Len = kir()
        from poot import dtypes as dt

        kb = B.KernelBuilder("tiny", workgroup=(16, 1, 1))
        xb, zb = kb.buffer("x", dt.float32, Access.READ), kb.buffer("z", dt.float32, Access.WRITE)
        i = kb.let("i", B.index("thread", 0))
        with kb.if_(B.lt(i, Len(zb))):
            kb.store(zb, i, B.add(kb.load(xb, i, dt.float32), 1.0))
        k = kb.build()
        a, o = np.ones(10, np.float32), np.zeros(10, np.float32)
        bufs = [dev.wrap(a), dev.wrap(o)]
        call = lambda: launch(dev, k, bufs, (), 1)  # noqa: E731
        call()
        C.check_close("tiny kernel", o, a + 1, 0)
        base, params, extra = {"numpy": lambda: np.add(a, 1.0, out=o)}, {"n": 10}, {}
    elif case == "disk-hit":
        return [C.row("kernel-disk-hit", {"processes": args.repeat}, "cpu", disk_hit_s(args.repeat))]
    else:
        return []
    poot_s = C.median_s(args, call)
    measured = {name: C.median_s(args, f) for name, f in base.items()}
    return C.rows_against(f"kernel-{case}", params, "cpu", poot_s, measured, **extra)


def compile_s(repeat: int) -> float:
    """First-compile latency (caches off) of `c = a + b` with a bounds check, a new kernel name each time."""
    import time

    _, B, Access, _, Len = kir()
    from poot import dtypes as dt

    compile_kernel = C.runtime("compile").compile_kernel

    def make(name):
        f = dt.float32
        kb = B.KernelBuilder(name, workgroup=(64, 1, 1))
        x, y, z = kb.buffer("a", f, Access.READ), kb.buffer("b", f, Access.READ), kb.buffer("c", f, Access.WRITE)
        i = kb.let("i", B.index("thread", 0))
        with kb.if_(B.lt(i, Len(z))):
            kb.store(z, i, B.add(kb.load(x, i, f), kb.load(y, i, f)))
        return kb.build()

    compile_kernel(make("add_warm"), use_cache=False)
    samples = []
    for r in range(repeat):
        k = make(f"add{r}")
        t0 = time.perf_counter()
        compile_kernel(k, use_cache=False)
        samples.append(time.perf_counter() - t0)
    return C.median(samples)


_DISK_HIT = """
import sys, time
sys.path.insert(0, {root!r})
from poot import devices
from benchmarks import common as C
from benchmarks.bench_kernels import cpu_chain_kernel
compile_kernel = C.runtime("compile").compile_kernel
k = cpu_chain_kernel("chain_disk")
C.runtime("launch")                              # imports: once per process, not per kernel
dev = devices.get("cpu"); dev._engine()          # the MCJIT engine: likewise
t0 = time.perf_counter()
dev.load(compile_kernel(k))
print(time.perf_counter() - t0)
"""


def disk_hit_s(repeat: int) -> float:
    cache_dir = tempfile.mkdtemp()
    env = dict(os.environ, POOT_CACHE_DIR=cache_dir)
    script = _DISK_HIT.format(root=C.ROOT)
    samples = []
    for r in range(repeat + 1):                   # the first process fills the cache
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        if out.returncode:
            raise C.BenchmarkError(f"disk-hit: the child process failed: {out.stderr.strip()[-400:]}")
        if r:
            samples.append(float(out.stdout.split()[-1]))
    return C.median(samples)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="10M", repeat=7, number=0)
    C.cases_option(ap, CASES, more_help=" (chain on every device; sum and copy on GPUs; the rest on the CPU)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads for the chain kernel and numexpr "
                    "(default: every core poot may use)")
    args = ap.parse_args(argv)
    rows = []
    for kind in C.available(args.devices):
        for case in args.cases:
            sizes = args.sizes if case in ("chain", "sum", "copy", "gemv-asset") else [0]
            for n in sizes:
                if kind == "cpu" and case not in ("sum", "copy"):
                    rows += cpu_rows(args, case, int(np.prod(n)))
                elif kind != "cpu" and case in ("chain", "sum", "copy"):
                    rows += gpu_rows(args, kind, case, int(np.prod(n)))
    return C.finish(args, "bench_kernels", rows)


if __name__ == "__main__":
    main()
