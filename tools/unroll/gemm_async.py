"""Writes kernels/contraction/gemm_bf16_async.py and gemm_bf16_async_wide.py: the tensor-core GEMM's fragment
code, unrolled, for two tile shapes (`COMMITTED`).

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out for a tile shape (`Tiles`: warps, each
warp's m16 x n8 tiles, k per tile, ring slots). Edit it, not the kernel file, then run
`python tools/unroll/gemm_async.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes).
`python tools/unroll/gemm_async.py --tiles 2,4,4,8,32,3 --out DIR` writes another shape's kernel file
into DIR instead (benchmarks/bench_gemm_tiles.py times such files side by side)."""
import argparse
from dataclasses import dataclass
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "kernels/contraction"


@dataclass(frozen=True)
class Tiles:
    warps_m: int = 2      # warps along M
    warps_n: int = 4      # warps along N
    mi: int = 4           # m16 tiles per warp
    nj: int = 4           # n8 tiles per warp (even: ldmatrix_x4_trans loads two)
    bk: int = 32          # k per tile (a multiple of 32)
    stages: int = 3       # ring slots
    group_m: int = 8      # row tiles per group of the tile raster (L2 reuse of B's columns)

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def bm(self) -> int:
        return 16 * self.mi * self.warps_m

    @property
    def bn(self) -> int:
        return 8 * self.nj * self.warps_n

    @property
    def shared_kib(self) -> float:
        return self.stages * (self.bm + self.bn) * self.bk * 2 / 1024

    @property
    def label(self) -> str:
        return (f"{self.bm}x{self.bn}x{self.bk}_s{self.stages}_w{self.warps_m}x{self.warps_n}"
                f"_g{self.group_m}")

    def check(self) -> None:
        ca, cb = self.bk // 8, self.bn // 8
        assert self.nj % 2 == 0 and self.bk % 32 == 0 and self.stages >= 2
        assert (self.bm * ca) % self.threads == 0 and (self.bk * cb) % self.threads == 0, self
        assert cb >= 8, "B's swizzle needs rows of at least 8 chunks"


DEFAULT = Tiles()
WIDE = Tiles(warps_m=2, warps_n=4, mi=4, nj=8, bk=64, stages=3)
COMMITTED = {"": DEFAULT, "_wide": WIDE}      # kernel-name suffix -> tile shape


def a_swizzle(tiles: Tiles, row: str, chunk: str) -> str:
    """The stored chunk of A's logical chunk `chunk` in row `row` (8 rows of an ldmatrix phase hit 8
    distinct 16-byte bank groups): rows of 4 chunks pair up in a 128-byte line, rows of 8 fill one."""
    if tiles.bk == 32:
        return f"({chunk} ^ (({row} >> 1) & 3))"
    return f"({chunk} ^ ({row} & 7))"


