"""The CPU oracle: evaluates any Graph with NumPy, one equation at a time. It defines poot's array
semantics; every device is compared with it."""
from __future__ import annotations

import numpy as np

from poot.graph.ir import Graph
from poot.graph.control import evaluate_region
from poot.graph.ops import OPS


def evaluate(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run `graph` on NumPy arrays and return its outputs (fresh arrays, C-contiguous)."""
    if len(inputs) != len(graph.inputs):
        raise ValueError(f"graph takes {len(graph.inputs)} inputs, got {len(inputs)}")
    env: dict[int, np.ndarray] = {}
    for v, x in zip(graph.inputs, inputs):
        env[v.id] = np.asarray(x).astype(v.aval.dtype.np, copy=False).reshape(v.aval.shape)
    regions: dict = {}   # a control construct runs once for all its result equations
    with np.errstate(all="ignore"):
        for e in graph.eqns:
            xs = [env[v.id] for v in e.inputs]
            if "region" in e.params:
                key = (id(e.params["region"]), tuple(v.id for v in e.inputs))
                if key not in regions:
                    regions[key] = evaluate_region(e.params["region"], xs)
                r = regions[key][e.params["index"]]
            else:
                r = OPS[e.op].oracle(xs, **e.params)
            env[e.out.id] = np.asarray(r).reshape(e.out.aval.shape)
    return [np.ascontiguousarray(env[v.id]) for v in graph.outputs]
