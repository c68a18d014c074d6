"""Matrix-vector products on the CPU device: the committed GEMV asset or the host BLAS, by measurement.

A plan's float32 `matmul` of an [N, K] matrix with a [K, 1] column runs through `MatvecStep`, which
takes one of two paths:

- "asset": kernels/contraction/gemv_f32.py as committed in poot/assets/gemv_f32.kir.json, compiled for
  the CPU (disk-cached like every kernel) and launched over ceil(N / 4) workgroups;
- "blas": NumPy's matmul into the result (OpenBLAS here), as for every other CPU matmul.

The rule ("auto") is a size threshold from measurement: the asset for N*K <= ASSET_MAX_ELEMENTS, BLAS
above. benchmarks/bench_kernels.py (case gemv-asset) and bench_matmul.py time both beside NumPy; on the 2-core CI machine (median, both
warm, back to back) BLAS wins at every size:

    N x K         asset      BLAS
    256 x 256     164 us     3.7 us
    1024 x 1024   1.5 ms     35 us
    4096 x 4096   37 ms      8.0 ms
    512 x 8192    8.0 ms     0.35 ms
    8192 x 512    14 ms      0.34 ms

so ASSET_MAX_ELEMENTS is 0: the asset is a GPU-shaped kernel (64 lanes striding over K, partials
tree-reduced in shared memory) that the CPU target runs as loops over the work items, with a scalar
strided inner loop. A one-time calibration was tried and dropped: under contention from other
processes OpenBLAS's threads stall (~8 ms per 1024 x 1024 call) and the measurement picked the asset,
which is 40x slower once the contention ends. POOT_CPU_GEMV=asset|blas forces a path (auto: the rule).
"""
from __future__ import annotations

import os

import numpy as np

from poot import dtypes as dt
from poot.devices.cpu_blas import gemm_for

ASSET_MAX_ELEMENTS = 0        # measured: BLAS is faster at every size on the CPU (table above)

_asset = None


def forced() -> str:
    mode = os.environ.get("POOT_CPU_GEMV", "auto").strip().lower() or "auto"
    if mode not in ("auto", "asset", "blas"):
        from poot.errors import PootError

        raise PootError(f"POOT_CPU_GEMV is '{mode}'; use auto, asset or blas")
    return mode


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
        if mode != "auto":
            return mode
        return "asset" if self.n * self.k <= ASSET_MAX_ELEMENTS else "blas"


def route_matvec(eqn, device):
    """A MatvecStep for an f32 matrix-vector `matmul` on the CPU device, else None."""
    if not device.shares_host_memory or not is_matvec(eqn):
        return None
    return MatvecStep(eqn, device)


__all__ = ["route_matvec", "MatvecStep", "is_matvec"]
