"""Probe: atomic adds -- integer (a histogram) and float32 (a total)."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.kernel
def histogram(values: pt.In[pt.u32], counts: pt.InOut[pt.u32]):
    i = pt.thread_index()
    if i < len(values):
        pt.atomic_add(counts, values[i] % len(counts), 1)


@pt.kernel
def total_f32(values: pt.In[pt.f32], total: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(values):
        pt.atomic_add(total, 0, values[i])


def example_histogram(rng):
    values = rng.integers(0, 1000, 5000).astype(np.uint32)
    expected = np.bincount(values % 16, minlength=16).astype(np.uint32)
    return Example(args=(values, np.zeros(16, np.uint32)), threads=5000, expected={"counts": expected})


def example_total_f32(rng):
    # small integers: every order of the adds gives the same float32 sum exactly
    values = rng.integers(0, 1000, 5000).astype(np.float32)
    return Example(args=(values, np.zeros(1, np.float32)), threads=5000,
                   expected={"total": np.array([values.sum(dtype=np.float64)], np.float32)})
