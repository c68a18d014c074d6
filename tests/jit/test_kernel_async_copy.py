"""The 16-byte memory operations of `@pt.kernel` (kernel/async_copy.py): ldmatrix_x4[_trans], copy_async with
its commit groups and waits, load_x4 / store_x4. Emulation against NumPy (the fragment layouts and a
16x16x16 bf16 product through mma_m16n8k16), PTX that ptxas assembles for sm_80 and sm_90, NotBuiltError on
targets without the instructions, bounds traps, the verifier's uniformity rule, and the JSON round trip."""
from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.errors import LoweringError, KernelImportError, KernelTrap, KIRError, NotBuiltError
from poot.jit.kir.serialize import from_json, to_json
from poot.jit.kir.text import format_kernel
from poot.jit.llvm.compile import compile_kernel

from async_copy_kernels import SENTINEL, STAGE_WORDS, copy_at, ldm, ldm_twice, load_at, mma_tile, reload, staged, words
from ptxas_tool import PTXAS, SKIP_REASON
from tolerance import assert_close

WARP = (32, 1, 1)


def _ldmatrix_reference(src: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Per lane: the 4 words of ldmatrix_x4, then of ldmatrix_x4_trans, from the fragments of PTX's m8n8 b16
    layout written out with NumPy (lane l: g = l // 4, t = l % 4; word t of row g of the matrix, or of its
    transpose)."""
    rows = src.reshape(32, 4)[perm].view(np.uint16)          # lane l's row: 8 16-bit elements
    out = np.zeros((32, 8), np.uint32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i in range(4):
            m = rows[8 * i:8 * i + 8]
            out[lane, i] = np.ascontiguousarray(m)[g].view(np.uint32)[t]
            out[lane, 4 + i] = np.ascontiguousarray(m.T)[g].view(np.uint32)[t]
    return out.reshape(-1)


def test_ldmatrix_emulates_ptx_fragments_for_permuted_rows():
    rng = np.random.default_rng(0)
    src = rng.integers(0, 2**32, 128, dtype=np.uint32)
    perm = rng.permutation(32).astype(np.uint32)
    out = np.zeros(256, np.uint32)
    ldm.emulate(src, perm, out, threads=WARP)
    assert_close(out, _ldmatrix_reference(src, perm), pt.u32)


def test_ldmatrix_reads_again_after_a_store():
    out = np.zeros(64, np.uint32)
    ldm_twice.emulate(out, threads=WARP)
    lane = np.arange(32)
    # lane l gets word t = l % 4 of row g = l // 4 (matrix 0): the rows hold their lane number
    assert_close(out[0::2], (lane // 4).astype(np.uint32), pt.u32)
    assert_close(out[1::2], np.where(lane % 4 == 0, lane // 4 + 100, lane // 4).astype(np.uint32), pt.u32)


def test_copy_async_groups_apply_at_their_wait_and_zero_fill():
    rng = np.random.default_rng(1)
    src = rng.integers(1, 2**32, 256, dtype=np.uint32)
    n = 128 + 4 * 20                      # lanes 0..19 copy the second half; 20..31 zero-fill (ok false)
    out = np.zeros(32 * STAGE_WORDS, np.uint32)
    staged.emulate(src, n, out, threads=WARP)
    got = out.reshape(32, STAGE_WORDS)
    lane = np.arange(32)
    a, b = lane * 4, 128 + lane * 4
    assert_close(got[:, 0], np.zeros(32, np.uint32), pt.u32)                 # read before the wait: stale
    assert_close(got[:, 1], src[a], pt.u32)                                   # group 1 waited for
    assert_close(got[:, 2], np.full(32, SENTINEL, np.uint32), pt.u32)         # group 2 still in flight
    assert_close(got[:, 3:7], src.reshape(64, 4)[:32], pt.u32)
    want_b = np.where((b < n)[:, None], src.reshape(64, 4)[32:], 0).astype(np.uint32)
    assert_close(got[:, 7:11], want_b, pt.u32)
    assert np.all(got[20:, 7:11] == 0) and np.all(got[:20, 7:11] != 0)


def test_load_x4_and_store_x4_emulate_and_run_on_the_device(device):
    rng = np.random.default_rng(2)
    src = rng.integers(0, 2**32 - 1, 512, dtype=np.uint32)
    want = src.reshape(-1, 4)[np.arange(128) ^ 1, ::-1].copy()
    want[:, 1] += 1
    grid = (128, 1, 1)
    for run in (lambda d: words.emulate(src, d, threads=grid),
                lambda d: words.launch(pt.Context(device), src, d, threads=grid)):
        dst = np.zeros(512, np.uint32)
        run(dst)
        assert_close(dst, want.reshape(-1), pt.u32)


def test_load_x4_after_store_x4_sees_the_store(device):
    src = np.random.default_rng(3).integers(0, 2**31, 256, dtype=np.uint32)
    r = src.reshape(-1, 4)
    want = np.stack([2 * r[:, 1], r[:, 2], r[:, 3], r[:, 0]], axis=1).reshape(-1)
    grid = (64, 1, 1)
    for run in (lambda b: reload.emulate(b, threads=grid),
                lambda b: reload.launch(pt.Context(device), b, threads=grid)):
        buf = src.copy()
        run(buf)
        assert_close(buf, want, pt.u32)


def _bf16_words(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.astype(ml_dtypes.bfloat16)).view(np.uint32).reshape(-1)


@pytest.mark.parametrize("rows", [16, 11])
def test_staged_mma_tile_matches_numpy(rows):
    """copy_async -> ldmatrix_x4 (A) / ldmatrix_x4_trans (B) -> mma_m16n8k16 gives A @ B: the fragment layouts of
    ldmatrix line up with mma's."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    c = np.zeros(256, np.float32)
    mma_tile.emulate(_bf16_words(a), _bf16_words(b), rows, c, threads=WARP)
    a64 = a.astype(np.float64)
    a64[rows:] = 0                                 # rows past `rows` were zero-filled, not read
    assert_close(c.reshape(16, 16), (a64 @ b.astype(np.float64)).astype(np.float32), pt.f32, ops=2)


@pytest.mark.parametrize("kernel, args, trap", [
    (load_at, lambda: (np.zeros(64, np.uint32), 2, np.zeros(32, np.uint32)), True),       # not a multiple of 4
    (load_at, lambda: (np.zeros(64, np.uint32), 64, np.zeros(32, np.uint32)), True),      # past the end
    (load_at, lambda: (np.zeros(64, np.uint32), 60, np.zeros(32, np.uint32)), False),
    (copy_at, lambda: (np.zeros(64, np.uint32), 64, 1, np.zeros(32, np.uint32)), True),   # read past the end
    (copy_at, lambda: (np.zeros(64, np.uint32), 64, 0, np.zeros(32, np.uint32)), False),  # not read: no trap
])
def test_16_byte_accesses_are_bounds_checked(kernel, args, trap):
    if trap:
        with pytest.raises(KernelTrap, match="16-byte access"):
            kernel.emulate(*args(), threads=WARP)
    else:
        kernel.emulate(*args(), threads=WARP)


def test_load_x4_out_of_range_traps_on_the_device(device):
    with pytest.raises(KernelTrap):
        load_at.launch(pt.Context(device), np.zeros(64, np.uint32), 62, np.zeros(32, np.uint32))
        pt.devices.get(device).synchronize()


@pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_has_the_16_byte_instructions_and_assembles(arch, tmp_path):
    wanted = {
        ldm: ["ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"],
        ldm_twice: ["ldmatrix.sync.aligned.m8n8.x4.shared.b16"],
        staged: ["cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group"],
        words: ["ld.global.nc.v4", "st.shared.v4", "ld.shared.v4", "st.global.v4"],
        mma_tile: ["cp.async.cg.shared.global", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                   "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16"],
    }
    for k, needles in wanted.items():
        ptx = compile_kernel(k.kir, "ptx", arch=arch).data
        for needle in needles:
            assert needle in ptx, (k.name, needle)
        path = tmp_path / f"{k.name}.ptx"
        path.write_text(ptx)
        r = subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, (k.name, r.stderr)
        if k is mma_tile:               # one instruction per call: the 4 results share it
            assert ptx.count("ldmatrix.sync") == 2 and ptx.count("mma.sync") == 2 and ptx.count("cp.async.cg") == 2
        if k is ldm_twice:              # a store between two equal ldmatrix: both stay
            assert ptx.count("ldmatrix.sync") == 2


def test_ptx_before_the_instructions_exist_is_a_compile_time_error():
    with pytest.raises(NotBuiltError, match="ldmatrix_x4.*sm_75"):
        compile_kernel(ldm.kir, "ptx", arch="sm_70")
    with pytest.raises(NotBuiltError, match="copy_async.*sm_80"):
        compile_kernel(staged.kir, "ptx", arch="sm_75")


@pytest.mark.parametrize("target", ["cpu", "spirv", "amdgcn"])
def test_other_targets_refuse_ldmatrix_and_copy_async_but_lower_load_x4(target):
    for k, op in ((ldm, "ldmatrix_x4"), (staged, "copy_async")):
        with pytest.raises(NotBuiltError) as e:
            _compile_or_skip(k.kir, target)
        if "PTX" not in str(e.value):           # the target itself is not built here
            pytest.skip(str(e.value))
        assert str(e.value).startswith(op), str(e.value)
    assert _compile_or_skip(words.kir, target).data     # plain memory: four element accesses


def _compile_or_skip(kir, target):
    """compile_kernel, skipped where AMDGCN's linker (the 'ziglang' wheel's LLD, which its cache key
    names) is not installed."""
    try:
        return compile_kernel(kir, target)
    except LoweringError as err:
        if "ziglang" not in str(err):
            raise
        pytest.skip(str(err))


def test_ldmatrix_under_divergent_control_is_refused():
    @pt.kernel(workgroup=(32, 1, 1))
    def divergent(out: pt.Out[pt.u32]):
        s = pt.shared(pt.u32, 128)
        lane = pt.lane_index()
        if lane < 16:
            w0, w1, w2, w3 = pt.ldmatrix_x4(s, lane * 4)
            out[lane] = w0

    with pytest.raises(KIRError, match="ldmatrix"):
        divergent.kir


def test_misuse_is_named_at_import():
    @pt.kernel(workgroup=(32, 1, 1))
    def not_a_tuple(out: pt.Out[pt.u32]):
        s = pt.shared(pt.u32, 128)
        out[0] = pt.ldmatrix_x4(s, 0)

    @pt.kernel(workgroup=(32, 1, 1))
    def global_source(src: pt.In[pt.u32], out: pt.Out[pt.u32]):
        w0, w1, w2, w3 = pt.ldmatrix_x4(src, 0)
        out[0] = w0

    @pt.kernel(workgroup=(32, 1, 1))
    def float_words(src: pt.In[pt.f32], out: pt.Out[pt.u32]):
        s = pt.shared(pt.u32, 128)
        pt.copy_async(s, 0, src, 0, True)

    @pt.kernel(workgroup=(32, 1, 1))
    def variable_wait(n: pt.u32, out: pt.Out[pt.u32]):
        pt.copy_async_wait(n)

    for k, what in ((not_a_tuple, "tuple assignment"), (global_source, "pt.shared"), (float_words, "uint32"),
                    (variable_wait, "constant int")):
        with pytest.raises(KernelImportError, match=what):
            k.kir


def test_kir_of_every_operation_round_trips_through_json_and_text():
    for k in (mma_tile.kir, words.kir, staged.kir):
        assert from_json(to_json(k)) == k
    text = format_kernel(mma_tile.kir) + format_kernel(words.kir)
    for name in ("ldmatrix_x4(", "ldmatrix_x4_trans(", "copy_async(", "copy_async_commit()", "copy_async_wait(0)",
                 "load_x4(", "store_x4("):
        assert name in text


def _kir_with(*body, locals_=(), shared=(("s", pt.u32, 128),), workgroup=(32, 1, 1)):
    from poot.jit.kir.model import Access, BufferParam, Kernel, Local, SharedArray

    return Kernel("k", (BufferParam("g", pt.u32, Access.READ), BufferParam("f", pt.f32, Access.WRITE)), tuple(body),
                  locals=tuple(Local(n, t) for n, t in locals_),
                  shared=tuple(SharedArray(n, t, size) for n, t, size in shared), workgroup=workgroup)


def test_verifier_names_malformed_16_byte_operations():
    from poot.jit.kir.model import (AsyncWait, Assign, Const, CopyAsync, LdMatrix, LoadX4, StoreX4)
    from poot.jit.kir.verify import verify

    u, w = pt.u32, ("w", pt.u32)
    zero, yes = Const(0, u), Const(True, pt.bool_)
    good = _kir_with(Assign("w", LdMatrix("s", zero, True, 3)), CopyAsync("s", zero, "g", zero, yes), AsyncWait(0),
                     StoreX4("s", zero, (zero,) * 4), locals_=(w,))
    verify(good)
    bad = [
        (_kir_with(Assign("w", LdMatrix("g", zero, False, 0)), locals_=(w,)), "bad-x4", "buffer param"),
        (_kir_with(Assign("w", LdMatrix("s", zero, False, 4)), locals_=(w,)), "bad-x4", "0..3"),
        (_kir_with(Assign("w", LdMatrix("s", zero, False, 0)), locals_=(w,), workgroup=(16, 1, 1)),
         "shuffle-workgroup", "ldmatrix"),
        (_kir_with(Assign("w", LoadX4("f", zero, 0)), locals_=(w,)), "bad-x4", "uint32"),
        (_kir_with(StoreX4("g", zero, (zero,) * 4)), "write-to-read-only", "'g'"),
        (_kir_with(StoreX4("s", zero, (zero,) * 3)), "bad-x4", "4 values"),
        (_kir_with(CopyAsync("g", zero, "s", zero, yes)), "bad-copy-async", "from a buffer param"),
        (_kir_with(CopyAsync("s", zero, "g", zero, zero)), "bad-copy-async", "bool ok"),
        (_kir_with(AsyncWait(-1)), "bad-copy-async", ">= 0"),
    ]
    for kernel, kind, words_ in bad:
        with pytest.raises(KIRError, match=words_) as e:
            verify(kernel)
        assert e.value.kind == kind, (kind, str(e.value))
