"""BLAS matrix products as native calls that a CPU recording, and the chain built from it, can hold.

Why: a CPU program's matmuls ran as host steps (NumPy's matmul on views of the buffers). Each one cut
the program's recording in two, so a training step of five matmuls made eleven trips between Python
and native code, and a loop of 50 such steps 500: at a few microseconds a trip that was most of the
time of a program on small arrays. A matmul of float32 or float64 operands in row-major order is one
call of the BLAS `gemm`, by address; the recording keeps it among its kernel launches, so the whole
program stays one native call (cpu_chain.py).

Which BLAS: the one NumPy itself ships and links (OpenBLAS built with 64-bit integers, its CBLAS
symbols named `scipy_cblas_sgemm64_`, `scipy_cblas_dgemm64_`), so the numbers are those NumPy's matmul
gives. Where none is found (a NumPy linked against another BLAS), `gemm_for` returns None and matmuls
stay host steps. POOT_CPU_BLAS=0 keeps them host steps too (to compare, or to bisect).
"""
from __future__ import annotations

import ctypes
import glob
import logging
import math
import os

from poot import dtypes as dt
from poot import env

log = logging.getLogger("poot.devices.cpu")

ROW_MAJOR, NO_TRANS = 101, 111
MAX_BATCH = 64              # a batched matmul is one gemm per matrix, unrolled in the chain's code
# multiply-adds up to which OpenBLAS runs a gemm on the calling thread (its SMP_THRESHOLD_MIN *
# GEMM_MULTITHREAD_THRESHOLD). A larger product starts OpenBLAS's own threads; run inside the chain,
# they would compete with the chain's pool for the cores (measured: a 256x784x512 training step 2-5x
# slower), so it stays a host step between segments, where the pool is idle.
MAX_CHAIN_MACS = 65536 * 4
# (symbol, integer type of the BLAS): ILP64 first, as NumPy's own wheels ship it
_SYMBOLS = {"f32": [("scipy_cblas_sgemm64_", ctypes.c_int64), ("cblas_sgemm64_", ctypes.c_int64),
                    ("scipy_cblas_sgemm", ctypes.c_int32)],
            "f64": [("scipy_cblas_dgemm64_", ctypes.c_int64), ("cblas_dgemm64_", ctypes.c_int64),
                    ("scipy_cblas_dgemm", ctypes.c_int32)]}
_REAL = {"f32": (ctypes.c_float, "float"), "f64": (ctypes.c_double, "double")}
_found: dict = {}


enabled = env.switch_reader("POOT_CPU_BLAS", True)
enabled.__doc__ = """POOT_CPU_BLAS=0 runs matrix products as host steps instead of BLAS calls in the native call."""


def _library_paths() -> list[str]:
    """NumPy's bundled BLAS libraries (Linux wheels: numpy.libs; macOS: numpy/.dylibs; Windows:
    numpy.libs or numpy/.libs)."""
    import numpy

    root = os.path.dirname(numpy.__file__)
    paths = []
    for folder in (os.path.join(root, os.pardir, "numpy.libs"), os.path.join(root, ".dylibs"),
                   os.path.join(root, ".libs")):
        paths += sorted(glob.glob(os.path.join(folder, "*openblas*")))
    return paths


def _function(kind: str):
    """(ctypes function, its address, LLVM integer type) of the gemm for `kind`, or None."""
    if kind in _found:
        return _found[kind]
    found = None
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol, int_type in _SYMBOLS[kind]:
            fn = getattr(lib, symbol, None)
            if fn is None:
                continue
            real = _REAL[kind][0]
            fn.restype = None
            fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, int_type, int_type, int_type, real,
                           ctypes.c_void_p, int_type, ctypes.c_void_p, int_type, real, ctypes.c_void_p,
                           int_type]
            found = (fn, ctypes.cast(fn, ctypes.c_void_p).value, "i64" if int_type is ctypes.c_int64 else "i32")
            break
        if found is not None:
            break
    if found is None:
        log.info("poot: no CBLAS gemm found beside NumPy; CPU matmuls run as host steps")
    _found[kind] = found
    return found


