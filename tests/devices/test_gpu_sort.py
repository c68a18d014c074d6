"""sort and argsort as device kernels (poot/jit/codegen/gpu_sort.py: a bitonic network over (key, index)
pairs) against NumPy's stable sorts, on every device of POOT_TEST_DEVICES (the kernels on GPU devices,
the host step on the CPU), and on the CPU device with the kernels forced (POOT_GPU_SORT=kernels: the
same workgroups run by the CPU's lowering, so CI checks the network where no GPU is).

Sorting computes nothing, so every comparison is exact and bitwise: the order of ties (original order,
also when descending), -0.0 and +0.0 (tied, each keeping its sign), NaNs (last; first in a descending
argsort) and the padding of rows to a power of two.
"""
from __future__ import annotations

import collections
import subprocess

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from poot.fuse.plan import plan_fusion
from poot.graph import Aval, Eqn, Graph, Var
from poot.graph.ops import OPS
from poot.jit.codegen import generate, gpu_sort
from poot.jit.runtime import execute
from poot.jit.runtime.host import HostStep
from ptxas_tool import PTXAS, SKIP_REASON
from target_caps import CUDA_CAPS, ROCM_CAPS

DTYPES = [np.float32, np.int32, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16, np.int8, np.int16,
          np.float64, np.int64, np.uint64]
FLOAT_POOL = [0.0, -0.0, np.nan, -np.nan, 1.5, -1.5, np.inf, -np.inf, 2.0, 1e-3, -7.25]
SIZES = [0, 1, 2, 3, 5, 7, 16, 33, 100, 257]


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16


