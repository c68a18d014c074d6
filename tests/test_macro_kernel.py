"""The seed's macro_kernel test, in Python: an @pt.kernel add is imported (one kernel, three buffer
params), compiled to SPIR-V (validated with spirv-val), and dispatched on a GPU device; only the parts
this machine or build cannot do are skipped, with the reason."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.kernel.cli import load_kernels
from poot.jit.kir.model import Access, BufferParam


@pt.kernel
def add(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(c):
        c[i] = a[i] + b[i]


def _inputs(n=1000):
    rng = np.random.default_rng(7)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_importer_finds_one_kernel_with_three_buffer_params():
    kernels = load_kernels(__file__)
    assert [k.name for k in kernels] == ["add"]
    kir = kernels[0].kir
    assert kir.params == (BufferParam("a", pt.f32, Access.READ), BufferParam("b", pt.f32, Access.READ),
                          BufferParam("c", pt.f32, Access.WRITE))
    assert kir.workgroup == (64, 1, 1)


def test_add_emulates():
    a, b = _inputs()
    c = np.zeros_like(a)
    add.emulate(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_add_runs_on_the_cpu_device():
    a, b = _inputs()
    c = np.zeros_like(a)
    add(pt.Context("cpu"), a, b, c)
    np.testing.assert_array_equal(c, a + b)


def _spirv(tmp_path):
    from poot.jit.llvm import compile as jit_compile

    if "spirv" not in jit_compile.TARGETS:
        pytest.skip("the SPIR-V compile target is not built yet in this version of poot")
    art = jit_compile.compile_kernel(add.kir, "spirv")
    path = tmp_path / "add.spv"
    path.write_bytes(art.data)
    return path


def test_emitted_spirv_is_read_back_and_validates(tmp_path):
    path = _spirv(tmp_path)
    words = np.frombuffer(path.read_bytes(), dtype=np.uint32)
    assert words[0] == 0x07230203, "not a SPIR-V module (bad magic number)"
    tool = shutil.which("spirv-val")
    if tool is None:
        pytest.skip("spirv-val is not installed (Debian package spirv-tools)")
    out = subprocess.run([tool, "--target-env", "vulkan1.3", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_poot_compile_writes_and_checks_spirv(tmp_path):
    from poot.cli import main

    _spirv(tmp_path)
    out = tmp_path / "cli_add.spv"
    assert main(["compile", f"{__file__}::add", "--target", "spirv", "-o", str(out), "--check"]) == 0
    assert out.read_bytes()[:4] == bytes.fromhex("03022307")


@pytest.mark.parametrize("kind", ["wgpu", "vulkan", "cuda", "rocm"])
def test_add_dispatches_on_a_gpu_device(kind):
    from poot.jit.llvm import compile as jit_compile

    try:
        device = devices.get(kind)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"no {kind} device here: {e}")
    if device.caps.target not in jit_compile.TARGETS:
        pytest.skip(f"{kind} is here but its '{device.caps.target}' compile target is not built yet")
    a, b = _inputs()
    c = np.zeros_like(a)
    add(pt.Context(device), a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_poot_compile_kir_round_trips(tmp_path):
    from poot.cli import main
    from poot.jit.kir.serialize import from_json

    out = tmp_path / "add.kir.json"
    assert main(["compile", f"{__file__}::add", "--target", "kir", "-o", str(out)]) == 0
    assert from_json(out.read_text()) == add.kir


def test_poot_compile_ptx_passes_ptxas(tmp_path, capsys):
    from poot.cli import main

    out = tmp_path / "add.ptx"
    assert main(["compile", f"{__file__}::add", "--target", "ptx", "--arch", "sm_90", "-o", str(out),
                 "--check"]) == 0
    assert ".entry" in out.read_text()
    said = capsys.readouterr().out
    assert "ptxas OK" in said or "ptxas is not installed" in said


def test_poot_compile_refuses_an_unknown_target_naming_the_known_ones(tmp_path, capsys):
    from poot.cli import main

    with pytest.raises(SystemExit) as e:
        main(["compile", f"{__file__}::add", "--target", "mips", "-o", str(tmp_path / "x")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'mips'" in err and "'amdgcn'" in err and "'ptx'" in err
    assert not (tmp_path / "x").exists()


def test_poot_compile_refuses_an_unknown_kernel_name(tmp_path, capsys):
    from poot.cli import main

    assert main(["compile", f"{__file__}::nope", "--target", "kir", "-o", str(tmp_path / "x")]) == 1
    assert "no @pt.kernel function named 'nope'" in capsys.readouterr().err
