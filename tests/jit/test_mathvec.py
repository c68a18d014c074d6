"""CPU float sin/cos with vector variants (poot/jit/llvm/mathvec.py): the float-only fast path below
FAST_BOUND, the exact (double) reduction above it, one branch per vector; against NumPy in float64.

The hard cases of the fast path: arguments next to multiples of pi/2 (the reduction cancels), both
sides of the bound, vectors mixing small and huge lanes (the vector branches to the exact path, its
big lanes take those results), special values; and the scalar function (remainder loops) must give
the same bits as the vector one. Also the CPU's float tanh (mathvec.CPU_FLOAT) in a vectorized loop.
"""
import re

import numpy as np
import pytest

import poot as pt
from poot import devices, dtypes as dt
from poot.fuse.plan import plan_fusion
from poot.jit.llvm.compile import llvm_ir
from poot.jit.codegen import generate
from poot.jit.llvm.mathvec import FAST_BOUND
from poot.jit.llvm.targets.cpu.target import MAX_INLINED_VARIANT_CALLS, CpuTarget

from fuse.graphs import G
from kir_samples import unary_kernel
from mathcheck import run_op, ulp_error

OPS = ["sin", "cos"]
MAX_ULP = 1.14      # measured: 1.137 (sin), 1.124 (cos) over 4M uniform [0, FAST_BOUND]; exact path 1.12


def vector_op(op, x):
    """op over x through a fused pointwise kernel: a flat loop the vectorizer widens (run_op's test
    kernel checks bounds per element and stays scalar)."""
    return getattr(pt, op)(pt.array(x)).numpy()


def _check(op, x, bound=MAX_ULP + 0.05, run=vector_op):
    got = run(op, x)
    with np.errstate(invalid="ignore"):
        ref = getattr(np, op)(x.astype(np.float64))
    err, i = ulp_error(got, ref, np.float32)
    assert err <= bound, f"{op}({x[i]!r}) = {got[i]!r}, reference {ref[i]!r}: {err} ulp"
    return got


def _group_ir(kernel, arch=None) -> str:
    ir = llvm_ir(kernel, "cpu", arch=arch)
    return next(f for f in ir.split("\ndefine ") if ".group(" in f.split("\n")[0])


def _near_multiples_of_pio2():
    """The floats nearest to k*pi/2 (and 3 ulps either side) for every k below FAST_BOUND."""
    k = np.arange(1, int(FAST_BOUND / (np.pi / 2)) + 2)
    bits = np.float32(k * (np.pi / 2)).view(np.int32)
    x = np.concatenate([(bits + d).view(np.float32) for d in range(-3, 4)])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("run", [vector_op, run_op], ids=["vector", "scalar"])
@pytest.mark.parametrize("op", OPS)
def test_fast_path_accuracy(op, run):
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-FAST_BOUND, FAST_BOUND, 400_000), rng.uniform(-4, 4, 200_000)])
    _check(op, x.astype(np.float32), run=run)


@pytest.mark.parametrize("op", OPS)
def test_arguments_next_to_multiples_of_pi_over_2(op):
    _check(op, _near_multiples_of_pio2())


@pytest.mark.parametrize("op", OPS)
def test_both_sides_of_the_fast_bound(op):
    b = np.float32(FAST_BOUND)
    steps = np.arange(-4096, 4096, dtype=np.int32)
    x = (b.view(np.int32) + steps).view(np.float32)       # every float within 4096 ulps of the bound
    assert x.min() < FAST_BOUND < x.max()
    _check(op, np.concatenate([x, -x]))


@pytest.mark.parametrize("op", OPS)
def test_vectors_mixing_small_and_huge_lanes(op):
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, 64 * 1024).astype(np.float32)
    lanes = rng.choice(x.size, 600, replace=False)
    x[lanes] = rng.choice(np.array([1e5, -3e7, 2.0 ** 49, 1e20, np.inf, -np.inf, np.nan], np.float32), 600)
    got = _check(op, x)
    assert np.all(np.isnan(got[np.isinf(x) | np.isnan(x)]))
    assert not np.isnan(got[np.isfinite(x)]).any()      # huge lanes too (mathtrig's reduction)


@pytest.mark.parametrize("op", OPS)
def test_special_values(op):
    fi = np.finfo(np.float32)
    x = np.array([0.0, -0.0, fi.tiny, -fi.tiny, fi.tiny / 8, -fi.tiny / 8, fi.smallest_subnormal,
                  1e-30, -1e-30, 1.0, -1.0, np.pi / 4, FAST_BOUND, -FAST_BOUND] * 4, np.float32)
    got = _check(op, x, bound=1.0)
    if op == "sin":
        assert np.array_equal(np.signbit(got[:2]), [False, True])
        tiny = np.abs(x) < 1e-20
        assert np.array_equal(got[tiny], x[tiny])          # sin x = x, subnormals kept
    else:
        assert np.all(got[np.abs(x) < 1e-20] == 1.0)


