"""`PootWorkerPlugin`: chooses the poot device of each dask.distributed worker process.

    client.register_plugin(PootWorkerPlugin())                 # POOT_DEVICE of each worker, else "cpu"
    client.register_plugin(PootWorkerPlugin("cuda"))           # one CUDA device per worker process
    client.register_plugin(PootWorkerPlugin("cuda:1"))         # every worker on cuda:1

A bare multi-device kind ("cuda", "rocm") gives the worker of index i the device `kind:i`; the index
is the worker's name when that is an integer (LocalCluster names its workers 0, 1, ...). The chosen
device becomes the process's default (`POOT_DEVICE`), so arrays made inside tasks land on it, and
every task moves its poot inputs there (`poot.dask.tasks.use_device`): chunks arriving from other
processes are unpickled on the CPU (`poot.Array.__reduce__` sends host bytes).

Setting up also imports `poot.dask` in the worker process, so Dask's dispatch tables know poot
arrays before the first task runs. A device is chosen per process: two workers sharing one process
(`processes=False`) must choose the same device.
"""
from __future__ import annotations

import os

from poot.errors import DeviceError

_MULTI = ("cuda", "rocm")   # kinds with several numbered devices per machine
_chosen: dict[str, str] = {}   # "device" -> the device this process chose, "worker" -> who chose it


def device_for(spec: str | None, worker_name, environ=os.environ) -> str:
    """The canonical device name a worker called `worker_name` computes on, for the plugin's `spec`
    (None: the worker's own POOT_DEVICE, else "cpu")."""
    from poot.trace import context

    name = (spec if spec is not None else environ.get("POOT_DEVICE") or "cpu").strip().lower() or "cpu"
    if name in _MULTI:
        try:
            index = int(worker_name)
        except (TypeError, ValueError):
            raise DeviceError(f"PootWorkerPlugin({name!r}): one {name} device per worker needs integer "
                              f"worker names (LocalCluster's 0, 1, ...) to number the devices; worker "
                              f"{worker_name!r} has another name: give the device explicitly, "
                              f"PootWorkerPlugin('{name}:N'), or start the worker with "
                              f"POOT_DEVICE={name}:N and PootWorkerPlugin()") from None
        name = f"{name}:{index}"
    return context.canonical(name)


def _plugin_base():
    from distributed import WorkerPlugin

    return WorkerPlugin


class PootWorkerPlugin(_plugin_base()):
    """A `distributed.WorkerPlugin` choosing each worker's poot device (see the module docstring)."""

    name = "poot-device"

    def __init__(self, device: str | None = None):
        self.device = device

    def setup(self, worker):
        import poot as pt
        import poot.dask  # noqa: F401  (registers poot chunks with Dask in this process)
        from poot.dask import tasks

        name = device_for(self.device, worker.name)
        previous = _chosen.get("device")
        if previous is not None and previous != name:
            raise DeviceError(f"PootWorkerPlugin: worker {worker.name!r} asks for device '{name}', "
                              f"but this process already computes on '{previous}' for worker "
                              f"{_chosen['worker']!r}; workers sharing a process share its device "
                              f"(start the cluster with processes=True)")
        pt.device(name)   # raises DeviceUnavailableError saying why the device cannot be used
        os.environ["POOT_DEVICE"] = name
        tasks.use_device(name)
        _chosen.update(device=name, worker=worker.name)

    def teardown(self, worker):
        from poot.dask import tasks

        if _chosen.get("worker") == worker.name:
            tasks.use_device(None)
            _chosen.clear()


def worker_device() -> str | None:
    """The device PootWorkerPlugin chose in this process (None before it ran): for `client.run`."""
    return _chosen.get("device")
