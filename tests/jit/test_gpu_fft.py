"""Complex FFTs of power-of-two lengths as device kernels (poot/jit/codegen/gpu_fft.py: radix-2 Stockham
stages) against numpy.fft, on every device of POOT_TEST_DEVICES with the kernels forced
(POOT_GPU_FFT=kernels: on the CPU device too, so CI checks them where no GPU is): fft, ifft, fftn and
ifftn, every norm, along the last axis and a strided middle one, eager and inside @pt.jit. The
transforms the kernels leave to the host step (other lengths, padding, truncation, the real ones)
still give NumPy's results.

The tolerance is the dtype's epsilon times log2(n) (a radix-2 FFT's error grows with its stage count),
relative to the largest magnitude of the result.
"""
from __future__ import annotations

import collections
import subprocess

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.devices.base import Capabilities
from poot.fuse.plan import plan_fusion
from poot.graph import Aval, Eqn, Graph, Var
from poot.graph.ops import OPS
from poot.jit.codegen import generate, gpu_fft
from poot.jit.runtime import execute
from poot.jit.runtime.host import HostStep
from ptxas_tool import PTXAS, SKIP_REASON
from target_caps import CUDA_CAPS, ROCM_CAPS

NORMS = ("backward", "ortho", "forward")
LENGTHS = [2, 4, 16, 128, 1024, 4096]        # every stage count parity, tiles and stages


@pytest.fixture(params=["tiles", "stages"])
def kernels(request, device, monkeypatch):
    """The FFT kernels forced on `device`, with a program cache of its own (a program cached under
    the same graph would hold the host step): rows that fit a workgroup's shared memory in one launch
    ("tiles"), or every row a launch per stage ("stages")."""
    monkeypatch.setenv("POOT_GPU_FFT", "kernels")
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    if request.param == "stages":
        monkeypatch.setattr(gpu_fft, "MAX_TILE", 0)
    return device


def _complex(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _skip_without_float64(dtype, device) -> None:
    if np.dtype(dtype) == np.complex128 and device != "oracle" and not pt.devices.get(device).caps.float64:
        pytest.skip(f"{device} has no float64")


def close(got: np.ndarray, want: np.ndarray, points: int, where: str) -> None:
    """`got` within the dtype's epsilon x 4 log2(points) of `want`, relative to want's largest value."""
    assert got.dtype == want.dtype and got.shape == want.shape, where
    eps = np.finfo(want.dtype).eps
    bound = 4 * eps * max(1, np.log2(points)) * max(np.abs(want).max(), np.finfo(want.dtype).tiny)
    err = np.abs(got - want).max()
    assert err <= bound, f"{where}: error {err:.3g} above {bound:.3g}"


def check(a: np.ndarray, fn: str, norm: str, jit: bool = False, **where) -> None:
    """pt.fft.`fn`(a, **where) against numpy.fft's (eager, or jitted and called twice)."""
    want = getattr(np.fft, fn)(a, norm=norm, **where).astype(np.result_type(a.dtype, np.complex64))
    f = (lambda v: getattr(pt.fft, fn)(v, norm=norm, **where))
    if jit:
        f = pt.jit(f)
        f(pt.asarray(a))          # the second call replays the recorded program
    got = f(pt.asarray(a)).numpy()
    points = int(np.prod([a.shape[ax] for ax in where.get("axes", [where.get("axis", -1)])]))
    close(got, want, points, f"{fn}{a.shape} {a.dtype.name} {where} norm={norm}")


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("fn", ["fft", "ifft"])
def test_rows_along_the_last_axis(kernels, fn, n):
    a = _complex((3, n), np.complex64, seed=n)
    # the stage launches: one norm per length (each norm only scales the last stage), every norm for tiles
    for norm in NORMS if gpu_fft.MAX_TILE else NORMS[LENGTHS.index(n) % 3:][:1]:
        check(a, fn, norm)


@pytest.mark.parametrize("n", [8, 1024])
def test_complex128(kernels, n):
    _skip_without_float64(np.complex128, kernels)
    a = _complex((2, n), np.complex128, seed=n)
    for fn in ("fft", "ifft"):
        for norm in NORMS:
            check(a, fn, norm)


@pytest.mark.parametrize("n", [4, 256])
def test_a_strided_middle_axis(kernels, n):
    a = _complex((3, n, 5), np.complex64, seed=n)
    for fn in ("fft", "ifft"):
        for norm in NORMS:
            check(a, fn, norm, axis=1)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_several_axes(kernels, dtype):
    _skip_without_float64(dtype, kernels)
    a = _complex((4, 8, 16), dtype)
    for norm in NORMS:
        check(a, "fftn", norm, axes=(0, 1, 2))
        check(a, "ifftn", norm, axes=(2, 0))
    check(a, "fft2", "backward", axes=(-2, -1))
    check(a, "ifft2", "ortho", axes=(0, 1))


def test_one_long_row(kernels):
    a = _complex((1 << 16,), np.complex64, seed=16)
    check(a, "fft", "backward")
    check(a, "ifft", "ortho")


def test_real_and_half_precision_operands(kernels):
    """A real operand is transformed as complex: float32 and float16 as complex64."""
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float16):
        a = rng.standard_normal((5, 64)).astype(dtype)
        got = pt.fft.fft(pt.asarray(a)).numpy()
        close(got, np.fft.fft(a.astype(np.float32)).astype(np.complex64), 64, f"fft of {np.dtype(dtype).name}")


