"""KIR kernels on wgpu through the SPIR-V target, against the same kernels on the CPU target (which the
jit tests hold to NumPy). Every kernel compiled here also passes `spirv-val --target-env vulkan1.3`."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.errors import DeviceUnavailableError, KernelTrap, LoweringError
from poot.jit.llvm.compile import compile_kernel
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Binary, Len
from poot.jit.runtime.launch import check_traps, launch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jit"))
import kir_samples as S  # noqa: E402

IN, OUT, INOUT = Access.READ, Access.WRITE, Access.READ_WRITE
INTS = [dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64]
FLOATS = [dt.float16, dt.bfloat16, dt.float32, dt.float64]
CPU = devices.get("cpu")


@pytest.fixture(scope="module")
def dev():
    try:
        return devices.get("wgpu")
    except DeviceUnavailableError as e:
        pytest.skip(f"no wgpu adapter here: {e}")


def spirv_val(kernel) -> bytes:
    spv = compile_kernel(kernel, "spirv").data
    if shutil.which("spirv-val"):
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", "-"], input=spv, capture_output=True)
        assert r.returncode == 0, f"{kernel.name}: {r.stderr.decode()}{r.stdout.decode()}"
    return spv


def run(device, kernel, arrays, scalars=(), groups=1) -> list[np.ndarray]:
    """Launch `kernel` on `device` with copies of `arrays` (one per buffer param); the buffers after."""
    if device is CPU:
        copies = [np.array(a) for a in arrays]
        launch(CPU, kernel, [CPU.wrap(a) for a in copies], scalars, groups)
        return copies
    bufs = []
    for a in arrays:
        b = device.allocate(a.nbytes)
        device.write(b, np.ascontiguousarray(a))
        bufs.append(b)
    launch(device, kernel, bufs, scalars, groups)
    device.synchronize()
    check_traps(device)
    return [np.array(device.read(b)).view(a.dtype).reshape(a.shape) for b, a in zip(bufs, arrays)]


def assert_same(got, want, what, ulps=0):
    """Integers and bools exactly; floats to `ulps` units in the last place, NaN and infinities exactly."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if want.dtype.kind in "biu":
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{what}: at {bad[:5]} got {got[bad[:5]]} want {want[bad[:5]]}"
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), f"{what}: NaN differs\n{g}\n{w}"
    fin = np.isfinite(w)
    assert np.array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]), f"{what}: infinities differ"
    eps = float(ml_dtypes.finfo(want.dtype).eps)
    tiny = float(ml_dtypes.finfo(want.dtype).smallest_normal)
    err = np.abs(g[fin] - w[fin])
    bound = ulps * eps * np.abs(w[fin]) + (ulps + 1) * tiny
    assert np.all(err <= bound), f"{what}: worst {np.max(err - bound):.3g} over {ulps} ulps\n{g}\n{w}"


def parity(dev, kernel, arrays, scalars=(), groups=1, ulps=0):
    spirv_val(kernel)
    want = run(CPU, kernel, arrays, scalars, groups)
    got = run(dev, kernel, arrays, scalars, groups)
    for p, g, w in zip(kernel.buffers, got, want):
        if p.access.writable:
            assert_same(g, w, f"{kernel.name}: buffer '{p.name}'", ulps)
    return got


def many_outputs(name, dtypes_in, outputs, wg=64):
    """out_j[i] = outputs[j](loads of the inputs at i) for i < len(out_0): one kernel, many results."""
    kb = B.KernelBuilder(name, workgroup=(wg, 1, 1))
    ins = [kb.buffer(f"x{j}", d, IN) for j, d in enumerate(dtypes_in)]
    outs = [kb.buffer(f"y{j}", d, OUT) for j, (d, _) in enumerate(outputs)]
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(outs[0]))):
        vals = [kb.load(b, i, d) for b, d in zip(ins, dtypes_in)]
        for o, (_, fn) in zip(outs, outputs):
            kb.store(o, i, fn(*vals))
    return kb.build()


