"""The "attention" plan step (poot/graph/attention.py) as launches of the committed flash kernels
(kernels/attention/): the scores never exist beyond one tile, so no [Lq, Lk] buffer is allocated.

- CPU-shaped targets: attention_cpu_<dtype>, one work item per 16 queries of a (batch, head) row
  (kernels/attention/flash_cpu.py: vector loops over tiles of 64 keys).
- GPU-shaped targets: attention_prefill_<dtype>, 8 queries per 128-thread workgroup; on PTX sm_80 and
  newer, for 16-bit dtypes with D == Dv in TC_HEAD_DIMS, attention_tc_<dtype>_d<D> instead (64 queries per
  workgroup on tensor cores, K and V staged by asynchronous copies; kernels/attention/flash_tc.py), on sm_90
  attention_wg_<dtype>_d<D> (the same with its scores by warpgroup products; flash_wg.py); and for decode
  shapes (at most DECODE_MAX_QUERIES queries, head dims up to 256),
  where the device's subgroups exchange 32 lanes (CUDA, ROCm, Vulkan on NVIDIA GPUs: gpu_lanes.shuffles),
  attention_decode_<dtype>_d<128|256>
  (kernels/attention/flash_decode.py: a warp per key, 4 query rows sharing a KV head a workgroup; 16-bit
  q, k, v bound as 32-bit words, so their head dims must be even) with the key range split across
  workgroups, and attention_combine_<dtype> (a 1024-thread workgroup a query row) merging the splits' partial
  maxima, sums and accumulators (three f32 temporaries of rows * splits * (Dv + 2) words). On other
  devices (wgpu, lavapipe's 8-lane subgroups), decode shapes of SIMT_MIN_CHUNK keys or more, and shapes
  whose prefill loops would pass SIMT_LOOP_LIMIT steps, take attention_decode_simt_<dtype> and
  attention_combine_simt_<dtype> instead of the prefill kernel (kernels/attention/flash_simt.py: a
  workgroup a query row and split, shared-memory reductions).

The kernels index in uint32 on GPUs: operands of 2**31 elements or more are refused by name.
"""
from __future__ import annotations


from poot import dtypes as dt
from poot.errors import CompileLimitError, NotBuiltError
from poot.jit.codegen.common import Launch, StepCode, asset, asset_builds_for, ceil_div, style_of
from poot.jit.codegen.gpu_gemm import mma_sm
from poot.jit.codegen.gpu_lanes import multiprocessors, shuffles
from poot.jit.llvm.targets import KernelStyle

SUFFIX = {dt.float32: "f32", dt.float16: "f16", dt.bfloat16: "bf16"}
CPU_QUERIES = 16               # flash_cpu.BQ
PREFILL_QUERIES = 8            # flash_gpu.BQ
TC_QUERIES = 64                # flash_tc.BQ
TC_HEAD_DIMS = (64, 128)       # flash_tc.HEAD_DIMS
COMBINE_MAX_SPLITS = 1024      # flash_gpu.MAX_SPLITS: a combine workgroup (a row) reads one split a thread
DECODE_MAX_QUERIES = 4
DECODE_MIN_KEYS = 1           # any key count (a 192-key cache on the prefill kernel: 4.6 ms a Qwen2.5-0.5B token)
DECODE_HEAD_DIMS = (128, 256)  # flash_decode's variants: the largest head dim each serves
DECODE_ROWS = 4                # flash_decode.ROWS: query rows (sharing a KV head) a workgroup
DECODE_WARPS = 4               # flash_decode.WARPS: warps a workgroup
DECODE_STEP = 16               # flash_decode.STEP: keys a workgroup takes per step (4 a warp)
DECODE_VEC = 1                 # flash_decode.VEC: words a lane loads at once (4: 16-bit D, Dv multiples of 8)
DECODE_MIN_CHUNK = 4 * DECODE_STEP   # keys a split at least: 4 steps a warp amortise its setup and merge
# decode warps aimed at per core (SM): one wave of a d128 kernel's 4 resident workgroups (128 registers).
# On an H100 (B1, Hq 32, Hk 8) one wave beat two: 60 against 64 us at 32k keys, 35 against 38 at 16k
# (decode and combine); a kernel of 3 resident workgroups wants 12
DECODE_WARPS_PER_CORE = 16
SIMT_MIN_CHUNK = 256           # flash_simt: keys a split at least (two steps of its 128 threads)
SIMT_HEAD_DIM = 256            # flash_simt.DMAX
SIMT_LOOP_LIMIT = 16384        # (key tile, dim) steps a prefill thread may loop over on SPIR-V targets
PREFILL_KEYS = 16              # flash_gpu.BK: keys a prefill tile
UNBOUNDED = 1 << 30            # a band side without a limit
MAX_ELEMENTS = 2**31 - 1


