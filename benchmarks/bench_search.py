"""Searching and counting: `pt.searchsorted`, `pt.histogram` and `pt.unique_values` / `pt.unique_all`.

On a GPU device (`--devices wgpu`, vulkan, cuda, rocm) these are lazy operations around the sort kernels
(poot/trace/device_search.py, device_histogram.py); each case runs beside poot's former path, the host
ops (`poot_host`: POOT_GPU_SORT=host, a copy to the host, NumPy, a copy back), and beside NumPy on the
host data. On the CPU device (host ops: NumPy on the program's buffers) beside NumPy alone. Each
repetition is the user's call realized (`pt.realize` of every result), the device synchronized at the
end of each round; the input is an already realized poot array of normally distributed values (times
1000 before an integer cast, so integers tie often); searchsorted searches the sorted input for n/4
queries. Figures are medians; ratios are baseline seconds / poot seconds (above 1: poot is faster).

    python -m benchmarks.bench_search --devices cpu,vulkan --sizes 1e5,1e6 --dtypes float32,int32 --json out.json
"""
from __future__ import annotations

import numpy as np

from benchmarks import common as C

OPS = ("searchsorted", "histogram", "unique_values", "unique_all")


def _inputs(n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(n) * 1000).astype(dtype)
    return a, (rng.standard_normal(max(n // 4, 1)) * 1000).astype(dtype)


def _poot_call(op: str, pt, x, table, queries):
    """The user's call: the op's results realized."""
    def call():
        got = _result(op, pt, x, table, queries)
        pt.realize(*(got if isinstance(got, tuple) else (got,)))
        return got
    return call


def _numpy_call(op: str, a: np.ndarray, sorted_a: np.ndarray, q: np.ndarray):
    if op == "searchsorted":
        return lambda: np.searchsorted(sorted_a, q)
    if op == "histogram":
        return lambda: np.histogram(a, bins=64)
    if op == "unique_values":
        return lambda: np.unique(a)
    return lambda: np.unique(a, return_index=True, return_inverse=True, return_counts=True)


def _check(op: str, got, a: np.ndarray, sorted_a: np.ndarray, q: np.ndarray) -> None:
    if op == "searchsorted":
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(sorted_a, q))
    elif op == "histogram":
        np.testing.assert_array_equal(got[0].numpy(), np.histogram(a, bins=64)[0])
    elif op == "unique_values":
        np.testing.assert_array_equal(got.numpy(), np.unique(a))
    else:
        np.testing.assert_array_equal(got[3].numpy(), np.unique(a, return_counts=True)[1][:1024])


def _result(op: str, pt, x, table, queries):
    """The op's results (lazy poot arrays; unique_values reads the number of values)."""
    if op == "searchsorted":
        return pt.searchsorted(table, queries)
    if op == "histogram":
        return pt.histogram(x, bins=64)
    if op == "unique_values":
        return pt.unique_values(x)
    return pt.unique_all(x, size=1024)


def run_case(args, kind: str, op: str, n: int, dtype: str) -> list[dict]:
    import poot as pt

    a, q = _inputs(n, dtype)
    sorted_a = np.sort(a)
    sync = C.poot_sync(kind)
    times = {}
    with pt.device(kind):
        x, table, queries = pt.asarray(a), pt.asarray(sorted_a), pt.asarray(q)
        pt.realize(x, table, queries)
        call = _poot_call(op, pt, x, table, queries)
        _check(op, call(), a, sorted_a, q)
        poot_s = C.median_s(args, call, sync)
        if kind != "cpu":
            with C.env_setting("POOT_GPU_SORT", "host"):          # poot's former path: the host ops
                _check(op, call(), a, sorted_a, q)
                times["poot_host"] = C.median_s(args, call, sync)
    times["numpy"] = C.median_s(args, _numpy_call(op, a, sorted_a, q), None)
    return C.rows_against(f"search-{op}", {"n": C.size_label(n), "dtype": dtype}, kind, poot_s, times,
                          bytes=a.nbytes)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, sizes="1e5,1e6", dtypes="float32,int32", repeat=5)
    C.cases_option(ap, OPS, flag="--ops")
    args = ap.parse_args(argv)
    rows = []
    for kind in C.available(args.devices):
        for op in args.ops:
            for n in args.sizes:
                for dtype in args.dtypes:
                    rows += run_case(args, kind, op, int(np.prod(n)), dtype)
    return C.finish(args, "bench_search", rows)


if __name__ == "__main__":
    main()
