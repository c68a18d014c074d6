"""Writes kernels/contraction/gemm_bf16_async.py: gemm_bf16_async.py's fragment code, unrolled.

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out. Edit it, not the kernel file, then run
`python tools/unroll/gemm_async.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes)."""
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/contraction/gemm_bf16_async.py"
HEAD = '''"""Tiled GEMM on tensor cores, fed by asynchronous copies: C[z] = A[z] @ B[z] for row-major A [M, K] and
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
'''

def acc_init():
    out = []
    for i in range(4):
        for j in range(4):
            out.append(f"        c{i}{j}_0, c{i}{j}_1, c{i}{j}_2, c{i}{j}_3 = zero, zero, zero, zero")
    return "\n".join(out) + "\n"

LOOP = '''        ntiles = (K + BK - 1) // BK
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
'''

def kstep():
    L = []
    ind = " " * 16
    for i in range(4):
        L.append(f"{ind}ra = arow + 16 * {i}")
        L.append(f"{ind}x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * 16 + ((achunk + 2 * s) ^ ((ra >> 1) & 3)) * 4)")
        for w in range(4):
            L.append(f"{ind}fa{i}{2*w} = lo(x{w})")
            L.append(f"{ind}fa{i}{2*w+1} = hi(x{w})")
    L.append(f"{ind}rb = bk + 16 * s")
    for p in range(2):
        L.append(f"{ind}y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * 64 + ((bchunk + 2 * {p}) ^ (rb & 7)) * 4)")
        for t, w in ((2 * p, 0), (2 * p + 1, 2)):
            L.append(f"{ind}fb{t}0 = lo(y{w})")
            L.append(f"{ind}fb{t}1 = hi(y{w})")
            L.append(f"{ind}fb{t}2 = lo(y{w+1})")
            L.append(f"{ind}fb{t}3 = hi(y{w+1})")
    for i in range(4):
        for j in range(4):
            a = ", ".join(f"fa{i}{e}" for e in range(8))
            b = ", ".join(f"fb{j}{e}" for e in range(4))
            c = ", ".join(f"c{i}{j}_{e}" for e in range(4))
            L.append(f"{ind}{c} = pt.mma_m16n8k16({a}, {b}, {c})")
    return "\n".join(L) + "\n"

EPI_HEAD = '''        pt.copy_async_wait(0)
        cbase = z * sc
        row0 = m0 + (warp // 4) * 64 + lane // 4
        col0 = n0 + (warp % 4) * 32 + 2 * (lane % 4)
'''

def epi():
    L = []
    for i in range(4):
        for j in range(4):
            L.append(f"        store2(c, cbase, row0 + {16*i}, col0 + {8*j}, M, N, c{i}{j}_0, c{i}{j}_1)")
            L.append(f"        store2(c, cbase, row0 + {16*i+8}, col0 + {8*j}, M, N, c{i}{j}_2, c{i}{j}_3)")
    return "\n".join(L) + "\n"

TAIL = '''
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
'''



def source() -> str:
    return HEAD + acc_init() + LOOP + kstep() + EPI_HEAD + epi() + TAIL


if __name__ == "__main__":
    TARGET.write_text(source())
