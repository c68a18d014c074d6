"""A parallel sort of host memory: one sample-sort step over the cores, then NumPy's sort per bucket.

NumPy's sort (its SIMD quicksort) runs on one core. For a long 1-D array `sort_into` uses them all:

1. splitters: quantiles of a strided sample of the values, one bucket per thread;
2. count: each thread counts, over its own slice of the input, how many values reach each splitter
   (a native loop of compares and adds, vectorized);
3. scatter: each thread moves the values of its slice to their buckets in the destination, at
   offsets from the counts, so the buckets are contiguous and in order (a native branch-free loop:
   the bucket's write pointer is selected, not branched to);
4. sort: each bucket is sorted in place by NumPy on its own thread (NumPy releases the GIL).

`map_buckets` is steps 1-3 with any work per bucket in step 4 (unique sorts a bucket and keeps its
distinct values there, on that thread).

A value's bucket is the number of splitters s with `not (value < s)`, so NaNs (which compare false)
land in the last bucket, where NumPy's sort puts them last, and equal values share a bucket. Like
NumPy's default sort it is unstable: poot.graph.host_sort puts back afterwards the ties that can be
told apart (signed zeros, NaN payloads).

`argsort_into` is the same partition carrying each value's index beside it (a second write pointer per
bucket), then on each thread a stable argsort of a bucket (the values of a bucket keep the order they
had in the source, so a bucket's ties in bucket order are in source order), and the bucket's indices
mapped back to the source's: a stable argsort over all the cores.

The count and scatter loops are LLVM IR compiled once per (dtype, buckets) with llvmlite, in an
engine of their own. Short arrays, one core, or a dtype without a loop here take NumPy's sort.
"""
from __future__ import annotations

import ctypes
import itertools
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from poot.devices.cpu_threads import cores

log = logging.getLogger("poot.devices")

# below this many elements per thread the partition costs more than the split sort saves (measured
# on a 2-core VM: at 2**17 elements the parallel sort is about as fast as NumPy's)
MIN_PER_THREAD = 1 << 16
MAX_BUCKETS = 8
# an argsort splits into more buckets than threads: a bucket's argsort and its gathers stay in cache
ARGSORT_BUCKETS_PER_THREAD = 4
SAMPLES_PER_BUCKET = 128

# dtype char -> (LLVM type, less-than instruction)
_TYPES = {
    "f": ("float", "fcmp olt"), "d": ("double", "fcmp olt"),
    "b": ("i8", "icmp slt"), "h": ("i16", "icmp slt"), "i": ("i32", "icmp slt"), "l": ("i64", "icmp slt"),
    "q": ("i64", "icmp slt"),
    "B": ("i8", "icmp ult"), "H": ("i16", "icmp ult"), "I": ("i32", "icmp ult"), "L": ("i64", "icmp ult"),
    "Q": ("i64", "icmp ult"), "?": ("i8", "icmp ult"),
}

# every loop is `void f(T* src, i64 n, T* splitters, void* out)`
_SCATTER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


def _element_loop(name: str, out: str, ty: str, ns: int, entry: str, phis: str, body: str,
                  done: str) -> str:
    """`void name(T* src, i64 n, T* splitters, ptr out)`: the splitters loaded once as %s0.., then
    `body` run with each element %x of src (the loop's `phis` carry its state), then `done`."""
    spl = "\n".join(f"  %sp{k} = getelementptr {ty}, ptr %spl, i64 {k}\n  %s{k} = load {ty}, ptr %sp{k}"
                    for k in range(ns))
    return f"""define void @{name}(ptr noalias %src, i64 %n, ptr noalias %spl, ptr noalias %{out}) {{
entry:
{spl}
{entry}
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%inext, %loop]
{phis}
  %p = getelementptr {ty}, ptr %src, i64 %i
  %x = load {ty}, ptr %p
{body}
  %inext = add nuw i64 %i, 1
  %more = icmp ult i64 %inext, %n
  br i1 %more, label %loop, label %done
done:
{done}
  ret void
}}
"""


