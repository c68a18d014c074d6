"""Matrix products: GEMM (n x n @ n x n), GEMV (n x k @ k), batched GEMM and a linear layer (`linear`:
relu(W @ x + b) on the GEMV shapes, whose bias and activation GPU GEMVs compute at their store), poot's
`pt.realize(a @ b)` (or
`(a @ b).numpy()` on the CPU) beside NumPy's BLAS on the CPU and PyTorch on CUDA (eager, torch.compile, and
`torch_graph`: 20 calls captured in one CUDA graph, the kernels' own rate), in the same process. A round
is about 50 ms of back-to-back calls, each result realized, and one synchronize at its end, for poot and
the baselines alike (`--number 1` instead waits for every call: its latency rather than its rate).

CPU GEMV rows carry their effective bandwidth (`gbps`: the matrix's bytes over the call's time) beside
the machine's NumPy copy rate measured in the same run (`copy_gbps`: bytes read plus bytes written per
second, 512 MB); `--cpu-gemv-paths generated,blas` adds a row per CPU GEMV path (POOT_CPU_GEMV: the
generated kernel, the host path that widens 16-bit matrices for BLAS), each a jitted call timed in turn
with the others and with `rowsum`, a poot row reduction reading the same bytes.

GPU options: `--gemv-path asset|generated` forces poot's GPU GEMV path (POOT_GPU_GEMV);
`--gemv-schedules "auto;256,1,2;32,8,1,4"` sweeps the generated GEMV's schedules (POOT_GPU_GEMV_SCHEDULE
values separated by semicolons, one row per schedule); `--jit-batch 5` adds a row for a jitted function
of that many GEMVs with one weight matrix (one replayed program per call, timed per GEMV). `kernel_s`: GPU
time of the call's kernels (on CUDA, captured `--graph-reps` times in one CUDA graph). Bytes: each operand
read once, the result written once; flops 2*m*n*k per product. On the CPU, bfloat16 baselines run NumPy on
float32 copies.

    python -m benchmarks.bench_matmul --cases gemm,gemv --sizes 1024,2048 --gemv-shapes 4096x4096
    python -m benchmarks.bench_matmul --devices cuda --dtypes bf16,f32 --gemv-shapes 4096x4096,14336x4096
    python -m benchmarks.bench_matmul --cases gemv --dtypes bf16,f32 --gemv-shapes 4096x4096,14336x4096 \
        --cpu-gemv-paths generated,blas --json cpu_gemv.json
"""
from __future__ import annotations

import os

import numpy as np

from benchmarks import common as C

DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64"}
DEFAULT_BASELINES = {"cpu": "numpy", "cuda": "torch,torch_compile,torch_graph"}   # other GPUs: numpy on the host


def np_dtype(dtype: str):
    import ml_dtypes

    return {"bfloat16": ml_dtypes.bfloat16}.get(DTYPES[dtype], DTYPES[dtype])


def operands(case: str, size, dtype: str):
    """Host arrays of `case`: (a, b) for 'gemm' (size n), 'gemv' (shape n x k) and 'bmm' (shape batch x m x
    k x n); 'linear' (shape n x k) adds the bias c."""
    rng = np.random.default_rng(0)
    if case == "gemm":
        shapes = [(size, size), (size, size)]
    elif case in ("gemv", "linear"):
        shapes = [tuple(size), (size[1],)] + ([(size[0],)] if case == "linear" else [])
    else:
        batch, m, k, n = size
        shapes = [(batch, m, k), (batch, k, n)]
    npd = np_dtype(dtype)
    return tuple(rng.standard_normal(s, dtype=np.float32).astype(npd) for s in shapes)


def product(xp, a, b, *bias):
    """What a case computes: a @ b, or for 'linear' the layer relu(a @ b + c) (torch.relu for torch, whose
    maximum takes no Python scalar)."""
    if not bias:
        return a @ b
    relu = getattr(xp, "relu", None)
    return relu(a @ b + bias[0]) if relu is not None else xp.maximum(a @ b + bias[0], 0)


