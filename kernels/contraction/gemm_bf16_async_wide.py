"""Tiled GEMM on tensor cores, fed by asynchronous copies: C[z] = A[z] @ B[z] for row-major A [M, K] and
B [K, N] of bf16 (gemm_bf16_async_wide) or f16 (gemm_f16_async_wide), accumulated in f32 by warp-level m16n8k16
multiply-accumulates and rounded to the input dtype once. PTX sm_80 and newer only.

What it adds to gemm_bf16_tc.py (which stays for shapes this one refuses): the operands travel from global
to shared memory by 16-byte `pt.copy_async` (cp.async: no registers, no wait at the issuing thread) in a
ring of STAGES k-tiles, so the loads of the next tiles are in flight while the warps multiply this one;
and the fragments come out of shared memory by `pt.ldmatrix_x4` (A) and `pt.ldmatrix_x4_trans` (B kept
row-major, [k][n], as it arrives), one instruction per four 8x8 matrices instead of one load per word.

Layout. A workgroup of 256 threads (8 warps) computes one 128 x 256 tile of C; group x
numbers the tiles of one batch element, raster in groups of GROUP_M tile rows (the workgroups running at
once share B's columns in L2), group z picks the batch element (a, b, c start at z * sa, z * sb, z * sc
elements; a stride of 0 broadcasts an operand). The warps stand 2 (rows) x 4 (columns), each owning
64 x 64 of C as 4 x 8 m16n8 tiles: 128 f32 accumulators per lane, in PTX's C fragment layout.
K advances 64 at a time; per 16 of k a warp loads B's fragments, then for each m16 tile A's and its
8 multiply-accumulates.

Shared memory, per stage: A as [128 rows][8 chunks] and B as [64 k][32 chunks], a chunk being 16 bytes (8
elements, 4 words); 3 stages x 48 KiB = 144 KiB (past 48 KiB the block is dynamic shared memory).
Chunks are stored XOR-swizzled so that each 8-lane phase of an ldmatrix reads 8 distinct 16-byte bank
groups: A's chunk c of row r at (c ^ (r & 7)), B's chunk c of k-row r at c ^ (r & 7).

Requirements (gpu_gemm.asset_for checks them, else gemm_bf16_tc runs): K, N, sa and sb multiples of 8,
so every 16-byte chunk of a row is aligned and lies wholly inside or outside the matrix; chunks outside
(rows past M, k past K, columns past N) are zero-filled by the copy itself. Launch: threads =
(tiles of M * tiles of N * 256, 1, batch), workgroup (256, 1, 1) (`launch_threads`).

This file is written by tools/unroll/gemm_async.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = 256          # tile columns (N)
BK = 64           # k per tile
STAGES = 3        # k-tiles in flight
THREADS = 256     # per workgroup
GROUP_M = 8       # tile rows per raster group
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
        """Start the copies of k-tile k0 into ring slot `stage`: 4 chunks of A and 8 of B per thread."""
        for j in range(4):
            at = local + THREADS * pt.u32(j)
            row = at // 8
            ch = at % 8
            ok = m0 + row < M and k0 + ch * 8 < K
            src = (abase + (m0 + row) * K + k0 + ch * 8) // 2
            pt.copy_async(sa_, stage * A_WORDS + row * 32 + (ch ^ (row & 7)) * 4, a32, src * pt.u32(ok), ok)
        for j in range(8):
            at = local + THREADS * pt.u32(j)
            kr = at // 32
            cb = at % 32
            okb = k0 + kr < K and n0 + cb * 8 < N
            srcb = (bbase + (k0 + kr) * N + n0 + cb * 8) // 2
            pt.copy_async(sb_, stage * B_WORDS + kr * 128 + (cb ^ (kr & 7)) * 4, b32, srcb * pt.u32(okb), okb)

    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def gemm_async(a32: pt.In[pt.u32], b32: pt.In[pt.u32], c: pt.Out[LOW],
                   M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
        sa_ = pt.shared(pt.u32, STAGES * A_WORDS)
        sb_ = pt.shared(pt.u32, STAGES * B_WORDS)
        local = pt.local_index_x()
        lane = local % 32
        warp = local // 32
        # the tile raster: GROUP_M rows of tiles at a time, column by column within a group
        tiles_n = (N + BN - 1) // BN
        tiles_m = (M + BM - 1) // BM
        pid = pt.group_index_x()
        per_group = GROUP_M * tiles_n
        first_m = (pid // per_group) * GROUP_M
        rows_here = min(tiles_m - first_m, pt.u32(GROUP_M))
        m0 = (first_m + (pid % per_group) % rows_here) * BM
        n0 = ((pid % per_group) // rows_here) * BN
        z = pt.group_index_z()
        abase = z * sa
        bbase = z * sb
        # ldmatrix addressing: this lane gives row r8 of matrix q (lanes 8q .. 8q + 7)
        q = lane // 8
        r8 = lane % 8
        arow = (warp // 4) * 64 + r8 + 8 * (q % 2)       # + 16 i for m-tile i
        achunk = q // 2                                  # + 2 s for k-step s
        bk = r8 + 8 * (q % 2)                            # + 16 s
        bchunk = (warp % 4) * 8 + q // 2                 # + 2 p for n-tile pair p
        zero = pt.f32(0.0)
        c0_0_0, c0_0_1, c0_0_2, c0_0_3 = zero, zero, zero, zero
        c0_1_0, c0_1_1, c0_1_2, c0_1_3 = zero, zero, zero, zero
        c0_2_0, c0_2_1, c0_2_2, c0_2_3 = zero, zero, zero, zero
        c0_3_0, c0_3_1, c0_3_2, c0_3_3 = zero, zero, zero, zero
        c0_4_0, c0_4_1, c0_4_2, c0_4_3 = zero, zero, zero, zero
        c0_5_0, c0_5_1, c0_5_2, c0_5_3 = zero, zero, zero, zero
        c0_6_0, c0_6_1, c0_6_2, c0_6_3 = zero, zero, zero, zero
        c0_7_0, c0_7_1, c0_7_2, c0_7_3 = zero, zero, zero, zero
        c1_0_0, c1_0_1, c1_0_2, c1_0_3 = zero, zero, zero, zero
        c1_1_0, c1_1_1, c1_1_2, c1_1_3 = zero, zero, zero, zero
        c1_2_0, c1_2_1, c1_2_2, c1_2_3 = zero, zero, zero, zero
        c1_3_0, c1_3_1, c1_3_2, c1_3_3 = zero, zero, zero, zero
        c1_4_0, c1_4_1, c1_4_2, c1_4_3 = zero, zero, zero, zero
        c1_5_0, c1_5_1, c1_5_2, c1_5_3 = zero, zero, zero, zero
        c1_6_0, c1_6_1, c1_6_2, c1_6_3 = zero, zero, zero, zero
        c1_7_0, c1_7_1, c1_7_2, c1_7_3 = zero, zero, zero, zero
        c2_0_0, c2_0_1, c2_0_2, c2_0_3 = zero, zero, zero, zero
        c2_1_0, c2_1_1, c2_1_2, c2_1_3 = zero, zero, zero, zero
        c2_2_0, c2_2_1, c2_2_2, c2_2_3 = zero, zero, zero, zero
        c2_3_0, c2_3_1, c2_3_2, c2_3_3 = zero, zero, zero, zero
        c2_4_0, c2_4_1, c2_4_2, c2_4_3 = zero, zero, zero, zero
        c2_5_0, c2_5_1, c2_5_2, c2_5_3 = zero, zero, zero, zero
        c2_6_0, c2_6_1, c2_6_2, c2_6_3 = zero, zero, zero, zero
        c2_7_0, c2_7_1, c2_7_2, c2_7_3 = zero, zero, zero, zero
        c3_0_0, c3_0_1, c3_0_2, c3_0_3 = zero, zero, zero, zero
        c3_1_0, c3_1_1, c3_1_2, c3_1_3 = zero, zero, zero, zero
        c3_2_0, c3_2_1, c3_2_2, c3_2_3 = zero, zero, zero, zero
        c3_3_0, c3_3_1, c3_3_2, c3_3_3 = zero, zero, zero, zero
        c3_4_0, c3_4_1, c3_4_2, c3_4_3 = zero, zero, zero, zero
        c3_5_0, c3_5_1, c3_5_2, c3_5_3 = zero, zero, zero, zero
        c3_6_0, c3_6_1, c3_6_2, c3_6_3 = zero, zero, zero, zero
        c3_7_0, c3_7_1, c3_7_2, c3_7_3 = zero, zero, zero, zero
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
            for s_ in range(4):
                s = pt.u32(s_)
                rb = bk + 16 * s
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 128 + ((bchunk + 2 * 0) ^ (rb & 7)) * 4)
                fb0_0 = lo(y0)
                fb0_1 = hi(y0)
                fb0_2 = lo(y1)
                fb0_3 = hi(y1)
                fb1_0 = lo(y2)
                fb1_1 = hi(y2)
                fb1_2 = lo(y3)
                fb1_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 128 + ((bchunk + 2 * 1) ^ (rb & 7)) * 4)
                fb2_0 = lo(y0)
                fb2_1 = hi(y0)
                fb2_2 = lo(y1)
                fb2_3 = hi(y1)
                fb3_0 = lo(y2)
                fb3_1 = hi(y2)
                fb3_2 = lo(y3)
                fb3_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 128 + ((bchunk + 2 * 2) ^ (rb & 7)) * 4)
                fb4_0 = lo(y0)
                fb4_1 = hi(y0)
                fb4_2 = lo(y1)
                fb4_3 = hi(y1)
                fb5_0 = lo(y2)
                fb5_1 = hi(y2)
                fb5_2 = lo(y3)
                fb5_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 128 + ((bchunk + 2 * 3) ^ (rb & 7)) * 4)
                fb6_0 = lo(y0)
                fb6_1 = hi(y0)
                fb6_2 = lo(y1)
                fb6_3 = hi(y1)
                fb7_0 = lo(y2)
                fb7_1 = hi(y2)
                fb7_2 = lo(y3)
                fb7_3 = hi(y3)
                ra = arow + 0
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 32 + ((achunk + 2 * s) ^ (ra & 7)) * 4)
                fa0 = lo(x0)
                fa1 = hi(x0)
                fa2 = lo(x1)
                fa3 = hi(x1)
                fa4 = lo(x2)
                fa5 = hi(x2)
                fa6 = lo(x3)
                fa7 = hi(x3)
                c0_0_0, c0_0_1, c0_0_2, c0_0_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb0_0, fb0_1, fb0_2, fb0_3, c0_0_0, c0_0_1, c0_0_2, c0_0_3)
                c0_1_0, c0_1_1, c0_1_2, c0_1_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb1_0, fb1_1, fb1_2, fb1_3, c0_1_0, c0_1_1, c0_1_2, c0_1_3)
                c0_2_0, c0_2_1, c0_2_2, c0_2_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb2_0, fb2_1, fb2_2, fb2_3, c0_2_0, c0_2_1, c0_2_2, c0_2_3)
                c0_3_0, c0_3_1, c0_3_2, c0_3_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb3_0, fb3_1, fb3_2, fb3_3, c0_3_0, c0_3_1, c0_3_2, c0_3_3)
                c0_4_0, c0_4_1, c0_4_2, c0_4_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb4_0, fb4_1, fb4_2, fb4_3, c0_4_0, c0_4_1, c0_4_2, c0_4_3)
                c0_5_0, c0_5_1, c0_5_2, c0_5_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb5_0, fb5_1, fb5_2, fb5_3, c0_5_0, c0_5_1, c0_5_2, c0_5_3)
                c0_6_0, c0_6_1, c0_6_2, c0_6_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb6_0, fb6_1, fb6_2, fb6_3, c0_6_0, c0_6_1, c0_6_2, c0_6_3)
                c0_7_0, c0_7_1, c0_7_2, c0_7_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb7_0, fb7_1, fb7_2, fb7_3, c0_7_0, c0_7_1, c0_7_2, c0_7_3)
                ra = arow + 16
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 32 + ((achunk + 2 * s) ^ (ra & 7)) * 4)
                fa0 = lo(x0)
                fa1 = hi(x0)
                fa2 = lo(x1)
                fa3 = hi(x1)
                fa4 = lo(x2)
                fa5 = hi(x2)
                fa6 = lo(x3)
                fa7 = hi(x3)
                c1_0_0, c1_0_1, c1_0_2, c1_0_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb0_0, fb0_1, fb0_2, fb0_3, c1_0_0, c1_0_1, c1_0_2, c1_0_3)
                c1_1_0, c1_1_1, c1_1_2, c1_1_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb1_0, fb1_1, fb1_2, fb1_3, c1_1_0, c1_1_1, c1_1_2, c1_1_3)
                c1_2_0, c1_2_1, c1_2_2, c1_2_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb2_0, fb2_1, fb2_2, fb2_3, c1_2_0, c1_2_1, c1_2_2, c1_2_3)
                c1_3_0, c1_3_1, c1_3_2, c1_3_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb3_0, fb3_1, fb3_2, fb3_3, c1_3_0, c1_3_1, c1_3_2, c1_3_3)
                c1_4_0, c1_4_1, c1_4_2, c1_4_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb4_0, fb4_1, fb4_2, fb4_3, c1_4_0, c1_4_1, c1_4_2, c1_4_3)
                c1_5_0, c1_5_1, c1_5_2, c1_5_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb5_0, fb5_1, fb5_2, fb5_3, c1_5_0, c1_5_1, c1_5_2, c1_5_3)
                c1_6_0, c1_6_1, c1_6_2, c1_6_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb6_0, fb6_1, fb6_2, fb6_3, c1_6_0, c1_6_1, c1_6_2, c1_6_3)
                c1_7_0, c1_7_1, c1_7_2, c1_7_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb7_0, fb7_1, fb7_2, fb7_3, c1_7_0, c1_7_1, c1_7_2, c1_7_3)
                ra = arow + 32
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 32 + ((achunk + 2 * s) ^ (ra & 7)) * 4)
                fa0 = lo(x0)
                fa1 = hi(x0)
                fa2 = lo(x1)
                fa3 = hi(x1)
                fa4 = lo(x2)
                fa5 = hi(x2)
                fa6 = lo(x3)
                fa7 = hi(x3)
                c2_0_0, c2_0_1, c2_0_2, c2_0_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb0_0, fb0_1, fb0_2, fb0_3, c2_0_0, c2_0_1, c2_0_2, c2_0_3)
                c2_1_0, c2_1_1, c2_1_2, c2_1_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb1_0, fb1_1, fb1_2, fb1_3, c2_1_0, c2_1_1, c2_1_2, c2_1_3)
                c2_2_0, c2_2_1, c2_2_2, c2_2_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb2_0, fb2_1, fb2_2, fb2_3, c2_2_0, c2_2_1, c2_2_2, c2_2_3)
                c2_3_0, c2_3_1, c2_3_2, c2_3_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb3_0, fb3_1, fb3_2, fb3_3, c2_3_0, c2_3_1, c2_3_2, c2_3_3)
                c2_4_0, c2_4_1, c2_4_2, c2_4_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb4_0, fb4_1, fb4_2, fb4_3, c2_4_0, c2_4_1, c2_4_2, c2_4_3)
                c2_5_0, c2_5_1, c2_5_2, c2_5_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb5_0, fb5_1, fb5_2, fb5_3, c2_5_0, c2_5_1, c2_5_2, c2_5_3)
                c2_6_0, c2_6_1, c2_6_2, c2_6_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb6_0, fb6_1, fb6_2, fb6_3, c2_6_0, c2_6_1, c2_6_2, c2_6_3)
                c2_7_0, c2_7_1, c2_7_2, c2_7_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb7_0, fb7_1, fb7_2, fb7_3, c2_7_0, c2_7_1, c2_7_2, c2_7_3)
                ra = arow + 48
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 32 + ((achunk + 2 * s) ^ (ra & 7)) * 4)
                fa0 = lo(x0)
                fa1 = hi(x0)
                fa2 = lo(x1)
                fa3 = hi(x1)
                fa4 = lo(x2)
                fa5 = hi(x2)
                fa6 = lo(x3)
                fa7 = hi(x3)
                c3_0_0, c3_0_1, c3_0_2, c3_0_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb0_0, fb0_1, fb0_2, fb0_3, c3_0_0, c3_0_1, c3_0_2, c3_0_3)
                c3_1_0, c3_1_1, c3_1_2, c3_1_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb1_0, fb1_1, fb1_2, fb1_3, c3_1_0, c3_1_1, c3_1_2, c3_1_3)
                c3_2_0, c3_2_1, c3_2_2, c3_2_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb2_0, fb2_1, fb2_2, fb2_3, c3_2_0, c3_2_1, c3_2_2, c3_2_3)
                c3_3_0, c3_3_1, c3_3_2, c3_3_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb3_0, fb3_1, fb3_2, fb3_3, c3_3_0, c3_3_1, c3_3_2, c3_3_3)
                c3_4_0, c3_4_1, c3_4_2, c3_4_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb4_0, fb4_1, fb4_2, fb4_3, c3_4_0, c3_4_1, c3_4_2, c3_4_3)
                c3_5_0, c3_5_1, c3_5_2, c3_5_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb5_0, fb5_1, fb5_2, fb5_3, c3_5_0, c3_5_1, c3_5_2, c3_5_3)
                c3_6_0, c3_6_1, c3_6_2, c3_6_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb6_0, fb6_1, fb6_2, fb6_3, c3_6_0, c3_6_1, c3_6_2, c3_6_3)
                c3_7_0, c3_7_1, c3_7_2, c3_7_3 = pt.mma_m16n8k16(fa0, fa1, fa2, fa3, fa4, fa5, fa6, fa7, fb7_0, fb7_1, fb7_2, fb7_3, c3_7_0, c3_7_1, c3_7_2, c3_7_3)
        pt.copy_async_wait(0)
        cbase = z * sc
        row0 = m0 + (warp // 4) * 64 + lane // 4
        col0 = n0 + (warp % 4) * 64 + 2 * (lane % 4)
        store2(c, cbase, row0 + 0, col0 + 0, M, N, c0_0_0, c0_0_1)
        store2(c, cbase, row0 + 8, col0 + 0, M, N, c0_0_2, c0_0_3)
        store2(c, cbase, row0 + 0, col0 + 8, M, N, c0_1_0, c0_1_1)
        store2(c, cbase, row0 + 8, col0 + 8, M, N, c0_1_2, c0_1_3)
        store2(c, cbase, row0 + 0, col0 + 16, M, N, c0_2_0, c0_2_1)
        store2(c, cbase, row0 + 8, col0 + 16, M, N, c0_2_2, c0_2_3)
        store2(c, cbase, row0 + 0, col0 + 24, M, N, c0_3_0, c0_3_1)
        store2(c, cbase, row0 + 8, col0 + 24, M, N, c0_3_2, c0_3_3)
        store2(c, cbase, row0 + 0, col0 + 32, M, N, c0_4_0, c0_4_1)
        store2(c, cbase, row0 + 8, col0 + 32, M, N, c0_4_2, c0_4_3)
        store2(c, cbase, row0 + 0, col0 + 40, M, N, c0_5_0, c0_5_1)
        store2(c, cbase, row0 + 8, col0 + 40, M, N, c0_5_2, c0_5_3)
        store2(c, cbase, row0 + 0, col0 + 48, M, N, c0_6_0, c0_6_1)
        store2(c, cbase, row0 + 8, col0 + 48, M, N, c0_6_2, c0_6_3)
        store2(c, cbase, row0 + 0, col0 + 56, M, N, c0_7_0, c0_7_1)
        store2(c, cbase, row0 + 8, col0 + 56, M, N, c0_7_2, c0_7_3)
        store2(c, cbase, row0 + 16, col0 + 0, M, N, c1_0_0, c1_0_1)
        store2(c, cbase, row0 + 24, col0 + 0, M, N, c1_0_2, c1_0_3)
        store2(c, cbase, row0 + 16, col0 + 8, M, N, c1_1_0, c1_1_1)
        store2(c, cbase, row0 + 24, col0 + 8, M, N, c1_1_2, c1_1_3)
        store2(c, cbase, row0 + 16, col0 + 16, M, N, c1_2_0, c1_2_1)
        store2(c, cbase, row0 + 24, col0 + 16, M, N, c1_2_2, c1_2_3)
        store2(c, cbase, row0 + 16, col0 + 24, M, N, c1_3_0, c1_3_1)
        store2(c, cbase, row0 + 24, col0 + 24, M, N, c1_3_2, c1_3_3)
        store2(c, cbase, row0 + 16, col0 + 32, M, N, c1_4_0, c1_4_1)
        store2(c, cbase, row0 + 24, col0 + 32, M, N, c1_4_2, c1_4_3)
        store2(c, cbase, row0 + 16, col0 + 40, M, N, c1_5_0, c1_5_1)
        store2(c, cbase, row0 + 24, col0 + 40, M, N, c1_5_2, c1_5_3)
        store2(c, cbase, row0 + 16, col0 + 48, M, N, c1_6_0, c1_6_1)
        store2(c, cbase, row0 + 24, col0 + 48, M, N, c1_6_2, c1_6_3)
        store2(c, cbase, row0 + 16, col0 + 56, M, N, c1_7_0, c1_7_1)
        store2(c, cbase, row0 + 24, col0 + 56, M, N, c1_7_2, c1_7_3)
        store2(c, cbase, row0 + 32, col0 + 0, M, N, c2_0_0, c2_0_1)
        store2(c, cbase, row0 + 40, col0 + 0, M, N, c2_0_2, c2_0_3)
        store2(c, cbase, row0 + 32, col0 + 8, M, N, c2_1_0, c2_1_1)
        store2(c, cbase, row0 + 40, col0 + 8, M, N, c2_1_2, c2_1_3)
        store2(c, cbase, row0 + 32, col0 + 16, M, N, c2_2_0, c2_2_1)
        store2(c, cbase, row0 + 40, col0 + 16, M, N, c2_2_2, c2_2_3)
        store2(c, cbase, row0 + 32, col0 + 24, M, N, c2_3_0, c2_3_1)
        store2(c, cbase, row0 + 40, col0 + 24, M, N, c2_3_2, c2_3_3)
        store2(c, cbase, row0 + 32, col0 + 32, M, N, c2_4_0, c2_4_1)
        store2(c, cbase, row0 + 40, col0 + 32, M, N, c2_4_2, c2_4_3)
        store2(c, cbase, row0 + 32, col0 + 40, M, N, c2_5_0, c2_5_1)
        store2(c, cbase, row0 + 40, col0 + 40, M, N, c2_5_2, c2_5_3)
        store2(c, cbase, row0 + 32, col0 + 48, M, N, c2_6_0, c2_6_1)
        store2(c, cbase, row0 + 40, col0 + 48, M, N, c2_6_2, c2_6_3)
        store2(c, cbase, row0 + 32, col0 + 56, M, N, c2_7_0, c2_7_1)
        store2(c, cbase, row0 + 40, col0 + 56, M, N, c2_7_2, c2_7_3)
        store2(c, cbase, row0 + 48, col0 + 0, M, N, c3_0_0, c3_0_1)
        store2(c, cbase, row0 + 56, col0 + 0, M, N, c3_0_2, c3_0_3)
        store2(c, cbase, row0 + 48, col0 + 8, M, N, c3_1_0, c3_1_1)
        store2(c, cbase, row0 + 56, col0 + 8, M, N, c3_1_2, c3_1_3)
        store2(c, cbase, row0 + 48, col0 + 16, M, N, c3_2_0, c3_2_1)
        store2(c, cbase, row0 + 56, col0 + 16, M, N, c3_2_2, c3_2_3)
        store2(c, cbase, row0 + 48, col0 + 24, M, N, c3_3_0, c3_3_1)
        store2(c, cbase, row0 + 56, col0 + 24, M, N, c3_3_2, c3_3_3)
        store2(c, cbase, row0 + 48, col0 + 32, M, N, c3_4_0, c3_4_1)
        store2(c, cbase, row0 + 56, col0 + 32, M, N, c3_4_2, c3_4_3)
        store2(c, cbase, row0 + 48, col0 + 40, M, N, c3_5_0, c3_5_1)
        store2(c, cbase, row0 + 56, col0 + 40, M, N, c3_5_2, c3_5_3)
        store2(c, cbase, row0 + 48, col0 + 48, M, N, c3_6_0, c3_6_1)
        store2(c, cbase, row0 + 56, col0 + 48, M, N, c3_6_2, c3_6_3)
        store2(c, cbase, row0 + 48, col0 + 56, M, N, c3_7_0, c3_7_1)
        store2(c, cbase, row0 + 56, col0 + 56, M, N, c3_7_2, c3_7_3)

    return gemm_async


gemm_bf16_async_wide = _make(pt.bf16, "gemm_bf16_async_wide")
gemm_f16_async_wide = _make(pt.f16, "gemm_f16_async_wide")


def applies(m: int, n: int, k: int, sa: int, sb: int) -> bool:
    """Whether every 16-byte chunk of A's and B's rows is aligned (the copies' requirement)."""
    return k % 8 == 0 and n % 8 == 0 and sa % 8 == 0 and sb % 8 == 0


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-m // BM) * -(-n // BN) * THREADS, 1, batch)


def words(x: np.ndarray) -> np.ndarray:
    """The 16-bit array x (an even number of elements) as 32-bit words."""
    return x.reshape(-1).view(np.uint32)


def _examples(low):
    rng = np.random.default_rng(11)
    out = []
    # edges in M, N and K (zero-filled chunks), whole tiles over more k-tiles than ring slots, a batch
    # with a broadcast B (stride 0), several tiles each way, and more tile rows than a raster group
    for batch, m, n, k, bcast in ((1, 37, 56, 40, False), (1, BM, BN, 4 * BK, False), (2, 20, 136, 24, True),
                                  (1, BM + 40, 2 * BN + 8, 40, False), (1, (GROUP_M + 1) * BM + 3, 24, 32, False)):
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




def example_gemm_bf16_async_wide(rng):
    return _examples(ml_dtypes.bfloat16)


def example_gemm_f16_async_wide(rng):
    return _examples(np.float16)
