"""Probe: Python's integer semantics (floor `//` and `%` with negative operands, shifts, wrapping),
a device function, a bitcast and an fma, so every target is held to the emulator's meaning."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example


@pt.device_fn
def floor_quotient(a, b):
    return a // b


@pt.kernel
def int_semantics(a: pt.In[pt.i32], b: pt.In[pt.i32], q: pt.Out[pt.i32], r: pt.Out[pt.i32],
                  bits: pt.Out[pt.u32], f: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(q):
        x = a[i]
        y = b[i]
        q[i] = floor_quotient(x, y)
        r[i] = x % y
        bits[i] = (pt.bitcast(x, pt.u32) << 3) ^ (pt.bitcast(y, pt.u32) >> 2)
        f[i] = pt.fma(pt.f32(x), 0.5, pt.f32(y))


def _floor_ref(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.where(b64 == 0, 0, np.floor_divide(a64, safe))
    r = np.where(b64 == 0, 0, np.mod(a64, safe))
    return q.astype(np.int32), r.astype(np.int32)


def example_int_semantics(rng):
    n = 512
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = rng.integers(-9, 10, n).astype(np.int32)
    q, r = _floor_ref(a, b)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    bits = ((ua << np.uint32(3)) ^ (ub >> np.uint32(2))).astype(np.uint32)
    f = (a.astype(np.float64) * 0.5 + b.astype(np.float64)).astype(np.float32)
    z = lambda d: np.zeros(n, d)  # noqa: E731
    return Example(args=(a, b, z(np.int32), z(np.int32), z(np.uint32), z(np.float32)),
                   expected={"q": q, "r": r, "bits": bits, "f": f})
