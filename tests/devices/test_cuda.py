"""The CUDA device on a real GPU: capabilities, transfers, launches, grid folding, traps, out-of-memory,
sticky faults (in a child process), graph replay against eager runs, and the @pt.kernel path through the
PTX target. Programs are the hand-written NVPTX kernels of cuda_kernels.py, so the device is tested
without the KIR lowering; the last tests go through it. Without a GPU these skip with the reason; the
tests at the top (ptxas, folding, the availability message) run everywhere.
Run on a GPU machine: python -m pytest -q tests/devices/test_cuda.py"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from poot import devices
from poot.errors import DeviceError, DeviceUnavailableError, KernelTrap, OutOfMemoryError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
from ptxas_tool import PTXAS, SKIP_REASON


# --- everywhere -----------------------------------------------------------------------------------
def test_poot_devices_says_why_cuda_is_unavailable_or_what_it_is():
    row = next(r for r in devices.availability() if r[0].startswith("cuda"))
    if row[1]:
        assert row[2].startswith("ptx target sm_") and "SMs" in row[2]
    else:
        assert row[2].startswith("cuda: ") and "Traceback" not in row[2]
        assert any(w in row[2] for w in ("not installed", "no NVIDIA driver", "sees no CUDA device", "failed"))


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_test_kernels_assemble_with_ptxas(arch, tmp_path):
    pytest.importorskip("llvmlite.binding")
    import cuda_kernels

    for name in cuda_kernels.KERNELS:
        path = tmp_path / f"{name}.ptx"
        path.write_text(cuda_kernels.ptx(name, arch))
        r = subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{name}: {r.stderr}"


def test_ptx_isa_follows_the_driver_version():
    from poot.devices.cuda_ptx import max_ptx_isa

    assert max_ptx_isa(13000) == (9, 0) and max_ptx_isa(12040) == (8, 4) and max_ptx_isa(12060) == (8, 5)
    assert max_ptx_isa(12080) == (8, 7) and max_ptx_isa(11080) == (7, 8)


def test_ptx_entries_reads_params_and_block_shape():
    from poot.devices.cuda_ptx import ptx_entries

    ptx = (".version 8.0\n.target sm_80\n.visible .entry k(\n .param .u64 .ptr .global .align 1 k_0,\n"
           " .param .u64 k_1\n)\n.reqntid 64, 2, 1\n{\n ret;\n}\n.visible .entry j()\n{\n ret;\n}\n")
    assert ptx_entries(ptx) == {"k": ([".u64", ".u64"], (64, 2, 1)), "j": ([], None)}


# --- on a GPU -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dev():
    try:
        return devices.get("cuda")
    except DeviceUnavailableError as e:
        pytest.skip(f"no CUDA device here: {e}")


@pytest.fixture(scope="module")
def kit(dev):
    pytest.importorskip("llvmlite.binding")
    import cuda_kernels

    return cuda_kernels


def upload(dev, array):
    buf = dev.allocate(array.nbytes)
    dev.write(buf, array)
    return buf


def f32(dev, buf):
    return dev.read(buf).view(np.float32)


def test_capabilities_match_the_gpu(dev):
    cc = dev.caps.extra["compute_capability"]
    assert dev.caps.target == "ptx" and dev.caps.extra["arch"] == f"sm_{cc[0]}{cc[1]}"
    assert dev.caps.subgroup_size == 32 and dev.caps.max_workgroup_size >= 1024 and dev.caps.cores > 0
    assert dev.caps.max_workgroups[1] >= 65535 and dev.caps.max_buffer_bytes > 2**30
    free, total = dev.memory_info()
    assert 0 < free <= total == dev.caps.extra["memory_bytes"]


@pytest.mark.parametrize("n", [0, 1, 4097, (1 << 20) + 1, 3 * (8 << 20) + 5])
def test_round_trip(dev, n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    buf = upload(dev, data)
    assert np.array_equal(dev.read(buf), data)
    if n:
        other = dev.allocate(n)
        dev.copy(other, buf, n)
        assert np.array_equal(dev.read(other), data)


@pytest.mark.parametrize("n", [1, 1000, (1 << 22) + 3])
def test_add_kernel(dev, kit, n):
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    b = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    ba, bb, bc = upload(dev, a), upload(dev, b), dev.allocate(4 * n)
    prog = dev.load(kit.artifact("poot_test_add", workgroup=(256, 1, 1)))
    groups = (-(-n // 256), 1, 1)
    dev.dispatch(prog, [ba, bb, bc, upload(dev, kit.meta([n] * 3, groups)), upload(dev, np.zeros(4, np.uint32))],
                 groups)
    dev.synchronize()
    assert np.array_equal(f32(dev, bc), a + b)        # one f32 add: exact


def test_program_for_the_gpu_arch_is_cached(dev, kit):
    art = kit.artifact("poot_test_add", arch=dev.caps.extra["arch"])
    assert dev.load(art) is dev.load(art)


def test_large_grids_are_folded(dev, kit):
    logical, total = (3, 70000, 1), 3 * 70000
    out, trap = upload(dev, np.zeros(total, np.uint32)), upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_groups", workgroup=(32, 1, 1)))
    dev.dispatch(prog, [out, upload(dev, kit.meta([total], logical)), trap], logical)
    assert np.array_equal(dev.read(out).view(np.uint32), np.arange(1, total + 1, dtype=np.uint32))


def test_blocks_over_the_limit_are_refused_at_load(dev, kit):
    with pytest.raises(DeviceError, match=r"needs blocks of \(2048, 1, 1\) threads"):
        dev.load(kit.artifact("poot_test_add", workgroup=(2048, 1, 1)))


def test_a_trap_leaves_the_context_usable(dev, kit):
    x = np.array([1.0, 4.0, -1.0, 9.0] * 100, np.float32)
    bx, by, trap = upload(dev, x), dev.allocate(x.nbytes), upload(dev, np.zeros(4, np.uint32))
    prog = dev.load(kit.artifact("poot_test_trap", workgroup=(64, 1, 1)))
    dev.dispatch(prog, [bx, by, upload(dev, kit.meta([400, 400], (7,), launch_id=77)), trap], (7,))
    words = dev.read(trap).view(np.uint32)
    assert words[0] == 2 and words[1] == 77
    dev.write(bx, np.abs(x))
    dev.write(trap, np.zeros(4, np.uint32))
    dev.dispatch(prog, [bx, by, upload(dev, kit.meta([400, 400], (7,))), trap], (7,))
    assert np.array_equal(f32(dev, by), 2 * np.abs(x)) and dev.read(trap).view(np.uint32)[0] == 0


def test_out_of_memory_names_the_size_and_leaves_the_device_usable(dev):
    total = dev.caps.max_buffer_bytes
    with pytest.raises(OutOfMemoryError, match=r"more than the GPU's whole memory"):
        dev.allocate(total + 1)
    held = dev.allocate(1 << 20)
    size = total - (1 << 19)
    with pytest.raises(OutOfMemoryError, match=rf"(?s)allocating .*\({size:,} bytes\).* free of .*poot holds"):
        dev.allocate(size)                        # 1 MiB is held (and the context takes some): never fits
    dev.free(held)
    assert np.array_equal(dev.read(upload(dev, np.arange(100, dtype=np.uint8))), np.arange(100, dtype=np.uint8))


def test_trim_hands_freed_pool_memory_back_to_the_driver(dev):
    if not dev.caps.extra["memory_pools"]:
        pytest.skip("this GPU has no memory pools: freed memory goes straight back to the driver")
    dev.free(dev.allocate(1 << 30))
    dev.synchronize()
    kept = dev.memory_info()[0]                   # the freed GiB stays in poot's pool for reuse
    dev.trim()
    assert dev.memory_info()[0] - kept >= (1 << 30) - (64 << 20)


def test_another_thread_can_use_the_device(dev):
    seen = {}

    def work():
        seen["bytes"] = dev.read(upload(dev, np.arange(10, dtype=np.uint8))).tolist()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["bytes"] == list(range(10))


def test_graph_replay_equals_eager_and_outputs_never_alias(dev, kit):
    n = 100_003
    prog = dev.load(kit.artifact("poot_test_add", workgroup=(256, 1, 1)))
    groups = (-(-n // 256), 1, 1)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ba, bb = upload(dev, a), upload(dev, b)
    tmp, out, out2 = dev.allocate(4 * n), dev.allocate(4 * n), dev.allocate(4 * n)
    meta, trap = upload(dev, kit.meta([n] * 3, groups)), upload(dev, np.zeros(4, np.uint32))

    def run():
        dev.dispatch(prog, [ba, bb, tmp, meta, trap], groups)
        dev.dispatch(prog, [tmp, bb, out, meta, trap], groups)
        dev.copy(out2, out, 4 * n)

    run()
    eager = f32(dev, out2).copy()
    assert np.array_equal(eager, (a + b) + b)
    dev.write(out2, np.zeros(n, np.float32))
    with dev.record() as rec:
        run()
    assert not f32(dev, out2).any()                  # recording ran nothing
    dev.replay(rec)
    assert np.array_equal(f32(dev, out2), eager)
    a2 = rng.standard_normal(n).astype(np.float32)
    calls = []
    for _ in range(3):                               # each call: a new input, fresh outputs
        new_a, new_out, new_out2 = upload(dev, a2), dev.allocate(4 * n), dev.allocate(4 * n)
        rec.replay({ba: new_a, out: new_out, out2: new_out2})
        calls.append(new_out2)
    for buf in calls:
        assert np.array_equal(f32(dev, buf), (a2 + b) + b)
    assert np.array_equal(f32(dev, out2), eager)     # the recorded outputs were not written again


_FAULT = """
import numpy as np, sys
sys.path.insert(0, {here!r})
import cuda_kernels as kit
from poot import devices
from poot.errors import DeviceError
dev = devices.get("cuda")
out, trap = dev.allocate(64), dev.allocate(16)
meta = dev.allocate(32)
dev.write(meta, kit.meta([16], (1,)))
dev.dispatch(dev.load(kit.artifact("poot_test_fault", workgroup=(32, 1, 1))), [out, meta, trap], (1,))
try:
    dev.synchronize()
    print("NO ERROR")
