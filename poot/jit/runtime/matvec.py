"""Matrix products with a few result columns or rows on the CPU device: which path runs them, by
measurement.

Three paths:

- "generated": the kernels of poot/jit/codegen/cpu_gemv.py, for float32/bfloat16/float16 products with
  at most 8 result columns (w @ x) or rows (x @ w): the matrix read once in its own dtype, float32
  accumulation, a launch of the program (so a jitted program stays one native chain);
- "blas": NumPy's matmul into the result (OpenBLAS here), a BLAS call in the program's chain where
  cpu_blas.gemm_for takes it, else a host step. A 16-bit product is widened to float32 first, on every
  call: the whole matrix converted (a read and a float32 write of it), then read again by BLAS;
- "asset": kernels/contraction/gemv_f32.py as committed in poot/assets/gemv_f32.kir.json, for float32
  [N, K] @ [K, 1], launched over ceil(N / 4) workgroups.

The rule ("auto", `generated_matvec` and `MatvecStep.choose`): the generated kernels for every product
with a 16-bit operand, or with a float32 operand that only widens a 16-bit input (type promotion in
`w_bf16 @ x_f32`: the kernel reads w as stored and the program skips the conversion step,
`absorbed_converts`); float32 stays on BLAS (GENERATED_F32 is False) and never takes the asset
(ASSET_MAX_ELEMENTS is 0). POOT_CPU_GEMV=generated|blas|asset forces a path.

Measured on the 2-core CI VM (Xeon with AVX-512, shared with other jobs) with `python -m
benchmarks.bench_matmul --cases gemv --dtypes bf16,f16,f32 --gemv-shapes 4096x4096,14336x4096
--cpu-gemv-paths generated[,blas]`: jitted calls timed in turn, medians; `rowsum` is a poot row
reduction reading the same bytes (the rate this machine gives a read of them at that moment); GB/s are
the matrix's bytes over the call's time. A NumPy copy of 512 MB ran at 24.8 GB/s (read plus write).
The VM's memory rate varies 2-3x with the other jobs, so compare within one run:

    generated alone, then blas in turn with it (another run: the widening path's float32 copies
    evict the cache, so the run that has them reads slower):
    N x K          dtype   generated            rowsum      |  generated   blas (widened first)
    4096 x 4096    bf16    0.93 ms  36.2 GB/s   0.90 ms     |  1.39 ms     14.8 ms
    4096 x 4096    f16     1.02 ms  32.9 GB/s   1.03 ms     |  1.37 ms     31.9 ms
    14336 x 4096   bf16    6.56 ms  17.9 GB/s   8.04 ms     |  12.6 ms     104 ms
    14336 x 4096   f16     8.47 ms  13.9 GB/s   7.98 ms     |  16.1 ms     167 ms
    float32, all three in turn:
    4096 x 4096    f32     1.56 ms  43.2 GB/s   1.40 ms     |  blas 1.42 ms  47.4 GB/s
    14336 x 4096   f32     9.60 ms  24.5 GB/s   9.02 ms     |  blas 6.95 ms  33.8 GB/s
    256 x 256      f32     34 us                -           |  blas 19 us  (a jitted x + 1 alone: 13 us)
    4096 x 4096 bf16 with 2 / 4 / 8 columns: 0.78 / 1.63 / 3.92 ms (one column: 0.79 ms)
    x @ w for w bf16 [4096, 14336] (the columns shape): 10.0 ms; w' @ x, w' [14336, 4096]: 8.98 ms
    x32 @ w16.T, w bf16 [14336, 4096], jitted: 6.02 ms (19.5 GB/s) against 27.9 ms for POOT_CPU_GEMV=blas
    (the float32 copy of the transpose, then BLAS); rowsum 3.81 ms

16-bit products: 8-23x faster than the widening path and as fast as a row reduction reading the same
bytes (a matrix larger than about 100 MB reads at the VM's memory rate, 13-18 GB/s; smaller ones stay
in its cache). float32: BLAS's sgemv was as fast or up to 1.8x faster at every size measured, so
float32 stays on BLAS. In LLM decode (`python -m benchmarks.bench_decode --presets qwen2.5-0.5b
--contexts 128 --no-torch`, bfloat16 weights, 988 MB read per token) a token took 392 ms with the
widening path (POOT_CPU_GEMV=blas) and 78-81 ms with the generated kernels, back to back: 12.4 GB/s of
weights. The asset (a GPU-shaped kernel: 64 lanes striding over K, partials tree-reduced in shared
memory, run by the CPU target as loops over the work items) was 40x slower than BLAS (164 us at 256 x
256, 37 ms at 4096 x 4096). A one-time calibration was tried and dropped: under contention OpenBLAS's
threads stall (~8 ms per 1024 x 1024 call) and the measurement picked the slower path.
"""
from __future__ import annotations

import os

import numpy as np

from poot import dtypes as dt
from poot.devices.cpu_blas import gemm_for
from poot.jit.codegen import cpu_gemv

