"""Probe: elementwise add, one thread per element (the seed page's minimal example)."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.kernel
def add(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(c):
        c[i] = a[i] + b[i]


def example_add(rng):
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    return Example(args=(a, b, np.zeros(1000, np.float32)), expected={"c": a + b})
