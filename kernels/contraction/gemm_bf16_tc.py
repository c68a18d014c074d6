"""Tiled GEMM on tensor cores: C[z] = A[z] @ B[z] for row-major A [M, K] and B [K, N] of bf16 (gemm_bf16_tc) or
f16 (gemm_f16_tc), accumulated in f32 by warp-level m16n8k16 multiply-accumulates and rounded to the input
dtype once (what a 16-bit matmul means in poot and in PyTorch). PTX sm_80 and newer only (pt.mma_m16n8k16).

Layout. A workgroup of 256 threads (8 warps) computes one 128 x 128 tile of C: group x picks the tile's
columns, group y its rows, group z the batch element (a, b, c start at z * sa, z * sb, z * sc elements; a
stride of 0 broadcasts an operand). The warps stand 2 (rows) x 4 (columns), each owning 64 x 32 of C as
4 x 4 m16n8 tiles: 64 f32 accumulators per lane, in PTX's C fragment layout. K advances 32 at a time.

Shared memory holds both operands as 32-bit words of two consecutive-k elements (the low half first), the
form the mma's A and B fragment registers take: A as [128 rows][16 words], B transposed as [128 columns][16
words] (each word packs B[k, n] and B[k + 1, n]), every row padded to LD = 20 words so that a warp's
fragment loads (8 rows x 4 consecutive words) and staging stores hit 32 distinct banks. Two such buffers
(2 x 2 x 10 KiB = 40 KiB): while the warps multiply out of one, each thread has already loaded the next
k-tile into registers (8 words of A, 8 of B) and writes them into the other, one barrier per k-tile.

Global loads are 32-bit words of two elements through `a32` / `b32`, views of the same buffers as words,
where the rows keep pairs aligned (K even and sa even for A; N even and sb even for B); otherwise, and at
the edges of M, N and K, element by element, with zeros past the edges. Launch: threads = (ceil(N / 128)
* 256, ceil(M / 128), batch), workgroup (256, 1, 1) (`launch_threads`)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = 128          # tile columns (N)
BK = 32           # k per tile
LD = 20           # words per shared row: BK // 2 words and 4 of padding
TILE = 128 * LD   # words per operand tile (BM == BN == 128)


@pt.device_fn
def bits(x):
    """The 16 bits of a 16-bit float as the low half of a word."""
    return pt.u32(pt.bitcast(x, pt.u16))


@pt.device_fn
def pair(v, v32, at, ok0, ok1, wide):
    """Elements `at` and `at + 1` of v packed in a word (the first in the low half), each zero unless its
    flag says it is in range: one load of the word view where both are and `wide` says `at` is even."""
    w = pt.u32(0)
    if ok1 and wide:
        w = v32[at // 2]
    else:
        if ok0:
            w = bits(v[at])
        if ok1:
            w = w | (bits(v[at + 1]) << 16)
    return w


@pt.device_fn
def load_a(a, a32, base, row, k, M, K, wide):
    """A[row, k] and A[row, k + 1] (k even) as one word."""
    inside = row < M
    return pair(a, a32, base + row * K + k, inside and k < K, inside and k + 1 < K, wide)


@pt.device_fn
def load_b(b, b32, base, k, n, N, K, wide):
    """B[k, n] and B[k, n + 1] (n even) as one word."""
    inside = k < K
    return pair(b, b32, base + k * N + n, inside and n < N, inside and n + 1 < N, wide)


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

    @pt.kernel(workgroup=(256, 1, 1), name=name, checks=False)
    def gemm_tc(a: pt.In[LOW], a32: pt.In[pt.u32], b: pt.In[LOW], b32: pt.In[pt.u32], c: pt.Out[LOW],
                M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
        sa_ = pt.shared(pt.u32, 2 * TILE)
        sb_ = pt.shared(pt.u32, 2 * TILE)
        local = pt.local_index_x()
        lane = local % 32
        warp = local // 32
        m0 = pt.group_index_y() * BM
        n0 = pt.group_index_x() * BN
        z = pt.group_index_z()
        abase = z * sa
        bbase = z * sb
        wide_a = K % 2 == 0 and sa % 2 == 0
        wide_b = N % 2 == 0 and sb % 2 == 0
        # staging: this thread's A words (rows ar, ar + 64; words aw, aw + 4, aw + 8, aw + 12) and B units
        # (k-word bw; column pairs bn, bn + 16, bn + 32, bn + 48), spread so a warp's stores hit 32 banks
        ar = lane // 4 + 8 * warp
        aw = lane % 4
        bw = lane // 4 + 8 * (warp % 2)
        bn = lane % 4 + 4 * (warp // 2)
        ga = m0 + ar
        gn = n0 + 2 * bn
        # fragments: this lane's row g and word t within each warp's 64 x 32 block
        g = lane // 4
        t = lane % 4
        wrow = (warp // 4) * 64 + g
        wcol = (warp % 4) * 32 + g
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
        # k-tile kt: registers (loaded one tile ahead) -> shared buffer kt % 2 -> barrier -> 16 mma x 2 per warp
        ra0 = load_a(a, a32, abase, ga, 2 * aw, M, K, wide_a)
        ra1 = load_a(a, a32, abase, ga + 64, 2 * aw, M, K, wide_a)
        ra2 = load_a(a, a32, abase, ga, 2 * aw + 8, M, K, wide_a)
        ra3 = load_a(a, a32, abase, ga + 64, 2 * aw + 8, M, K, wide_a)
        ra4 = load_a(a, a32, abase, ga, 2 * aw + 16, M, K, wide_a)
        ra5 = load_a(a, a32, abase, ga + 64, 2 * aw + 16, M, K, wide_a)
        ra6 = load_a(a, a32, abase, ga, 2 * aw + 24, M, K, wide_a)
        ra7 = load_a(a, a32, abase, ga + 64, 2 * aw + 24, M, K, wide_a)
        rb0 = load_b(b, b32, bbase, 2 * bw, gn, N, K, wide_b)
        rb1 = load_b(b, b32, bbase, 2 * bw + 1, gn, N, K, wide_b)
        rb2 = load_b(b, b32, bbase, 2 * bw, gn + 32, N, K, wide_b)
        rb3 = load_b(b, b32, bbase, 2 * bw + 1, gn + 32, N, K, wide_b)
        rb4 = load_b(b, b32, bbase, 2 * bw, gn + 64, N, K, wide_b)
        rb5 = load_b(b, b32, bbase, 2 * bw + 1, gn + 64, N, K, wide_b)
        rb6 = load_b(b, b32, bbase, 2 * bw, gn + 96, N, K, wide_b)
        rb7 = load_b(b, b32, bbase, 2 * bw + 1, gn + 96, N, K, wide_b)
        for kt in range(ntiles):
            cur = (kt % 2) * TILE
            sa_[cur + (ar) * LD + aw] = ra0
            sa_[cur + (ar + 64) * LD + aw] = ra1
            sa_[cur + (ar) * LD + aw + 4] = ra2
            sa_[cur + (ar + 64) * LD + aw + 4] = ra3
            sa_[cur + (ar) * LD + aw + 8] = ra4
            sa_[cur + (ar + 64) * LD + aw + 8] = ra5
            sa_[cur + (ar) * LD + aw + 12] = ra6
            sa_[cur + (ar + 64) * LD + aw + 12] = ra7
            sb_[cur + (2 * bn) * LD + bw] = (rb0 & 0xFFFF) | (rb1 << 16)
            sb_[cur + (2 * bn + 1) * LD + bw] = (rb0 >> 16) | (rb1 & 0xFFFF0000)
            sb_[cur + (2 * bn + 32) * LD + bw] = (rb2 & 0xFFFF) | (rb3 << 16)
            sb_[cur + (2 * bn + 32 + 1) * LD + bw] = (rb2 >> 16) | (rb3 & 0xFFFF0000)
            sb_[cur + (2 * bn + 64) * LD + bw] = (rb4 & 0xFFFF) | (rb5 << 16)
            sb_[cur + (2 * bn + 64 + 1) * LD + bw] = (rb4 >> 16) | (rb5 & 0xFFFF0000)
            sb_[cur + (2 * bn + 96) * LD + bw] = (rb6 & 0xFFFF) | (rb7 << 16)
            sb_[cur + (2 * bn + 96 + 1) * LD + bw] = (rb6 >> 16) | (rb7 & 0xFFFF0000)
            pt.workgroup_barrier()
            if kt + 1 < ntiles:
                k1 = (kt + 1) * BK
                ra0 = load_a(a, a32, abase, ga, k1 + 2 * aw, M, K, wide_a)
                ra1 = load_a(a, a32, abase, ga + 64, k1 + 2 * aw, M, K, wide_a)
                ra2 = load_a(a, a32, abase, ga, k1 + 2 * aw + 8, M, K, wide_a)
                ra3 = load_a(a, a32, abase, ga + 64, k1 + 2 * aw + 8, M, K, wide_a)
                ra4 = load_a(a, a32, abase, ga, k1 + 2 * aw + 16, M, K, wide_a)
                ra5 = load_a(a, a32, abase, ga + 64, k1 + 2 * aw + 16, M, K, wide_a)
                ra6 = load_a(a, a32, abase, ga, k1 + 2 * aw + 24, M, K, wide_a)
                ra7 = load_a(a, a32, abase, ga + 64, k1 + 2 * aw + 24, M, K, wide_a)
                rb0 = load_b(b, b32, bbase, k1 + 2 * bw, gn, N, K, wide_b)
                rb1 = load_b(b, b32, bbase, k1 + 2 * bw + 1, gn, N, K, wide_b)
                rb2 = load_b(b, b32, bbase, k1 + 2 * bw, gn + 32, N, K, wide_b)
                rb3 = load_b(b, b32, bbase, k1 + 2 * bw + 1, gn + 32, N, K, wide_b)
                rb4 = load_b(b, b32, bbase, k1 + 2 * bw, gn + 64, N, K, wide_b)
                rb5 = load_b(b, b32, bbase, k1 + 2 * bw + 1, gn + 64, N, K, wide_b)
                rb6 = load_b(b, b32, bbase, k1 + 2 * bw, gn + 96, N, K, wide_b)
                rb7 = load_b(b, b32, bbase, k1 + 2 * bw + 1, gn + 96, N, K, wide_b)
            for ks in range(0, BK // 2, 8):
                fa = cur + wrow * LD + ks + t
                fb = cur + wcol * LD + ks + t
                p = fa + 0
                x0 = sa_[p]
                x1 = sa_[p + 160]
                x2 = sa_[p + 4]
                x3 = sa_[p + 164]
                fa00 = lo(x0)
                fa01 = hi(x0)
                fa02 = lo(x1)
                fa03 = hi(x1)
                fa04 = lo(x2)
                fa05 = hi(x2)
                fa06 = lo(x3)
                fa07 = hi(x3)
                p = fa + 320
                x0 = sa_[p]
                x1 = sa_[p + 160]
                x2 = sa_[p + 4]
                x3 = sa_[p + 164]
                fa10 = lo(x0)
                fa11 = hi(x0)
                fa12 = lo(x1)
                fa13 = hi(x1)
                fa14 = lo(x2)
                fa15 = hi(x2)
                fa16 = lo(x3)
                fa17 = hi(x3)
                p = fa + 640
                x0 = sa_[p]
                x1 = sa_[p + 160]
                x2 = sa_[p + 4]
                x3 = sa_[p + 164]
                fa20 = lo(x0)
                fa21 = hi(x0)
                fa22 = lo(x1)
                fa23 = hi(x1)
                fa24 = lo(x2)
                fa25 = hi(x2)
                fa26 = lo(x3)
                fa27 = hi(x3)
                p = fa + 960
                x0 = sa_[p]
                x1 = sa_[p + 160]
                x2 = sa_[p + 4]
                x3 = sa_[p + 164]
                fa30 = lo(x0)
                fa31 = hi(x0)
                fa32 = lo(x1)
                fa33 = hi(x1)
                fa34 = lo(x2)
                fa35 = hi(x2)
                fa36 = lo(x3)
                fa37 = hi(x3)
                p = fb + 0
                y0 = sb_[p]
                y1 = sb_[p + 4]
                fb00 = lo(y0)
                fb01 = hi(y0)
                fb02 = lo(y1)
                fb03 = hi(y1)
                p = fb + 160
                y0 = sb_[p]
                y1 = sb_[p + 4]
                fb10 = lo(y0)
                fb11 = hi(y0)
                fb12 = lo(y1)
                fb13 = hi(y1)
                p = fb + 320
                y0 = sb_[p]
                y1 = sb_[p + 4]
                fb20 = lo(y0)
                fb21 = hi(y0)
                fb22 = lo(y1)
                fb23 = hi(y1)
                p = fb + 480
                y0 = sb_[p]
                y1 = sb_[p + 4]
                fb30 = lo(y0)
                fb31 = hi(y0)
                fb32 = lo(y1)
                fb33 = hi(y1)
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
        cbase = z * sc
        row0 = m0 + wrow
        col0 = n0 + (warp % 4) * 32 + 2 * t
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

    return gemm_tc


gemm_bf16_tc = _make(pt.bf16, "gemm_bf16_tc")
gemm_f16_tc = _make(pt.f16, "gemm_f16_tc")


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-n // BN) * 256, -(-m // BM), batch)


def words(x: np.ndarray) -> np.ndarray:
    """The 16-bit array x as 32-bit words (a zero pad element when its size is odd)."""
    flat = x.reshape(-1)
    if flat.size % 2:
        flat = np.concatenate([flat, np.zeros(1, flat.dtype)])
    return flat.view(np.uint32)


def _examples(low):
    rng = np.random.default_rng(7)
    out = []
    # odd shapes (every edge, the element-wise path), whole tiles over two k-tiles, a batch with even
    # strides (the word path) and a broadcast B (stride 0)
    for batch, m, n, k, bcast in ((1, 37, 53, 29, False), (1, 128, 128, 64, False), (3, 20, 130, 40, True)):
        a = rng.standard_normal((batch, m, k)).astype(low)
        b = rng.standard_normal((1 if bcast else batch, k, n)).astype(low)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        ref = exact.astype(np.float32).astype(low)
        c = np.zeros((batch, m, n), low)
        args = (a.reshape(-1), words(a), b.reshape(-1), words(b), c.reshape(-1), m, n, k, m * k,
                0 if bcast else k * n, m * n)
        # one rounding to the 16-bit dtype, plus float32 summation error (the order differs by device)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        out.append(Example(args=args, threads=launch_threads(m, n, batch), expected={"c": ref.reshape(-1)},
                           rtol=float(ml_dtypes.finfo(low).eps), atol=float(np.finfo(np.float32).eps) * k * scale))
    return out


def example_gemm_bf16_tc(rng):
    return _examples(ml_dtypes.bfloat16)


def example_gemm_f16_tc(rng):
    return _examples(np.float16)
