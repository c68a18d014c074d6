"""Compiled kernels on the CPU device: results, barriers (work-item loop fission), atomics, scalars,
grids, traps, vectorization, and the launch ABI's refusals."""
import re

import ml_dtypes
import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.errors import KernelTrap, LaunchError
from poot.jit.llvm.abi import pack_meta
from poot.jit.llvm.compile import llvm_ir
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Binary, Len, TrapSite
from poot.jit.runtime.launch import launch

from kir_samples import (add_kernel, atomic_sum_kernel, axpy_kernel, chain_kernel, grid3d_kernel, loops_kernel,
                         multi_acc_sum_kernel, multi_acc_sum_kernel64, reduce_shared_kernel)

DEV = devices.get("cpu")
W = DEV.wrap


@pytest.mark.parametrize("dtype", [dt.float32, dt.float16, dt.bfloat16, dt.int64, dt.float64], ids=lambda d: d.short)
def test_add(dtype):
    n = 1000
    a = (np.arange(n) % 97).astype(dtype.np)
    b = (np.arange(n) % 13).astype(dtype.np)
    c = np.zeros(n, dtype.np)
    launch(DEV, add_kernel(dtype), [W(a), W(b), W(c)], (), -(-n // 64))
    assert np.array_equal(c, (a.astype(np.float64) + b.astype(np.float64)).astype(dtype.np))


def test_chain_matches_numpy_on_two_threads():
    n = 1_000_003
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.zeros(n, np.float32)
    launch(DEV, chain_kernel(), [W(a), W(b), W(c), W(out)], {"chunk": -(-n // 2)}, 2)
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    terms = (np.abs(2 * a64), np.abs(b64 * c64), np.exp(a64) / (1 + b64 * b64))
    ref = terms[0] * np.sign(a64) + b64 * c64 - terms[2]
    # float32 arithmetic: each term carries a few ulps, and cancellation makes that absolute
    assert np.all(np.abs(out - ref) <= 4 * np.finfo(np.float32).eps * sum(terms))


def test_cpu_chunk_loop_and_multi_accumulator_reductions_vectorize():
    assert re.search(r"<(8|16) x float>", llvm_ir(chain_kernel())), "the element loop did not vectorize"
    assert re.search(r"<(4|8|16) x float>", llvm_ir(multi_acc_sum_kernel64(8))), "the accumulators did not vectorize"


@pytest.mark.parametrize("make", [multi_acc_sum_kernel, multi_acc_sum_kernel64])
def test_multi_accumulator_sum(make):
    x = np.random.default_rng(1).random(8 * 4096).astype(np.float32)
    out = np.zeros(8, np.float32)
    launch(DEV, make(4), [W(x), W(out)], (4096,), 8)
    np.testing.assert_allclose(out, x.reshape(8, -1).sum(1), rtol=1e-5)


@pytest.mark.parametrize("wg", [1, 8, 64, 256])
def test_shared_memory_reduction_with_barriers(wg):
    n = 10 * wg + 3
    x = np.random.default_rng(2).random(n).astype(np.float32)
    groups = -(-n // wg)
    out = np.zeros(groups, np.float32)
    launch(DEV, reduce_shared_kernel(wg), [W(x), W(out)], (), groups)
    want = np.add.reduceat(np.pad(x, (0, groups * wg - n)), np.arange(0, groups * wg, wg))
    np.testing.assert_allclose(out, want, rtol=1e-5)


def _barrier_loop_kernel():
    """A barrier inside a uniform For, a uniform early return before a barrier, and a divergent
    return after the last one: s[l] is shifted left by one each round, `rounds` times."""
    u = dt.uint32
    kb = B.KernelBuilder("shift_rounds", workgroup=(4, 2, 1))
    src, dst = kb.buffer("src", u, Access.READ), kb.buffer("dst", u, Access.WRITE)
    rounds = kb.scalar("rounds", u)
    sh = kb.shared("s", u, 8)
    lin = kb.let("lin", B.add(B.index("local", 0), B.mul(B.index("local", 1), B.const(4, u))))
    gid = kb.let("gid", B.index("group", 0))
    with kb.if_(B.binary("ge", gid, B.index("num_groups", 0))):
        kb.ret()                                     # uniform (never taken): before the barriers
    base = kb.let("base", B.mul(gid, B.const(8, u)))
    kb.store(sh, lin, kb.load(src, B.add(base, lin), u))
    kb.barrier()
    with kb.for_("r", B.const(0, u), rounds):
        v = kb.let("v", kb.load(sh, Binary("rem", B.add(lin, B.const(1, u)), B.const(8, u), u), u))
        kb.barrier()
        kb.store(sh, lin, v)
        kb.barrier()
    with kb.if_(B.binary("eq", lin, B.const(7, u))):
        kb.ret()                                     # divergent, after the last barrier
    kb.store(dst, B.add(base, lin), kb.load(sh, lin, u))
    return kb.build()


def test_barriers_in_uniform_loops_and_returns():
    src = np.arange(24, dtype=np.uint32)
    dst = np.full(24, 999, np.uint32)
    launch(DEV, _barrier_loop_kernel(), [W(src), W(dst)], {"rounds": 3}, 3)
    want = np.roll(src.reshape(3, 8), -3, axis=1).ravel()
    keep = np.arange(24) % 8 != 7
    assert np.array_equal(dst[keep], want[keep]) and np.all(dst[~keep] == 999)


@pytest.mark.parametrize("dtype", [dt.float32, dt.int32], ids=lambda d: d.short)
def test_atomic_add_over_many_groups_and_threads(dtype):
    x = np.ones(100_000, dtype.np)
    out = np.zeros(1, dtype.np)
    launch(DEV, atomic_sum_kernel(dtype), [W(x), W(out)], (), -(-len(x) // 64))
    assert out[0] == len(x)


def test_scalar_params_from_meta():
    x = np.arange(50, dtype=np.float32)
    y = np.ones(50, np.float32)
    launch(DEV, axpy_kernel(), [W(x), W(y)], {"alpha": 0.5, "offset": -(2**40), "n": 40}, 2)
    assert np.array_equal(y[:40], (0.5 * x[:40] + 1 + np.float32(-(2.0**40))).astype(np.float32))
    assert np.all(y[40:] == 1)


@pytest.mark.parametrize("dtype", [dt.bool_, dt.int8, dt.uint16, dt.int32, dt.int64, dt.uint64, dt.float16,
                                   dt.bfloat16, dt.float32, dt.float64], ids=lambda d: d.short)
def test_every_scalar_type_reaches_the_kernel(dtype):
    kb = B.KernelBuilder("scalar_" + dtype.short, workgroup=(1, 1, 1))
    o = kb.buffer("out", dtype, Access.WRITE)
    pad = kb.scalar("pad", dt.uint8)
    v = kb.scalar("v", dtype)
    kb.store(o, B.const(0, dt.uint32), v)
    kb.store(o, B.const(1, dt.uint32), B.cast(pad, dtype))
    value = {dt.bool_: True, dt.int8: -7, dt.uint16: 65000, dt.int32: -123456, dt.int64: -(2**62) - 3,
             dt.uint64: 2**64 - 5, dt.float16: -1.5, dt.bfloat16: 3.0, dt.float32: 0.1, dt.float64: 1e300}[dtype]
    out = np.zeros(2, dtype.np)
    launch(DEV, kb.build(), [W(out)], {"pad": 1, "v": value}, 1)
    assert out[0] == np.array(value).astype(dtype.np) and out[1] == 1


def test_3d_grid_and_workgroup():
    out = np.zeros(16 * 4 * 4, np.uint32)
    launch(DEV, grid3d_kernel(), [W(out)], (), (4, 2, 2))
    z, y, x = np.meshgrid(np.arange(4), np.arange(4), np.arange(16), indexing="ij")
    assert np.array_equal(out, (x + 10 * y + 100 * z).ravel())


def test_loops_break_continue_and_early_return():
    out = np.zeros(40, np.uint32)
    launch(DEV, loops_kernel(), [W(out)], (), 3)

    def ref(t):
        acc = 0
        for j in range(t):
            if j % 3 == 1:
                continue
            acc += j
            if acc > 100:
                break
        return acc + 3
    assert out.tolist() == [ref(t) for t in range(40)]


def test_out_of_bounds_index_traps_instead_of_touching_memory():
    a = np.arange(100, dtype=np.float32)
    b = np.arange(100, dtype=np.float32)
    c = np.zeros(120, np.float32)             # c is longer: threads 100..119 read a[i], b[i] out of range
    with pytest.raises(KernelTrap) as ei:
        launch(DEV, add_kernel(), [W(a), W(b), W(c)], (), 2)
    assert ei.value.code == 1 and ei.value.kernel == "add_f32" and "out of bounds" in str(ei.value)
    launch(DEV, add_kernel(), [W(a), W(b), W(c[:100])], (), 2)    # the trap word was cleared
    assert np.array_equal(c[:100], a + b)


def test_explicit_trap_names_its_site():
    kb = B.KernelBuilder("asserting", workgroup=(8, 1, 1))
    x = kb.buffer("x", dt.int32, Access.READ)
    code = kb.trap_site(2, "x must be non-negative", "model.py:12")
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(x))):
        with kb.if_(B.lt(kb.load(x, i, dt.int32), B.const(0, dt.int32))):
            kb.trap(code)
    k = kb.build()
    launch(DEV, k, [W(np.arange(8, dtype=np.int32))], (), 1)
    with pytest.raises(KernelTrap, match=r"asserting.*code 2 \(x must be non-negative\) at model.py:12"):
        launch(DEV, k, [W(np.array([1, -1, 2], np.int32))], (), 1)


def test_zero_groups_is_a_no_op_and_bad_arguments_are_refused():
    c = np.zeros(4, np.float32)
    launch(DEV, add_kernel(), [W(c), W(c), W(c)], (), 0)
    with pytest.raises(LaunchError, match="takes 3 buffers"):
        launch(DEV, add_kernel(), [W(c)], (), 1)
    with pytest.raises(LaunchError, match="missing"):
        launch(DEV, axpy_kernel(), [W(c), W(c)], {"alpha": 1.0}, 1)
    with pytest.raises(LaunchError, match="does not fit"):
        launch(DEV, axpy_kernel(), [W(c), W(c)], {"alpha": 1.0, "offset": 2**70, "n": 1}, 1)


def test_buffers_above_u32_elements_are_refused():
    with pytest.raises(LaunchError, match=r"2\*\*32-1"):
        pack_meta(add_kernel(), [2**32, 1, 1], (), 1)


def test_bf16_buffers_hold_ml_dtypes_values():
    a = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    c = np.zeros(3, ml_dtypes.bfloat16)
    launch(DEV, add_kernel(dt.bfloat16), [W(a), W(a), W(c)], (), 1)
    assert c.astype(np.float32).tolist() == [3.0, -4.5, 6.0]