def _side(w) -> int:
    return UNBOUNDED if w is None else max(-UNBOUNDED, min(int(w), UNBOUNDED))


def _mask_strides(mask) -> tuple[int, int, int, int]:
    """Element strides of the [Bm, Hm, Lq|1, Lk|1] mask by (b, h, query, key): 0 where broadcast."""
    shape = mask.aval.shape
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step if n > 1 else 0)
        step *= n
    return tuple(reversed(strides))


def generate_attention(step, plan, caps) -> StepCode:
    """The launches of one attention step on a device with capabilities `caps`."""
    e = step.eqn
    q, k, v = e.inputs[:3]
    mask = e.inputs[3] if len(e.inputs) == 4 else None
    out = e.out
    p = e.params
    b, hq, lq, d = q.aval.shape
    hk, lk = k.aval.shape[1], k.aval.shape[2]
    dv = v.aval.shape[3]
    name = SUFFIX.get(out.aval.dtype)
    if name is None:
        raise NotBuiltError(f"attention: no flash kernel for {out.aval.dtype.name} (float32, float16, "
                            "bfloat16); the tracer composes other dtypes from primitives")
    if out.aval.size == 0:
        return StepCode()
    code = StepCode()
    mask_binding = ("var", mask) if mask is not None else ("temp", _temp(code, 4))
    msb, msh, msq, msk = _mask_strides(mask) if mask is not None else (0, 0, 0, 0)
    left, right = _side(p["left"]), _side(p["right"])
    common = (lq, lk, d, dv, hq, hq // hk, left, right, int(mask is not None), msb, msh, msq, msk)
    operands = [("var", q), ("var", k), ("var", v), mask_binding]
    rows = b * hq
    if style_of(caps) is KernelStyle.CPU:
        kernel = asset(f"attention_cpu_{name}")
        code.launches.append(Launch(kernel, operands + [("var", out)], (ceil_div(lq, CPU_QUERIES), rows, 1),
                                    common + (int(p["zero_empty"]), p["scale"], p["softcap"])))
        return code
    if max(q.aval.size, k.aval.size, v.aval.size, out.aval.size, mask.aval.size if mask is not None else 0) > MAX_ELEMENTS:
        raise CompileLimitError(f"attention: operands of {q.aval}, {k.aval}, {v.aval} exceed the GPU flash "
                                f"kernels' 32-bit indexing ({MAX_ELEMENTS} elements); split the batch")
    wide = next((n for n in DECODE_HEAD_DIMS if max(d, dv) <= n), None)
    if name != "f32" and (d % (2 * DECODE_VEC) or dv % (2 * DECODE_VEC)):
        wide = None                             # 16-bit decode reads 32-bit words (VEC at once) of one row
    decode = f"attention_decode_{name}_d{wide}"
    if lq <= DECODE_MAX_QUERIES and lk >= DECODE_MIN_KEYS and wide is not None and _warp_decode(decode, caps):
        return _decode(code, operands, out, common, p, name, decode, (b * hk, hq // hk * lq), lk, dv, caps)
    if _simt_applies(name, lq, lk, d, dv, caps):
        return _decode_simt(code, operands, out, common, p, name, b * hq * lq, lk, dv, caps)
    if name in ("f16", "bf16") and d == dv and d in TC_HEAD_DIMS and mma_sm(caps) >= 80:
        kernel, per_group = asset(f"attention_{_tensor_core_family(caps)}_{name}_d{d}"), TC_QUERIES  # 32-bit words
    else:
        kernel, per_group = asset(f"attention_prefill_{name}"), PREFILL_QUERIES
    code.launches.append(Launch(kernel, operands + [("var", out)], (ceil_div(lq, per_group), rows, 1),
                                common + (int(p["zero_empty"]), p["scale"], p["softcap"])))
    return code


def _tensor_core_family(caps) -> str:
    """The flash prefill family for a device with tensor cores: "wg" (flash_wg.py: scores by Hopper's
    warpgroup products, sm_90a) on sm_90, "tc" (flash_tc.py: mma.sync) on sm_80 and sm_89."""
    return "wg" if mma_sm(caps) == 90 else "tc"


def _warp_decode(decode: str, caps) -> bool:
    """Whether the warp decode kernel `decode` (and its combine) runs on a device with `caps`: its target
    builds it and the device's subgroups exchange values across 32 lanes (gpu_lanes.shuffles)."""
    return asset_builds_for(decode, caps.target) and shuffles(caps)


def _simt_applies(name: str, lq: int, lk: int, d: int, dv: int, caps) -> bool:
    """Whether the split SIMT kernels take this shape: on devices without the warp decode kernel
    (subgroups that exchange fewer than 32 lanes, or none), decode shapes of SIMT_MIN_CHUNK keys or more,
    and any shape whose prefill threads would loop over more than SIMT_LOOP_LIMIT (key tile, dim) steps
    (lavapipe cuts longer loops short)."""
    if max(d, dv) > SIMT_HEAD_DIM or lk < SIMT_MIN_CHUNK or _warp_decode(f"attention_decode_{name}_d128", caps) \
            or not asset_builds_for(f"attention_decode_simt_{name}", caps.target):
        return False
    return lq <= DECODE_MAX_QUERIES or ceil_div(lk, PREFILL_KEYS) * max(d, dv) > SIMT_LOOP_LIMIT


def _decode_simt(code, operands, out, common, p, name, rows, lk, dv, caps) -> StepCode:
    """Split-K decode without subgroup operations (kernels/attention/flash_simt.py): a workgroup a query
    row and split of SIMT_MIN_CHUNK keys or more, then attention_combine_simt_<dtype>."""
    splits = max(1, min(ceil_div(lk, SIMT_MIN_CHUNK), COMBINE_MAX_SPLITS))
    chunk = ceil_div(lk, splits)
    splits = ceil_div(lk, chunk)
    if rows > caps.max_workgroups[0]:
        raise CompileLimitError(f"attention: {rows} query rows exceed the device's {caps.max_workgroups[0]} "
                                "workgroups along x; split the batch")
    parts = rows * splits
    if parts * dv > MAX_ELEMENTS:
        raise CompileLimitError(f"attention: {rows} decode rows x {splits} splits x {dv} dims of partial "
                                f"accumulators exceed the kernels' 32-bit indexing; split the batch")
    pm, pl, pacc = (("temp", _temp(code, 4 * n)) for n in (parts, parts, parts * dv))
    code.launches.append(Launch(asset(f"attention_decode_simt_{name}"), operands + [pm, pl, pacc],
                                (rows, splits, 1), common + (p["scale"], p["softcap"], chunk, splits)))
    code.launches.append(Launch(asset(f"attention_combine_simt_{name}"), [pm, pl, pacc, ("var", out)],
                                (rows, 1, 1), (rows, dv, splits, int(p["zero_empty"]))))
    return code


def _temp(code: StepCode, nbytes: int) -> int:
    code.temps.append(max(int(nbytes), 4))
    return len(code.temps) - 1


def decode_splits(cores: int, blocks: int, lk: int, step: int = DECODE_STEP, warps: int = DECODE_WARPS):
    """(splits, chunk) of a decode launch with `blocks` row blocks over lk keys: enough workgroups of
    `warps` warps for DECODE_WARPS_PER_CORE warps a core (H100, B1 Hq32/Hk8: 8 blocks, 64 splits, 512
    workgroups at 4k, 16k and 32k keys: about 4 a core, one wave at 4 resident), no split under
    DECODE_MIN_CHUNK keys, chunks a multiple of the kernel's `step` keys."""
    wanted = ceil_div(max(int(cores), 1) * DECODE_WARPS_PER_CORE, warps)
    splits = max(1, min(ceil_div(wanted, blocks), ceil_div(lk, DECODE_MIN_CHUNK), COMBINE_MAX_SPLITS))
    chunk = ceil_div(ceil_div(lk, splits), step) * step
    return ceil_div(lk, chunk), chunk


def _decode(code, operands, out, common, p, name, decode, groups, lk, dv, caps) -> StepCode:
    """Split-K decode: workgroups of DECODE_ROWS query rows on one KV head, `splits` of them per row block,
    each over `chunk` keys, then the combine. The split count fills the GPU (DECODE_WARPS_PER_CORE warps
    a core) without cutting a split below DECODE_MIN_CHUNK keys: more splits only grow the combine."""
    kv_rows, grows = groups
    blocks = kv_rows * ceil_div(grows, DECODE_ROWS)
    splits, chunk = decode_splits(multiprocessors(caps), blocks, lk)
    if blocks > caps.max_workgroups[1]:
        raise CompileLimitError(f"attention: {blocks} decode row blocks exceed the device's "
                                f"{caps.max_workgroups[1]} workgroups along y; split the batch")
    rows = kv_rows * grows
    parts = rows * splits
    if parts * dv > MAX_ELEMENTS:
        raise CompileLimitError(f"attention: {rows} decode rows x {splits} splits x {dv} dims of partial "
                                f"accumulators exceed the kernels' 32-bit indexing; split the batch")
    pm, pl, pacc = (("temp", _temp(code, 4 * n)) for n in (parts, parts, parts * dv))
    code.launches.append(Launch(asset(decode), operands + [pm, pl, pacc], (splits, blocks, 1),
                                common + (p["scale"], p["softcap"], chunk, splits)))
    combine = asset(f"attention_combine_{name}")
    code.launches.append(Launch(combine, [pm, pl, pacc, ("var", out)],
                                (rows, 1, 1), (rows, dv, splits, int(p["zero_empty"]))))
    return code


__all__ = ["generate_attention"]
