"""Running one program three ways: NumPy (the reference), poot eagerly, and poot with its step
function under `@pt.jit`.

A program is a driver `run(xp, step, *inputs)` that loops over `step(xp, ...)` and returns a tuple of
arrays; `xp` is `numpy` or `poot`, so the reference and the poot runs are the same code. The jitted
run passes `pt.jit(step, static_argnums=0)` as `step` (the module is a static argument), the way a
user jits the body of a training or time-stepping loop and calls it from Python.
"""
from __future__ import annotations

import numpy as np

import poot as pt
from tolerance import assert_close


def to_poot(inputs):
    return tuple(pt.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs)


def copies(inputs):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in inputs)


def compare(got, expected, device, ops, label):
    """Each result leaf of `got` (poot) matches NumPy's leaf within the tolerance of its dtype."""
    assert len(got) == len(expected), f"{label}: {len(got)} results, NumPy has {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e)
        assert isinstance(g, pt.Array), f"{label}: result {i} is {type(g).__name__}, not a poot Array"
        assert g.device == device, f"{label}: result {i} is on {g.device}, not {device}"
        a = g.numpy()
        assert a.dtype == e.dtype, f"{label}: result {i} is {a.dtype}, NumPy gives {e.dtype}"
        k = ops[i] if isinstance(ops, (tuple, list)) else ops
        assert_close(a, e, pt.dtypes.as_dtype(e.dtype), ops=k, err_msg=f"{label}, result {i}")


def check_program(device, run, step, inputs, *, ops, jit=True, whole=False):
    """Runs `run(xp, step, *inputs)` with NumPy, poot eagerly and (jit) with the step jitted, and
    compares every poot result with NumPy's. `whole` also jits the whole driver (its Python loop is
    unrolled into one trace). Returns the jitted step (for its trace count)."""
    expected = run(np, step, *copies(inputs))
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run(pt, step, *to_poot(inputs))
    compare(got if isinstance(got, tuple) else (got,), expected, device, ops, "eager")
    jitted = None
    if jit:
        jitted = pt.jit(step, static_argnums=0)
        got = run(pt, jitted, *to_poot(inputs))
        compare(got if isinstance(got, tuple) else (got,), expected, device, ops, "jit step")
        assert jitted.trace_count == 1, f"the jitted step traced {jitted.trace_count} times"
    if whole:
        jitted_run = pt.jit(run, static_argnums=(0, 1))
        got = jitted_run(pt, step, *to_poot(inputs))
        compare(got if isinstance(got, tuple) else (got,), expected, device, ops, "jit whole loop")
    return jitted
