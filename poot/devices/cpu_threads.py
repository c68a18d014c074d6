"""A native thread pool for CPU launches: the workers, the chunk claiming and the wait are LLVM IR
compiled into the device's engine, so splitting a launch over the cores costs microseconds.

Why not Python threads: a launch split through a ThreadPoolExecutor paid a futex wake-up of the pool
thread and a GIL hand-over per chunk on both sides, 100-250 us on the 2-core CI VM, which made every
launch of 1-8 MB (`x + 1` on a 1024x1024 float32) 2-4x slower split than on one core. Here the caller
(inside a ctypes call, the GIL released) publishes a job, wakes sleeping workers, runs chunks itself
and spins until every group is done; workers spin a little after each job (the next launch of a
realize comes within tens of microseconds), then sleep on a futex.

A job: the kernel entry `void fn(ptr buffers, ptr meta, ptr trap, i64 begin, i64 end)`, its
arguments, the group count and the chunk size, written to one of two slots (by the job's generation).
A 64-bit ticket holds the generation (high 24 bits) and the next unclaimed group (low 40 bits);
threads claim chunks by compare-and-swap on it, so a worker still holding an older generation can
never take a chunk of a newer job, and the slot it reads is not rewritten while its generation is
current. `done` counts finished groups; the caller returns when it reaches the total. One job at a
time (`run` takes a lock; a second thread finds it busy and runs its launch inline). Linux only
(futex through `syscall`); elsewhere `start` returns None and launches split through Python threads.
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform
import sys
import threading

log = logging.getLogger("poot.devices.cpu")

SPIN = 1024          # pause instructions a worker spins through before it sleeps (~20-150 us: the gap
                     # between launches of one realize, not long enough to slow a BLAS call after it)
_FUTEX = {"x86_64": 202, "aarch64": 98}
_PAUSE = {"x86_64": "call void @llvm.x86.sse2.pause()", "aarch64": "call void @llvm.aarch64.hint(i32 1)"}
_PAUSE_DECL = {"x86_64": "declare void @llvm.x86.sse2.pause()", "aarch64": "declare void @llvm.aarch64.hint(i32)"}

_IR = """
%job = type {{ ptr, ptr, ptr, ptr, i64, i64 }}
@slots = internal global [2 x %job] zeroinitializer, align 64
@ticket = internal global i64 0, align 64
@done = internal global i64 0, align 64
@seq = internal global i32 0, align 64
@sleepers = internal global i32 0, align 64

declare i64 @syscall(i64, ...)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
{pause_decl}

define internal void @work(i64 %gen) {{
entry:
  %slot = and i64 %gen, 1
  %pfn = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 0
  %pb = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 1
  %pm = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 2
  %pt = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 3
  %ptot = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 4
  %pch = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 5
  %fn = load ptr, ptr %pfn
  %bufs = load ptr, ptr %pb
  %meta = load ptr, ptr %pm
  %trap = load ptr, ptr %pt
  %total = load i64, ptr %ptot
  %chunk = load i64, ptr %pch
  br label %claim
claim:
  %t = load atomic i64, ptr @ticket acquire, align 8
  %g = lshr i64 %t, 40
  %mine = icmp eq i64 %g, %gen
  br i1 %mine, label %index, label %out
index:
  %i = and i64 %t, 1099511627775
  %left = icmp ult i64 %i, %total
  br i1 %left, label %take, label %out
take:
  %next = add i64 %t, %chunk
  %cas = cmpxchg ptr @ticket, i64 %t, i64 %next seq_cst seq_cst
  %ok = extractvalue {{ i64, i1 }} %cas, 1
  br i1 %ok, label %run, label %claim
run:
  %e0 = add i64 %i, %chunk
  %short = icmp ult i64 %e0, %total
  %e = select i1 %short, i64 %e0, i64 %total
  call void %fn(ptr %bufs, ptr %meta, ptr %trap, i64 %i, i64 %e)
  %n = sub i64 %e, %i
  %d = atomicrmw add ptr @done, i64 %n release
  br label %claim
out:
  ret void
}}

define internal ptr @worker(ptr %arg) {{
entry:
  br label %wait
wait:
  %my = phi i32 [ 0, %entry ], [ %s, %got ], [ %my, %woke ], [ %my, %spin ]
  %spins = phi i32 [ 0, %entry ], [ 0, %got ], [ %spins, %woke ], [ %spins1, %spin ]
  %s = load atomic i32, ptr @seq seq_cst, align 4
  %new = icmp ne i32 %s, %my
  br i1 %new, label %got, label %idle
idle:
  %more = icmp ult i32 %spins, {spin}
  br i1 %more, label %spin, label %sleep
spin:
  {pause}
  %spins1 = add i32 %spins, 1
  br label %wait
sleep:
  %z0 = atomicrmw add ptr @sleepers, i32 1 seq_cst
  %again = load atomic i32, ptr @seq seq_cst, align 4
  %same = icmp eq i32 %again, %my
  br i1 %same, label %futex, label %woke
futex:
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr @seq, i32 128, i32 %my, ptr null)
  br label %woke
woke:
  %z1 = atomicrmw sub ptr @sleepers, i32 1 seq_cst
  br label %wait
got:
  %t = load atomic i64, ptr @ticket acquire, align 8
  %gen = lshr i64 %t, 40
  call void @work(i64 %gen)
  br label %wait
}}

