"""What a kernel body means: Python's semantics as docs/kernels.md decides them, identical under
emulation and on the CPU device (and any other device listed in POOT_KERNEL_DEVICES)."""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.errors import LoweringError
from poot.jit.kir.model import BufferParam, Cast

DEVICES = [d for d in os.environ.get("POOT_KERNEL_DEVICES", "cpu").split(",") if d]


def run_everywhere(kernel, *args, threads=None, workgroup=None, unordered=(), check=None, devices=DEVICES):
    """Emulate, then run on each of `devices`; every run must agree with the emulation (buffers named in
    `unordered` depend on the order threads run in: `check(args)` tests them on every run instead).
    Returns the emulated arguments (arrays written in place)."""
    emu = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel.emulate(*emu, threads=threads, workgroup=workgroup)
    if check is not None:
        check(emu)
    for dev in devices:
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        kernel.launch(pt.Context(dev), *got, threads=threads, workgroup=workgroup)
        if check is not None:
            check(got)
        for p, e, g in zip(kernel.kir.params, emu, got):
            if isinstance(p, BufferParam) and p.access.writable and p.name not in unordered:
                if e.dtype.kind == "f" or e.dtype == ml_dtypes.bfloat16:
                    np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=1e-6,
                                               err_msg=f"{p.name} on {dev}")
                else:
                    np.testing.assert_array_equal(g, e, err_msg=f"{p.name} on {dev}")
    return emu


@pt.kernel
def floor_ops(a: pt.In[pt.i32], b: pt.In[pt.i32], q: pt.Out[pt.i32], r: pt.Out[pt.i32]):
    i = pt.thread_index()
    if i < len(q):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def test_floor_division_and_modulo_follow_python():
    a = np.array([7, -7, 7, -7, 0, -2**31, 5, -5], np.int32)
    b = np.array([2, 2, -2, -2, 3, -1, 0, 0], np.int32)
    _, _, q, r = run_everywhere(floor_ops, a, b, np.zeros(8, np.int32), np.zeros(8, np.int32))
    assert q.tolist() == [3, -4, -4, 3, 0, 0, 0, 0]        # INT_MIN // -1 and x // 0 give 0 (KIR)
    assert r.tolist() == [1, 1, -1, -1, 0, 0, 0, 0]


