"""The replay hot paths of the wgpu and raw Vulkan devices: wgpu-native's C functions called directly
(poot/devices/wgpu_native.py) with plans cached per set of replacement buffers, and Vulkan submissions and
fence waits through the cffi library with prebuilt structs. Results must match the public paths, plans
must follow buffers through the pool and trim(), and native errors must surface as DeviceError."""
from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import DeviceError, DeviceUnavailableError

pytest.importorskip("llvmlite.binding")
from test_wgpu_device import ADD, ADD_BINDINGS, download, spirv_kernel, upload   # noqa: E402


def _device(name):
    try:
        return devices.get(name)
    except DeviceUnavailableError as e:
        pytest.skip(f"no {name} device here: {e}")


@pytest.fixture(scope="module")
def wgpu_dev():
    return _device("wgpu")


@pytest.fixture(scope="module")
def add_program(wgpu_dev):
    return wgpu_dev.load(SimpleNamespace(data=spirv_kernel(ADD_BINDINGS, ADD), name="add", entry="main"))


@pytest.fixture()
def native(wgpu_dev):
    """The device's native command stream (skips where POOT_WGPU_NATIVE=0 turns it off)."""
    if os.environ.get("POOT_WGPU_NATIVE", "1").strip() == "0":
        pytest.skip("POOT_WGPU_NATIVE=0: the device encodes through wgpu-py's public API")
    assert wgpu_dev._native is not None, "wgpu-py's backend changed: commands fell back to its public API"
    return wgpu_dev._native


def _recorded_add(dev, program, n=256):
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    ba, bb, meta = upload(dev, a), upload(dev, b), upload(dev, np.array([n], np.uint32))
    bc = upload(dev, np.zeros(n, np.float32))
    with dev.record() as rec:
        dev.dispatch(program, [ba, bb, bc, meta], (4, 1, 1))
        dev.copy(ba, bc, 4 * n)                       # a = a + b: each replay adds b again
    return rec, (a, b), (ba, bb, bc, meta)


def test_wgpu_commands_call_wgpu_native_directly(wgpu_dev, native):
    assert wgpu_dev._native is native              # (the fixture fails where wgpu-py's layout changed)


@pytest.mark.parametrize("path", ["native", "public"])
def test_wgpu_replay_results_match_on_both_paths(wgpu_dev, add_program, monkeypatch, path):
    if path == "public":
        wgpu_dev.flush()                               # nothing left in the native pending encoder
        monkeypatch.setattr(wgpu_dev, "_native", None)
    rec, (a, b), (ba, bb, bc, meta) = _recorded_add(wgpu_dev, add_program)
    for k in range(1, 4):
        rec.replay()
        np.testing.assert_allclose(download(wgpu_dev, ba, np.float32), a + k * b, rtol=1e-6)


def test_wgpu_plans_follow_the_replacement_buffers(wgpu_dev, add_program, native):
    rec, (a, b), (ba, bb, bc, meta) = _recorded_add(wgpu_dev, add_program)
    outs = [wgpu_dev.allocate(bc.nbytes) for _ in range(3)]
    for k in range(6):                                 # cycles through three sets: plans are reused
        out = outs[k % 3]
        a2 = np.full(a.shape, k, np.float32)
        a_in = upload(wgpu_dev, a2)
        rec.replay({ba: a_in, bc: out})
        np.testing.assert_allclose(download(wgpu_dev, out, np.float32), a2 + b, rtol=1e-6)
        np.testing.assert_allclose(download(wgpu_dev, a_in, np.float32), a2 + b, rtol=1e-6)
    assert len(rec.plans) <= 16


def test_wgpu_trim_starts_new_plans(wgpu_dev, add_program, native):
    rec, (a, b), (ba, bb, bc, meta) = _recorded_add(wgpu_dev, add_program)
    out = wgpu_dev.allocate(bc.nbytes)
    rec.replay({bc: out})
    assert rec.plans
    del out
    wgpu_dev.trim()                                    # destroys the pooled buffer the plan named
    out = wgpu_dev.allocate(bc.nbytes)
    rec.replay({bc: out})
    assert rec.epoch == wgpu_dev._epoch
    np.testing.assert_allclose(download(wgpu_dev, out, np.float32), a + 2 * b, rtol=1e-6)


