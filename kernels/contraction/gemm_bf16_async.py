"""Tiled GEMM on tensor cores, fed by asynchronous copies: C[z] = A[z] @ B[z] for row-major A [M, K] and
B [K, N] of bf16 (gemm_bf16_async) or f16 (gemm_f16_async), accumulated in f32 by warp-level m16n8k16
multiply-accumulates and rounded to the input dtype once. PTX sm_80 and newer only.

What it adds to gemm_bf16_tc.py (which stays for shapes this one refuses): the operands travel from global
to shared memory by 16-byte `pt.copy_async` (cp.async: no registers, no wait at the issuing thread) in a
ring of STAGES k-tiles, so the loads of tiles kt + 1 and kt + 2 are in flight while the warps multiply
tile kt; and the fragments come out of shared memory by `pt.ldmatrix_x4` (A) and `pt.ldmatrix_x4_trans`
(B kept row-major, [k][n], as it arrives), one instruction per four 8x8 matrices instead of one load per
word.

Layout. A workgroup of 256 threads (8 warps) computes one 128 x 128 tile of C: group x picks the tile's
columns, group y its rows, group z the batch element (a, b, c start at z * sa, z * sb, z * sc elements; a
stride of 0 broadcasts an operand). The warps stand 2 (rows) x 4 (columns), each owning 64 x 32 of C as
4 x 4 m16n8 tiles: 64 f32 accumulators per lane, in PTX's C fragment layout. K advances 32 at a time.

Shared memory, per stage: A as [128 rows][4 chunks] and B as [32 k][16 chunks], a chunk being 16 bytes
(8 elements, 4 words); 3 stages x 16 KiB = 48 KiB. Chunks are stored XOR-swizzled so that each 8-lane
phase of an ldmatrix reads 8 distinct 16-byte bank groups: A's chunk c of row r at c ^ ((r >> 1) & 3), B's
chunk c of k-row r at c ^ (r & 7).

Requirements (gpu_gemm.asset_for checks them, else gemm_bf16_tc runs): K, N, sa and sb multiples of 8,
so every 16-byte chunk of a row is aligned and lies wholly inside or outside the matrix; chunks outside
(rows past M, k past K, columns past N) are zero-filled by the copy itself. Launch: threads =
(ceil(N / 128) * 256, ceil(M / 128), batch), workgroup (256, 1, 1) (`launch_threads`).

This file is written by tools/unroll/gemm_async.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = 128          # tile columns (N)
BK = 32           # k per tile
STAGES = 3        # k-tiles in flight
A_WORDS = BM * BK // 2    # words of one stage of A
B_WORDS = BK * BN // 2    # words of one stage of B


def _make(LOW, name):
    @pt.device_fn
    def lo(w):
        return pt.bitcast(pt.u16(w & 0xFFFF), LOW)

    @pt.device_fn
    def hi(w):
        return pt.bitcast(pt.u16(w >> 16), LOW)

    @pt.device_fn
    def store2(c, base, row, col, M, N, v0, v1):
        """C[row, col] and C[row, col + 1], where inside C."""
        if row < M:
            at = base + row * N + col
            if col < N:
                c[at] = LOW(v0)
            if col + 1 < N:
                c[at + 1] = LOW(v1)

    @pt.device_fn
    def issue(sa_, sb_, a32, b32, stage, k0, local, m0, n0, abase, bbase, M, N, K):
        """Start the copies of k-tile k0 into ring slot `stage`: two chunks of A and two of B per thread."""
        for j in range(2):
            at = local + 256 * pt.u32(j)
            row = at // 4
            ch = at % 4
            ok = m0 + row < M and k0 + ch * 8 < K
            src = (abase + (m0 + row) * K + k0 + ch * 8) // 2
            pt.copy_async(sa_, stage * A_WORDS + row * 16 + (ch ^ ((row >> 1) & 3)) * 4, a32, src * pt.u32(ok), ok)
            kr = at // 16
            cb = at % 16
            okb = k0 + kr < K and n0 + cb * 8 < N
            srcb = (bbase + (k0 + kr) * N + n0 + cb * 8) // 2
            pt.copy_async(sb_, stage * B_WORDS + kr * 64 + (cb ^ (kr & 7)) * 4, b32, srcb * pt.u32(okb), okb)

    @pt.kernel(workgroup=(256, 1, 1), name=name, checks=False)
    def gemm_async(a32: pt.In[pt.u32], b32: pt.In[pt.u32], c: pt.Out[LOW],
                   M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
        sa_ = pt.shared(pt.u32, STAGES * A_WORDS)
        sb_ = pt.shared(pt.u32, STAGES * B_WORDS)
        local = pt.local_index_x()
        lane = local % 32
        warp = local // 32
        m0 = pt.group_index_y() * BM
        n0 = pt.group_index_x() * BN
        z = pt.group_index_z()
        abase = z * sa
        bbase = z * sb
        # ldmatrix addressing: this lane gives row r8 of matrix q (lanes 8q .. 8q + 7)
        q = lane // 8
        r8 = lane % 8
        arow = (warp // 4) * 64 + r8 + 8 * (q % 2)       # + 16 i for m-tile i
        achunk = q // 2                                  # + 2 s for k-step s
        bk = r8 + 8 * (q % 2)                            # + 16 s
        bchunk = (warp % 4) * 4 + q // 2                 # + 2 p for n-tile pair p
        zero = pt.f32(0.0)
        c00_0, c00_1, c00_2, c00_3 = zero, zero, zero, zero
        c01_0, c01_1, c01_2, c01_3 = zero, zero, zero, zero
        c02_0, c02_1, c02_2, c02_3 = zero, zero, zero, zero
        c03_0, c03_1, c03_2, c03_3 = zero, zero, zero, zero
        c10_0, c10_1, c10_2, c10_3 = zero, zero, zero, zero
        c11_0, c11_1, c11_2, c11_3 = zero, zero, zero, zero
        c12_0, c12_1, c12_2, c12_3 = zero, zero, zero, zero
        c13_0, c13_1, c13_2, c13_3 = zero, zero, zero, zero
        c20_0, c20_1, c20_2, c20_3 = zero, zero, zero, zero
        c21_0, c21_1, c21_2, c21_3 = zero, zero, zero, zero
        c22_0, c22_1, c22_2, c22_3 = zero, zero, zero, zero
        c23_0, c23_1, c23_2, c23_3 = zero, zero, zero, zero
        c30_0, c30_1, c30_2, c30_3 = zero, zero, zero, zero
        c31_0, c31_1, c31_2, c31_3 = zero, zero, zero, zero
        c32_0, c32_1, c32_2, c32_3 = zero, zero, zero, zero
        c33_0, c33_1, c33_2, c33_3 = zero, zero, zero, zero
        ntiles = (K + BK - 1) // BK
        for s0 in range(STAGES - 1):
            issue(sa_, sb_, a32, b32, pt.u32(s0), pt.u32(s0) * BK, local, m0, n0, abase, bbase, M, N, K)
            pt.copy_async_commit()
        for kt in range(ntiles):
            pt.copy_async_wait(STAGES - 2)
            pt.workgroup_barrier()
            nxt = kt + STAGES - 1
            issue(sa_, sb_, a32, b32, nxt % STAGES, nxt * BK, local, m0, n0, abase, bbase, M, N, K)
            pt.copy_async_commit()
            sa0 = (kt % STAGES) * A_WORDS
            sb0 = (kt % STAGES) * B_WORDS
            for s_ in range(2):
                s = pt.u32(s_)
                ra = arow + 16 * 0
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 16 + ((achunk + 2 * s) ^ ((ra >> 1) & 3)) * 4)
                fa00 = lo(x0)
                fa01 = hi(x0)
                fa02 = lo(x1)
                fa03 = hi(x1)
                fa04 = lo(x2)
                fa05 = hi(x2)
                fa06 = lo(x3)
                fa07 = hi(x3)
                ra = arow + 16 * 1
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 16 + ((achunk + 2 * s) ^ ((ra >> 1) & 3)) * 4)
                fa10 = lo(x0)
                fa11 = hi(x0)
                fa12 = lo(x1)
                fa13 = hi(x1)
                fa14 = lo(x2)
                fa15 = hi(x2)
                fa16 = lo(x3)
                fa17 = hi(x3)
                ra = arow + 16 * 2
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 16 + ((achunk + 2 * s) ^ ((ra >> 1) & 3)) * 4)
                fa20 = lo(x0)
                fa21 = hi(x0)
                fa22 = lo(x1)
                fa23 = hi(x1)
                fa24 = lo(x2)
                fa25 = hi(x2)
                fa26 = lo(x3)
                fa27 = hi(x3)
                ra = arow + 16 * 3
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 16 + ((achunk + 2 * s) ^ ((ra >> 1) & 3)) * 4)
                fa30 = lo(x0)
                fa31 = hi(x0)
                fa32 = lo(x1)
                fa33 = hi(x1)
                fa34 = lo(x2)
                fa35 = hi(x2)
                fa36 = lo(x3)
                fa37 = hi(x3)
                rb = bk + 16 * s
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 64 + ((bchunk + 2 * 0) ^ (rb & 7)) * 4)
                fb00 = lo(y0)
                fb01 = hi(y0)
                fb02 = lo(y1)
                fb03 = hi(y1)
                fb10 = lo(y2)
                fb11 = hi(y2)
                fb12 = lo(y3)
                fb13 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 64 + ((bchunk + 2 * 1) ^ (rb & 7)) * 4)
                fb20 = lo(y0)
                fb21 = hi(y0)
                fb22 = lo(y1)
                fb23 = hi(y1)
                fb30 = lo(y2)
                fb31 = hi(y2)
                fb32 = lo(y3)
                fb33 = hi(y3)
                c00_0, c00_1, c00_2, c00_3 = pt.mma_m16n8k16(fa00, fa01, fa02, fa03, fa04, fa05, fa06, fa07, fb00, fb01, fb02, fb03, c00_0, c00_1, c00_2, c00_3)
                c01_0, c01_1, c01_2, c01_3 = pt.mma_m16n8k16(fa00, fa01, fa02, fa03, fa04, fa05, fa06, fa07, fb10, fb11, fb12, fb13, c01_0, c01_1, c01_2, c01_3)
                c02_0, c02_1, c02_2, c02_3 = pt.mma_m16n8k16(fa00, fa01, fa02, fa03, fa04, fa05, fa06, fa07, fb20, fb21, fb22, fb23, c02_0, c02_1, c02_2, c02_3)
                c03_0, c03_1, c03_2, c03_3 = pt.mma_m16n8k16(fa00, fa01, fa02, fa03, fa04, fa05, fa06, fa07, fb30, fb31, fb32, fb33, c03_0, c03_1, c03_2, c03_3)
                c10_0, c10_1, c10_2, c10_3 = pt.mma_m16n8k16(fa10, fa11, fa12, fa13, fa14, fa15, fa16, fa17, fb00, fb01, fb02, fb03, c10_0, c10_1, c10_2, c10_3)
                c11_0, c11_1, c11_2, c11_3 = pt.mma_m16n8k16(fa10, fa11, fa12, fa13, fa14, fa15, fa16, fa17, fb10, fb11, fb12, fb13, c11_0, c11_1, c11_2, c11_3)
                c12_0, c12_1, c12_2, c12_3 = pt.mma_m16n8k16(fa10, fa11, fa12, fa13, fa14, fa15, fa16, fa17, fb20, fb21, fb22, fb23, c12_0, c12_1, c12_2, c12_3)
                c13_0, c13_1, c13_2, c13_3 = pt.mma_m16n8k16(fa10, fa11, fa12, fa13, fa14, fa15, fa16, fa17, fb30, fb31, fb32, fb33, c13_0, c13_1, c13_2, c13_3)
                c20_0, c20_1, c20_2, c20_3 = pt.mma_m16n8k16(fa20, fa21, fa22, fa23, fa24, fa25, fa26, fa27, fb00, fb01, fb02, fb03, c20_0, c20_1, c20_2, c20_3)
                c21_0, c21_1, c21_2, c21_3 = pt.mma_m16n8k16(fa20, fa21, fa22, fa23, fa24, fa25, fa26, fa27, fb10, fb11, fb12, fb13, c21_0, c21_1, c21_2, c21_3)
                c22_0, c22_1, c22_2, c22_3 = pt.mma_m16n8k16(fa20, fa21, fa22, fa23, fa24, fa25, fa26, fa27, fb20, fb21, fb22, fb23, c22_0, c22_1, c22_2, c22_3)
                c23_0, c23_1, c23_2, c23_3 = pt.mma_m16n8k16(fa20, fa21, fa22, fa23, fa24, fa25, fa26, fa27, fb30, fb31, fb32, fb33, c23_0, c23_1, c23_2, c23_3)
                c30_0, c30_1, c30_2, c30_3 = pt.mma_m16n8k16(fa30, fa31, fa32, fa33, fa34, fa35, fa36, fa37, fb00, fb01, fb02, fb03, c30_0, c30_1, c30_2, c30_3)
                c31_0, c31_1, c31_2, c31_3 = pt.mma_m16n8k16(fa30, fa31, fa32, fa33, fa34, fa35, fa36, fa37, fb10, fb11, fb12, fb13, c31_0, c31_1, c31_2, c31_3)
                c32_0, c32_1, c32_2, c32_3 = pt.mma_m16n8k16(fa30, fa31, fa32, fa33, fa34, fa35, fa36, fa37, fb20, fb21, fb22, fb23, c32_0, c32_1, c32_2, c32_3)
                c33_0, c33_1, c33_2, c33_3 = pt.mma_m16n8k16(fa30, fa31, fa32, fa33, fa34, fa35, fa36, fa37, fb30, fb31, fb32, fb33, c33_0, c33_1, c33_2, c33_3)
        pt.copy_async_wait(0)
        cbase = z * sc
        row0 = m0 + (warp // 4) * 64 + lane // 4
        col0 = n0 + (warp % 4) * 32 + 2 * (lane % 4)
        store2(c, cbase, row0 + 0, col0 + 0, M, N, c00_0, c00_1)
        store2(c, cbase, row0 + 8, col0 + 0, M, N, c00_2, c00_3)
        store2(c, cbase, row0 + 0, col0 + 8, M, N, c01_0, c01_1)
        store2(c, cbase, row0 + 8, col0 + 8, M, N, c01_2, c01_3)
        store2(c, cbase, row0 + 0, col0 + 16, M, N, c02_0, c02_1)
        store2(c, cbase, row0 + 8, col0 + 16, M, N, c02_2, c02_3)
        store2(c, cbase, row0 + 0, col0 + 24, M, N, c03_0, c03_1)
        store2(c, cbase, row0 + 8, col0 + 24, M, N, c03_2, c03_3)
        store2(c, cbase, row0 + 16, col0 + 0, M, N, c10_0, c10_1)
        store2(c, cbase, row0 + 24, col0 + 0, M, N, c10_2, c10_3)
        store2(c, cbase, row0 + 16, col0 + 8, M, N, c11_0, c11_1)
        store2(c, cbase, row0 + 24, col0 + 8, M, N, c11_2, c11_3)
        store2(c, cbase, row0 + 16, col0 + 16, M, N, c12_0, c12_1)
        store2(c, cbase, row0 + 24, col0 + 16, M, N, c12_2, c12_3)
        store2(c, cbase, row0 + 16, col0 + 24, M, N, c13_0, c13_1)
        store2(c, cbase, row0 + 24, col0 + 24, M, N, c13_2, c13_3)
        store2(c, cbase, row0 + 32, col0 + 0, M, N, c20_0, c20_1)
        store2(c, cbase, row0 + 40, col0 + 0, M, N, c20_2, c20_3)
        store2(c, cbase, row0 + 32, col0 + 8, M, N, c21_0, c21_1)
        store2(c, cbase, row0 + 40, col0 + 8, M, N, c21_2, c21_3)
        store2(c, cbase, row0 + 32, col0 + 16, M, N, c22_0, c22_1)
        store2(c, cbase, row0 + 40, col0 + 16, M, N, c22_2, c22_3)
        store2(c, cbase, row0 + 32, col0 + 24, M, N, c23_0, c23_1)
        store2(c, cbase, row0 + 40, col0 + 24, M, N, c23_2, c23_3)
        store2(c, cbase, row0 + 48, col0 + 0, M, N, c30_0, c30_1)
        store2(c, cbase, row0 + 56, col0 + 0, M, N, c30_2, c30_3)
        store2(c, cbase, row0 + 48, col0 + 8, M, N, c31_0, c31_1)
        store2(c, cbase, row0 + 56, col0 + 8, M, N, c31_2, c31_3)
        store2(c, cbase, row0 + 48, col0 + 16, M, N, c32_0, c32_1)
        store2(c, cbase, row0 + 56, col0 + 16, M, N, c32_2, c32_3)
        store2(c, cbase, row0 + 48, col0 + 24, M, N, c33_0, c33_1)
        store2(c, cbase, row0 + 56, col0 + 24, M, N, c33_2, c33_3)

    return gemm_async


gemm_bf16_async = _make(pt.bf16, "gemm_bf16_async")
gemm_f16_async = _make(pt.f16, "gemm_f16_async")


def applies(m: int, n: int, k: int, sa: int, sb: int) -> bool:
    """Whether every 16-byte chunk of A's and B's rows is aligned (the copies' requirement)."""
    return k % 8 == 0 and n % 8 == 0 and sa % 8 == 0 and sb % 8 == 0


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-n // BN) * 256, -(-m // BM), batch)


def words(x: np.ndarray) -> np.ndarray:
    """The 16-bit array x (an even number of elements) as 32-bit words."""
    return x.reshape(-1).view(np.uint32)


def _examples(low):
    rng = np.random.default_rng(11)
    out = []
    # edges in M, N and K (zero-filled chunks), whole tiles over more k-tiles than ring slots, and a batch
    # with a broadcast B (stride 0)
    for batch, m, n, k, bcast in ((1, 37, 56, 40, False), (1, 128, 128, 128, False), (2, 20, 136, 24, True)):
        a = rng.standard_normal((batch, m, k)).astype(low)
        b = rng.standard_normal((1 if bcast else batch, k, n)).astype(low)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        ref = exact.astype(np.float32).astype(low)
        c = np.zeros((batch, m, n), low)
        args = (words(a), words(b), c.reshape(-1), m, n, k, m * k, 0 if bcast else k * n, m * n)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        out.append(Example(args=args, threads=launch_threads(m, n, batch), expected={"c": ref.reshape(-1)},
                           rtol=float(ml_dtypes.finfo(low).eps), atol=float(np.finfo(np.float32).eps) * k * scale))
    return out


def example_gemm_bf16_async(rng):
    return _examples(ml_dtypes.bfloat16)


def example_gemm_f16_async(rng):
    return _examples(np.float16)
