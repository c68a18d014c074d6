"""Running a graph on a device: the one entry the tracer calls to realize arrays.

`execute(graph, inputs, device)` takes device Buffers for the graph's inputs and returns Buffers for its
outputs. With device "oracle" the graph runs through the NumPy oracle (reference semantics, for
debugging); otherwise it is planned, compiled and launched (poot.fuse + kernelgen + the device).
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np

from poot import devices
from poot.devices import Buffer, Device
from poot.errors import InternalError, KernelIndexError, PootError
from poot.graph import Graph, evaluate
from poot.jit.runtime import launch as launches
from poot.jit.runtime import traps
from poot.jit.llvm import abi
from poot import env
from poot.jit.llvm.targets import target_of


def buffer_to_numpy(buf: Buffer, aval) -> np.ndarray:
    """A read-only NumPy view (or copy, off the CPU) of a buffer holding an array of `aval`. A host
    read: the traps of the programs launched on the device since the last read are raised before it
    returns, which is why the runtime, not the device, owns this read (`Device.to_numpy` knows no
    traps). The bytes and the trap word are read together (`Device.read_with`): one wait for the
    device's work, and one round trip where the device copies both in one submission or maps the
    trap word into host memory."""
    device = buf.device
    if launches.unchecked:               # a @kernel launch's trap surfaces here too (launch.py)
        launches.check_host_read(device)
    taken = traps.take(device) if traps._pending else None
    if taken is None:
        return device.to_numpy(buf, aval.shape, aval.dtype.np)
    data, words = device.read_with(buf, taken[0])
    traps.raise_trapped(device, taken, words)
    return _as_array(data, aval)


def _as_array(raw: np.ndarray, aval) -> np.ndarray:
    """The array of `aval` at the start of the bytes `raw` read from a buffer."""
    dtype = aval.dtype.np
    return raw[:dtype.itemsize * aval.size].view(dtype).reshape(aval.shape)


class PendingHostRead:
    """A host read started by `start_host_read`: `result()` waits for the copy alone (and for the trap
    words read beside it), not for the work queued on the device after it started."""
    __slots__ = ("_read", "_traps", "_launches", "_aval")

    def __init__(self, read, started_traps, aval, started_launches=None):
        self._read, self._traps, self._aval = read, started_traps, aval
        self._launches = started_launches

    def result(self) -> np.ndarray:
        launches.finish_host_read_check(self._launches)
        traps.finish_check(self._traps)
        return _as_array(self._read.wait(), self._aval)


def start_host_read(buf: Buffer, aval) -> PendingHostRead:
    """`buffer_to_numpy`, started now and finished by `result()`: the copy (and the trap checks of the
    programs and @kernel launches so far) is queued behind the device's work without waiting for it."""
    device = buf.device
    started = launches.start_host_read_check(device) if launches.unchecked else None
    return PendingHostRead(device.read_async(buf), traps.start_check(device), aval, started)


def numpy_to_buffer(array: np.ndarray, device: Device) -> Buffer:
    """A new device buffer holding the bytes of `array` (C order): `device.from_numpy`, kept for the
    tracer's and the kernel API's uploads."""
    return device.from_numpy(array)


def execute_oracle(graph: Graph, inputs: list[Buffer], device: Device) -> list[Buffer]:
    arrays = [buffer_to_numpy(b, v.aval) for b, v in zip(inputs, graph.inputs)]
    outs = evaluate(graph, arrays)
    return [device.from_numpy(o) for o in outs]


_PROGRAMS: dict = {}
MAX_PROGRAMS = 1024          # compiled programs kept per process (least recently used dropped)
_uses = itertools.count()    # a program's `last_use` tick: when it last ran (see _cached)


