"""What every device inherits from poot.devices.base.Device (host-array transfers, the buffer and recording
guards, the per-thread recording slot), what the CUDA and ROCm devices share through driver_api.py, and
that the runtime keeps its own state (trap buffers, eager replays) in its own objects."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.devices import cuda, driver_api, rocm
from poot.devices.base import Buffer, Capabilities, Device, Recording
from poot.errors import DeviceError
from poot.jit.runtime import execute, traps


class HostBytes(Device):
    """The smallest device: NumPy byte arrays, and the guards the GPU backends start their calls with."""

    name = "bytes"

    def __init__(self):
        self.caps = Capabilities(name="bytes", target="cpu")

    def allocate(self, nbytes):
        return Buffer(self, nbytes, np.zeros(nbytes, np.uint8))

    def write(self, buf, data):
        self._check(buf)
        self._no_recording("a host-to-device write")
        src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        buf.handle[: src.nbytes] = src

    def read(self, buf):
        self._check(buf)
        self._no_recording("a device-to-host read")
        return buf.handle.copy()

    def record(self):
        return Recording(self)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64, np.uint16, np.bool_])
@pytest.mark.parametrize("dev", [HostBytes(), devices.get("cpu")], ids=["base", "cpu"])
def test_from_numpy_and_to_numpy_round_trip(dev, dtype):
    want = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    buf = dev.from_numpy(want.transpose(1, 0, 2))            # a strided array is copied in C order
    got = dev.to_numpy(buf, (3, 2, 4), dtype)
    assert buf.nbytes == want.nbytes and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want.transpose(1, 0, 2))
    np.testing.assert_array_equal(dev.to_numpy(buf, (2,), dtype), want.transpose(1, 0, 2).reshape(-1)[:2])


def test_only_the_cpu_device_shares_host_memory():
    cpu = devices.get("cpu")
    assert cpu.shares_host_memory and not HostBytes().shares_host_memory and not Device.shares_host_memory
    buf = cpu.from_numpy(np.arange(4, dtype=np.int32))
    view = cpu.to_numpy(buf, (4,), np.int32)
    assert np.shares_memory(view, buf.handle) and not view.flags.writeable


def test_the_buffer_guards_name_the_device():
    a, b = HostBytes(), HostBytes()
    foreign = b.allocate(4)
    with pytest.raises(DeviceError, match=r"^bytes: <Buffer 4 bytes on bytes> is not a buffer of this bytes device"):
        a.write(foreign, np.zeros(1, np.int32))
    freed = a.allocate(4)
    freed.handle = None
    with pytest.raises(DeviceError, match="was freed"):
        a.read(freed)


def test_a_recording_refuses_host_transfers_on_its_own_thread_only():
    dev = HostBytes()
    buf = dev.from_numpy(np.arange(3, dtype=np.float32))
    seen = []
    with dev.record():
        with pytest.raises(DeviceError, match="a device-to-host read inside a recording is not supported"):
            dev.read(buf)
        other = threading.Thread(target=lambda: seen.append(dev.to_numpy(buf, (3,), np.float32)))
        other.start()
        other.join()
        with pytest.raises(DeviceError, match="a recording is already open"):
            dev.record().__enter__()
    np.testing.assert_array_equal(seen[0], np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(dev.to_numpy(buf, (3,), np.float32), np.arange(3, dtype=np.float32))


def test_cuda_and_rocm_share_the_driver_api_code_instead_of_copying_it():
    shared = {k for k, v in vars(driver_api.DriverApiDevice).items() if callable(v)}
    assert {"allocate", "free", "write", "read", "copy", "dispatch", "synchronize", "_staged"} <= shared
    for cls in (cuda.CudaDevice, rocm.RocmDevice):
        assert issubclass(cls, driver_api.DriverApiDevice)
        assert not shared & set(vars(cls)), f"{cls.__name__} redefines {sorted(shared & set(vars(cls)))}"
    for cls in (cuda.CudaDevice, rocm.RocmDevice, driver_api.DriverApiDevice):
        assert "_check" not in vars(cls) and "_no_recording" not in vars(cls)


def test_the_runtime_keeps_trap_buffers_and_replays_in_its_own_objects():
    before = {id(p) for p in execute._PROGRAMS.values()}
    x = pt.array(np.arange(111, dtype=np.float32).reshape(3, 37))     # a shape no other test realizes
    want = (np.arange(111, dtype=np.float32).reshape(3, 37) * 3 + 1) / 7
    for _ in range(3):
        np.testing.assert_allclose(((x * 3 + 1) / 7).numpy(), want, rtol=1e-6)
    cpu = devices.get("cpu")
    mine = [p for p in execute._PROGRAMS.values() if id(p) not in before]
    assert len(mine) == 1 and mine[0].device is cpu
    prog, = mine
    assert prog.trap_buffer is traps.trap_buffer(cpu) and not hasattr(cpu, "_poot_trap_buffer")
    assert "_eager_replay" not in vars(prog)
    assert prog.eager_calls == 2 and prog.eager_replay is not None    # a small CPU program replays from call 3
