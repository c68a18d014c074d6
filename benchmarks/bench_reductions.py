"""Reductions and row-wise normalizations over float32 (or bfloat16: `--dtypes f32,bf16`): sum / mean / max
of a flat array, sum and max along each axis of a matrix, softmax and layer_norm (no affine parameters, eps
1e-5) over its rows. poot's call beside NumPy, plain C loops on every core (`c`: benchmarks/ceiling.c,
what the memory gives: a reduction reads each element once and computes almost nothing) and Numba row
loops on the CPU; PyTorch eager and torch.compile on CUDA; the device's own copy of the same bytes (`copy`)
on the GPUs.

`--split-pieces 4096,1024,512` reruns the flat and axis reductions with the split reduction's partials
per row capped at each value (poot's codegen constant MAX_PIECES_GPU, or MAX_PIECES on the CPU), to
retune it. Bytes: the input read once, the output written once.

    python -m benchmarks.bench_reductions --sizes 1e8 --shapes 4096x4096 --json out.json
    python -m benchmarks.bench_reductions --devices cuda --sizes 256M --shapes 16384x16384,8192x8192
    python -m benchmarks.bench_reductions --devices vulkan --dtypes f32,bf16 --ops sum-axis1,softmax
(numba and the C loops run float32 only.)
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from benchmarks import common as C

DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}

FLAT = ("sum", "mean", "max")
AXIS = ("sum-axis0", "sum-axis1", "max-axis0", "max-axis1")
ROWS = ("softmax", "layer_norm")
DEFAULT_BASELINES = {"cpu": "numpy,c,numba", "cuda": "torch,torch_compile,copy"}


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


def split_op(op: str):
    """('sum', None) for a flat op, ('sum', 0) for 'sum-axis0'."""
    return (op.split("-axis")[0], int(op[-1])) if "-axis" in op else (op, None)


def poot_fn(op: str, pt):
    if op == "softmax":
        return lambda x: pt.nn.softmax(x, axis=-1)
    if op == "layer_norm":
        return lambda x: pt.nn.layer_norm(x, eps=1e-5)
    name, axis = split_op(op)
    return lambda x: getattr(x, name)() if axis is None else getattr(x, name)(axis=axis)


def numpy_fn(op: str):
    if op == "softmax":
        return np_softmax
    if op == "layer_norm":
        return np_layer_norm
    name, axis = split_op(op)
    return lambda x: getattr(x, name)() if axis is None else getattr(x, name)(axis=axis)


def numba_rows(numba, op: str):
    """Softmax / layer_norm of each row as a Numba loop parallel over rows."""
    if op == "softmax":
        @numba.njit(parallel=True)
        def kernel(x, out):
            for r in numba.prange(x.shape[0]):
                e = np.exp(x[r] - x[r].max())
                out[r] = e / e.sum()
    else:
        @numba.njit(parallel=True)
        def kernel(x, out):
            for r in numba.prange(x.shape[0]):
                d = x[r] - x[r].mean()
                out[r] = d / np.sqrt((d * d).mean() + np.float32(1e-5))
    return kernel


def baseline_call(name: str, op: str, x: np.ndarray):
    """(call, sync) of baseline `name`, or None where it is missing or has no such operation."""
    if name == "numpy":
        f = numpy_fn(op)
        return (lambda: f(x)), None
    if x.dtype != np.float32 and name in ("c", "numba"):
        return None
    if name == "c":
        lib = C.c_ceiling()
        if lib is None or op in ROWS:
            return None
        base, axis = split_op(op)
        if axis is None:
            div = x.size if base == "mean" else 1
            return (lambda: lib.full_reduce(x.ctypes.data, x.size, base == "max") / div), None
        out = np.empty(x.shape[1 - axis], np.float32)
        return (lambda: lib.axis_reduce(x.ctypes.data, x.shape[0], x.shape[1], axis, base == "max",
                                        out.ctypes.data)), None
    if name == "numba":
        numba = C.numba_module()
        if numba is None or op not in ROWS:
            return None
        kernel, out = numba_rows(numba, op), np.empty_like(x)
        return (lambda: kernel(x, out)), None
    if name in ("torch", "torch_compile"):
        torch = C.torch_cuda()
        if torch is None:
            return None
        tx = torch.from_numpy(x.astype(np.float32)).cuda().to(
            torch.bfloat16 if x.dtype == ml_dtypes.bfloat16 else torch.float32)
        base, axis = split_op(op)
        f = {"softmax": lambda t: torch.softmax(t, dim=-1),
             "layer_norm": lambda t: torch.nn.functional.layer_norm(t, (t.shape[-1],), eps=1e-5)}.get(
            op, lambda t: getattr(t, base)() if axis is None else
            (t.amax(dim=axis) if base == "max" else getattr(t, base)(dim=axis)))
        f = torch.compile(f) if name == "torch_compile" else f
        return (lambda: f(tx)), torch.cuda.synchronize
    raise C.BenchmarkError(f"bench_reductions: unknown baseline {name!r} (numpy, c, numba, torch, torch_compile, copy)")


def reference(op: str, x: np.ndarray):
    return numpy_fn(op)(x.astype(np.float64))


def run_case(args, kind: str, op: str, shape: tuple, pieces=None, dtype: str = "f32") -> list[dict]:
    import poot as pt

    from benchmarks import gpu_timing

    x = np.random.default_rng(1).random(shape, dtype=np.float32).astype(DTYPES[dtype])
    dev, _ = C.device_or_none(kind)
    fn = poot_fn(op, pt)
    with pt.device(kind):
        px = pt.realize(pt.array(x))
        call = (lambda: fn(px).numpy()) if kind == "cpu" else (lambda: pt.realize(fn(px)))
        got = np.asarray(call() if kind == "cpu" else call().numpy())
        per = x.size // max(got.size, 1)
        if dtype == "f32":
            rtol, atol = 1e-4, 1e-6 if op in ROWS else 4 * np.finfo(np.float32).eps * per ** 0.5
        else:       # one rounding of the result to 8 bits (f32 accumulation)
            rtol, atol = 1e-2, 1e-2
        C.check_close(f"{op} {shape} {dtype} on {kind}", got.astype(np.float64), reference(op, x), rtol=rtol, atol=atol)
        sync = C.poot_sync(kind)
        poot_s = C.median_s(args, call, sync)
        ks = gpu_timing.kernel_s(kind, dev, call) if kind != "cpu" and not args.no_kernel_time else None
    nbytes = x.nbytes + got.itemsize * got.size
    baselines = {}
    names = C.comma_list(args.baselines or DEFAULT_BASELINES.get(kind, "copy"))
    for name in names if pieces is None else [n for n in names if n == "copy"]:   # retuning: the ceiling only
        if name == "copy":
            baselines["copy"] = gpu_timing.copy_s(kind, dev, nbytes) if kind != "cpu" else None
            continue
        made = baseline_call(name, op, x)
        if made is None:
            C.note_once(f"no baseline {name} for {op} here (not installed, no CUDA, or no such operation)")
            continue
        bcall, bsync = made
        baselines[name] = C.median_s(args, bcall, bsync)
    params = {"op": op, "shape": "x".join(map(str, shape)), "dtype": np.dtype(DTYPES[dtype]).name}
    if pieces is not None:
        params["split_pieces"] = pieces
    return C.rows_against(f"reduce-{op}", params, kind, poot_s, baselines, kernel_s=ks, bytes=nbytes)


def with_split_pieces(kind: str, pieces: int, run):
    """Run `run()` with the split reduction's partials per row capped at `pieces` (caches cleared)."""
    mod = C.codegen("split" if kind == "cpu" else "gpu_split")
    attr = "MAX_PIECES" if kind == "cpu" else "MAX_PIECES_GPU"
    execute = C.runtime("execute")
    saved = getattr(mod, attr)
    setattr(mod, attr, pieces)
    execute._PROGRAMS.clear()
    try:
        return run()
    finally:
        setattr(mod, attr, saved)
        execute._PROGRAMS.clear()


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1e8", dtypes="f32")
    ap.add_argument("--shapes", type=C.parse_sizes, default=C.parse_sizes("4096x4096"),
                    help="matrices for the axis and row cases; default 4096x4096")
    ap.add_argument("--ops", type=C.comma_list, default=list(FLAT + AXIS + ROWS),
                    help="comma list of: " + ", ".join(FLAT + AXIS + ROWS))
    ap.add_argument("--baselines", default=None, help="comma list (default per device: "
                    + "; ".join(f"{k}: {v}" for k, v in DEFAULT_BASELINES.items()) + "; GPUs: copy)")
    ap.add_argument("--split-pieces", type=C.comma_list, default=[],
                    help="rerun the flat and axis reductions with at most this many partials per row")
    ap.add_argument("--no-kernel-time", action="store_true", help="skip the GPU kernel_s column")
    args = ap.parse_args(argv)
    unknown = [o for o in args.ops if o not in FLAT + AXIS + ROWS]
    if unknown:
        ap.error(f"unknown ops {unknown}; known: {', '.join(FLAT + AXIS + ROWS)}")
    unknown = [d for d in args.dtypes if d not in DTYPES]
    if unknown:
        ap.error(f"unknown dtypes {unknown}; known: {', '.join(DTYPES)}")
    rows = []
    for kind in C.available(args.devices):
        for op in args.ops:
            shapes = [(int(np.prod(s)),) for s in args.sizes] if op in FLAT else \
                [s for s in args.shapes if isinstance(s, tuple) and len(s) == 2]
            for shape, dtype in ((s, d) for s in shapes for d in args.dtypes):
                rows += run_case(args, kind, op, shape, dtype=dtype)
                if op not in ROWS and dtype == "f32":
                    for p in args.split_pieces:
                        rows += with_split_pieces(kind, int(p), lambda: run_case(args, kind, op, shape, int(p)))
    return C.finish(args, "bench_reductions", rows)


if __name__ == "__main__":
    main()
