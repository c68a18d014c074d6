"""Trap checks of asynchronous programs: a GPU realize launches and returns, its traps surface later.

Every Program of one device shares one trap buffer (abi.TRAP_WORDS words: the first trapping launch
writes its code and launch id; later traps cannot overwrite them). Launch ids are unique in the
process, so the id in the trap word names one recorded launch of one program.

On a GPU, `Program.run` never waits: it calls `launched(device, program, wheres)`, which adds the
program to the device's pending set (with the source lines of the graph it ran for, when they differ
from the lines it was compiled with). The next host read of the device (`buffer_to_numpy`: `.numpy()`,
`float(x)`, printing; a host step or a control predicate of a later program) or an explicit
`synchronize(device)` calls `check(device)`: it reads the trap word (which waits for the device),
clears the pending set, and raises the trap of the earliest trapping launch since the last check,
naming its kernel and, for an index trap, the user's line. Reading the trap word once per host read
instead of once per realize is what lets launches of successive realizes overlap.

On the CPU launches run on the calling thread: the program checks the trap word in place at the end
of its run (a load of host memory), and nothing is ever pending.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from poot.errors import KernelIndexError, kernel_trap
from poot.jit.llvm import abi
from poot.jit.kir.model import TRAP_MESSAGES

_launch_ids = itertools.count(1)
_lock = threading.Lock()
_MAX_WHERES = 8                  # distinct line sets kept per pending program


def next_launch_id() -> int:
    """A launch id no other recorded launch of this process has (meta word, trap word)."""
    return next(_launch_ids) & 0xFFFFFFFF or next(_launch_ids)


# device -> {id(program): (program, [wheres, ...])}; a device absent or empty has nothing pending
_pending: dict = {}
# device -> the trap buffer every Program of the device shares (created on its first program)
_trap_buffers: dict = {}


def trap_buffer(device):
    """The trap buffer of `device`'s programs, zeroed when first made."""
    buf = _trap_buffers.get(device)
    if buf is None:
        with _lock:
            buf = _trap_buffers.get(device)
            if buf is None:
                buf = device.allocate_host_read(abi.TRAP_WORDS * 4)
                device.write(buf, np.zeros(abi.TRAP_WORDS, dtype=np.uint32))
                _trap_buffers[device] = buf
    return buf


def launched(device, program, wheres=None) -> None:
    """Note that `program` was launched on `device` since the last check. `wheres`: the source lines
    of its index equations in the graph this run computes (None: those it was compiled from)."""
    progs = _pending.get(device)        # a loop's program is noted already: nothing to add, no lock
    if progs is not None:
        hit = progs.get(id(program))
        if hit is not None and hit[0] is program and wheres in hit[1]:
            # a check that takes this set meanwhile reads the trap word behind this program's launches
            # (queued before this call), so it sees their traps as if the note had been added again
            return
    with _lock:
        progs = _pending.get(device)
        if progs is None:
            progs = _pending[device] = {}
        hit = progs.get(id(program))
        if hit is None:
            progs[id(program)] = (program, [wheres])
        elif wheres not in hit[1] and len(hit[1]) < _MAX_WHERES:
            hit[1].append(wheres)


def pending(device) -> bool:
    return bool(_pending.get(device))


def check(device) -> None:
    """Raise the trap of the earliest trapping launch on `device` since the last check, if any (this
    waits for the device's work); do nothing when no program ran there since."""
    taken = take(device)
    if taken is not None:
        raise_trapped(device, taken, device.read(taken[0]))


def take(device):
    """The check of what is pending on `device`, for a caller that reads the trap word itself
    (alongside other bytes, in one round trip: `Device.read_with`): (trap buffer, the pending
    programs), the pending set cleared; None when nothing is pending. `raise_trapped` finishes it."""
    if not _pending:
        return None
    with _lock:
        progs = _pending.pop(device, None)
    if not progs:
        return None
    return next(iter(progs.values()))[0].trap_buffer, progs


def raise_trapped(device, taken, data) -> None:
    """Finish the check `take` began, `data` being the trap buffer's bytes read after the work."""
    _raise_trapped(device, taken[0], data, taken[1])


def start_check(device):
    """The check of what is pending on `device`, started behind the work queued so far without waiting
    for it (`Device.read_async` of the trap word); `finish_check` of the result raises what `check`
    would have raised here. None when nothing is pending."""
    taken = take(device)
    if taken is None:
        return None
    trap, progs = taken
    return device, trap, device.read_async(trap), progs


def finish_check(started) -> None:
    if started is not None:
        device, trap, read, progs = started
        _raise_trapped(device, trap, read.wait(), progs)


def _raise_trapped(device, trap, data, progs) -> None:
    """Raise the trap the trap word `data` holds (clearing it on the device); nothing if none."""
    words = np.asarray(data)[: abi.TRAP_WORDS * 4].view(np.uint32)
    code = int(words[abi.TRAP_CODE_WORD])
    if code == 0:
        return
    launch_id = int(words[abi.TRAP_LAUNCH_WORD])
    device.write(trap, np.zeros(abi.TRAP_WORDS, dtype=np.uint32))
    for prog, wheres in progs.values():
        if launch_id in prog._by_launch_id:
            raise relocate(prog.trap_error(code, launch_id), prog, wheres)
    raise kernel_trap(f"launch {launch_id}", code, None, TRAP_MESSAGES.get(code))


def relocate(err, program, wheres_list):
    """`err` naming the lines of the graphs the program ran for (see `Program.index_wheres`)."""
    if not isinstance(err, KernelIndexError) or not err.where:
        return err
    old = program.index_wheres
    lines = set()
    for wheres in wheres_list:
        new = old if wheres is None else wheres
        if len(new) != len(old):
            continue
        lines.update(n for o, n in zip(old, new) if o == err.where and n)
    if not lines or lines == {err.where}:
        err.located = True
        return err
    out = KernelIndexError(err.kernel, err.code, " or ".join(sorted(lines)), err.what)
    out.located = True
    return out


def drop(device) -> None:
    """Forget what is pending on `device` (its trap word is cleared by whoever calls this)."""
    with _lock:
        _pending.pop(device, None)


__all__ = ["trap_buffer", "next_launch_id", "launched", "pending", "check", "relocate", "drop"]
