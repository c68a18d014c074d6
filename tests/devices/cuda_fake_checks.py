"""Checks of the CUDA device on the fake driver (fake_libcuda.c). Run by test_cuda_fake_driver.py in a child
process whose LD_LIBRARY_PATH loads the fake; this file is no test module of its own (pytest does not
collect it), and run directly without the fake it skips."""
from __future__ import annotations

import ctypes
import gc
import os
import threading

import numpy as np
import pytest

CHILD = os.environ.get("POOT_FAKE_LIBCUDA")
if not CHILD:
    pytest.skip("runs inside test_cuda_fake_driver.py's child process, on the fake driver", allow_module_level=True)


@pytest.fixture(scope="module")
def dev():
    from poot import devices

    return devices.get("cuda")


@pytest.fixture(scope="module")
def fake():
    return ctypes.CDLL(CHILD)


@pytest.fixture(scope="module")
def kit():
    pytest.importorskip("llvmlite.binding")
    import cuda_kernels

    return cuda_kernels


def upload(dev, array):
    buf = dev.allocate(array.nbytes)
    dev.write(buf, array)
    return buf


def meta_buf(dev, kit, lengths, groups, launch_id=1):
    return upload(dev, kit.meta(lengths, groups, launch_id))


def test_capabilities_come_from_device_attributes(dev):
    assert dev.name == "cuda:0" and dev.caps.target == "ptx"
    assert dev.caps.extra["arch"] == "sm_90" and dev.caps.extra["compute_capability"] == (9, 0)
    assert dev.caps.cores == 132 and dev.caps.subgroup_size == 32 and dev.caps.max_workgroup_size == 1024
    assert dev.caps.max_workgroups == (2**31 - 1, 65535, 65535) and dev.caps.max_buffer_bytes == 256 << 20
    assert dev.caps.extra["max_ptx_isa"] == "9.0" and "Fake H200" in dev.describe()
    assert dev.caps.extra["memory_pools"] is (os.environ.get("FAKE_CUDA_NO_POOLS") is None)