ASSET_MAX_ELEMENTS = 0        # measured: BLAS is faster at every size on the CPU (table above)
GENERATED_F32 = False         # measured: BLAS is as fast or faster for float32 (table above)

_asset = None


def forced() -> str:
    mode = os.environ.get("POOT_CPU_GEMV", "auto").strip().lower() or "auto"
    if mode not in ("auto", "asset", "blas", "generated"):
        from poot.errors import ConfigError

        raise ConfigError(f"POOT_CPU_GEMV is '{mode}'; use auto, asset, blas or generated")
    return mode


def generated_matvec(step, plan=None) -> bool:
    """Whether a CPU plan step runs as the generated GEMV kernels (poot/jit/codegen/cpu_gemv.py) rather
    than a host step: products with a 16-bit operand always (the host path widens them to float32 on
    every call), a float32 operand that only widens a 16-bit input counting as one (with the `plan`:
    cpu_gemv.widened_sources); float32 ones where GENERATED_F32 says the kernels beat BLAS; every
    product they compute under POOT_CPU_GEMV=generated, none under blas or asset."""
    if not cpu_gemv.applies(step):
        return False
    mode = forced()
    if mode != "auto":
        return mode == "generated"
    a, b = (v.aval for v in step.eqn.inputs)
    if a.dtype.bits == 16 or b.dtype.bits == 16:
        return True
    return GENERATED_F32 or (plan is not None and bool(cpu_gemv.widened_sources(step, plan)))


def absorbed_converts(plan) -> set[int]:
    """Indices of the plan's convert steps that the generated GEMV kernels read through (see
    cpu_gemv.widened_sources): the program skips them. Their 16-bit inputs are now read by the matmul
    step, so a donated input's buffer is kept until then (plan.input_last_use)."""
    skipped: set[int] = set()
    for t, step in enumerate(plan.steps):
        if step.kind != "matmul" or not generated_matvec(step, plan):
            continue
        for src, s in cpu_gemv.widened_sources(step, plan).values():
            skipped.add(s)
            plan.input_last_use[src.id] = max(plan.input_last_use.get(src.id, t), t)
    return skipped


def is_matvec(eqn) -> bool:
    a, b = eqn.inputs[0].aval, eqn.inputs[1].aval
    return (eqn.op == "matmul" and a.ndim == 2 and b.ndim == 2 and b.shape[1] == 1
            and a.dtype is dt.float32 and b.dtype is dt.float32 and a.size > 0)


def asset_kernel():
    global _asset
    if _asset is None:
        from poot.jit.kir.assets import load_asset

        _asset = load_asset("gemv_f32")
    return _asset


class MatvecStep:
    """A host step of a Program (`run(bufs)`, bufs by var id) computing one f32 matrix-vector product."""

    __slots__ = ("a", "x", "out", "n", "k", "device", "last_path", "avals")

    def __init__(self, eqn, device):
        self.a, self.x, self.out = eqn.inputs[0].id, eqn.inputs[1].id, eqn.out.id
        self.avals = (eqn.inputs[0].aval, eqn.inputs[1].aval, eqn.out.aval)
        self.n, self.k = eqn.inputs[0].aval.shape
        self.device = device
        self.last_path = None              # which path the last run took (for tests)

    def run(self, bufs) -> None:
        path = self.choose()
        self.last_path = path
        n, k = self.n, self.k
        w = bufs[self.a].handle[: 4 * n * k].view(np.float32)
        x = bufs[self.x].handle[: 4 * k].view(np.float32)
        y = bufs[self.out].handle[: 4 * n].view(np.float32)
        if path == "asset":
            self._asset(w, x, y)
        else:
            np.matmul(w.reshape(n, k), x, out=y)

    def _asset(self, w, x, y) -> None:
        from poot.jit.runtime.launch import launch

        dev = self.device
        kernel = asset_kernel()
        rows = kernel.workgroup[1]
        launch(dev, kernel, [dev.wrap(w), dev.wrap(x), dev.wrap(y)], (), -(-y.size // rows))

    def native_gemm(self):
        """(Gemm, (a, x, out) var ids) where the BLAS path is a call a CPU recording can hold."""
        if self.choose() != "blas":
            return None
        gemm = gemm_for(*self.avals)
        return (gemm, (self.a, self.x, self.out)) if gemm is not None else None

    def choose(self) -> str:
        mode = forced()
        if mode in ("asset", "blas"):
            return mode
        return "asset" if self.n * self.k <= ASSET_MAX_ELEMENTS else "blas"


def route_matvec(eqn, device):
    """A MatvecStep for an f32 matrix-vector `matmul` on the CPU device, else None."""
    if not device.shares_host_memory or not is_matvec(eqn):
        return None
    return MatvecStep(eqn, device)


__all__ = ["route_matvec", "MatvecStep", "is_matvec", "generated_matvec", "absorbed_converts"]