def compiled_program(graph: Graph, device: Device):
    """The Program for `graph` on `device`, planned and compiled on first use, then cached by the
    graph's structure (shapes, dtypes, ops, parameters)."""
    key = (device.name, graph.key())
    prog = _cached(key)
    if prog is None:
        from poot.fuse.plan import plan_fusion
        from poot.jit.runtime.program import Program

        try:
            prog = Program(plan_fusion(graph, device.caps.max_buffers - abi.ABI_BUFFERS), device)
        except PootError:
            raise
        except Exception as e:   # an error of poot's own planner or code generator, never the user's
            raise InternalError(f"compiling a program for device '{device.name}'", e, str(graph)) from e
        prog.source_wheres = tuple(e.where for e in graph.eqns)
        prog.index_positions = _index_positions(graph)
        prog.index_wheres = _wheres(graph, prog)
        prog.last_use = next(_uses)
        _PROGRAMS[key] = prog
        if len(_PROGRAMS) > MAX_PROGRAMS:
            # over a snapshot (one C-level copy): threads realizing at once (Dask's threaded scheduler)
            # insert and evict meanwhile, and iterating the live dict would fail with its size changing
            oldest = min(list(_PROGRAMS.items()), key=lambda kv: kv[1].last_use)[0]
            _PROGRAMS.pop(oldest, None)
    return prog


def _cached(key: tuple):
    """The program cached under `key`, marked as just used. A tick on the program, not an
    OrderedDict's move_to_end: that hashes the structural key (a tuple per equation) a second time
    on every realize; the least recently used program is looked for only when one is dropped."""
    prog = _PROGRAMS.get(key)
    if prog is not None:
        prog.last_use = next(_uses)
    return prog


def execute(graph: Graph, inputs: list[Buffer], device: Device | str) -> list[Buffer]:
    if isinstance(device, str):
        if device == "oracle":
            return execute_oracle(graph, inputs, devices.get("cpu"))
        device = devices.get(device)
    if not graph.eqns:   # nothing to compute: outputs are inputs
        pos = {v.id: i for i, v in enumerate(graph.inputs)}
        return [inputs[pos[v.id]] for v in graph.outputs]
    prog = compiled_program(graph, device)
    try:
        return run_program(prog, inputs, _wheres(graph, prog, prog.index_wheres))
    except KernelIndexError as e:
        raise located(e, prog, graph) from None


def execute_keyed(key: tuple, build, inputs: list[Buffer], device: Device | str) -> list[Buffer]:
    """`execute(build(), inputs, device)` for a graph of structural key `key` (Graph.key()): a program
    cached under it runs without the graph being built (the tracer's realize of a repeated chain)."""
    if not isinstance(device, str):
        prog = _cached((device.name, key))
        if prog is not None:
            wheres = None
            if prog.index_positions and not prog.host_traps:   # its lines name a trap raised later
                wheres = _wheres(build(), prog, prog.index_wheres)
            try:
                return run_program(prog, inputs, wheres)
            except KernelIndexError as e:
                raise located(e, prog, build()) from None
    return execute(build(), inputs, device)


def located(err: KernelIndexError, prog, graph: Graph) -> KernelIndexError:
    """`err` naming `graph`'s line: a kernel's trap site holds the line of the graph its program was
    compiled from, and the cached program also runs graphs of the same structure recorded elsewhere
    (equal keys list their equations in the same order)."""
    old = getattr(prog, "source_wheres", None)
    if getattr(err, "located", False) or not err.where or old is None or len(old) != len(graph.eqns):
        return err
    new = sorted({e.where for w, e in zip(old, graph.eqns)
                  if w == err.where and e.op in ("take", "scatter") and e.where})
    if not new or new == [err.where]:
        return err
    return KernelIndexError(err.kernel, err.code, " or ".join(new), err.what)


def _index_positions(graph: Graph) -> tuple[int, ...]:
    """The equations whose kernels check indices held in arrays (their traps name a line)."""
    return tuple(k for k, e in enumerate(graph.eqns) if e.op in ("take", "scatter"))


