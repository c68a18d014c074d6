"""Probe: a loop left with `break` (the first element of each row above a threshold, or -1)."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.kernel
def first_above(x: pt.In[pt.f32], found: pt.Out[pt.i32], threshold: pt.f32, cols: pt.u32):
    row = pt.thread_index()
    if row >= len(found):
        return
    at = -1
    for j in range(cols):
        if x[row * cols + j] > threshold:
            at = pt.i32(j)
            break
    found[row] = at


def example_first_above(rng):
    rows, cols = 100, 50
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    hit = x > 2.0
    expected = np.where(hit.any(axis=1), hit.argmax(axis=1), -1).astype(np.int32)
    return Example(args=(x, np.zeros(rows, np.int32), 2.0, cols), expected={"found": expected})
