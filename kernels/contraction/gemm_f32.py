"""Tiled GEMM on SIMT cores for every GPU target: C[z] = A[z] @ B[z] for row-major A [M, K] and B [K, N] of f32
(gemm_f32), accumulated in f32 with one fused multiply-add per product. The bf16/f16 forms (gemm_bf16_simt,
gemm_f16_simt) read 16-bit inputs, multiply in f32 and round the result once.

Layout. A workgroup of 256 threads computes one 128 x 128 tile of C: group x picks the tile's columns,
group y its rows, group z the batch element (a, b, c start at z * sa, z * sb, z * sc elements; a stride of
0 broadcasts an operand). Thread (tx, ty) = (local % 16, local // 16) owns an 8 x 8 block of C in
registers: rows 4 ty + {0..3} and 64 + 4 ty + {0..3}, columns 4 tx + {0..3} and 64 + 4 tx +
{0..3} (runs of 4 consecutive words: PTX reads them from shared memory as one 16-byte load). (`_make`'s
W = 1, S = 16 gives rows ty + 16 {0..7} instead, conflict-free as scalar loads.) SPIR-V: LLVM's SPIR-V
backend stops on this kernel ("Unimplemented implicit down-cast from load", in either layout), so the
planner routes it to PTX and AMDGCN only for now.
K advances 8 at a time through shared memory: A transposed as [8][128 + 4] (the padding spreads the
transposing stores over 32 banks), B as [8][128]: 8,320 bytes, within WebGPU's default 16 KiB. Each
thread loads the next k-tile into registers (4 elements of A, 4 of B) while the tile in shared memory is
multiplied (64 FMAs per 16 shared loads per k step); two barriers per k-tile. Elements past M, N or K
read as zero. Launch: threads = (ceil(N / 128) * 256, ceil(M / 128), batch), workgroup (256, 1, 1)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = 128          # tile columns (N)
BK = 8            # k per tile
LDA = BM + 4      # floats per row of the transposed A tile


@pt.device_fn
def elem(v, at, ok):
    """v[at] as f32 where `ok`, else zero."""
    x = pt.f32(0.0)
    if ok:
        x = pt.f32(v[at])
    return x


def _make(T, name, W, S):
    """W, S: a thread's rows (and columns) are W * ty + S * {0..3} and 64 + W * ty + S * {0..3}."""
    @pt.device_fn
    def store(c, base, row, col, M, N, v):
        """C[row, col] = v where inside C."""
        if row < M and col < N:
            c[base + row * N + col] = T(v)

    @pt.kernel(workgroup=(256, 1, 1), name=name, checks=False)
    def gemm_simt(a: pt.In[T], b: pt.In[T], c: pt.Out[T], M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32,
                  sb: pt.u32, sc: pt.u32):
        sa_ = pt.shared(pt.f32, BK * LDA)
        sb_ = pt.shared(pt.f32, BK * BN)
        local = pt.local_index_x()
        m0 = pt.group_index_y() * BM
        n0 = pt.group_index_x() * BN
        z = pt.group_index_z()
        abase = z * sa
        bbase = z * sb
        # staging: A elements (rows am + 32 i, k ak), B elements (k bk + 2 i, column bn)
        ak = local % 8
        am = local // 8
        bn = local % 128
        bk = local // 128
        ga = m0 + am
        gb = n0 + bn
        tx = local % 16
        ty = local // 16
        zero = pt.f32(0.0)
        c00 = zero
        c01 = zero
        c02 = zero
        c03 = zero
        c04 = zero
        c05 = zero
        c06 = zero
        c07 = zero
        c10 = zero
        c11 = zero
        c12 = zero
        c13 = zero
        c14 = zero
        c15 = zero
        c16 = zero
        c17 = zero
        c20 = zero
        c21 = zero
        c22 = zero
        c23 = zero
        c24 = zero
        c25 = zero
        c26 = zero
        c27 = zero
        c30 = zero
        c31 = zero
        c32 = zero
        c33 = zero
        c34 = zero
        c35 = zero
        c36 = zero
        c37 = zero
        c40 = zero
        c41 = zero
        c42 = zero
        c43 = zero
        c44 = zero
        c45 = zero
        c46 = zero
        c47 = zero
        c50 = zero
        c51 = zero
        c52 = zero
        c53 = zero
        c54 = zero
        c55 = zero
        c56 = zero
        c57 = zero
        c60 = zero
        c61 = zero
        c62 = zero
        c63 = zero
        c64 = zero
        c65 = zero
        c66 = zero
        c67 = zero
        c70 = zero
        c71 = zero
        c72 = zero
        c73 = zero
        c74 = zero
        c75 = zero
        c76 = zero
        c77 = zero
        k0 = pt.u32(0)
        ra0 = elem(a, abase + (ga + 0) * K + k0 + ak, ga + 0 < M and k0 + ak < K)
        ra1 = elem(a, abase + (ga + 32) * K + k0 + ak, ga + 32 < M and k0 + ak < K)
        ra2 = elem(a, abase + (ga + 64) * K + k0 + ak, ga + 64 < M and k0 + ak < K)
        ra3 = elem(a, abase + (ga + 96) * K + k0 + ak, ga + 96 < M and k0 + ak < K)
        rb0 = elem(b, bbase + (k0 + bk + 0) * N + gb, k0 + bk + 0 < K and gb < N)
        rb1 = elem(b, bbase + (k0 + bk + 2) * N + gb, k0 + bk + 2 < K and gb < N)
        rb2 = elem(b, bbase + (k0 + bk + 4) * N + gb, k0 + bk + 4 < K and gb < N)
        rb3 = elem(b, bbase + (k0 + bk + 6) * N + gb, k0 + bk + 6 < K and gb < N)
        while k0 < K:
            pt.workgroup_barrier()
            sa_[ak * LDA + am + 0] = ra0
            sa_[ak * LDA + am + 32] = ra1
            sa_[ak * LDA + am + 64] = ra2
            sa_[ak * LDA + am + 96] = ra3
            sb_[(bk + 0) * BN + bn] = rb0
            sb_[(bk + 2) * BN + bn] = rb1
            sb_[(bk + 4) * BN + bn] = rb2
            sb_[(bk + 6) * BN + bn] = rb3
            pt.workgroup_barrier()
            k0 += BK
            if k0 < K:
                ra0 = elem(a, abase + (ga + 0) * K + k0 + ak, ga + 0 < M and k0 + ak < K)
                ra1 = elem(a, abase + (ga + 32) * K + k0 + ak, ga + 32 < M and k0 + ak < K)
                ra2 = elem(a, abase + (ga + 64) * K + k0 + ak, ga + 64 < M and k0 + ak < K)
                ra3 = elem(a, abase + (ga + 96) * K + k0 + ak, ga + 96 < M and k0 + ak < K)
                rb0 = elem(b, bbase + (k0 + bk + 0) * N + gb, k0 + bk + 0 < K and gb < N)
                rb1 = elem(b, bbase + (k0 + bk + 2) * N + gb, k0 + bk + 2 < K and gb < N)
                rb2 = elem(b, bbase + (k0 + bk + 4) * N + gb, k0 + bk + 4 < K and gb < N)
                rb3 = elem(b, bbase + (k0 + bk + 6) * N + gb, k0 + bk + 6 < K and gb < N)
            for kk in range(0, BK):
                pa = W * ty + pt.u32(kk) * LDA
                pb = W * tx + pt.u32(kk) * BN
                x0 = sa_[pa]
                x1 = sa_[pa + S]
                x2 = sa_[pa + 2 * S]
                x3 = sa_[pa + 3 * S]
                x4 = sa_[pa + 64]
                x5 = sa_[pa + S + 64]
                x6 = sa_[pa + 2 * S + 64]
                x7 = sa_[pa + 3 * S + 64]
                y0 = sb_[pb]
                y1 = sb_[pb + S]
                y2 = sb_[pb + 2 * S]
                y3 = sb_[pb + 3 * S]
                y4 = sb_[pb + 64]
                y5 = sb_[pb + S + 64]
                y6 = sb_[pb + 2 * S + 64]
                y7 = sb_[pb + 3 * S + 64]
                c00 = pt.fma(x0, y0, c00)
                c01 = pt.fma(x0, y1, c01)
                c02 = pt.fma(x0, y2, c02)
                c03 = pt.fma(x0, y3, c03)
                c04 = pt.fma(x0, y4, c04)
                c05 = pt.fma(x0, y5, c05)
                c06 = pt.fma(x0, y6, c06)
                c07 = pt.fma(x0, y7, c07)
                c10 = pt.fma(x1, y0, c10)
                c11 = pt.fma(x1, y1, c11)
                c12 = pt.fma(x1, y2, c12)
                c13 = pt.fma(x1, y3, c13)
                c14 = pt.fma(x1, y4, c14)
                c15 = pt.fma(x1, y5, c15)
                c16 = pt.fma(x1, y6, c16)
                c17 = pt.fma(x1, y7, c17)
                c20 = pt.fma(x2, y0, c20)
                c21 = pt.fma(x2, y1, c21)
                c22 = pt.fma(x2, y2, c22)
                c23 = pt.fma(x2, y3, c23)
                c24 = pt.fma(x2, y4, c24)
                c25 = pt.fma(x2, y5, c25)
                c26 = pt.fma(x2, y6, c26)
                c27 = pt.fma(x2, y7, c27)
                c30 = pt.fma(x3, y0, c30)
                c31 = pt.fma(x3, y1, c31)
                c32 = pt.fma(x3, y2, c32)
                c33 = pt.fma(x3, y3, c33)
                c34 = pt.fma(x3, y4, c34)
                c35 = pt.fma(x3, y5, c35)
                c36 = pt.fma(x3, y6, c36)
                c37 = pt.fma(x3, y7, c37)
                c40 = pt.fma(x4, y0, c40)
                c41 = pt.fma(x4, y1, c41)
                c42 = pt.fma(x4, y2, c42)
                c43 = pt.fma(x4, y3, c43)
                c44 = pt.fma(x4, y4, c44)
                c45 = pt.fma(x4, y5, c45)
                c46 = pt.fma(x4, y6, c46)
                c47 = pt.fma(x4, y7, c47)
                c50 = pt.fma(x5, y0, c50)
                c51 = pt.fma(x5, y1, c51)
                c52 = pt.fma(x5, y2, c52)
                c53 = pt.fma(x5, y3, c53)
                c54 = pt.fma(x5, y4, c54)
                c55 = pt.fma(x5, y5, c55)
                c56 = pt.fma(x5, y6, c56)
                c57 = pt.fma(x5, y7, c57)
                c60 = pt.fma(x6, y0, c60)
                c61 = pt.fma(x6, y1, c61)
                c62 = pt.fma(x6, y2, c62)
                c63 = pt.fma(x6, y3, c63)
                c64 = pt.fma(x6, y4, c64)
                c65 = pt.fma(x6, y5, c65)
                c66 = pt.fma(x6, y6, c66)
                c67 = pt.fma(x6, y7, c67)
                c70 = pt.fma(x7, y0, c70)
                c71 = pt.fma(x7, y1, c71)
                c72 = pt.fma(x7, y2, c72)
                c73 = pt.fma(x7, y3, c73)
                c74 = pt.fma(x7, y4, c74)
                c75 = pt.fma(x7, y5, c75)
                c76 = pt.fma(x7, y6, c76)
                c77 = pt.fma(x7, y7, c77)
        cbase = z * sc
        row = m0 + W * ty
        col = n0 + W * tx
        store(c, cbase, row, col, M, N, c00)
        store(c, cbase, row, col + S, M, N, c01)
        store(c, cbase, row, col + 2 * S, M, N, c02)
        store(c, cbase, row, col + 3 * S, M, N, c03)
        store(c, cbase, row, col + 64, M, N, c04)
        store(c, cbase, row, col + S + 64, M, N, c05)
        store(c, cbase, row, col + 2 * S + 64, M, N, c06)
        store(c, cbase, row, col + 3 * S + 64, M, N, c07)
        store(c, cbase, row + S, col, M, N, c10)
        store(c, cbase, row + S, col + S, M, N, c11)
        store(c, cbase, row + S, col + 2 * S, M, N, c12)
        store(c, cbase, row + S, col + 3 * S, M, N, c13)
        store(c, cbase, row + S, col + 64, M, N, c14)
        store(c, cbase, row + S, col + S + 64, M, N, c15)
        store(c, cbase, row + S, col + 2 * S + 64, M, N, c16)
        store(c, cbase, row + S, col + 3 * S + 64, M, N, c17)
        store(c, cbase, row + 2 * S, col, M, N, c20)
        store(c, cbase, row + 2 * S, col + S, M, N, c21)
        store(c, cbase, row + 2 * S, col + 2 * S, M, N, c22)
        store(c, cbase, row + 2 * S, col + 3 * S, M, N, c23)
        store(c, cbase, row + 2 * S, col + 64, M, N, c24)
        store(c, cbase, row + 2 * S, col + S + 64, M, N, c25)
        store(c, cbase, row + 2 * S, col + 2 * S + 64, M, N, c26)
        store(c, cbase, row + 2 * S, col + 3 * S + 64, M, N, c27)
        store(c, cbase, row + 3 * S, col, M, N, c30)
        store(c, cbase, row + 3 * S, col + S, M, N, c31)
        store(c, cbase, row + 3 * S, col + 2 * S, M, N, c32)
        store(c, cbase, row + 3 * S, col + 3 * S, M, N, c33)
        store(c, cbase, row + 3 * S, col + 64, M, N, c34)
        store(c, cbase, row + 3 * S, col + S + 64, M, N, c35)
        store(c, cbase, row + 3 * S, col + 2 * S + 64, M, N, c36)
        store(c, cbase, row + 3 * S, col + 3 * S + 64, M, N, c37)
        store(c, cbase, row + 64, col, M, N, c40)
        store(c, cbase, row + 64, col + S, M, N, c41)
        store(c, cbase, row + 64, col + 2 * S, M, N, c42)
        store(c, cbase, row + 64, col + 3 * S, M, N, c43)
        store(c, cbase, row + 64, col + 64, M, N, c44)
        store(c, cbase, row + 64, col + S + 64, M, N, c45)
        store(c, cbase, row + 64, col + 2 * S + 64, M, N, c46)
        store(c, cbase, row + 64, col + 3 * S + 64, M, N, c47)
        store(c, cbase, row + S + 64, col, M, N, c50)
        store(c, cbase, row + S + 64, col + S, M, N, c51)
        store(c, cbase, row + S + 64, col + 2 * S, M, N, c52)
        store(c, cbase, row + S + 64, col + 3 * S, M, N, c53)
        store(c, cbase, row + S + 64, col + 64, M, N, c54)
        store(c, cbase, row + S + 64, col + S + 64, M, N, c55)
        store(c, cbase, row + S + 64, col + 2 * S + 64, M, N, c56)
        store(c, cbase, row + S + 64, col + 3 * S + 64, M, N, c57)
        store(c, cbase, row + 2 * S + 64, col, M, N, c60)
        store(c, cbase, row + 2 * S + 64, col + S, M, N, c61)
        store(c, cbase, row + 2 * S + 64, col + 2 * S, M, N, c62)
        store(c, cbase, row + 2 * S + 64, col + 3 * S, M, N, c63)
        store(c, cbase, row + 2 * S + 64, col + 64, M, N, c64)
        store(c, cbase, row + 2 * S + 64, col + S + 64, M, N, c65)
        store(c, cbase, row + 2 * S + 64, col + 2 * S + 64, M, N, c66)
        store(c, cbase, row + 2 * S + 64, col + 3 * S + 64, M, N, c67)
        store(c, cbase, row + 3 * S + 64, col, M, N, c70)
        store(c, cbase, row + 3 * S + 64, col + S, M, N, c71)
        store(c, cbase, row + 3 * S + 64, col + 2 * S, M, N, c72)
        store(c, cbase, row + 3 * S + 64, col + 3 * S, M, N, c73)
        store(c, cbase, row + 3 * S + 64, col + 64, M, N, c74)
        store(c, cbase, row + 3 * S + 64, col + S + 64, M, N, c75)
        store(c, cbase, row + 3 * S + 64, col + 2 * S + 64, M, N, c76)
        store(c, cbase, row + 3 * S + 64, col + 3 * S + 64, M, N, c77)

    return gemm_simt


