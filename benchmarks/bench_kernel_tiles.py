"""Tile shapes of the unrolled tensor-core kernels side by side: each `--tiles` shape's kernel file is
written by its script in tools/unroll/ (gemm_async.py for `--kernel gemm`, flash_tc.py for `--kernel
flash`), launched directly (`kernel.launch` on poot arrays already on the device) over the `--shapes`
problems, and timed beside PyTorch (matmul; scaled_dot_product_attention) on the same operands in the same
process. What this picks is committed as the script's default tile shape.

Each repetition is `--number` launches back to back ended by one synchronize (0: enough for ~50 ms; the
launches' host work overlaps the GPU's); ratio = torch seconds / poot seconds. Results are checked
against PyTorch's before timing. Shapes: GEMM `MxKxN` or `BATCHxMxKxN`; flash `BxHxLxD` (bf16, causal
with `--causal`, 16 query heads a key head with `--gqa`).

    python -m benchmarks.bench_kernel_tiles --kernel gemm --tiles 2,4,4,4,32,3 2,4,4,8,32,3 \\
        --shapes 4096x4096x4096,8192x8192x8192
    python -m benchmarks.bench_kernel_tiles --kernel flash --tiles 1,32 1,64 --shapes 4x32x4096x128 --causal
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
SCRIPTS = {"gemm": "gemm_async.py", "flash": "flash_tc.py"}


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


PROBLEMS = {"gemm": Gemm, "flash": Flash}


def main(argv=None) -> dict:
    ap = C.parser(__doc__, devices="cuda", repeat=5)
    ap.add_argument("--kernel", choices=sorted(SCRIPTS), default="gemm")
    ap.add_argument("--tiles", nargs="+", default=None,
                    help="tile shapes, the unroll script's --tiles each (default: its committed shape)")
    ap.add_argument("--shapes", type=C.comma_list, default=None,
                    help="comma list (default gemm 4096x4096x4096, flash 4x32x4096x128)")
    ap.add_argument("--causal", action="store_true", help="flash: causal attention")
    ap.add_argument("--gqa", action="store_true", help="flash: 4 query heads per key/value head")
    args = ap.parse_args(argv)
    import poot as pt

    unroll = load(ROOT / "tools" / "unroll" / SCRIPTS[args.kernel], f"unroll_{args.kernel}")
    shapes = args.shapes or (["4096x4096x4096"] if args.kernel == "gemm" else ["4x32x4096x128"])
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
            for spec in tile_specs:
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
                          **({"causal": True} if args.causal else {}), **({"gqa": 4} if args.gqa else {})}
                rows += C.rows_against(f"{args.kernel}-tiles", params, kind, s, baselines, flops=prob.flops,
                                       tflops=prob.flops / s / 1e12)
                torch_note = (f"  torch {baselines['torch'] * 1e3:.3f} ms ({baselines['torch'] / s:.2f}x)"
                              if baselines else "")
                print(f"  {args.kernel} {text:>20s} {tiles.label:>28s}: {s * 1e3:8.3f} ms "
                      f"{prob.flops / s / 1e12:7.1f} TFLOP/s{torch_note}", flush=True)
    return C.finish(args, "bench_kernel_tiles", rows)


if __name__ == "__main__":
    main()
