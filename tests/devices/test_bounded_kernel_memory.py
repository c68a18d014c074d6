"""Compiled kernels are not kept for the life of the process: the in-memory artifact cache is a bounded
LRU (poot/jit/llvm/cache.py), and the CPU device links kernels into engines of ENGINE_OBJECTS object
files each, disposing a full engine once no program made from it is referenced (poot/devices/cpu.py).
A loop over ever new shapes must keep all of them at their bounds and keep computing the right thing,
an evicted shape included."""
from __future__ import annotations

import gc
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.devices import cpu
from poot.jit.llvm import cache
from poot.jit.runtime import execute

PROGRAMS, ARTIFACTS, OBJECTS = 12, 12, 6


@pytest.fixture
def small_bounds(tmp_path, monkeypatch):
    """Small bounds, a private disk cache, and caches emptied before and after (other tests' entries
    would count against the bounds)."""
    monkeypatch.setenv("POOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(execute, "MAX_PROGRAMS", PROGRAMS)
    monkeypatch.setattr(cache, "MEMORY_ENTRIES", ARTIFACTS)
    monkeypatch.setattr(cpu, "ENGINE_OBJECTS", OBJECTS)
    execute._PROGRAMS.clear()
    cache.cache_clear(disk=False)
    yield devices.get("cpu")
    execute._PROGRAMS.clear()
    cache.cache_clear(disk=False)


def test_memory_cache_is_lru_bounded_by_count_and_bytes(monkeypatch):
    monkeypatch.setattr(cache, "_mem", OrderedDict())
    monkeypatch.setattr(cache, "_mem_bytes", 0)
    monkeypatch.setattr(cache, "MEMORY_ENTRIES", 3)
    monkeypatch.setattr(cache, "MEMORY_BYTES", 1000)
    art = {k: SimpleNamespace(data=b"x" * 100) for k in "abcd"}
    for k in "abc":
        cache.memory_put(k, art[k])
    assert cache.memory_get("a") is art["a"]           # now the most recently used
    cache.memory_put("d", art["d"])
    assert list(cache._mem) == ["c", "a", "d"] and cache.memory_get("b") is None
    big = SimpleNamespace(data=b"y" * 900)
    cache.memory_put("e", big)                          # 1200 bytes: the oldest go until 1000 are left
    assert list(cache._mem) == ["d", "e"] and cache._mem_bytes == 1000
    huge = SimpleNamespace(data="z" * 5000)             # larger than the bound alone: still kept
    cache.memory_put("f", huge)
    assert list(cache._mem) == ["f"] and cache._mem_bytes == 5000
    cache.memory_put("f", art["a"])                     # replacing an entry counts its new size
    assert cache._mem_bytes == 100


def test_distinct_shapes_keep_kernel_memory_bounded(small_bounds):
    dev = small_bounds
    a = np.arange(1000.0)
    x = pt.asarray(a)
    gc.collect()
    first = dev.loaded_programs()
    for i in range(1, 301):
        assert float(x[:i].sum()) == a[:i].sum(), i
        if i % 50 == 0:
            gc.collect()
            held = dev.loaded_programs()
            assert len(execute._PROGRAMS) <= PROGRAMS
            assert len(cache._mem) <= ARTIFACTS
            # counted against what other tests left (engines of up to the default size, which can only
            # be disposed meanwhile): the programs referenced are those of the cached programs, not one
            # per shape seen, and the engines still held are those some referenced program runs from
            assert held["programs"] - first["programs"] <= 2 * PROGRAMS, (first, held)
            assert held["engines"] - first["engines"] <= 2 * PROGRAMS + 1, (first, held)
            assert held["objects"] - first["objects"] <= (2 * PROGRAMS + 1) * OBJECTS, (first, held)
            assert held["objects"] - first["objects"] < 100, (first, held)     # 300 kernels were linked
    # an evicted shape (its program, artifact and engine are gone) is compiled again, correctly
    assert float(x[:3].sum()) == a[:3].sum()
    assert float((x[:7] * 3).sum()) == (a[:7] * 3).sum()
    assert float(x[:250].sum()) == a[:250].sum()


def test_program_kept_alive_outlives_its_engine_retirement(small_bounds):
    """A jitted function keeps its compiled program; the engine its kernels were linked into is retired
    by later kernels and must not be disposed while that program can still run."""
    dev = small_bounds
    a = np.linspace(-1.0, 1.0, 777)
    x = pt.asarray(a)

    @pt.jit
    def f(v):
        return (v * 2.5 + 1.0).sum()

    want = (a * 2.5 + 1.0).sum()
    assert float(f(x)) == pytest.approx(want)
    first = dev.loaded_programs()
    for i in range(1, 61):                      # many engines' worth of new kernels
        assert float((x[:i] * 7).max()) == (a[:i] * 7).max()
    gc.collect()
    assert dev.loaded_programs()["objects"] - first["objects"] < 60
    for _ in range(3):
        assert float(f(x)) == pytest.approx(want)


def test_reloading_a_dropped_kernel_reuses_its_linked_code(small_bounds, monkeypatch):
    """A kernel whose program was dropped, loaded again while its engine is current, gets a program at
    the same address instead of a second copy of its object code."""
    monkeypatch.setattr(cpu, "ENGINE_OBJECTS", 1000)        # no retirement during this test
    dev = small_bounds
    x = pt.asarray(np.arange(40.0))
    assert float(x[:17].sum()) == np.arange(17.0).sum()
    art = next(a for a in reversed(cache._mem.values()) if a.target == "cpu")
    prog = dev.load(art)
    assert dev.load(art) is prog
    addr, engine, objects = prog.address, prog.engine, prog.engine.objects
    execute._PROGRAMS.clear()
    del prog
    gc.collect()
    assert dev._programs.get(art.entry) is None               # nothing references it now
    again = dev.load(art)
    assert again.engine is engine and again.address == addr and engine.objects == objects
