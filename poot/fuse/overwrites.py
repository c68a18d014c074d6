"""Which steps a scatter waits for, so that it can write in place.

A scatter (`x.at[i].set(v)`, `dynamic_update_slice`) may update its operand's buffer in place when it
is that buffer's last reader (poot/jit/runtime/inplace.py). A decoder step reads the old cache and
then writes its row: the planner orders the plan's steps so that the other readers of the buffer a
scatter overwrites run first (poot/fuse/plan.py `_Planner._order`), and the write needs no copy."""
from __future__ import annotations


def scatter_readers(steps: list) -> dict[int, set]:
    """Scatter step (by id) -> the other steps (by id) reading the buffer its operand is (through
    views): the scatter may update that buffer in place once they have run."""
    view_of = {s.outputs[0].id: s.inputs[0].id for s in steps if s.kind == "alias"}

    def root(vid: int) -> int:
        while vid in view_of:
            vid = view_of[vid]
        return vid

    readers: dict[int, set] = {}
    for s in steps:
        if s.kind != "alias":
            for v in s.inputs:
                readers.setdefault(root(v.id), set()).add(id(s))
    return {id(s): readers.get(root(s.eqn.inputs[0].id), set()) - {id(s)}
            for s in steps if s.kind == "scatter" and s.eqn is not None}


def waits_for_readers(step, readers: dict[int, set], pending: set) -> bool:
    """Whether scatter `step` should wait: another pending step (`pending`: their ids) reads the buffer
    it overwrites. Run first, those readers leave the scatter as the buffer's last reader."""
    others = readers.get(id(step))
    return bool(others) and not others.isdisjoint(pending)
