"""Probe: one workgroup per row sums the row through shared memory (a barrier-synchronized tree)."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 64


@pt.kernel(workgroup=(LANES, 1, 1))
def row_sum(x: pt.In[pt.f32], out: pt.Out[pt.f32]):
    lane = pt.local_index()
    row = pt.group_index()
    n = len(x) // len(out)
    partial = pt.shared(pt.f32, LANES)
    acc = 0.0
    if row < len(out):
        for j in range(lane, n, LANES):
            acc += x[row * n + j]
    partial[lane] = acc
    pt.workgroup_barrier()
    step = LANES // 2
    while step > 0:
        if lane < step:
            partial[lane] += partial[lane + step]
        pt.workgroup_barrier()
        step //= 2
    if lane == 0 and row < len(out):
        out[row] = partial[0]


def example_row_sum(rng):
    rows, cols = 7, 300
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    eps = float(np.finfo(np.float32).eps)
    return Example(args=(x, np.zeros(rows, np.float32)), threads=rows * LANES,
                   expected={"out": x.sum(axis=1, dtype=np.float64).astype(np.float32)},
                   rtol=eps * cols, atol=eps * cols * float(np.abs(x).max()))
