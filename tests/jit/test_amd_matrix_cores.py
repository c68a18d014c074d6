"""AMD matrix cores in `@pt.kernel` bodies, without an AMD GPU: `pt.mfma_16x16x16` (CDNA, wave64) and
`pt.wmma_16x16x16` (RDNA3, wave32) emulate exactly in their per-lane fragment layouts, the KIR verifier
refuses malformed ones, every target or arch without them refuses them at compile time, and the GEMMs built
on them (kernels/contraction/gemm_bf16_mfma.py, gemm_bf16_wmma.py) match NumPy under emulation and link to
HSACOs whose code holds the matrix instructions."""
from __future__ import annotations

import dataclasses
import re

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.errors import KernelImportError, KIRError, NotBuiltError, PootError
from poot.jit.kir.model import Cast, Mma
from poot.jit.kir.verify import verify
from poot.jit.llvm.compile import compile_kernel, get_target, llvm_ir

LOW = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}


@pt.device_fn
def mfma_tile(a, b, c, d):
    """D = A @ B + C for the 16x16 tile of this wave (row-major, 256 elements a tile, wave w's at 256 w)."""
    local = pt.local_index_x()
    lane = local % 64
    base = (local // 64) * 256
    i = lane % 16
    k = 4 * (lane // 16)
    d0, d1, d2, d3 = pt.mfma_16x16x16(
        a[base + i * 16 + k], a[base + i * 16 + k + 1], a[base + i * 16 + k + 2], a[base + i * 16 + k + 3],
        b[base + k * 16 + i], b[base + (k + 1) * 16 + i], b[base + (k + 2) * 16 + i], b[base + (k + 3) * 16 + i],
        c[base + k * 16 + i], c[base + (k + 1) * 16 + i], c[base + (k + 2) * 16 + i], c[base + (k + 3) * 16 + i])
    d[base + k * 16 + i] = d0
    d[base + (k + 1) * 16 + i] = d1
    d[base + (k + 2) * 16 + i] = d2
    d[base + (k + 3) * 16 + i] = d3


@pt.kernel(workgroup=(128, 1, 1))
def mfma_bf16(a: pt.In[pt.bf16], b: pt.In[pt.bf16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    mfma_tile(a, b, c, d)


@pt.kernel(workgroup=(128, 1, 1))
def mfma_f16(a: pt.In[pt.f16], b: pt.In[pt.f16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    mfma_tile(a, b, c, d)


@pt.device_fn
def wmma_tile(a, b, c, d):
    """D = A @ B + C for the 16x16 tile of this wave (row-major, wave w's at 256 w)."""
    local = pt.local_index_x()
    lane = local % 32
    i = lane % 16
    h = lane // 16
    r = (local // 32) * 256 + i * 16    # A's row i
    n = (local // 32) * 256 + i         # B's, C's and D's column i
    d0, d1, d2, d3, d4, d5, d6, d7 = pt.wmma_16x16x16(
        a[r], a[r + 1], a[r + 2], a[r + 3], a[r + 4], a[r + 5], a[r + 6], a[r + 7],
        a[r + 8], a[r + 9], a[r + 10], a[r + 11], a[r + 12], a[r + 13], a[r + 14], a[r + 15],
        b[n], b[n + 16], b[n + 32], b[n + 48], b[n + 64], b[n + 80], b[n + 96], b[n + 112],
        b[n + 128], b[n + 144], b[n + 160], b[n + 176], b[n + 192], b[n + 208], b[n + 224], b[n + 240],
        c[n + 16 * h], c[n + 16 * (2 + h)], c[n + 16 * (4 + h)], c[n + 16 * (6 + h)],
        c[n + 16 * (8 + h)], c[n + 16 * (10 + h)], c[n + 16 * (12 + h)], c[n + 16 * (14 + h)])
    d[n + 16 * h] = d0
    d[n + 16 * (2 + h)] = d1
    d[n + 16 * (4 + h)] = d2
    d[n + 16 * (6 + h)] = d3
    d[n + 16 * (8 + h)] = d4
    d[n + 16 * (10 + h)] = d5
    d[n + 16 * (12 + h)] = d6
    d[n + 16 * (14 + h)] = d7


@pt.kernel(workgroup=(64, 1, 1))
def wmma_bf16(a: pt.In[pt.bf16], b: pt.In[pt.bf16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    wmma_tile(a, b, c, d)


@pt.kernel(workgroup=(64, 1, 1))
def wmma_f16(a: pt.In[pt.f16], b: pt.In[pt.f16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    wmma_tile(a, b, c, d)


MFMA = {"bf16": mfma_bf16, "f16": mfma_f16}
WMMA = {"bf16": wmma_bf16, "f16": wmma_f16}


def _tiles(rng, low, count):
    """`count` 16x16 tiles of A, B (16-bit) and C (float32), and the exact A @ B + C rounded once."""
    a = rng.standard_normal((count, 16, 16)).astype(LOW[low])
    b = rng.standard_normal((count, 16, 16)).astype(LOW[low])
    c = rng.standard_normal((count, 16, 16)).astype(np.float32)
    ref = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    return [a.reshape(-1), b.reshape(-1), c.reshape(-1), np.zeros(count * 256, np.float32)], ref.reshape(-1)


# --- emulation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_mfma_emulates_the_exact_sum_rounded_once_per_wave64(low):
    args, ref = _tiles(np.random.default_rng(1), low, 2)      # two waves, two independent tiles
    MFMA[low].emulate(*args, threads=(128, 1, 1))
    np.testing.assert_array_equal(args[3], ref)


@pytest.mark.parametrize("low", ["bf16", "f16"])
def test_wmma_emulates_the_exact_sum_rounded_once_per_wave32(low):
    args, ref = _tiles(np.random.default_rng(2), low, 2)
    WMMA[low].emulate(*args, threads=(64, 1, 1))
    np.testing.assert_array_equal(args[3], ref)


@pytest.mark.parametrize("kernel,threads", [(mfma_bf16, 128), (wmma_bf16, 64)], ids=["mfma", "wmma"])
def test_fragment_layout_places_each_element(kernel, threads):
    """One nonzero A element and one nonzero B element: D has exactly one nonzero, where the layout says."""
    for (i, k, n) in ((0, 0, 0), (5, 9, 14), (15, 15, 3), (8, 3, 9)):
        a, b = np.zeros(512, ml_dtypes.bfloat16), np.zeros(512, ml_dtypes.bfloat16)
        a[i * 16 + k], b[k * 16 + n] = 2.0, 3.0
        d = np.zeros(512, np.float32)
        kernel.emulate(a, b, np.zeros(512, np.float32), d, threads=(threads, 1, 1))
        want = np.zeros(512, np.float32)
        want[i * 16 + n] = 6.0
        np.testing.assert_array_equal(d, want)


def test_wmma_halves_of_the_wave_must_agree():
    """Lanes l and l + 16 pass the same A rows and B columns; a kernel whose halves differ is refused."""
    @pt.kernel(workgroup=(32, 1, 1))
    def skewed(a: pt.In[pt.bf16], d: pt.Out[pt.f32]):
        lane = pt.local_index_x()
        x = a[lane]
        z = pt.bf16(0.0)
        c = pt.f32(0.0)
        d0, d1, d2, d3, d4, d5, d6, d7 = pt.wmma_16x16x16(x, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z,
                                                          x, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z,
                                                          c, c, c, c, c, c, c, c)
        d[lane] = d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7

    with pytest.raises(PootError, match="lanes 0 and 16 pass different A or B elements"):
        skewed.emulate(np.arange(32).astype(ml_dtypes.bfloat16), np.zeros(32, np.float32))


# --- import and KIR ----------------------------------------------------------------------------------
def test_kir_holds_one_mma_node_per_d_element_with_its_shape():
    from poot.jit.kir.text import format_kernel

    for k, shape, n in ((mfma_bf16, "mfma_16x16x16", 4), (wmma_f16, "wmma_16x16x16", 8)):
        text = format_kernel(k.kir)
        assert text.count(f"{shape}(") == n, k.name
        assert f"mma_{shape}" not in text


def test_wrong_result_count_and_operand_types_are_named():
    @pt.kernel(workgroup=(64, 1, 1))
    def three(x: pt.Out[pt.f32]):
        d0, d1, d2 = pt.mfma_16x16x16(1, 1, 1, 1, 1, 1, 1, 1, 0.0, 0.0, 0.0, 0.0)
        x[0] = d0

    with pytest.raises(KernelImportError, match="mfma_16x16x16 returns 4 values"):
        three.kir

    @pt.kernel(workgroup=(64, 1, 1))
    def f32_inputs(a: pt.In[pt.f32], x: pt.Out[pt.f32]):
        v = a[0]
        d0, d1, d2, d3 = pt.mfma_16x16x16(v, v, v, v, v, v, v, v, 0.0, 0.0, 0.0, 0.0)
        x[0] = d0

    with pytest.raises(KernelImportError, match="mfma_16x16x16: A and B elements must be bfloat16 or float16"):
        f32_inputs.kir

    @pt.kernel(workgroup=(32, 1, 1))
    def bare(x: pt.Out[pt.f32]):
        x[0] = pt.wmma_16x16x16(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                1, 1, 1, 1, 1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    with pytest.raises(KernelImportError, match=r"d0, \.\.\., d7 = pt.wmma_16x16x16"):
        bare.kir


def _with_mma(kernel, mma: Mma):
    """`kernel` with every Mma expression of its body replaced by `mma`."""
    def swap(node):
        if isinstance(node, Mma):
            return mma
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            return dataclasses.replace(node, **{f.name: swap(getattr(node, f.name)) for f in dataclasses.fields(node)})
        if isinstance(node, (tuple, list)):
            return type(node)(swap(x) for x in node)
        return node

    return dataclasses.replace(kernel, body=swap(kernel.body))


def test_verifier_refuses_malformed_amd_mma():
    k = mfma_bf16.kir
    a, b, c = _mmas(k.body)[0].a, _mmas(k.body)[0].b, _mmas(k.body)[0].c
    as_f16 = tuple(Cast(x, dt.float16) for x in b)
    bad = [
        (Mma(a[:3], b, c, 0, shape="mfma_16x16x16"), "mfma_16x16x16 takes 4 A, 4 B and 4 C elements per lane"),
        (Mma(a, b, c, 4, shape="mfma_16x16x16"), "mfma_16x16x16 result element 4 must be an int in 0..3"),
        (Mma(a, b, c, 0, shape="mfma_32x32x8"), "mma shape 'mfma_32x32x8'; known: m16n8k16, mfma_16x16x16"),
        (Mma(a, b, b, 0, shape="mfma_16x16x16"), "mfma_16x16x16 accumulates in float32"),
        (Mma(a, as_f16, c, 0, shape="mfma_16x16x16"), "A and B elements must all be bfloat16 or all float16"),
        (Mma(a * 4, b * 4, c, 0, shape="wmma_16x16x16"), "wmma_16x16x16 takes 16 A, 16 B and 8 C elements"),
    ]
    for mma, message in bad:
        with pytest.raises(KIRError, match=re.escape(message)):
            verify(_with_mma(k, mma))
    verify(_with_mma(k, Mma(a * 4, b * 4, c * 2, 0, shape="wmma_16x16x16")))   # a wave32 shape fits (128, 1, 1)
    with pytest.raises(KIRError, match=r"mfma_16x16x16 needs a workgroup of \(64k, 1, 1\) threads"):
        verify(dataclasses.replace(k, workgroup=(96, 1, 1)))


def _mmas(body) -> list:
    """The Mma expressions of a KIR body, in order."""
    out = []

    def walk(node):
        if isinstance(node, Mma):
            out.append(node)
        elif isinstance(node, (tuple, list)):
            for x in node:
                walk(x)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))

    walk(body)
    return out


def test_amd_mma_round_trips_through_json():
    from poot.jit.kir.serialize import from_dict, to_dict

    for k in (mfma_bf16.kir, wmma_f16.kir):
        assert from_dict(to_dict(k)) == k


# --- targets -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["ptx", "spirv", "cpu"])
def test_targets_without_amd_matrix_cores_refuse_them_at_compile_time(target):
    try:
        for k, op in ((mfma_bf16, "mfma_16x16x16"), (wmma_f16, "wmma_16x16x16")):
            with pytest.raises(NotBuiltError, match=f"{op} .*built for the AMDGCN target"):
                compile_kernel(k.kir, target, use_cache=False)
    except NotBuiltError as e:          # the target itself is not built here
        pytest.skip(str(e))


def test_amdgcn_refuses_the_other_matrix_cores_and_ptx_mma():
    from subgroup_kernels import mma_bf16

    with pytest.raises(NotBuiltError, match="wmma_16x16x16 .*gfx1100.* not gfx942"):
        compile_kernel(wmma_bf16.kir, "amdgcn", arch="gfx942", use_cache=False)
    with pytest.raises(NotBuiltError, match="mfma_16x16x16 .*gfx90a.* not gfx1100"):
        compile_kernel(mfma_bf16.kir, "amdgcn", arch="gfx1100", use_cache=False)
    with pytest.raises(NotBuiltError, match="mma_m16n8k16 .*PTX target"):
        compile_kernel(mma_bf16.kir, "amdgcn", arch="gfx942", use_cache=False)


def _assembly(kernel, arch: str) -> str:
    import llvmlite.binding as llvm

    return get_target("amdgcn", arch).assembly(llvm.parse_assembly(llvm_ir(kernel, "amdgcn", arch=arch)))


@pytest.mark.parametrize("arch,low,needle", [
    ("gfx90a", "bf16", "v_mfma_f32_16x16x16bf16_1k"), ("gfx90a", "f16", "v_mfma_f32_16x16x16f16"),
    ("gfx942", "bf16", "v_mfma_f32_16x16x16_bf16"), ("gfx942", "f16", "v_mfma_f32_16x16x16_f16"),
    ("gfx1100", "bf16", "v_wmma_f32_16x16x16_bf16"), ("gfx1100", "f16", "v_wmma_f32_16x16x16_f16"),
])
def test_amd_matrix_instructions_appear_in_the_code(arch, low, needle):
    kernel = (WMMA if arch.startswith("gfx11") else MFMA)[low].kir
    ir = llvm_ir(kernel, "amdgcn", arch=arch)
    assert ir.count("call <") >= 1 and ("llvm.amdgcn.wmma" if arch == "gfx1100" else "llvm.amdgcn.mfma") in ir
    asm = _assembly(kernel, arch)
    assert asm.count(needle) == 1, f"{needle} in {arch}"
    assert ".wavefront_size: " + ("32" if arch == "gfx1100" else "64") in asm


# --- the GEMMs ---------------------------------------------------------------------------------------
GEMMS = {"gemm_bf16_mfma": ("gfx90a", "gfx942"), "gemm_bf16_wmma": ("gfx1100",)}
NEEDLE = {"gfx90a": "v_mfma_f32_16x16x16bf16_1k", "gfx942": "v_mfma_f32_16x16x16_bf16",
          "gfx1100": "v_wmma_f32_16x16x16_bf16"}


def _source(name: str):
    """The kernel source module of manifest entry `name`."""
    from poot.jit.kir.assets import load_manifest
    from poot.kernel.assets import load_source

    return load_source(next(e for e in load_manifest() if e.name == name))


@pytest.mark.parametrize("name", sorted(GEMMS))
def test_gemm_examples_emulate_against_numpy(name):
    """Odd M, N and K (every edge), several tiles, and a batch with a broadcast operand (stride 0)."""
    module = _source(name)
    kernel = getattr(module, name)
    examples = getattr(module, f"example_{name}")(np.random.default_rng(0))
    assert any(0 in ex.args[6:8] for ex in examples) and any(ex.args[3] % 16 for ex in examples)
    for ex in examples:
        args = ex.fresh_args()
        kernel.emulate(*args, threads=ex.threads)
        want = ex.expected["c"].astype(np.float32)
        np.testing.assert_allclose(args[2].astype(np.float32), want, rtol=ex.rtol, atol=ex.atol)


@pytest.mark.parametrize("name,arch", [(n, a) for n, archs in sorted(GEMMS.items()) for a in archs])
def test_gemm_assets_link_to_hsaco_with_matrix_instructions(name, arch):
    from poot.jit.kir import assets

    from test_amdgcn import check_hsaco

    entry = next(e for e in assets.load_manifest() if e.name == name)
    assert entry.builds_for("amdgcn", arch) and not entry.builds_for("amdgcn") and not entry.builds_for("ptx")
    kernel = assets.load_asset(name)
    check_hsaco(compile_kernel(kernel, "amdgcn", arch=arch), arch)
    asm = _assembly(kernel, arch)
    assert asm.count(NEEDLE[arch]) == 4, f"{name} on {arch}: one instruction per tile of a wave's block"
    assert re.search(r"\.amdhsa_private_segment_fixed_size 0\b", asm), "accumulators spilled to scratch"


@pytest.mark.parametrize("name,arch", [("gemm_bf16_mfma", "gfx1100"), ("gemm_bf16_wmma", "gfx942")])
def test_gemm_assets_refuse_the_other_amd_family(name, arch):
    from poot.jit.kir import assets

    entry = next(e for e in assets.load_manifest() if e.name == name)
    assert not entry.builds_for("amdgcn", arch)
    with pytest.raises(NotBuiltError, match=f"not {arch}"):
        compile_kernel(assets.load_asset(name), "amdgcn", arch=arch, use_cache=False)


def test_poot_compile_writes_a_checked_mfma_hsaco(tmp_path, capsys):
    from poot.cli import main
    from poot.jit.llvm.targets.amdgcn.hsaco import inspect_hsaco

    src = tmp_path / "tile.py"
    src.write_text("import poot as pt\n\n@pt.kernel(workgroup=(64, 1, 1))\n"
                   "def tile(a: pt.In[pt.f16], d: pt.Out[pt.f32]):\n"
                   "    lane = pt.local_index_x()\n    x = a[lane]\n    c = pt.f32(0.0)\n"
                   "    d0, d1, d2, d3 = pt.mfma_16x16x16(x, x, x, x, x, x, x, x, c, c, c, c)\n"
                   "    d[lane] = d0 + d1 + d2 + d3\n")
    out = tmp_path / "tile.hsaco"
    assert main(["compile", str(src), "--target", "amdgcn", "--arch", "gfx942", "-o", str(out), "--check"]) == 0
    assert inspect_hsaco(out.read_bytes()).target.endswith("gfx942")
    assert "HSACO for amdgcn-amd-amdhsa--gfx942" in capsys.readouterr().out
