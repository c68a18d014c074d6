"""Matrix products on the GPU, poot beside PyTorch in the same process: the wall clock of the user's call.

poot: `pt.realize(a @ b)` once per repetition (a realize ends with a synchronize and the trap-word read),
the clock read around all repetitions; PyTorch: `a @ b` per repetition, `torch.cuda.synchronize()` after
each (the same contract: the result is ready when the call returns). Both warm up first. Reported per
case: milliseconds per call (median of rounds), TFLOP/s (2*M*N*K*batch / time), and poot / torch as a
ratio of speeds (torch ms / poot ms: 1.0 is parity). Results are checked against NumPy on a few rows.

Cases (`--cases` picks by name): GEMM 4096^3 f32 and bf16, 8192^3 bf16, batched bf16 32 x (1024x128 @
128x1024), GEMV bf16 14336x4096 and 4096x4096 with a 1-D x.

    python benchmarks/bench_cuda_matmul.py [--cases gemm-4096-bf16,gemv-14336x4096-bf16] [--rounds 5]
        [--reps 10] [--json out.json]

Each case is also appended as a record to env POOT_BENCH_OUT (bench_cuda_common.record), as the other
CUDA benchmarks do."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CASES = {   # name: (a shape, b shape, dtype)
    "gemm-4096-f32": ((4096, 4096), (4096, 4096), "float32"),
    "gemm-4096-bf16": ((4096, 4096), (4096, 4096), "bfloat16"),
    "gemm-8192-bf16": ((8192, 8192), (8192, 8192), "bfloat16"),
    "bmm-32x1024x1024x128-bf16": ((32, 1024, 128), (32, 128, 1024), "bfloat16"),
    "gemv-14336x4096-bf16": ((14336, 4096), (4096,), "bfloat16"),
    "gemv-4096x4096-bf16": ((4096, 4096), (4096,), "bfloat16"),
}
NP = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16}


def flops(sa, sb) -> float:
    k = sa[-1]
    m = sa[-2] if len(sa) > 1 else 1
    n = sb[-1] if len(sb) > 1 else 1
    batch = int(np.prod(sa[:-2])) if len(sa) > 2 else 1
    return 2.0 * batch * m * n * k


def _rounds(call, sync, rounds, reps, warmup=2):
    for _ in range(warmup):
        call()
    sync()
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(reps):
            call()
        sync()
        out.append((time.perf_counter() - t) / reps * 1e3)
    return out


def _check(name, got, a, b):
    rows = min(8, a.shape[-2]) if a.ndim > 1 else 1
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if a.ndim == 3:
        ref, g = a64[:2, :rows] @ b64[:2], got[:2, :rows]
        scale = np.abs(a64[:2, :rows]) @ np.abs(b64[:2])
    else:
        ref, g = a64[:rows] @ b64, got[:rows]
        scale = np.abs(a64[:rows]) @ np.abs(b64)
    eps = float(ml_dtypes.finfo(a.dtype).eps) if a.dtype != np.float32 else 0.0
    bad = np.abs(g.astype(np.float64) - ref) > eps * np.abs(ref) + 8 * np.finfo(np.float32).eps * scale + 1e-30
    if bad.any():
        raise AssertionError(f"{name}: poot's result differs from NumPy's at {int(bad.sum())} elements")


def run_case(name, rounds, reps, torch):
    import poot as pt
    from poot import devices

    sa, sb, dtype = CASES[name]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa, dtype=np.float32).astype(NP[dtype])
    b = rng.standard_normal(sb, dtype=np.float32).astype(NP[dtype])
    dev = devices.get("cuda")
    with pt.device("cuda"):
        pa, pb = pt.realize(pt.array(a)), pt.realize(pt.array(b))
        _check(name, (pa @ pb).numpy(), a, b)
        poot_ms = _rounds(lambda: pt.realize(pa @ pb), dev.synchronize, rounds, reps)
    rec = {"group": f"cuda-matmul-{name}", "shape_a": sa, "shape_b": sb, "dtype": dtype, "gpu": dev.gpu,
           "poot_ms": statistics.median(poot_ms), "poot_ms_min": min(poot_ms), "reps": reps, "rounds": rounds}
    fl = flops(sa, sb)
    rec["poot_tflops"] = fl / (rec["poot_ms"] * 1e-3) / 1e12
    if torch is not None:
        tdt = getattr(torch, dtype)
        ta = torch.from_numpy(a.astype(np.float32)).to("cuda", tdt)
        tb = torch.from_numpy(b.astype(np.float32)).to("cuda", tdt)
        torch_ms = _rounds(lambda: ta @ tb, torch.cuda.synchronize, rounds, reps)
        rec["torch_ms"] = statistics.median(torch_ms)
        rec["torch_tflops"] = fl / (rec["torch_ms"] * 1e-3) / 1e12
        rec["poot_vs_torch"] = rec["torch_ms"] / rec["poot_ms"]
        del ta, tb
        torch.cuda.empty_cache()
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10, help="calls per round (slow cases use fewer: see --max-s)")
    ap.add_argument("--max-s", type=float, default=2.0, help="cap on a round's seconds (fewer reps when slower)")
    ap.add_argument("--json", default=None, help="write the records to this file")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    torch = None
    if not args.no_torch:
        try:
            import torch as _torch

            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            torch = None
    from bench_cuda_common import record

    records = []
    print(f"{'case':30s} {'poot ms':>10s} {'TFLOP/s':>8s} {'torch ms':>10s} {'TFLOP/s':>8s} {'ratio':>7s}")
    for name in [c.strip() for c in args.cases.split(",") if c.strip()]:
        if name not in CASES:
            ap.error(f"unknown case {name!r}; known: {', '.join(CASES)}")
        # a first timing decides how many repetitions fit in --max-s
        probe = run_case(name, 1, 1, None)
        reps = max(1, min(args.reps, int(args.max_s * 1e3 / max(probe["poot_ms"], 1e-3))))
        rec = run_case(name, args.rounds, reps, torch)
        records.append(rec)
        record(rec)
        t_ms = f"{rec['torch_ms']:10.3f}" if "torch_ms" in rec else f"{'-':>10s}"
        t_tf = f"{rec['torch_tflops']:8.2f}" if "torch_ms" in rec else f"{'-':>8s}"
        ratio = f"{rec['poot_vs_torch']:7.3f}" if "torch_ms" in rec else f"{'-':>7s}"
        print(f"{name:30s} {rec['poot_ms']:10.3f} {rec['poot_tflops']:8.2f} {t_ms} {t_tf} {ratio}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
