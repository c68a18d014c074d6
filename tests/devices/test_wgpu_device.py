"""The wgpu device on a real adapter (lavapipe where there is no GPU): transfers, dispatch, grid folding,
limits, traps, record/replay. Programs here are hand-written LLVM IR (Vulkan flavour) compiled by
llvmlite's SPIR-V backend and the naga post-pass, so the device is tested without the KIR lowering."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import DeviceError, DeviceUnavailableError, DTypeError, KernelTrap

llvm = pytest.importorskip("llvmlite.binding")


def _device():
    try:
        return devices.get("wgpu")
    except DeviceUnavailableError as e:
        pytest.skip(f"no wgpu adapter here: {e}")


@pytest.fixture(scope="module")
def dev():
    return _device()


# --- a tiny LLVM IR kit for Vulkan compute shaders ------------------------------------------------
TRIPLE = "spirv1.6-unknown-vulkan1.3-compute"
_ELEM = {"float": "f32", "i32": "i32"}


def _handle_type(elem: str) -> str:
    return f'target("spirv.VulkanBuffer", [0 x {elem}], 12, 1)'


def spirv_kernel(bindings, body: str, workgroup=(64, 1, 1), globals_: str = "") -> bytes:
    """Compile a compute shader whose buffers are `bindings` [(name, "float"|"i32")] at 0..n-1. In
    `body`, `PTR(name, %index)` is a pointer to an element of buffer `name`."""
    elems = dict(bindings)

    def pointer(m):
        name, idx = m.group(1), m.group(2)
        t, mangled = _handle_type(elems[name]), f"tspirv.VulkanBuffer_a0{_ELEM[elems[name]]}_12_1t"
        return f"call ptr addrspace(11) @llvm.spv.resource.getpointer.p11.{mangled}({t} %h.{name}, i32 {idx})"

    body = re.sub(r"PTR\((\w+), ([%\w.]+)\)", pointer, body)
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(opt=2)
    decls, names, handles = [], [], []
    for elem in sorted({e for _, e in bindings}):
        t, m = _handle_type(elem), f"tspirv.VulkanBuffer_a0{_ELEM[elem]}_12_1t"
        decls.append(f"declare {t} @llvm.spv.resource.handlefrombinding.{m}(i32, i32, i32, i32, ptr)")
        decls.append(f"declare ptr addrspace(11) @llvm.spv.resource.getpointer.p11.{m}({t}, i32)")
    for k, (name, elem) in enumerate(bindings):
        t, m = _handle_type(elem), f"tspirv.VulkanBuffer_a0{_ELEM[elem]}_12_1t"
        names.append(f'@.str.{name} = private unnamed_addr constant [{len(name) + 1} x i8] c"{name}\\00"')
        handles.append(f"  %h.{name} = call {t} @llvm.spv.resource.handlefrombinding.{m}"
                       f"(i32 0, i32 {k}, i32 1, i32 0, ptr @.str.{name})")
    ir = "\n".join([
        f'target datalayout = "{tm.target_data}"', f'target triple = "{TRIPLE}"', *names, globals_, *decls,
        "declare i32 @llvm.spv.thread.id.i32(i32)", "declare i32 @llvm.spv.thread.id.in.group.i32(i32)",
        "declare i32 @llvm.spv.group.id.i32(i32)", "declare i32 @llvm.spv.num.workgroups.i32(i32)",
        "declare void @llvm.spv.group.memory.barrier.with.group.sync()",
        "define void @main() #0 {", "entry:", *handles, body, "}",
        'attributes #0 = { convergent "hlsl.shader"="compute" "hlsl.numthreads"="%d,%d,%d" }' % workgroup])
    mod = llvm.parse_assembly(ir)
    mod.verify()
    spv = tm.emit_object(mod)
    from poot.jit.llvm.targets.spirv.naga import duplicate_ids, fix_for_naga

    if duplicate_ids(spv):   # LLVM's SPIR-V backend after many modules in one process (spirv_worker.py
        from poot.jit.llvm.targets.spirv import worker as spirv_worker   # says why): compile in a fresh worker, as poot does

        spirv_worker.restart()
        spv = spirv_worker.compile_spirv(ir, "main")
    fixed = fix_for_naga(spv)
    spirv_val(fixed)
    return fixed


def spirv_val(spv: bytes) -> None:
    if shutil.which("spirv-val") is None:
        return
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", "-"], input=spv, capture_output=True)
    assert r.returncode == 0, r.stderr.decode() + r.stdout.decode()


# out[i] = a[i] + b[i] for i < meta[0]
ADD = """  %i = call i32 @llvm.spv.thread.id.i32(i32 0)
  %pn = PTR(meta, 0)
  %n = load i32, ptr addrspace(11) %pn
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %pa = PTR(a, %i)
  %pb = PTR(b, %i)
  %pc = PTR(c, %i)
  %va = load float, ptr addrspace(11) %pa
  %vb = load float, ptr addrspace(11) %pb
  %s = fadd float %va, %vb
  store float %s, ptr addrspace(11) %pc
  br label %exit