class Gemm:
    """`out = a @ b` for row-major float32/float64 operands of one plan step, as `batch` gemm calls:
    matrix i of the batch reads a at element offset i * a_step (0: one matrix for every i), b at
    i * b_step, and writes out at i * m * n."""

    __slots__ = ("kind", "m", "n", "k", "batch", "a_step", "b_step", "fn", "address", "int_type")

    def __init__(self, kind, m, n, k, batch, a_step, b_step, found):
        self.kind, self.m, self.n, self.k = kind, m, n, k
        self.batch, self.a_step, self.b_step = batch, a_step, b_step
        self.fn, self.address, self.int_type = found

    def run(self, ptrs) -> None:
        """The Python-path call: the pointer array holds (a, b, out) addresses."""
        a, b, c = ptrs[0], ptrs[1], ptrs[2]
        size = 4 if self.kind == "f32" else 8
        m, n, k = self.m, self.n, self.k
        for i in range(self.batch):
            self.fn(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, a + i * self.a_step * size, k,
                    b + i * self.b_step * size, n, 0.0, c + i * m * n * size, n)

    def chain_ir(self, ptrs_address: int, label: str) -> list[str]:
        """LLVM IR lines making the calls, the addresses loaded from the pointer array at run time."""
        real = _REAL[self.kind][1]
        it = self.int_type
        size = 4 if self.kind == "f32" else 8
        lines = []
        base = [f"%{label}_{j}" for j in "abc"]
        for j, name in enumerate(base):
            lines.append(f"  {name} = load ptr, ptr inttoptr (i64 {ptrs_address + 8 * j} to ptr)")
        m, n, k = self.m, self.n, self.k
        for i in range(self.batch):
            ops = []
            for name, step in zip(base, (self.a_step, self.b_step, m * n)):
                off = i * step * size
                if off:
                    ops.append(f"%{name[1:]}_{i}")
                    lines.append(f"  {ops[-1]} = getelementptr i8, ptr {name}, i64 {off}")
                else:
                    ops.append(name)
            lines.append(f"  call void inttoptr (i64 {self.address} to ptr)(i32 {ROW_MAJOR}, i32 {NO_TRANS}, "
                         f"i32 {NO_TRANS}, {it} {m}, {it} {n}, {it} {k}, {real} 1.0, ptr {ops[0]}, {it} {k}, "
                         f"ptr {ops[1]}, {it} {n}, {real} 0.0, ptr {ops[2]}, {it} {n})")
        return lines


def gemm_for(a_aval, b_aval, out_aval) -> Gemm | None:
    """The Gemm computing a plan's `matmul` of these operands, or None where it stays a host step
    (other dtypes, vectors, empty matrices, batches that broadcast partly or are larger than
    MAX_BATCH, products large enough for OpenBLAS's threads)."""
    d = out_aval.dtype
    kind = "f32" if d is dt.float32 else "f64" if d is dt.float64 else None
    if (kind is None or not enabled() or a_aval.dtype is not d or b_aval.dtype is not d
            or a_aval.ndim < 2 or b_aval.ndim < 2 or out_aval.size == 0):
        return None
    m, k = a_aval.shape[-2:]
    k2, n = b_aval.shape[-2:]
    if k != k2 or k == 0:
        return None
    batch_shape = out_aval.shape[:-2]
    batch = math.prod(batch_shape)
    if batch > MAX_BATCH or m * n * k > MAX_CHAIN_MACS:
        return None
    steps = []
    for aval, step in ((a_aval, m * k), (b_aval, k * n)):
        if tuple(aval.shape[:-2]) == tuple(batch_shape):
            steps.append(step)
        elif math.prod(aval.shape[:-2]) == 1:
            steps.append(0)
        else:
            return None
    found = _function(kind)
    if found is None:
        return None
    return Gemm(kind, m, n, k, batch, steps[0], steps[1], found)
