"""Sub-word stores on SPIR-V (bfloat16, bool, int8/uint8, int16/uint16 live two or four to a 32-bit
word) stay right when one buffer is bound twice in a dispatch, the way the runtime runs an in-place
update of a donated array (a KV cache's row write: the scatter's copy reads and writes the cache).

A Vulkan driver may assume two bindings never alias (SPIR-V's default) and schedule accordingly; with
the old store (an atomic `and` clearing the field, then an atomic `or`) an NVIDIA GPU's raw Vulkan
device zeroed the whole bfloat16 KV cache on every decode step. lavapipe keeps program order, so the device tests here
rewrite each kernel's SPIR-V with that schedule (spirv_alias_schedule.py) before the device gets it.
Every test takes the `device` fixture: on the cpu it checks the same results without the rewrite."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot import devices, dtypes as dt
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Len
from poot.jit.llvm import cache
from poot.jit.llvm.compile import compile_kernel
from poot.jit.llvm.targets.spirv import target as spirv_target
from poot.jit.runtime.launch import check_traps, launch
from spirv_alias_schedule import hoist_atomics_over_other_bindings

from tests.tolerance import assert_close

PACKED = [dt.bfloat16, dt.bool_, dt.int8, dt.uint8, dt.int16, dt.uint16]


def _copy_kernel(dtype, name: str):
    """y[i] = x[i]: a dispatch binding one buffer as both x and y is an in-place update. Unchecked,
    as the planner's kernels are, so the load and the store share one basic block."""
    kb = B.KernelBuilder(name, workgroup=(64, 1, 1), checks=False)
    x = kb.buffer("x", dtype, Access.READ)
    y = kb.buffer("y", dtype, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(y))):
        kb.store(y, i, kb.load(x, i, dtype))
    return kb.build()


def _values(dtype, n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    if dtype is dt.bool_:
        return rng.random(n) < 0.5
    if dt.is_int(dtype):
        info = np.iinfo(dtype.np)
        return rng.integers(info.min, info.max, n, endpoint=True).astype(dtype.np)
    return (rng.standard_normal(n) * 3).astype(dtype.np)


@pytest.fixture
def alias_assuming_driver(device, monkeypatch):
    """On a SPIR-V device, every kernel compiled in the test is scheduled as by a driver that assumes
    bindings never alias (and compiled fresh, with nothing cached for later tests)."""
    if devices.get(device).caps.target != "spirv":
        return device
    monkeypatch.setenv("POOT_DISK_CACHE", "0")
    monkeypatch.setattr(cache, "memory_get", lambda key: None)
    monkeypatch.setattr(cache, "memory_put", lambda key, artifact: None)
    for name in ("fix_for_vulkan", "fix_for_naga"):
        post = getattr(spirv_target, name)
        monkeypatch.setattr(spirv_target, name, lambda data, post=post: post(hoist_atomics_over_other_bindings(data)))
    return device


@pytest.mark.parametrize("dtype", PACKED, ids=lambda d: d.name)
def test_a_packed_store_cannot_be_scheduled_above_the_load_it_stores(dtype):
    """Its atomic takes an operand computed from the value, so the rewrite finds nothing to move."""
    spv = compile_kernel(_copy_kernel(dtype, f"copy_{dtype.name}"), "spirv", arch="vulkan1.3", use_cache=False).data
    assert hoist_atomics_over_other_bindings(spv) == spv


def test_the_schedule_rewrite_moves_an_atomic_that_needs_no_load():
    """The rewrite is not a no-op: a counter bump independent of the load goes above it."""
    kb = B.KernelBuilder("count_and_copy", workgroup=(64, 1, 1), checks=False)
    x = kb.buffer("x", dt.float32, Access.READ)
    y = kb.buffer("y", dt.float32, Access.WRITE)
    n = kb.buffer("n", dt.int32, Access.READ_WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(y))):
        v = kb.let("v", kb.load(x, i, dt.float32))
        kb.atomic_add(n, B.const(0, dt.int32), B.const(1, dt.int32))
        kb.store(y, i, v)
    spv = compile_kernel(kb.build(), "spirv", arch="vulkan1.3", use_cache=False).data
    assert hoist_atomics_over_other_bindings(spv) != spv


@pytest.mark.parametrize("dtype", PACKED, ids=lambda d: d.name)
def test_an_in_place_copy_keeps_every_element(alias_assuming_driver, dtype):
    dev = devices.get(alias_assuming_driver)
    a = _values(dtype, 203)                      # odd: the last word is half used
    kernel = _copy_kernel(dtype, f"inplace_copy_{dtype.name}")
    if dev.caps.target == "cpu":
        got = np.array(a)
        buf = dev.wrap(got)
        launch(dev, kernel, [buf, buf], groups=4)
    else:
        buf = dev.allocate(a.nbytes)
        dev.write(buf, np.ascontiguousarray(a))
        launch(dev, kernel, [buf, buf], groups=4)
        dev.synchronize()
        check_traps(dev)
        got = np.array(dev.read(buf)).view(a.dtype)[: a.size]
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("dtype", [dt.bfloat16, dt.int8, dt.bool_], ids=lambda d: d.name)
def test_a_donated_cache_takes_row_writes_in_place(alias_assuming_driver, dtype):
    """A decode loop's cache update: rows written at traced positions into a donated (3, 37, 6) cache
    (odd sizes, so these kernels are this test's own), the cache read back after each step."""
    rng = np.random.default_rng(7)
    start = _values(dtype, 3 * 37 * 6).reshape(3, 37, 6)
    rows = [_values(dtype, 18).reshape(3, 6)[::-1].copy() for _ in range(3)]

    @pt.jit(donate_argnums=(0,))
    def write_row(cache, row, pos):
        cache[:, pos] = row
        return cache

    want = np.array(start)
    cache = pt.asarray(start)
    for step, pos in enumerate(rng.permutation(37)[:3].tolist()):
        cache = write_row(cache, pt.asarray(rows[step]), pos)
        want[:, pos] = rows[step]
        assert cache.dtype is dtype
        assert_close(cache.numpy(), want, dtype, err_msg=f"after writing row {pos}")