def tricky(dtype, shape, rng, pool=FLOAT_POOL) -> np.ndarray:
    """Values with many ties and the special cases of each kind (floats drawn from `pool`)."""
    if _is_float(dtype):
        return rng.choice(np.array(pool), size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.choice(np.array([info.min, info.max, 0, 1, 3, info.max // 2], dtype), size=shape)


def expected(a: np.ndarray, axis: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's stable sort and argsort; descending as the host op defines it: the sort is the ascending
    one reversed, the argsort keeps ties in their original order (NaNs first)."""
    wide = a.astype(np.float32) if a.dtype in (np.float16, ml_dtypes.bfloat16) else a    # ml_dtypes' own sort differs
    order = np.argsort(wide, axis=axis, kind="stable")
    values = np.take_along_axis(a, order, axis=axis)
    if not descending:
        return values, order
    n = a.shape[axis]
    flipped = np.argsort(np.flip(wide, axis=axis), axis=axis, kind="stable")
    return np.flip(values, axis=axis), n - 1 - np.flip(flipped, axis=axis)


def bits(v: np.ndarray) -> np.ndarray:
    return v.view(f"u{v.dtype.itemsize}") if v.dtype.kind in "fV" else v


def check(a: np.ndarray, axis: int, descending: bool, jit: bool = False) -> None:
    want_values, want_order = expected(a, axis, descending)

    def both(x):
        return (pt.sort(x, axis=axis, descending=descending), pt.argsort(x, axis=axis, descending=descending))

    fn = pt.jit(both) if jit else both
    x = pt.asarray(a)
    if jit:
        fn(x)                     # the second call replays the recorded program
    values, order = (r.numpy() for r in fn(x))
    where = f"{a.dtype.name}{a.shape} axis={axis} descending={descending}"
    assert values.dtype == a.dtype and order.dtype == np.int64, where
    np.testing.assert_array_equal(bits(values), bits(want_values), err_msg=where)
    np.testing.assert_array_equal(order, want_order, err_msg=where)


def _skip_unsupported(dtype, device: str) -> None:
    caps = pt.devices.get(device).caps if device != "oracle" else None
    if caps is not None and np.dtype(dtype).itemsize == 8 and not (caps.float64 and caps.int64):
        pytest.skip(f"{device} has no 64-bit types")


@st.composite
def sort_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.sampled_from(SIZES[:7] if ndim > 1 else SIZES)) for _ in range(ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    return dtype, shape, axis, draw(st.booleans()), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=sort_cases())
def test_sort_and_argsort_match_numpy_stable(device, case):
    dtype, shape, axis, descending, seed = case
    _skip_unsupported(dtype, device)
    check(tricky(dtype, shape, np.random.default_rng(seed)), axis, descending)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16,
                                   np.float64])
@pytest.mark.parametrize("shape,axis", [((1,), 0), ((0, 4), 1), ((5, 37), 0), ((3, 4, 129), -1), ((2, 300), 1)])
def test_each_dtype_eager_and_jitted(device, dtype, shape, axis):
    _skip_unsupported(dtype, device)
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    a = tricky(dtype, shape, rng)
    check(a, axis, False)
    check(a, axis, True, jit=True)


def test_long_rows_take_the_merge_launches(device, monkeypatch):
    """Rows longer than a workgroup's tile are merged by launches over scratch (a small tile here, in a
    program cache of its own, and one row of 2**17 at the default tile)."""
    monkeypatch.setattr(gpu_sort, "MAX_TILE", 64)
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    rng = np.random.default_rng(7)
    check(tricky(np.float32, (3, 1001), rng), 1, False)
    check(tricky(np.int32, (999, 2), rng), 0, True)
    monkeypatch.undo()
    a = rng.standard_normal(1 << 17).astype(np.float32)
    a[::97] = a[5]                                        # ties across the whole row
    check(a, 0, False)


def test_on_gpus_the_plan_has_no_host_step(device, monkeypatch):
    x = pt.asarray(np.arange(300, dtype=np.float32)[::-1].copy())
    f = pt.jit(lambda v: (pt.sort(v), pt.argsort(v, descending=True)))
    lowered = f.lower(x)
    if device == "oracle":
        return
    program = lowered._prog.program
    host_steps = [a for _, actions, _ in program.steps for kind, *a in actions if kind == "host"]
    if lowered.target == "cpu":          # NumPy's sort is faster there: the host step stays
        assert len(host_steps) == 2 and all(isinstance(a[0], HostStep) for a in host_steps)
        return
    assert not host_steps
    names = sorted(k.name.split("_", 1)[1] for k in lowered.kernels)       # one launch each: rows fit a tile
    assert names == ["argsort_tile", "sort_tile"]
    assert "device -> host" not in lowered.as_text("plan")
    values, order = f(x)
    np.testing.assert_array_equal(values.numpy(), np.arange(300, dtype=np.float32))
    np.testing.assert_array_equal(order.numpy(), np.arange(300))           # x is 299, 298, .., 0

    monkeypatch.setenv("POOT_GPU_SORT", "host")       # the host step again, on request
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    g = pt.jit(lambda v: pt.sort(v) * 2.0)
    text = g.lower(x).as_text("plan")
    assert "device -> host" in text
    np.testing.assert_array_equal(g(x).numpy(), np.arange(300, dtype=np.float32) * 2)


@pytest.fixture
def cpu_kernels(monkeypatch):
    """The CPU device with the sort kernels forced, and a program cache of its own (a program cached
    under the same graph would hold the host step)."""
    monkeypatch.setenv("POOT_GPU_SORT", "kernels")
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    with pt.device("cpu"):
        yield


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=sort_cases())
def test_the_kernels_on_the_cpu_device(cpu_kernels, case):
    dtype, shape, axis, descending, seed = case
    check(tricky(dtype, shape, np.random.default_rng(seed)), axis, descending)


def test_the_kernels_merge_long_rows_on_the_cpu_device(cpu_kernels, monkeypatch):
    monkeypatch.setattr(gpu_sort, "MAX_TILE", 32)
    rng = np.random.default_rng(3)
    for dtype, shape, axis in [(np.float64, (2, 700), 1), (np.float16, (300, 3), 0), (np.int64, (1, 4, 129), 2)]:
        a = tricky(dtype, shape, rng)
        check(a, axis, False)
        check(a, axis, True)
    lowered = pt.jit(lambda v: pt.argsort(v, axis=1)).lower(pt.asarray(tricky(np.float32, (2, 700), rng)))
    names = [k.name for k in lowered.kernels]      # tile sort, then stages 64..1024: steps and merges
    assert names[0].endswith("_tile") and names[-1].endswith("_merge")
    # stage 2**s has s - 5 distances >= 32, taken up to three per launch: 1, 2, 3, 3+1, 3+2
    steps = [n.rsplit("_", 1)[1] for n in names if "_step" in n]
    assert names.count("k0_argsort_merge") == 5 and steps == ["step1", "step2", "step3", "step3", "step1",
                                                              "step3", "step2"]


def test_a_bad_mode_is_named(monkeypatch):
    monkeypatch.setenv("POOT_GPU_SORT", "fast")
    with pytest.raises(pt.PootError, match="POOT_GPU_SORT is 'fast'"):
        gpu_sort.sort_path()


# --- the kernels assemble for the targets this machine cannot run ----------------------------------
def _sort_kernels(caps, dtype, shape, op="sort") -> list:
    x = Var(Aval(shape, dtype))
    params = {"axis": len(shape) - 1, "descending": True}
    out = Var(OPS[op].shape_rule([x.aval], **params))
    plan = plan_fusion(Graph([x], [Eqn(op, [x], params, out)], [out]))
    kernels = {}
    for step in plan.kernel_steps:
        for launch in generate(step, plan, caps).launches:
            kernels[id(launch.kernel)] = launch.kernel
    return list(kernels.values())


@pytest.mark.parametrize("dtype,op", [(pt.float32, "sort"), (pt.float64, "argsort"), (pt.bfloat16, "sort"),
                                      (pt.int8, "sort")])
def test_the_ptx_assembles(dtype, op, tmp_path):
    from poot.jit.llvm.compile import compile_kernel

    if PTXAS is None:
        pytest.skip(SKIP_REASON)
    kernels = _sort_kernels(CUDA_CAPS, dtype, (2, 20000), op)
    assert len(kernels) == 6          # tile, steps of 1 to 3 distances, merge, the last merge
    for kernel in kernels:
        art = compile_kernel(kernel, "ptx", arch="sm_90")
        path = tmp_path / f"{art.entry}.ptx"
        path.write_text(art.data)
        r = subprocess.run([PTXAS, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                           text=True)
        assert r.returncode == 0, f"kernel '{kernel.name}':\n{r.stderr}"


def test_the_amdgcn_links():
    pytest.importorskip("ziglang", reason="linking a HSACO needs the ziglang wheel's ld.lld")
    from poot.jit.llvm.compile import compile_kernel
    from poot.jit.llvm.targets.amdgcn.hsaco import inspect_hsaco

    for kernel in _sort_kernels(ROCM_CAPS, pt.int16, (2, 3000), "argsort"):
        art = compile_kernel(kernel, "amdgcn", arch="gfx942")
        assert art.entry.encode() in inspect_hsaco(art.data).metadata
