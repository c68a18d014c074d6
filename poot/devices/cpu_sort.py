"""A parallel sort of host memory: one sample-sort step over the cores, then NumPy's sort per bucket.

NumPy's sort (its SIMD quicksort) runs on one core. For a long 1-D array `sort_into` uses them all:

1. splitters: quantiles of a strided sample of the values, one bucket per thread;
2. count: each thread counts, over its own slice of the input, how many values reach each splitter
   (a native loop of compares and adds, vectorized);
3. scatter: each thread moves the values of its slice to their buckets in the destination, at
   offsets from the counts, so the buckets are contiguous and in order (a native branch-free loop:
   the bucket's write pointer is selected, not branched to);
4. sort: each bucket is sorted in place by NumPy on its own thread (NumPy releases the GIL).

A value's bucket is the number of splitters s with `not (value < s)`, so NaNs (which compare false)
land in the last bucket, where NumPy's sort puts them last, and equal values share a bucket. Like
NumPy's default sort it is unstable: poot.graph.host_sort puts back afterwards the ties that can be
told apart (signed zeros, NaN payloads).

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
SAMPLES_PER_BUCKET = 128

# dtype char -> (LLVM type, less-than instruction)
_TYPES = {
    "f": ("float", "fcmp olt"), "d": ("double", "fcmp olt"),
    "b": ("i8", "icmp slt"), "h": ("i16", "icmp slt"), "i": ("i32", "icmp slt"), "l": ("i64", "icmp slt"),
    "q": ("i64", "icmp slt"),
    "B": ("i8", "icmp ult"), "H": ("i16", "icmp ult"), "I": ("i32", "icmp ult"), "L": ("i64", "icmp ult"),
    "Q": ("i64", "icmp ult"), "?": ("i8", "icmp ult"),
}

_COUNT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
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


class _Loops:
    """The compiled count and scatter loops, by (dtype char, splitter count)."""

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
        count, scatter = f"poot_sort_count_{tag}", f"poot_sort_scatter_{tag}"
        mod = llvm.parse_assembly(_count_ir(count, ty, lt, ns) + _scatter_ir(scatter, ty, lt, ns))
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pb = llvm.create_pass_builder(self._tm, pto)
        pb.getModulePassManager().run(mod, pb)
        self._engine.add_module(mod)
        self._engine.finalize_object()
        return (_COUNT(self._engine.get_function_address(count)),
                _SCATTER(self._engine.get_function_address(scatter)))


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


def sort_into(src: np.ndarray, dst: np.ndarray) -> None:
    """`dst` (1-D, C-contiguous, src's dtype and size, not overlapping src) = src sorted ascending,
    NaNs last (NumPy's unstable order of ties)."""
    n = src.size
    threads = _threads(n)
    char = src.dtype.char
    if threads < 2 or char not in _TYPES or not src.flags.c_contiguous or not dst.flags.c_contiguous:
        np.copyto(dst, src)
        dst.sort()
        return
    parts = threads          # slices of the source, and buckets (more cost more in the scatter)
    spl = _splitters(src, parts)
    if spl is None:
        np.copyto(dst, src)
        dst.sort()
        return
    ns = spl.size
    count, scatter = _LOOPS.get(char, ns)
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
    heads = (offsets * dst.itemsize + dst.ctypes.data).astype(np.uint64)
    _on_all(threads, parts, lambda t: scatter(slices[t].ctypes.data, slices[t].size, sp, heads[t].ctypes.data))
    buckets = [dst[starts[b]:starts[b + 1]] for b in range(ns + 1)]
    _on_all(threads, ns + 1, lambda b: buckets[b].sort())