def _wheres(graph: Graph, prog, same=None):
    """The lines of `prog`'s index equations in `graph`; None when they are `same`."""
    eqns = graph.eqns
    wheres = tuple(eqns[k].where for k in prog.index_positions) if len(eqns) == len(prog.source_wheres) else ()
    return None if wheres == same else wheres


# A cached program realized a second time replays a recording of its launches from then on (see
# run_program). The recording holds its intermediates for the program's life (they share memory as
# their lifetimes allow), and full-size stand-ins for its inputs and results on a device that sizes its
# bindings at record time: a CPU program's replay holds at most REPLAY_MAX_BYTES of that (the
# MAX_PROGRAMS cached programs at most 256 MiB), a GPU's replays GPU_REPLAY_BUDGET in all per device.
REPLAY_MAX_BYTES = 1 << 18
GPU_REPLAY_BUDGET = 1 << 28
_gpu_replay_bytes: dict = {}     # device name -> bytes the eager replays of its cached programs hold


def run_program(prog, inputs: list[Buffer], wheres=None) -> list[Buffer]:
    """Run a cached Program. Its second call records its launches (poot/jit/runtime/replay.py), and
    from the third on that recording replays instead of the steps being walked: on the CPU pointer
    slots rewritten and the calls made (half the per-realize cost of a tiny graph), on CUDA one graph
    launch, on wgpu and Vulkan one recorded command buffer (host time of an eager decode step: 48 to 33
    us on an H100's host; a program of one launch records only there, Device.replays_one_launch: 56 to
    38 us a small realize on lavapipe's Vulkan). POOT_DEBUG >= 1 (which times each launch) and
    POOT_EAGER_REPLAY=0 walk the steps."""
    if env.eager_replay():
        replay = prog.eager_replay
        if replay is None:
            if prog.eager_calls < 2:
                prog.eager_calls += 1
                if prog.eager_calls == 2:    # a graph realized once never pays for a recording
                    prog.eager_replay = replay_for(prog)
        elif env.debug_level() < 1:
            out = replay.run(inputs, wheres)
            if out is not None:              # None: another thread holds the recording
                return out
    return prog.run(inputs, wheres=wheres)


def _held_bytes(prog) -> int:
    """The most memory a recording of `prog` holds at once: its intermediates, from the step that
    makes them to the step after their last use, plus its stand-ins for the inputs and results where
    the device records full-size ones."""
    full = not prog.device.records_addresses
    outs = set(prog.output_ids)
    live = peak = sum(prog.nbytes[v] for v in prog.input_ids) if full else 0
    for allocs, _, frees in prog.steps:
        live += sum(prog.nbytes[v] for v in allocs if full or v not in outs)
        peak = max(peak, live)
        live -= sum(prog.nbytes[v] for v in frees if v not in prog.input_ids and (full or v not in outs))
    return peak


def replay_for(prog, donate: frozenset = frozenset()):
    """A Replay of `prog` (donating the graph inputs at `donate`), or None where the device cannot
    record or the recording would hold too much memory (REPLAY_MAX_BYTES on the CPU, the device's
    GPU_REPLAY_BUDGET elsewhere)."""
    dev = prog.device
    if not hasattr(dev, "record"):
        return None
    held = _held_bytes(prog)
    host = target_of(dev.caps).is_host
    if host and held > REPLAY_MAX_BYTES:
        return None
    if not host:
        total = _gpu_replay_bytes.get(dev.name, 0) + held
        if total > GPU_REPLAY_BUDGET or (len(prog.launches) < 2 and not dev.replays_one_launch):
            return None
    from poot.jit.runtime.replay import Replay

    replay = Replay.build(prog, donate)
    if replay is not None and not host:
        _gpu_replay_bytes[dev.name] = total
        weakref.finalize(replay, _release_replay_bytes, dev.name, held).atexit = False
    return replay


def _release_replay_bytes(device: str, nbytes: int) -> None:
    _gpu_replay_bytes[device] = _gpu_replay_bytes.get(device, 0) - nbytes
