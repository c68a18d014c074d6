"""The CPU device's reuse of large allocations: memory comes back only once nothing refers to it."""
import gc

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.devices.cpu_pool import MIN_BYTES, HostPool

N = 2 * MIN_BYTES


def _cpu():
    return devices.get("cpu")


@pytest.fixture(autouse=True)
def _empty_pool():
    """Each test starts from an empty pool: arrays of N bytes that earlier tests left to the garbage
    collector would otherwise be idle in the bucket these tests read addresses from."""
    gc.collect()
    _cpu()._host_pool.clear()


def test_a_dropped_buffer_is_reused():
    dev = _cpu()
    b = dev.allocate(N)
    addr = b.address
    del b
    gc.collect()
    assert dev.allocate(N).address == addr


def test_memory_a_view_still_reads_is_not_handed_out():
    dev = _cpu()
    b = dev.allocate(N)
    dev.write(b, np.full(N, 7, np.uint8))
    view = dev.read(b)                      # the user kept a view; the buffer object goes
    addr = b.address
    del b
    gc.collect()
    c = dev.allocate(N)
    assert c.address != addr
    dev.write(c, np.zeros(N, np.uint8))
    assert view[0] == 7 and view[-1] == 7
    del view, c
    gc.collect()
    assert dev.allocate(N).address == addr  # now it is free


def test_results_the_user_holds_are_never_overwritten():
    x = pt.array(np.arange(N // 4, dtype=np.float32))
    kept = [(x + float(k)).numpy() for k in range(4)]   # each result dropped as a poot array
    for k, arr in enumerate(kept):
        np.testing.assert_array_equal(arr, np.arange(N // 4, dtype=np.float32) + k)


def test_the_pool_tracks_at_most_its_limit():
    pool = HostPool(limit=3 * MIN_BYTES)
    a, b = np.empty(MIN_BYTES * 2, np.uint8), np.empty(MIN_BYTES * 2, np.uint8)
    pool.adopt(a)
    pool.adopt(b)                            # a is busy: b would exceed the limit, so it is untracked
    assert pool.tracked_bytes() == 2 * MIN_BYTES
    del a
    gc.collect()
    assert pool.idle_bytes() == 2 * MIN_BYTES
    c = np.empty(MIN_BYTES * 2, np.uint8)
    pool.adopt(c)                            # the idle one is dropped to make room
    assert pool.tracked_bytes() == 2 * MIN_BYTES and pool.take(2 * MIN_BYTES) is None
    del c
    gc.collect()
    assert pool.take(2 * MIN_BYTES) is not None


def test_small_allocations_and_a_zero_limit_bypass_the_pool():
    pool = HostPool(limit=0)
    pool.adopt(np.empty(N, np.uint8))
    assert pool.tracked_bytes() == 0
    small = HostPool()
    small.adopt(np.empty(MIN_BYTES - 1, np.uint8))
    assert small.tracked_bytes() == 0 and small.take(MIN_BYTES - 1) is None
