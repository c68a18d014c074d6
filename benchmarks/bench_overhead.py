"""Call overheads, where the arithmetic is nothing and the host's work is everything: a cached realize of a
small lazy chain, what recording one lazy operation costs, a jitted function's per-call time (one op, a
20-op chain, 3 ops on 1000 floats realized each call, a 20-op tanh chain, a row softmax), element-by-element Python loops (LU and Cholesky of a
60x60 matrix with scalar reads), and the first-call latency of a kernel never built before, in a fresh
process (compiled cold, or a disk-cache hit). Baselines: NumPy doing the same work; JAX's jit and Numba's
njit for the jitted calls on the CPU; PyTorch eager and torch.compile(mode="reduce-overhead") on CUDA.

`--profile N` prints a cProfile of N cached realizes (where the host time of one call goes).

    python -m benchmarks.bench_overhead --cases realize,jit-one-op,lu-loop --json out.json
    python -m benchmarks.bench_overhead --devices cpu,cuda,wgpu,vulkan --cases realize,jit-tanh
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks import common as C

F = np.float32
LOOP_N = 60


def one_op(x):
    return x * F(2.0)


def chain_20(x):
    """20 elementwise ops, float32 constants (every framework keeps float32)."""
    for _ in range(5):
        x = x * F(1.0001) + F(0.5)
        x = x - F(0.25)
        x = x * F(0.5)
    for _ in range(5):
        x = x + F(1.0)
    return x


def three_ops(x, y, m):
    """3 elementwise ops: the smallest call a user jits."""
    return m.exp(x) * y + x


def tanh_20(x, y, m):
    for _ in range(4):                            # 5 ops per round, 20 in all
        x = m.tanh(x * y + 0.5) - x / (1.0 + y * y)
    return x


def softmax(a, m):
    e = m.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def lu_loop(A, n):
    """Doolittle LU in place, no pivoting (L below the diagonal, U on and above)."""
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] = A[i, j] - A[i, k] * A[k, j]
    return A


def cholesky_loop(A, L, n):
    """Cholesky-Banachiewicz: L row by row from scalar reads of A and L."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s = s - L[j, k] * L[j, k]
        L[j, j] = s ** 0.5
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s = s - L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    return L


def spd_matrix(n=LOOP_N):
    m = np.random.default_rng(0).standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def case_calls(case: str, kind: str):
    """(poot call, {baseline: call}, params); every poot call returns a realized result."""
    import poot as pt

    x10 = np.arange(10, dtype=np.float32)
    if case == "realize":
        x = pt.asarray(x10)
        return (lambda: (x * 2.0 + 1.0).numpy()), {"numpy": lambda: x10 * 2.0 + 1.0}, {"n": 10}
    if case.startswith("record-"):
        x, y = pt.asarray(np.ones(4, np.float32)), pt.asarray(np.ones(4, np.float32))
        xn = np.ones(4, np.float32)
        op = {"record-mul": (lambda: x * y, lambda: xn * xn), "record-scalar": (lambda: x * 2.0, lambda: xn * 2.0),
              "record-exp": (lambda: pt.exp(x), lambda: np.exp(xn))}[case]
        return op[0], {"numpy": op[1]}, {"n": 4, "note": "records only (no kernel runs)"}
    if case in ("jit-one-op", "jit-20-op-chain"):
        fn = one_op if case == "jit-one-op" else chain_20
        f, x = pt.jit(fn), pt.asarray(x10)
        check = (lambda: C.check_close(case, f(x).numpy(), fn(x10), rtol=1e-5))
        check()
        base = {"numpy": lambda: fn(x10)}
        jax = C.optional("jax")
        if jax is not None and kind == "cpu":
            jf, jx = jax.jit(fn), jax.numpy.asarray(x10)
            base["jax"] = lambda: jf(jx).block_until_ready()
        numba = C.optional("numba")
        if numba is not None and kind == "cpu":
            nf = numba.njit(fn)
            base["numba"] = lambda: nf(x10)
        return (lambda: f(x).numpy()), base, {"n": 10}
    if case in ("jit-3-op", "jit-tanh"):
        fn, n = (three_ops, 1000) if case == "jit-3-op" else (tanh_20, 4096)
        rng = np.random.default_rng(4)
        xn, yn = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        f = pt.jit(lambda a, b: fn(a, b, pt))
        px, py = pt.realize(pt.asarray(xn)), pt.realize(pt.asarray(yn))
        C.check_close(case, f(px, py).numpy(), fn(xn.astype(np.float64), yn.astype(np.float64), np), 1e-5, 1e-5)
        base = {"numpy": lambda: fn(xn, yn, np)}
        torch = C.torch_cuda()
        if torch is not None and kind == "cuda":
            tx, ty = torch.from_numpy(xn).cuda(), torch.from_numpy(yn).cuda()
            eager, ro = (lambda a, b: fn(a, b, torch)), torch.compile(lambda a, b: fn(a, b, torch),
                                                                      mode="reduce-overhead")
            base = {"torch": lambda: (eager(tx, ty), torch.cuda.synchronize()),
                    "torch_reduce_overhead": lambda: (ro(tx, ty), torch.cuda.synchronize())}
        return (lambda: pt.realize(f(px, py)).numpy() if kind == "cpu" else pt.realize(f(px, py))), base, {"n": n}
    if case == "jit-softmax":
        xn = np.random.default_rng(2).random((256, 1024), dtype=np.float32)
        f, px = pt.jit(lambda a: softmax(a, pt)), pt.realize(pt.asarray(xn))
        C.check_close(case, f(px).numpy(), softmax(xn.astype(np.float64), np), 1e-5, 1e-7)
        return (lambda: f(px).numpy()), {"numpy": lambda: softmax(xn, np)}, {"shape": "256x1024"}
    if case in ("lu-loop", "cholesky-loop"):
        a0 = spd_matrix()
        if case == "lu-loop":
            C.check_close(case, lu_loop(pt.asarray(a0), LOOP_N).numpy(), lu_loop(a0.copy(), LOOP_N), 1e-12, 1e-12)
            return (lambda: lu_loop(pt.asarray(a0), LOOP_N).numpy()), {"numpy": lambda: lu_loop(a0.copy(), LOOP_N)}, \
                {"n": LOOP_N, "dtype": "float64"}
        zeros = lambda: pt.zeros(a0.shape, dtype=pt.float64)  # noqa: E731
        C.check_close(case, cholesky_loop(pt.asarray(a0), zeros(), LOOP_N).numpy(), np.linalg.cholesky(a0),
                      1e-10, 1e-10)
        return (lambda: cholesky_loop(pt.asarray(a0), zeros(), LOOP_N).numpy()), \
            {"numpy": lambda: cholesky_loop(a0, np.zeros_like(a0), LOOP_N)}, {"n": LOOP_N, "dtype": "float64"}
    raise C.BenchmarkError(f"bench_overhead: unknown case {case!r}; known: {', '.join(CASES)}")