gemm_f32 = _make(pt.f32, "gemm_f32", 4, 1)


def launch_threads(m: int, n: int, batch: int = 1) -> tuple[int, int, int]:
    """The grid for a batch of M x N results."""
    return (-(-n // BN) * 256, -(-m // BM), batch)


def _examples(dtype):
    rng = np.random.default_rng(11)
    out = []
    # odd shapes (every edge), whole tiles over several k-tiles, a batch with a broadcast B (stride 0)
    for batch, m, n, k, bcast in ((1, 37, 53, 29, False), (1, 128, 128, 64, False), (3, 20, 130, 40, True)):
        a = rng.standard_normal((batch, m, k)).astype(dtype)
        b = rng.standard_normal((1 if bcast else batch, k, n)).astype(dtype)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        c = np.zeros((batch, m, n), dtype)
        args = (a.reshape(-1), b.reshape(-1), c.reshape(-1), m, n, k, m * k, 0 if bcast else k * n, m * n)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        rtol = float(ml_dtypes.finfo(dtype).eps) if dtype != np.float32 else 0.0
        out.append(Example(args=args, threads=launch_threads(m, n, batch),
                           expected={"c": exact.astype(np.float32).astype(dtype).reshape(-1)},
                           rtol=rtol, atol=float(np.finfo(np.float32).eps) * k * scale))
    return out


def example_gemm_f32(rng):
    return _examples(np.float32)
