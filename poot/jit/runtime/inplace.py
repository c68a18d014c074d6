"""In-place updates of donated buffers: a scatter writing over a donated input takes that input's buffer.

A scatter step (out = x; out[idx] = updates) runs as a copy of x into out, then the writes. When x is a
donated graph input (or a reshape of one) that no later step reads, its buffer can be the result's: the
copy then reads and writes each element at one address (a no-op in effect) and the writes land in the
donated buffer. This is what makes `pt.dynamic_update_slice` / `pt.paged_update` of a KV cache inside
`@pt.jit(donate_argnums=...)` allocate nothing per call: the program releases the donated buffer into
its free pool just *before* the scatter allocates its result (of the same size), instead of after.
"""
from __future__ import annotations


def release_step(plan, vid: int, last: int) -> int:
    """The step after which donated input `vid` (last read by step `last`) joins the free pool: `last`,
    or `last - 1` (-1: before the first step) when step `last` is a scatter that overwrites that very
    input with a result of the same size."""
    step = plan.steps[last]
    if step.kind != "scatter" or step.eqn is None:
        return last
    x = step.eqn.inputs[0]
    while x.id != vid:
        e = plan.producer.get(x.id)
        if e is None or e.op != "reshape":
            return last
        x = e.inputs[0]
    if step.eqn.out.aval.nbytes != x.aval.nbytes or any(v.id == vid for v in step.eqn.inputs[1:]):
        return last
    return last - 1
