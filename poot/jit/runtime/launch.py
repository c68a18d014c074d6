"""Launching a KIR kernel on a device: cache lookup (compiling on first use), meta packing (abi.py),
dispatch, traps.

`launch(device, kernel, buffers, scalars=(), groups=1)` runs `kernel` over a logical grid of `groups`
workgroups with `buffers` (device Buffers, one per buffer param, in order) and `scalars` (a dict by
name or a sequence in param order). A trap raises poot.KernelTrap(kernel, code, where, what) at the
next synchronize: `check_traps(device)` -- which on the CPU runs right after the dispatch.

POOT_DEBUG >= 1 prints each launch with the kernel's name, grid and wall time.
"""
from __future__ import annotations

import ctypes
import itertools
import re
import threading
import time
import weakref

import numpy as np

from poot import devices
from poot.devices import Buffer
from poot.errors import LaunchError, LoweringError, kernel_trap
from poot.jit.llvm.abi import TRAP_CODE_WORD, TRAP_LAUNCH_WORD, TRAP_WORDS, meta_layout, meta_words, normalize_grid
from poot.jit.llvm.compile import compile_kernel, debug_print
from poot.jit.kir.model import TRAP_MESSAGES, Kernel, wgmma_operands
from poot.jit.llvm.targets import BinaryFormat, target_of
from poot import env

_launch_ids = itertools.count(1)
_lock = threading.Lock()
_programs: dict = {}          # (id(kernel), id(device), arch) -> (weakref(kernel), program, layout, itemsizes)
_trap_buffers: dict = {}      # id(device) -> trap Buffer
_trap_words: dict = {}        # id(device) -> uint32 view of a host trap buffer
_recent: dict = {}            # launch id -> kernel, for naming a trap seen at a later synchronize
unchecked: set = set()        # ids of the GPU devices launched on since their trap word was last read
_RECENT_MAX = 4096


def compiled(kernel: Kernel, target: str, arch=None):
    """`compile_kernel`, a LoweringError naming the kernel as its author did: a target's own message
    names the entry symbol (`poot_<name>_<key>`, compile.entry_symbol), which the author never wrote."""
    try:
        return compile_kernel(kernel, target, arch=arch)
    except LoweringError as e:
        text = _ENTRY_SYMBOL.sub(f"'{kernel.name}'", str(e))
        if text == str(e):
            raise
        raise type(e)(text) from None


_ENTRY_SYMBOL = re.compile(r"'poot_\w+_[0-9a-f]{16}'")


def build_arch(kernel: Kernel, caps) -> str | None:
    """The arch to build `kernel` for on a device with `caps`: the device's (None: the target's default),
    except that a kernel using Hopper's warpgroup products (Wgmma) builds for sm_90a on an sm_90 GPU, since
    PTX has those instructions only in that arch-specific form (no other arch runs it)."""
    if target_of(caps).binary_format is BinaryFormat.PTX_TEXT \
            and str(caps.compile_arch or caps.extra.get("arch")) == "sm_90" and wgmma_operands(kernel.body):
        return "sm_90a"
    return caps.compile_arch


def _program(device, kernel: Kernel, arch):
    key = (id(kernel), id(device), arch)
    hit = _programs.get(key)
    if hit is not None and hit[0]() is kernel:
        return hit
    art = compiled(kernel, device.caps.target, arch or build_arch(kernel, device.caps))
    prog = device.load(art)
    ref = weakref.ref(kernel, lambda _, key=key: _programs.pop(key, None))
    entry = (ref, prog, meta_layout(kernel), tuple(p.dtype.itemsize for p in kernel.buffers))
    _programs[key] = entry
    return entry


def trap_buffer(device):
    buf = _trap_buffers.get(id(device))
    if buf is None:
        buf = device.allocate_host_read(4 * TRAP_WORDS)
        device.write(buf, np.zeros(TRAP_WORDS, np.uint32))
        _trap_buffers[id(device)] = buf
        if device.shares_host_memory:        # host memory: the trap word is checked in place
            _trap_words[id(device)] = buf.handle.view(np.uint32)
    return buf


def _meta_buffer(device, words: list):
    if device.shares_host_memory:            # host memory: a ctypes array of the words is the buffer
        return Buffer(device, 4 * len(words), (ctypes.c_uint32 * len(words))(*words))
    words = np.array(words, dtype=np.uint32)
    buf = device.allocate(words.nbytes)
    device.write(buf, words)
    return buf