@pt.kernel
def wrapping(x: pt.In[pt.u32], y: pt.Out[pt.u32], s: pt.Out[pt.i32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = (x[i] - 10) * 3 + (x[i] << 31)
        s[i] = pt.i32(x[i]) >> 40


def test_integer_arithmetic_wraps_and_wide_shifts_saturate():
    x = np.array([0, 5, 2**32 - 1, 123456789], np.uint32)
    _, y, s = run_everywhere(wrapping, x, np.zeros(4, np.uint32), np.zeros(4, np.int32))
    ref = ((x.astype(np.uint64) - 10) * 3 + (x.astype(np.uint64) << 31)) % 2**32
    assert y.tolist() == ref.tolist()
    assert s.tolist() == [0, 0, -1, 0]


@pt.kernel
def casts(x: pt.In[pt.f32], i8: pt.Out[pt.i8], u: pt.Out[pt.u32], h: pt.Out[pt.f16], b: pt.Out[pt.bf16]):
    i = pt.thread_index()
    if i < len(x):
        i8[i] = pt.i8(x[i])
        u[i] = pt.u32(x[i])
        h[i] = pt.f16(x[i]) * 2.0
        b[i] = pt.bf16(x[i]) + 1.0


def test_casts_saturate_and_round_as_documented():
    x = np.array([1.9, -1.9, 300.0, -300.0, np.nan, 1e10, -0.5, 65504.0], np.float32)
    n = len(x)
    _, i8, u, h, b = run_everywhere(casts, x, np.zeros(n, np.int8), np.zeros(n, np.uint32), np.zeros(n, np.float16),
                                    np.zeros(n, ml_dtypes.bfloat16))
    assert i8.tolist() == [1, -1, 127, -128, 0, 127, 0, 127]
    assert u.tolist() == [1, 0, 300, 0, 0, 2**32 - 1, 0, 65504]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, (x.astype(np.float16) * np.float16(2)))
    # compared as float32 (exact for bf16): NumPy's NaN-aware equality needs a float kind, which bfloat16
    # is not before ml_dtypes 0.7
    np.testing.assert_array_equal(b.astype(np.float32),
                                  (x.astype(ml_dtypes.bfloat16) + ml_dtypes.bfloat16(1)).astype(np.float32))


@pt.kernel
def guarded(x: pt.In[pt.f32], y: pt.Out[pt.f32], n: pt.u32):
    i = pt.thread_index()
    # the loads on the right must not run (and trap) for i >= len(x)
    ok = i < len(x) and x[i] > 0.0
    v = x[i] if i < len(x) else -1.0
    if i < len(y):
        y[i] = v if ok else 0.0
    if i < n and (i >= len(x) or x[i] < 0.0):
        y[i] = -2.0


def test_and_or_and_conditional_expressions_short_circuit():
    x = np.array([1.0, -1.0, 2.0], np.float32)
    _, y, _ = run_everywhere(guarded, x, np.zeros(5, np.float32), 5)
    assert y.tolist() == [1.0, -2.0, 2.0, -2.0, -2.0]


@pt.kernel
def literal_typing(x: pt.In[pt.f64], n: pt.In[pt.u32], y: pt.Out[pt.f64], c: pt.Out[pt.u32]):
    i = pt.thread_index()
    if i < len(y):
        acc = 0.0                      # learns float64 from x
        j = 0                          # learns uint32 from n
        while j < n[i]:
            acc += x[i] * 0.1
            j += 1
        y[i] = acc
        c[i] = j


def test_literal_locals_take_their_dtype_from_context():
    from poot.jit.kir.model import Local

    kir = literal_typing.kir
    assert Local("acc", pt.f64) in kir.locals and Local("j", pt.u32) in kir.locals
    x = np.array([1.0, 2.0, 3.0])
    n = np.array([3, 0, 10], np.uint32)
    _, _, y, c = run_everywhere(literal_typing, x, n, np.zeros(3), np.zeros(3, np.uint32))
    assert c.tolist() == [3, 0, 10]
    np.testing.assert_allclose(y, [0.3, 0.0, 3.0], rtol=1e-15)


@pt.kernel(workgroup=(32, 1, 1))
def running_max(x: pt.In[pt.f32], m: pt.Out[pt.f32], bad: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(m):
        best = -float("inf")           # Python's spellings of infinity and NaN are float literals
        for k in range(i + 1):
            best = max(best, x[k])
        m[i] = best
        bad[i] = float("nan") if best > float(2) else best


def test_float_of_a_literal_is_a_literal():
    x = np.array([-np.inf, -3.0, 1.0, 2.5, 0.0], np.float32)
    _, m, bad = run_everywhere(running_max, x, np.zeros(5, np.float32), np.zeros(5, np.float32))
    assert m.tolist() == [-np.inf, -3.0, 1.0, 2.5, 2.5]
    assert bad[:3].tolist() == [-np.inf, -3.0, 1.0] and np.isnan(bad[3:]).all()


@pt.kernel
def big_literals(x: pt.In[pt.f32], y: pt.Out[pt.f32], z: pt.Out[pt.f32], h: pt.Out[pt.f16]):
    i = pt.thread_index()
    if i < len(y):
        # each rounds to a finite value of its dtype (or is written as inf), so each fits; 1e40 would not
        y[i] = min(max(x[i], -3.4028235e38), 3.40282356e38)
        z[i] = max(x[i] * 1e-45, float("inf"))
        h[i] = pt.f16(1.0) * 65504.0 - 65519.0


def test_float_literals_rounding_to_a_finite_value_fit(recwarn):
    """Only a finite literal past the dtype's max is literal-out-of-range (the import-diagnostics tests):
    one that rounds to the max fits, inf stays inf, and no NumPy overflow warning escapes the import."""
    x = np.array([1.0, np.inf, -np.inf], np.float32)
    big_literals.kir
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    out = run_everywhere(big_literals, x, np.zeros(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float16))
    fmax = float(np.finfo(np.float32).max)
    assert out[1].tolist() == [1.0, fmax, -fmax]
    assert out[2].tolist() == [np.inf] * 3
    assert out[3].tolist() == [0.0] * 3             # 65519.0 rounds to f16's max, 65504


@pt.device_fn
def first_negative(buf, start, stop):
    for k in range(start, stop):
        if buf[k] < 0.0:
            return pt.i32(k)
    return -1


@pt.device_fn
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@pt.kernel
def device_functions(x: pt.In[pt.f32], rows: pt.Out[pt.i32], z: pt.Out[pt.f32]):
    r = pt.thread_index()
    cols = len(x) // len(rows)
    if r < len(rows):
        rows[r] = first_negative(x, r * cols, (r + 1) * cols)
        z[r] = clamp(x[r * cols], -0.5, 0.5)


def test_device_functions_inline_with_early_returns_in_loops():
    x = np.array([[1, 2, -3, 4], [1, 1, 1, 1], [-1, 0, 0, -2]], np.float32).reshape(-1)
    _, rows, z = run_everywhere(device_functions, x, np.zeros(3, np.int32), np.zeros(3, np.float32))
    assert rows.tolist() == [2, -1, 8]
    assert z.tolist() == [0.5, 0.5, -0.5]


@pt.kernel(workgroup=(4, 2, 1))
def grid_2d(out: pt.Out[pt.u32], width: pt.u32):
    x = pt.thread_index_x()
    y = pt.thread_index_y()
    if x < width:
        out[y * width + x] = (pt.group_index_y() * 1000 + pt.local_index_y() * 100 + pt.group_index_x() * 10
                              + pt.local_index_x() + pt.num_groups(0) * 10000 + pt.group_size_y() * 100000)


def test_index_intrinsics_on_a_2d_grid():
    out = run_everywhere(grid_2d, np.zeros(6 * 4, np.uint32), 6, threads=(6, 4))[0]
    ys, xs = np.mgrid[0:4, 0:6]
    ref = (ys // 2) * 1000 + (ys % 2) * 100 + (xs // 4) * 10 + xs % 4 + 2 * 10000 + 2 * 100000
    assert out.reshape(4, 6).tolist() == ref.tolist()


@pt.kernel
def swap_and_bits(x: pt.In[pt.f32], bits: pt.Out[pt.u32], back: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(x):
        a, b = x[i], -x[i]
        a, b = b, a
        bits[i] = pt.bitcast(a, pt.u32)
        back[i] = pt.bitcast(pt.bitcast(b, pt.u32) ^ 0x80000000, pt.f32)


def test_tuple_swap_and_bitcasts():
    x = np.array([1.5, -2.0, 0.0], np.float32)
    _, bits, back = run_everywhere(swap_and_bits, x, np.zeros(3, np.uint32), np.zeros(3, np.float32))
    assert bits.tolist() == (-x).view(np.uint32).tolist()
    assert back.tolist() == (-x).tolist()


@pt.kernel
def counted(x: pt.In[pt.i32], total: pt.InOut[pt.i64], order: pt.Out[pt.i64]):
    i = pt.thread_index()
    if i < len(x):
        order[i] = pt.atomic_add(total, 0, pt.i64(x[i]))


def test_atomic_add_returns_the_old_value():
    x = np.arange(1, 101, dtype=np.int32)

    def check(args):
        _, total, old = args
        assert total[0] == x.sum()
        # each thread saw the total just before its own add: old + x are the other olds and the final total
        assert sorted((old + x).tolist()) == sorted([v for v in old.tolist() if v != 0] + [int(total[0])])

    # LLVM's SPIR-V backend has no Int64Atomics for Vulkan: the SPIR-V devices refuse the kernel by name
    spirv = [d for d in DEVICES if pt.Context(d).device.caps.target == "spirv"]
    for dev in spirv:
        with pytest.raises(LoweringError, match="atomic add on int64 needs the SPIR-V capability Int64Atomics"):
            counted.launch(pt.Context(dev), x, np.zeros(1, np.int64), np.zeros(100, np.int64), threads=100)
    run_everywhere(counted, x, np.zeros(1, np.int64), np.zeros(100, np.int64), threads=100, unordered=("order",),
                   check=check, devices=[d for d in DEVICES if d not in spirv])


@pt.kernel(checks=False)
def unchecked(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = x[i] * 2.0


def test_checks_false_drops_the_bounds_checks():
    assert unchecked.traps == ()
    assert floor_ops.kir.traps and all(t.what.startswith("index out of range") for t in floor_ops.kir.traps)
    out = run_everywhere(unchecked, np.arange(4, dtype=np.float32), np.zeros(4, np.float32))[1]
    assert out.tolist() == [0, 2, 4, 6]


@pt.kernel
def out_of_bounds(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = x[i + 1]


@pytest.mark.parametrize("where", ["emulate"] + DEVICES)
def test_out_of_bounds_read_traps_naming_the_access(where):
    x, y = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(pt.KernelTrap) as info:
        if where == "emulate":
            out_of_bounds.emulate(x, y)
        else:
            out_of_bounds(pt.Context(where), x, y)
    e = info.value
    assert e.kernel == "out_of_bounds" and "x[i + 1]" in e.what
    assert e.where.endswith(f"test_kernel_semantics.py:{out_of_bounds.fn.__code__.co_firstlineno + 4}")


def test_widening_is_implicit_narrowing_is_not():
    kir = widen.kir
    assert any(isinstance(s.value, Cast) for s in kir.body if hasattr(s, "value") and hasattr(s, "name"))


@pt.kernel
def widen(x: pt.In[pt.f16], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    acc = pt.f32(0.0)
    acc = x[0]
    if i < len(y):
        y[i] = acc + x[i]


def test_emulate_checks_argument_dtypes():
    with pytest.raises(pt.DTypeError, match="buffer 'a' is int32"):
        floor_ops.emulate(np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros(4, np.int32),
                          np.zeros(4, np.int32))
    with pytest.raises(pt.DTypeError, match="not a uint32"):
        guarded.emulate(np.zeros(4, np.float32), np.zeros(4, np.float32), -1)
    with pytest.raises(pt.PootError, match="takes 3 arguments"):
        guarded.emulate(np.zeros(4, np.float32))


def test_launch_needs_a_context_first():
    with pytest.raises(pt.PootError, match="pt.Context"):
        floor_ops(np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int32))


def test_intrinsics_outside_a_kernel_say_so():
    with pytest.raises(pt.PootError, match="only has a meaning inside a @poot.kernel"):
        pt.thread_index()


def test_a_math_function_is_recognised_by_identity_not_name():
    assert isinstance(named_sqrt.kir.body, tuple)
    y = run_everywhere(named_sqrt, np.array([4.0, 9.0], np.float32), np.zeros(2, np.float32))[1]
    assert y.tolist() == [2.0, 3.0]


from poot import sqrt as root_of  # noqa: E402


@pt.kernel
def named_sqrt(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = root_of(x[i])



@pt.kernel
def reverse_rows(x: pt.In[pt.f32], y: pt.Out[pt.f32], cols: pt.i32):
    r = pt.i32(pt.thread_index())
    if r * cols < pt.i32(len(y)):
        k = 0
        for j in range(cols - 1, -1, -1):
            if j == 1:
                continue
            y[r * cols + k] = x[r * cols + j]
            k += 1


def test_range_with_a_negative_step_and_continue():
    x = np.arange(12, dtype=np.float32)
    y = run_everywhere(reverse_rows, x, np.full(12, -1, np.float32), 4, threads=3)[1]
    assert y.reshape(3, 4).tolist() == [[3, 2, 0, -1], [7, 6, 4, -1], [11, 10, 8, -1]]
