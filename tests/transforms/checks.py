"""Derivative checks against central finite differences, in float64.

A function f: arrays -> array is checked along random directions: the directional derivative
(f(x + h v) - f(x - h v)) / 2h must match both forward mode (`pt.jvp` along v) and reverse mode
(`<pt.vjp(u), v>` for a random output cotangent u against `<u, directional derivative>`). Two
evaluations per direction instead of two per element keep the checks fast; the functions are
jitted, so each evaluation replays one compiled program.
"""
from __future__ import annotations

import numpy as np

import poot as pt

STEP = 1e-6


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_derivatives(fn, args, *, rtol=1e-6, atol=1e-7, directions=1, seed=0, modes=("jvp", "vjp"),
                      step=STEP):
    """Check `pt.jvp` and `pt.vjp` of `fn` at `args` (a list of float64 NumPy arrays) against
    central differences; returns the ops' outputs for further checks."""
    rng = np.random.default_rng(seed)
    args = [np.asarray(a, dtype=np.float64) for a in args]
    jitted = pt.jit(fn)

    def evaluate(xs):
        return [np.asarray(o, dtype=np.float64) for o in _as_list(jitted(*[pt.asarray(x) for x in xs]))]

    base = evaluate(args)
    primals = [pt.asarray(a) for a in args]
    out, pullback = pt.vjp(fn, *primals)
    outs = _as_list(out)
    for o, b in zip(outs, base):
        np.testing.assert_allclose(np.asarray(o), b, rtol=1e-12, atol=1e-12)
    for _ in range(directions):
        vs = [rng.standard_normal(a.shape) for a in args]
        plus = evaluate([a + step * v for a, v in zip(args, vs)])
        minus = evaluate([a - step * v for a, v in zip(args, vs)])
        numeric = [(p - m) / (2 * step) for p, m in zip(plus, minus)]
        if "jvp" in modes:
            _, tangent = pt.jvp(fn, tuple(primals), tuple(pt.asarray(v) for v in vs))
            for t, n in zip(_as_list(tangent), numeric):
                np.testing.assert_allclose(np.asarray(t), n, rtol=rtol, atol=atol, err_msg="jvp")
        if "vjp" in modes:
            us = [rng.standard_normal(b.shape) for b in base]
            ct = [pt.asarray(u) for u in us]
            cts = pullback(type(out)(ct) if isinstance(out, (tuple, list)) else ct[0])
            lhs = sum(float(np.sum(np.asarray(c) * v)) for c, v in zip(cts, vs))
            rhs = sum(float(np.sum(u * n)) for u, n in zip(us, numeric))
            scale = max(1.0, abs(rhs))
            assert abs(lhs - rhs) <= rtol * 10 * scale + atol * 10, f"vjp: {lhs} vs {rhs}"
    return base
