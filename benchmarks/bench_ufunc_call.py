"""What the ufunc objects cost and give: `pt.add(x, y)` through its `poot.ufunc` object against the plain
function it wraps (the call overhead the object adds: it should stay within ~0.1 us), and the ufunc
methods (`outer`, `reduce` of a non-dedicated ufunc, `accumulate`, `at` with repeated indices) with the
result realized every call, against NumPy's own methods.

The record-* cases record only (no kernel runs): they isolate the call's host cost, which is what the
object could change; the other cases realize (`.numpy()`) on every call.

    python -m benchmarks.bench_ufunc_call --json out.json
    python -m benchmarks.bench_ufunc_call --cases record-add,outer --repeat 15
"""
from __future__ import annotations

import numpy as np

from benchmarks import common as C

CASES = ("record-add", "record-add-scalar", "add", "outer", "reduce-bitwise_xor", "accumulate-maximum",
         "at-maximum")


def case_calls(case: str):
    """(poot call, {baseline: call}, params)."""
    import poot as pt

    xn = np.linspace(-1, 1, 4096, dtype=np.float32)
    x = pt.asarray(xn)
    if case.startswith("record-"):
        small = np.ones(4, np.float32)
        a, b = pt.asarray(small), pt.asarray(small)
        other = b if case == "record-add" else 2.0
        plain = pt.add.func       # the function the ufunc object wraps
        return (lambda: pt.add(a, other)), {"plain-function": lambda: plain(a, other)}, \
            {"n": 4, "note": "records only (no kernel runs)"}
    if case == "add":
        return (lambda: pt.add(x, x).numpy()), {"numpy": lambda: np.add(xn, xn)}, {"n": xn.size}
    if case == "outer":
        an, bn = xn[:256], xn[:512]
        a, b = pt.asarray(an), pt.asarray(bn)
        C.check_close(case, pt.multiply.outer(a, b).numpy(), np.multiply.outer(an, bn), rtol=1e-6)
        return (lambda: pt.multiply.outer(a, b).numpy()), {"numpy": lambda: np.multiply.outer(an, bn)}, \
            {"shape": "256x512"}
    if case == "reduce-bitwise_xor":
        mn = np.arange(64 * 1024, dtype=np.int32).reshape(64, 1024)
        m = pt.asarray(mn)
        C.check_close(case, pt.bitwise_xor.reduce(m, axis=1).numpy(), np.bitwise_xor.reduce(mn, axis=1), 0)
        return (lambda: pt.bitwise_xor.reduce(m, axis=1).numpy()), \
            {"numpy": lambda: np.bitwise_xor.reduce(mn, axis=1)}, {"shape": "64x1024", "axis": 1}
    if case == "accumulate-maximum":
        C.check_close(case, pt.maximum.accumulate(x).numpy(), np.maximum.accumulate(xn), rtol=0)
        return (lambda: pt.maximum.accumulate(x).numpy()), {"numpy": lambda: np.maximum.accumulate(xn)}, \
            {"n": xn.size}
    if case == "at-maximum":
        idx = np.arange(2048) % 512            # every target four times
        vals = xn[:2048]

        def poot_at():
            y = pt.asarray(xn)
            pt.maximum.at(y, idx, vals)
            return y.numpy()

        def numpy_at():
            y = xn.copy()
            np.maximum.at(y, idx, vals)
            return y

        C.check_close(case, poot_at(), numpy_at(), rtol=0)
        return poot_at, {"numpy": numpy_at}, {"n": xn.size, "indices": 2048, "repeats": 4}
    raise C.BenchmarkError(f"bench_ufunc_call: unknown case {case!r}")


def main(argv=None) -> dict:
    ap = C.parser(__doc__, number=0)
    C.cases_option(ap, CASES)
    args = ap.parse_args(argv)
    import poot as pt

    rows = []
    for kind in C.available(args.devices):
        for case in args.cases:
            with pt.device(kind):
                call, base, params = case_calls(case)
                sync = C.poot_sync(kind)
                measured = {}
                poot_s = C.median_s(args, call, sync)
                for name, bcall in base.items():
                    measured[name] = C.median_s(args, bcall)
            rows += C.rows_against(f"ufunc-{case}", params, kind, poot_s, measured)
    return C.finish(args, "bench_ufunc_call", rows)


if __name__ == "__main__":
    main()