except DeviceError as e:
    print("FIRST:", e)
try:
    dev.allocate(16)
except DeviceError as e:
    print("SECOND:", e)
"""


def test_an_illegal_address_is_named_and_sticky(dev, kit):
    """In a child process: a sticky error ends CUDA use for the whole process. This process hands its
    pool's cached memory back first, so the child can make its own context."""
    dev.trim()
    free, total = dev.memory_info()
    r = subprocess.run([sys.executable, "-c", _FAULT.format(here=HERE)], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert "FIRST:" in r.stdout, f"(GPU memory free before the child: {free:,} of {total:,})\n{r.stdout}{r.stderr}"
    first = r.stdout.split("FIRST:")[1]
    assert "poot_test_fault" in first and "sticky" in first and "CUDA_ERROR_" in first
    assert "SECOND:" in r.stdout and "sticky" in r.stdout.split("SECOND:")[1]


# --- through poot's PTX target -----------------------------------------------------------------------
def test_a_kernel_trap_raises_kernel_trap_and_the_next_launch_works(dev):
    import poot as pt

    sys.path.insert(0, os.path.join(ROOT, "kernels", "probe"))
    try:
        import trap as probe
    finally:
        sys.path.pop(0)
    ctx = pt.Context("cuda")
    x = np.random.default_rng(0).random(300).astype(np.float32) * 100
    bad = x.copy()
    bad[137] = -1.0
    with pytest.raises(KernelTrap, match="checked_sqrt.*negative input"):
        probe.checked_sqrt(ctx, bad, np.zeros(300, np.float32))     # raises on return, or at the sync
        ctx.synchronize()
    y = np.zeros(300, np.float32)
    probe.checked_sqrt(ctx, x, y)
    ctx.synchronize()
    np.testing.assert_allclose(y, np.sqrt(x), rtol=2 * np.finfo(np.float32).eps)


def test_arrays_realize_on_cuda():
    import poot as pt

    try:
        ctx = pt.device("cuda")
    except DeviceUnavailableError as e:
        pytest.skip(f"no CUDA device here: {e}")
    x = np.random.default_rng(3).standard_normal(1_000_003).astype(np.float32)
    with ctx:
        y = (pt.exp(pt.array(x)) * 2.0 + 1.0).numpy()
    np.testing.assert_allclose(y, np.exp(x) * 2 + 1, rtol=8 * np.finfo(np.float32).eps, atol=0)