def head(t: Tiles, suffix: str = "") -> str:
    ca, cb = t.bk // 8, t.bn // 8
    return f'''"""Tiled GEMM on tensor cores, fed by asynchronous copies: C[z] = A[z] @ B[z] for row-major A [M, K] and
B [K, N] of bf16 (gemm_bf16_async{suffix}) or f16 (gemm_f16_async{suffix}), accumulated in f32 by warp-level m16n8k16
multiply-accumulates and rounded to the input dtype once. PTX sm_80 and newer only.

What it adds to gemm_bf16_tc.py (which stays for shapes this one refuses): the operands travel from global
to shared memory by 16-byte `pt.copy_async` (cp.async: no registers, no wait at the issuing thread) in a
ring of STAGES k-tiles, so the loads of the next tiles are in flight while the warps multiply this one;
and the fragments come out of shared memory by `pt.ldmatrix_x4` (A) and `pt.ldmatrix_x4_trans` (B kept
row-major, [k][n], as it arrives), one instruction per four 8x8 matrices instead of one load per word.

Layout. A workgroup of {t.threads} threads ({t.warps_m * t.warps_n} warps) computes one {t.bm} x {t.bn} tile of C; group x
numbers the tiles of one batch element, raster in groups of GROUP_M tile rows (the workgroups running at
once share B's columns in L2), group z picks the batch element (a, b, c start at z * sa, z * sb, z * sc
elements; a stride of 0 broadcasts an operand). The warps stand {t.warps_m} (rows) x {t.warps_n} (columns), each owning
{16 * t.mi} x {8 * t.nj} of C as {t.mi} x {t.nj} m16n8 tiles: {4 * t.mi * t.nj} f32 accumulators per lane, in PTX's C fragment layout.
K advances {t.bk} at a time; per 16 of k a warp loads B's fragments, then for each m16 tile A's and its
{t.nj} multiply-accumulates.

Shared memory, per stage: A as [{t.bm} rows][{ca} chunks] and B as [{t.bk} k][{cb} chunks], a chunk being 16 bytes (8
elements, 4 words); {t.stages} stages x {t.shared_kib / t.stages:g} KiB = {t.shared_kib:g} KiB (past 48 KiB the block is dynamic shared memory).
Chunks are stored XOR-swizzled so that each 8-lane phase of an ldmatrix reads 8 distinct 16-byte bank
groups: A's chunk c of row r at {a_swizzle(t, "r", "c")}, B's chunk c of k-row r at c ^ (r & 7).

Requirements (gpu_gemm.asset_for checks them, else gemm_bf16_tc runs): K, N, sa and sb multiples of 8,
so every 16-byte chunk of a row is aligned and lies wholly inside or outside the matrix; chunks outside
(rows past M, k past K, columns past N) are zero-filled by the copy itself. Launch: threads =
(tiles of M * tiles of N * {t.threads}, 1, batch), workgroup ({t.threads}, 1, 1) (`launch_threads`).

This file is written by tools/unroll/gemm_async.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BM = {t.bm}          # tile rows (M)
BN = {t.bn}          # tile columns (N)
BK = {t.bk}           # k per tile
STAGES = {t.stages}        # k-tiles in flight
THREADS = {t.threads}     # per workgroup
GROUP_M = {t.group_m}       # tile rows per raster group
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
        """Start the copies of k-tile k0 into ring slot `stage`: {t.bm * ca // t.threads} chunks of A and {t.bk * cb // t.threads} of B per thread."""
        for j in range({t.bm * ca // t.threads}):
            at = local + THREADS * pt.u32(j)
            row = at // {ca}
            ch = at % {ca}
            ok = m0 + row < M and k0 + ch * 8 < K
            src = (abase + (m0 + row) * K + k0 + ch * 8) // 2
            pt.copy_async(sa_, stage * A_WORDS + row * {ca * 4} + {a_swizzle(t, "row", "ch")} * 4, a32, src * pt.u32(ok), ok)
        for j in range({t.bk * cb // t.threads}):
            at = local + THREADS * pt.u32(j)
            kr = at // {cb}
            cb = at % {cb}
            okb = k0 + kr < K and n0 + cb * 8 < N
            srcb = (bbase + (k0 + kr) * N + n0 + cb * 8) // 2
            pt.copy_async(sb_, stage * B_WORDS + kr * {cb * 4} + (cb ^ (kr & 7)) * 4, b32, srcb * pt.u32(okb), okb)

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
        arow = (warp // {t.warps_n}) * {16 * t.mi} + r8 + 8 * (q % 2)       # + 16 i for m-tile i
        achunk = q // 2                                  # + 2 s for k-step s
        bk = r8 + 8 * (q % 2)                            # + 16 s
        bchunk = (warp % {t.warps_n}) * {t.nj} + q // 2                 # + 2 p for n-tile pair p
        zero = pt.f32(0.0)
'''


def acc_init(t: Tiles) -> str:
    out = []
    for i in range(t.mi):
        for j in range(t.nj):
            out.append(f"        c{i}_{j}_0, c{i}_{j}_1, c{i}_{j}_2, c{i}_{j}_3 = zero, zero, zero, zero")
    return "\n".join(out) + "\n"


def loop(t: Tiles) -> str:
    return f'''        ntiles = (K + BK - 1) // BK
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
            for s_ in range({t.bk // 16}):
                s = pt.u32(s_)
'''


