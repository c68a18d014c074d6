"""Counters of what realizing did on this thread: programs run and host reads.

`programs` counts the graphs realized (each is one planned program run on its device: a fused
sequence of kernel launches); `host_reads` counts the times a whole array's value was read to the
host (`.numpy()`, `np.asarray(x)`, `float(x)`, `x.item()`, a NumPy fallback of `np.<function>(x)`).

Why: a library that drives poot arrays (Dask runs each chunk task on a worker thread, see
`poot.dask`) can check that a step ran as one fused program and never left the device, without
reading debug logs. The counts are per thread, so a measurement taken on one thread is not disturbed
by other threads realizing meanwhile; @pt.jit calls run their own recorded programs and are not
counted here.

    from poot.trace import counters

    with counters.measure() as m:
        y = (pt.exp(x) * 2.0).sum()
        pt.realize(y)
    assert m.programs == 1 and m.host_reads == 0
"""
from __future__ import annotations

import threading


class _Counts(threading.local):
    programs = 0
    host_reads = 0


counts = _Counts()


def snapshot() -> tuple[int, int]:
    """(programs, host_reads) counted on this thread so far."""
    return counts.programs, counts.host_reads


class measure:  # noqa: N801 (lower case: used like a function, `with measure() as m:`)
    """Counts the programs and host reads of this thread inside a `with` block (or between
    `start()` and `stop()`); `.programs` and `.host_reads` read the counts so far."""

    __slots__ = ("_start", "_stop")

    def __init__(self):
        self._start = self._stop = None

    def start(self) -> "measure":
        self._start, self._stop = snapshot(), None
        return self

    def stop(self) -> "measure":
        self._stop = snapshot()
        return self

    def __enter__(self) -> "measure":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _delta(self, i: int) -> int:
        end = self._stop if self._stop is not None else snapshot()
        return end[i] - (self._start or (0, 0))[i]

    @property
    def programs(self) -> int:
        return self._delta(0)

    @property
    def host_reads(self) -> int:
        return self._delta(1)

    def __repr__(self) -> str:
        return f"measure(programs={self.programs}, host_reads={self.host_reads})"
