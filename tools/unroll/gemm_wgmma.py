"""Writes kernels/contraction/gemm_bf16_wgmma.py: the Hopper GEMM, whose 64 accumulators a thread are named
locals (the kernel language has no register arrays), spelled out here.

Edit this script, not the kernel file, then run `python tools/unroll/gemm_wgmma.py` and
`poot regen-kernel-assets` (tests/jit/test_kernel_unroll.py checks the kernel file is what this script
writes). `--bn 256 --stages 4 --out DIR` writes the kernel with 128 x 256 tiles (128 accumulators a thread,
one workgroup a core) and a deeper ring into DIR instead, to time side by side: on an H100 it was 2 to 15%
slower than the committed 128 x 128 tiles on every shape timed (4096^3, 8192^3, 32 x 1024x128x1024)."""
import argparse
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "kernels/contraction"

HEAD = '''"""Tiled GEMM on Hopper's tensor cores: C[z] = A[z] @ B[z] for row-major A [M, K] and B [K, N] of bf16
(gemm_bf16_wgmma) or f16 (gemm_f16_wgmma), accumulated in f32 by warpgroup products
(`pt.wgmma_m64n{bn}k64`, PTX wgmma.mma_async) and rounded to the input dtype once. PTX sm_90a only.

What it changes from gemm_bf16_async_wide.py (the sm_80 kernel, which stays for other GPUs): the tensor
cores read both operands straight from shared memory, so no thread loads fragments, and one instruction
sequence multiplies a warpgroup's 64 x {bn} by 64 of k.{why}

Layout. A workgroup of 256 threads (two warpgroups) computes one 128 x {bn} tile of C; group x numbers
the tiles of one batch element, raster in groups of GROUP_M tile rows (the workgroups running at once
share B's columns in L2), group z picks the batch element (a, b, c start at z * sa, z * sb, z * sc
elements; a stride of 0 broadcasts an operand). Warpgroup g owns rows 64 g .. 64 g + 63 of the tile: {acc}
f32 accumulators a thread, in wgmma's fragment layout (poot/kernel/warpgroup.py).

The operands travel by 16-byte `pt.copy_async` into a ring of STAGES k-tiles of 64, in the product's
layout: lines of 128 bytes, chunk c of line r at chunk c ^ (r % 8). A k-tile of A is 128 lines (row m of
the tile: line m); of B {bn} lines (columns 64 j .. 64 j + 63 of k-row k: line 64 j + k). Per k-tile:
wait for its copies, fence them for the tensor cores, barrier, start the copies of the k-tile STAGES - 1
ahead into the slot the last product read, multiply.

A workgroup whose tile lies inside M and N, with K whole k-tiles (`interior`, the same in all its
threads), copies without per-chunk checks and stores its tile through shared memory, 16 bytes of a row a
thread a store; the others check every chunk and store every pair of results where it lies inside.

Requirements (gpu_gemm.asset_for checks them): K, N, sa and sb multiples of 8, so every 16-byte chunk of a
row is aligned and lies wholly inside or outside the matrix (chunks outside are zero-filled by the copy);
sc even. Launch: threads = (tiles of M * tiles of N * 256, 1, batch), workgroup (256, 1, 1)
(`launch_threads`).

This file is written by tools/unroll/gemm_wgmma.py (the accumulators are unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = 128          # tile rows (M)
BN = {bn}          # tile columns (N)
BK = 64           # k per tile
STAGES = {stages}        # k-tiles in flight
THREADS = 256     # per workgroup
GROUP_M = 8       # tile rows per raster group
A_WORDS = BM * BK // 2    # words of one slot of A
B_WORDS = BK * BN // 2    # words of one slot of B


def _make(LOW, name):
    @pt.device_fn
    def lo(w):
        return pt.bitcast(pt.u16(w & 0xFFFF), LOW)

    @pt.device_fn
    def hi(w):
        return pt.bitcast(pt.u16(w >> 16), LOW)

    @pt.device_fn
    def pair(v0, v1):
        """v0 and v1 rounded to LOW, as one word (v0 in the low half)."""
        return pt.u32(pt.bitcast(LOW(v0), pt.u16)) | (pt.u32(pt.bitcast(LOW(v1), pt.u16)) << 16)

    @pt.device_fn
    def store2(c, half, row, col, M, N, v0, v1):
        """C[row, col] and C[row, col + 1], where inside C (col, N and the batch offset 2 * half even: both or
        neither inside)."""
        if row < M and col < N:
            at = pt.u64(half + row * (N >> 1) + (col >> 1)) * 2
            c[at] = LOW(v0)
            c[at + 1] = LOW(v1)

    @pt.device_fn
    def issue(sa_, sb_, a32, b32, slot, k0, local, m0, n0, abase, bbase, M, N, K):
        """Start the copies of the k-tile at k0 into ring slot `slot`: 4 chunks of A and {bch} of B a thread."""
        for j in range(4):
            at = local + THREADS * pt.u32(j)
            row = at // 8
            ch = at % 8
            ok = m0 + row < M and k0 + ch * 8 < K
            src = (abase + (m0 + row) * K + k0 + ch * 8) // 2
            pt.copy_async(sa_, slot * A_WORDS + row * 32 + (ch ^ (row & 7)) * 4, a32, src * pt.u32(ok), ok)
        for j in range({bch}):
            at = local + THREADS * pt.u32(j)
            kr = at // {cpr}
            cb = at % {cpr}
            line = (cb // 8) * BK + kr
            okb = k0 + kr < K and n0 + cb * 8 < N
            srcb = (bbase + (k0 + kr) * N + n0 + cb * 8) // 2
            pt.copy_async(sb_, slot * B_WORDS + line * 32 + ((cb % 8) ^ (kr & 7)) * 4, b32, srcb * pt.u32(okb),
                          okb)

    @pt.device_fn
    def issue_fast(sa_, sb_, a32, b32, slot, kt, a_dst, b_dst, a_src, b_src, ka, kb, kbn):
        """Start the copies of k-tile kt into ring slot `slot` where the whole tile lies inside A and B."""
        a0 = a_src + kt * (BK // 2)
{issue_fast}

    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def gemm_wgmma(a32: pt.In[pt.u32], b32: pt.In[pt.u32], c: pt.Out[LOW],
                   M: pt.u32, N: pt.u32, K: pt.u32, sa: pt.u32, sb: pt.u32, sc: pt.u32):
        sa_ = pt.shared(pt.u32, STAGES * A_WORDS)
        sb_ = pt.shared(pt.u32, STAGES * B_WORDS)
        local = pt.local_index_x()
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
        wg_a = (local // 128) * (A_WORDS // 2)      # this warpgroup's 64 lines of A in a slot
        # interior tiles copy without checks from this thread's first chunk of A (row crow, chunk cch) and
        # of B (k-row krow, chunk kch: line (kch // 8) * BK + krow)
        interior = m0 + BM <= M and n0 + BN <= N and K % BK == 0
        crow = local // 8
        cch = local % 8
        a_dst = crow * 32 + (cch ^ (crow & 7)) * 4
        a_src = (abase + (m0 + crow) * K + cch * 8) >> 1
        ka = 32 * (K >> 1)
        krow = local // {cpr}
        kch = local % {cpr}
        b_dst = ((kch // 8) * BK + krow) * 32 + ((kch % 8) ^ (krow & 7)) * 4
        b_src = (bbase + krow * N + n0 + kch * 8) >> 1
        kb = {rps} * (N >> 1)
        kbn = BK * (N >> 1)
        zero = pt.f32(0.0)
{zeros}
        ntiles = (K + BK - 1) // BK
        for s in range(STAGES - 1):
            if interior:
                if pt.u32(s) < ntiles:
                    issue_fast(sa_, sb_, a32, b32, pt.u32(s), pt.u32(s), a_dst, b_dst, a_src, b_src, ka, kb, kbn)
            else:
                issue(sa_, sb_, a32, b32, pt.u32(s), pt.u32(s) * BK, local, m0, n0, abase, bbase, M, N, K)
            pt.copy_async_commit()
        for kt in range(ntiles):
            pt.copy_async_wait(STAGES - 2)
            pt.fence_proxy_async()
            pt.workgroup_barrier()
            nxt = kt + STAGES - 1
            slot_n = nxt % STAGES
            if interior:
                if nxt < ntiles:
                    issue_fast(sa_, sb_, a32, b32, slot_n, nxt, a_dst, b_dst, a_src, b_src, ka, kb, kbn)
            else:
                issue(sa_, sb_, a32, b32, slot_n, nxt * BK, local, m0, n0, abase, bbase, M, N, K)
            pt.copy_async_commit()
            slot = kt % STAGES
{product}
        pt.copy_async_wait(0)
        # each thread's results: rows row0 (+ 8) and columns col0 + 8 j (+ 1)
        t = local % 128
        r0 = (local // 128) * 64 + 16 * (t // 32) + (t % 32) // 4
        row0 = m0 + r0
        col0 = n0 + 2 * (t % 4)
        if interior:
            # staged through shared memory (the ring, free once every product is done) so that each store
            # is 16 bytes of a row: row r's 16-byte chunk q at chunk q ^ (r % 8), conflict-free both ways
            pt.workgroup_barrier()
            at0 = r0 * (BN // 2) + t % 4
            sw = r0 % 8
{stage}
            pt.workgroup_barrier()
            for s in range(BM * BN // 8 // THREADS):
                q = local + THREADS * pt.u32(s)
                r = q // (BN // 8)
                cq = q % (BN // 8)
                w0, w1, w2, w3 = pt.load_x4(sa_, r * (BN // 2) + (cq ^ (r % 8)) * 4)
                at = pt.u64((z * sc + (m0 + r) * N + n0 + cq * 8) >> 3) * 8
                c[at] = lo(w0)
                c[at + 1] = hi(w0)
                c[at + 2] = lo(w1)
                c[at + 3] = hi(w1)
                c[at + 4] = lo(w2)
                c[at + 5] = hi(w2)
                c[at + 6] = lo(w3)
                c[at + 7] = hi(w3)
        else:
            half = z * (sc >> 1)
{store_checked}

    return gemm_wgmma


gemm_bf16_wgmma = _make(pt.bf16, "gemm_bf16_wgmma")
gemm_f16_wgmma = _make(pt.f16, "gemm_f16_wgmma")


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
    rng = np.random.default_rng(12)
    out = []
    # edges in M, N and K (zero-filled chunks), one interior tile over more k-tiles than ring slots, and a
    # batch with a broadcast B (stride 0) of interior tiles off the origin
    for batch, m, n, k, bcast in ((1, 37, 56, 40, False), (1, BM, BN, (STAGES + 1) * BK, False),
                                  (2, 2 * BM, BN + 8, BK, True)):
        a = rng.standard_normal((batch, m, k)).astype(low)
        b = rng.standard_normal((1 if bcast else batch, k, n)).astype(low)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        ref = exact.astype(np.float32).astype(low)
        c = np.zeros((batch, m, n), low)
        args = (words(a), words(b), c.reshape(-1), m, n, k, m * k, 0 if bcast else k * n, m * n)
        scale = float(np.abs(a.astype(np.float32)).max() * np.abs(b.astype(np.float32)).max())
        out.append(Example(args=args, threads=launch_threads(m, n, batch), expected={{"c": ref.reshape(-1)}},
                           rtol=float(ml_dtypes.finfo(low).eps), atol=float(np.finfo(np.float32).eps) * k * scale))
    return out


def example_gemm_bf16_wgmma(rng):
    return _examples(ml_dtypes.bfloat16)


def example_gemm_f16_wgmma(rng):
    return _examples(np.float16)
'''


