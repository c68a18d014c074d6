"""One jitted training step of a 2-layer MLP: poot vs JAX (CPU) and PyTorch (CPU, CUDA), where installed.

The step: logits = relu(x @ W1 + b1) @ W2 + b2, softmax cross-entropy against one-hot labels
(batch 256, 784-512-10, float32), gradients of the mean loss with respect to all four parameters,
and a plain SGD update. poot runs `pt.jit` over a function using `pt.value_and_grad`; JAX runs
`jax.jit` over `jax.value_and_grad`; PyTorch runs eager autograd (`loss.backward()` and an in-place
update under `no_grad`). Each repetition is the user's call with its results ready: poot's new
parameters and loss realized (`pt.realize`, then `pt.synchronize()` on a GPU), JAX's blocked on,
PyTorch's computed eagerly (and `torch.cuda.synchronize()` on CUDA). On a GPU device poot runs there
and PyTorch on CUDA is the baseline. All three
start from the same parameters and data, and the first step's losses are checked to agree. The
repetitions of the libraries are interleaved (one call of each in turn) and each one's median is
reported, so a machine whose load changes during the run still gives a fair ratio. The first and the
second call of each are timed once too (`-first-call`, `-second-call` rows): tracing and compiling, and
poot's building of its replay, which a user waits for when a script starts.

    python -m benchmarks.bench_train_step [--devices cpu,cuda] [--batch 256] [--hidden 512] [--json out.json]
"""
from __future__ import annotations

import time

import numpy as np

from benchmarks import common as C

LR = 0.1


def _data(batch: int, features: int, hidden: int, classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    labels = rng.integers(0, classes, batch)
    y = np.eye(classes, dtype=np.float32)[labels]
    params = {"w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
              "b1": np.zeros(hidden, np.float32),
              "w2": (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(np.float32),
              "b2": np.zeros(classes, np.float32)}
    return params, x, y


def _poot_step(device: str = "cpu"):
    import poot as pt

    def loss_fn(p, x, y):
        h = pt.maximum(x @ p["w1"] + p["b1"], 0.0)
        logits = h @ p["w2"] + p["b2"]
        return -(y * pt.nn.log_softmax(logits, axis=-1)).sum(axis=-1).mean()

    @pt.jit
    def step(p, x, y):
        loss, g = pt.value_and_grad(loss_fn)(p, x, y)
        return {k: p[k] - LR * g[k] for k in p}, loss

    def run(params, x, y):
        with pt.device(device):
            p = {k: pt.asarray(v) for k, v in params.items()}
            xs, ys = pt.asarray(x), pt.asarray(y)

        def call():
            new, loss = step(p, xs, ys)
            pt.realize(*new.values(), loss)
            if device != "cpu":
                pt.synchronize()
            return new, loss

        return call

    return run, lambda out: float(out[1])


def _jax_step():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")

    def loss_fn(p, x, y):
        h = jnp.maximum(x @ p["w1"] + p["b1"], 0.0)
        logits = h @ p["w2"] + p["b2"]
        return -(y * jax.nn.log_softmax(logits, axis=-1)).sum(axis=-1).mean()

    @jax.jit
    def step(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return {k: p[k] - LR * g[k] for k in p}, loss

    def run(params, x, y):
        p = {k: jnp.asarray(v) for k, v in params.items()}
        xs, ys = jnp.asarray(x), jnp.asarray(y)

        def call():
            out = step(p, xs, ys)
            jax.block_until_ready(out)
            return out

        return call

    return run, lambda out: float(out[1])


def _torch_step(device: str = "cpu"):
    import torch

    where = "cuda" if device.startswith("cuda") else "cpu"
    if where == "cuda" and not torch.cuda.is_available():
        raise ImportError("torch without CUDA")
    sync = torch.cuda.synchronize if where == "cuda" else (lambda: None)

    def run(params, x, y):
        p = {k: torch.tensor(v, requires_grad=True, device=where) for k, v in params.items()}
        xs, ys = torch.tensor(x, device=where), torch.tensor(y, device=where)

        def call():
            for t in p.values():
                t.grad = None
            h = torch.relu(xs @ p["w1"] + p["b1"])
            logits = h @ p["w2"] + p["b2"]
            loss = -(ys * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
            loss.backward()
            with torch.no_grad():
                new = {k: t - LR * t.grad for k, t in p.items()}
            sync()
            return new, loss.detach()

        return call

    return run, lambda out: float(out[1])


BASELINES = {"jax": _jax_step, "torch": _torch_step}


def _first_two(call) -> tuple[object, float, float]:
    """(the first call's result, the first call's and the second call's wall time): a jitted step
    traces and compiles on its first call, and poot builds its replay on the second."""
    t0 = time.perf_counter()
    out = call()
    t1 = time.perf_counter()
    call()
    return out, t1 - t0, time.perf_counter() - t1


def _measure(args, device: str, params, x, y) -> list[dict]:
    make, loss_of = _poot_step(device)
    calls = {"poot": make(params, x, y)}
    out, *early = _first_two(calls["poot"])
    first = loss_of(out)
    starts = {"poot": early}
    baselines = BASELINES if device == "cpu" else {"torch": BASELINES["torch"]}
    for name, factory in baselines.items():
        try:
            b_make, b_loss = factory() if name == "jax" else factory(device)
        except ImportError:
            C.note_once(f"bench_train_step: {name} is not installed for {device}; no {name} baseline")
            continue
        calls[name] = b_make(params, x, y)
        b_out, *starts[name] = _first_two(calls[name])
        b_first = b_loss(b_out)
        if not np.isclose(b_first, first, rtol=1e-4):
            raise C.BenchmarkError(f"bench_train_step: the first loss differs on {device}: poot {first}, "
                                   f"{name} {b_first}")
    medians = C.interleaved_medians(calls, args.repeat, args.warmup)
    poot_s = medians.pop("poot")
    shape = f"{args.features}-{args.hidden}-{args.classes}"
    params_row = {"batch": args.batch, "layers": shape, "dtype": "float32"}
    rows = C.rows_against("mlp-train-step", params_row, device, poot_s, medians,
                          flops=6 * args.batch * (args.features * args.hidden + args.hidden * args.classes))
    for k, which in enumerate(("first", "second")):   # one sample each: what a user waits for at startup
        rows += C.rows_against(f"mlp-train-step-{which}-call", {**params_row, "note": "one call, this process"},
                               device, starts["poot"][k], {n: v[k] for n, v in starts.items() if n != "poot"})
    return rows


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=30)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--features", type=int, default=784)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--classes", type=int, default=10)
    args = ap.parse_args(argv)
    params, x, y = _data(args.batch, args.features, args.hidden, args.classes)
    rows = []
    for device in C.available(args.devices):
        rows += _measure(args, device, params, x, y)
    return C.finish(args, "bench_train_step", rows)


if __name__ == "__main__":
    main()
