"""Attention: `pt.nn.scaled_dot_product_attention` (the flash kernels of kernels/attention/) beside
NumPy's hand-written attention on the CPU (softmax(q @ k^T * s) @ v in the input dtype, float32 for
16-bit inputs) and PyTorch's SDPA on a CUDA device where torch sees one.

Each repetition is the user's call, q, k, v already realized poot arrays on the device: on the CPU the
result as a NumPy array (`.numpy()`, zero copy); on a GPU the result realized on the device
(`pt.realize`), each round of calls (about 50 ms of them; `--number 1`: one) ended by a synchronize, as
PyTorch's SDPA is timed beside it (no transfer to the host on either side: at prefill sizes the copy of
the result would outweigh the kernel).
On CUDA a kernel-only column times the launches captured `--graph-reps` times in one CUDA graph; `--jit`
adds a row for the same call inside a jitted function (what a jitted decode step pays). Ratios
are baseline seconds / poot seconds (above 1: poot is faster). Configurations (names
for --cases):

    small    B1 H8 L1024 D64 float32                     (prefill; the CPU target)
    prefill  B4 H32 L4096 D128 bfloat16 causal
    full     B4 H32 L4096 D128 bfloat16                   (prefill without the causal mask)
    gqa      B4 H32/8 L4096 D128 bfloat16 causal          (32 query heads over 8 key/value heads)
    decode4k, decode16k, decode32k: B1 H32/8, 1 query over a 4k/16k/32k cache, D128 bfloat16
    tiny     B1 H4 L256 D64 float32                      (lavapipe-sized)

    python -m benchmarks.bench_attention --cases small --devices cpu --json out.json
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from benchmarks import common as C
from benchmarks import gpu_timing

# name: (B, Hq, Hk, Lq, Lk, D, dtype, causal)
CASES = {
    "small": (1, 8, 8, 1024, 1024, 64, "float32", False),
    "prefill": (4, 32, 32, 4096, 4096, 128, "bfloat16", True),
    "full": (4, 32, 32, 4096, 4096, 128, "bfloat16", False),
    "gqa": (4, 32, 8, 4096, 4096, 128, "bfloat16", True),
    "decode4k": (1, 32, 8, 1, 4096, 128, "bfloat16", False),
    "decode16k": (1, 32, 8, 1, 16384, 128, "bfloat16", False),
    "decode32k": (1, 32, 8, 1, 32768, 128, "bfloat16", False),
    "tiny": (1, 4, 4, 256, 256, 64, "float32", False),
}


def numpy_attention(q, k, v, causal: bool):
    """Attention as NumPy code writes it (float32 work for 16-bit inputs)."""
    work = np.float32 if q.dtype.itemsize < 4 else q.dtype.type
    q, k, v = (x.astype(work, copy=False) for x in (q, k, v))
    ratio = q.shape[1] // k.shape[1]
    if ratio > 1:
        k, v = np.repeat(k, ratio, axis=1), np.repeat(v, ratio, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * work(1 / np.sqrt(q.shape[-1]))
    if causal:
        s = np.where(np.tri(q.shape[2], k.shape[2], dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def run_case(args, name: str, device: str) -> list[dict]:
    import poot as pt

    b, hq, hk, lq, lk, d, dtype, causal = CASES[name]
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    qa = rng.standard_normal((b, hq, lq, d)).astype(np_dtype)
    ka, va = (rng.standard_normal((b, hk, lk, d)).astype(np_dtype) for _ in range(2))
    with pt.device(device):
        q, k, v = (pt.asarray(x) for x in (qa, ka, va))
        pt.realize(q, k, v)

        def call():
            out = pt.nn.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hk != hq)
            return out.numpy() if device == "cpu" else pt.realize(out)

        got = call() if device == "cpu" else call().numpy()
    sync = C.poot_sync(device)
    poot_s = C.median_s(args, call, sync)
    jit_s = None
    if args.jit:        # the same call inside a jitted function: what a jitted decode step pays
        with pt.device(device):
            attend = pt.jit(lambda q, k, v: pt.nn.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                                enable_gqa=hk != hq))

            def jcall():
                out = attend(q, k, v)
                return out.numpy() if device == "cpu" else out

            C.check_close(f"attention-{name}-jit", attend(q, k, v).numpy().astype(np.float32),
                          got.astype(np.float32), rtol=1e-3, atol=1e-3)
        jit_s = C.median_s(args, jcall, sync)
    kernel_s = None
    if device.startswith("cuda") and not args.no_kernel_time:
        dev, _ = C.device_or_none(device)
        kernel_s = C.median(gpu_timing.cuda_graph_s(dev, call, reps=args.graph_reps, repeat=args.repeat))
    baselines = {}
    if not device.startswith("cuda") and not args.no_numpy and b * hq * lq * lk <= args.numpy_max_scores:
        want = numpy_attention(qa, ka, va, causal)
        C.check_close(f"attention-{name}", got.astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2)
        baselines["numpy"] = C.median(C.time_call(lambda: numpy_attention(qa, ka, va, causal),
                                                  **C.timing_kwargs(args)))
    torch = C.torch_cuda()
    if torch is not None and device.startswith("cuda"):
        tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).to("cuda", getattr(torch, dtype)) for x in (qa, ka, va))
        f = torch.nn.functional.scaled_dot_product_attention

        def tcall():
            return f(tq, tk, tv, is_causal=causal, enable_gqa=hk != hq)

        want = tcall().float().cpu().numpy()
        C.check_close(f"attention-{name}", got.astype(np.float32), want, rtol=2e-2, atol=2e-2)
        baselines["torch"] = C.median_s(args, tcall, torch.cuda.synchronize)
    flops = 4 * b * hq * lq * lk * d // (2 if causal else 1)
    params = {"B": b, "Hq": hq, "Hk": hk, "Lq": lq, "Lk": lk, "D": d, "dtype": dtype, "causal": causal}
    rows = C.rows_against(f"attention-{name}", params, device, poot_s, baselines, kernel_s=kernel_s, flops=flops)
    if jit_s is not None:
        rows += C.rows_against(f"attention-{name}-jit", params, device, jit_s, baselines, flops=flops)
    return rows


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=5, number=0)
    C.cases_option(ap, CASES, default=["small"])
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy baseline")
    ap.add_argument("--graph-reps", type=int, default=5, help="calls per CUDA graph for the kernel-only column")
    ap.add_argument("--no-kernel-time", action="store_true", help="skip the CUDA kernel-only column")
    ap.add_argument("--jit", action="store_true", help="add a -jit row: the call inside a jitted function")
    ap.add_argument("--numpy-max-scores", type=int, default=1 << 28,
                    help="largest B*H*Lq*Lk for which the NumPy baseline (which holds the scores) runs")
    args = ap.parse_args(argv)
    rows = []
    for device in C.available(args.devices):
        for name in args.cases:
            rows += run_case(args, name, device)
    return C.finish(args, "bench_attention", rows)


if __name__ == "__main__":
    main()
