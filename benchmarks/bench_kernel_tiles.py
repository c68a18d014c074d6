"""Tile shapes of the unrolled tensor-core kernels side by side: each `--tiles` shape's kernel file is
written by its script in tools/unroll/ (gemm_async.py for `--kernel gemm`, flash_tc.py for `--kernel
flash`), launched directly (`kernel.launch` on poot arrays already on the device) over the `--shapes`
problems, and timed beside PyTorch (matmul; scaled_dot_product_attention) on the same operands in the same
process. What this picks is committed as the script's default tile shape.

Each repetition is `--number` launches back to back ended by one synchronize (0: enough for ~50 ms; the
launches' host work overlaps the GPU's); ratio = torch seconds / poot seconds. Results are checked
against PyTorch's before timing. Shapes: GEMM `MxKxN` or `BATCHxMxKxN`; flash `BxHxLxD` (bf16, causal
with `--causal`, 16 query heads a key head with `--gqa`); decode `BxHqxHkxLkxD` (bf16, one query over
Lk keys: tools/unroll/flash_decode.py's split-K kernel then attention_combine_bf16, launched back to back,
the split count the planner's, or each of `--splits`; TB/s over the K and V bytes). Decode times are
GPU time (20 calls captured in one CUDA graph, poot's and torch's alike): the host's launch work would
hide kernels of tens of microseconds.

    python -m benchmarks.bench_kernel_tiles --kernel gemm --tiles 2,4,4,4,32,3 2,4,4,8,32,3 \\
        --shapes 4096x4096x4096,8192x8192x8192
    python -m benchmarks.bench_kernel_tiles --kernel flash --tiles 1,32 1,64 --shapes 4x32x4096x128 --causal
    python -m benchmarks.bench_kernel_tiles --kernel decode --tiles 4,4,1,4 4,4,1,4,0,1 8,4,4,4 \\
        --splits 0,32,48 --shapes 1x32x8x4096x128,1x32x8x32768x128
"""
from __future__ import annotations

import importlib.util
import math
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

from benchmarks import common as C

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {"gemm": "gemm_async.py", "flash": "flash_tc.py", "decode": "flash_decode.py"}


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def kernel_module(unroll, tiles, folder: Path, kernel: str):
    path = folder / f"{kernel}_{tiles.label}.py"
    path.write_text(unroll.source(tiles))
    return load(path, path.stem)


def dims(text: str, n: tuple[int, ...]) -> tuple[int, ...]:
    parts = tuple(int(p) for p in text.split("x"))
    if len(parts) not in n:
        raise C.BenchmarkError(f"bench_kernel_tiles: shape {text!r} needs {' or '.join(map(str, n))} dimensions")
    return parts


def words(pt, x: np.ndarray):
    return pt.realize(pt.array(x.reshape(-1).view(np.uint32)))


class Gemm:
    """C = A @ B, bf16, row-major, a batch of independent products."""

    def __init__(self, pt, torch, text: str, args):
        parts = dims(text, (3, 4))
        self.batch, self.m, self.k, self.n = (1,) * (4 - len(parts)) + parts
        rng = np.random.default_rng(0)
        a = rng.standard_normal((self.batch, self.m, self.k), dtype=np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((self.batch, self.k, self.n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        self.flops = 2.0 * self.batch * self.m * self.n * self.k
        self.pa, self.pb = words(pt, a), words(pt, b)
        self.pc = pt.realize(pt.zeros(self.batch * self.m * self.n, dtype=pt.bfloat16))
        self.out, self.ref, self.torch_call = self.pc, None, None
        if torch is not None:
            ta, tb = (torch.from_numpy(x.astype(np.float32)).to("cuda", torch.bfloat16) for x in (a, b))
            self.ref = (ta @ tb).float().cpu().numpy().reshape(-1)
            self.torch_call = lambda: ta @ tb

    def call(self, mod, ctx):
        kern, m, n, k = mod.gemm_bf16_async, self.m, self.n, self.k
        threads = mod.launch_threads(m, n, self.batch)
        return lambda: kern.launch(ctx, self.pa, self.pb, self.pc, m, n, k, m * k, k * n, m * n, threads=threads)


class Flash:
    """softmax(q k^T / sqrt(D)) v over [B, H, L, D] bf16, causal with --causal."""

    def __init__(self, pt, torch, text: str, args):
        b, h, lq, d = dims(text, (4,))
        hk = h // 4 if args.gqa else h
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal(s, dtype=np.float32).astype(ml_dtypes.bfloat16)
                   for s in ((b, h, lq, d), (b, hk, lq, d), (b, hk, lq, d)))
        self.b, self.h, self.hk, self.lq, self.d, self.causal = b, h, hk, lq, d, args.causal
        self.flops = 4.0 * b * h * lq * lq * d / (2 if args.causal else 1)
        self.pq, self.pk, self.pv = words(pt, q), words(pt, k), words(pt, v)
        self.mask = pt.realize(pt.zeros(1, dtype=pt.float32))
        self.out = pt.realize(pt.zeros(q.size, dtype=pt.bfloat16))
        self.ref, self.torch_call = None, None
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).to("cuda", torch.bfloat16) for x in (q, k, v))
            sdpa = torch.nn.functional.scaled_dot_product_attention
            f = lambda: sdpa(tq, tk, tv, is_causal=args.causal, enable_gqa=args.gqa)  # noqa: E731
            self.ref = f().float().cpu().numpy().reshape(-1)
            self.torch_call = f

    def call(self, mod, ctx):
        kern = getattr(mod, f"attention_tc_bf16_d{self.d}")
        rows, unbounded = self.b * self.h, mod.UNBOUNDED
        threads = mod.threads(self.lq, rows)
        scalars = (self.lq, self.lq, self.d, self.d, self.h, self.h // self.hk, unbounded,
                   0 if self.causal else unbounded, 0, 0, 0, 0, 0, 1, 1 / math.sqrt(self.d), 0.0)
        return lambda: kern.launch(ctx, self.pq, self.pk, self.pv, self.mask, self.out, *scalars, threads=threads)