def values(dtype, n=203, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is dt.bool_:
        return rng.random(n) < 0.5
    if dt.is_int(dtype):
        info = np.iinfo(dtype.np)
        edge = [info.min, info.max, 0, 1, info.max - 1, info.min + 1] + ([-1, -2] if info.min else [2, 3])
        small = rng.integers(max(info.min, -9), min(info.max, 9), n - len(edge) - 60, endpoint=True)
        big = rng.integers(info.min, info.max, 60, dtype=dtype.np, endpoint=True)
        return np.concatenate([np.array(edge, dtype.np), small.astype(dtype.np), big])
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.5, 1e-3, 300.0, -7e4]
    x = np.concatenate([special, rng.standard_normal(n - len(special)) * 3])
    return x.astype(dtype.np)


# --- every kernel the jit tests use ---------------------------------------------------------------
SAMPLES = S.all_kernels()


@pytest.mark.parametrize("kernel", [k for _, k in SAMPLES], ids=[n for n, _ in SAMPLES])
def test_every_sample_kernel_compiles_to_valid_spirv(kernel):
    spv = spirv_val(kernel)
    assert spv[:4] == b"\x03\x02\x23\x07"


# --- elementwise semantics vs the CPU target ------------------------------------------------------
INT_BINARY = ["add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr", "lt", "eq"]
FLOAT_BINARY = ["add", "sub", "mul", "div", "min", "max", "pow", "atan2", "hypot", "copysign", "nextafter", "ge"]
FLOAT_UNARY = ["neg", "abs", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
               "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "floor",
               "ceil", "trunc", "round", "sign", "isnan", "isinf", "isfinite"]


def _binary(op, d):
    out = dt.bool_ if op in ("lt", "eq", "ge") else d
    return out, lambda a, b: B.binary(op, a, b)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.short)