def flops(a, b) -> float:
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    return 2.0 * int(np.prod(a.shape[:-2] or (1,))) * m * n * a.shape[-1]


def check(name: str, got, a, b, *bias) -> None:
    """poot's first rows against float64 NumPy, within the dtype's rounding of each product's terms (and
    of the bias added and the activation of a 'linear' case, which only narrow the differences)."""
    import ml_dtypes

    rows = min(8, a.shape[-2])
    if a.ndim == 3:
        a64, b64, g = a[:2, :rows].astype(np.float64), b[:2].astype(np.float64), np.asarray(got)[:2, :rows]
    else:
        a64, b64, g = a[:rows].astype(np.float64), b.astype(np.float64), np.asarray(got)[:rows]
    ref, scale = a64 @ b64, np.abs(a64) @ np.abs(b64)
    if bias:
        c = bias[0][:rows].astype(np.float64)
        ref, scale = np.maximum(ref + c, 0), scale + np.abs(c)
    eps = float(ml_dtypes.finfo(a.dtype).eps) if a.dtype not in (np.float32, np.float64) else 0.0
    bad = np.abs(g.astype(np.float64) - ref) > eps * np.abs(ref) + 8 * np.finfo(np.float32).eps * scale + 1e-30
    if bad.any():
        raise C.BenchmarkError(f"{name}: poot's result differs from NumPy's at {int(bad.sum())} elements")


def baseline_s(args, name: str, a, b, *bias) -> float | None:
    if name == "numpy":
        ops32 = [x if x.dtype in (np.float32, np.float64) else x.astype(np.float32) for x in (a, b, *bias)]
        call = lambda: product(np, *ops32)  # noqa: E731
        return C.median_s(args, call)
    torch = C.torch_cuda()
    if torch is None:
        return None
    from benchmarks import gpu_timing

    tdt = getattr(torch, str(np.dtype(a.dtype)) if a.dtype != np.dtype(np_dtype("bf16")) else "bfloat16")
    ts = [torch.from_numpy(x.astype(np.float32)).to("cuda", tdt) for x in (a, b, *bias)]
    if name == "torch_graph":
        return C.median(gpu_timing.torch_graph_s(torch, lambda: product(torch, *ts), repeat=args.repeat))
    f = torch.compile(lambda *xs: product(torch, *xs)) if name == "torch_compile" else (lambda *xs: product(torch, *xs))
    call = lambda: f(*ts)  # noqa: E731
    return C.median_s(args, call, torch.cuda.synchronize)


