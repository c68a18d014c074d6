"""`poot demo`: the main job on the default device. A short NumPy-style workload (row softmax, a small
MLP forward pass, reductions) written once against the array API, run with poot and with NumPy; it
prints results, whether they match and the time of each, then a jitted step (per-call time) and a
hand-written kernel: the parts in PARTS."""
from __future__ import annotations

import time

import numpy as np

import poot as pt
from poot.trace import context as trace_context


def _best(fn, repeat: int = 5) -> tuple[float, float]:
    """(first call, best of the following calls) in seconds."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return first, best


def softmax_rows(m, x):
    e = m.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp_forward(m, x, w1, b1, w2, b2):
    h = m.maximum(x @ w1 + b1, 0)
    return softmax_rows(m, h @ w2 + b2)


def column_stats(m, x):
    return m.stack([x.mean(axis=0), x.std(axis=0), x.max(axis=0) - x.min(axis=0)])


def _inputs(rng):
    f = np.float32
    return {
        "row softmax (2048 x 1024)": (softmax_rows, (rng.standard_normal((2048, 1024)).astype(f),), 8),
        "MLP forward (256x512 -> 1024 -> 10)": (
            mlp_forward, (rng.standard_normal((256, 512)).astype(f),
                          (rng.standard_normal((512, 1024)) * 0.05).astype(f), np.zeros(1024, f),
                          (rng.standard_normal((1024, 10)) * 0.05).astype(f), np.zeros(10, f)), 512),
        "column mean/std/range (1M x 4)": (column_stats, (rng.standard_normal((1 << 20, 4)).astype(f),),
                                           4096),
    }


def array_part(out=print) -> bool:
    """The NumPy-style workload; returns whether every result matched NumPy."""
    device = trace_context.current()
    out(f"poot {pt.__version__} on device '{device}'")
    rng = np.random.default_rng(0)
    ok = True
    for name, (fn, args, ops) in _inputs(rng).items():
        expected = fn(np, *args)
        arrays = [pt.asarray(a) for a in args]
        got = fn(pt, *arrays).numpy()
        err = float(np.max(np.abs(got.astype(np.float64) - expected)))
        tol = 4 * ops * float(np.finfo(np.float32).eps) * max(1.0, float(np.max(np.abs(expected))))
        good = got.shape == expected.shape and err <= tol
        ok &= good
        first, t_poot = _best(lambda: fn(pt, *arrays).numpy())
        _, t_numpy = _best(lambda: fn(np, *args))
        out(f"  {name}: {'matches' if good else 'DIFFERS FROM'} NumPy (max error {err:.2e}); "
            f"poot {t_poot * 1e3:.2f} ms per call (first {first * 1e3:.1f} ms), "
            f"NumPy {t_numpy * 1e3:.2f} ms")
        out(f"    result[0, :4] = {np.array2string(np.asarray(got).reshape(got.shape[0], -1)[0, :4], precision=4)}")
    return ok


def _per_call(fn, rounds: int = 2000) -> float:
    """Median seconds per call over batches of calls (the call overhead, for tiny inputs)."""
    fn()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(rounds // 5):
            fn()
        times.append((time.perf_counter() - t0) / (rounds // 5))
    return sorted(times)[2]


def jit_part(out=print) -> bool:
    """A jitted step on small arrays: traced once, then replayed; its per-call time beside eager
    poot and NumPy, and a device loop (pt.fori_loop) instead of a Python one."""
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((4, 16)).astype(np.float32)
    w_np = (rng.standard_normal((16, 16)) * 0.1).astype(np.float32)

    def step(m, x, w):
        return softmax_rows(m, m.tanh(x @ w) * 2.0)

    jitted = pt.jit(lambda x, w: step(pt, x, w))
    x, w = pt.asarray(x_np), pt.asarray(w_np)
    expected = step(np, x_np, w_np)
    got = jitted(x, w).numpy()
    eager = step(pt, x, w).numpy()
    good = bool(np.allclose(got, expected, rtol=1e-5, atol=1e-6) and np.allclose(got, eager, rtol=1e-6))
    t_jit = _per_call(lambda: jitted(x, w))
    t_eager = _per_call(lambda: step(pt, x, w).numpy(), 500)
    t_np = _per_call(lambda: step(np, x_np, w_np))
    out(f"  @pt.jit step (4x16 @ 16x16, tanh, softmax): {'matches' if good else 'DIFFERS FROM'} NumPy; "
        f"{t_jit * 1e6:.1f} us per call jitted ({jitted.trace_count} trace), eager poot "
        f"{t_eager * 1e6:.1f} us, NumPy {t_np * 1e6:.1f} us")
    v = pt.fori_loop(0, 100, lambda i, v: v * 0.5 + 1.0, pt.zeros(4))
    loop_ok = bool(np.allclose(v.numpy(), 2.0 - 2.0 ** -99))
    out(f"  pt.fori_loop: 100 device iterations of v = v/2 + 1 -> {v.numpy()[0]:.6f} "
        f"({'matches' if loop_ok else 'DIFFERS FROM'} the closed form)")
    return good and loop_ok


def kernel_part(out=print) -> bool:
    """A hand-written @pt.kernel (saxpy) and the committed GEMV asset's source: each emulated on NumPy
    arrays, then compiled and run on the default device, as the array part is (poot/kernel/demo.py).
    The oracle pseudo-device evaluates graphs with NumPy and has no kernels to launch: the CPU runs them."""
    from poot.kernel.demo import run_kernel_demo

    device = trace_context.current()
    if device == trace_context.ORACLE:
        out("kernels run on cpu: the oracle pseudo-device evaluates graphs with NumPy and launches no kernels")
        device = "cpu"
    return run_kernel_demo(device, out=out)


PARTS = [array_part, jit_part, kernel_part]


def main(out=print) -> int:
    ok = True
    for part in PARTS:
        ok &= bool(part(out=out))
    out("all results match NumPy" if ok else "SOME RESULTS DIFFER FROM NUMPY")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
