"""poot arrays as Dask chunks (docs/dask.md).

    import dask.array as da
    import poot as pt
    import poot.dask                       # registers poot.Array with Dask (on import)

    x = da.from_array(pt.asarray(data), chunks=(1000, 1000))    # chunks and _meta are poot arrays
    y = (da.exp(x) * 2 + 1).sum(axis=0)                         # each chunk task: one poot program
    y.compute()                                                 # a poot array

Importing `poot.dask` registers poot.Array as a Dask chunk type, with Dask's dispatch tables
(`poot.dask.dispatch`), and installs the task-boundary pass as Dask's array optimization
(`poot.dask.tasks`): each task realizes the poot arrays it returns as one fused program. `register()`
does the same and is safe to call again. `import poot` itself never imports Dask.

It also makes "poot" a Dask array backend (`poot.dask.backend`): `x.to_backend("poot")`, and
`dask.config.set({"array.backend": "poot"})` for `da.ones`, `da.arange`, `da.random`... with poot chunks.

On dask.distributed, `PootWorkerPlugin` (`poot.dask.workers`) chooses each worker's device;
`task_stats()` tells what each task ran (programs, host reads). `meta(ndim, dtype)` is the 0-size
poot array to pass as `meta=` to `da.map_blocks` / `da.from_delayed` so Dask knows the chunk type.
"""
from __future__ import annotations

try:
    import dask.array  # noqa: F401
except ImportError as e:  # dask[array] is the `dask` extra
    from poot.errors import NotBuiltError

    raise NotBuiltError("poot.dask needs Dask's array package: pip install 'poot[dask]' "
                        f"(dask[array] and distributed); importing it failed: {e}") from None

import poot as pt
from poot.dask.dispatch import register_dispatch
from poot.dask.tasks import ChunkTask, TaskStats, task_stats, use_device

__all__ = ["register", "meta", "task_stats", "TaskStats", "ChunkTask", "use_device",
           "PootWorkerPlugin", "worker_device"]


def register() -> bool:
    """Register poot chunks with Dask (idempotent; done on import). Returns whether the task-boundary
    pass is Dask's array optimization: False when the user configured another `array_optimize`, in
    which case poot chunk tasks return pending arrays (safe on the synchronous scheduler only)."""
    from poot.dask import tasks
    from poot.dask.backend import register_backend

    register_dispatch()
    register_backend()
    return tasks.install()


def meta(ndim: int = 1, dtype=pt.float32, device=None):
    """The 0-size poot array of `ndim` dimensions that tells Dask its chunks are poot arrays
    (`da.map_blocks(f, ..., meta=poot.dask.meta(2))`, `da.from_delayed(v, shape, meta=...)`)."""
    return pt.empty((0,) * ndim, dtype=dtype, device=device)


def __getattr__(name):
    # the worker plugin subclasses distributed.WorkerPlugin: imported only when asked for, so
    # poot.dask works with dask.array alone
    if name in ("PootWorkerPlugin", "worker_device"):
        from poot.dask import workers

        return getattr(workers, name)
    raise AttributeError(f"module 'poot.dask' has no attribute {name!r}")


register()