@pytest.mark.parametrize("n", [1, 4097, (1 << 20) + 1, 3 * (8 << 20) + 5])
def test_round_trip_small_and_through_the_pinned_ring(dev, n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    buf = upload(dev, data)
    out = dev.read(buf)
    assert out.dtype == np.uint8 and out.shape == (n,) and np.array_equal(out, data)


def test_back_to_back_staged_writes_keep_their_bytes(dev):
    a, b = (np.full(20 << 20, v, np.uint8) for v in (1, 2))
    ba, bb = upload(dev, a), upload(dev, b)          # the second write reuses chunks of the first
    assert (dev.read(ba) == 1).all() and (dev.read(bb) == 2).all()


def test_write_refuses_more_bytes_than_the_buffer(dev):
    from poot.errors import DeviceError

    buf = dev.allocate(8)
    with pytest.raises(DeviceError, match="writing 12 bytes into a buffer of 8"):
        dev.write(buf, np.zeros(3, np.float32))
    dev.write(buf, b"abcd")
    assert bytes(dev.read(buf)[:4]) == b"abcd"


def test_copy_and_its_bounds(dev):
    from poot.errors import DeviceError

    src, dst = upload(dev, np.arange(64, dtype=np.uint8)), upload(dev, np.zeros(64, np.uint8))
    dev.copy(dst, src, 10)
    assert list(dev.read(dst)[:11]) == list(range(10)) + [0]
    with pytest.raises(DeviceError, match="copy of 65 bytes"):
        dev.copy(dst, src, 65)


def test_dropped_buffers_go_back_to_the_pool(dev, fake):
    dev.trim()
    free0 = dev.memory_info()[0]
    frees = fake.fake_counter(3)
    buf = dev.allocate(1 << 20)
    address, fresh = buf.handle, dev.fresh_allocations
    assert dev.memory_info()[0] == free0 - (1 << 20)
    del buf
    gc.collect()                                   # kept for reuse: no driver call either way
    assert fake.fake_counter(3) == frees and dev.memory_info()[0] == free0 - (1 << 20)
    buf = dev.allocate(1 << 20)
    assert buf.handle == address and dev.fresh_allocations == fresh
    dev.free(buf)
    dev.trim()                                     # hands the kept memory back to the driver
    assert fake.fake_counter(3) == frees + 1 and dev.memory_info()[0] == free0


def test_out_of_memory_names_the_size_and_what_is_free(dev):
    from poot.errors import OutOfMemoryError

    with pytest.raises(OutOfMemoryError, match=r"allocating 1\.00 GiB \(1,073,741,824 bytes\).*more than"):
        dev.allocate(1 << 30)
    held = [dev.allocate(64 << 20) for _ in range(3)]
    with pytest.raises(OutOfMemoryError, match=r"(?s)out of device memory allocating .*free of 0\.25 GiB.*"
                                               r"poot holds .* in \d+ buffers"):
        dev.allocate(100 << 20)
    del held
    gc.collect()
    buf = dev.allocate(100 << 20)                  # usable again once memory is back
    dev.free(buf)


def test_load_is_cached_and_checks_the_artifact(dev, kit):
    from types import SimpleNamespace

    from poot.errors import DeviceError

    art = kit.artifact("poot_test_add")
    prog = dev.load(art)
    assert dev.load(art) is prog and prog.nparams == 5 and prog.workgroup == (128, 1, 1)
    with pytest.raises(DeviceError, match="has no entry 'nope'"):
        dev.load(SimpleNamespace(data=art.data, entry="nope", name="x", workgroup=(64,)))
    with pytest.raises(DeviceError, match="does not say its workgroup shape"):
        dev.load(SimpleNamespace(data=art.data, entry=art.entry, name="x"))
    with pytest.raises(DeviceError, match="compiled for sm_100.*arch='sm_90'"):
        dev.load(SimpleNamespace(data=art.data.replace(".target sm_80", ".target sm_100"), entry=art.entry,
                                 name="x", workgroup=(64,)))
    with pytest.raises(DeviceError, match="PTX ISA 9.9, newer than this driver"):
        dev.load(SimpleNamespace(data=art.data.replace(".version 8.0", ".version 9.9"), entry=art.entry,
                                 name="x", workgroup=(64,)))
    with pytest.raises(DeviceError, match="driver rejected the PTX of kernel 'bad'.*ptxas -arch=sm_90"):
        dev.load(SimpleNamespace(data=art.data + "\n// INVALID\n", entry=art.entry, name="bad", workgroup=(64,)))
    scalar = art.data.replace(".param .u64 .ptr .global .align 1 poot_test_add_param_4", ".param .u32 s")
    with pytest.raises(DeviceError, match="one 64-bit pointer per buffer"):
        dev.load(SimpleNamespace(data=scalar, entry=art.entry, name="x", workgroup=(64,)))
    with pytest.raises(DeviceError, match=r"needs blocks of \(2048, 1, 1\) threads"):
        dev.load(SimpleNamespace(data=art.data, entry=art.entry, name="big", workgroup=(2048,)))


def test_block_limit_follows_the_kernels_registers(dev, kit):
    from types import SimpleNamespace

    from poot.errors import DeviceError

    heavy = kit.ptx("poot_test_add").replace("poot_test_add", "poot_test_add_heavy")
    with pytest.raises(DeviceError, match=r"at most 256 threads per block"):
        dev.load(SimpleNamespace(data=heavy, entry="poot_test_add_heavy", name="heavy", workgroup=(512,)))


def test_dispatch_runs_and_checks_arguments(dev, kit):
    from poot.errors import DeviceError

    n = 1000
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    ba, bb, bc = upload(dev, a), upload(dev, b), dev.allocate(4 * n)
    trap = upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_add"))
    groups = (-(-n // 128), 1, 1)
    dev.dispatch(prog, [ba, bb, bc, meta_buf(dev, kit, [n] * 3, groups), trap], groups)
    dev.synchronize()
    assert np.array_equal(dev.read(bc).view(np.float32), a + b)
    with pytest.raises(DeviceError, match="takes 5 buffers"):
        dev.dispatch(prog, [ba, bb, bc], groups)
    gone = dev.allocate(16)
    dev.free(gone)
    with pytest.raises(DeviceError, match="was freed"):
        dev.dispatch(prog, [ba, bb, gone, ba, trap], groups)


def test_large_grids_are_folded(dev, kit):
    from types import SimpleNamespace

    from poot.errors import DeviceError

    logical = (3, 70000, 1)                       # y beyond the 65,535 limit
    total = 3 * 70000
    out = upload(dev, np.zeros(total, np.uint32))
    trap = upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_groups", workgroup=(32, 1, 1)))
    dev.dispatch(prog, [out, meta_buf(dev, kit, [total], logical), trap], logical)
    assert np.array_equal(dev.read(out).view(np.uint32), np.arange(1, total + 1, dtype=np.uint32))
    plain = dev.load(SimpleNamespace(**{**vars(kit.artifact("poot_test_groups", workgroup=(64, 1, 1))),
                                        "folds_grid": False}))
    with pytest.raises(DeviceError, match="does not rebuild a folded grid"):
        dev.dispatch(plain, [out, out, trap], logical)


def test_a_trap_word_leaves_the_device_usable(dev, kit):
    x = np.array([1.0, 4.0, -1.0, 9.0], np.float32)
    bx, by, trap = upload(dev, x), dev.allocate(16), upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_trap", workgroup=(32, 1, 1)))
    dev.dispatch(prog, [bx, by, meta_buf(dev, kit, [4, 4], (1,), launch_id=77), trap], (1,))
    words = dev.read(trap).view(np.uint32)
    assert words[0] == 2 and words[1] == 77
    dev.write(bx, np.abs(x))
    dev.write(trap, np.zeros(4, np.uint32))
    dev.dispatch(prog, [bx, by, meta_buf(dev, kit, [4, 4], (1,)), trap], (1,))
    assert np.array_equal(dev.read(by).view(np.float32), 2 * np.abs(x)) and dev.read(trap).view(np.uint32)[0] == 0


def test_a_mapped_trap_word_is_read_without_a_copy(dev, kit):
    """The trap word lives in mapped host memory (Device.allocate_host_read): kernels write it through
    its device address, the host reads and clears it after a wait, and a CUDA graph's replay writes it
    too."""
    x = np.array([1.0, -4.0, 2.0, 9.0], np.float32)
    bx, by, trap = upload(dev, x), dev.allocate(16), dev.allocate_host_read(16)
    assert type(trap).__name__ == "MappedBuffer" and dev.read(trap).view(np.uint32).tolist() == [0] * 4
    prog = dev.load(kit.artifact("poot_test_trap", workgroup=(32, 1, 1)))
    dev.dispatch(prog, [bx, by, meta_buf(dev, kit, [4, 4], (1,), launch_id=91), trap], (1,))
    assert dev.read(trap).view(np.uint32)[:2].tolist() == [2, 91]
    dev.write(trap, np.zeros(4, np.uint32))
    dev.write(bx, np.abs(x))
    meta = meta_buf(dev, kit, [4, 4], (1,), launch_id=92)
    with dev.record() as rec:
        dev.dispatch(prog, [bx, by, meta, trap], (1,))
    rec.replay()
    assert dev.read(trap).view(np.uint32)[0] == 0 and np.array_equal(dev.read(by).view(np.float32), 2 * np.abs(x))
    dev.write(bx, x)
    rec.replay()
    assert dev.read(trap).view(np.uint32)[:2].tolist() == [2, 92]
    from poot.errors import DeviceError

    dev.free(trap)
    with pytest.raises(DeviceError, match="was freed"):
        dev.read(trap)


def test_another_thread_gets_the_context_made_current(dev):
    result = {}

    def work():
        buf = upload(dev, np.arange(10, dtype=np.uint8))
        result["bytes"] = dev.read(buf).tolist()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert result["bytes"] == list(range(10))


def _chain(dev, kit, n=300):
    """tmp = a + b; out = tmp + b; copy out -> out2: buffers and the list of dispatches."""
    prog = dev.load(kit.artifact("poot_test_add"))
    groups = (-(-n // 128), 1, 1)
    bufs = {"a": upload(dev, np.arange(n, dtype=np.float32)), "b": upload(dev, np.ones(n, np.float32)),
            "tmp": dev.allocate(4 * n), "out": dev.allocate(4 * n), "out2": dev.allocate(4 * n),
            "trap": upload(dev, np.zeros(4, np.uint32)), "meta": meta_buf(dev, kit, [n] * 3, groups)}

    def run():
        dev.dispatch(prog, [bufs[k] for k in ("a", "b", "tmp", "meta", "trap")], groups)
        dev.dispatch(prog, [bufs[k] for k in ("tmp", "b", "out", "meta", "trap")], groups)
        dev.copy(bufs["out2"], bufs["out"], 4 * n)
    return bufs, run


def f32(dev, buf):
    return dev.read(buf).view(np.float32)


def test_graph_replay_equals_eager_and_rebinding_never_aliases(dev, kit, fake):
    n = 300
    bufs, run = _chain(dev, kit, n)
    run()
    eager = f32(dev, bufs["out2"]).copy()
    assert np.array_equal(eager, np.arange(n) + 2.0)
    dev.write(bufs["out2"], np.zeros(n, np.float32))
    launches = fake.fake_counter(0)
    with dev.record() as rec:
        run()
    assert fake.fake_counter(0) == launches and len(rec) == 3       # recording runs nothing
    assert np.array_equal(f32(dev, bufs["out2"]), np.zeros(n))
    dev.replay(rec)
    assert np.array_equal(f32(dev, bufs["out2"]), eager)
    # a second call with a new input and fresh outputs: only the nodes using them are updated
    a2, out_new, out2_new = upload(dev, np.full(n, 10.0, np.float32)), dev.allocate(4 * n), dev.allocate(4 * n)
    updates = fake.fake_counter(2)
    rec.replay({bufs["a"]: a2, bufs["out"]: out_new, bufs["out2"]: out2_new})
    assert fake.fake_counter(2) - updates == 3      # node 1 (a), node 2 (out), the copy (out, out2)
    assert np.array_equal(f32(dev, out2_new), np.full(n, 12.0)) and np.array_equal(f32(dev, out_new), np.full(n, 12.0))
    assert np.array_equal(f32(dev, bufs["out2"]), eager)             # the first call's output is untouched
    updates = fake.fake_counter(2)
    rec.replay({bufs["a"]: a2, bufs["out"]: out_new, bufs["out2"]: out2_new})
    assert fake.fake_counter(2) == updates                          # same buffers: no update
    dev.write(bufs["a"], np.full(n, 100.0, np.float32))
    rec.replay()                                                    # back on the recorded buffers
    assert np.array_equal(f32(dev, bufs["out2"]), np.full(n, 102.0))
    assert np.array_equal(f32(dev, out2_new), np.full(n, 12.0))


def test_replay_refusals(dev, kit):
    from poot.errors import DeviceError

    bufs, run = _chain(dev, kit)
    with dev.record() as rec:
        run()
        with pytest.raises(DeviceError, match="host-to-device write inside a recording"):
            dev.write(bufs["a"], np.zeros(3, np.float32))
        with pytest.raises(DeviceError, match="synchronize inside a recording"):
            dev.synchronize()
        with pytest.raises(DeviceError, match="already open"):
            with dev.record():
                pass
        with pytest.raises(DeviceError, match="still open"):
            dev.replay(rec)
    with pytest.raises(DeviceError, match="of 1,200 bytes by one of 4;"):
        dev.replay(rec, {bufs["out"]: dev.allocate(4)})
    with pytest.raises(DeviceError, match="not a buffer of this recording"):
        dev.replay(rec, {dev.allocate(4): dev.allocate(4)})
    dev.replay(rec)                                                 # every buffer live: found so once
    dev.replay(rec)
    dev.free(bufs["tmp"])                                           # a free since: looked at again
    with pytest.raises(DeviceError, match="which was freed"):
        dev.replay(rec)
    with dev.record() as empty:
        pass
    dev.replay(empty)                                               # nothing recorded: nothing runs


def test_no_device_and_bad_index_say_why(monkeypatch):
    from poot.devices.cuda import CudaDevice
    from poot.errors import DeviceUnavailableError

    with pytest.raises(DeviceUnavailableError, match="index 3 requested, this machine has 1 CUDA device"):
        CudaDevice(3)
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "0")
    with pytest.raises(DeviceUnavailableError, match="sees no CUDA device"):
        CudaDevice(0)


def test_zz_a_fault_is_sticky_and_named(dev, kit):
    """Last: after it the (fake) context is unusable, as a real one would be."""
    from poot.errors import DeviceError

    out, trap = dev.allocate(64), upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_fault", workgroup=(32, 1, 1)))
    dev.dispatch(prog, [out, meta_buf(dev, kit, [16], (1,)), trap], (1,))
    with pytest.raises(DeviceError, match=r"(?s)failed: a kernel faulted \(illegal address.*"
                                          r"'poot_test_fault' grid=\(1, 1, 1\).*sticky.*new process"):
        dev.synchronize()
    with pytest.raises(DeviceError, match="sticky"):
        dev.allocate(16)
