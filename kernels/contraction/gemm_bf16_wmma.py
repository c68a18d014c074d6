"""Tiled GEMM on AMD RDNA3 matrix cores: C[z] = A[z] @ B[z] for row-major A [M, K] and B [K, N] of bf16,
accumulated in f32 by wave32 WMMA 16x16x16 multiply-accumulates (`pt.wmma_16x16x16`) and rounded to bf16
once. AMDGCN on gfx11 (gfx1100 ...) only (elsewhere compiling it raises NotBuiltError).

Layout. A workgroup of 128 threads (4 waves of 32) computes one 64 x 64 tile of C; group x numbers the
tiles of one batch element row by row, group z picks the batch element (a, b, c start at z * sa, z * sb,
z * sc elements; a stride of 0 broadcasts an operand). The waves stand 2 x 2, each owning 32 x 32 of C as
2 x 2 WMMA tiles: 32 f32 accumulators per lane, in WMMA's layout (lane l holds rows 2j + l // 16 of column
l % 16 of each tile). K advances 16 (one WMMA) at a time.

Shared memory holds one k-tile of each operand as bf16: A as [64 rows][16 k] and B transposed, [64
columns][16 k], so that each lane reads its A row and its B column as 16 consecutive elements (the two
halves of a wave read the same ones, as WMMA wants); rows padded to LDA = LDB = 18 elements. Each thread
stages 8 elements of A (along k) and 8 of B (along n) element by element, zeros past the edges of M, N
and K, so every shape and stride works; two barriers a k-tile. Simple by design: no double buffering.

Parameters and launch as gemm_bf16_async.py but with element buffers: (a, b, c, M, N, K, sa, sb, sc);
threads = (tiles of M * tiles of N * 128, 1, batch), workgroup (128, 1, 1) (`launch_threads`)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 64           # tile rows (M)
BN = 64           # tile columns (N)
BK = 16           # k per tile: one WMMA
THREADS = 128     # per workgroup: 4 waves of 32
LDA = BK + 2      # elements per shared row of A
LDB = BK + 2      # elements per shared row of B transposed (one column of B)


@pt.device_fn
def store1(c, base, row, col, M, N, v):
    """C[row, col] = v rounded to bf16, where inside C."""
    if row < M and col < N:
        c[base + row * N + col] = pt.bf16(v)


@pt.kernel(workgroup=(THREADS, 1, 1), name="gemm_bf16_wmma", checks=False)
def gemm_bf16_wmma(a: pt.In[pt.bf16], b: pt.In[pt.bf16], c: pt.Out[pt.bf16],
                   M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
    sa_ = pt.shared(pt.bf16, BM * LDA)
    sbt = pt.shared(pt.bf16, BN * LDB)
    local = pt.local_index_x()
    lane = local % 32
    wave = local // 32
    tiles_n = (N + BN - 1) // BN
    pid = pt.group_index_x()
    m0 = (pid // tiles_n) * BM
    n0 = (pid % tiles_n) * BN
    z = pt.group_index_z()
    abase = z * sa
    bbase = z * sb
    # fragments: this lane's A row / B column i and D row parity h within each 16 x 16 WMMA tile
    i = lane % 16
    h = lane // 16
    wm = (wave // 2) * 32
    wn = (wave % 2) * 32
    zero = pt.f32(0.0)
    c00_0, c00_1, c00_2, c00_3, c00_4, c00_5, c00_6, c00_7 = zero, zero, zero, zero, zero, zero, zero, zero
    c01_0, c01_1, c01_2, c01_3, c01_4, c01_5, c01_6, c01_7 = zero, zero, zero, zero, zero, zero, zero, zero
    c10_0, c10_1, c10_2, c10_3, c10_4, c10_5, c10_6, c10_7 = zero, zero, zero, zero, zero, zero, zero, zero
    c11_0, c11_1, c11_2, c11_3, c11_4, c11_5, c11_6, c11_7 = zero, zero, zero, zero, zero, zero, zero, zero
    ntiles = (K + BK - 1) // BK
    for kt in range(ntiles):
        k0 = kt * BK
        pt.workgroup_barrier()          # the previous k-tile's fragments are read
        for j in range(8):
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
            sbt[col * LDB + kr] = vb
        pt.workgroup_barrier()
        ra = (wm + 0 + i) * LDA
        a0_0 = sa_[ra + 0]
        a0_1 = sa_[ra + 1]
        a0_2 = sa_[ra + 2]
        a0_3 = sa_[ra + 3]
        a0_4 = sa_[ra + 4]
        a0_5 = sa_[ra + 5]
        a0_6 = sa_[ra + 6]
        a0_7 = sa_[ra + 7]
        a0_8 = sa_[ra + 8]
        a0_9 = sa_[ra + 9]
        a0_10 = sa_[ra + 10]
        a0_11 = sa_[ra + 11]
        a0_12 = sa_[ra + 12]
        a0_13 = sa_[ra + 13]
        a0_14 = sa_[ra + 14]
        a0_15 = sa_[ra + 15]
        ra = (wm + 16 + i) * LDA
        a1_0 = sa_[ra + 0]
        a1_1 = sa_[ra + 1]
        a1_2 = sa_[ra + 2]
        a1_3 = sa_[ra + 3]
        a1_4 = sa_[ra + 4]
        a1_5 = sa_[ra + 5]
        a1_6 = sa_[ra + 6]
        a1_7 = sa_[ra + 7]
        a1_8 = sa_[ra + 8]
        a1_9 = sa_[ra + 9]
        a1_10 = sa_[ra + 10]
        a1_11 = sa_[ra + 11]
        a1_12 = sa_[ra + 12]
        a1_13 = sa_[ra + 13]
        a1_14 = sa_[ra + 14]
        a1_15 = sa_[ra + 15]
        rb = (wn + 0 + i) * LDB
        b0_0 = sbt[rb + 0]
        b0_1 = sbt[rb + 1]
        b0_2 = sbt[rb + 2]
        b0_3 = sbt[rb + 3]
        b0_4 = sbt[rb + 4]
        b0_5 = sbt[rb + 5]
        b0_6 = sbt[rb + 6]
        b0_7 = sbt[rb + 7]
        b0_8 = sbt[rb + 8]
        b0_9 = sbt[rb + 9]
        b0_10 = sbt[rb + 10]
        b0_11 = sbt[rb + 11]
        b0_12 = sbt[rb + 12]
        b0_13 = sbt[rb + 13]
        b0_14 = sbt[rb + 14]
        b0_15 = sbt[rb + 15]
        rb = (wn + 16 + i) * LDB
        b1_0 = sbt[rb + 0]
        b1_1 = sbt[rb + 1]
        b1_2 = sbt[rb + 2]
        b1_3 = sbt[rb + 3]
        b1_4 = sbt[rb + 4]
        b1_5 = sbt[rb + 5]
        b1_6 = sbt[rb + 6]
        b1_7 = sbt[rb + 7]
        b1_8 = sbt[rb + 8]
        b1_9 = sbt[rb + 9]
        b1_10 = sbt[rb + 10]
        b1_11 = sbt[rb + 11]
        b1_12 = sbt[rb + 12]
        b1_13 = sbt[rb + 13]
        b1_14 = sbt[rb + 14]
        b1_15 = sbt[rb + 15]
        c00_0, c00_1, c00_2, c00_3, c00_4, c00_5, c00_6, c00_7 = pt.wmma_16x16x16(
            a0_0, a0_1, a0_2, a0_3, a0_4, a0_5, a0_6, a0_7,
            a0_8, a0_9, a0_10, a0_11, a0_12, a0_13, a0_14, a0_15,
            b0_0, b0_1, b0_2, b0_3, b0_4, b0_5, b0_6, b0_7,
            b0_8, b0_9, b0_10, b0_11, b0_12, b0_13, b0_14, b0_15,
            c00_0, c00_1, c00_2, c00_3, c00_4, c00_5, c00_6, c00_7)
        c01_0, c01_1, c01_2, c01_3, c01_4, c01_5, c01_6, c01_7 = pt.wmma_16x16x16(
            a0_0, a0_1, a0_2, a0_3, a0_4, a0_5, a0_6, a0_7,
            a0_8, a0_9, a0_10, a0_11, a0_12, a0_13, a0_14, a0_15,
            b1_0, b1_1, b1_2, b1_3, b1_4, b1_5, b1_6, b1_7,
            b1_8, b1_9, b1_10, b1_11, b1_12, b1_13, b1_14, b1_15,
            c01_0, c01_1, c01_2, c01_3, c01_4, c01_5, c01_6, c01_7)
        c10_0, c10_1, c10_2, c10_3, c10_4, c10_5, c10_6, c10_7 = pt.wmma_16x16x16(
            a1_0, a1_1, a1_2, a1_3, a1_4, a1_5, a1_6, a1_7,
            a1_8, a1_9, a1_10, a1_11, a1_12, a1_13, a1_14, a1_15,
            b0_0, b0_1, b0_2, b0_3, b0_4, b0_5, b0_6, b0_7,
            b0_8, b0_9, b0_10, b0_11, b0_12, b0_13, b0_14, b0_15,
            c10_0, c10_1, c10_2, c10_3, c10_4, c10_5, c10_6, c10_7)
        c11_0, c11_1, c11_2, c11_3, c11_4, c11_5, c11_6, c11_7 = pt.wmma_16x16x16(
            a1_0, a1_1, a1_2, a1_3, a1_4, a1_5, a1_6, a1_7,
            a1_8, a1_9, a1_10, a1_11, a1_12, a1_13, a1_14, a1_15,
            b1_0, b1_1, b1_2, b1_3, b1_4, b1_5, b1_6, b1_7,
            b1_8, b1_9, b1_10, b1_11, b1_12, b1_13, b1_14, b1_15,
            c11_0, c11_1, c11_2, c11_3, c11_4, c11_5, c11_6, c11_7)
    cbase = z * sc
    row0 = m0 + wm + h
    col0 = n0 + wn + i
    store1(c, cbase, row0 + 0, col0 + 0, M, N, c00_0)
    store1(c, cbase, row0 + 2, col0 + 0, M, N, c00_1)
    store1(c, cbase, row0 + 4, col0 + 0, M, N, c00_2)
    store1(c, cbase, row0 + 6, col0 + 0, M, N, c00_3)
    store1(c, cbase, row0 + 8, col0 + 0, M, N, c00_4)
    store1(c, cbase, row0 + 10, col0 + 0, M, N, c00_5)
    store1(c, cbase, row0 + 12, col0 + 0, M, N, c00_6)
    store1(c, cbase, row0 + 14, col0 + 0, M, N, c00_7)
    store1(c, cbase, row0 + 0, col0 + 16, M, N, c01_0)
    store1(c, cbase, row0 + 2, col0 + 16, M, N, c01_1)
    store1(c, cbase, row0 + 4, col0 + 16, M, N, c01_2)
    store1(c, cbase, row0 + 6, col0 + 16, M, N, c01_3)
    store1(c, cbase, row0 + 8, col0 + 16, M, N, c01_4)
    store1(c, cbase, row0 + 10, col0 + 16, M, N, c01_5)
    store1(c, cbase, row0 + 12, col0 + 16, M, N, c01_6)
    store1(c, cbase, row0 + 14, col0 + 16, M, N, c01_7)
    store1(c, cbase, row0 + 16, col0 + 0, M, N, c10_0)
    store1(c, cbase, row0 + 18, col0 + 0, M, N, c10_1)
    store1(c, cbase, row0 + 20, col0 + 0, M, N, c10_2)
    store1(c, cbase, row0 + 22, col0 + 0, M, N, c10_3)
    store1(c, cbase, row0 + 24, col0 + 0, M, N, c10_4)
    store1(c, cbase, row0 + 26, col0 + 0, M, N, c10_5)
    store1(c, cbase, row0 + 28, col0 + 0, M, N, c10_6)
    store1(c, cbase, row0 + 30, col0 + 0, M, N, c10_7)
    store1(c, cbase, row0 + 16, col0 + 16, M, N, c11_0)
    store1(c, cbase, row0 + 18, col0 + 16, M, N, c11_1)
    store1(c, cbase, row0 + 20, col0 + 16, M, N, c11_2)
    store1(c, cbase, row0 + 22, col0 + 16, M, N, c11_3)
    store1(c, cbase, row0 + 24, col0 + 16, M, N, c11_4)
    store1(c, cbase, row0 + 26, col0 + 16, M, N, c11_5)
    store1(c, cbase, row0 + 28, col0 + 16, M, N, c11_6)
    store1(c, cbase, row0 + 30, col0 + 16, M, N, c11_7)


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-m // BM) * -(-n // BN) * THREADS, 1, batch)


def example_gemm_bf16_wmma(rng):
    low = ml_dtypes.bfloat16
    rng = np.random.default_rng(17)
    out = []
    # odd M/N/K (every edge), two tiles each way over two k-tiles, a batch with a broadcast A (stride 0)
    for batch, m, n, k, bcast in ((1, 37, 53, 29, False), (1, 80, 70, 32, False), (2, 20, 17, 40, True)):
        a = rng.standard_normal((1 if bcast else batch, m, k)).astype(low)
        b = rng.standard_normal((batch, k, n)).astype(low)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(low)
        c = np.zeros((batch, m, n), low)
        args = (a.reshape(-1), b.reshape(-1), c.reshape(-1), m, n, k, 0 if bcast else m * k, k * n, m * n)
        # one rounding to bf16, plus float32 summation error (the order differs by device)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        out.append(Example(args=args, threads=launch_threads(m, n, batch), expected={"c": ref.reshape(-1)},
                           rtol=float(ml_dtypes.finfo(low).eps), atol=float(np.finfo(np.float32).eps) * k * scale))
    return out
