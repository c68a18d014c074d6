"""Tiled GEMM on AMD CDNA matrix cores: C[z] = A[z] @ B[z] for row-major A [M, K] and B [K, N] of bf16,
accumulated in f32 by wave64 MFMA 16x16x16 multiply-accumulates (`pt.mfma_16x16x16`) and rounded to bf16
once. AMDGCN on gfx90a, gfx942 and gfx950 only (elsewhere compiling it raises NotBuiltError).

Layout. A workgroup of 256 threads (4 waves of 64) computes one 64 x 64 tile of C; group x numbers the
tiles of one batch element row by row, group z picks the batch element (a, b, c start at z * sa, z * sb,
z * sc elements; a stride of 0 broadcasts an operand). The waves stand 2 x 2, each owning 32 x 32 of C as
2 x 2 MFMA tiles: 16 f32 accumulators per lane, in MFMA's layout (lane l holds rows 4 (l // 16) + j of
column l % 16 of each tile). K advances 16 (one MFMA) at a time.

Shared memory holds one k-tile of each operand as bf16: A as [64 rows][16 k] and B as [16 k][64 columns],
rows padded (LDA, LDB) so that the 16 lanes reading one fragment column touch distinct banks. Each thread
stages 4 elements of A (along k) and 4 of B (along n) element by element, zeros past the edges of M, N
and K, so every shape and stride works; two barriers a k-tile. Simple by design: no double buffering.

Parameters and launch as gemm_bf16_async.py but with element buffers: (a, b, c, M, N, K, sa, sb, sc);
threads = (tiles of M * tiles of N * 256, 1, batch), workgroup (256, 1, 1) (`launch_threads`)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 64           # tile rows (M)
BN = 64           # tile columns (N)
BK = 16           # k per tile: one MFMA
THREADS = 256     # per workgroup: 4 waves of 64
LDA = BK + 2      # elements per shared row of A
LDB = BN + 2      # elements per shared row of B


@pt.device_fn
def store1(c, base, row, col, M, N, v):
    """C[row, col] = v rounded to bf16, where inside C."""
    if row < M and col < N:
        c[base + row * N + col] = pt.bf16(v)


@pt.kernel(workgroup=(THREADS, 1, 1), name="gemm_bf16_mfma", checks=False)
def gemm_bf16_mfma(a: pt.In[pt.bf16], b: pt.In[pt.bf16], c: pt.Out[pt.bf16],
                   M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
    sa_ = pt.shared(pt.bf16, BM * LDA)
    sb_ = pt.shared(pt.bf16, BK * LDB)
    local = pt.local_index_x()
    lane = local % 64
    wave = local // 64
    tiles_n = (N + BN - 1) // BN
    pid = pt.group_index_x()
    m0 = (pid // tiles_n) * BM
    n0 = (pid % tiles_n) * BN
    z = pt.group_index_z()
    abase = z * sa
    bbase = z * sb
    # fragments: this lane's row/column i and k quad q4 within each 16 x 16 MFMA tile of its wave's block
    i = lane % 16
    q4 = 4 * (lane // 16)
    wm = (wave // 2) * 32
    wn = (wave % 2) * 32
    zero = pt.f32(0.0)
    c00_0, c00_1, c00_2, c00_3 = zero, zero, zero, zero
    c01_0, c01_1, c01_2, c01_3 = zero, zero, zero, zero
    c10_0, c10_1, c10_2, c10_3 = zero, zero, zero, zero
    c11_0, c11_1, c11_2, c11_3 = zero, zero, zero, zero
    ntiles = (K + BK - 1) // BK
    for kt in range(ntiles):
        k0 = kt * BK
        pt.workgroup_barrier()          # the previous k-tile's fragments are read
        for j in range(4):
            at = local + THREADS * pt.u32(j)
            row = at // BK
            kk = at % BK
            va = pt.bf16(0.0)
            if m0 + row < M and k0 + kk < K:
                va = a[abase + (m0 + row) * K + k0 + kk]
            sa_[row * LDA + kk] = va
            kr = at // BN
            col = at % BN
            vb = pt.bf16(0.0)
            if k0 + kr < K and n0 + col < N:
                vb = b[bbase + (k0 + kr) * N + n0 + col]
            sb_[kr * LDB + col] = vb
        pt.workgroup_barrier()
        ra = (wm + 0 + i) * LDA + q4
        a0_0 = sa_[ra + 0]
        a0_1 = sa_[ra + 1]
        a0_2 = sa_[ra + 2]
        a0_3 = sa_[ra + 3]
        ra = (wm + 16 + i) * LDA + q4
        a1_0 = sa_[ra + 0]
        a1_1 = sa_[ra + 1]
        a1_2 = sa_[ra + 2]
        a1_3 = sa_[ra + 3]
        cb = q4 * LDB + wn + 0 + i
        b0_0 = sb_[cb + 0 * LDB]
        b0_1 = sb_[cb + 1 * LDB]
        b0_2 = sb_[cb + 2 * LDB]
        b0_3 = sb_[cb + 3 * LDB]
        cb = q4 * LDB + wn + 16 + i
        b1_0 = sb_[cb + 0 * LDB]
        b1_1 = sb_[cb + 1 * LDB]
        b1_2 = sb_[cb + 2 * LDB]
        b1_3 = sb_[cb + 3 * LDB]
        c00_0, c00_1, c00_2, c00_3 = pt.mfma_16x16x16(
            a0_0, a0_1, a0_2, a0_3, b0_0, b0_1, b0_2, b0_3,
            c00_0, c00_1, c00_2, c00_3)
        c01_0, c01_1, c01_2, c01_3 = pt.mfma_16x16x16(
            a0_0, a0_1, a0_2, a0_3, b1_0, b1_1, b1_2, b1_3,
            c01_0, c01_1, c01_2, c01_3)
        c10_0, c10_1, c10_2, c10_3 = pt.mfma_16x16x16(
            a1_0, a1_1, a1_2, a1_3, b0_0, b0_1, b0_2, b0_3,
            c10_0, c10_1, c10_2, c10_3)
        c11_0, c11_1, c11_2, c11_3 = pt.mfma_16x16x16(
            a1_0, a1_1, a1_2, a1_3, b1_0, b1_1, b1_2, b1_3,
            c11_0, c11_1, c11_2, c11_3)
    cbase = z * sc
    row0 = m0 + wm + q4
    col0 = n0 + wn + i
    store1(c, cbase, row0 + 0, col0 + 0, M, N, c00_0)
    store1(c, cbase, row0 + 1, col0 + 0, M, N, c00_1)
    store1(c, cbase, row0 + 2, col0 + 0, M, N, c00_2)
    store1(c, cbase, row0 + 3, col0 + 0, M, N, c00_3)
    store1(c, cbase, row0 + 0, col0 + 16, M, N, c01_0)
    store1(c, cbase, row0 + 1, col0 + 16, M, N, c01_1)
    store1(c, cbase, row0 + 2, col0 + 16, M, N, c01_2)
    store1(c, cbase, row0 + 3, col0 + 16, M, N, c01_3)
    store1(c, cbase, row0 + 16, col0 + 0, M, N, c10_0)
    store1(c, cbase, row0 + 17, col0 + 0, M, N, c10_1)
    store1(c, cbase, row0 + 18, col0 + 0, M, N, c10_2)
    store1(c, cbase, row0 + 19, col0 + 0, M, N, c10_3)
    store1(c, cbase, row0 + 16, col0 + 16, M, N, c11_0)
    store1(c, cbase, row0 + 17, col0 + 16, M, N, c11_1)
    store1(c, cbase, row0 + 18, col0 + 16, M, N, c11_2)
    store1(c, cbase, row0 + 19, col0 + 16, M, N, c11_3)


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-m // BM) * -(-n // BN) * THREADS, 1, batch)


def example_gemm_bf16_mfma(rng):
    low = ml_dtypes.bfloat16
    rng = np.random.default_rng(13)
    out = []
    # odd M/N/K (every edge), two tiles each way over two k-tiles, a batch with a broadcast B (stride 0)
    for batch, m, n, k, bcast in ((1, 37, 53, 29, False), (1, 80, 70, 32, False), (2, 20, 17, 40, True)):
        a = rng.standard_normal((batch, m, k)).astype(low)
        b = rng.standard_normal((1 if bcast else batch, k, n)).astype(low)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(low)
        c = np.zeros((batch, m, n), low)
        args = (a.reshape(-1), b.reshape(-1), c.reshape(-1), m, n, k, m * k, 0 if bcast else k * n, m * n)
        # one rounding to bf16, plus float32 summation error (the order differs by device)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        out.append(Example(args=args, threads=launch_threads(m, n, batch), expected={"c": ref.reshape(-1)},
                           rtol=float(ml_dtypes.finfo(low).eps), atol=float(np.finfo(np.float32).eps) * k * scale))
    return out
