"""Tiled GEMM on tensor cores, fed by asynchronous copies: C[z] = A[z] @ B[z] for row-major A [M, K] and
B [K, N] of bf16 (gemm_bf16_async) or f16 (gemm_f16_async), accumulated in f32 by warp-level m16n8k16
multiply-accumulates and rounded to the input dtype once. PTX sm_80 and newer only.

What it adds to gemm_bf16_tc.py (which stays for shapes this one refuses): the operands travel from global
to shared memory by 16-byte `pt.copy_async` (cp.async: no registers, no wait at the issuing thread) in a
ring of STAGES k-tiles, so the loads of the next tiles are in flight while the warps multiply this one;
and the fragments come out of shared memory by `pt.ldmatrix_x4` (A) and `pt.ldmatrix_x4_trans` (B kept
row-major, [k][n], as it arrives), one instruction per four 8x8 matrices instead of one load per word.

Layout. A workgroup of 256 threads (8 warps) computes one 128 x 128 tile of C; group x
numbers the tiles of one batch element, raster in groups of GROUP_M tile rows (the workgroups running at
once share B's columns in L2), group z picks the batch element (a, b, c start at z * sa, z * sb, z * sc
elements; a stride of 0 broadcasts an operand). The warps stand 2 (rows) x 4 (columns), each owning
64 x 32 of C as 4 x 4 m16n8 tiles: 64 f32 accumulators per lane, in PTX's C fragment layout.
K advances 32 at a time; per 16 of k a warp loads B's fragments, then for each m16 tile A's and its
4 multiply-accumulates.

The k loop takes STAGES k-tiles a pass, k-tile kt0 + s in ring slot s, so that every shared-memory
offset of ldmatrix and cp.async is a per-thread base (computed once) + a constant; a pass stops at
the last k-tile.
A workgroup whose tile lies inside M and N, with K whole k-tiles (`interior`, the same in all its
threads), copies without per-chunk checks from per-thread source offsets and stores without checks;
the others check every chunk and every pair of results.

Shared memory, per stage: A as [128 rows][4 chunks] and B as [32 k][16 chunks], a chunk being 16 bytes (8
elements, 4 words); 3 stages x 16 KiB = 48 KiB (past 48 KiB the block is dynamic shared memory).
Chunks are stored XOR-swizzled so that each 8-lane phase of an ldmatrix reads 8 distinct 16-byte bank
groups: A's chunk c of row r at (c ^ ((r >> 1) & 3)), B's chunk c of k-row r at c ^ (r & 7).

Requirements (gpu_gemm.asset_for checks them, else gemm_bf16_tc runs): K, N, sa and sb multiples of 8,
so every 16-byte chunk of a row is aligned and lies wholly inside or outside the matrix; chunks outside
(rows past M, k past K, columns past N) are zero-filled by the copy itself; sc even (M * N is), so each
lane's two adjacent results are one aligned 32-bit store. Launch: threads =
(tiles of M * tiles of N * 256, 1, batch), workgroup (256, 1, 1) (`launch_threads`).

This file is written by tools/unroll/gemm_async.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = 128          # tile columns (N)
BK = 32           # k per tile
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
    def store2(c, half, row, col, M, N, v0, v1):
        """C[row, col] and C[row, col + 1], where inside C (col, N and the batch offset 2 * half even: both or
        neither inside, one aligned 32-bit store)."""
        if row < M and col < N:
            at = pt.u64(half + row * (N >> 1) + (col >> 1)) * 2
            c[at] = LOW(v0)
            c[at + 1] = LOW(v1)

    @pt.device_fn
    def issue(sa_, sb_, a32, b32, stage, k0, local, m0, n0, abase, bbase, M, N, K):
        """Start the copies of k-tile k0 into ring slot `stage`: 2 chunks of A and 2 of B per thread."""
        for j in range(2):
            at = local + THREADS * pt.u32(j)
            row = at // 4
            ch = at % 4
            ok = m0 + row < M and k0 + ch * 8 < K
            src = (abase + (m0 + row) * K + k0 + ch * 8) // 2
            pt.copy_async(sa_, stage * A_WORDS + row * 16 + (ch ^ ((row >> 1) & 3)) * 4, a32, src * pt.u32(ok), ok)
        for j in range(2):
            at = local + THREADS * pt.u32(j)
            kr = at // 16
            cb = at % 16
            okb = k0 + kr < K and n0 + cb * 8 < N
            srcb = (bbase + (k0 + kr) * N + n0 + cb * 8) // 2
            pt.copy_async(sb_, stage * B_WORDS + kr * 64 + (cb ^ (kr & 7)) * 4, b32, srcb * pt.u32(okb), okb)

    @pt.device_fn
    def issue_fast(sa_, sb_, a32, b32, stage, kt, a_dst, b_dst, a_src, b_src, ka, kb, kbn):
        """Start the copies of k-tile kt into ring slot `stage` where the whole tile lies inside A and B."""
        a0 = a_src + kt * (BK // 2)
        pt.copy_async(sa_, stage * A_WORDS + a_dst + 0, a32, a0 + ka * 0, True)
        pt.copy_async(sa_, stage * A_WORDS + a_dst + 1024, a32, a0 + ka * 1, True)
        b0 = b_src + kt * kbn
        pt.copy_async(sb_, stage * B_WORDS + b_dst + 0, b32, b0 + kb * 0, True)
        pt.copy_async(sb_, stage * B_WORDS + b_dst + 1024, b32, b0 + kb * 1, True)

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
        bchunk = (warp % 4) * 4 + q // 2                 # + 2 p for n-tile pair p
        # ldmatrix word offsets within a slot: A's at k-step s (+ m-tile i: a constant), B's of n-tile pair p
        ao0 = arow * 16 + ((achunk + 0) ^ ((arow >> 1) & 3)) * 4
        ao1 = arow * 16 + ((achunk + 2) ^ ((arow >> 1) & 3)) * 4
        bo0 = bk * 64 + ((bchunk + 0) ^ (bk & 7)) * 4
        bo1 = bk * 64 + ((bchunk + 2) ^ (bk & 7)) * 4
        # interior tiles (the whole tile inside M and N, K whole k-tiles) copy without checks, from
        # this thread's first chunk of A (row crow, chunk cch) and of B (k-row krow, chunk kch)
        interior = m0 + BM <= M and n0 + BN <= N and K % BK == 0
        crow = local // 4
        cch = local % 4
        a_dst = crow * 16 + (cch ^ ((crow >> 1) & 3)) * 4
        a_src = (abase + (m0 + crow) * K + cch * 8) >> 1
        ka = 64 * (K >> 1)
        krow = local // 16
        kch = local % 16
        b_dst = krow * 64 + (kch ^ (krow & 7)) * 4
        b_src = (bbase + krow * N + n0 + kch * 8) >> 1
        kb = 16 * (N >> 1)
        kbn = BK * (N >> 1)
        zero = pt.f32(0.0)
        c0_0_0, c0_0_1, c0_0_2, c0_0_3 = zero, zero, zero, zero
        c0_1_0, c0_1_1, c0_1_2, c0_1_3 = zero, zero, zero, zero
        c0_2_0, c0_2_1, c0_2_2, c0_2_3 = zero, zero, zero, zero
        c0_3_0, c0_3_1, c0_3_2, c0_3_3 = zero, zero, zero, zero
        c1_0_0, c1_0_1, c1_0_2, c1_0_3 = zero, zero, zero, zero
        c1_1_0, c1_1_1, c1_1_2, c1_1_3 = zero, zero, zero, zero
        c1_2_0, c1_2_1, c1_2_2, c1_2_3 = zero, zero, zero, zero
        c1_3_0, c1_3_1, c1_3_2, c1_3_3 = zero, zero, zero, zero
        c2_0_0, c2_0_1, c2_0_2, c2_0_3 = zero, zero, zero, zero
        c2_1_0, c2_1_1, c2_1_2, c2_1_3 = zero, zero, zero, zero
        c2_2_0, c2_2_1, c2_2_2, c2_2_3 = zero, zero, zero, zero
        c2_3_0, c2_3_1, c2_3_2, c2_3_3 = zero, zero, zero, zero
        c3_0_0, c3_0_1, c3_0_2, c3_0_3 = zero, zero, zero, zero
        c3_1_0, c3_1_1, c3_1_2, c3_1_3 = zero, zero, zero, zero
        c3_2_0, c3_2_1, c3_2_2, c3_2_3 = zero, zero, zero, zero
        c3_3_0, c3_3_1, c3_3_2, c3_3_3 = zero, zero, zero, zero
        ntiles = (K + BK - 1) // BK
        if interior:
            if pt.u32(0) < ntiles:
                issue_fast(sa_, sb_, a32, b32, pt.u32(0), pt.u32(0), a_dst, b_dst, a_src, b_src, ka, kb, kbn)
        else:
            issue(sa_, sb_, a32, b32, pt.u32(0), pt.u32(0) * BK, local, m0, n0, abase, bbase, M, N, K)
        pt.copy_async_commit()
        if interior:
            if pt.u32(1) < ntiles:
                issue_fast(sa_, sb_, a32, b32, pt.u32(1), pt.u32(1), a_dst, b_dst, a_src, b_src, ka, kb, kbn)
        else:
            issue(sa_, sb_, a32, b32, pt.u32(1), pt.u32(1) * BK, local, m0, n0, abase, bbase, M, N, K)
        pt.copy_async_commit()
        # STAGES k-tiles a pass, k-tile kt0 + s in slot s: every shared-memory offset is a constant
        for kq in range((ntiles + STAGES - 1) // STAGES):
            kt0 = kq * STAGES
            pt.copy_async_wait(STAGES - 2)
            pt.workgroup_barrier()
            nxt = kt0 + STAGES - 1
            if interior:
                if nxt < ntiles:
                    issue_fast(sa_, sb_, a32, b32, pt.u32(2), nxt, a_dst, b_dst, a_src, b_src, ka, kb, kbn)
            else:
                issue(sa_, sb_, a32, b32, pt.u32(2), nxt * BK, local, m0, n0, abase, bbase, M, N, K)
            pt.copy_async_commit()
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 0 + bo0 + 0)
            fb0_0 = lo(y0)
            fb0_1 = hi(y0)
            fb0_2 = lo(y1)
            fb0_3 = hi(y1)
            fb1_0 = lo(y2)
            fb1_1 = hi(y2)
            fb1_2 = lo(y3)
            fb1_3 = hi(y3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 0 + bo1 + 0)
            fb2_0 = lo(y0)
            fb2_1 = hi(y0)
            fb2_2 = lo(y1)
            fb2_3 = hi(y1)
            fb3_0 = lo(y2)
            fb3_1 = hi(y2)
            fb3_2 = lo(y3)
            fb3_3 = hi(y3)
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao0 + 0)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao0 + 256)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao0 + 512)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao0 + 768)
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
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 0 + bo0 + 1024)
            fb0_0 = lo(y0)
            fb0_1 = hi(y0)
            fb0_2 = lo(y1)
            fb0_3 = hi(y1)
            fb1_0 = lo(y2)
            fb1_1 = hi(y2)
            fb1_2 = lo(y3)
            fb1_3 = hi(y3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 0 + bo1 + 1024)
            fb2_0 = lo(y0)
            fb2_1 = hi(y0)
            fb2_2 = lo(y1)
            fb2_3 = hi(y1)
            fb3_0 = lo(y2)
            fb3_1 = hi(y2)
            fb3_2 = lo(y3)
            fb3_3 = hi(y3)
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao1 + 0)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao1 + 256)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao1 + 512)
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
            x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 0 + ao1 + 768)
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
            if kt0 + 1 < ntiles:
                pt.copy_async_wait(STAGES - 2)
                pt.workgroup_barrier()
                nxt = (kt0 + 1) + STAGES - 1
                if interior:
                    if nxt < ntiles:
                        issue_fast(sa_, sb_, a32, b32, pt.u32(0), nxt, a_dst, b_dst, a_src, b_src, ka, kb, kbn)
                else:
                    issue(sa_, sb_, a32, b32, pt.u32(0), nxt * BK, local, m0, n0, abase, bbase, M, N, K)
                pt.copy_async_commit()
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 2048 + bo0 + 0)
                fb0_0 = lo(y0)
                fb0_1 = hi(y0)
                fb0_2 = lo(y1)
                fb0_3 = hi(y1)
                fb1_0 = lo(y2)
                fb1_1 = hi(y2)
                fb1_2 = lo(y3)
                fb1_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 2048 + bo1 + 0)
                fb2_0 = lo(y0)
                fb2_1 = hi(y0)
                fb2_2 = lo(y1)
                fb2_3 = hi(y1)
                fb3_0 = lo(y2)
                fb3_1 = hi(y2)
                fb3_2 = lo(y3)
                fb3_3 = hi(y3)
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao0 + 0)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao0 + 256)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao0 + 512)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao0 + 768)
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
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 2048 + bo0 + 1024)
                fb0_0 = lo(y0)
                fb0_1 = hi(y0)
                fb0_2 = lo(y1)
                fb0_3 = hi(y1)
                fb1_0 = lo(y2)
                fb1_1 = hi(y2)
                fb1_2 = lo(y3)
                fb1_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 2048 + bo1 + 1024)
                fb2_0 = lo(y0)
                fb2_1 = hi(y0)
                fb2_2 = lo(y1)
                fb2_3 = hi(y1)
                fb3_0 = lo(y2)
                fb3_1 = hi(y2)
                fb3_2 = lo(y3)
                fb3_3 = hi(y3)
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao1 + 0)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao1 + 256)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao1 + 512)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 2048 + ao1 + 768)
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
            if kt0 + 2 < ntiles:
                pt.copy_async_wait(STAGES - 2)
                pt.workgroup_barrier()
                nxt = (kt0 + 2) + STAGES - 1
                if interior:
                    if nxt < ntiles:
                        issue_fast(sa_, sb_, a32, b32, pt.u32(1), nxt, a_dst, b_dst, a_src, b_src, ka, kb, kbn)
                else:
                    issue(sa_, sb_, a32, b32, pt.u32(1), nxt * BK, local, m0, n0, abase, bbase, M, N, K)
                pt.copy_async_commit()
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 4096 + bo0 + 0)
                fb0_0 = lo(y0)
                fb0_1 = hi(y0)
                fb0_2 = lo(y1)
                fb0_3 = hi(y1)
                fb1_0 = lo(y2)
                fb1_1 = hi(y2)
                fb1_2 = lo(y3)
                fb1_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 4096 + bo1 + 0)
                fb2_0 = lo(y0)
                fb2_1 = hi(y0)
                fb2_2 = lo(y1)
                fb2_3 = hi(y1)
                fb3_0 = lo(y2)
                fb3_1 = hi(y2)
                fb3_2 = lo(y3)
                fb3_3 = hi(y3)
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao0 + 0)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao0 + 256)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao0 + 512)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao0 + 768)
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
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 4096 + bo0 + 1024)
                fb0_0 = lo(y0)
                fb0_1 = hi(y0)
                fb0_2 = lo(y1)
                fb0_3 = hi(y1)
                fb1_0 = lo(y2)
                fb1_1 = hi(y2)
                fb1_2 = lo(y3)
                fb1_3 = hi(y3)
                y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, 4096 + bo1 + 1024)
                fb2_0 = lo(y0)
                fb2_1 = hi(y0)
                fb2_2 = lo(y1)
                fb2_3 = hi(y1)
                fb3_0 = lo(y2)
                fb3_1 = hi(y2)
                fb3_2 = lo(y3)
                fb3_3 = hi(y3)
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao1 + 0)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao1 + 256)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao1 + 512)
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
                x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, 4096 + ao1 + 768)
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
        pt.copy_async_wait(0)
        half = z * (sc >> 1)
        row0 = m0 + (warp // 4) * 64 + lane // 4
        col0 = n0 + (warp % 4) * 32 + 2 * (lane % 4)
        if m0 + BM <= M and n0 + BN <= N:
            at0 = pt.u64(half + row0 * (N >> 1) + (col0 >> 1)) * 2
            rows8 = pt.u64(N) * 8
            at = at0 + rows8 * 0
            c[at + 0] = LOW(c0_0_0)
            c[at + 1] = LOW(c0_0_1)
            c[at + 8] = LOW(c0_1_0)
            c[at + 9] = LOW(c0_1_1)
            c[at + 16] = LOW(c0_2_0)
            c[at + 17] = LOW(c0_2_1)
            c[at + 24] = LOW(c0_3_0)
            c[at + 25] = LOW(c0_3_1)
            at = at0 + rows8 * 1
            c[at + 0] = LOW(c0_0_2)
            c[at + 1] = LOW(c0_0_3)
            c[at + 8] = LOW(c0_1_2)
            c[at + 9] = LOW(c0_1_3)
            c[at + 16] = LOW(c0_2_2)
            c[at + 17] = LOW(c0_2_3)
            c[at + 24] = LOW(c0_3_2)
            c[at + 25] = LOW(c0_3_3)
            at = at0 + rows8 * 2
            c[at + 0] = LOW(c1_0_0)
            c[at + 1] = LOW(c1_0_1)
            c[at + 8] = LOW(c1_1_0)
            c[at + 9] = LOW(c1_1_1)
            c[at + 16] = LOW(c1_2_0)
            c[at + 17] = LOW(c1_2_1)
            c[at + 24] = LOW(c1_3_0)
            c[at + 25] = LOW(c1_3_1)
            at = at0 + rows8 * 3
            c[at + 0] = LOW(c1_0_2)
            c[at + 1] = LOW(c1_0_3)
            c[at + 8] = LOW(c1_1_2)
            c[at + 9] = LOW(c1_1_3)
            c[at + 16] = LOW(c1_2_2)
            c[at + 17] = LOW(c1_2_3)
            c[at + 24] = LOW(c1_3_2)
            c[at + 25] = LOW(c1_3_3)
            at = at0 + rows8 * 4
            c[at + 0] = LOW(c2_0_0)
            c[at + 1] = LOW(c2_0_1)
            c[at + 8] = LOW(c2_1_0)
            c[at + 9] = LOW(c2_1_1)
            c[at + 16] = LOW(c2_2_0)
            c[at + 17] = LOW(c2_2_1)
            c[at + 24] = LOW(c2_3_0)
            c[at + 25] = LOW(c2_3_1)
            at = at0 + rows8 * 5
            c[at + 0] = LOW(c2_0_2)
            c[at + 1] = LOW(c2_0_3)
            c[at + 8] = LOW(c2_1_2)
            c[at + 9] = LOW(c2_1_3)
            c[at + 16] = LOW(c2_2_2)
            c[at + 17] = LOW(c2_2_3)
            c[at + 24] = LOW(c2_3_2)
            c[at + 25] = LOW(c2_3_3)
            at = at0 + rows8 * 6
            c[at + 0] = LOW(c3_0_0)
            c[at + 1] = LOW(c3_0_1)
            c[at + 8] = LOW(c3_1_0)
            c[at + 9] = LOW(c3_1_1)
            c[at + 16] = LOW(c3_2_0)
            c[at + 17] = LOW(c3_2_1)
            c[at + 24] = LOW(c3_3_0)
            c[at + 25] = LOW(c3_3_1)
            at = at0 + rows8 * 7
            c[at + 0] = LOW(c3_0_2)
            c[at + 1] = LOW(c3_0_3)
            c[at + 8] = LOW(c3_1_2)
            c[at + 9] = LOW(c3_1_3)
            c[at + 16] = LOW(c3_2_2)
            c[at + 17] = LOW(c3_2_3)
            c[at + 24] = LOW(c3_3_2)
            c[at + 25] = LOW(c3_3_3)
        else:
            store2(c, half, row0 + 0, col0 + 0, M, N, c0_0_0, c0_0_1)
            store2(c, half, row0 + 8, col0 + 0, M, N, c0_0_2, c0_0_3)
            store2(c, half, row0 + 0, col0 + 8, M, N, c0_1_0, c0_1_1)
            store2(c, half, row0 + 8, col0 + 8, M, N, c0_1_2, c0_1_3)
            store2(c, half, row0 + 0, col0 + 16, M, N, c0_2_0, c0_2_1)
            store2(c, half, row0 + 8, col0 + 16, M, N, c0_2_2, c0_2_3)
            store2(c, half, row0 + 0, col0 + 24, M, N, c0_3_0, c0_3_1)
            store2(c, half, row0 + 8, col0 + 24, M, N, c0_3_2, c0_3_3)
            store2(c, half, row0 + 16, col0 + 0, M, N, c1_0_0, c1_0_1)
            store2(c, half, row0 + 24, col0 + 0, M, N, c1_0_2, c1_0_3)
            store2(c, half, row0 + 16, col0 + 8, M, N, c1_1_0, c1_1_1)
            store2(c, half, row0 + 24, col0 + 8, M, N, c1_1_2, c1_1_3)
            store2(c, half, row0 + 16, col0 + 16, M, N, c1_2_0, c1_2_1)
            store2(c, half, row0 + 24, col0 + 16, M, N, c1_2_2, c1_2_3)
            store2(c, half, row0 + 16, col0 + 24, M, N, c1_3_0, c1_3_1)
            store2(c, half, row0 + 24, col0 + 24, M, N, c1_3_2, c1_3_3)
            store2(c, half, row0 + 32, col0 + 0, M, N, c2_0_0, c2_0_1)
            store2(c, half, row0 + 40, col0 + 0, M, N, c2_0_2, c2_0_3)
            store2(c, half, row0 + 32, col0 + 8, M, N, c2_1_0, c2_1_1)
            store2(c, half, row0 + 40, col0 + 8, M, N, c2_1_2, c2_1_3)
            store2(c, half, row0 + 32, col0 + 16, M, N, c2_2_0, c2_2_1)
            store2(c, half, row0 + 40, col0 + 16, M, N, c2_2_2, c2_2_3)
            store2(c, half, row0 + 32, col0 + 24, M, N, c2_3_0, c2_3_1)
            store2(c, half, row0 + 40, col0 + 24, M, N, c2_3_2, c2_3_3)
            store2(c, half, row0 + 48, col0 + 0, M, N, c3_0_0, c3_0_1)
            store2(c, half, row0 + 56, col0 + 0, M, N, c3_0_2, c3_0_3)
            store2(c, half, row0 + 48, col0 + 8, M, N, c3_1_0, c3_1_1)
            store2(c, half, row0 + 56, col0 + 8, M, N, c3_1_2, c3_1_3)
            store2(c, half, row0 + 48, col0 + 16, M, N, c3_2_0, c3_2_1)
            store2(c, half, row0 + 56, col0 + 16, M, N, c3_2_2, c3_2_3)
            store2(c, half, row0 + 48, col0 + 24, M, N, c3_3_0, c3_3_1)
            store2(c, half, row0 + 56, col0 + 24, M, N, c3_3_2, c3_3_3)

    return gemm_async


gemm_bf16_async = _make(pt.bf16, "gemm_bf16_async")
gemm_f16_async = _make(pt.f16, "gemm_f16_async")


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
    # with a broadcast B (stride 0), several tiles each way, more tile rows than a raster group, and
    # interior tiles (unchecked copies and stores) off the origin in a batch, over fewer k-tiles than slots
    for batch, m, n, k, bcast in ((1, 37, 56, 40, False), (1, BM, BN, 4 * BK, False), (2, 20, 136, 24, True),
                                  (1, BM + 40, 2 * BN + 8, 40, False), (1, (GROUP_M + 1) * BM + 3, 24, 32, False),
                                  (2, 2 * BM, 2 * BN, 2 * BK, True)):
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
