"""`pt.realize` of a 5-op chain in a user's loop, from 1K to 256M float32 elements: many realizes, one
synchronize at the end of each round, as a loop that does not read its results back does:

    r = pt.realize(2*a + b*a - pt.exp(a)/(1 + b*b))      # `number` times, then pt.synchronize()

A realize queues its kernels and returns; nothing waits until the synchronize, so successive realizes
overlap: large sizes approach the copy bandwidth, small ones show the host cost per realize. Bytes: 12 per
element (a and b read, the result written). Baselines: NumPy on the CPU, PyTorch on CUDA (the same loop,
torch.cuda.synchronize at the end), and the device's own copy of the same bytes (`copy`) on the GPUs.
Sizes that do not fit the device's largest binding or half its memory are skipped, saying so.

    python -m benchmarks.bench_realize_overhead --devices cuda,wgpu,vulkan --sizes 1K,16K,256K,4M,16M,64M,256M
"""
from __future__ import annotations

import numpy as np

from benchmarks import common as C


def chain(a, b, exp):
    return 2 * a + b * a - exp(a) / (1 + b * b)


def memory_bytes(dev) -> int:
    extra = dev.caps.extra
    if "memory_bytes" in extra:
        return extra["memory_bytes"]
    if hasattr(dev, "memory_info"):
        return dev.memory_info()[1]
    kind = str(extra.get("device_type", extra.get("adapter_type", ""))).lower()
    return 16 << 30 if kind.startswith("discrete") else 2 << 30


def fits(dev, n: int) -> bool:
    """Room for the inputs, a few results in flight and the copy's buffers (8 arrays of n)."""
    return 4 * n <= dev.caps.max_buffer_bytes and 8 * 4 * n <= memory_bytes(dev) // 2


def run_case(args, kind: str, n: int) -> list[dict]:
    import poot as pt

    from benchmarks import gpu_timing

    dev, _ = C.device_or_none(kind)
    if kind != "cpu" and not fits(dev, n):
        C.note_once(f"skipping {n:,} elements on {kind}: they do not fit its binding or memory here")
        return []
    rng = np.random.default_rng(0)
    an, bn = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    with pt.device(kind):
        a, b = pt.asarray(an), pt.asarray(bn)
        out = {}

        def step():
            out["r"] = pt.realize(chain(a, b, pt.exp))
        step()
        k = slice(None, None, max(1, n // 4096))
        C.check_close(f"realize chain {n} on {kind}", out["r"].numpy()[k], chain(an[k], bn[k], np.exp), 1e-5, 1e-5)
        sync = lambda: pt.synchronize(kind)  # noqa: E731
        poot_s = C.median_s(args, step, sync)
    nbytes = 12 * n
    baselines = {}
    default = "numpy" if kind == "cpu" else "torch,copy" if kind == "cuda" else "copy"
    for name in C.comma_list(args.baselines or default):
        if name == "copy":
            baselines["copy"] = gpu_timing.copy_s(kind, dev, nbytes) if kind != "cpu" else None
        elif name == "numpy":
            call = lambda: chain(an, bn, np.exp)  # noqa: E731
            baselines["numpy"] = C.median_s(args, call)
        elif name == "torch":
            torch = C.torch_cuda()
            if torch is None:
                C.note_once("skipping baseline torch: PyTorch with CUDA is not installed here")
                continue
            ta, tb = torch.from_numpy(an).cuda(), torch.from_numpy(bn).cuda()
            call = lambda: chain(ta, tb, torch.exp)  # noqa: E731
            baselines["torch"] = C.median_s(args, call, torch.cuda.synchronize)
        else:
            raise C.BenchmarkError(f"bench_realize_overhead: unknown baseline {name!r} (numpy, torch, copy)")
    return C.rows_against("realize-chain", {"n": n, "dtype": "float32"}, kind, poot_s, baselines, bytes=nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1K,16K,256K,4M", devices="cpu", repeat=3, number=0)
    ap.add_argument("--baselines", default=None, help="comma list (default: numpy on the CPU, torch,copy on "
                    "CUDA, copy on the other GPUs)")
    args = ap.parse_args(argv)
    rows = []
    for kind in C.available(args.devices):
        for n in args.sizes:
            rows += run_case(args, kind, int(np.prod(n)))
    return C.finish(args, "bench_realize_overhead", rows)


if __name__ == "__main__":
    main()