def kstep(t: Tiles) -> str:
    L = []
    ind = " " * 16
    L.append(f"{ind}rb = bk + 16 * s")
    for p in range(t.nj // 2):
        L.append(f"{ind}y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, sb0 + rb * {t.bn // 2} + ((bchunk + 2 * {p}) ^ (rb & 7)) * 4)")
        for j, w in ((2 * p, 0), (2 * p + 1, 2)):
            L.append(f"{ind}fb{j}_0 = lo(y{w})")
            L.append(f"{ind}fb{j}_1 = hi(y{w})")
            L.append(f"{ind}fb{j}_2 = lo(y{w + 1})")
            L.append(f"{ind}fb{j}_3 = hi(y{w + 1})")
    for i in range(t.mi):
        L.append(f"{ind}ra = arow + {16 * i}")
        L.append(f"{ind}x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, sa0 + ra * {t.bk // 2} + "
                 f"{a_swizzle(t, 'ra', '(achunk + 2 * s)')} * 4)")
        for w in range(4):
            L.append(f"{ind}fa{2 * w} = lo(x{w})")
            L.append(f"{ind}fa{2 * w + 1} = hi(x{w})")
        for j in range(t.nj):
            a = ", ".join(f"fa{e}" for e in range(8))
            b = ", ".join(f"fb{j}_{e}" for e in range(4))
            c = ", ".join(f"c{i}_{j}_{e}" for e in range(4))
            L.append(f"{ind}{c} = pt.mma_m16n8k16({a}, {b}, {c})")
    return "\n".join(L) + "\n"


def epi(t: Tiles) -> str:
    L = ['''        pt.copy_async_wait(0)
        cbase = z * sc''',
         f"        row0 = m0 + (warp // {t.warps_n}) * {16 * t.mi} + lane // 4",
         f"        col0 = n0 + (warp % {t.warps_n}) * {8 * t.nj} + 2 * (lane % 4)"]
    for i in range(t.mi):
        for j in range(t.nj):
            L.append(f"        store2(c, cbase, row0 + {16 * i}, col0 + {8 * j}, M, N, c{i}_{j}_0, c{i}_{j}_1)")
            L.append(f"        store2(c, cbase, row0 + {16 * i + 8}, col0 + {8 * j}, M, N, c{i}_{j}_2, c{i}_{j}_3)")
    return "\n".join(L) + "\n"


def instances(suffix: str) -> str:
    return f'''
    return gemm_async


gemm_bf16_async{suffix} = _make(pt.bf16, "gemm_bf16_async{suffix}")
gemm_f16_async{suffix} = _make(pt.f16, "gemm_f16_async{suffix}")
'''


TAIL = '''

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


'''


def example_functions(suffix: str) -> str:
    return f'''

def example_gemm_bf16_async{suffix}(rng):
    return _examples(ml_dtypes.bfloat16)


def example_gemm_f16_async{suffix}(rng):
    return _examples(np.float16)
'''


def source(tiles: Tiles = DEFAULT, suffix: str = "") -> str:
    tiles.check()
    return (head(tiles, suffix) + acc_init(tiles) + loop(tiles) + kstep(tiles) + epi(tiles) + instances(suffix)
            + TAIL + example_functions(suffix))


def outputs() -> dict:
    """The committed kernel files and their text."""
    return {KERNELS / f"gemm_bf16_async{suffix}.py": source(tiles, suffix) for suffix, tiles in COMMITTED.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", help="warps_m,warps_n,mi,nj,bk,stages[,group_m]: write that shape's kernel as "
                    "gemm_async_<shape>.py (default: the committed kernel files)")
    ap.add_argument("--out", type=Path, help="the folder for --tiles (default: here)")
    args = ap.parse_args(argv)
    if args.tiles is None:
        for path, text in outputs().items():
            path.write_text(text)
            print(path)
        return
    tiles = Tiles(*map(int, args.tiles.split(",")))
    target = (args.out or Path(".")) / f"gemm_async_{tiles.label}.py"
    target.write_text(source(tiles))
    print(target)


if __name__ == "__main__":
    main()