def test_inside_jit(kernels):
    a = _complex((2, 16, 3), np.complex64)
    check(a, "fft", "ortho", jit=True, axis=1)
    check(a, "ifftn", "forward", jit=True, axes=(0, 1))

    @pt.jit
    def filtered(x):                       # the transforms among fused kernels
        return pt.fft.ifft(pt.fft.fft(x * 2.0) * 0.5)

    x = pt.asarray(a)
    filtered(x)
    close(filtered(x).numpy(), np.fft.ifft(np.fft.fft(a * 2) * 0.5).astype(np.complex64), 9, "ifft(fft(x))")


@pytest.mark.parametrize("fn,shape,where", [
    ("fft", (3, 12), {}), ("ifft", (7,), {}), ("fft", (2, 10), {"n": 16}), ("fft", (2, 16), {"n": 8}),
    ("fftn", (6, 8), {"axes": (0, 1)}), ("fft", (1,), {}), ("rfft", (4, 16), {}), ("irfft", (4, 9), {}),
    ("rfftn", (8, 16), {}), ("hfft", (3, 9), {}), ("ihfft", (3, 16), {})])
def test_what_the_kernels_leave_to_the_host_step(kernels, fn, shape, where):
    a = _complex(shape, np.complex64, seed=len(shape))
    if fn in ("rfft", "rfftn", "ihfft"):
        a = a.real.copy()
    want = getattr(np.fft, fn)(a, **where)
    got = getattr(pt.fft, fn)(pt.asarray(a), **where).numpy()
    points = max(shape[-1], where.get("n", 1), 2)
    close(got, want.astype(got.dtype), 2 * points, f"{fn}{shape} {where}")
    if kernels == "oracle":
        return
    lowered = pt.jit(lambda v: getattr(pt.fft, fn)(v, **where)).lower(pt.asarray(a))
    assert _host_steps(lowered), f"{fn}{shape} {where} took the kernels"


def _host_steps(lowered) -> list:
    program = lowered._prog.program
    return [a for _, actions, _ in program.steps for kind, *a in actions if kind == "host"]


def test_the_plan_has_no_host_step(kernels, monkeypatch):
    if kernels == "oracle":
        pytest.skip("the oracle runs no programs")
    x = pt.asarray(_complex((4, 64), np.complex64))
    f = pt.jit(lambda v: pt.fft.fft(v, norm="ortho"))
    lowered = f.lower(x)
    assert not _host_steps(lowered)
    names = [k.name for k in lowered.kernels]
    if gpu_fft.MAX_TILE:                                        # the rows fit a workgroup's shared memory
        assert len(names) == 1 and "_tile" in names[0], names
    else:
        assert len(names) == 6 and all("_stage" in n for n in names), names     # one launch per stage
        assert len(set(names)) == 2 and names[-1] != names[0], names              # the last one scales
    assert "device -> host" not in lowered.as_text("plan")

    monkeypatch.setenv("POOT_GPU_FFT", "host")          # the host step again, on request
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    g = pt.jit(lambda v: pt.fft.fft(v) * 2.0)
    lowered = g.lower(x)
    steps = _host_steps(lowered)
    assert len(steps) == 1 and isinstance(steps[0][0], HostStep)
    close(g(x).numpy(), np.fft.fft(x.numpy()) * 2, 64, "fft on the host")


