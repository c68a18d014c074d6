"""CPU dispatch splits a launch over the cores by its work (the measured time of its workgroups), not
by its number of workgroups: a small launch runs on the calling thread (no pool round trip), a big
one on every core, and a program whose workgroups grow heavier is split from then on."""
import os
from types import SimpleNamespace

import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.devices.cpu_threads import NativePool
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access
from poot.jit.runtime.launch import launch

DEV = devices.get("cpu")
U = dt.uint32
MUL, ADD = 1664525, 1013904223          # an LCG step: LLVM cannot turn the loop into a formula


def spin_kernel(salt: int):
    """out[g] = g + salt + (the LCG run `reps` steps from g): `reps` sets the work of each workgroup;
    `salt` makes each test's body (and so its compiled program and measured time) its own."""
    kb = B.KernelBuilder("spin", workgroup=(1, 1, 1))
    out = kb.buffer("out", U, Access.WRITE)
    reps = kb.scalar("reps", U)
    g = kb.let("g", B.index("group", 0))
    acc = kb.local("acc", U, g)
    with kb.for_("j", B.const(0, U), reps):
        kb.assign(acc, B.add(B.binary("mul", acc, B.const(MUL, U)), B.const(ADD, U)))
    kb.store(out, g, B.add(B.add(acc, g), B.const(salt, U)))
    return kb.build()


def expected(groups: int, reps: int, salt: int) -> np.ndarray:
    acc = np.arange(groups, dtype=np.uint64)
    for _ in range(reps):
        acc = (acc * MUL + ADD) % 2**32
    return ((acc + np.arange(groups) + salt) % 2**32).astype(np.uint32)


@pytest.fixture
def pool(monkeypatch):
    """Counts the launches split over the cores (`pool.splits`), on the native pool or Python's."""
    real = DEV._pool()
    counter = SimpleNamespace(splits=0)
    if isinstance(real, NativePool):
        run_native = real.run

        def counted(*args):
            counter.splits += 1
            return run_native(*args)
        monkeypatch.setattr(real, "run", counted)
    else:
        submit = real.submit

        def counted_submit(fn):        # one submit per other thread of a split
            counter.splits += 1 / max(1, DEV.caps.cores - 1)
            return submit(fn)
        monkeypatch.setattr(real, "submit", counted_submit)
    return counter


def run(kernel, groups: int, reps: int) -> np.ndarray:
    out = np.zeros(groups, np.uint32)
    launch(DEV, kernel, [DEV.wrap(out)], {"reps": reps}, groups)
    return out


def test_a_small_launch_of_several_groups_runs_on_the_calling_thread(pool):
    k = spin_kernel(1)
    for _ in range(20):
        assert np.array_equal(run(k, 4, 3), expected(4, 3, 1))
    # (a launch preempted by another process measures slow and makes the next one split: rare)
    assert pool.splits <= 2


@pytest.mark.skipif(DEV.caps.cores < 2, reason="a one-core machine runs every launch on its thread")
def test_a_big_launch_is_split_over_the_cores(pool):
    k = spin_kernel(2)
    assert np.array_equal(run(k, 16, 200_000), expected(16, 200_000, 2))
    assert pool.splits == 1


@pytest.mark.skipif(DEV.caps.cores < 2, reason="a one-core machine runs every launch on its thread")
def test_a_program_whose_groups_grow_heavier_is_split_from_then_on(pool):
    k = spin_kernel(3)
    for _ in range(3):
        run(k, 16, 1)
    run(k, 16, 200_000)            # expected to be small: runs here, and is seen to be heavy
    before = pool.splits
    assert np.array_equal(run(k, 16, 200_000), expected(16, 200_000, 3))
    assert pool.splits == before + 1
