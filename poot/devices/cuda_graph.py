"""Record/replay for the CUDA device: a recorded launch list becomes one CUDA graph (API: poot/devices/cuda.py).

A recording holds commands: kernel dispatches and device-to-device copies, with the Buffers they use.
Closing it builds a graph with one node per command, each depending on the one before (the stream
order of eager dispatch), and instantiates it once. A replay may replace recorded buffers by others:
the nodes that use a replaced buffer get their pointer arguments rewritten in the executable graph
(cuGraphExecKernelNodeSetParams / cuGraphExecMemcpyNodeSetParams) -- only those, and only when the
address differs from what the node holds now -- then the graph is launched on the device's stream.
"""
from __future__ import annotations

import ctypes
import weakref

from poot.errors import DeviceError
from poot.devices import base
from poot.devices.base import Buffer
from poot.devices.driver_api import EXITING


class Command:
    """One recorded dispatch (`program` set) or copy (`program` None, `grid` = (nbytes, 0, 0))."""

    __slots__ = ("program", "buffers", "grid", "node", "params", "current")

    def __init__(self, program, buffers, grid):
        self.program, self.buffers, self.grid = program, buffers, grid
        self.node = self.params = None
        self.current = tuple(b.handle for b in buffers)     # the addresses the graph node holds now


class Recording(base.Recording):
    """Dispatches and copies captured by `CudaDevice.record()`; a CUDA graph once closed."""

    def __init__(self, device):
        super().__init__(device)
        self.uses: dict[int, tuple[Buffer, list[int]]] = {}     # id(buffer) -> (buffer, command indices)
        # id(recorded buffer) -> the address its nodes hold instead of its own, since a replay rebound it
        self.held: dict[int, int] = {}
        self.graph = self.exec = None
        self.description = None     # the _recent entry of a replay, set by instantiate
        self.checked_frees = -1     # the device's explicit_frees when its buffers were last found live

    def add(self, program, buffers, grid) -> None:
        for b in buffers:
            self.uses.setdefault(id(b), (b, []))[1].append(len(self.commands))
        self.commands.append(Command(program, list(buffers), grid))

    def finish(self) -> None:
        instantiate(self.device, self)

    def __repr__(self) -> str:
        return f"<cuda recording of {len(self.commands)} commands on {self.device.name}>"


def _node_params(drv, cmd: Command, ptrs):
    """The node parameters of `cmd` with buffer addresses `ptrs`, and what must stay alive until the
    driver has copied them (the call that takes them)."""
    if cmd.program is None:
        p = cmd.params or drv.CUDA_MEMCPY3D()
        p.srcMemoryType = p.dstMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.srcDevice, p.dstDevice = ptrs
        p.WidthInBytes, p.Height, p.Depth = cmd.grid[0], 1, 1
        p.srcPitch = p.dstPitch = cmd.grid[0]
        p.srcHeight = p.dstHeight = 1
        return p, None
    p = cmd.params or drv.CUDA_KERNEL_NODE_PARAMS()
    values = (ctypes.c_uint64 * len(ptrs))(*ptrs)
    pointers = (ctypes.c_void_p * len(ptrs))(*(ctypes.addressof(values) + 8 * i for i in range(len(ptrs))))
    prog = cmd.program
    p.func = prog.function
    p.gridDimX, p.gridDimY, p.gridDimZ = cmd.grid
    p.blockDimX, p.blockDimY, p.blockDimZ = prog.workgroup
    p.sharedMemBytes = prog.dynamic_shared
    p.kernelParams = ctypes.addressof(pointers)
    p.extra = 0
    return p, (values, pointers)