def launch(device, kernel: Kernel, buffers, scalars=(), groups=1, *, arch=None) -> None:
    """Run `kernel` on `device` (a Device or a name) over `groups` workgroups (see module doc)."""
    if isinstance(device, str):
        device = devices.get(device)
    ref, prog, layout, itemsizes = _program(device, kernel, arch)
    if len(buffers) != len(itemsizes):
        raise LaunchError(f"kernel '{kernel.name}' takes {len(itemsizes)} buffers, got {len(buffers)}")
    lengths = [b.nbytes // s for b, s in zip(buffers, itemsizes)]
    grid = (groups, 1, 1) if type(groups) is int and groups >= 0 else normalize_grid(groups)
    launch_id = next(_launch_ids) & 0xFFFFFFFF
    words = meta_words(kernel, lengths, scalars, grid, launch_id, layout)
    if grid[0] * grid[1] * grid[2] == 0:
        return
    cpu = target_of(device.caps).is_host   # launches run on this thread: the trap word is set now
    trap = trap_buffer(device)
    if not cpu:                          # traps surface at a later synchronize: remember who launched
        with _lock:
            unchecked.add(id(device))
            _recent[launch_id] = kernel
            if len(_recent) > _RECENT_MAX:
                for k in list(_recent)[: _RECENT_MAX // 2]:
                    del _recent[k]
    level = env.debug_level()
    t0 = time.perf_counter() if level >= 1 else 0.0
    device.dispatch(prog, [*buffers, _meta_buffer(device, words), trap], grid)
    if cpu and _trap_words[id(device)][0]:
        _recent[launch_id] = kernel
        check_traps(device)
    if level >= 1:
        device.synchronize()
        debug_print(1, f"poot launch {launch_id}: {kernel.name} grid={grid} workgroup={tuple(kernel.workgroup)} "
                       f"{1e6 * (time.perf_counter() - t0):.1f} us on {device.name}")


def synchronize(device) -> None:
    """Wait for `device`'s launches to finish, then raise KernelTrap if one of them trapped (a
    @kernel launch or a realize's program: poot/jit/runtime/traps.py)."""
    if isinstance(device, str):
        device = devices.get(device)
    device.synchronize()
    from poot.jit.runtime import traps

    traps.check(device)
    check_traps(device)


def check_host_read(device) -> None:
    """Before a host read of `device` returns (`buffer_to_numpy`): raise the KernelTrap of a launch there
    since the last check, as a synchronize would (docs/kernels.md, Traps). Nothing to read where no launch
    ran since (the CPU checks each launch as it returns)."""
    if id(device) in unchecked:
        check_traps(device)


def start_host_read_check(device):
    """`check_host_read` started behind the work queued so far, without waiting for it (a host read
    started by `copy_to_host_async`); `finish_host_read_check` of the result raises. None: nothing to check."""
    buf = _trap_buffers.get(id(device))
    if buf is None or id(device) not in unchecked:
        return None
    unchecked.discard(id(device))
    return device, buf, device.read_async(buf)


def finish_host_read_check(started) -> None:
    if started is not None:
        device, buf, read = started
        _raise_trapped(device, buf, read.wait())


def check_traps(device) -> None:
    """Raise KernelTrap if a launch on `device` trapped since the last check (and clear the word)."""
    buf = _trap_buffers.get(id(device))
    if buf is None:
        return
    unchecked.discard(id(device))        # before the read: a launch queued meanwhile is noted again
    _raise_trapped(device, buf, device.read(buf))


def _raise_trapped(device, buf, raw) -> None:
    """Raise the KernelTrap the trap words `raw` (trap buffer `buf`'s bytes) hold, clearing them; nothing
    if no launch trapped."""
    words = np.frombuffer(raw[: 4 * TRAP_WORDS].tobytes() if not raw.flags.c_contiguous else raw[: 4 * TRAP_WORDS],
                          dtype=np.uint32)
    code = int(words[TRAP_CODE_WORD])
    if code == 0:
        return
    launch_id = int(words[TRAP_LAUNCH_WORD])
    device.write(buf, np.zeros(TRAP_WORDS, np.uint32))
    kernel = _recent.get(launch_id)
    name = kernel.name if kernel is not None else f"<launch {launch_id}>"
    site = next((t for t in kernel.traps if t.code == code), None) if kernel is not None else None
    what = site.what if site else TRAP_MESSAGES.get(code)
    raise kernel_trap(name, code, site.where if site and site.where else None, what)


__all__ = ["launch", "synchronize", "check_traps", "check_host_read", "start_host_read_check", "finish_host_read_check",
           "compiled", "trap_buffer"]