def _reaches(ty: str, lt: str, ns: int, acc: str) -> str:
    """IR adding 1 where %x reaches splitter k (!(x < s_k)), for each k: to the count %c{k} as %cn{k}
    (`acc` "c"), or to a running bucket number, %b{k} as %b{k+1} (`acc` "b")."""
    step = (lambda k: f"%b{k + 1} = add i64 %b{k}") if acc == "b" else (lambda k: f"%cn{k} = add i64 %c{k}")
    return "\n".join(f"  %lt{k} = {lt} {ty} %x, %s{k}\n  %ge{k} = xor i1 %lt{k}, true\n"
                     f"  %z{k} = zext i1 %ge{k} to i64\n  {step(k)}, %z{k}" for k in range(ns))


def _count_ir(name: str, ty: str, lt: str, ns: int) -> str:
    """`void name(T* src, i64 n, T* splitters, i64* reach)`: reach[k] = #{x in src: !(x < s_k)}."""
    phis = "\n".join(f"  %c{k} = phi i64 [0, %entry], [%cn{k}, %loop]" for k in range(ns))
    stores = "\n".join([f"  %cf{k} = phi i64 [0, %entry], [%cn{k}, %loop]" for k in range(ns)]
                       + [f"  %rp{k} = getelementptr i64, ptr %reach, i64 {k}\n  store i64 %cf{k}, ptr %rp{k}"
                          for k in range(ns)])
    return _element_loop(name, "reach", ty, ns, "", phis, _reaches(ty, lt, ns, "c"), stores)


def _scatter_ir(name: str, ty: str, lt: str, ns: int) -> str:
    """`void name(T* src, i64 n, T* splitters, ptr* heads)`: each x of src stored at heads[b(x)]++,
    b(x) = #{k: !(x < s_k)}; the heads (one write pointer per bucket) stay in registers."""
    nb = ns + 1
    heads = "\n".join(f"  %hp{b} = getelementptr ptr, ptr %heads, i64 {b}\n  %h0_{b} = load ptr, ptr %hp{b}"
                      for b in range(nb))
    phis = "\n".join(f"  %h{b} = phi ptr [%h0_{b}, %entry], [%hn{b}, %loop]" for b in range(nb))
    body = ["  %b0 = add i64 0, 0", _reaches(ty, lt, ns, "b")]
    last = f"%h{nb - 1}"                       # the write pointer: a select chain over the buckets
    for b in range(nb - 2, -1, -1):
        body.append(f"  %is{b} = icmp eq i64 %b{ns}, {b}\n  %w{b} = select i1 %is{b}, ptr %h{b}, ptr {last}")
        last = f"%w{b}"
    body.append(f"  store {ty} %x, ptr {last}")
    for b in range(nb):
        body.append(f"  %eq{b} = icmp eq i64 %b{ns}, {b}\n  %st{b} = zext i1 %eq{b} to i64\n"
                    f"  %hn{b} = getelementptr {ty}, ptr %h{b}, i64 %st{b}")
    return _element_loop(name, "heads", ty, ns, heads, phis, "\n".join(body), "")


def _scatter_indexed_ir(name: str, ty: str, lt: str, ns: int) -> str:
    """`void name(T* src, i64 n, T* splitters, ptr* heads)`: as the scatter, and each x's index
    (heads[2 * buckets], the slice's first index, plus its place in src) stored at heads[buckets + b(x)]++
    (int64)."""
    nb = ns + 1
    entry = "\n".join(f"  %hp{b} = getelementptr ptr, ptr %heads, i64 {b}\n  %h0_{b} = load ptr, ptr %hp{b}\n"
                      f"  %jp{b} = getelementptr ptr, ptr %heads, i64 {nb + b}\n  %j0_{b} = load ptr, ptr %jp{b}"
                      for b in range(nb))
    entry += f"\n  %basep = getelementptr ptr, ptr %heads, i64 {2 * nb}\n  %base = load i64, ptr %basep"
    phis = "\n".join(f"  %h{b} = phi ptr [%h0_{b}, %entry], [%hn{b}, %loop]\n"
                     f"  %j{b} = phi ptr [%j0_{b}, %entry], [%jn{b}, %loop]" for b in range(nb))
    body = ["  %b0 = add i64 0, 0", _reaches(ty, lt, ns, "b")]
    value, index = f"%h{nb - 1}", f"%j{nb - 1}"
    for b in range(nb - 2, -1, -1):
        body.append(f"  %is{b} = icmp eq i64 %b{ns}, {b}\n  %w{b} = select i1 %is{b}, ptr %h{b}, ptr {value}\n"
                    f"  %v{b} = select i1 %is{b}, ptr %j{b}, ptr {index}")
        value, index = f"%w{b}", f"%v{b}"
    body.append(f"  store {ty} %x, ptr {value}\n  %gi = add i64 %base, %i\n  store i64 %gi, ptr {index}")
    for b in range(nb):
        body.append(f"  %eq{b} = icmp eq i64 %b{ns}, {b}\n  %st{b} = zext i1 %eq{b} to i64\n"
                    f"  %hn{b} = getelementptr {ty}, ptr %h{b}, i64 %st{b}\n"
                    f"  %jn{b} = getelementptr i64, ptr %j{b}, i64 %st{b}")
    return _element_loop(name, "heads", ty, ns, entry, phis, "\n".join(body), "")


