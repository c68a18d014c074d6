"""Sorting: `pt.sort`, `pt.argsort`, `pt.unique_values`, `pt.unique_all` and `pt.unique` with counts.

On the CPU (NumPy host steps) beside NumPy's default (unstable SIMD) call and its stable one
(`kind="stable"`, what the array API's default `stable=True` promises; poot's results are always the
stable ones): each repetition is the user's call realized (`.numpy()` of every result), the calls of one
case taking turns (poot, NumPy, NumPy stable, poot, ...).

On a GPU device (`--devices cuda`, wgpu, vulkan, rocm; sort and argsort only: the device kernels of
poot/jit/codegen/gpu_sort.py) each repetition is `pt.realize` of the result, the device synchronized at
the end of each round, beside `torch.sort(stable=True)` (values or indices, synchronized likewise) where
PyTorch sees a CUDA device, and beside poot's former path, the host step (`poot_host`: POOT_GPU_SORT=host,
a copy to the host, NumPy, a copy back). The input is an already realized poot array of normally
distributed values (times 1000 before an integer cast, so integers tie often). Each figure is the median
of its repetitions; ratios are baseline seconds / poot seconds (above 1: poot is faster).

    python -m benchmarks.bench_sort --sizes 1e6,1e7 --dtypes float32,float64,int32 --json out.json
    python -m benchmarks.bench_sort --devices cuda --sizes 1e6,1e7 --dtypes float32,int32
"""
from __future__ import annotations


import numpy as np

from benchmarks import common as C

OPS = ("sort", "argsort", "unique_values", "unique_all", "unique_counts")


def _poot_call(op: str, pt, x):
    if op == "sort":
        return lambda: pt.sort(x).numpy()
    if op == "argsort":
        return lambda: pt.argsort(x).numpy()
    if op == "unique_values":
        return lambda: pt.unique_values(x).numpy()
    if op == "unique_all":
        return lambda: [r.numpy() for r in pt.unique_all(x)]
    return lambda: [r.numpy() for r in pt.unique(x, return_counts=True)]


def _numpy_calls(op: str, a: np.ndarray) -> dict:
    if op == "sort":
        return {"numpy": lambda: np.sort(a), "numpy_stable": lambda: np.sort(a, kind="stable")}
    if op == "argsort":
        return {"numpy": lambda: np.argsort(a), "numpy_stable": lambda: np.argsort(a, kind="stable")}
    if op == "unique_values":
        return {"numpy": lambda: np.unique(a)}
    if op == "unique_all":
        return {"numpy": lambda: np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                            equal_nan=False)}
    return {"numpy": lambda: np.unique(a, return_counts=True)}


def _check(op: str, got, a: np.ndarray) -> None:
    if op == "sort":
        np.testing.assert_array_equal(got, np.sort(a, kind="stable"))
    elif op == "argsort":
        np.testing.assert_array_equal(got, np.argsort(a, kind="stable"))
    elif op == "unique_values":
        np.testing.assert_array_equal(got, np.unique(a))


GPU_OPS = ("sort", "argsort")


def _values(n: int, dtype: str) -> np.ndarray:
    return (np.random.default_rng(0).standard_normal(n) * 1000).astype(dtype)


def run_case(args, op: str, n: int, dtype: str) -> list[dict]:
    import poot as pt

    a = _values(n, dtype)
    with pt.device("cpu"):
        x = pt.asarray(a)
        pt.realize(x)
        call = _poot_call(op, pt, x)
        _check(op, call(), a)
        times = C.interleaved_medians({"poot": call, **_numpy_calls(op, a)}, args.repeat, args.warmup)
    poot_s = times.pop("poot")
    baselines = times
    return C.rows_against(f"sort-{op}", {"n": C.size_label(n), "dtype": dtype}, "cpu", poot_s, baselines,
                          bytes=a.nbytes)


def _torch_call(op: str, a: np.ndarray):
    """(call, sync) of torch.sort(stable=True) on the CUDA device, or None (the reason said once)."""
    torch = C.torch_cuda()
    if torch is None:
        C.note_once("no torch baseline: PyTorch is not installed or sees no CUDA device")
        return None
    t = torch.from_numpy(a).cuda()
    if op == "sort":
        return (lambda: torch.sort(t, stable=True).values), torch.cuda.synchronize
    return (lambda: torch.sort(t, stable=True).indices), torch.cuda.synchronize


def run_gpu_case(args, kind: str, op: str, n: int, dtype: str) -> list[dict]:
    """sort/argsort on GPU device `kind`: the kernels, torch.sort on CUDA, and the host step."""
    import poot as pt

    a = _values(n, dtype)
    fn = pt.sort if op == "sort" else pt.argsort
    sync = C.poot_sync(kind)
    times = {}
    with pt.device(kind):
        x = pt.asarray(a)
        pt.realize(x)
        call = lambda: pt.realize(fn(x))                     # noqa: E731
        _check(op, call().numpy(), a)
        poot_s = C.median_s(args, call, sync)
        with C.env_setting("POOT_GPU_SORT", "host"):                  # poot's former path: the host step
            _check(op, call().numpy(), a)
            times["poot_host"] = C.median_s(args, call, sync)
    made = _torch_call(op, a) if kind == "cuda" else None
    if kind != "cuda":
        C.note_once(f"no torch baseline on {kind}: torch.sort runs on CUDA devices only")
    if made is not None:
        bcall, bsync = made
        got = bcall().cpu().numpy()
        _check(op, got, a)
        times["torch"] = C.median_s(args, bcall, bsync)
    return C.rows_against(f"sort-{op}", {"n": C.size_label(n), "dtype": dtype}, kind, poot_s, times,
                          bytes=a.nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1e6,1e7", dtypes="float32,float64,int32", repeat=5)
    C.cases_option(ap, OPS, flag="--ops")
    args = ap.parse_args(argv)
    rows = []
    for kind in C.available(args.devices):
        ops = args.ops if kind == "cpu" else [o for o in args.ops if o in GPU_OPS]
        if kind != "cpu" and len(ops) < len(args.ops):
            C.note_once(f"on {kind} only {', '.join(GPU_OPS)} run (unique is a host step on every device)")
        for op in ops:
            for n in args.sizes:
                for dtype in args.dtypes:
                    size = int(np.prod(n))
                    rows += (run_case(args, op, size, dtype) if kind == "cpu"
                             else run_gpu_case(args, kind, op, size, dtype))
    return C.finish(args, "bench_sort", rows)


if __name__ == "__main__":
    main()
