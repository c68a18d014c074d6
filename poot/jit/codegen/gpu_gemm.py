"""GPU matrix products through the tiled GEMM assets (kernels/contraction/gemm_f32.py, gemm_bf16_tc.py).

The generic matmul schedule (opaque.generate_matmul) gives each thread one output and walks K alone: every
element of A and B is read from memory once per output that uses it. The assets compute a tile of C per
workgroup out of shared memory:

- float32: gemm_f32, 8 x 8 outputs per thread with FMAs on SIMT cores, on PTX and AMDGCN (LLVM's
  SPIR-V backend fails on it: wgpu and vulkan keep the generic schedule);
- bfloat16 / float16: warp-level m16n8k16 multiply-accumulates on tensor cores with f32 accumulators, on
  PTX sm_80 and newer only (elsewhere the generic schedule keeps them): gemm_bf16_async / gemm_f16_async
  (operands staged by 16-byte asynchronous copies, fragments by ldmatrix) where K and N are multiples of 8,
  so every 16-byte chunk of a row is aligned -- their _wide forms (128 x 256 tiles, 64 k a step, one
  workgroup a core) where the product has at least two waves of such tiles and K at least four steps, as
  large products do, the 128 x 128 x 32 form for the others; gemm_bf16_tc / gemm_f16_tc (word loads
  through registers) for the other shapes; on Hopper (sm_90) gemm_bf16_wgmma / gemm_f16_wgmma instead of
  the async forms (128 x 128 tiles of warpgroup products straight from shared memory, built for sm_90a:
  0.71 to 0.77x cuBLAS on an H100 where the async forms are 0.39 to 0.51x);
- bfloat16 on AMD GPUs with matrix cores: gemm_bf16_mfma (CDNA) or gemm_bf16_wmma (RDNA3), 64 x 64 tiles,
  on the GPUs their manifest rows name.

A matmul step takes an asset where its operands are plain row-major [..., M, K] @ [..., K, N] (the planner
materializes both, so a `.T` operand arrives contiguous) with N > 1 and M > 1 (a column vector stays on
the GEMV path, gpu_gemv.py; a single row on the generic schedule, which reads B coalesced), and each
operand's batch either the result's whole batch or absent / all ones (a stride of 0): one launch with the
batch on grid z. Larger or other shapes keep the generic schedule. POOT_GPU_GEMM=asset|generated forces a
path where the assets apply (auto: the assets)."""
from __future__ import annotations

import math
import re

from poot import dtypes as dt
from poot.jit.codegen.common import Launch, StepCode, asset, asset_builds_for, ceil_div, env_choice
from poot.jit.codegen.gpu_lanes import multiprocessors
from poot.jit.llvm.targets import target_of

TILE = 128                 # rows and columns of C per workgroup (gemm_f32, gemm_*_tc)
THREADS = 256              # threads per workgroup (gemm_f32, gemm_*_tc)
ASYNC_TILE = (128, 128)    # rows and columns of C per workgroup of gemm_*_async (its BM, BN)
WIDE_TILE = (128, 256, 64)  # gemm_*_async_wide's BM, BN, BK
WIDE_MIN_WAVES = 2          # its tiles per core at least (one workgroup a core)
WIDE_MIN_STEPS = 4          # its k steps at least (a 3-slot ring fills)
MAX_BATCH = 65535          # grid z
MAX_ELEMENTS = 2**31 - 1   # the assets index in uint32 (batch offsets included)
SIMT = {dt.float32: "gemm_f32"}
TENSOR_CORE = {dt.bfloat16: "gemm_bf16_tc", dt.float16: "gemm_f16_tc"}
ASYNC = {dt.bfloat16: "gemm_bf16_async", dt.float16: "gemm_f16_async"}    # K % 8 == N % 8 == 0
ASYNC_ALIGN = 8            # elements per 16-byte chunk
WGMMA = {dt.bfloat16: "gemm_bf16_wgmma", dt.float16: "gemm_f16_wgmma"}    # sm_90 only, as the async ones
WGMMA_TILE = (128, 128)    # their BM, BN
AMD_MATRIX = {dt.bfloat16: ("gemm_bf16_mfma", "gemm_bf16_wmma")}   # whichever the GPU's arch builds
AMD_TILE = (64, 64)        # their BM, BN


def gemm_path() -> str:
    mode = env_choice("POOT_GPU_GEMM", ("auto", "asset", "generated"))
    return "asset" if mode == "auto" else mode