class _Loops:
    """The compiled count, scatter and indexed-scatter loops, by (dtype char, splitter count)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._engine = None
        self._tm = None
        self._fns: dict = {}

    def get(self, char: str, ns: int):
        key = (char, ns)
        fns = self._fns.get(key)
        if fns is None:
            with self._lock:
                fns = self._fns.get(key) or self._build(char, ns)
                self._fns[key] = fns
        return fns

    def _build(self, char: str, ns: int):
        import llvmlite.binding as llvm

        ty, lt = _TYPES[char]
        if self._engine is None:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            self._tm = llvm.Target.from_default_triple().create_target_machine(
                cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3)
            self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self._tm)
        tag = f"{ord(char)}_{ns}"
        count, scatter, indexed = (f"poot_sort_{what}_{tag}" for what in ("count", "scatter", "scatter_indexed"))
        mod = llvm.parse_assembly(_count_ir(count, ty, lt, ns) + _scatter_ir(scatter, ty, lt, ns)
                                  + _scatter_indexed_ir(indexed, ty, lt, ns))
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pb = llvm.create_pass_builder(self._tm, pto)
        pb.getModulePassManager().run(mod, pb)
        self._engine.add_module(mod)
        self._engine.finalize_object()
        return tuple(_SCATTER(self._engine.get_function_address(f)) for f in (count, scatter, indexed))


_LOOPS = _Loops()
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _on_all(threads: int, tasks: int, work) -> None:
    """work(k) for k in 0..tasks-1 on `threads` threads: this one and the pool's, each taking the next
    task as it finishes one, so this thread also does the share of a pool thread that starts late (a
    core idle for a while can take a millisecond to wake)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < threads - 1:
            _POOL = ThreadPoolExecutor(threads - 1, thread_name_prefix="poot-sort")
        pool = _POOL
    order = itertools.count()       # next() is atomic under the GIL: each task is taken once

    def take() -> None:
        k = next(order)
        while k < tasks:
            work(k)
            k = next(order)

    futures = [pool.submit(take) for _ in range(threads - 1)]
    try:
        take()
    finally:
        for f in futures:
            f.result()


