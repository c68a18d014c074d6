"""Uniformity analysis: which values may differ between the threads of a workgroup, and the first
Barrier (or statement evaluating a ShuffleXor) reached under control flow that does. The verifier
refuses such a kernel; the kernel importer uses the same analysis to name the barrier's source line."""
from __future__ import annotations

from poot.jit.kir.model import (AtomicAdd, Assign, Barrier, Break, Const, Continue, CopyAsync, For, If, Index, LdMatrix,
                    Len, Load, LoadX4, Mma, Read, Return, Shuffle, ShuffleXor, Store, StoreX4, Wgmma, While)


def divergent_barrier(body) -> Barrier | None:
    """The first Barrier of `body` under thread-dependent control flow (or after a possibly-divergent
    return or loop exit), or None. Iterates to a fixed point: a local assigned from a divergent value
    later in a loop makes earlier uses divergent too."""
    return _settle(body).found


def divergent_shuffle(body):
    """The first statement of `body` that evaluates a ShuffleXor under thread-dependent control flow
    (its partner thread may not evaluate it), or None."""
    return _settle(body).shuffle


def _settle(body) -> "_Walk":
    walk = _Walk()
    while True:
        before = len(walk.divergent)
        walk.returned, walk.found, walk.shuffle = False, None, None
        walk.block(body, False)
        if len(walk.divergent) == before:
            return walk


def has_shuffle(e) -> bool:
    """Whether expression `e` contains a subgroup operation (ShuffleXor, Shuffle, Mma, LdMatrix, Wgmma)."""
    if isinstance(e, (ShuffleXor, Shuffle, Mma, LdMatrix, Wgmma)):
        return True
    return any(has_shuffle(getattr(e, f)) for f in ("x", "a", "b", "c", "cond", "index") if hasattr(e, f))


def _own_exprs(s) -> tuple:
    """The expressions statement `s` evaluates itself (not those of nested blocks)."""
    if isinstance(s, Assign):
        return (s.value,)
    if isinstance(s, (Store, AtomicAdd)):
        return (s.index, s.value)
    if isinstance(s, StoreX4):
        return (s.index,) + tuple(s.values)
    if isinstance(s, CopyAsync):
        return (s.dst_index, s.src_index, s.ok)
    if isinstance(s, (If, While)):
        return (s.cond,)
    if isinstance(s, For):
        return (s.start, s.stop)
    return ()


class _Walk:
    def __init__(self):
        self.divergent: set[str] = set()
        self.returned = False
        self.found: Barrier | None = None
        self.shuffle = None

    def div(self, e) -> bool:
        """Whether expression `e` may differ between the threads of a workgroup."""
        if isinstance(e, Index):
            return e.kind in ("thread", "local")
        if isinstance(e, Read):
            return e.name in self.divergent
        if isinstance(e, (Load, LoadX4)):
            return self.div(e.index)
        if isinstance(e, (LdMatrix, Wgmma)):
            return True                  # each lane receives its own part of the matrices
        if isinstance(e, (Const, Len)):
            return False
        if isinstance(e, Mma):
            return any(self.div(x) for x in e.a + e.b + e.c)
        return any(self.div(getattr(e, f)) for f in ("x", "a", "b", "c", "cond") if hasattr(e, f))

    def loop_div(self, s) -> bool:
        return self.div(s.cond) if isinstance(s, While) else self.div(s.start) or self.div(s.stop)

    def exits(self, body, div: bool, loop_level: bool) -> bool:
        """Whether a Break/Continue (targeting this loop when loop_level) or Return in `body` sits under
        divergent control."""
        for s in body:
            if isinstance(s, (Break, Continue)) and loop_level and div:
                return True
            if isinstance(s, Return) and div:
                return True
            if isinstance(s, If):
                d = div or self.div(s.cond)
                if self.exits(s.then, d, loop_level) or self.exits(s.orelse, d, loop_level):
                    return True
            if isinstance(s, (For, While)) and self.exits(s.body, div or self.loop_div(s), False):
                return True
        return False

    def block(self, body, div: bool) -> None:
        for s in body:
            div = div or self.returned
            evaluated_div = div or (isinstance(s, While) and self.loop_div(s))
            if evaluated_div and self.shuffle is None and any(map(has_shuffle, _own_exprs(s))):
                self.shuffle = s
            if isinstance(s, Assign):
                if div or self.div(s.value):
                    self.divergent.add(s.name)
            elif isinstance(s, AtomicAdd):
                if s.result is not None:
                    self.divergent.add(s.result)
            elif isinstance(s, If):
                d = div or self.div(s.cond)
                self.block(s.then, d)
                self.block(s.orelse, d)
            elif isinstance(s, (For, While)):
                d = div or self.loop_div(s)
                if d and isinstance(s, For):
                    self.divergent.add(s.var)
                self.block(s.body, d or self.exits(s.body, False, True))
            elif isinstance(s, Return):
                if div:
                    self.returned = True
            elif isinstance(s, Barrier) and div and self.found is None:
                self.found = s
