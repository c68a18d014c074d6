"""A GPU realize queues its kernels and returns: nothing waits until a host read (`.numpy()`, `float`,
a host step) or `pt.synchronize()`, where the traps of everything launched since the last read are
raised, naming the kernel and the user's line. The CPU runs its launches on the calling thread and
checks its trap word at once. Buffers are pooled: a steady loop allocates nothing after its first
iteration (`device.fresh_allocations` counts what the driver or the OS served)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.jit.runtime import traps

HERE = os.path.basename(__file__)


def line_of():
    return sys._getframe(1).f_lineno


def chain(a, b):
    return 2 * a + b * a - pt.exp(a) / (1 + b * b)


def inputs(device, n):
    rng = np.random.default_rng(0)
    with pt.device(device):
        return (pt.asarray(rng.random(n, dtype=np.float32)), pt.asarray(rng.random(n, dtype=np.float32)))


@pytest.fixture
def waits(device, monkeypatch):
    """Counts the calls that wait for the device or read it back."""
    dev = devices.get(device)
    counts = {}
    names = ["read", "synchronize"] + {"wgpu": ["_read_range", "_wait"], "vulkan": ["_wait_all", "_drain"]}.get(
        device, ["_wait"] if device.startswith(("cuda", "rocm")) else [])
    for name in names:
        orig = getattr(dev, name)

        def counting(*args, _orig=orig, _name=name, **kwargs):
            counts[_name] = counts.get(_name, 0) + 1
            return _orig(*args, **kwargs)
        monkeypatch.setattr(dev, name, counting)
    return counts


def test_a_gpu_realize_waits_for_nothing_until_a_read(device, waits):
    if device in ("cpu", "oracle"):
        pytest.skip("the CPU runs its launches on the calling thread")
    dev = devices.get(device)
    a, b = inputs(device, 4096)
    pt.realize(chain(a, b))                      # compiles (and may write its meta buffers)
    pt.synchronize(device)
    waits.clear()
    for _ in range(20):
        r = pt.realize(chain(a, b))
    assert waits == {}, f"a realize waited: {waits}"
    assert traps.pending(dev)
    an, bn = a.numpy(), b.numpy()              # a host read: checks the trap word, then reads
    assert waits and not traps.pending(dev)
    np.testing.assert_allclose(r.numpy(), 2 * an + bn * an - np.exp(an) / (1 + bn * bn), rtol=1e-5, atol=1e-6)


def test_a_read_after_a_realize_waits_once(device, waits):
    """The read's bytes and the trap word come back in one round trip: one staging copy and mapping
    (wgpu), one drained copy and a load of the mapped trap word (Vulkan), one synchronize (CUDA)."""
    if device in ("cpu", "oracle"):
        pytest.skip("the CPU runs its launches on the calling thread")
    a, b = inputs(device, 1000)
    an, bn = a.numpy(), b.numpy()
    for _ in range(2):                           # the first compiles and fills the pools
        r = pt.realize(chain(a, b))
        assert traps.pending(devices.get(device))
        waits.clear()
        got = r.numpy()
    assert waits.get({"wgpu": "_read_range", "vulkan": "_drain"}.get(device, "_wait")) == 1, waits
    assert not traps.pending(devices.get(device))
    np.testing.assert_allclose(got, 2 * an + bn * an - np.exp(an) / (1 + bn * bn), rtol=1e-5, atol=1e-6)


def test_a_trap_is_raised_at_the_next_read_naming_kernel_and_line(device):
    dev = devices.get(device)
    with pt.device(device):
        x = pt.asarray(np.arange(10, dtype=np.float32))
        i = pt.asarray(np.array([1, 20]))
        y = x[i]; line = line_of()              # noqa: E702  (the line the error names)
        try:
            pt.realize(y)                       # the CPU raises here: its launches have run
        except pt.PootIndexError as e:
            assert device in ("cpu", "oracle")
            err = e
        else:
            assert device not in ("cpu", "oracle") and traps.pending(dev)
            z = pt.realize(x + 1)               # more work queued after the trapping launch
            with pytest.raises(pt.PootIndexError) as info:
                z.numpy()                       # an unrelated read raises the earlier trap
            err = info.value
    assert isinstance(err, pt.KernelTrap) and f"{HERE}:{line}" in str(err)
    assert err.kernel and f"kernel '{err.kernel}'" in str(err)
    assert not traps.pending(dev)
    assert (x + 1).numpy().tolist() == list(range(1, 11))          # the device goes on working


def test_synchronize_and_block_until_ready_raise_the_trap(device):
    with pt.device(device):
        x = pt.asarray(np.arange(10, dtype=np.float32))
        bad = pt.asarray(np.array([30]))
        ok = x * 3
        assert ok.block_until_ready() is ok and ok.is_realized
        pt.synchronize()
        with pytest.raises(pt.PootIndexError, match=rf"{HERE}:{line_of() + 1}\b"):
            y = x[bad]; y.block_until_ready()   # noqa: E702
        try:
            pt.realize(x[bad]); line = line_of()          # noqa: E702
        except pt.PootIndexError:
            assert device in ("cpu", "oracle")
            return
        with pytest.raises(pt.PootIndexError, match=rf"{HERE}:{line}\b"):
            pt.synchronize(device)
        pt.synchronize()                        # raised once: nothing is pending any more


def test_a_jitted_call_traps_at_the_next_read_naming_its_line(device):
    line = line_of() + 4

    @pt.jit
    def gather(x, i):
        return x[i] * 2                         # the line the error names
    with pt.device(device):
        x = pt.asarray(np.arange(10, dtype=np.float32))
        assert gather(x, pt.asarray(np.array([1, 2]))).numpy().tolist() == [2.0, 4.0]
        with pytest.raises(pt.PootIndexError) as info:
            gather(x, pt.asarray(np.array([1, 12]))).numpy()
    assert f"{HERE}:{line}" in str(info.value)


@pytest.mark.parametrize("n", [1 << 18])
def test_a_steady_loop_allocates_nothing(device, n):
    """After the first iterations, every buffer a realize needs comes from the device's pool (CPU:
    arrays of 1 MiB and more; malloc reuses smaller blocks itself)."""
    if device == "oracle":
        pytest.skip("the oracle allocates NumPy arrays")
    dev = devices.get(device)
    a, b = inputs(device, n)
    def step():
        r = pt.realize(chain(a, b))
        return pt.realize(r * 0.5 + a)
    for _ in range(3):
        s = step()                              # holding the last result, as the loop below does
    pt.synchronize(device)
    fresh = dev.fresh_allocations
    for _ in range(30):
        s = step()
    pt.synchronize(device)
    assert dev.fresh_allocations == fresh
    assert np.isfinite(s.numpy()).all()


def test_a_freed_buffer_is_taken_again(device):
    if device == "oracle":
        pytest.skip("the oracle has no device memory")
    import gc

    dev = devices.get(device)
    size = 3 << 20
    first = dev.allocate(size)
    del first                                   # garbage collected: back to the pool
    gc.collect()
    fresh = dev.fresh_allocations
    again = dev.allocate(size)                  # the dropped one, without the driver
    assert dev.fresh_allocations == fresh
    if device != "cpu":                         # (the CPU's buffers are NumPy arrays: dropping is freeing)
        other = dev.allocate(size)
        dev.free(other)
        third = dev.allocate(size)
        assert dev.fresh_allocations == fresh + 1   # `other` was new, `third` is `other`'s memory
    else:
        third = dev.allocate(size)
    dev.write(again, np.full(size, 7, np.uint8))
    dev.write(third, np.full(size, 9, np.uint8))
    assert (np.asarray(dev.read(again)) == 7).all() and (np.asarray(dev.read(third)) == 9).all()


def test_copy_to_host_async_reads_the_value_as_of_its_start(device):
    step = pt.jit(lambda x: x * 3 + 1, donate_argnums=0)
    with pt.device(device):
        x = pt.asarray(np.arange(64, dtype=np.float32))
        y = pt.realize(x * 2)
        assert y.copy_to_host_async() is y
        z = step(y)                             # queued after the copy; overwrites y's buffer in place
        w = pt.realize(chain(x, x))             # more work queued behind it
        got = y.numpy()
        assert got.tolist() == (np.arange(64) * 2.0).tolist() and not got.flags.writeable
        np.testing.assert_allclose(z.numpy(), np.arange(64) * 6.0 + 1)
        xs = np.arange(64, dtype=np.float64)
        # near x = 9 the terms cancel to 0.18 from about 99: the float32 error is relative to the terms
        terms = np.abs(2 * xs + xs * xs) + np.exp(xs) / (1 + xs * xs)
        err = np.abs(w.numpy() - (2 * xs + xs * xs - np.exp(xs) / (1 + xs * xs)))
        assert (err <= 1e-5 * terms).all(), err / terms


def test_a_trap_before_copy_to_host_async_surfaces_at_its_read(device):
    dev = devices.get(device)
    with pt.device(device):
        x = pt.asarray(np.arange(10, dtype=np.float32))
        try:
            pt.realize(x[pt.asarray(np.array([1, 20]))]); line = line_of()     # noqa: E702
        except pt.PootIndexError:
            assert device in ("cpu", "oracle")
            return
        z = pt.realize(x + 1).copy_to_host_async()
        assert not traps.pending(dev)           # the check left with the copy
        with pytest.raises(pt.PootIndexError, match=rf"{HERE}:{line}\b"):
            z.numpy()
        assert z.numpy().tolist() == list(range(1, 11))      # read again: the value, nothing pending
