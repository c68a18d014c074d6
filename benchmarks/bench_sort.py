"""Sorting on the CPU: `pt.sort`, `pt.argsort`, `pt.unique_values`, `pt.unique_all` and `pt.unique` with
counts, beside NumPy's default (unstable SIMD) call and its stable one (`kind="stable"`, what the array
API's default `stable=True` promises; poot's results are always the stable ones).

Each repetition is the user's call realized (`.numpy()` of every result), the input an already realized
poot array of normally distributed values (times 1000 before an integer cast, so integers tie often).
The calls of one case take turns (poot, NumPy, NumPy stable, poot, ...), each figure the median of its
repetitions. Ratios are NumPy seconds / poot seconds (above 1: poot is faster).

    python -m benchmarks.bench_sort --sizes 1e6,1e7 --dtypes float32,float64,int32 --json out.json
"""
from __future__ import annotations


import numpy as np

from benchmarks import common as C

OPS = ("sort", "argsort", "unique_values", "unique_all", "unique_counts")


def _poot_call(op: str, pt, x):
    if op == "sort":
        return lambda: pt.sort(x).numpy()
    if op == "argsort":
        return lambda: pt.argsort(x).numpy()
    if op == "unique_values":
        return lambda: pt.unique_values(x).numpy()
    if op == "unique_all":
        return lambda: [r.numpy() for r in pt.unique_all(x)]
    return lambda: [r.numpy() for r in pt.unique(x, return_counts=True)]


def _numpy_calls(op: str, a: np.ndarray) -> dict:
    if op == "sort":
        return {"numpy": lambda: np.sort(a), "numpy_stable": lambda: np.sort(a, kind="stable")}
    if op == "argsort":
        return {"numpy": lambda: np.argsort(a), "numpy_stable": lambda: np.argsort(a, kind="stable")}
    if op == "unique_values":
        return {"numpy": lambda: np.unique(a)}
    if op == "unique_all":
        return {"numpy": lambda: np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                            equal_nan=False)}
    return {"numpy": lambda: np.unique(a, return_counts=True)}


def _check(op: str, got, a: np.ndarray) -> None:
    if op == "sort":
        np.testing.assert_array_equal(got, np.sort(a, kind="stable"))
    elif op == "argsort":
        np.testing.assert_array_equal(got, np.argsort(a, kind="stable"))
    elif op == "unique_values":
        np.testing.assert_array_equal(got, np.unique(a))


def run_case(args, op: str, n: int, dtype: str) -> list[dict]:
    import poot as pt

    rng = np.random.default_rng(0)
    a = (rng.standard_normal(n) * 1000).astype(dtype)
    x = pt.asarray(a)
    pt.realize(x)
    call = _poot_call(op, pt, x)
    _check(op, call(), a)
    times = C.interleaved_medians({"poot": call, **_numpy_calls(op, a)}, args.repeat, args.warmup)
    poot_s = times.pop("poot")
    baselines = times
    return C.rows_against(f"sort-{op}", {"n": C.size_label(n), "dtype": dtype}, "cpu", poot_s, baselines,
                          bytes=a.nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1e6,1e7", dtypes="float32,float64,int32", repeat=5)
    ap.add_argument("--ops", type=C.comma_list, default=list(OPS), help="comma list of: " + ", ".join(OPS))
    args = ap.parse_args(argv)
    unknown = [o for o in args.ops if o not in OPS]
    if unknown:
        ap.error(f"unknown ops {unknown}; known: {', '.join(OPS)}")
    rows = []
    for op in args.ops:
        for n in args.sizes:
            for dtype in args.dtypes:
                rows += run_case(args, op, int(np.prod(n)), dtype)
    return C.finish(args, "bench_sort", rows)


if __name__ == "__main__":
    main()
