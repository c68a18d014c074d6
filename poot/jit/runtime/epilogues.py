"""Pointwise epilogues fused into the matrix-vector products that feed them.

A linear layer is a product and then a few elementwise operations on its result: `act(W @ x + b)`,
a residual `h + W @ x`, a cast. The planner makes the product a step of its own (its result is
materialized, poot/fuse/plan.py) and the epilogue a pointwise step that reads it back: a second launch,
and a write and a read of the product between them. Where the device's kernel for the product can
compute the epilogue at its store (`poot.jit.codegen.fuses_epilogue`: the generated GPU GEMV), the
program runs the two steps as one: the product kernel evaluates the epilogue's roots from each row's
sum (rounded to the product's dtype first, so every result is the one the two kernels give) and stores
those; the product itself is never stored.

The plan is not changed: `fused_epilogues` picks, for a program on one device, the pairs of steps to
merge, and the program (poot/jit/runtime/program.py) generates the merged step in the product's place
and skips the epilogue's step and the views of the product between them. A pair merges when

- the product (and each view of it: a reshape, as `x @ w.T` for one row becomes, poot/fuse/row_products.py)
  is no result of the graph and is read by exactly one step besides its views, a pointwise one;
- every operation of that step that reads the product, directly or through another such operation, is
  a reshape or elementwise with those operands of its own shape, and the roots have the product's
  size: each root element needs the product at its own linear position only (the GEMV's row);
- the step's other inputs exist when the product runs (graph inputs or results of earlier steps);
- the merged kernel binds no more buffers than the device allows.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from poot.fuse.plan import Plan, Step
from poot.graph.registry import OPS


@dataclass(frozen=True)
class EpilogueFusion:
    step: Step              # the product's step computing the epilogue's roots
    absorbed: frozenset     # plan step indices it replaces: the epilogue's step and the views'
    hidden: frozenset       # ids of values never stored: the product and its views


def fused_epilogues(plan: Plan, caps, max_buffers: int) -> dict[int, EpilogueFusion]:
    """{product step index: EpilogueFusion} for the plan's products whose epilogue the device's product kernel
    computes (see the module docstring); `max_buffers`: the buffers a kernel may bind (ABI's excluded)."""
    from poot.jit.codegen import fuses_epilogue

    steps = plan.steps
    made_by: dict[int, int] = {}
    readers: dict[int, list[int]] = defaultdict(list)
    for s, step in enumerate(steps):
        for v in step.outputs:
            made_by[v.id] = s
        for v in step.inputs:
            readers[v.id].append(s)
    results = {v.id for v in plan.graph.outputs}
    fusions: dict[int, EpilogueFusion] = {}
    for i, step in enumerate(steps):
        if step.kind != "matmul" or step.eqn is None or not fuses_epilogue(step, caps):
            continue
        found = _consumer(step.eqn.out, steps, readers, results)
        if found is None:
            continue
        j, views, alias_steps = found
        epilogue = steps[j]
        if not _elementwise_on_product(epilogue, views, plan.producer, step.eqn.out.aval.size):
            continue
        extra = [v for v in dict.fromkeys(epilogue.inputs) if v.id not in views
                 and all(v.id != u.id for u in step.inputs)]
        if any(made_by.get(v.id, -1) >= i for v in extra):
            continue
        if len(step.inputs) + len(extra) + len(epilogue.outputs) > max_buffers:
            continue
        merged = Step(kind="matmul", outputs=list(epilogue.outputs), inputs=list(step.inputs) + extra,
                      shape=epilogue.shape, eqn=step.eqn, name=step.name, epilogue_of=tuple(views))
        fusions[i] = EpilogueFusion(merged, frozenset([j, *alias_steps]), frozenset(views))
    return fusions


def _consumer(product, steps, readers, results):
    """(the one pointwise step reading `product` or its views, the ids of product and views, the alias
    steps making the views), or None where anything else reads them or one is a graph result."""
    views, alias_steps, consumers = [product.id], [], set()
    frontier = [product]
    while frontier:
        v = frontier.pop()
        if v.id in results:
            return None
        for s in readers.get(v.id, ()):
            step = steps[s]
            if step.kind == "alias" and len(step.inputs) == 1 and step.inputs[0].id == v.id:
                views.append(step.outputs[0].id)
                alias_steps.append(s)
                frontier.append(step.outputs[0])
            elif step.kind == "pointwise":
                consumers.add(s)
            else:
                return None
    if len(consumers) != 1:
        return None
    return consumers.pop(), views, alias_steps


def _elementwise_on_product(step: Step, views: list[int], producer: dict, size: int) -> bool:
    """Whether each operation of pointwise `step` that depends on the product is a reshape or elementwise
    with those operands of its own shape, its roots of `size` elements: a root element then needs the
    product at its own linear position, which is the row a GEMV team just summed."""
    shape = tuple(step.shape)
    if not all(tuple(r.aval.shape) == shape for r in step.outputs) or math.prod(shape) != size:
        return False
    leaves = {v.id for v in step.inputs}
    tainted = {vid for vid in views if vid in leaves}
    if any(r.id in tainted for r in step.outputs):
        return False
    order, seen, stack = [], set(), [(r, False) for r in step.outputs]
    while stack:                       # the closure's equations, operands first
        v, done = stack.pop()
        if done:
            order.append(producer[v.id])
            continue
        if v.id in seen or v.id in leaves:
            continue
        seen.add(v.id)
        stack.append((v, True))
        stack.extend((u, False) for u in producer[v.id].inputs)
    for e in order:
        if not any(u.id in tainted for u in e.inputs):
            continue
        if e.op == "reshape":                   # row-major order kept: the same linear positions
            pass
        elif OPS[e.op].kind != "elementwise" or \
                any(u.id in tainted and tuple(u.aval.shape) != tuple(e.out.aval.shape) for u in e.inputs):
            return False
        tainted.add(e.out.id)
    return True

