"""GEMV over f32 weights, coalesced: y[n] = sum_k w[n, k] * x[k] for row-major w of shape [N, K].

A workgroup owns a strip of ROWS consecutive outputs (local y selects the row); the K dimension is
split across LANES lanes (local x), which read consecutive elements of a row together (coalesced);
each lane's partial sum goes to shared memory, where a barrier-synchronized tree reduces the LANES
partials of each row. Launch with threads=(ceil(N / ROWS) * LANES, ROWS, 1)."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 64
ROWS = 4


@pt.kernel(workgroup=(LANES, ROWS, 1))
def gemv_f32(w: pt.In[pt.f32], x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    lane = pt.local_index_x()
    r = pt.local_index_y()
    row = pt.group_index_x() * ROWS + r
    k = len(x)
    partial = pt.shared(pt.f32, LANES * ROWS)
    acc = 0.0
    if row < len(y):
        base = row * k
        for j in range(lane, k, LANES):
            acc += w[base + j] * x[j]
    slot = r * LANES + lane
    partial[slot] = acc
    pt.workgroup_barrier()
    step = LANES // 2
    while step > 0:
        if lane < step:
            partial[slot] += partial[slot + step]
        pt.workgroup_barrier()
        step //= 2
    if lane == 0 and row < len(y):
        y[row] = partial[slot]


def launch_threads(n: int) -> tuple[int, int, int]:
    """The grid for N outputs."""
    return (-(-n // ROWS) * LANES, ROWS, 1)


def example_gemv_f32(rng):
    n, k = 37, 300
    w = rng.standard_normal((n, k)).astype(np.float32)
    x = rng.standard_normal(k).astype(np.float32)
    eps = float(np.finfo(np.float32).eps)
    ref = (w.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)
    scale = float(np.abs(w).max() * np.abs(x).max())
    return Example(args=(w, x, np.zeros(n, np.float32)), threads=launch_threads(n), expected={"y": ref},
                   rtol=eps * 4 * np.sqrt(k), atol=eps * k * scale)