def test_integer_binary_ops_match_the_cpu(dev, dtype):
    a, b = values(dtype, seed=1), values(dtype, seed=2)[::-1].copy()
    b[:20] = 0                                       # zero divisors give 0, never a fault
    if dt.is_signed(dtype):
        a[20], b[20] = np.iinfo(dtype.np).min, -1    # INT_MIN / -1 gives 0
    if dtype.bits < 64:
        b[21:40] = np.arange(dtype.bits - 3, dtype.bits + 16)  # shifts at and past the width
    k = many_outputs(f"ibin_{dtype.short}", [dtype, dtype], [_binary(op, dtype) for op in INT_BINARY])
    outs = [np.zeros(len(a), (dt.bool_ if op in ("lt", "eq") else dtype).np) for op in INT_BINARY]
    parity(dev, k, [a, b] + outs, groups=-(-len(a) // 64))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.short)
def test_float_binary_ops_match_the_cpu(dev, dtype):
    a, b = values(dtype, seed=3), values(dtype, seed=4)[::-1].copy()
    k = many_outputs(f"fbin_{dtype.short}", [dtype, dtype], [_binary(op, dtype) for op in FLOAT_BINARY])
    outs = [np.zeros(len(a), (dt.bool_ if op == "ge" else dtype).np) for op in FLOAT_BINARY]
    parity(dev, k, [a, b] + outs, groups=-(-len(a) // 64), ulps=4)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.short)
@pytest.mark.parametrize("half", [0, 1])
def test_float_unary_ops_match_the_cpu(dev, dtype, half):
    ops = FLOAT_UNARY[half::2]
    x = values(dtype, seed=5)
    outputs = [(dt.bool_ if op in ("isnan", "isinf", "isfinite") else dtype, lambda v, op=op: B.unary(op, v))
               for op in ops]
    k = many_outputs(f"fun{half}_{dtype.short}", [dtype], outputs)
    parity(dev, k, [x] + [np.zeros(len(x), d.np) for d, _ in outputs], groups=-(-len(x) // 64), ulps=4)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.short)
def test_integer_unary_ops_wrap_like_the_cpu(dev, dtype):
    ops = ["neg", "abs", "bitnot", "sign"]
    x = values(dtype, seed=6)
    k = many_outputs(f"iun_{dtype.short}", [dtype], [(dtype, lambda v, op=op: B.unary(op, v)) for op in ops])
    parity(dev, k, [x] + [np.zeros(len(x), dtype.np) for _ in ops], groups=-(-len(x) // 64))


CASTS = [dt.bool_] + INTS + FLOATS


@pytest.mark.parametrize("src", CASTS, ids=lambda d: d.short)
def test_casts_and_float_to_int_saturation_match_the_cpu(dev, src):
    x = values(src, seed=7)
    if dt.is_float(src):
        x[-8:] = np.array([1e10, -1e10, 3e4, -3e4, 255.9, -128.7, 65535.5, 4e9], np.float64).astype(src.np)
    k = many_outputs(f"cast_{src.short}", [src], [(d, lambda v, d=d: B.cast(v, d)) for d in CASTS if d is not src])
    outs = [np.zeros(len(x), d.np) for d in CASTS if d is not src]
    parity(dev, k, [x] + outs, groups=-(-len(x) // 64))


def test_bitcasts_between_16_bit_floats_and_ints(dev):
    x = values(dt.float16, seed=8)
    outputs = [(dt.int16, lambda v: B.bitcast(v, dt.int16)), (dt.uint16, lambda v: B.bitcast(v, dt.uint16))]
    k = many_outputs("bits_f16", [dt.float16], outputs)
    got = parity(dev, k, [x, np.zeros(len(x), np.int16), np.zeros(len(x), np.uint16)], groups=4)
    assert np.array_equal(got[2], x.view(np.uint16))
    y = values(dt.uint16, seed=9)
    back = many_outputs("bits_u16", [dt.uint16], [(dt.bfloat16, lambda v: B.bitcast(v, dt.bfloat16)),
                                                  (dt.float16, lambda v: B.bitcast(v, dt.float16))])
    got = parity(dev, back, [y, np.zeros(len(y), ml_dtypes.bfloat16), np.zeros(len(y), np.float16)], groups=4)
    assert np.array_equal(got[1].view(np.uint16)[~np.isnan(got[1].astype(np.float32))],
                          y[~np.isnan(y.view(ml_dtypes.bfloat16).astype(np.float32))])


@pytest.mark.parametrize("dtype", [dt.bfloat16, dt.float32, dt.float64], ids=lambda d: d.short)
def test_unchecked_kernel_subtractions_use_a_zero_no_kernel_writes(dev, dtype):
    """Float subtractions are shielded from Mesa's algebra with a zero read from trap word 3; an unchecked
    kernel has no trap handle of its own, and the zero must still come from the trap buffer (an earlier
    version read an output buffer instead, corrupting later elements)."""
    kb = B.KernelBuilder(f"usub_{dtype.short}", workgroup=(64, 1, 1), checks=False)
    x, y, o = kb.buffer("x", dtype, IN), kb.buffer("y", dtype, IN), kb.buffer("o", dtype, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        kb.store(o, i, B.sub(kb.load(x, i, dtype), kb.load(y, i, dtype)))
    a, b = values(dtype, 200, seed=11), values(dtype, 200, seed=12)
    parity(dev, kb.build(), [a, b, np.zeros(200, dtype.np)], groups=4)


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64], ids=lambda d: d.short)
def test_division_by_a_literal_zero_gives_nan_and_inf(dev, dtype):
    """lavapipe computed `x / 0.0` with a literal zero as 0 or a denormal (var of an empty array divides
    by one); the SPIR-V worker hides such a divisor like a subtraction's left operand."""
    kb = B.KernelBuilder(f"div0_{dtype.short}", workgroup=(64, 1, 1))
    x, o, p = kb.buffer("x", dtype, IN), kb.buffer("o", dtype, OUT), kb.buffer("p", dtype, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(o))):
        v = kb.load(x, i, dtype)
        kb.store(o, i, B.binary("div", B.mul(B.sub(v, v), v), B.const(0.0, dtype)))
        kb.store(p, i, B.binary("div", v, B.const(-0.0, dtype)))
    a = np.array([0.0, 1.0, -2.5, np.inf, np.nan, 3.0], dtype.np)
    got = parity(dev, kb.build(), [a, np.zeros_like(a), np.zeros_like(a)])
    with np.errstate(all="ignore"):
        assert np.isnan(got[1][:3]).all() and np.array_equal(got[2][:3], [np.nan, -np.inf, np.inf], equal_nan=True)


# --- control flow, shared memory, atomics, scalars, grids ------------------------------------------
def test_loops_break_continue_and_early_return(dev):
    parity(dev, S.loops_kernel(), [np.zeros(40, np.uint32)], groups=3)


def test_3d_grid_and_workgroup(dev):
    parity(dev, S.grid3d_kernel(), [np.zeros(16 * 4 * 4, np.uint32)], groups=(4, 2, 2))


@pytest.mark.parametrize("wg", [8, 64, 256])
def test_shared_memory_reduction_with_barriers(dev, wg):
    n = 37 * wg + 5
    x = np.random.default_rng(wg).random(n).astype(np.float32)
    groups = -(-n // wg)
    got = parity(dev, S.reduce_shared_kernel(wg), [x, np.zeros(groups, np.float32)], groups=groups, ulps=2)
    want = np.add.reduceat(np.pad(x, (0, groups * wg - n)), np.arange(0, groups * wg, wg))
    np.testing.assert_allclose(got[1], want, rtol=1e-5)


def test_barriers_in_uniform_loops_with_returns(dev):
    u = dt.uint32
    kb = B.KernelBuilder("shift_rounds", workgroup=(4, 2, 1))
    src, dst = kb.buffer("src", u, IN), kb.buffer("dst", u, OUT)
    rounds = kb.scalar("rounds", u)
    sh = kb.shared("s", u, 8)
    lin = kb.let("lin", B.add(B.index("local", 0), B.mul(B.index("local", 1), B.const(4, u))))
    base = kb.let("base", B.mul(B.index("group", 0), B.const(8, u)))
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
    got = parity(dev, kb.build(), [np.arange(24, dtype=np.uint32), np.full(24, 999, np.uint32)], {"rounds": 3}, 3)
    keep = np.arange(24) % 8 != 7
    assert np.array_equal(got[1][keep], np.roll(np.arange(24).reshape(3, 8), -3, axis=1).ravel()[keep])


@pytest.mark.parametrize("dtype", [dt.float32, dt.int32, dt.uint32], ids=lambda d: d.short)
def test_atomic_add_over_many_groups(dev, dtype):
    x = np.ones(100_000, dtype.np)
    spirv_val(S.atomic_sum_kernel(dtype))
    got = run(dev, S.atomic_sum_kernel(dtype), [x, np.zeros(1, dtype.np)], (), -(-len(x) // 64))
    assert got[1][0] == len(x)


@pytest.mark.parametrize("dtype", [dt.bool_, dt.int8, dt.uint16, dt.int32, dt.int64, dt.uint64, dt.float16,
                                   dt.bfloat16, dt.float32, dt.float64], ids=lambda d: d.short)
def test_every_scalar_type_reaches_the_kernel(dev, dtype):
    kb = B.KernelBuilder("scalar_" + dtype.short, workgroup=(1, 1, 1))
    o = kb.buffer("out", dtype, OUT)
    pad = kb.scalar("pad", dt.uint8)
    v = kb.scalar("v", dtype)
    kb.store(o, B.const(0, dt.uint32), v)
    kb.store(o, B.const(1, dt.uint32), B.cast(pad, dtype))
    value = {dt.bool_: True, dt.int8: -7, dt.uint16: 65000, dt.int32: -123456, dt.int64: -(2**62) - 3,
             dt.uint64: 2**64 - 5, dt.float16: -1.5, dt.bfloat16: 3.0, dt.float32: 0.1, dt.float64: 1e300}[dtype]
    got = parity(dev, kb.build(), [np.zeros(2, dtype.np)], {"pad": 1, "v": value}, 1)
    assert got[0][0] == np.array(value).astype(dtype.np) and got[0][1] == 1


def test_scalar_params_from_meta(dev):
    x, y = np.arange(50, dtype=np.float32), np.ones(50, np.float32)
    parity(dev, S.axpy_kernel(), [x, y], {"alpha": 0.5, "offset": -(2**40), "n": 40}, 2)


def _index_kernel(dims: int):
    """out[t] = the flat logical group id, from thread 0 of each workgroup of (1,1,1)."""
    u = dt.uint32
    kb = B.KernelBuilder(f"group_ids_{dims}d", workgroup=(1, 1, 1))
    o = kb.buffer("out", u, OUT)
    gx, gy = B.index("group", 0), B.index("group", 1)
    flat = B.add(gx, B.mul(gy, B.index("num_groups", 0)))
    kb.store(o, flat, B.add(gx, B.mul(gy, B.const(1000, u))))
    return kb.build()


@pytest.mark.parametrize("grid", [(70_000, 1, 1), (300, 300, 1)], ids=["70000x1", "300x300"])
def test_grids_past_65535_workgroups_are_folded(dev, grid):
    total = grid[0] * grid[1]
    got = run(dev, _index_kernel(2), [np.zeros(total, np.uint32)], (), grid)[0]
    gy, gx = np.divmod(np.arange(total), grid[0])
    assert np.array_equal(got, (gx + 1000 * gy).astype(np.uint32))


def test_bf16_buffers_hold_ml_dtypes_values(dev):
    a = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    got = parity(dev, S.add_kernel(dt.bfloat16), [a, a, np.zeros(3, ml_dtypes.bfloat16)], groups=1)
    assert got[2].astype(np.float32).tolist() == [3.0, -4.5, 6.0]


# --- traps ----------------------------------------------------------------------------------------
def test_out_of_bounds_index_traps_instead_of_touching_memory(dev):
    a = b = np.arange(100, dtype=np.float32)
    with pytest.raises(KernelTrap) as e:
        run(dev, S.add_kernel(), [a, b, np.zeros(120, np.float32)], (), 2)
    assert e.value.code == 1 and e.value.kernel == "add_f32" and "out of bounds" in str(e.value)
    got = run(dev, S.add_kernel(), [a, b, np.zeros(100, np.float32)], (), 2)     # the trap word was cleared
    assert np.array_equal(got[2], a + b)


def test_explicit_trap_names_its_site(dev):
    kb = B.KernelBuilder("asserting", workgroup=(8, 1, 1))
    x = kb.buffer("x", dt.int32, IN)
    code = kb.trap_site(2, "x must be non-negative", "model.py:12")
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(x))):
        with kb.if_(B.lt(kb.load(x, i, dt.int32), B.const(0, dt.int32))):
            kb.trap(code)
    k = kb.build()
    run(dev, k, [np.arange(8, dtype=np.int32)], (), 1)
    with pytest.raises(KernelTrap, match=r"asserting.*code 2 \(x must be non-negative\) at model.py:12"):
        run(dev, k, [np.array([1, -1, 2], np.int32)], (), 1)


def _checking(sites: int):
    """x[i] < 0 fails the first `sites` checks (codes 2, 3, ...); x[i] == 5 only the last."""
    kb = B.KernelBuilder(f"checking_{sites}", workgroup=(8, 1, 1))
    x, out = kb.buffer("x", dt.int32, IN), kb.buffer("out", dt.int32, OUT)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(x))):
        v = kb.let("v", kb.load(x, i, dt.int32))
        for s in range(sites):
            code = kb.trap_site(2 + s, f"check {s}", f"model.py:{s}")
            bad = B.binary("eq", v, B.const(5, dt.int32)) if s == sites - 1 and s else B.lt(v, B.const(0, dt.int32))
            with kb.if_(bad):
                kb.trap(code)
        kb.store(out, i, v)
    return kb.build()


def _trap_atomics(spv: bytes) -> int:
    from poot.jit.llvm.targets.spirv.naga import opcode, parse

    return sum(227 <= opcode(ins) <= 242 for ins in parse(spv)[1])      # OpAtomicLoad .. OpAtomicXor


def test_a_thread_reports_its_first_trap_once_at_the_end(dev):
    """Trap sites keep the code in a local and the kernel reports once: with atomics at each site, lavapipe
    compiled a gather kernel of a few hundred bound checks for ~20 s at its first dispatch."""
    assert _trap_atomics(spirv_val(_checking(40))) == _trap_atomics(spirv_val(_checking(1))) > 0
    k = _checking(40)
    x = 3 * np.arange(8, dtype=np.int32)
    got = run(dev, k, [x, np.zeros(8, np.int32)], (), 1)
    assert np.array_equal(got[1], x)
    with pytest.raises(KernelTrap, match=r"code 2 \(check 0\) at model.py:0"):       # sites 0..38 all fail
        run(dev, k, [np.array([1, -1, 2], np.int32), np.zeros(3, np.int32)], (), 1)
    with pytest.raises(KernelTrap, match=r"code 41 \(check 39\) at model.py:39"):
        run(dev, k, [np.array([1, 5, 2], np.int32), np.zeros(3, np.int32)], (), 1)


def test_trap_in_a_kernel_with_barriers_is_reported_and_writes_nothing_after_it(dev):
    n, wg = 70, 64
    x = np.random.default_rng(3).random(n).astype(np.float32)
    kb = B.KernelBuilder("rsum_checked", workgroup=(wg, 1, 1))
    xb, ob = kb.buffer("x", dt.float32, IN), kb.buffer("out", dt.float32, OUT)
    sh = kb.shared("tile", dt.float32, wg)
    lid, i = kb.let("lid", B.index("local", 0)), kb.let("i", B.index("thread", 0))
    kb.store(sh, lid, kb.load(xb, i, dt.float32))        # threads past len(x) read out of range: a trap
    kb.barrier()
    with kb.if_(B.binary("eq", lid, B.const(0, dt.uint32))):
        kb.store(ob, B.index("group", 0), kb.load(sh, B.const(0, dt.uint32), dt.float32))
    with pytest.raises(KernelTrap) as e:
        run(dev, kb.build(), [x, np.full(2, 7.0, np.float32)], (), 2)
    assert e.value.code == 1 and e.value.kernel == "rsum_checked"


# --- the SPIR-V itself ----------------------------------------------------------------------------
def _barrier_semantics(spv: bytes) -> list[int]:
    from poot.jit.llvm.targets.spirv.naga import opcode, parse

    _, insts = parse(spv)
    consts = {ins[2]: ins[3] for ins in insts if opcode(ins) == 43 and len(ins) == 4}
    return [consts[ins[3]] for ins in insts if opcode(ins) == 224]


def test_barriers_order_workgroup_and_buffer_memory():
    sems = _barrier_semantics(spirv_val(S.reduce_shared_kernel(64)))
    assert sems and all(s & 0x100 and s & 0x40 and s & 0x8 for s in sems)


def test_without_the_barrier_fix_a_shared_memory_reduction_goes_wrong(dev):
    """The trap the post-pass closes: LLVM's barrier orders no memory; naga then emits a bare
    execution barrier and (on lavapipe) the tree reduction reads stale shared memory."""
    import struct

    from poot.jit.llvm.targets.spirv.naga import BARRIER_SEMANTICS

    spv = compile_kernel(S.reduce_shared_kernel(64), "spirv").data
    words = list(struct.unpack(f"<{len(spv) // 4}I", spv))
    i = 5
    while i < len(words):                            # turn the fixed semantics back into LLVM's 0x10
        if words[i] & 0xFFFF == 43 and words[i] >> 16 == 4 and words[i + 3] == BARRIER_SEMANTICS:
            words[i + 3] = 0x10
        i += words[i] >> 16
    broken = struct.pack(f"<{len(words)}I", *words)
    n, groups = 64 * 2048, 2048
    x = np.random.default_rng(0).random(n).astype(np.float32)
    want = x.reshape(groups, 64).sum(1)
    fixed = run(dev, S.reduce_shared_kernel(64), [x, np.zeros(groups, np.float32)], (), groups)[1]
    np.testing.assert_allclose(fixed, want, rtol=1e-5)
    from types import SimpleNamespace

    from poot.jit.llvm.abi import pack_meta

    program = dev.load(SimpleNamespace(data=broken, name="rsum_unfixed", entry=compile_kernel(
        S.reduce_shared_kernel(64), "spirv").entry, folds_grid=True))
    bufs = [dev.allocate(x.nbytes), dev.allocate(4 * groups)]
    dev.write(bufs[0], x)
    meta = pack_meta(S.reduce_shared_kernel(64), [n, groups], (), groups)
    mb, tb = dev.allocate(meta.nbytes), dev.allocate(16)
    dev.write(mb, meta)
    dev.dispatch(program, bufs + [mb, tb], (groups, 1, 1))
    out = np.array(dev.read(bufs[1])).view(np.float32)
    wrong = int((~np.isclose(out, want, rtol=1e-5)).sum())
    if wrong == 0:
        pytest.skip(f"{dev.info.get('device')} orders shared memory even without the barrier semantics")
    assert wrong > 0


def test_narrow_ints_are_computed_without_8_or_16_bit_types():
    from poot.jit.llvm.targets.spirv.naga import opcode, parse

    spv = spirv_val(S.binary_kernel("shr", dt.int16))
    widths = {ins[2] for ins in parse(spv)[1] if opcode(ins) == 21}
    assert widths <= {32, 64}


def test_llvm_abort_is_a_lowering_error_and_the_next_compile_works():
    from poot.jit.llvm.targets.spirv.worker import compile_spirv

    handle = 'target("spirv.VulkanBuffer", [0 x i32], 12, 1)'
    mangled = "tspirv.VulkanBuffer_a0i32_12_1t"
    ir = f"""target triple = "spirv1.6-unknown-vulkan1.3-compute"
@.str = private unnamed_addr constant [2 x i8] c"a\\00"
declare {handle} @llvm.spv.resource.handlefrombinding.{mangled}(i32, i32, i32, i32, ptr)
declare ptr addrspace(11) @llvm.spv.resource.getpointer.p11.{mangled}({handle}, i32)
define void @main() #0 {{
  %h = call {handle} @llvm.spv.resource.handlefrombinding.{mangled}(i32 0, i32 0, i32 1, i32 0, ptr @.str)
  %p = call ptr addrspace(11) @llvm.spv.resource.getpointer.p11.{mangled}({handle} %h, i32 0)
  %r = cmpxchg ptr addrspace(11) %p, i32 0, i32 1 monotonic monotonic
  ret void
}}
attributes #0 = {{ "hlsl.shader"="compute" "hlsl.numthreads"="1,1,1" }}
"""
    with pytest.raises(LoweringError, match="SPIR-V backend failed"):
        compile_spirv(ir, "aborts")
    assert compile_kernel(S.add_kernel(dt.float32, wg=32), "spirv", use_cache=False).data[:4] == b"\x03\x02\x23\x07"