exit:
  ret void"""
ADD_BINDINGS = [("a", "float"), ("b", "float"), ("c", "float"), ("meta", "i32")]

# the folded-grid contract: linear group = x + y*PX + z*PX*PY over the physical NumWorkgroups;
# groups >= meta[0] (the logical group count) exit; thread 0 of each writes its linear group id.
GROUP_IDS = """  %gx = call i32 @llvm.spv.group.id.i32(i32 0)
  %gy = call i32 @llvm.spv.group.id.i32(i32 1)
  %gz = call i32 @llvm.spv.group.id.i32(i32 2)
  %px = call i32 @llvm.spv.num.workgroups.i32(i32 0)
  %py = call i32 @llvm.spv.num.workgroups.i32(i32 1)
  %pxy = mul i32 %px, %py
  %ly = mul i32 %gy, %px
  %lz = mul i32 %gz, %pxy
  %l0 = add i32 %gx, %ly
  %lin = add i32 %l0, %lz
  %lid = call i32 @llvm.spv.thread.id.in.group.i32(i32 0)
  %pn = PTR(meta, 0)
  %n = load i32, ptr addrspace(11) %pn
  %in = icmp ult i32 %lin, %n
  %first = icmp eq i32 %lid, 0
  %go = and i1 %in, %first
  br i1 %go, label %body, label %exit
body:
  %po = PTR(out, %lin)
  %old = load i32, ptr addrspace(11) %po
  %new = add i32 %old, %lin
  store i32 %new, ptr addrspace(11) %po
  br label %exit
exit:
  ret void"""

# a[i] < 0 -> trap word = 7 (the launch ABI's trap buffer is the last binding)
TRAPPING = """  %i = call i32 @llvm.spv.thread.id.i32(i32 0)
  %pa = PTR(a, %i)
  %va = load float, ptr addrspace(11) %pa
  %neg = fcmp olt float %va, 0.0
  br i1 %neg, label %trap, label %exit
trap:
  %pt = PTR(trap, 0)
  store i32 7, ptr addrspace(11) %pt
  br label %exit