CASES = ("realize", "record-mul", "record-scalar", "record-exp", "jit-one-op", "jit-20-op-chain", "jit-3-op",
         "jit-tanh", "jit-softmax", "lu-loop", "cholesky-loop", "first-call-cold", "first-call-disk-hit")

_FIRST_CALL = """
import time, os, numpy as np, poot as pt
with pt.device(os.environ["BENCH_DEVICE"]):
    x = pt.array(np.arange(64, dtype=np.float32))
    seed = float(os.environ["SEED"])
    (x + 1.0).numpy()                                  # warm the process (imports, device, pools)
    t0 = time.perf_counter()
    (pt.exp(x) * seed + 1.5).numpy()                   # a kernel this process has never built
    print(time.perf_counter() - t0)
"""


def first_call_s(kind: str, seed: int, cache_dir: str) -> float:
    env = dict(os.environ, SEED=str(seed), POOT_CACHE_DIR=cache_dir, BENCH_DEVICE=kind)
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True)
    if out.returncode:
        raise C.BenchmarkError(f"first-call latency on {kind}: the child process failed: {out.stderr.strip()[-400:]}")
    return float(out.stdout.strip().splitlines()[-1])


def first_call_row(args, kind: str, case: str) -> list[dict]:
    """Each sample is a fresh process; the time its kernel's first call took (the child measures it)."""
    if case == "first-call-disk-hit":
        tmp = tempfile.mkdtemp()
        first_call_s(kind, 7, tmp)
        samples = [first_call_s(kind, 7, tmp) for _ in range(args.repeat)]
    else:
        samples = [first_call_s(kind, 1000 + i, tempfile.mkdtemp()) for i in range(args.repeat)]
    return [C.row(case, {"processes": args.repeat}, kind, C.median(samples))]


def profile(kind: str, calls: int) -> None:
    import cProfile
    import pstats

    import poot as pt

    with pt.device(kind):
        call = case_calls("realize", kind)[0]
        call()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            call()
        prof.disable()
    print(f"cProfile of {calls} cached realizes of (x * 2 + 1).numpy() on 10 float32, {kind}:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(22)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, number=0)
    C.cases_option(ap, CASES)
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print a cProfile of N cached realizes")
    args = ap.parse_args(argv)
    import poot as pt

    rows = []
    for kind in C.available(args.devices):
        if args.profile:
            profile(kind, args.profile)
        for case in args.cases:
            if case.startswith("first-call"):
                rows += first_call_row(args, kind, case)
                continue
            with pt.device(kind):
                call, base, params = case_calls(case, kind)
                slow = case.endswith("-loop")
                sync = C.poot_sync(kind)
                kw = C.timing_kwargs(args, call, sync) if not slow else {"repeat": min(args.repeat, 5), "number": 1}
                poot_s = C.median(C.time_call(call, **kw))
            measured = {}
            for name, bcall in base.items():
                kw = C.timing_kwargs(args, bcall) if not slow else {"repeat": min(args.repeat, 5), "number": 1}
                measured[name] = C.median(C.time_call(bcall, **kw))
            rows += C.rows_against(f"overhead-{case}", params, kind, poot_s, measured)
    return C.finish(args, "bench_overhead", rows)


if __name__ == "__main__":
    main()