def mma_sm(caps) -> int:
    """The device's SM version where its target has matrix fragments (tensor cores), else 0."""
    if not target_of(caps).has_mma:
        return 0
    m = re.match(r"sm_(\d+)", str(caps.compile_arch or caps.extra.get("arch", "")))
    return int(m.group(1)) if m else 0


def amd_matrix_gemm(dtype, caps) -> str | None:
    """The AMD matrix-core GEMM of `dtype` this GPU's arch builds (its manifest row names the archs)."""
    arch = str(caps.compile_arch or caps.extra.get("arch", ""))
    return next((n for n in AMD_MATRIX.get(dtype, ()) if asset_builds_for(n, caps.target, arch)), None)


def asset_for(step, caps) -> str | None:
    """The GEMM asset that computes this matmul step on a device with `caps`, or None."""
    a, b = (v.aval for v in step.eqn.inputs)
    out = step.eqn.out.aval
    if out.size == 0 or a.dtype is not out.dtype or b.dtype is not out.dtype:
        return None
    name = (SIMT.get(out.dtype) or (TENSOR_CORE.get(out.dtype) if mma_sm(caps) >= 80 else None)
            or amd_matrix_gemm(out.dtype, caps))
    if not target_of(caps).runs_gemm_assets:
        return None          # SPIR-V: LLVM's backend fails on gemm_f32 (kernels/contraction/gemm_f32.py)
    if name is None:
        return None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = out.shape[:-2]
    if m < 2 or n < 2 or k < 1 or math.prod(batch) > MAX_BATCH:
        return None
    if max(a.size, b.size, out.size) > MAX_ELEMENTS:
        return None
    for x in (a, b):       # a batch broadcast along some dims but not all has no single stride
        if math.prod(x.shape[:-2]) not in (1, math.prod(batch)):
            return None
    if name in TENSOR_CORE.values() and k % ASYNC_ALIGN == 0 and n % ASYNC_ALIGN == 0:
        if mma_sm(caps) == 90:
            return WGMMA[out.dtype]
        bm, bn, bk = WIDE_TILE
        tiles = math.prod(batch) * ceil_div(m, bm) * ceil_div(n, bn)
        if tiles >= WIDE_MIN_WAVES * multiprocessors(caps) and k >= WIDE_MIN_STEPS * bk:
            return ASYNC[out.dtype] + "_wide"
        return ASYNC[out.dtype]
    return name


def _rastered_tile(name: str, dtype) -> tuple[int, int] | None:
    """(BM, BN) of an asset that numbers its tiles along grid x and rasters them itself, else None."""
    if name in AMD_MATRIX.get(dtype, ()):
        return AMD_TILE
    return {ASYNC.get(dtype): ASYNC_TILE, f"{ASYNC.get(dtype)}_wide": WIDE_TILE[:2],
            WGMMA.get(dtype): WGMMA_TILE}.get(name)


def applies(step, caps) -> bool:
    return gemm_path() == "asset" and asset_for(step, caps) is not None


def generate_gpu_gemm(step, caps) -> StepCode:
    """One launch of the step's GEMM asset: grid (tiles of N, tiles of M, batch)."""
    a, b = step.eqn.inputs
    out = step.eqn.out
    name = asset_for(step, caps)
    kernel = asset(name)
    m, k, n = a.aval.shape[-2], a.aval.shape[-1], b.aval.shape[-1]
    batch = math.prod(out.aval.shape[:-2])
    sa = m * k if math.prod(a.aval.shape[:-2]) > 1 else 0
    sb = k * n if math.prod(b.aval.shape[:-2]) > 1 else 0
    if name in TENSOR_CORE.values():        # the 16-bit operands also as 32-bit words (wide loads)
        bindings = [("var", a), ("var", a), ("var", b), ("var", b), ("var", out)]
    else:                                   # the async kernels take the 16-bit operands as words only
        bindings = [("var", a), ("var", b), ("var", out)]
    rastered = _rastered_tile(name, out.aval.dtype)
    if rastered:                            # one row of tiles, rastered inside the kernel
        bm, bn = rastered
        groups = (ceil_div(m, bm) * ceil_div(n, bn), 1, batch)
    else:
        groups = (ceil_div(n, TILE), ceil_div(m, TILE), batch)
    return StepCode([Launch(kernel, bindings, groups, (m, n, k, sa, sb, m * n))])
