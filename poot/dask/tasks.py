"""Task boundaries: every Dask task that yields poot arrays ends by realizing them, as one program.

Inside a task, NumPy calls on poot chunks only record a lazy graph (Dask's blockwise fusion already
puts an elementwise chain and the chunk step of a reduction into one task), so the realize at the end
of the task runs the whole step as one fused poot program. Realizing there, and not later, is what
keeps tasks independent: a pending poot value never crosses a task boundary, so two worker threads
never walk or realize the same pending graph, Dask's timings and memory accounting describe the
work of each task, and a value sent to another worker is already computed.

The pass is installed as Dask's `array_optimize` (it runs Dask's own array optimization first, then
wraps each task in a `ChunkTask`). The wrapper also
- places poot inputs on the worker's device when `PootWorkerPlugin` chose one (`use_device`);
- records, per task, the programs run and host reads made on its thread (`task_stats()`), the
  evidence that a task ran as one program and never read a chunk back to NumPy.

`dask.compute(..., optimize_graph=False)` skips array optimizations, and with them this pass:
tasks then hand pending arrays to each other, which is safe only on the synchronous scheduler.
"""
from __future__ import annotations

import collections
import time
from typing import NamedTuple

import poot as pt
from poot.trace import counters
from poot.trace.array import Array

_MAX_RECORDS = 100_000
_records: collections.deque = collections.deque(maxlen=_MAX_RECORDS)
_device: str | None = None   # the worker's device, set by PootWorkerPlugin


class TaskStats(NamedTuple):
    """What one task did on its thread: poot programs run, whole-array host reads, seconds."""

    key: object
    programs: int
    host_reads: int
    seconds: float


def task_stats(clear: bool = False) -> list[TaskStats]:
    """The records of the tasks this process ran (the latest 100 000), oldest first. On a cluster:
    `client.run(poot.dask.task_stats)` gathers them per worker."""
    out = list(_records)
    if clear:
        _records.clear()
    return out


def use_device(name: str | None) -> None:
    """Make `name` the device every task of this process computes on (None: leave inputs where
    they are). Called by `PootWorkerPlugin` in each worker process."""
    global _device
    _device = name


def _arrays(value, found: list) -> list:
    """The poot arrays inside a task's value (an array, or containers of them: Dask's reductions
    pass dicts and tuples of partial results)."""
    if isinstance(value, Array):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _arrays(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _arrays(v, found)
    return found


def _placed(value, device: str):
    if isinstance(value, Array):
        return value if value.device == device else value.to(device)
    if isinstance(value, list):
        return [_placed(v, device) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_placed(v, device) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return {k: _placed(v, device) for k, v in value.items()}
    return value


class ChunkTask:
    """The callable of a wrapped task: runs the original task on its dependencies' values, then
    realizes the poot arrays it returned (one program per device) and records what it did."""

    __slots__ = ("task", "deps")

    def __init__(self, task, deps: tuple):
        self.task, self.deps = task, deps

    @property
    def __name__(self) -> str:   # Dask's dashboards and reprs name a task by its function
        from dask.utils import funcname

        return funcname(self.task.func)

    def __dask_tokenize__(self):
        return ("poot.dask.ChunkTask", self.task._get_token())

    def __reduce__(self):
        return (ChunkTask, (self.task, self.deps))

    def __call__(self, *dep_values):
        device = _device
        if device is not None:
            dep_values = [_placed(v, device) for v in dep_values]
        values = dict(zip(self.deps, dep_values))
        t0 = time.perf_counter()
        with counters.measure() as m:
            result = self.task(values)
            pending = [a for a in _arrays(result, []) if not a.is_realized]
            if pending:
                pt.realize(*pending)
        _records.append(TaskStats(self.task.key, m.programs, m.host_reads, time.perf_counter() - t0))
        return result


def wrap_graph(dsk: dict) -> dict:
    """`dsk` (key -> GraphNode) with every task wrapped in a ChunkTask."""
    from dask._task_spec import Task, TaskRef

    out = {}
    for key, node in dsk.items():
        if isinstance(node, Task) and not isinstance(node.func, ChunkTask):
            deps = tuple(node.dependencies)
            # root tasks stay marked as such (the scheduler queues them differently)
            extra = {"_data_producer": True} if getattr(node, "data_producer", False) else {}
            node = Task(key, ChunkTask(node, deps), *[TaskRef(d) for d in deps], **extra)
        out[key] = node
    return out


def realize_result(result):
    """The end of a task of a tuple-form graph (Dask before its task classes): realize the poot
    arrays the task returned, as one program, and record the programs that realize ran."""
    with counters.measure() as m:
        pending = [a for a in _arrays(result, []) if not a.is_realized]
        if pending:
            pt.realize(*pending)
    _records.append(TaskStats(None, m.programs, m.host_reads, 0.0))
    return result


def wrap_legacy_graph(dsk: dict) -> dict:
    """`dsk` in Dask's tuple form with each task `(f, *args)` become `(realize_result, (f, *args))`:
    Dask evaluates the inner task first, then realize_result ends it."""
    from dask.core import istask

    return {k: (realize_result, v) if istask(v) and v[0] is not realize_result else v
            for k, v in dsk.items()}


def optimize(dsk, keys, **kwargs):
    """Dask's array optimization (blockwise and linear fusion, slicing), then task boundaries."""
    from dask.array.optimization import optimize as dask_optimize
    from dask.utils import ensure_dict

    dsk = ensure_dict(dask_optimize(dsk, keys, **kwargs))
    try:
        from dask._task_spec import convert_legacy_graph
    except ImportError:   # Dask before its task classes (dask._task_spec) keeps graphs as tuples
        return wrap_legacy_graph(dsk)
    return wrap_graph(convert_legacy_graph(dsk))


def install() -> bool:
    """Install `optimize` as Dask's array optimization, unless the user configured another one
    (then nothing changes and False is returned)."""
    import dask

    current = dask.config.get("array_optimize", None)
    if current is not None and current is not optimize:
        return False
    dask.config.set(array_optimize=optimize)
    return True
