"""A recorded CPU segment as one native call: the kernel calls of a recording, compiled into one LLVM
function that calls each kernel entry (or the native pool, for a launch worth splitting) in order,
and the BLAS gemm of each matmul the recording holds (poot/devices/cpu_blas.py).

Why: a replay used to make one ctypes call per dispatch, and each cost ~1-2 us of Python around it
(the call itself, the split decision, the timing); a program of a few dozen small launches spent more
there than in its kernels. The chain makes the whole segment one ctypes call, with the GIL released.

What it relies on: every address it bakes in is stable for the recording's life. The pointer arrays
(`ptrs`) are the recording's own ctypes arrays, which a replay rewrites in place before the call; the
meta arrays, trap words and kernel entries are kept alive by the recording and the device's engine.

Each launch is decided once, when the chain is built: inline (its measured time per workgroup says the
launch takes less than `cpu.INLINE_NS`) or split over the native pool with the chunk size
`run_split` would use. So the chain is built only after the recording has run through the Python path
`MEASURED_RUNS` times (every launch then has a measurement), and only where the native pool exists.
"""
from __future__ import annotations

import ctypes
import itertools
import logging

from poot import env

log = logging.getLogger("poot.devices.cpu")

MEASURED_RUNS = 2        # runs through the Python path before a recording is chained
_names = itertools.count()
_CHAIN = ctypes.CFUNCTYPE(None)


enabled = env.switch_reader("POOT_CPU_CHAIN", True)
enabled.__doc__ = """POOT_CPU_CHAIN=0 keeps replays on the per-launch Python path (to compare, or to bisect)."""


def _address(obj) -> int:
    return obj if isinstance(obj, int) else ctypes.addressof(obj)


def _splits(call, pool_run: int, inline_ns: int, threads: int) -> bool:
    """Whether the chain runs `call` split over the native pool: a kernel launch long enough to
    share (else inline); never a BLAS matmul, which threads itself."""
    if getattr(call, "gemm", None) is not None:
        return False
    est = call.program.group_ns
    return bool(pool_run) and threads > 1 and call.total > 1 and est is not None \
        and est * call.total >= inline_ns


def chain_ir(name: str, calls: list, pool_run: int, inline_ns: int, threads: int, per_thread: int) -> str:
    """LLVM IR of `void name()`: each call of `calls` (cpu_replay._Call: a kernel launch, inline or
    split; cpu_replay._GemmCall: a BLAS matmul) in order."""
    body = []
    for j, c in enumerate(calls):
        gemm = getattr(c, "gemm", None)
        if gemm is not None:
            body += gemm.chain_ir(_address(c.ptrs), f"g{j}")
            continue
        fn, ptrs, meta, trap = (c.program.address, _address(c.ptrs), _address(c.meta), c.trap)
        args = (f"ptr inttoptr (i64 {ptrs} to ptr), ptr inttoptr (i64 {meta} to ptr), "
                f"ptr inttoptr (i64 {trap} to ptr)")
        if _splits(c, pool_run, inline_ns, threads):
            chunk = max(1, c.total // (threads * per_thread))
            body.append(f"  call void inttoptr (i64 {pool_run} to ptr)(ptr inttoptr (i64 {fn} to ptr), {args}, "
                        f"i64 {c.total}, i64 {chunk}, i64 0)")
        else:
            body.append(f"  call void inttoptr (i64 {fn} to ptr)({args}, i64 0, i64 {c.total})")
    return f"define void @{name}() {{\n" + "\n".join(body) + "\n  ret void\n}\n"


class Chain:
    """The compiled chain of one recording; `run()` is False when the pool is busy with another
    thread's launch (the caller then takes the Python path, which runs inline). `pool` is the native
    pool where the chain splits a launch over it, else None: a chain of inline launches alone runs
    without taking the pool's lock (a small program's replay then pays for no lock round trip).
    `inline` is the native function where `pool` is None (a caller on a hot path may call it, and
    count it in `calls`, itself: replay.CpuReplay.launch), else None."""

    def __init__(self, fn, pool):
        self._fn, self._pool = fn, pool
        self.inline = fn if pool is None else None
        self.calls = 0          # native calls made (tests: one per replayed segment)

    def run(self) -> bool:
        if self._pool is None:
            self._fn()
            self.calls += 1
            return True
        lock = self._pool.lock
        if not lock.acquire(blocking=False):
            return False
        try:
            self._fn()
            self.calls += 1
        finally:
            lock.release()
        return True


_machine_at_o0 = None


def _machine():
    """The target machine compiling chains: without optimization. A chain is a straight run of calls
    through constant addresses, which no pass improves, and the engine's optimizing code generator
    took ~50 ms for a training step's 130 calls (the second call of a jitted step paid it), -O0 ~2."""
    global _machine_at_o0
    if _machine_at_o0 is None:
        import llvmlite.binding as llvm

        _machine_at_o0 = llvm.Target.from_default_triple().create_target_machine(jit=True, opt=0)
    return _machine_at_o0


def build(device, calls: list) -> Chain | None:
    """The chain of `calls` on `device` (a CpuDevice), or None where it cannot be built."""
    from poot.devices.cpu import INLINE_NS, NATIVE_CHUNKS_PER_THREAD
    from poot.devices.cpu_threads import NativePool

    pool = device._pool() if device.caps.cores > 1 else None
    native = pool if isinstance(pool, NativePool) else None
    if pool is not None and native is None:
        return None          # Python-thread splitting: keep the per-launch path
    threads = min(device.caps.cores, native.workers + 1) if native is not None else 1
    name = f"poot_chain_{next(_names)}"
    pool_run = native.run_address if native is not None else 0
    ir = chain_ir(name, calls, pool_run, INLINE_NS, threads, NATIVE_CHUNKS_PER_THREAD)
    try:
        import llvmlite.binding as llvm

        mod = llvm.parse_assembly(ir)
        mod.verify()
        obj = _machine().emit_object(mod)
        eng = device._engine()
        with device._load_lock:
            eng.add_object_file(llvm.ObjectFileRef.from_data(obj))
            addr = eng.get_function_address(name)
    except RuntimeError as e:       # an LLVM that refuses the module: the per-launch path still works
        log.warning("poot: cannot chain a CPU recording (%s); its launches run one call each", e)
        return None
    splits = any(_splits(c, pool_run, INLINE_NS, threads) for c in calls)
    return Chain(_CHAIN(addr), native if splits else None)
