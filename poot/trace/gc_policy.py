"""Python's garbage collector and a lazy graph: the youngest generation's threshold, raised at import.

Why: an eager program records thousands of small objects (a Node, its operand tuple, its Array) that live
until the next realize, and then die all at once by reference counting. CPython collects its youngest
generation every 700 net allocations (its default threshold); every survivor of two such collections
moves to the oldest generation, and once those moves add up to a quarter of that generation, CPython
runs a full collection, which scans every long-lived object: the compiled programs and kernel IR that
poot's caches hold, and the user's own. A node that lives for one realize thus costs a few
microseconds of full collections, more than recording it. Measured on a 2-core VM (CPU time per run,
threshold 700 against 10000): channel-flow 40 -> 30 ms, mlp-backprop 12.5 -> 6 ms, heat-stencil
3.1 -> 2.4 ms; full collections took a third of channel-flow's time.

At a threshold of 10000, a graph realized every few thousand operations mostly dies young. Nothing is
left uncollected: reference counting frees every acyclic object as before, and cyclic garbage waits for
10000 allocations instead of 700 (CPython 3.13 raised its own default to 2000). poot only raises the
threshold, never lowers it: a process that set a higher one keeps it. POOT_GC_THRESHOLD sets the value
poot raises it to; 0 leaves Python's settings alone."""
from __future__ import annotations

import gc

from poot import env

DEFAULT_THRESHOLD = 10_000


def raise_young_threshold() -> int:
    """Raise the youngest generation's collection threshold to POOT_GC_THRESHOLD (default
    DEFAULT_THRESHOLD) where it is lower; the threshold in force afterwards."""
    wanted = env.integer("POOT_GC_THRESHOLD", DEFAULT_THRESHOLD)
    young, *older = gc.get_threshold()
    if wanted and young and young < wanted:   # young == 0: the user turned collection off; leave it so
        gc.set_threshold(wanted, *older)
        return wanted
    return young


__all__ = ["raise_young_threshold", "DEFAULT_THRESHOLD"]
