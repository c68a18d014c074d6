"""Realistic programs as a user times them: each program of tests/programs (the same driver and step code
runs on NumPy and on poot) timed whole, wall clock, results realized and read back on every repetition,
beside NumPy (and JAX on the CPU, where installed) in the same run:

- numpy: `run(np, step, *inputs)`;
- poot eager: `run(pt, step, *inputs)` then `.numpy()` of every result (rows with mode "eager");
- poot jit: the same with `pt.jit(step, static_argnums=0)`, traced once before timing (mode "jit");
- JAX: the same driver with `jax.numpy` (beside poot eager) and `jax.jit(step, static_argnums=0)`
  (beside poot jit), blocked on every repetition; programs that assign items in place have no JAX row.

The calls are taken in turn (NumPy, poot eager, poot jit, JAX..., NumPy, ...), so a shared machine's
changing load weighs on all of them alike; each figure is the median of `--repeat` whole programs.
Prints the median milliseconds per program, the ratios (NumPy time / poot time: above 1 is faster than
NumPy) and their geometric means.

    python -m benchmarks.bench_programs [--devices cpu] [--repeat 41] [--only heat-stencil-f32] [--json out.json]
"""
from __future__ import annotations

import math
import os
import statistics
import sys

import numpy as np

from benchmarks import common as C

sys.path.insert(0, os.path.join(C.ROOT, "tests"))

import poot as pt  # noqa: E402
from programs.test_clustering import blobs, kmeans_onehot_run, kmeans_onehot_step  # noqa: E402
from programs.test_linalg import power_run, power_step, spd_matrix  # noqa: E402
from programs.test_nbody_attention import (attention_block, attention_inputs, attention_run, nbody_inputs,  # noqa: E402
                                  nbody_run, nbody_step)
from programs.test_stencils import (channel_inputs, channel_run, channel_step, heat_inputs, heat_run,  # noqa: E402
                                    heat_step)
from programs.test_training import (logreg_inputs, logreg_run, logreg_step, mlp_inputs, mlp_run, mlp_step,  # noqa: E402
                           two_layer_inputs, two_layer_run, two_layer_step)

PROGRAMS = {
    "two-layer-net": (two_layer_run, two_layer_step, two_layer_inputs),
    "mlp-backprop-f32": (mlp_run, mlp_step, lambda: mlp_inputs(np.float32)),
    "logistic-regression-f32": (logreg_run, logreg_step, lambda: logreg_inputs(np.float32)),
    "power-iteration-f64": (power_run, power_step, lambda: (spd_matrix(24, np.float64, 4),)),
    "heat-stencil-f32": (heat_run, heat_step, lambda: heat_inputs(np.float32)),
    "channel-flow": (channel_run, channel_step, channel_inputs),
    "nbody-f64": (nbody_run, nbody_step, lambda: nbody_inputs(np.float64)),
    "kmeans-onehot": (kmeans_onehot_run, kmeans_onehot_step, blobs),
    "attention-f32": (attention_run, attention_block, lambda: attention_inputs(np.float32)),
}


def _leaves(out):
    return out if isinstance(out, tuple) else (out,)


def measure(args, name: str, device: str) -> list[dict]:
    run, step, make = PROGRAMS[name]
    inputs = make()

    def numpy_call():
        run(np, step, *[a.copy() if isinstance(a, np.ndarray) else a for a in inputs])

    def poot_call(s):
        def call():
            arrays = [pt.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
            for r in _leaves(run(pt, s, *arrays)):
                r.numpy()
        return call

    with pt.device(device):
        calls = {"numpy": numpy_call, "eager": poot_call(step),
                 "jit": poot_call(pt.jit(step, static_argnums=0))}
        if device == "cpu":
            calls.update(_jax_calls(run, step, inputs))
        med = C.interleaved_medians(calls, repeat=args.repeat, warmup=max(args.warmup, 1))
    return [row for mode in ("eager", "jit")
            for row in C.rows_against(f"program-{name}", {"program": name, "mode": mode}, device, med[mode],
                                      {"numpy": med["numpy"], "jax": med.get(f"jax-{mode}")})]


def _jax_calls(run, step, inputs) -> dict:
    """JAX on the CPU running the same driver and step (jax-eager: jax.numpy; jax-jit: jax.jit of the
    step), results blocked on every repetition; {} where JAX is absent, a mode left out where the
    program does what JAX cannot (in-place item assignment)."""
    jax = C.optional("jax")
    if jax is None:
        return {}
    jax.config.update("jax_platforms", "cpu")
    jnp = jax.numpy
    out = {}
    for mode, s in (("eager", step), ("jit", jax.jit(step, static_argnums=0))):
        def call(s=s):
            arrays = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
            jax.block_until_ready(run(jnp, s, *arrays))
        try:
            call()
        except Exception as e:            # noqa: BLE001 (a baseline that cannot run the program)
            print(f"jax {mode}: cannot run this program ({type(e).__name__}); no JAX row", file=sys.stderr)
            continue
        out[f"jax-{mode}"] = call
    return out


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=41)
    ap.add_argument("--only", type=C.comma_list, default=None, help="program names (default: all): "
                    + ", ".join(PROGRAMS))
    args = ap.parse_args(argv)
    unknown = [n for n in args.only or () if n not in PROGRAMS]
    if unknown:
        ap.error(f"unknown programs {unknown}; known: {', '.join(PROGRAMS)}")
    rows = []
    for device in C.available(args.devices):
        for name in args.only or PROGRAMS:
            rows += measure(args, name, device)
    rec = C.finish(args, "bench_programs", rows)
    for base in ("numpy", "jax"):
        for mode in ("eager", "jit"):
            ratios = [r["ratio"] for r in rows if r["params"]["mode"] == mode and r["ratio"] and r["baseline"] == base]
            if ratios:
                print(f"geometric mean vs {base}, {mode} ({len(ratios)} programs): "
                      f"{math.exp(statistics.fmean(math.log(x) for x in ratios)):.2f}x")
    return rec


if __name__ == "__main__":
    main()