def _acc(i: int) -> str:
    return f"c{i}"


WHY = {128: ("\nA tile of 128 x 128 takes 64 accumulators a thread and 96 KiB of shared memory, so two workgroups "
              "run on\na core at once and one's copies and stores overlap the other's products."), 256: ""}


def render(bn: int, stages: int) -> str:
    acc = bn // 2
    cpr = bn // 8                 # 16-byte chunks of a row of B's tile
    bch = 64 * cpr // 256         # chunks of B a thread copies per k-tile
    rps = 256 // cpr              # k-rows of B between one thread's chunks
    pad8 = " " * 8
    fast = [f"{pad8}pt.copy_async(sa_, slot * A_WORDS + a_dst + {1024 * j}, a32, a0 + ka * {j}, True)"
            for j in range(4)]
    fast.append(f"{pad8}b0 = b_src + kt * kbn")
    fast += [f"{pad8}pt.copy_async(sb_, slot * B_WORDS + b_dst + {32 * rps * j}, b32, b0 + kb * {j}, True)"
             for j in range(bch)]
    zeros = [f"{pad8}" + ", ".join(_acc(i) for i in range(r, r + 8)) + " = " + ", ".join(["zero"] * 8)
             for r in range(0, acc, 8)]
    accs = ", ".join(_acc(i) for i in range(acc))
    product = [f"{' ' * 12}{accs} = pt.wgmma_m64n{bn}k64(LOW, sa_, slot * A_WORDS + wg_a, sb_, slot * B_WORDS, "
               f"{accs})"]
    stage, store_checked = [], []
    for j in range(acc // 4):
        for r, base in ((0, "at0"), (2, "at0 + 4 * BN")):
            stage.append(f"{' ' * 12}sa_[{base} + ({j} ^ sw) * 4] = pair({_acc(4 * j + r)}, "
                         f"{_acc(4 * j + r + 1)})")
            row = "row0" if r == 0 else "row0 + 8"
            store_checked.append(f"{' ' * 12}store2(c, half, {row}, col0 + {8 * j}, M, N, {_acc(4 * j + r)}, "
                                 f"{_acc(4 * j + r + 1)})")
    return HEAD.format(stages=stages, bn=bn, acc=acc, cpr=cpr, bch=bch, rps=rps, why=WHY[bn],
                       issue_fast="\n".join(fast), zeros="\n".join(zeros),
                       product="\n".join(product), stage="\n".join(stage),
                       store_checked="\n".join(store_checked))


COMMITTED = {"gemm_bf16_wgmma.py": (128, 3)}    # file: (BN, STAGES)


def outputs() -> dict:
    """The committed kernel files and their text."""
    return {KERNELS / name: render(bn, stages) for name, (bn, stages) in COMMITTED.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bn", type=int, choices=(128, 256), help="tile columns (default: the committed kernel's)")
    p.add_argument("--stages", type=int, help="ring slots (default: the committed kernel's)")
    p.add_argument("--out", type=Path, help="write into this folder instead of kernels/contraction")
    args = p.parse_args()
    for name, (bn, stages) in COMMITTED.items():
        (args.out or KERNELS).joinpath(name).write_text(render(args.bn or bn, args.stages or stages))


if __name__ == "__main__":
    main()
