"""Fused elementwise chains over float32 (or bfloat16: `--dtypes f32,bf16`) arrays: poot's call beside NumPy,
numexpr and Numba (parallel loops; float32 only) on the CPU, PyTorch eager and torch.compile on CUDA, and the
device's own buffer copy of the same bytes (`copy`: the memory ceiling of a chain that reads its inputs once
and writes once) on the GPUs.

poot's call is `fn(a, b, c).numpy()` on the CPU and `pt.realize(fn(a, b, c))` on a GPU (inputs resident
on the device), realized every repetition; `kernel_s` is the GPU time of the kernels the call launches
(benchmarks/gpu_timing.py). Bytes: each input read once, the result written once.

    python -m benchmarks.bench_elementwise --sizes 1M,10M --chains mixed,sin --json out.json
    python -m benchmarks.bench_elementwise --devices cuda --sizes 256M --json out.json
    python -m benchmarks.bench_elementwise --devices vulkan --dtypes f32,bf16 --sizes 64M --number 0
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from benchmarks import common as C

DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}
# (rtol, atol): a bf16 chain rounds each step to 8 bits, and its terms (up to ~6 in size) may cancel
TOLERANCE = {"f32": (2e-5, 1e-5), "bf16": (2e-2, 0.1)}

# name -> (numexpr / Numba expression, fn(a, b, c, namespace), inputs read)
CHAINS = {
    "mixed": ("2*a + b*c - exp(a)/(1 + b*b)", lambda a, b, c, m: 2 * a + b * c - m.exp(a) / (1 + b * b), 3),
    "poly": ("a*a*a + 3*a*b - c", lambda a, b, c, m: a * a * a + 3 * a * b - c, 3),
    "transcendental": ("sin(a)*cos(b) + tanh(c)", lambda a, b, c, m: m.sin(a) * m.cos(b) + m.tanh(c), 3),
    "sin": ("sin(a)", lambda a, b, c, m: m.sin(a), 1),
    "cos": ("cos(a)", lambda a, b, c, m: m.cos(a), 1),
    "tanh": ("tanh(a)", lambda a, b, c, m: m.tanh(a), 1),
    "exp": ("exp(a)", lambda a, b, c, m: m.exp(a), 1),
    "add": ("a + 1", lambda a, b, c, m: a + 1.0, 1),
    "neg": ("-a", lambda a, b, c, m: -a, 1),          # one read, one write: the bandwidth reference
}
DEFAULT_BASELINES = {"cpu": "numpy,numexpr,numba", "cuda": "torch,torch_compile,copy"}
_numba: dict = {}


def numba_chain(numba, chain: str):
    """The chain as a Numba parallel loop writing a preallocated float32 result (compiled once)."""
    if chain not in _numba:
        ufuncs = {name: getattr(np, name) for name in ("exp", "sin", "cos", "tanh")}
        scalar = numba.njit(eval("lambda a, b, c: " + CHAINS[chain][0], ufuncs))

        @numba.njit(parallel=True)
        def run(a, b, c, out):
            for i in numba.prange(a.size):
                out[i] = scalar(a[i], b[i], c[i])
        _numba[chain] = run
    return _numba[chain]


def baseline_call(name: str, chain: str, host, kind: str, dev):
    """(call, sync) of baseline `name` for `chain` over the host arrays, or None where it is missing."""
    expr, fn, _ = CHAINS[chain]
    a, b, c = host
    if name == "numpy":
        return (lambda: fn(a, b, c, np)), None
    if a.dtype != np.float32 and name in ("numexpr", "numba"):
        return None
    if name == "numexpr":
        ne = C.numexpr_module()
        return None if ne is None else ((lambda: ne.evaluate(expr, local_dict={"a": a, "b": b, "c": c})), None)
    if name == "numba":
        numba = C.numba_module()
        if numba is None:
            return None
        kernel, out = numba_chain(numba, chain), np.empty_like(a)
        return (lambda: kernel(a, b, c, out)), None
    if name in ("torch", "torch_compile"):
        torch = C.torch_cuda()
        if torch is None:
            return None
        tdt = torch.bfloat16 if a.dtype == ml_dtypes.bfloat16 else torch.float32
        ta, tb, tc = (torch.from_numpy(x.astype(np.float32)).cuda().to(tdt) for x in host)
        f = (lambda x, y, z: fn(x, y, z, torch))
        f = torch.compile(f) if name == "torch_compile" else f
        return (lambda: f(ta, tb, tc)), torch.cuda.synchronize
    raise C.BenchmarkError(f"bench_elementwise: unknown baseline {name!r} (numpy, numexpr, numba, torch, "
                           "torch_compile, copy)")


def run_case(args, kind: str, chain: str, n: int, dtype: str = "f32") -> list[dict]:
    import poot as pt

    from benchmarks import gpu_timing

    _, fn, reads = CHAINS[chain]
    rng = np.random.default_rng(0)
    host = tuple(rng.random(n, dtype=np.float32).astype(DTYPES[dtype]) for _ in range(3))
    nbytes = host[0].itemsize * n * (reads + 1)
    dev, _ = C.device_or_none(kind)
    with pt.device(kind):
        pa, pb, pc = (pt.realize(pt.array(x)) for x in host)
        if kind == "cpu":
            call = lambda: fn(pa, pb, pc, pt).numpy()          # noqa: E731
        else:
            call = lambda: pt.realize(fn(pa, pb, pc, pt))      # noqa: E731
        got = np.asarray(call().numpy() if kind != "cpu" else call())
        k = slice(None, None, max(1, n // 65536))
        C.check_close(f"{chain} {dtype} on {kind}", got[k].astype(np.float64),
                      fn(*(x[k].astype(np.float64) for x in host), np), *TOLERANCE[dtype])
        sync = C.poot_sync(kind)
        poot_s = C.median_s(args, call, sync)
        ks = gpu_timing.kernel_s(kind, dev, call) if kind != "cpu" and not args.no_kernel_time else None
    baselines = {}
    for name in C.comma_list(args.baselines or DEFAULT_BASELINES.get(kind, "copy")):
        if name == "copy":
            baselines["copy"] = gpu_timing.copy_s(kind, dev, nbytes) if kind != "cpu" else None
            continue
        made = baseline_call(name, chain, host, kind, dev)
        if made is None:
            C.note_once(f"skipping baseline {name} ({dtype}): not installed here, no CUDA for PyTorch, or float32 only")
            continue
        bcall, bsync = made
        baselines[name] = C.median_s(args, bcall, bsync)
    params = {"chain": chain, "n": n, "dtype": np.dtype(DTYPES[dtype]).name}
    return C.rows_against(f"elementwise-{chain}", params, kind, poot_s, baselines, kernel_s=ks, bytes=nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="10M", dtypes="f32")
    ap.add_argument("--chains", type=C.comma_list, default=list(CHAINS), help="comma list of: " + ", ".join(CHAINS))
    ap.add_argument("--baselines", default=None, help="comma list (default per device: "
                    + "; ".join(f"{k}: {v}" for k, v in DEFAULT_BASELINES.items()) + "; GPUs: copy)")
    ap.add_argument("--no-kernel-time", action="store_true", help="skip the GPU kernel_s column")
    args = ap.parse_args(argv)
    unknown = [c for c in args.chains if c not in CHAINS]
    if unknown:
        ap.error(f"unknown chains {unknown}; known: {', '.join(CHAINS)}")
    unknown = [d for d in args.dtypes if d not in DTYPES]
    if unknown:
        ap.error(f"unknown dtypes {unknown}; known: {', '.join(DTYPES)}")
    rows = []
    for kind in C.available(args.devices):
        for n in args.sizes:
            for chain in args.chains:
                for dtype in args.dtypes:
                    rows += run_case(args, kind, chain, int(np.prod(n)), dtype)
    return C.finish(args, "bench_elementwise", rows)


if __name__ == "__main__":
    main()