class Decode:
    """One query a head over a long bf16 KV cache (GQA by Hq / Hk): the split-K decode kernel, then the
    combine of its partials (kernels/attention/flash_gpu.py), as the planner launches them."""

    def __init__(self, pt, torch, text: str, args):
        from poot import devices
        from poot.kernels.attention import flash_gpu

        b, hq, hk, lk, d = dims(text, (5,))
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal(s, dtype=np.float32).astype(ml_dtypes.bfloat16)
                   for s in ((b, hq, 1, d), (b, hk, lk, d), (b, hk, lk, d)))
        self.b, self.hq, self.hk, self.lk, self.d = b, hq, hk, lk, d
        self.flops = 4.0 * b * hq * lk * d
        self.bytes = 2.0 * b * hk * lk * d * 2            # K and V, read once
        self.cores, self.splits, self.combine = devices.get("cuda").caps.cores, 0, flash_gpu
        self.pq, self.pk, self.pv = words(pt, q), words(pt, k), words(pt, v)
        self.mask = pt.realize(pt.zeros(1, dtype=pt.float32))
        self.out = pt.realize(pt.zeros(q.size, dtype=pt.bfloat16))
        self.pt, self.ref, self.torch_call = pt, None, None
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).to("cuda", torch.bfloat16) for x in (q, k, v))
            sdpa = torch.nn.functional.scaled_dot_product_attention
            f = lambda: sdpa(tq, tk, tv, enable_gqa=True)  # noqa: E731
            self.ref = f().float().cpu().numpy().reshape(-1)
            self.torch_call = f

    def call(self, mod, ctx):
        from poot.jit.codegen.attention import decode_splits

        pt, dmax = self.pt, 128 if self.d <= 128 else 256
        kern, comb = getattr(mod, f"attention_decode_bf16_d{dmax}"), self.combine.attention_combine_bf16
        ratio, kv_rows, rows = self.hq // self.hk, self.b * self.hk, self.b * self.hq
        blocks = kv_rows * -(-ratio // mod.ROWS[dmax])
        splits, chunk = decode_splits(self.cores, blocks, self.lk, mod.STEP, mod.WARPS)
        if self.splits:
            per = -(-self.lk // self.splits)
            chunk = -(-per // mod.STEP) * mod.STEP
            splits = -(-self.lk // chunk)
        with pt.device("cuda"):
            pm, pl = (pt.realize(pt.zeros(rows * splits, dtype=pt.float32)) for _ in range(2))
            pacc = pt.realize(pt.zeros(rows * splits * self.d, dtype=pt.float32))
        threads = mod.decode_groups(splits, kv_rows, ratio, dmax)
        scalars = (1, self.lk, self.d, self.d, self.hq, ratio, mod.UNBOUNDED, mod.UNBOUNDED, 0, 0, 0, 0, 0,
                   1 / math.sqrt(self.d), 0.0, chunk, splits)
        cthreads = (rows * self.combine.COMBINE, 1, 1)

        def run():
            kern.launch(ctx, self.pq, self.pk, self.pv, self.mask, pm, pl, pacc, *scalars, threads=threads)
            comb.launch(ctx, pm, pl, pacc, self.out, rows, self.d, splits, 0, threads=cthreads)
        print(f"  decode {self.b}x{self.hq}x{self.hk}x{self.lk}x{self.d}: {splits} splits of {chunk} keys, "
              f"{splits * blocks} workgroups", flush=True)
        self.device = ctx.device
        return run

    def gpu_s(self, call) -> dict:
        """GPU seconds per call without the host's launch work: poot's two launches and torch's call, each
        20 copies captured in one CUDA graph (what `rate` and kernel_s report)."""
        from benchmarks import gpu_timing

        out = {"poot": C.median(gpu_timing.cuda_graph_s(self.device, call, reps=20, repeat=10))}
        if self.torch_call is not None:
            import torch
            out["torch"] = C.median(gpu_timing.torch_graph_s(torch, self.torch_call, reps=20, repeat=10))
        return out


PROBLEMS = {"gemm": Gemm, "flash": Flash, "decode": Decode}


def main(argv=None) -> dict:
    ap = C.parser(__doc__, devices="cuda", repeat=5)
    ap.add_argument("--kernel", choices=sorted(SCRIPTS), default="gemm")
    ap.add_argument("--tiles", nargs="+", default=None,
                    help="tile shapes, the unroll script's --tiles each (default: its committed shape)")
    ap.add_argument("--shapes", type=C.comma_list, default=None,
                    help="comma list (default gemm 4096x4096x4096, flash 4x32x4096x128)")
    ap.add_argument("--causal", action="store_true", help="flash: causal attention")
    ap.add_argument("--gqa", action="store_true", help="flash: 4 query heads per key/value head")
    ap.add_argument("--splits", type=C.comma_list, default=["0"],
                    help="decode: comma list of key split counts, each timed (default 0: the planner's count)")
    args = ap.parse_args(argv)
    import poot as pt

    unroll = load(ROOT / "tools" / "unroll" / SCRIPTS[args.kernel], f"unroll_{args.kernel}")
    shapes = args.shapes or {"gemm": ["4096x4096x4096"], "decode": ["1x32x8x32768x128"]}.get(args.kernel,
                                                                                             ["4x32x4096x128"])
    tile_specs = args.tiles or [None]
    torch = C.torch_cuda()
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="poot_kernel_tiles_"))
    for kind in C.available(args.devices):
        if kind != "cuda":
            print(f"bench_kernel_tiles: {kind} skipped (the tensor-core kernels are PTX only)")
            continue
        ctx = pt.Context(kind)
        for text in shapes:
            with pt.device(kind):
                prob = PROBLEMS[args.kernel](pt, torch, text, args)
            baselines = {}
            if prob.torch_call is not None:
                baselines["torch"] = C.median_s(args, prob.torch_call, torch.cuda.synchronize)
            runs = [(spec, int(n)) for spec in tile_specs for n in (args.splits if args.kernel == "decode" else [0])]
            for spec, prob.splits in runs:
                tiles = unroll.Tiles(*map(int, spec.split(","))) if spec else unroll.DEFAULT
                call = prob.call(kernel_module(unroll, tiles, folder, args.kernel), ctx)
                call()
                pt.synchronize()
                if prob.ref is not None:
                    got = np.asarray(prob.out.numpy()).astype(np.float32).reshape(-1)
                    err = float(np.max(np.abs(got - prob.ref)) / (np.max(np.abs(prob.ref)) + 1e-30))
                    if not err <= 2e-2:
                        raise C.BenchmarkError(f"{args.kernel} tiles {tiles.label} on {text}: relative error {err:.3g}")
                s = C.median_s(args, call, pt.synchronize)
                params = {"kernel": args.kernel, "shape": text, "tiles": tiles.label, "dtype": "bfloat16",
                          **({"splits": prob.splits} if getattr(prob, "splits", 0) else {}),
                          **({"causal": True} if args.causal else {}), **({"gqa": 4} if args.gqa else {})}
                nbytes = getattr(prob, "bytes", None)
                extra = {"bytes": nbytes, "tbps": nbytes / s / 1e12} if nbytes else {}
                if hasattr(prob, "gpu_s"):           # decode: rates of the GPU time, host launch work left out
                    gpu = prob.gpu_s(call)
                    s, extra["kernel_s"] = gpu["poot"], gpu["poot"]
                    extra["tbps"] = nbytes / s / 1e12
                    if "torch" in gpu:
                        baselines["torch"] = gpu["torch"]
                rows += C.rows_against(f"{args.kernel}-tiles", params, kind, s, baselines, flops=prob.flops,
                                       tflops=prob.flops / s / 1e12, **extra)
                torch_note = (f"  torch {baselines['torch'] * 1e3:.3f} ms ({baselines['torch'] / s:.2f}x"
                              + (f", {nbytes / baselines['torch'] / 1e12:.2f} TB/s" if nbytes else "") + ")"
                              if baselines else "")
                rate = f"{nbytes / s / 1e12:7.2f} TB/s" if nbytes else f"{prob.flops / s / 1e12:7.1f} TFLOP/s"
                print(f"  {args.kernel} {text:>20s} {tiles.label:>28s}: {s * 1e3:8.3f} ms "
                      f"{rate}{torch_note}", flush=True)
    return C.finish(args, "bench_kernel_tiles", rows)


if __name__ == "__main__":
    main()
