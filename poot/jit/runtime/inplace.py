"""In-place updates of donated buffers: a scatter writing over a donated input takes that input's buffer.

A scatter step (out = x; out[idx] = updates) runs as a copy of x into out, then the writes. When x is a
donated graph input (or a reshape of one) that no later step reads, its buffer can be the result's: the
copy then reads and writes each element at one address (a no-op in effect) and the writes land in the
donated buffer. This is what makes `pt.dynamic_update_slice` / `pt.paged_update` of a KV cache inside
`@pt.jit(donate_argnums=...)` allocate nothing per call: the program releases the donated buffer into
its free pool just *before* the scatter allocates its result (of the same size), instead of after.

The same holds for an intermediate: in a decoder step each layer writes its rows into the cache the
layer before returned (a scatter of a scatter's result), after that layer's attention read it. When the
scatter is the last reader of its operand's buffer, the result takes that buffer (`reused_operand`; the
program makes the result an alias of the operand), so a whole stack of layers updates one cache buffer.
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


def reused_operand(step, frees: list[int], alias_src: dict[int, int]) -> tuple[int, int] | None:
    """(operand slot, its buffer's root slot) of scatter `step` when its result can live in the
    operand's buffer: the operand (or the value it is a view of, `alias_src` mapping view slots to
    their sources) dies at this step (its root is in `frees`), has the result's size, and is not
    also read as the indices or the updates. None otherwise (graph inputs are `release_step`'s)."""
    if step.kind != "scatter" or step.eqn is None or len(step.outputs) != 1:
        return None
    x = step.eqn.inputs[0]

    def root(vid: int) -> int:
        while vid in alias_src:
            vid = alias_src[vid]
        return vid

    r = root(x.id)
    if r not in frees or step.outputs[0].aval.nbytes != x.aval.nbytes:
        return None
    if any(root(v.id) == r for v in list(step.eqn.inputs[1:]) + [v for v in step.inputs if v.id != x.id]):
        return None
    return x.id, r