def test_auto_keeps_the_host_step_on_the_cpu(monkeypatch):
    monkeypatch.setenv("POOT_GPU_FFT", "auto")
    monkeypatch.setattr(execute, "_PROGRAMS", collections.OrderedDict())
    with pt.device("cpu"):
        x = pt.asarray(_complex((64,), np.complex64))
        steps = _host_steps(pt.jit(pt.fft.fft).lower(x))
    assert len(steps) == 1 and isinstance(steps[0][0], HostStep)


def test_a_bad_mode_is_named(monkeypatch):
    monkeypatch.setenv("POOT_GPU_FFT", "fast")
    with pytest.raises(pt.PootError, match="POOT_GPU_FFT is 'fast'"):
        gpu_fft.fft_path()


# --- what the kernels claim, and their PTX ---------------------------------------------------------
def _fft_plan(shape, dtype, fn="fft", axes=None, norm="backward"):
    axes = axes or (len(shape) - 1,)
    x = Var(Aval(tuple(shape) + (2,), dtype))
    params = {"fn": fn, "s": tuple(shape[ax] for ax in axes), "axes": tuple(axes), "norm": norm}
    out = Var(OPS["fft"].shape_rule([x.aval], **params))
    return plan_fusion(Graph([x], [Eqn("fft", [x], params, out)], [out]))


def test_what_is_claimed(monkeypatch):
    monkeypatch.setenv("POOT_GPU_FFT", "auto")
    no_f64 = Capabilities(name="gpu", target="spirv", max_workgroup_size=256, max_workgroups=(65535, 65535, 65535),
                          shared_memory_bytes=32768, subgroup_size=32, cores=8, float64=False)

    def claimed(caps, shape, dtype=dt.float32, **kw):
        (step,) = _fft_plan(shape, dtype, **kw).steps
        return gpu_fft.claims(step, caps)

    assert claimed(CUDA_CAPS, (8, 1024)) and claimed(CUDA_CAPS, (4, 8, 16), fn="ifftn", axes=(0, 2))
    assert claimed(CUDA_CAPS, (2, 64), dt.float64) and not claimed(no_f64, (2, 64), dt.float64)
    assert claimed(no_f64, (2, 64)) and not claimed(CUDA_CAPS, (2, 48)) and not claimed(CUDA_CAPS, (1,))
    cpu = pt.devices.get("cpu").caps
    assert not claimed(cpu, (8, 1024))
    monkeypatch.setenv("POOT_GPU_FFT", "kernels")
    assert claimed(cpu, (8, 1024))


def _fft_kernels(caps, dtype) -> list:
    """The kernels of an fftn over a long middle axis (stages: first, middle, last) and a short last
    axis (a tile launch, scaled)."""
    plan = _fft_plan((4, 4096, 8), dtype, fn="fftn", axes=(1, 2), norm="ortho")
    kernels = {id(launch.kernel): launch.kernel for step in plan.kernel_steps
               for launch in generate(step, plan, caps).launches}
    assert [k.name.rsplit("_", 1)[1] for k in kernels.values()] == ["stage1", "stage2", "stage3", "tile4"]
    return list(kernels.values())


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64])
def test_the_ptx_assembles(dtype, tmp_path, monkeypatch):
    from poot.jit.llvm.compile import compile_kernel

    monkeypatch.setenv("POOT_GPU_FFT", "auto")
    if PTXAS is None:
        pytest.skip(SKIP_REASON)
    for kernel in _fft_kernels(CUDA_CAPS, dtype):
        art = compile_kernel(kernel, "ptx", arch="sm_90")
        path = tmp_path / f"{art.entry}.ptx"
        path.write_text(art.data)
        r = subprocess.run([PTXAS, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                           text=True)
        assert r.returncode == 0, f"kernel '{kernel.name}':\n{r.stderr}"


def test_the_amdgcn_links(monkeypatch):
    monkeypatch.setenv("POOT_GPU_FFT", "auto")
    pytest.importorskip("ziglang", reason="linking a HSACO needs the ziglang wheel's ld.lld")
    from poot.jit.llvm.compile import compile_kernel
    from poot.jit.llvm.targets.amdgcn.hsaco import inspect_hsaco

    for kernel in _fft_kernels(ROCM_CAPS, dt.float32):
        art = compile_kernel(kernel, "amdgcn", arch="gfx942")
        assert art.entry.encode() in inspect_hsaco(art.data).metadata
