"""Probe: integer and float atomic adds (a histogram, and a total)."""
import numpy as np

import poot as pt
from poot.jit.kernel.examples import Example


@pt.kernel
def histogram(values: pt.In[pt.u32], counts: pt.InOut[pt.u32], total: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(values):
        pt.atomic_add(counts, values[i] % len(counts), 1)
        pt.atomic_add(total, 0, pt.f32(values[i]))


def example_histogram(rng):
    values = rng.integers(0, 1000, 5000).astype(np.uint32)
    counts = np.zeros(16, np.uint32)
    total = np.zeros(1, np.float32)
    expected = np.bincount(values % 16, minlength=16).astype(np.uint32)
    return Example(args=(values, counts, total), threads=5000,
                   expected={"counts": expected, "total": np.array([values.sum()], np.float32)})