@pytest.mark.parametrize("op", OPS)
def test_scalar_and_vector_paths_give_the_same_bits(op):
    """run_op's kernel calls the scalar function per element; the fused kernel the vector variant."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-10, 10, 4000), rng.uniform(-1e5, 1e5, 4000),
                        [FAST_BOUND * 1.01, 1e9, -0.0, np.nan] * 16]).astype(np.float32)
    rng.shuffle(x)
    assert np.array_equal(vector_op(op, x).view(np.int32), run_op(op, x).view(np.int32))


def test_the_cpu_loop_runs_the_vector_variant_and_gpu_targets_keep_the_inlined_function():
    lanes = CpuTarget().math_lanes
    g = G()
    (step,) = (plan := plan_fusion(g.graph(g.op("sin", g.input((4096,)))))).kernel_steps
    (launch,) = generate(step, plan, devices.get("cpu").caps).launches
    group = _group_ir(launch.kernel)
    if lanes:      # inlined after the vectorizer: no call left, one any-lane-big test per vector
        assert not re.search(r"call [^@]*@poot\.sin", group), group
        widths = "|".join(str(n) for n in lanes)     # the width the vectorizer picked (8 or 16 on AVX-512)
        assert re.search(rf"bitcast <({widths}) x i1> \S+ to i\1\b", group), group
        assert "fma.v16f64" not in group or "exact" in group          # the double path is a branch
    for target in ("ptx", "spirv"):
        ir = llvm_ir(unary_kernel("sin"), target, optimized=False)
        assert "vector-function-abi-variant" not in ir and "poot.sin.f32.v" not in ir


@pytest.mark.parametrize("n", [1, 17, 1000, 4096])
def test_small_constant_sizes_stay_small_and_right(n):
    """A short constant-trip loop is fully unrolled around the variant calls: those stay calls
    (inlining 62 copies of sin made codegen 10x slower), and every size gives the same bits."""
    g = G()
    (step,) = (plan := plan_fusion(g.graph(g.op("sin", g.input((n,)))))).kernel_steps
    (launch,) = generate(step, plan, devices.get("cpu").caps).launches
    group = _group_ir(launch.kernel)
    assert len(re.findall(r"^exact[\w.]*:", group, re.M)) <= MAX_INLINED_VARIANT_CALLS
    x = np.random.default_rng(n).uniform(-9e4, 9e4, n).astype(np.float32)
    assert np.array_equal(vector_op("sin", x).view(np.int32), run_op("sin", x).view(np.int32))


@pytest.mark.parametrize("arch", ["skylake-avx512", "znver4", "haswell", "x86-64"])
def test_every_x86_cpu_gets_a_variant_of_the_width_its_vectorizer_picks(arch):
    """Intel's AVX-512 parts vectorize with 8 lanes, Zen 4 with 16, SSE with 4: a width without a
    variant would cost one scalar call per lane (8 per vector on skylake-avx512 with 16 only)."""
    if not CpuTarget().math_lanes:
        pytest.skip("vector variants are built for x86-64 hosts only")
    g = G()
    (step,) = (plan := plan_fusion(g.graph(g.op("sin", g.input((100_000,)))))).kernel_steps
    (launch,) = generate(step, plan, devices.get("cpu").caps).launches
    group = _group_ir(launch.kernel, arch)
    assert len(re.findall(r"call [^@]*@poot\.sin\.f32\(", group)) <= 1       # the scalar remainder at most
    assert re.search(r"<(4|8|16) x float> @llvm\.fma", group)


def test_cpu_tanh_in_a_vectorized_loop():
    """Accuracy as mathlib's tanh (2.1 ulp measured there), -0.0, NaN and +-inf kept."""
    x = np.random.default_rng(8).uniform(-12, 12, 300_000).astype(np.float32)
    x[:6] = [-0.0, 0.0, np.nan, np.inf, -np.inf, np.finfo(np.float32).smallest_subnormal]
    got = vector_op("tanh", x)
    err, i = ulp_error(got, np.tanh(x.astype(np.float64)), np.float32)
    assert err <= 2.2 + 0.05, f"tanh({x[i]!r}) = {got[i]!r}: {err} ulp"
    assert np.signbit(got[0]) and not np.signbit(got[1]) and np.isnan(got[2])
    assert got[5] == x[5]


def test_float64_trig_branches_to_the_huge_reduction():
    """Double sin/cos/tan have vector variants too: the Payne-Hanek path runs only for a vector with a
    lane beyond 2**50, and its lanes agree with NumPy."""
    ir = llvm_ir(unary_kernel("sin", dt.float64), "cpu", optimized=False)
    assert "vector-function-abi-variant" in ir and "poot.sin.f64.v" in ir
    rng = np.random.default_rng(9)
    x = rng.uniform(-10, 10, 40_000)
    x[rng.choice(x.size, 300, replace=False)] = rng.choice([1e16, -3e200, 2.0 ** 60, 1e300], 300)
    for op in ("sin", "cos", "tan"):
        err, i = ulp_error(vector_op(op, x), getattr(np, op)(x), np.float64)
        assert err <= 3.05, f"{op}({x[i]!r}): {err} ulp"
