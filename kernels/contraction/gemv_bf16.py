"""GEMV over bf16 weights: y[n] = sum_k w[n, k] * x[k] for row-major bf16 w of shape [N, K] and bf16 x,
accumulated in f32 and rounded to bf16 once (what a bf16 matmul means in poot and in PyTorch).

The layout is gemv_f32's: a workgroup owns ROWS consecutive outputs (local y selects the row); the K
dimension is split across LANES lanes (local x) that read consecutive elements of a row together
(coalesced), each lane keeping two f32 partial sums (two independent loads in flight per step);
the lanes' partials are reduced in shared memory by a barrier-synchronized tree. Each product of two
bf16 values is exact in f32. Launch with threads=(ceil(N / ROWS) * LANES, ROWS, 1)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 64
ROWS = 4


@pt.kernel(workgroup=(LANES, ROWS, 1))
def gemv_bf16(w: pt.In[pt.bf16], x: pt.In[pt.bf16], y: pt.Out[pt.bf16]):
    lane = pt.local_index_x()
    r = pt.local_index_y()
    row = pt.group_index_x() * ROWS + r
    k = len(x)
    partial = pt.shared(pt.f32, LANES * ROWS)
    acc0 = 0.0
    acc1 = 0.0
    if row < len(y):
        base = row * k
        j = lane
        while j + LANES < k:
            acc0 += pt.f32(w[base + j]) * pt.f32(x[j])
            acc1 += pt.f32(w[base + j + LANES]) * pt.f32(x[j + LANES])
            j += 2 * LANES
        if j < k:
            acc0 += pt.f32(w[base + j]) * pt.f32(x[j])
    slot = r * LANES + lane
    partial[slot] = acc0 + acc1
    pt.workgroup_barrier()
    step = LANES // 2
    while step > 0:
        if lane < step:
            partial[slot] += partial[slot + step]
        pt.workgroup_barrier()
        step //= 2
    if lane == 0 and row < len(y):
        y[row] = pt.bf16(partial[slot])


def launch_threads(n: int) -> tuple[int, int, int]:
    """The grid for N outputs."""
    return (-(-n // ROWS) * LANES, ROWS, 1)


def example_gemv_bf16(rng):
    bf16 = ml_dtypes.bfloat16
    examples = []
    for n, k in ((37, 300), (8, 64), (5, 129)):             # K a multiple of 2 * LANES, and K odd
        w = rng.standard_normal((n, k)).astype(bf16)
        x = rng.standard_normal(k).astype(bf16)
        exact = w.astype(np.float64) @ x.astype(np.float64)
        ref = exact.astype(np.float32).astype(bf16)
        scale = float(np.abs(w.astype(np.float32)).max() * np.abs(x.astype(np.float32)).max())
        # one bf16 rounding of the result, plus the f32 summation error (order differs by device)
        examples.append(Example(args=(w, x, np.zeros(n, bf16)), threads=launch_threads(n), expected={"y": ref},
                                rtol=float(ml_dtypes.finfo(bf16).eps),
                                atol=float(np.finfo(np.float32).eps) * k * scale))
    return examples
