"""Token sampling: `pt.nn.sample` (one kernel a row, kernels/sampling/) on rows of logits of an LLM's
vocabulary, greedy or drawn after temperature, top-k and top-p, beside the same draw written the usual
way: NumPy on the CPU (argmax; softmax, a descending sort and a cumulative sum for top-p,
np.argpartition for top-k, then an inverse-CDF draw), PyTorch on CUDA (torch.argmax; torch.topk, a
sort, cumsum and torch.multinomial, as Hugging Face's samplers do). Each repetition is the user's call:
the token read back (`.numpy()`, `.item()`), so the figure includes a device round trip. Ratios are
baseline seconds / poot seconds (above 1: poot is faster).

    python -m benchmarks.bench_sampling --devices cpu,vulkan --sizes 151936 --json out.json
    python -m benchmarks.bench_sampling --devices cuda --cases greedy,top-p --sizes 32000,151936
"""
from __future__ import annotations

import numpy as np

from benchmarks import common as C

CASES = {  # name -> pt.nn.sample's settings
    "greedy": {"temperature": 0.0},
    "temperature": {"temperature": 0.8},
    "top-p": {"temperature": 0.8, "top_p": 0.9},
    "top-k-top-p": {"temperature": 0.8, "top_k": 50, "top_p": 0.9},
}


def _numpy_sample(l: np.ndarray, rng, temperature: float, top_k: int = 0, top_p: float = 1.0) -> int:
    if temperature == 0:
        return int(np.argmax(l))
    x = l / temperature
    if top_k:
        kth = np.partition(x, x.size - top_k)[x.size - top_k]
        x = np.where(x >= kth, x, -np.inf)
    p = np.exp(x - x.max())
    p /= p.sum()
    if top_p < 1:
        order = np.argsort(-p)
        mass = np.cumsum(p[order])
        keep = order[: int(np.searchsorted(mass, top_p)) + 1]
        q = np.zeros_like(p)
        q[keep] = p[keep]
        p = q / q.sum()
    return int(np.searchsorted(np.cumsum(p), rng.random()))


def _torch_sample(torch, l, temperature: float, top_k: int = 0, top_p: float = 1.0) -> int:
    if temperature == 0:
        return int(torch.argmax(l).item())
    x = l / temperature
    if top_k:
        kth = torch.topk(x, top_k).values[-1]
        x = torch.where(x < kth, torch.full_like(x, -float("inf")), x)
    if top_p < 1:
        s, i = torch.sort(x, descending=True)
        p = torch.softmax(s, -1)
        drop = p.cumsum(-1) - p > top_p
        x = torch.full_like(x, -float("inf")).scatter(-1, i, s.masked_fill(drop, -float("inf")))
    return int(torch.multinomial(torch.softmax(x, -1), 1).item())


def run_case(args, kind: str, case: str, vocab: int) -> list[dict]:
    import poot as pt

    settings = CASES[case]
    logits = (np.random.default_rng(0).standard_normal(vocab) * 3).astype(np.float32)
    times = {}
    with pt.device(kind):
        x = pt.realize(pt.asarray(logits))
        keys = pt.random.split(pt.random.key(0), 64)
        pt.realize(keys)
        state = {"i": 0}

        def call():
            state["i"] = (state["i"] + 1) % 64
            return int(pt.nn.sample(x, keys[state["i"]], **settings).numpy())

        if settings["temperature"] == 0:
            C.check_close(f"sample-{case}", np.array(call()), np.array(np.argmax(logits)), 0)
        poot_s = C.median_s(args, call, C.poot_sync(kind))
    if kind == "cpu":
        rng = np.random.default_rng(1)
        times["numpy"] = C.median_s(args, lambda: _numpy_sample(logits, rng, **settings))
    torch = C.torch_cuda() if kind == "cuda" else None
    if torch is not None:
        lt = torch.tensor(logits, device="cuda")
        times["torch"] = C.median_s(args, lambda: _torch_sample(torch, lt, **settings), torch.cuda.synchronize)
    return C.rows_against(f"sample-{case}", {"vocab": vocab}, kind, poot_s, times, bytes=logits.nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="32000,151936", repeat=7)
    C.cases_option(ap, tuple(CASES))
    args = ap.parse_args(argv)
    rows = []
    for kind in C.available(args.devices):
        for case in args.cases:
            for vocab in args.sizes:
                rows += run_case(args, kind, case, int(np.prod(vocab)))
    return C.finish(args, "bench_sampling", rows)


if __name__ == "__main__":
    main()
