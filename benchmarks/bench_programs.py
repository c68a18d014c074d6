"""Realistic programs as a user times them: each program of tests/programs (the same driver and step
code runs on NumPy and on poot) timed whole, wall clock, results realized and read back on every
repetition, beside NumPy in the same run:

- numpy: `run(np, step, *inputs)`;
- poot eager: `run(pt, step, *inputs)` then `.numpy()` of every result;
- poot jit: the same with `pt.jit(step, static_argnums=0)` (traced once, before timing).

`python benchmarks/bench_programs.py [--device cpu] [--repeat 7] [--json out.json]` prints the median
milliseconds per program, the ratios (NumPy time / poot time: above 1 is faster than NumPy) and their
geometric means; `--json` writes one record per run (machine, commit, date, rows).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import poot as pt  # noqa: E402
from programs.test_clustering import blobs, kmeans_onehot_run, kmeans_onehot_step  # noqa: E402
from programs.test_linalg import power_run, power_step, spd_matrix  # noqa: E402
from programs.test_nbody_attention import (attention_block, attention_inputs, attention_run, nbody_inputs,  # noqa: E402
                                  nbody_run, nbody_step)
from programs.test_stencils import channel_inputs, channel_run, channel_step, heat_inputs, heat_run, heat_step  # noqa: E402
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


def _median_s(fn, repeat: int) -> float:
    fn()                                           # warm: compiles, traces, fills caches
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(name: str, device: str, repeat: int) -> dict:
    run, step, make = PROGRAMS[name]
    inputs = make()

    def numpy_call():
        run(np, step, *[a.copy() if isinstance(a, np.ndarray) else a for a in inputs])

    def poot_call(s):
        def call():
            args = [pt.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
            for r in _leaves(run(pt, s, *args)):
                r.numpy()
        return call

    with pt.device(device):
        jitted = pt.jit(step, static_argnums=0)
        row = {"program": name, "device": device,
               "numpy_ms": _median_s(numpy_call, repeat) * 1e3,
               "eager_ms": _median_s(poot_call(step), repeat) * 1e3,
               "jit_ms": _median_s(poot_call(jitted), repeat) * 1e3}
    row["eager_vs_numpy"] = row["numpy_ms"] / row["eager_ms"]
    row["jit_vs_numpy"] = row["numpy_ms"] / row["jit_ms"]
    return row


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--only", nargs="*", default=None, help="program names (default: all)")
    p.add_argument("--json", default=None, help="write the run's record here")
    args = p.parse_args(argv)
    rows = []
    print(f"{'program':26s} {'numpy ms':>10s} {'eager ms':>10s} {'jit ms':>10s} {'eager x':>8s} {'jit x':>8s}")
    for name in args.only or PROGRAMS:
        r = measure(name, args.device, args.repeat)
        rows.append(r)
        print(f"{name:26s} {r['numpy_ms']:10.3f} {r['eager_ms']:10.3f} {r['jit_ms']:10.3f} "
              f"{r['eager_vs_numpy']:8.2f} {r['jit_vs_numpy']:8.2f}", flush=True)
    geo = {k: math.exp(statistics.fmean(math.log(r[k]) for r in rows)) for k in ("eager_vs_numpy", "jit_vs_numpy")}
    print(f"geometric mean vs NumPy: eager {geo['eager_vs_numpy']:.2f}x, jit {geo['jit_vs_numpy']:.2f}x")
    if args.json:
        record = {"benchmark": "programs", "machine": {"node": platform.node(), "cpu": platform.processor(),
                                                       "cores": os.cpu_count(), "python": platform.python_version()},
                  "commit": _commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                  "rows": rows, "geometric_mean": geo}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