def test_wgpu_native_encoding_errors_raise_device_error(wgpu_dev, add_program, native):
    from poot.devices.wgpu_native import DISPATCH

    bufs = [wgpu_dev.allocate(1024) for _ in range(4)]
    pipeline, group = wgpu_dev._pipeline(add_program, 4), wgpu_dev._bind_group(bufs)
    handle = wgpu_dev._native.handle
    too_many = wgpu_dev.caps.extra["max_workgroups_per_dimension"] + 1     # wgpu validates it at finish
    with pytest.raises(DeviceError, match=r"(?s)wgpu: encoding a replay failed \(Validation.*must be less or equal"):
        wgpu_dev._native.run([(DISPATCH, handle(pipeline), handle(group), too_many, 1, 1, None)])
    rec, (a, b), (ba, bb, bc, meta) = _recorded_add(wgpu_dev, add_program)
    rec.replay()                                       # nothing was submitted; the device still works
    np.testing.assert_allclose(download(wgpu_dev, ba, np.float32), a + b, rtol=1e-6)


def test_wgpu_eager_encoding_errors_raise_device_error_at_flush(wgpu_dev, native):
    a, b = wgpu_dev.allocate(64), wgpu_dev.allocate(64)
    handle = wgpu_dev._native.handle
    wgpu_dev._native.copy(handle(a.handle), 0, handle(b.handle), 0, 128)     # past both buffers' ends
    with pytest.raises(DeviceError, match="(?s)wgpu: submitting work failed"):
        wgpu_dev.flush()
    assert wgpu_dev._native.encoder is None                                 # dropped, not submitted
    wgpu_dev.write(a, np.arange(16, dtype=np.float32))
    wgpu_dev.copy(b, a, 64)
    np.testing.assert_array_equal(download(wgpu_dev, b, np.float32), np.arange(16, dtype=np.float32))


def test_wgpu_small_reads_reuse_one_staging_buffer(wgpu_dev):
    bufs = [upload(wgpu_dev, np.full(n, n, np.float32)) for n in (1, 3, 100, 1000)]
    for b, n in zip(bufs, (1, 3, 100, 1000)):
        np.testing.assert_array_equal(download(wgpu_dev, b, np.float32), np.full(n, n, np.float32))
    staging = wgpu_dev._read_staging
    for b, n in zip(bufs, (1, 3, 100, 1000)):
        np.testing.assert_array_equal(download(wgpu_dev, b, np.float32), np.full(n, n, np.float32))
    assert wgpu_dev._read_staging is staging


@pytest.mark.parametrize("name", ["wgpu", "vulkan"])
def test_jitted_loop_matches_numpy(name):
    dev = _device(name)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
    with pt.device(dev.name):
        f = pt.jit(lambda a, b: pt.exp(a) * b + a)
        px, py = pt.realize(pt.asarray(x)), pt.realize(pt.asarray(y))
        kept = [pt.realize(f(px, py)) for _ in range(40)]       # more than MAX_IN_FLIGHT submissions
        for r in kept[::7]:
            np.testing.assert_allclose(np.asarray(r), np.exp(x) * y + x, rtol=1e-5, atol=1e-5)
        pt.synchronize()


def test_vulkan_submit_errors_raise_device_error(monkeypatch):
    dev = _device("vulkan")
    dev.synchronize()

    class Lib:                                        # the real library, but a submit that fails
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def vkQueueSubmit(*args):
            return -2                                  # VK_ERROR_OUT_OF_DEVICE_MEMORY

    real = dev._lib
    spare = len(dev._spare_fences)
    monkeypatch.setattr(dev, "_lib", Lib())
    buf = dev.allocate(64)
    dev.write(buf, np.zeros(16, np.float32))
    with pytest.raises(DeviceError, match="out of memory submitting work"):
        dev.flush()
    monkeypatch.setattr(dev, "_lib", real)
    assert len(dev._spare_fences) >= spare            # the fence went back for reuse
    dev.write(buf, np.arange(16, dtype=np.float32))
    np.testing.assert_array_equal(dev.read(buf).view(np.float32), np.arange(16, dtype=np.float32))