def instantiate(dev, rec: Recording) -> None:
    drv = dev._drv
    dev._current()
    graph = dev._ok(drv.cuGraphCreate(0), "creating a CUDA graph")
    try:
        prev: list = []
        for cmd in rec.commands:
            cmd.params, keep = _node_params(drv, cmd, cmd.current)
            if cmd.program is None:
                node = drv.cuGraphAddMemcpyNode(graph, prev, len(prev), cmd.params, dev._ctx)
            else:
                node = drv.cuGraphAddKernelNode(graph, prev, len(prev), cmd.params)
            cmd.node = dev._ok(node, "adding a node to a CUDA graph")
            del keep
            prev = [cmd.node]
        exec_ = dev._ok(drv.cuGraphInstantiate(graph, 0), "instantiating a CUDA graph")
    except BaseException:
        _destroy(drv, graph, None)
        raise
    rec.graph, rec.exec = graph, exec_
    names = [c.program.name for c in rec.commands if c.program is not None]
    rec.description = (f"CUDA graph of {len(names)} kernels ({', '.join(names[:6])}"
                       f"{', ...' if len(names) > 6 else ''})", None, None)   # what replays append to _recent
    weakref.finalize(rec, _destroy, drv, graph, exec_).atexit = False


def replay(dev, rec: Recording, rebind=None) -> None:
    if not isinstance(rec, Recording) or rec.device is not dev:
        raise DeviceError(f"{dev.name}: {rec!r} is not a recording of this device")
    if not rec.closed:
        raise DeviceError(f"{dev.name}: replay of a recording that is still open")
    dev._no_recording("a replay")
    if not rec.commands:
        return
    if rec.exec is None:
        raise DeviceError(f"{dev.name}: this recording was closed by an exception and has no graph")
    dev._current()
    rebind = rebind or {}
    held = rec.held
    changed = []            # recorded buffers whose nodes take another address this time
    for old, new in rebind.items():
        h = new.handle
        if h is not None and held.get(id(old), old.handle) == h and id(old) in rec.uses:
            continue                            # its nodes hold that address already
        use = rec.uses.get(id(old))
        if use is None or use[0] is not old:
            raise DeviceError(f"{dev.name}: {old!r} is not a buffer of this recording")
        dev._check(new)
        if max(new.nbytes, 4) < old.nbytes:     # stand-ins are at least 4 bytes (replay.py)
            raise DeviceError(f"{dev.name}: a replay replaces a buffer of {old.nbytes:,} bytes by one of "
                              f"{new.nbytes:,}; the recorded kernels need at least the recorded size")
        changed.append(old)
    if held:
        for key in [k for k in held if rec.uses[k][0] not in rebind]:    # rebound before, its own again now
            changed.append(rec.uses[key][0])
    if rec.checked_frees != dev.explicit_frees:     # a buffer is freed only by `free`: none since, none here
        freed = False
        for b, _ in rec.uses.values():
            if b.handle is None:
                if b not in rebind:
                    raise DeviceError(f"{dev.name}: the recording uses {b!r}, which was freed")
                freed = True
        if not freed:
            rec.checked_frees = dev.explicit_frees
    drv = dev._drv
    touched = sorted({i for b in changed for i in rec.uses[id(b)][1]}) if changed else ()
    for i in touched:
        cmd = rec.commands[i]
        ptrs = tuple((rebind.get(b) or b).handle for b in cmd.buffers)
        if ptrs != cmd.current:
            params, keep = _node_params(drv, cmd, ptrs)
            if cmd.program is None:
                r = drv.cuGraphExecMemcpyNodeSetParams(rec.exec, cmd.node, params, dev._ctx)
            else:
                r = drv.cuGraphExecKernelNodeSetParams(rec.exec, cmd.node, params)
            dev._ok(r, "updating a node of a CUDA graph")
            del keep
            cmd.current = ptrs
    for b in changed:
        new = rebind.get(b)
        if new is not None and new.handle != b.handle:
            held[id(b)] = new.handle
        else:
            held.pop(id(b), None)
    dev._ok(drv.cuGraphLaunch(rec.exec, dev.stream), "launching a CUDA graph")
    dev._recent.append(rec.description)


def _destroy(drv, graph, exec_) -> None:
    if EXITING.is_set():    # the process is ending: the driver frees everything
        return
    try:                    # from the garbage collector: never raise
        if exec_ is not None:
            drv.cuGraphExecDestroy(exec_)
        drv.cuGraphDestroy(graph)
    except Exception:
        pass
