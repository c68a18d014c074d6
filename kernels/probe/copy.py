"""Probe: a copy with an offset given as a scalar parameter."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.kernel
def copy(src: pt.In[pt.i32], dst: pt.Out[pt.i32], offset: pt.u32):
    i = pt.thread_index()
    if i < len(dst):
        dst[i] = src[i + offset]


def example_copy(rng):
    src = rng.integers(-2**31, 2**31 - 1, 1200, dtype=np.int64).astype(np.int32)
    return Example(args=(src, np.zeros(1000, np.int32), 200), expected={"dst": src[200:]})
