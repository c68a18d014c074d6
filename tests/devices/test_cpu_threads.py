"""The native thread pool (poot/devices/cpu_threads.py) that splits CPU launches: it starts where the
platform has futexes, every group runs exactly once whatever the sizes, a first launch that ran some
groups inline hands over the rest (`begin`), concurrent callers fall back to their own thread,
idle workers go to sleep, a forked child (which has no workers) still finishes its launches, and
the Python-thread fallback gives the same results."""
import os
import platform
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from poot.devices import cpu
from poot.devices.cpu_threads import NativePool

from test_cpu_dispatch import DEV, expected, run, spin_kernel

NATIVE = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64") and DEV.caps.cores > 1
needs_native = pytest.mark.skipif(not NATIVE, reason="the native pool needs Linux on x86-64/aarch64 and 2+ cores")


@pytest.fixture
def always_split(monkeypatch):
    monkeypatch.setattr(cpu, "INLINE_NS", 0)


@needs_native
def test_the_native_pool_starts_with_a_worker_per_other_core():
    pool = DEV._pool()
    assert isinstance(pool, NativePool) and pool.workers == DEV.caps.cores - 1


@needs_native
def test_every_group_runs_once_at_every_size(always_split):
    k = spin_kernel(11)
    for groups in [2, 3, 17, 64, 255, 1000, 4097, 50_000]:
        for _ in range(5):
            assert np.array_equal(run(k, groups, 2), expected(groups, 2, 11)), groups


@needs_native
def test_a_first_heavy_launch_hands_the_rest_of_its_groups_to_the_pool():
    """The first launch runs chunks inline until INLINE_NS has passed, then splits from there."""
    k = spin_kernel(12)
    seen = []
    real = DEV._pool().run

    def spy(fn, ptrs, meta, trap, total, begin, chunk):
        seen.append((total, begin))
        return real(fn, ptrs, meta, trap, total, begin, chunk)
    pool = DEV._pool()
    pool.run = spy
    try:
        assert np.array_equal(run(k, 64, 100_000), expected(64, 100_000, 12))
    finally:
        del pool.run
    assert seen and 0 < seen[0][1] < seen[0][0] == 64


@needs_native
def test_concurrent_callers_all_get_exact_results(always_split):
    k = spin_kernel(13)
    errors = []

    def caller(seed):
        for i in range(40):
            groups = 100 + 37 * ((seed + i) % 11)
            if not np.array_equal(run(k, groups, 3), expected(groups, 3, 13)):
                errors.append((seed, i))
    threads = [threading.Thread(target=caller, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@needs_native
def test_idle_workers_sleep(always_split):
    k = spin_kernel(14)
    for _ in range(20):
        run(k, 1000, 2)
    time.sleep(0.2)                      # past the spin: the workers are asleep on the futex
    before = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - before < 0.05


@needs_native
def test_a_forked_child_finishes_its_launches_without_workers(always_split):
    k = spin_kernel(15)
    run(k, 1000, 2)                      # the pool is running in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                         # the child: no worker threads survive a fork
        signal.alarm(30)
        ok = all(np.array_equal(run(k, n, 2), expected(n, 2, 15)) for n in (1000, 4097))
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1" and os.WIFEXITED(status)


def test_the_python_thread_fallback_gives_the_same_results(monkeypatch, always_split):
    executor = ThreadPoolExecutor(max(1, DEV.caps.cores - 1))
    monkeypatch.setattr(DEV, "_pool", lambda: executor)
    k = spin_kernel(16)
    for groups in [2, 17, 1000, 4097]:
        assert np.array_equal(run(k, groups, 2), expected(groups, 2, 16)), groups


@pytest.mark.parametrize("arch,triple", [("x86_64", "x86_64-unknown-linux-gnu"),
                                         ("aarch64", "aarch64-unknown-linux-gnu")])
def test_the_pool_compiles_for_each_supported_architecture(arch, triple):
    """Only the host's runs here; the other's IR must still verify and assemble."""
    import llvmlite.binding as llvm

    from poot.devices import cpu_threads as ct

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    ir = ct._IR.format(spin=ct.SPIN, futex=ct._FUTEX[arch], pause=ct._PAUSE[arch], pause_decl=ct._PAUSE_DECL[arch])
    mod = llvm.parse_assembly(ir)
    mod.triple = triple
    mod.verify()
    obj = llvm.Target.from_triple(triple).create_target_machine(opt=2).emit_object(mod)
    assert len(obj) > 0
