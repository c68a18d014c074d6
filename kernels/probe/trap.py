"""Probe: `assert` becomes a trap with its own code and source line; poot.KernelTrap names it."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.kernel
def checked_sqrt(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        assert x[i] >= 0.0, "negative input"
        y[i] = pt.sqrt(x[i])


def example_checked_sqrt(rng):
    x = rng.random(300).astype(np.float32) * 100
    ok = Example(args=(x, np.zeros(300, np.float32)), expected={"y": np.sqrt(x)})
    bad = x.copy()
    bad[137] = -1.0
    trapped = Example(args=(bad, np.zeros(300, np.float32)), trap="negative input")
    return [ok, trapped]
