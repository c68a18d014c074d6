"""The raw Vulkan device on a real Vulkan driver (lavapipe on machines without a GPU): capabilities,
transfers through the staging ring, launches of LLVM's SPIR-V without the naga post-pass, grid folding,
traps, record/replay with rebinding, refusals of what the device lacks, the pipeline cache on disk,
timestamps under POOT_DEBUG=1, a run under the Khronos validation layer, and threads sharing the device.
Without a Vulkan 1.3 device these skip with the reason. The SPIR-V target's kernel suite runs on this
device in test_vulkan_spirv.py; the array parity suites run on it in test_vulkan_suites.py."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import poot as pt
from poot import devices, dtypes as dt
from poot.errors import DeviceError, DeviceUnavailableError, DTypeError, KernelTrap
from poot.jit.llvm.compile import compile_kernel
from poot.jit.runtime.launch import check_traps, launch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jit"))
import kir_samples as S  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def dev():
    try:
        return devices.get("vulkan")
    except DeviceUnavailableError as e:
        pytest.skip(f"no Vulkan 1.3 device here: {e}")


def child(code: str, **env) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (a device is created once per process)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **env}, timeout=300)


def upload(dev, *arrays):
    bufs = []
    for a in arrays:
        b = dev.allocate(a.nbytes)
        dev.write(b, a)
        bufs.append(b)
    return bufs


@pt.kernel
def scale(x: pt.In[pt.f32], y: pt.Out[pt.f32], a: pt.f32):
    i = pt.thread_index()
    if i < len(y):
        y[i] = a * x[i] + 1.0


# --- everywhere -----------------------------------------------------------------------------------
def test_poot_devices_says_what_vulkan_is_or_why_not():
    row = next(r for r in devices.availability() if r[0] == "vulkan")
    if row[1]:
        assert row[2].startswith("spirv target (vulkan1.3, no naga) on ")
    else:
        assert row[2].startswith("vulkan: ") and "not built" not in row[2] and "Traceback" not in row[2]


# --- on a Vulkan device ---------------------------------------------------------------------------
def test_capabilities_come_from_the_device(dev):
    c = dev.caps
    assert (c.target, c.compile_arch) == ("spirv", "vulkan1.3")
    assert c.subgroup_size >= 1 and len(c.max_workgroups) == 3 and min(c.max_workgroups) >= 65535
    assert c.max_buffer_bytes == dev.info["max_storage_buffer_range"] and c.max_buffers >= 8
    assert c.float64 == ("shaderFloat64" in dev.features) and c.int64 == ("shaderInt64" in dev.features)
    assert "basic" in c.extra["subgroup_operations"]


@pytest.mark.parametrize("n", [0, 3, 1000, (9 << 20) + 5, 40 << 20])
def test_transfers_round_trip(dev, n):
    """Small, several staging chunks, and more than the whole upload ring (a write waits for it)."""
    data = np.random.default_rng(n).integers(0, 255, n, dtype=np.uint8)
    buf, = upload(dev, data)
    assert np.array_equal(dev.read(buf), data)
    other = dev.allocate(n)
    dev.copy(other, buf, n)
    assert np.array_equal(dev.read(other), data)


def test_bad_transfers_are_refused(dev):
    buf = dev.allocate(8)
    with pytest.raises(DeviceError, match="writing 12 bytes into a buffer of 8"):
        dev.write(buf, np.zeros(3, np.float32))
    with pytest.raises(DeviceError, match="copy of 16 bytes"):
        dev.copy(buf, dev.allocate(32), 16)
    dev.free(buf)
    with pytest.raises(DeviceError, match="was freed"):
        dev.read(buf)


def test_an_array_past_the_storage_buffer_range_is_refused_by_name(dev):
    with pytest.raises(DeviceError, match="maxStorageBufferRange"):
        dev.allocate(dev.caps.max_buffer_bytes + 1)


def test_a_kernel_runs_as_llvm_emits_it_and_matches_numpy(dev):
    x = np.random.default_rng(0).standard_normal(100_003).astype(np.float32)
    y = np.zeros_like(x)
    scale(pt.Context("vulkan"), x, y, 2.5)
    # Vulkan lets a driver contract x * 2.5 + 1.0 into one fma (NVIDIA's does): one rounding of each
    # term's size, not of the (cancelling) result's
    eps = np.finfo(np.float32).eps
    assert np.all(np.abs(y - (2.5 * x + 1.0)) <= eps * (2.5 * np.abs(x) + 1.0))
    art = scale.compile("spirv", arch="vulkan1.3")
    naga = scale.compile("spirv")
    assert art.data != naga.data            # a different consumer: no naga post-pass


def test_grids_past_the_workgroup_limit_are_folded(dev, monkeypatch):
    # NVIDIA allows 2**31 - 1 groups in x (64 * that many floats would not fit in memory): the fold is
    # exercised under a cap of 65,535 there, lavapipe's own (the kernel never sees the device's cap)
    kernel = S.add_kernel(wg=64)
    lx, ly, lz = dev.info["max_workgroups"]
    monkeypatch.setitem(dev.info, "max_workgroups", (min(lx, 65_535), ly, lz))
    groups = dev.info["max_workgroups"][0] + 1000
    n = 64 * groups
    a = np.random.default_rng(1).random(n, dtype=np.float32)
    bufs = upload(dev, a, a, np.zeros(n, np.float32))
    launch(dev, kernel, bufs, (), groups)
    dev.synchronize()
    assert np.array_equal(dev.read(bufs[2]).view(np.float32), a + a)


def test_a_trap_is_a_kernel_trap_and_the_device_stays_usable(dev):
    a = np.arange(100, dtype=np.float32)
    bufs = upload(dev, a, a, np.zeros(120, np.float32))
    launch(dev, S.add_kernel(), bufs, (), 2)
    dev.synchronize()
    with pytest.raises(KernelTrap, match="out of bounds"):
        check_traps(dev)
    check_traps(dev)                        # cleared
    test_a_kernel_runs_as_llvm_emits_it_and_matches_numpy(dev)


def test_foreign_programs_and_wrong_launches_are_refused(dev):
    with pytest.raises(DeviceError, match="expected SPIR-V bytes"):
        dev.load(SimpleNamespace(data="not bytes", name="k"))
    with pytest.raises(DeviceError, match="not a SPIR-V module"):
        dev.load(b"\x00" * 64)
    program = dev.load(compile_kernel(S.add_kernel(), "spirv", arch="vulkan1.3"))
    with pytest.raises(DeviceError, match="takes 5 buffers"):
        dev.dispatch(program, [dev.allocate(4)], (1, 1, 1))
    with pytest.raises(DeviceError, match="not a program loaded on this device"):
        dev.dispatch("prog", [], (1, 1, 1))


def test_a_kernel_needing_a_missing_feature_is_refused_by_dtype(dev, monkeypatch):
    art = compile_kernel(S.add_kernel(dt.float64, wg=48), "spirv", arch="vulkan1.3")
    monkeypatch.setattr(dev, "features", dev.features - {"shaderFloat64"})
    with pytest.raises(DTypeError, match="uses float64, which needs the device feature 'shaderFloat64'"):
        dev.load(art)


def _recorded(dev, n=4096):
    kernel = S.add_kernel(wg=64)
    prog = dev.load(compile_kernel(kernel, "spirv", arch="vulkan1.3"))
    from poot.jit.llvm.abi import pack_meta

    a = np.arange(n, dtype=np.float32)
    x, y, out = upload(dev, a, 2 * a, np.zeros(n, np.float32))
    meta, = upload(dev, pack_meta(kernel, [n, n, n], (), (n // 64, 1, 1)))
    trap, = upload(dev, np.zeros(4, np.uint32))
    tmp = dev.allocate(4 * n)
    with dev.record() as rec:
        dev.dispatch(prog, [x, y, tmp, meta, trap], (n // 64, 1, 1))
        dev.dispatch(prog, [tmp, x, out, meta, trap], (n // 64, 1, 1))
    return rec, a, x, out


def test_record_runs_nothing_and_replay_matches_eager(dev):
    rec, a, x, out = _recorded(dev)
    assert np.array_equal(dev.read(out).view(np.float32), np.zeros_like(a))
    rec.replay()
    assert np.array_equal(dev.read(out).view(np.float32), 4 * a)
    assert len(rec.variants) == 1


def test_replay_with_rebound_buffers_reuses_its_command_buffers(dev):
    rec, a, x, out = _recorded(dev)
    outs = [dev.allocate(out.nbytes) for _ in range(2)]
    x2, = upload(dev, 10 * a)
    for k in range(6):
        rec.replay({out: outs[k % 2], x: x2 if k % 2 else x})
    assert np.array_equal(dev.read(outs[0]).view(np.float32), 4 * a)
    assert np.array_equal(dev.read(outs[1]).view(np.float32), 2 * a + 20 * a)
    assert len(rec.variants) == 3           # as recorded, and the two sets of buffers used since


def test_recording_refuses_host_work_and_bad_replays(dev):
    rec, a, x, out = _recorded(dev)
    with dev.record():
        with pytest.raises(DeviceError, match="inside a recording"):
            dev.write(x, a)
        with pytest.raises(DeviceError, match="inside a recording"):
            dev.synchronize()
        with pytest.raises(DeviceError, match="inside a recording"):
            rec.replay()
    with pytest.raises(DeviceError, match="smaller|at least the recorded size"):
        rec.replay({out: dev.allocate(8)})
    with pytest.raises(DeviceError, match="not a buffer of this recording"):
        rec.replay({dev.allocate(8): out})
    dev.free(x)
    with pytest.raises(DeviceError, match="which was freed"):
        rec.replay()


def test_jitted_programs_replay_on_vulkan(dev):
    @pt.jit
    def f(x, y):
        return (pt.exp(x) * y).sum(axis=1) + 1.0

    a = np.random.default_rng(3).random((64, 300), dtype=np.float32)
    b = np.random.default_rng(4).random((64, 300), dtype=np.float32)
    with pt.device("vulkan"):
        for _ in range(3):
            got = f(pt.array(a), pt.array(b)).numpy()
    np.testing.assert_allclose(got, (np.exp(a) * b).sum(axis=1) + 1.0, rtol=2e-5)


def test_pipeline_cache_is_written_under_poot_cache_dir(tmp_path):
    code = """
        import numpy as np, poot as pt
        from poot import devices
        dev = devices.get("vulkan")
        x = pt.array(np.arange(10, dtype=np.float32), device="vulkan")
        print((x * 3.0).numpy().sum(), dev._cache_path)
    """
    first = child(code, POOT_CACHE_DIR=str(tmp_path))
    if "DeviceUnavailableError" in first.stderr:
        pytest.skip("no Vulkan device here")
    assert first.returncode == 0, first.stderr[-3000:]
    total, path = first.stdout.split()
    assert float(total) == 135.0 and path.startswith(str(tmp_path / "vulkan")) and os.path.isfile(path)
    again = child(code, POOT_CACHE_DIR=str(tmp_path))           # loads it back
    assert again.returncode == 0 and again.stdout.split()[0] == "135.0", again.stderr[-3000:]
    off = child(code, POOT_CACHE_DIR=str(tmp_path / "off"), POOT_DISK_CACHE="0")
    assert off.returncode == 0 and off.stdout.split()[1] == "None", off.stderr[-3000:]
    cleared = child("from poot.jit.llvm import cache; cache.cache_clear()", POOT_CACHE_DIR=str(tmp_path))
    assert cleared.returncode == 0 and not os.path.exists(path), cleared.stderr[-3000:]    # poot cache clear


def test_poot_debug_prints_gpu_time_per_kernel(dev):
    out = child("""
        import numpy as np, poot as pt
        from poot import devices
        with pt.device("vulkan"):
            (pt.array(np.ones(1000, np.float32)) * 2.0).numpy()
        times = devices.get("vulkan").kernel_times
        assert times and all(us >= 0 for _, _, us in times), times
    """, POOT_DEBUG="1")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "us GPU time" in out.stderr


def test_no_validation_errors_on_the_device_paths(tmp_path):
    """Transfers, launches, folding, traps, replays and timestamps under the Khronos validation layer."""
    out = child(f"""
        import sys
        sys.path.insert(0, {os.path.join(ROOT, 'tests', 'devices')!r})
        sys.path.insert(0, {os.path.join(ROOT, 'tests', 'jit')!r})
        import numpy as np, pytest
        from poot import devices
        import test_vulkan_device as T
        dev = devices.get("vulkan")
        for n in (3, (9 << 20) + 5):
            T.test_transfers_round_trip(dev, n)
        T.test_a_kernel_runs_as_llvm_emits_it_and_matches_numpy(dev)
        T.test_a_trap_is_a_kernel_trap_and_the_device_stays_usable(dev)
        T.test_replay_with_rebound_buffers_reuses_its_command_buffers(dev)
        T.test_jitted_programs_replay_on_vulkan(dev)
        dev.trim()
        print("messages:", len(dev.validation_messages))
        for m in dev.validation_messages[:5]:
            print(m)
    """, POOT_VULKAN_VALIDATION="1", POOT_DEBUG="1", POOT_CACHE_DIR=str(tmp_path))
    if "VK_LAYER_KHRONOS_validation layer is not installed" in out.stderr or "no Vulkan" in out.stderr:
        pytest.skip("the Khronos validation layer or a Vulkan device is missing (apt install vulkan-validationlayers)")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "messages: 0" in out.stdout, out.stdout[-4000:]


def test_poot_vulkan_device_picks_by_name_or_refuses(dev):
    from poot.devices.vulkan_setup import pick_physical_device

    old = os.environ.get("POOT_VULKAN_DEVICE")
    try:
        os.environ["POOT_VULKAN_DEVICE"] = dev.info["name"][:6]
        assert pick_physical_device(dev._vk, dev._instance)[1]["name"] == dev.info["name"]
        os.environ["POOT_VULKAN_DEVICE"] = "no such gpu"
        with pytest.raises(DeviceUnavailableError, match="no device matches POOT_VULKAN_DEVICE='no such gpu'"):
            pick_physical_device(dev._vk, dev._instance)
    finally:
        if old is None:
            os.environ.pop("POOT_VULKAN_DEVICE", None)
        else:
            os.environ["POOT_VULKAN_DEVICE"] = old


def test_threads_opening_the_device_at_once_share_it_and_each_gets_its_own_result(dev):
    """Eight threads whose first use of vulkan comes at the same moment: one device is made (two made at
    once refused each other's buffers: "is not a buffer of this Vulkan device"), and their concurrent
    calls of one jitted program (replays and step-by-step runs) each give the caller its own result."""
    out = child("""
        import threading
        import numpy as np, poot as pt

        f = pt.jit(lambda x: pt.sqrt(x * x + 1.0).sum())
        start, got, errors = threading.Barrier(8), {}, []

        def work(k):
            start.wait()
            try:
                with pt.device("vulkan"):
                    got[k] = [float(f(pt.array(np.full(257, k, np.float32)))) for _ in range(20)]
            except Exception as e:
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("errors:", len(errors), errors[:2])
        for k in range(8):
            np.testing.assert_allclose(got[k], [257 * np.sqrt(k * k + 1.0)] * 20, rtol=1e-5, err_msg=str(k))
        print("ok")
    """)
    assert out.returncode == 0 and "errors: 0" in out.stdout and "ok" in out.stdout, \
        out.stdout[-3000:] + out.stderr[-3000:]


def test_waits_poll_the_fence_on_a_gpu_and_block_on_a_cpu_driver(dev, monkeypatch):
    """A GPU's fence is polled before the blocking wait (its driver wakes a blocked waiter late); a CPU
    driver's threads need the cores, so there the wait blocks at once. Either way a read sees the work."""
    assert dev._spin_wait == (dev.info["type"] != "CPU")
    monkeypatch.setattr(dev, "_spin_wait", True)
    with pt.device("vulkan"):
        x = pt.asarray(np.arange(1 << 16, dtype=np.float32))
        np.testing.assert_array_equal((pt.sin(x) * 0 + x * 2).numpy(), np.arange(1 << 16, dtype=np.float32) * 2)