exit:
  ret void"""


@pytest.fixture(scope="module")
def add_program(dev):
    return dev.load(SimpleNamespace(data=spirv_kernel(ADD_BINDINGS, ADD), name="add", entry="main"))


def upload(dev, array):
    buf = dev.allocate(array.nbytes)
    dev.write(buf, array)
    return buf


def download(dev, buf, dtype):
    return dev.read(buf).view(dtype)


# --- tests ----------------------------------------------------------------------------------------
def test_capabilities_come_from_the_adapter(dev):
    caps = dev.caps
    assert caps.target == "spirv" and caps.name == "wgpu"
    assert caps.max_buffer_bytes == min(dev.limits["max-storage-buffer-binding-size"], dev.limits["max-buffer-size"])
    assert caps.max_workgroup_size == dev.limits["max-compute-invocations-per-workgroup"]
    assert caps.float16 == ("shader-f16" in dev.features)
    assert caps.float64 == ("shader-f64" in dev.features)
    assert caps.int64 == ("shader-int64" in dev.features)
    assert caps.extra["max_workgroups_per_dimension"] >= 65535
    assert caps.max_buffers == dev.limits["max-storage-buffers-per-shader-stage"] >= 8


def test_devices_listing_names_the_wgpu_adapter(dev):
    entry = [row for row in devices.availability() if row[0] == "wgpu"]
    assert entry and entry[0][1] is True and str(dev.info["device"]) in entry[0][2]


@pytest.mark.parametrize("nbytes", [0, 1, 3, 4, 5, 1023, 4096, 100_003])
def test_write_read_round_trip(dev, nbytes):
    data = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    buf = upload(dev, data)
    assert buf.nbytes == nbytes
    np.testing.assert_array_equal(dev.read(buf), data)


def test_short_unaligned_write_keeps_the_rest_of_the_buffer(dev):
    buf = upload(dev, np.arange(16, dtype=np.uint8))
    dev.write(buf, np.array([200, 201, 202], np.uint8))
    np.testing.assert_array_equal(dev.read(buf), np.r_[200, 201, 202, np.arange(3, 16)].astype(np.uint8))


@pytest.mark.parametrize("nbytes", [0, 3, 8, 13, 16])
def test_copy_moves_exactly_nbytes(dev, nbytes):
    src = upload(dev, np.arange(16, dtype=np.uint8))
    dst = upload(dev, np.full(16, 255, np.uint8))
    dev.copy(dst, src, nbytes)
    expect = np.full(16, 255, np.uint8)
    expect[:nbytes] = np.arange(nbytes)
    np.testing.assert_array_equal(dev.read(dst), expect)


def test_write_larger_than_buffer_is_refused(dev):
    buf = dev.allocate(8)
    with pytest.raises(DeviceError, match="writing 12 bytes into a buffer of 8"):
        dev.write(buf, np.zeros(3, np.float32))


def test_array_beyond_the_binding_limit_is_refused_naming_the_limit(dev):
    too_big = dev.caps.max_buffer_bytes + 4
    with pytest.raises(DeviceError, match="max-storage-buffer-binding-size|max-buffer-size") as e:
        dev.allocate(too_big)
    assert f"{dev.caps.max_buffer_bytes:,}" in str(e.value)


def test_add_kernel_matches_numpy(dev, add_program):
    n = 1000                                           # not a multiple of the workgroup: bounds checked
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    bufs = [upload(dev, a), upload(dev, b), dev.allocate(4 * n), upload(dev, np.array([n], np.uint32))]
    dev.dispatch(add_program, bufs, (-(-n // 64), 1, 1))
    np.testing.assert_array_equal(download(dev, bufs[2], np.float32), a + b)


def test_output_bound_in_place_of_an_input(dev, add_program):
    a = np.arange(256, dtype=np.float32)
    ba, meta = upload(dev, a), upload(dev, np.array([256], np.uint32))
    for _ in range(MANY := 100):                       # more than MAX_PENDING dispatches in one stream
        dev.dispatch(add_program, [ba, ba, ba, meta], (4, 1, 1))
    np.testing.assert_array_equal(download(dev, ba, np.float32), a * 2.0 ** MANY)


def test_synchronize_waits_only_for_work_submitted_since_the_last_read(dev, add_program, monkeypatch):
    a = np.arange(256, dtype=np.float32)
    ba, meta = upload(dev, a), upload(dev, np.array([256], np.uint32))
    dev.synchronize()
    reads = []
    real = dev._read_range
    monkeypatch.setattr(dev, "_read_range", lambda *args, **kw: reads.append(args) or real(*args, **kw))
    dev.synchronize()                                  # idle: nothing to wait for, no mapping
    assert reads == []
    dev.dispatch(add_program, [ba, ba, ba, meta], (4, 1, 1))
    dev.synchronize()                                  # the dispatch is waited for
    assert len(reads) == 1
    dev.synchronize()
    assert len(reads) == 1
    np.testing.assert_array_equal(download(dev, ba, np.float32), a * 2)


def test_bind_groups_are_cached_per_buffer_set_and_never_stale(dev, add_program):
    bufs = [dev.allocate(16) for _ in range(4)]
    g1 = dev._bind_group(bufs)
    assert dev._bind_group(list(bufs)) is g1
    assert dev._bind_group(bufs[::-1]) is not g1
    dev.free(bufs[2])
    bufs[2] = dev.allocate(16)              # the pooled memory again: its group still names it
    assert bufs[2].handle is not None and dev._bind_group(bufs) is g1
    bufs[2] = dev.allocate(16)              # other memory: another group
    assert dev._bind_group(bufs) is not g1


def test_loading_the_same_artifact_twice_returns_the_cached_program(dev, add_program):
    again = dev.load(SimpleNamespace(data=spirv_kernel(ADD_BINDINGS, ADD), name="add", entry="main"))
    assert again is add_program


@pytest.mark.parametrize("grid", [(5, 3, 2), (70_000, 1, 1), (1, 200_000, 1), (65_536, 2, 3)])
def test_large_grids_are_folded_and_every_logical_group_runs_once(dev, grid):
    program = dev.load(SimpleNamespace(data=spirv_kernel([("out", "i32"), ("meta", "i32")], GROUP_IDS),
                                       name="group_ids", folds_grid=True))
    total = int(np.prod(grid))
    out, meta = upload(dev, np.zeros(total, np.uint32)), upload(dev, np.array([total], np.uint32))
    dev.dispatch(program, [out, meta], grid)
    np.testing.assert_array_equal(download(dev, out, np.uint32), np.arange(total, dtype=np.uint32))


def test_grid_over_the_cap_is_refused_for_a_program_that_does_not_fold(dev, add_program):
    bufs = [dev.allocate(4) for _ in range(4)]
    with pytest.raises(DeviceError, match="65,535 per dimension"):
        dev.dispatch(add_program, bufs, (262_144, 1, 1))


def test_trap_word_raises_kernel_trap_at_synchronize_then_clears(dev):
    program = dev.load(SimpleNamespace(data=spirv_kernel([("a", "float"), ("trap", "i32")], TRAPPING),
                                       name="checked", trap_sites={7: ("index out of range", "me.py:3")}))
    a = upload(dev, np.array([1.0, -1.0] * 32, np.float32))
    dev.dispatch(program, [a, dev.trap_buffer()], (1, 1, 1))
    with pytest.raises(KernelTrap) as e:
        dev.synchronize()
    assert (e.value.kernel, e.value.code, e.value.what, e.value.where) == ("checked", 7, "index out of range", "me.py:3")
    dev.synchronize()                                  # the word was cleared
    dev.write(a, np.ones(64, np.float32))
    dev.dispatch(program, [a, dev.trap_buffer()], (1, 1, 1))
    dev.synchronize()


def test_record_replay_runs_prebuilt_dispatches_on_current_buffer_contents(dev, add_program):
    n = 256
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    zeros = np.zeros(n, np.float32)          # allocate may hand back a pooled buffer's old bytes
    ba, bb, bc, bd = upload(dev, a), upload(dev, b), upload(dev, zeros), upload(dev, zeros)
    meta = upload(dev, np.array([n], np.uint32))
    with dev.record() as rec:
        dev.dispatch(add_program, [ba, bb, bc, meta], (4, 1, 1))      # c = a + b
        dev.dispatch(add_program, [bc, bb, bd, meta], (4, 1, 1))      # d = c + b
        dev.copy(ba, bd, 4 * n)                                       # a = d
    assert not download(dev, bd, np.float32).any()                   # nothing ran while recording
    np.testing.assert_array_equal(download(dev, ba, np.float32), a)
    rec.replay()
    np.testing.assert_array_equal(download(dev, ba, np.float32), a + b + b)
    rec.replay()                                                      # reads the new contents of a
    np.testing.assert_allclose(download(dev, ba, np.float32), a + 4 * b, rtol=1e-6)


def test_replay_with_rebound_buffers_uses_the_replacements(dev, add_program):
    n = 256
    a, b, a2 = (np.random.rand(n).astype(np.float32) for _ in range(3))
    ba, bb, meta = upload(dev, a), upload(dev, b), upload(dev, np.array([n], np.uint32))
    bc = upload(dev, np.zeros(n, np.float32))         # (a pooled allocation keeps its old bytes)
    with dev.record() as rec:
        dev.dispatch(add_program, [ba, bb, bc, meta], (4, 1, 1))
    ba2, bc2 = upload(dev, a2), dev.allocate(4 * n)
    rec.replay({ba: ba2, bc: bc2})
    np.testing.assert_array_equal(download(dev, bc2, np.float32), a2 + b)
    assert not download(dev, bc, np.float32).any()                   # the recorded output was left alone
    rec.replay()
    np.testing.assert_array_equal(download(dev, bc, np.float32), a + b)
    with pytest.raises(DeviceError, match="smaller"):
        rec.replay({ba: dev.allocate(8)})


def test_transfers_inside_a_recording_are_refused(dev):
    buf = dev.allocate(16)
    with dev.record():
        with pytest.raises(DeviceError, match="inside a recording"):
            dev.write(buf, np.zeros(4, np.float32))
        with pytest.raises(DeviceError, match="inside a recording"):
            dev.read(buf)


def test_replay_after_a_buffer_was_freed_is_refused(dev, add_program):
    bufs = [dev.allocate(256) for _ in range(3)] + [upload(dev, np.array([64], np.uint32))]
    with dev.record() as rec:
        dev.dispatch(add_program, bufs, (1, 1, 1))
    dev.free(bufs[0])
    with pytest.raises(DeviceError, match="was freed"):
        rec.replay()


def test_program_needing_a_missing_feature_is_refused_by_name(dev, monkeypatch):
    from poot.jit.llvm.targets.spirv.naga import assemble, parse

    header, insts = parse(spirv_kernel(ADD_BINDINGS, ADD))
    insts.insert(1, [(2 << 16) | 17, 10])              # OpCapability Float64
    monkeypatch.setattr(dev, "features", dev.features - {"shader-f64"})
    with pytest.raises(DTypeError, match="float64.*shader-f64"):
        dev.load(assemble(header, insts))


def test_foreign_buffer_and_bad_artifact_are_refused(dev, add_program):
    from poot.devices.cpu import CpuDevice

    cpu_buf = CpuDevice().allocate(16)
    with pytest.raises(DeviceError, match="not a buffer of this wgpu device"):
        dev.dispatch(add_program, [cpu_buf] * 4, (1, 1, 1))
    with pytest.raises(DeviceError, match="not a SPIR-V module"):
        dev.load(b"\x00" * 64)
    with pytest.raises(DeviceError, match="expected SPIR-V bytes"):
        dev.load(SimpleNamespace(text="hello"))


def test_missing_wgpu_package_is_reported_not_raised_as_traceback(monkeypatch):
    from poot.devices import wgpu as wgpu_device

    monkeypatch.setitem(sys.modules, "wgpu", None)     # import wgpu -> ImportError
    with pytest.raises(DeviceUnavailableError, match="'wgpu' package is not installed"):
        wgpu_device.WgpuDevice()


def test_no_matching_adapter_is_reported(monkeypatch):
    from poot.devices import wgpu as wgpu_device

    _device()
    monkeypatch.setenv("POOT_WGPU_ADAPTER", "no-such-gpu-anywhere")
    with pytest.raises(DeviceUnavailableError, match="no adapter matches"):
        wgpu_device.WgpuDevice()


def test_reads_poll_without_blocking_on_a_gpu_only(dev, monkeypatch):
    """On a GPU a read polls the device without blocking first (a blocked wait wakes late); on a CPU adapter
    its threads need the cores, so it blocks at once. Either way the read sees the work queued before it."""
    if dev._native is None:
        pytest.skip("wgpu-py's backend has no native command path here")
    assert dev._native.spin == (dev.info.get("adapter_type") != "CPU")
    monkeypatch.setattr(dev._native, "spin", True)
    with pt.device("wgpu"):
        x = pt.asarray(np.arange(1 << 16, dtype=np.float32))
        np.testing.assert_array_equal((pt.sin(x) * 0 + x * 2).numpy(), np.arange(1 << 16, dtype=np.float32) * 2)