def poot_rows(args, kind: str, case: str, size, dtype: str, label: dict, baselines=None) -> tuple[list[dict], dict]:
    """Rows of poot's plain call (and of the jitted batch of GEMVs, timed per GEMV) against `baselines`
    ({name: seconds}; measured here when None); returns (rows, baselines)."""
    import poot as pt

    from benchmarks import gpu_timing

    a, b, *bias = operands(case, size, dtype)
    dev, _ = C.device_or_none(kind)
    sync = C.poot_sync(kind)
    params = {"case": case, "a": "x".join(map(str, a.shape)), "b": "x".join(map(str, b.shape)), "dtype": DTYPES[dtype],
              **label}
    nbytes = a.nbytes + b.nbytes + int(flops(a, b) / 2 / a.shape[-1]) * a.itemsize
    extra = {"bytes": nbytes, "flops": flops(a, b)}
    with pt.device(kind):
        pa, pb, *pbias = (pt.realize(pt.array(x)) for x in (a, b, *bias))
        call = (lambda: product(pt, pa, pb, *pbias).numpy()) if kind == "cpu" else \
            (lambda: pt.realize(product(pt, pa, pb, *pbias)))
        got = call() if kind == "cpu" else call().numpy()
        check(f"{case} {params['a']} @ {params['b']} {dtype} on {kind}", got, a, b, *bias)
        poot_s = C.median_s(args, call, sync)
        ks = None
        if kind == "cuda" and not args.no_kernel_time:
            ks = C.median(gpu_timing.cuda_graph_s(dev, call, reps=args.graph_reps, repeat=args.repeat))
        elif kind != "cpu" and not args.no_kernel_time:
            ks = gpu_timing.kernel_s(kind, dev, call)
        rows = [("", poot_s, ks)]
        if case == "gemv" and args.jit_batch > 1:
            per = args.jit_batch
            xs = [pb] + [pt.realize(pt.array(np.roll(b, i))) for i in range(1, per)]
            batch = pt.jit(lambda m, *vs: tuple(m @ v for v in vs))
            jcall = lambda: pt.realize(*batch(pa, *xs))  # noqa: E731
            s = C.median_s(args, jcall, sync) / per
            jks = gpu_timing.kernel_s(kind, dev, jcall) if kind != "cpu" and not args.no_kernel_time else None
            rows.append((f"-jit{per}", s, jks / per if jks else None))
    if baselines is None:
        names = C.comma_list(args.baselines or DEFAULT_BASELINES.get(kind, "numpy"))
        baselines = {n: baseline_s(args, n, a, b, *bias) for n in names}
    out = []
    for suffix, s, k in rows:
        out += C.rows_against(f"matmul-{case}{suffix}", params, kind, s, baselines, kernel_s=k, **extra)
    return out, baselines


def copy_gbps(nbytes: int = 512 << 20, repeat: int = 5) -> float:
    """GB/s of a NumPy copy of `nbytes` (read plus write), median of `repeat`."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    return 2 * nbytes / C.median(C.time_call(lambda: np.copyto(dst, src), repeat=repeat)) / 1e9


def cpu_gemv_rows(args, size, dtype: str, copy: float) -> list[dict]:
    """One row per CPU GEMV path of `args.cpu_gemv_paths` plus the `rowsum` read, timed in turn (see
    the module docstring), each against NumPy's BLAS on the same (float32) operands."""
    import poot as pt

    a, b = operands("gemv", size, dtype)
    pa, pb = pt.realize(pt.array(a)), pt.realize(pt.array(b))
    calls = {}
    for path in args.cpu_gemv_paths:
        with C.env_setting("POOT_CPU_GEMV", path):  # each path's program is traced and built under its setting
            f = pt.jit(lambda m, v: m @ v)
            check(f"gemv {size} {dtype} path {path}", f(pa, pb).numpy(), a, b)
        calls[path] = lambda f=f: f(pa, pb).numpy()
    rowsum = pt.jit(lambda m: m.sum(axis=1))
    calls["rowsum"] = lambda: rowsum(pa).numpy()
    a32, b32 = (x if x.dtype == np.float32 else x.astype(np.float32) for x in (a, b))
    calls["numpy"] = lambda: a32 @ b32
    med = C.interleaved_medians(calls, repeat=args.repeat, warmup=max(args.warmup, 1))
    params = {"case": "gemv", "a": "x".join(map(str, a.shape)), "b": "x".join(map(str, b.shape)),
              "dtype": DTYPES[dtype]}
    rows = []
    for name, s in med.items():
        if name == "numpy":
            continue
        rows += C.rows_against("matmul-gemv-cpu", {**params, "path": name}, "cpu", s, {"numpy": med["numpy"]},
                               bytes=a.nbytes, gbps=a.nbytes / s / 1e9, copy_gbps=copy)
    for r in rows:
        print(f"  cpu gemv {params['a']} {dtype} {r['params']['path']:>9s}: {r['poot_s'] * 1e3:8.3f} ms "
              f"{r['gbps']:6.1f} GB/s read (copy {copy:.1f} GB/s read+write)", flush=True)
    return rows