define i32 @poot_pool_start(i32 %n) {{
entry:
  %tid = alloca i64
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %next ]
  %more = icmp slt i32 %k, %n
  br i1 %more, label %make, label %done
make:
  %err = call i32 @pthread_create(ptr %tid, ptr null, ptr @worker, ptr null)
  %bad = icmp ne i32 %err, 0
  br i1 %bad, label %done, label %next
next:
  %k1 = add i32 %k, 1
  br label %loop
done:
  ret i32 %k
}}

define void @poot_pool_run(ptr %fn, ptr %bufs, ptr %meta, ptr %trap, i64 %total, i64 %chunk, i64 %begin) {{
entry:
  %t = load atomic i64, ptr @ticket acquire, align 8
  %g0 = lshr i64 %t, 40
  %g1 = add i64 %g0, 1
  %gen = and i64 %g1, 16777215
  %slot = and i64 %gen, 1
  %pfn = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 0
  store ptr %fn, ptr %pfn
  %pb = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 1
  store ptr %bufs, ptr %pb
  %pm = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 2
  store ptr %meta, ptr %pm
  %pt = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 3
  store ptr %trap, ptr %pt
  %ptot = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 4
  store i64 %total, ptr %ptot
  %pch = getelementptr [2 x %job], ptr @slots, i64 0, i64 %slot, i32 5
  store i64 %chunk, ptr %pch
  store atomic i64 0, ptr @done monotonic, align 8
  %g40 = shl i64 %gen, 40
  %first = or i64 %g40, %begin
  store atomic i64 %first, ptr @ticket seq_cst, align 8
  %count = sub i64 %total, %begin
  %s = atomicrmw add ptr @seq, i32 1 seq_cst
  %sl = load atomic i32, ptr @sleepers seq_cst, align 4
  %any = icmp ne i32 %sl, 0
  br i1 %any, label %wake, label %mine
wake:
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr @seq, i32 129, i32 2147483647)
  br label %mine
mine:
  call void @work(i64 %gen)
  br label %wait
wait:
  %d = load atomic i64, ptr @done acquire, align 8
  %finished = icmp uge i64 %d, %count
  br i1 %finished, label %out, label %spin
spin:
  {pause}
  br label %wait
out:
  ret void
}}
"""

_RUN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                        ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


def cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class NativePool:
    """Groups [begin, total) of a kernel over the calling thread and `workers` native threads."""

    def __init__(self, run_address: int, workers: int):
        self._run = _RUN(run_address)
        self.run_address = run_address      # for native callers (cpu_chain.py), which hold `lock`
        self.workers = workers
        self.lock = threading.Lock()

    def run(self, fn_address: int, ptrs, meta, trap, total: int, begin: int, chunk: int) -> bool:
        """False when another thread's launch holds the pool (the caller then runs inline)."""
        if not self.lock.acquire(blocking=False):
            return False
        try:
            self._run(fn_address, ptrs, meta, trap, total, chunk, begin)
        finally:
            self.lock.release()
        return True


def start(engine, workers: int) -> NativePool | None:
    """Compile the pool into `engine` (an llvmlite MCJIT engine) and start `workers` threads; None
    where the platform has no futex or no pthreads (Python threads split launches then)."""
    arch = platform.machine()
    if not sys.platform.startswith("linux") or arch not in _FUTEX or workers < 1:
        return None
    import llvmlite.binding as llvm

    libc = ctypes.CDLL(None)
    for name in ("syscall", "pthread_create"):
        if not hasattr(libc, name):
            return None
        llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
    ir = _IR.format(spin=SPIN, futex=_FUTEX[arch], pause=_PAUSE[arch], pause_decl=_PAUSE_DECL[arch])
    try:
        mod = llvm.parse_assembly(ir)
        mod.verify()
    except RuntimeError as e:           # an LLVM without this target's pause intrinsic, say
        log.warning("poot: no native CPU thread pool (%s); launches split over Python threads", e)
        return None
    engine.add_module(mod)
    engine.finalize_object()
    started = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(engine.get_function_address("poot_pool_start"))
    made = started(workers)
    if made < 1:
        return None
    return NativePool(engine.get_function_address("poot_pool_run"), made)