def _splitters(src: np.ndarray, buckets: int) -> np.ndarray | None:
    """buckets - 1 increasing splitters from a strided sample (NaNs left out; None if all NaN)."""
    step = max(1, src.size // (SAMPLES_PER_BUCKET * buckets))
    sample = np.sort(src[::step])
    if sample.dtype.kind == "f":
        sample = sample[: sample.size - int(np.isnan(sample).sum())]   # NaNs sort last
    if sample.size == 0:
        return None
    at = (np.arange(1, buckets) * sample.size) // buckets
    return np.ascontiguousarray(sample[at])


def _threads(n: int) -> int:
    return min(cores(), MAX_BUCKETS, n // MIN_PER_THREAD)


def _parallel(src: np.ndarray, *dsts: np.ndarray) -> int:
    """The threads to split a sort of `src` into `dsts` over (below 2: sort on one core)."""
    threads = _threads(src.size)
    if src.dtype.char not in _TYPES or not all(a.flags.c_contiguous for a in (src,) + dsts):
        return 1
    return threads


def _partition(src: np.ndarray, threads: int, buckets: int, scatter) -> tuple | None:
    """Count each slice's values (one slice a thread) per bucket, then scatter(k, first, slice,
    splitters, offsets) for each slice k (`first`: its first index; `offsets`: int64, per bucket, the
    element offsets it writes each bucket from). Returns the buckets' bounds in the destination, or
    None where no splitters exist (all NaN)."""
    n = src.size
    parts = threads
    spl = _splitters(src, buckets)
    if spl is None:
        return None
    ns = spl.size
    count = _LOOPS.get(src.dtype.char, ns)[0]
    bounds = [n * t // parts for t in range(parts + 1)]
    slices = [src[bounds[t]:bounds[t + 1]] for t in range(parts)]
    reach = np.zeros((parts, ns), np.int64)
    sp = spl.ctypes.data
    _on_all(threads, parts, lambda t: count(slices[t].ctypes.data, slices[t].size, sp, reach[t].ctypes.data))
    # per slice and bucket: how many values (reach[k] counts buckets > k)
    sizes = np.empty((parts, ns + 1), np.int64)
    sizes[:, 0] = [s.size for s in slices]
    sizes[:, 0] -= reach[:, 0]
    sizes[:, 1:ns] = reach[:, :ns - 1] - reach[:, 1:]
    sizes[:, ns] = reach[:, ns - 1]
    starts = np.concatenate(([0], np.cumsum(sizes.sum(axis=0))))
    # slice t writes bucket b at starts[b] + the sizes of b from the slices before t
    offsets = starts[:-1][None, :] + np.cumsum(sizes, axis=0) - sizes
    _on_all(threads, parts, lambda t: scatter(t, bounds[t], slices[t], sp, offsets[t]))
    return starts


def map_buckets(src: np.ndarray, dst: np.ndarray, work) -> list | None:
    """Partition `src` into `dst` (1-D, C-contiguous, src's dtype and size, apart from src) by value:
    buckets of contiguous elements, every value of a bucket below every value of the next, equal
    values (and all NaNs) in one bucket. Then work(bucket) (a view of dst, to change in place) on each
    bucket on the threads; returns the results in bucket order. None where src is not split (short,
    one core, no loop for its dtype, all NaN): the caller works on one core."""
    threads = _parallel(src, dst)
    if threads < 2:
        return None
    scatter = _LOOPS.get(src.dtype.char, threads - 1)[1]

    def write(t, first, part, sp, offsets):
        heads = (offsets * dst.itemsize + dst.ctypes.data).astype(np.uint64)
        scatter(part.ctypes.data, part.size, sp, heads.ctypes.data)
    starts = _partition(src, threads, threads, write)
    if starts is None:
        return None
    buckets = [dst[starts[b]:starts[b + 1]] for b in range(starts.size - 1)]
    results = [None] * len(buckets)

    def run(b):
        results[b] = work(buckets[b])
    _on_all(threads, len(buckets), run)
    return results


def sort_into(src: np.ndarray, dst: np.ndarray) -> None:
    """`dst` (1-D, C-contiguous, src's dtype and size, not overlapping src) = src sorted ascending,
    NaNs last (NumPy's unstable order of ties)."""
    if map_buckets(src, dst, np.ndarray.sort) is None:
        np.copyto(dst, src)
        dst.sort()


def argsort_into(src: np.ndarray, dst: np.ndarray, stable_argsort) -> None:
    """`dst` (1-D int64, C-contiguous, src's size) = the stable ascending argsort of `src` (1-D), NaNs
    last, with `stable_argsort(values)` (1-D -> int64 indices, stable, NaNs last) sorting each bucket
    (or all of src where it is not split)."""
    threads = _parallel(src, dst)
    starts = None
    if threads >= 2:
        buckets = min(MAX_BUCKETS, ARGSORT_BUCKETS_PER_THREAD * threads)
        values = np.empty_like(src)
        indexed = _LOOPS.get(src.dtype.char, buckets - 1)[2]
        where = np.empty(src.size, np.int64)        # each value's index, beside it in `values`

        def write(t, first, part, sp, offsets):
            heads = np.concatenate((offsets * values.itemsize + values.ctypes.data,
                                    offsets * 8 + where.ctypes.data, [first])).astype(np.uint64)
            indexed(part.ctypes.data, part.size, sp, heads.ctypes.data)
        starts = _partition(src, threads, buckets, write)
    if starts is None:
        dst[...] = stable_argsort(src)
        return

    def bucket(b):
        lo, hi = starts[b], starts[b + 1]
        np.take(where[lo:hi], stable_argsort(values[lo:hi]), out=dst[lo:hi])
    _on_all(threads, starts.size - 1, bucket)


# what host_sort.SortInto may carry: a one-row stable argsort, and the partition (unique works per bucket)
sort_into.argsort_into = argsort_into
sort_into.map_buckets = map_buckets