def gemm_size(size) -> int:
    """The n of an n x n GEMM from a --sizes entry: n, or the square shape n x n."""
    if isinstance(size, tuple):
        if len(size) != 2 or size[0] != size[1]:
            raise SystemExit(f"--sizes {'x'.join(map(str, size))}: a GEMM size is n or n x n (square); "
                             "use --bmm-shapes for other shapes")
        return size[0]
    return size


def cases(args):
    for case in args.cases:
        if case == "gemm":
            yield from (("gemm", gemm_size(s)) for s in args.sizes)
        elif case in ("gemv", "linear"):
            yield from ((case, s) for s in args.gemv_shapes)
        elif case == "bmm":
            yield from (("bmm", s) for s in args.bmm_shapes)
        else:
            raise C.BenchmarkError(f"bench_matmul: unknown case {case!r} (gemm, gemv, linear, bmm)")


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1024,2048", dtypes="f32", repeat=5, number=0)
    ap.add_argument("--cases", type=C.comma_list, default=["gemm", "gemv"],
                    help="gemm, gemv, bmm, linear (relu(W @ x + b) on the GEMV shapes)")
    ap.add_argument("--gemv-shapes", type=C.parse_sizes,
                    default=C.parse_sizes("256x256,1024x1024,4096x4096,512x8192,8192x512"))
    ap.add_argument("--bmm-shapes", type=C.parse_sizes, default=C.parse_sizes("32x1024x128x1024"),
                    help="batch x m x k x n")
    ap.add_argument("--baselines", default=None, help="comma list (default per device: "
                    + "; ".join(f"{k}: {v}" for k, v in DEFAULT_BASELINES.items()) + "; other GPUs: numpy on the host)")
    ap.add_argument("--gemv-path", choices=["auto", "asset", "generated"], default="auto",
                    help="force poot's GPU GEMV path (POOT_GPU_GEMV)")
    ap.add_argument("--gemv-schedules", type=lambda t: [s.strip() for s in t.split(";") if s.strip()], default=[],
                    help="GPU GEMV schedules to sweep, separated by semicolons (POOT_GPU_GEMV_SCHEDULE values "
                         "such as 256,1,2), one row each")
    ap.add_argument("--jit-batch", type=int, default=0, help="GEMVs per jitted call for the -jit rows (0: none)")
    ap.add_argument("--graph-reps", type=int, default=20, help="launches per CUDA graph for kernel_s on CUDA")
    ap.add_argument("--no-kernel-time", action="store_true", help="skip the GPU kernel_s column")
    ap.add_argument("--cpu-gemv-paths", type=C.comma_list, default=[],
                    help="CPU GEMV paths to time in turn (POOT_CPU_GEMV values: generated, blas, asset), one row each")
    args = ap.parse_args(argv)
    bad = [d for d in args.dtypes if d not in DTYPES]
    if bad:
        ap.error(f"unknown dtypes {bad}; known: {', '.join(DTYPES)}")
    os.environ["POOT_GPU_GEMV"] = args.gemv_path
    rows = []
    copy = None
    for kind in C.available(args.devices):
        for case, size in cases(args):
            for dtype in args.dtypes:
                label = {"gemv_path": args.gemv_path} if args.gemv_path != "auto" else {}
                new, measured = poot_rows(args, kind, case, size, dtype, label)
                rows += new
                if case == "gemv" and kind == "cpu" and args.cpu_gemv_paths:
                    copy = copy or copy_gbps()
                    rows += cpu_gemv_rows(args, size, dtype, copy)
                if case != "gemv" or kind == "cpu":
                    continue
                for schedule in args.gemv_schedules:
                    with C.env_setting("POOT_GPU_GEMV_SCHEDULE", schedule):
                        rows += poot_rows(args, kind, case, size, dtype, {**label, "schedule": schedule}, measured)[0]
    return C.finish(args, "bench_matmul", rows)


if __name__ == "__main__":
    main()
