"""Streaming stores: big fresh CPU results are written past the caches (`stream` buffers,
kir.model.Access.STREAM): the kernel's vector stores become non-temporal, results stay exact, a
`stream` buffer must be 64-byte aligned (a misaligned one traps instead of faulting), and small
results keep ordinary stores (they are read again from the cache)."""
import platform

import numpy as np
import pytest

import poot as pt
from poot import devices, dtypes as dt
from poot.errors import KernelTrap
from poot.fuse.plan import plan_fusion
from poot.jit.llvm.compile import target_assembly
from poot.jit.codegen import generate
from poot.jit.codegen.pointwise import STREAM_BYTES
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Len
from poot.jit.kir.serialize import from_json, to_json
from poot.jit.runtime.launch import launch

from fuse.graphs import G

DEV = devices.get("cpu")
X86 = platform.machine() in ("x86_64", "AMD64")


def poly_kernel(n: int):
    g = G()
    a, b, c = g.input((n,)), g.input((n,)), g.input((n,))
    aaa = g.op("mul", g.op("mul", a, a), a)
    out = g.op("sub", g.op("add", aaa, g.op("mul", g.op("mul", g.const(3.0), a), b)), c)
    plan = plan_fusion(g.graph(out))
    (step,) = plan.kernel_steps
    (launch_,) = generate(step, plan, DEV.caps).launches
    return launch_.kernel


def test_a_big_pointwise_result_is_a_stream_buffer_and_a_small_one_is_not():
    big = poly_kernel(STREAM_BYTES // 4)
    small = poly_kernel(STREAM_BYTES // 4 - 1)
    assert [p.access for p in big.buffers][-1] is Access.STREAM
    assert [p.access for p in small.buffers][-1] is Access.WRITE
    assert from_json(to_json(big)) == big


@pytest.mark.skipif(not X86, reason="non-temporal stores are emitted for x86-64 only")
def test_stream_stores_are_non_temporal_vector_stores_then_a_fence():
    asm = target_assembly(poly_kernel(STREAM_BYTES // 4))
    assert "vmovntp" in asm or "movntp" in asm, asm
    assert "sfence" in asm
    plain = target_assembly(poly_kernel(STREAM_BYTES // 4 - 1))
    assert "movnt" not in plain and "sfence" not in plain


def test_streamed_results_match_numpy():
    n = STREAM_BYTES // 4 + 12345                       # not a multiple of a block or a vector
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    pa, pb, pc = pt.asarray(a), pt.asarray(b), pt.asarray(c)
    for _ in range(2):                                  # a fresh result, then a reused buffer
        got = (pa * pa * pa + 3 * pa * pb - pc).numpy()
        np.testing.assert_allclose(got, a * a * a + 3 * a * b - c, rtol=2e-6, atol=2e-6)


def stream_copy_kernel():
    kb = B.KernelBuilder("stream_copy", workgroup=(1, 1, 1), checks=False)
    x, y = kb.buffer("x", dt.float32, Access.READ), kb.buffer("y", dt.float32, Access.STREAM)
    with kb.for_("i", B.const(0, dt.uint32), Len(y)) as i:
        kb.store(y, i, kb.load(x, i, dt.float32))
    return kb.build()


def test_a_misaligned_stream_buffer_traps_instead_of_faulting():
    x = np.arange(1024, dtype=np.float32)
    raw = np.zeros(1024 + 32, np.float32)
    base = raw.ctypes.data
    skew = next(k for k in range(1, 17) if (base + 4 * k) % 64)       # a misaligned start
    y = raw[skew:skew + 1024]
    with pytest.raises(KernelTrap, match="64-byte"):
        launch(DEV, stream_copy_kernel(), [DEV.wrap(x), DEV.wrap(y)], (), 1)
    aligned = next(k for k in range(16) if (base + 4 * k) % 64 == 0)
    y = raw[aligned:aligned + 1024]
    launch(DEV, stream_copy_kernel(), [DEV.wrap(x), DEV.wrap(y)], (), 1)
    assert np.array_equal(y, x)
