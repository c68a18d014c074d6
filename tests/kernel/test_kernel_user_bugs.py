"""Bugs a user of `@pt.kernel` met, each pinned on the emulator and on every device of POOT_TEST_DEVICES
(cpu, vulkan, wgpu): launches on poot Arrays are value updates (docs/kernels.md, Launching), the
statements inside a device function folded to a literal still run, traps surface at a host read,
shared writes at index 0 compile for SPIR-V, the emulator refuses races a device would time differently, and
the refusals name what they refuse (a subgroup exchange on the CPU: the kernel, the operation and its line)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import poot as pt
from poot.errors import ArgumentError, KernelImportError, LoweringError, NotBuiltError, PootError


def ctx_of(device: str) -> pt.Context:
    return pt.Context(device)


# --- launches on poot Arrays: the array takes a new value, nothing else changes ---------------------------
@pt.kernel
def fill7(y: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = 7.0


@pt.kernel
def add7(y: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] += 7.0


@pt.kernel(workgroup=(4,))
def shift(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    n = len(c)
    if i < n:
        c[i] = a[(i + 1) % n]


def test_values_computed_before_a_launch_keep_the_old_value(device):
    y = pt.asarray(np.zeros(4, np.float32))
    z, s, c = y * 2.0, y[1:3], y.copy()
    fill7(ctx_of(device), y)
    assert z.numpy().tolist() == [0.0] * 4
    assert s.numpy().tolist() == [0.0] * 2
    assert c.numpy().tolist() == [0.0] * 4
    assert y.numpy().tolist() == [7.0] * 4


@pytest.mark.parametrize("view", [lambda a: a[:], lambda a: a.reshape(2, 4).reshape(8), lambda a: a.astype(pt.f32)])
def test_an_array_sharing_memory_with_the_launched_one_keeps_its_value(device, view):
    base = pt.asarray(np.zeros(8, np.float32))
    base.numpy()
    v = view(base)
    fill7(ctx_of(device), v)
    assert base.numpy().tolist() == [0.0] * 8
    assert v.numpy().tolist() == [7.0] * 8


def test_a_slice_is_a_copy_written_back_through_the_base(device):
    acc = pt.asarray(np.zeros(8, np.float32))
    s = acc[::2]
    fill7(ctx_of(device), s)
    assert acc.numpy().tolist() == [0.0] * 8          # slices are copies (docs/array-api.md)
    acc[::2] = s
    assert acc.numpy().tolist() == [7.0, 0.0] * 4


def test_a_launch_writes_in_place_where_nothing_else_sees_the_array(device):
    y = pt.asarray(np.ones(1 << 16, np.float32))
    add7(ctx_of(device), y)
    first = id(y._node.buf)
    add7(ctx_of(device), y)
    assert id(y._node.buf) == first                  # no copy per launch
    assert float(y[5]) == 15.0


def test_a_host_view_taken_before_a_launch_keeps_the_old_value(device):
    y = pt.asarray(np.ones(4, np.float32)) + 0.0
    held = y.numpy()
    add7(ctx_of(device), y)
    assert held.tolist() == [1.0] * 4
    assert y.numpy().tolist() == [8.0] * 4


def test_one_array_as_input_and_output_reads_the_old_value_as_numpy_arguments_do(device):
    want = np.roll(np.arange(8, dtype=np.float32), -1)
    x = pt.asarray(np.arange(8, dtype=np.float32))
    shift(ctx_of(device), x, x)
    assert x.numpy().tolist() == want.tolist()
    h = np.arange(8, dtype=np.float32)
    shift(ctx_of(device), h, h)
    assert h.tolist() == want.tolist()


def test_the_emulator_copies_aliased_arguments_as_the_devices_do(device):
    x = np.arange(8, dtype=np.float32)
    shift.emulate(x, x)
    y = np.arange(8, dtype=np.float32)
    shift(ctx_of(device), y, y)
    assert x.tolist() == y.tolist() == np.roll(np.arange(8, dtype=np.float32), -1).tolist()


# --- device functions folded to a literal keep their effects ----------------------------------------------
@pt.device_fn
def mark(buf, i):
    buf[i] = 7
    return 1


@pt.kernel(workgroup=(4,))
def mark_in_ifexp(m: pt.Out[pt.i32], o: pt.Out[pt.i32]):
    i = pt.thread_index()
    o[i] = mark(m, i) if i > 1 else 0


@pt.kernel(workgroup=(4,))
def mark_as_value(m: pt.Out[pt.i32], o: pt.Out[pt.i32]):
    i = pt.thread_index()
    o[i] = mark(m, i)


@pt.kernel(workgroup=(4,))
def mark_as_condition(m: pt.Out[pt.i32], o: pt.Out[pt.i32]):
    i = pt.thread_index()
    if mark(m, i):
        o[i] = 1


@pt.kernel(workgroup=(4,))
def mark_short_circuit(m: pt.Out[pt.i32], o: pt.Out[pt.i32]):
    i = pt.thread_index()
    o[i] = pt.i32(i > 1 and mark(m, i) == 1)


@pytest.mark.parametrize("kernel, marked", [(mark_in_ifexp, [0, 0, 7, 7]), (mark_as_value, [7] * 4),
                                            (mark_as_condition, [7] * 4), (mark_short_circuit, [0, 0, 7, 7])])
def test_stores_in_a_device_function_returning_a_literal_happen(device, kernel, marked):
    written = [int(v == 7) for v in marked]
    for run in ("emulate", device):
        m, o = np.zeros(4, np.int32), np.zeros(4, np.int32)
        if run == "emulate":
            kernel.emulate(m, o)
        else:
            kernel(ctx_of(run), m, o)
        assert m.tolist() == marked, run
        assert o.tolist() == written, run


@pt.device_fn
def positive_part(x):
    if x > 0.0:
        return x


@pt.kernel(workgroup=(4,))
def uses_partial_return(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    c[i] = positive_part(a[i])


@pt.device_fn
def stores_only(buf, i):
    buf[i] = 1.0


@pt.kernel(workgroup=(4,))
def uses_void_value(c: pt.Out[pt.f32]):
    i = pt.thread_index()
    c[i] = stores_only(c, i)


def test_a_device_function_returning_a_value_on_some_paths_is_refused(device):
    a, c = np.ones(4, np.float32), np.zeros(4, np.float32)
    for call in (lambda: uses_partial_return.emulate(a, c), lambda: uses_partial_return(ctx_of(device), a, c)):
        with pytest.raises(KernelImportError) as e:
            call()
        assert e.value.code == "kernel-import::return-value"
        assert "positive_part" in str(e.value) and e.value.file.endswith("test_kernel_user_bugs.py")
    with pytest.raises(KernelImportError) as e:
        uses_void_value.kir
    assert e.value.code == "kernel-import::return-value"


# --- traps of launches on poot Arrays surface at the next host read -------------------------------------
@pt.kernel
def reads_past_end(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(c):
        c[i] = a[i + 1]


@pytest.mark.parametrize("read", ["numpy", "float", "block_until_ready", "copy_to_host_async", "other array"])
def test_a_launch_trap_raises_at_the_next_host_read_once(device, read):
    with pt.device(device):
        a, c = pt.asarray(np.arange(8, dtype=np.float32)), pt.zeros(8, dtype=pt.f32)
        reads = {"numpy": lambda: c.numpy(), "float": lambda: float(c[0]), "block_until_ready": c.block_until_ready,
                 "copy_to_host_async": lambda: c.copy_to_host_async().numpy(), "other array": lambda: (a * 2).numpy()}
        with pytest.raises(pt.KernelTrap) as e:
            reads_past_end(ctx_of(device), a, c)      # the CPU raises here, within the call
            reads[read]()                              # a GPU at the next host read of its device
        assert e.value.kernel == "reads_past_end"
        assert re.search(r"test_kernel_user_bugs\.py:\d+", str(e.value))
        pt.synchronize()                               # raised once: nothing pending afterwards
        c.numpy()


# --- shared-array writes at index 0 on SPIR-V ------------------------------------------------------------
@pt.kernel(workgroup=(8,))
def shared_store_at_0(c: pt.Out[pt.f32]):
    s = pt.shared(pt.f32, 8)
    if pt.local_index() == 0:
        s[0] = 3.0
    pt.workgroup_barrier()
    c[pt.thread_index()] = s[0]


@pt.kernel(workgroup=(8,))
def shared_atomic_at_0(c: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 4)
    j = 0
    if pt.local_index() == 0:
        s[j] = 0
    pt.workgroup_barrier()
    pt.atomic_add(s, 0, 1)
    pt.workgroup_barrier()
    c[pt.thread_index()] = s[0]


@pt.kernel(workgroup=(4,))
def shared_unrolled_stores(c: pt.Out[pt.f32]):
    s = pt.shared(pt.f32, 4)
    for k in range(4):
        s[k] = 2.0
    pt.workgroup_barrier()
    c[pt.thread_index()] = s[pt.local_index()]


@pytest.mark.parametrize("kernel, dtype, want", [(shared_store_at_0, np.float32, 3), (shared_atomic_at_0, np.int32, 8),
                                                 (shared_unrolled_stores, np.float32, 2)])
def test_shared_writes_at_a_constant_index_0_compile_everywhere(device, kernel, dtype, want):
    for run in ("emulate", device):
        c = np.zeros(8, dtype)
        kernel.emulate(c) if run == "emulate" else kernel(ctx_of(run), c)
        assert c.tolist() == [want] * 8, run


# --- float atomics into shared arrays on wgpu ----------------------------------------------------------------
@pt.kernel(workgroup=(64,))
def shared_float_atomic(x: pt.In[pt.f32], s: pt.InOut[pt.f32]):
    sh = pt.shared(pt.f32, 4)
    lid = pt.local_index()
    if lid < 4:
        sh[lid] = 0.0
    pt.workgroup_barrier()
    pt.atomic_add(sh, lid % 4, x[pt.thread_index()])
    pt.workgroup_barrier()
    if lid < 4:
        pt.atomic_add(s, lid, sh[lid])


def test_a_float_atomic_into_shared_memory_is_not_built_for_wgpu_and_says_where(device):
    with pytest.raises(NotBuiltError, match=r"shared_float_atomic.*'sh' at .*test_kernel_user_bugs\.py:\d+.*wgpu"):
        shared_float_atomic.compile("spirv")           # naga's flavour of SPIR-V: wgpu's
    x, s = np.ones(128, np.float32), np.zeros(4, np.float32)
    if device == "wgpu":
        with pytest.raises(NotBuiltError, match="naga"):
            shared_float_atomic(ctx_of(device), x, s)
        return
    shared_float_atomic.launch(ctx_of(device), x, s, threads=(128, 1, 1))
    assert s.tolist() == [32.0] * 4


# --- scalar parameters out of range -----------------------------------------------------------------------------
@pt.kernel
def scalars(sf: pt.f32, sh: pt.f16, o: pt.Out[pt.f32]):
    if pt.thread_index() == 0:
        o[0] = sf
        o[1] = pt.f32(sh)


@pytest.mark.parametrize("sf, sh, param", [(1.0, 70000, "sh"), (1e39, 1.0, "sf"), (np.float64(-1e39), 1.0, "sf"),
                                           (1.0, 10**400, "sh")])
def test_a_finite_float_past_the_parameter_dtype_is_refused(device, sf, sh, param):
    for call in (lambda o: scalars.emulate(sf, sh, o), lambda o: scalars(ctx_of(device), sf, sh, o)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")             # no overflow RuntimeWarning on the way
            with pytest.raises(ArgumentError, match=rf"kernel 'scalars'.*'{param}'"):
                call(np.zeros(2, np.float32))


def test_inf_and_nan_passed_explicitly_still_reach_the_kernel(device):
    o = np.zeros(2, np.float32)
    scalars(ctx_of(device), float("nan"), float("inf"), o)
    assert np.isnan(o[0]) and o[1] == np.inf
    scalars(ctx_of(device), 3.4028235e38, 65504.0, o)
    assert o.tolist() == [3.4028234663852886e38, 65504.0]


# --- diagnostics -------------------------------------------------------------------------------------------------
def test_an_unknown_kernel_option_is_a_bad_kernel_config():
    with pytest.raises(KernelImportError) as e:
        pt.kernel(checkz=True)
    assert e.value.code == "kernel-import::bad-kernel-config" and "checkz" in str(e.value)
    assert e.value.file.endswith("test_kernel_user_bugs.py")


def test_a_workgroup_given_as_a_string_says_what_it_must_be():
    with pytest.raises(KernelImportError, match=r"must be an int or a tuple of 1 to 3 ints, got '64'") as e:
        pt.kernel(workgroup="64")(lambda c: None)
    assert e.value.code == "kernel-import::bad-kernel-config"


def test_a_lowering_error_names_the_kernel_as_written(monkeypatch):
    from poot.jit.runtime import launch

    def broken(kernel, target, arch=None):
        raise LoweringError("kernel 'poot_fill7_0123456789abcdef': LLVM's SPIR-V backend failed: boom")

    monkeypatch.setattr(launch, "compile_kernel", broken)
    with pytest.raises(LoweringError, match=r"^kernel 'fill7': LLVM's SPIR-V backend failed: boom$"):
        fill7.compile("spirv")


@pytest.mark.parametrize("threads, wg", [((2**32 + 64, 1, 1), (64, 1, 1)), ((2**32 - 1, 1, 1), (1000, 1, 1))])
def test_a_grid_past_uint32_thread_indices_is_refused(device, threads, wg):
    c = np.zeros(4, np.float32)
    with pytest.raises(PootError, match="thread indices are uint32"):
        fill7.launch(ctx_of(device), c, threads=threads, workgroup=wg)
    with pytest.raises(PootError, match="thread indices are uint32"):
        fill7.emulate(c, threads=threads, workgroup=wg)


# --- subgroup exchanges on the CPU ------------------------------------------------------------------------------
@pt.kernel(workgroup=(32,))
def warp_total(x: pt.In[pt.f32], out: pt.Out[pt.f32]):
    i = pt.thread_index()
    out[i] = pt.subgroup_sum(x[i])


def test_a_subgroup_exchange_is_not_built_for_the_cpu_and_says_where():
    where = r"pt\.subgroup_sum at .*test_kernel_user_bugs\.py:\d+"
    with pytest.raises(NotBuiltError, match=rf"kernel 'warp_total': {where}.*CPU target"):
        warp_total.compile("cpu")
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(NotBuiltError, match=rf"kernel 'warp_total': {where}"):
        warp_total(ctx_of("cpu"), x, np.zeros(32, np.float32))
    out = np.zeros(32, np.float32)
    warp_total.emulate(x, out)                           # the emulator has subgroups
    assert out.tolist() == [float(x.sum())] * 32


# --- races under emulation ---------------------------------------------------------------------------------------
# The emulator runs the threads one after another; a device runs them at once. An access to an element another
# thread wrote with nothing ordering the two (a barrier of their workgroup) reads whatever the timing gives on a
# device, while the emulator quietly gave the sequential answer (a correct sum for `out[0] += x[i]`, 0 for a
# shared element not yet written).
@pt.kernel(workgroup=(64,))
def reverse_without_barrier(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    s = pt.shared(pt.f32, 64)
    t = pt.local_index()
    s[t] = a[pt.thread_index()]
    c[pt.thread_index()] = s[63 - t]


@pt.kernel(workgroup=(64,))
def reverse_with_barrier(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    s = pt.shared(pt.f32, 64)
    t = pt.local_index()
    s[t] = a[pt.thread_index()]
    pt.workgroup_barrier()
    c[pt.thread_index()] = s[63 - t]


@pt.kernel(workgroup=(8,))
def reads_then_overwritten(c: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 8)
    t = pt.local_index()
    s[t] = pt.i32(t)
    pt.workgroup_barrier()
    c[t] = s[(t + 1) % 8]                # read a neighbour's element...
    s[t] = 0                             # ...which the neighbour overwrites before any barrier


@pt.kernel(workgroup=(8,))
def last_writer_wins(c: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 1)
    s[0] = pt.i32(pt.local_index())
    pt.workgroup_barrier()
    c[pt.local_index()] = s[0]


@pt.kernel(workgroup=(8,))
def counter_read_early(c: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 1)
    if pt.local_index() == 0:
        s[0] = 0
    pt.workgroup_barrier()
    pt.atomic_add(s, 0, 1)
    c[pt.local_index()] = s[0]           # other threads are still adding


@pt.kernel(workgroup=(8,))
def same_value_everywhere(c: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 2)
    s[0] = 5                             # every thread writes the same values: no thread's timing matters
    s[1] = 0
    pt.workgroup_barrier()
    pt.atomic_add(s, 1, 1)               # atomics from every thread together are fine
    pt.workgroup_barrier()
    c[pt.local_index()] = s[0] + s[1]


@pytest.mark.parametrize("kernel, first, then", [
    (reverse_without_barrier, r"read by thread \(\d+, 0, 0\) at .*:\d+", r"written by thread \(\d+, 0, 0\)"),
    (reads_then_overwritten, "read by thread", "written by thread"),
    (last_writer_wins, "written by thread", "written with another value"),
    (counter_read_early, "read by", "atomically added to by"),
])
def test_a_shared_memory_race_is_refused_by_the_emulator(kernel, first, then):
    c = np.zeros(64 if kernel is reverse_without_barrier else 8, np.float32 if kernel is reverse_without_barrier
                 else np.int32)
    args = (np.arange(64, dtype=np.float32), c) if kernel is reverse_without_barrier else (c,)
    with pytest.raises(PootError, match=rf"kernel '{kernel.name}': shared array 's' element \d+ is {first}.* and "
                                        rf"{then}.*test_kernel_user_bugs\.py:\d+ in workgroup \(0, 0, 0\) with "
                                        r"nothing ordering them.*pt\.workgroup_barrier\(\)"):
        kernel.emulate(*args)


def test_shared_memory_used_in_order_emulates_as_before():
    a, c = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    reverse_with_barrier.emulate(a, c)
    np.testing.assert_array_equal(c, a.reshape(2, 64)[:, ::-1].ravel())
    c = np.zeros(8, np.int32)
    same_value_everywhere.emulate(c)
    assert c.tolist() == [5 + 8] * 8


@pt.kernel(workgroup=(64,))
def sum_without_atomics(x: pt.In[pt.f32], out: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(x):
        out[0] += x[i]


@pt.kernel(workgroup=(1,))
def smooth_in_place(y: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if 0 < i < len(y) - 1:
        y[i] = (y[i - 1] + y[i + 1]) * 0.5      # neighbours are other workgroups' elements: no barrier orders them


@pt.kernel(workgroup=(64,))
def sum_with_atomics(x: pt.In[pt.f32], out: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(x):
        pt.atomic_add(out, 0, x[i])


def test_a_buffer_race_is_refused_by_the_emulator(device):
    x = np.ones(256, np.float32)
    with pytest.raises(PootError, match=r"kernel 'sum_without_atomics': buffer 'out' element 0 is written by thread "
                                        r"\(0, 0, 0\) at .*test_kernel_user_bugs\.py:\d+ and read by thread \(1, 0, 0\)"
                                        r".*pt\.atomic_add"):
        sum_without_atomics.emulate(x, np.zeros(1, np.float32), threads=(256,))
    with pytest.raises(PootError, match=r"buffer 'y' element \d+ is .* in workgroups \(\d+, 0, 0\) and \(\d+, 0, 0\) "
                                        "with nothing ordering them.*never ordered"):
        smooth_in_place.emulate(np.arange(16, dtype=np.float32))
    out = np.zeros(1, np.float32)
    sum_with_atomics.emulate(x, out, threads=(256,))
    assert out[0] == 256.0
    out = np.zeros(1, np.float32)
    sum_with_atomics.launch(ctx_of(device), x, out, threads=(256,))
    assert out[0] == 256.0
