"""Writes kernels/contraction/gemm_bf16_async.py and gemm_bf16_async_wide.py: the tensor-core GEMM's fragment
code, unrolled, for two tile shapes (`COMMITTED`).

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out for a tile shape (`Tiles`: warps, each
warp's m16 x n8 tiles, k per tile, ring slots). Edit it, not the kernel file, then run
`python tools/unroll/gemm_async.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes).
`python tools/unroll/gemm_async.py --tiles 2,4,4,8,32,3 --out DIR` writes another shape's kernel file
into DIR instead (benchmarks/bench_kernel_tiles.py times such files side by side); the --tiles values are
`Tiles`' fields in order, the later ones optional (`2,4,4,8,64,3,8,0,0`: the rolled k loop, every copy
checked -- the earlier schedule, to time against)."""
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
    static: int = 1       # 1: the k loop unrolled by `stages`, each ring slot's offsets constants; 0: one rolled loop
    fast: int = 1         # 1: interior tiles (inside M and N, K a multiple of bk) copy and store unchecked

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
                f"_g{self.group_m}" + ("" if self.static else "_rolled") + ("" if self.fast else "_checked"))

    def check(self) -> None:
        ca, cb = self.bk // 8, self.bn // 8
        assert self.nj % 2 == 0 and self.bk % 32 == 0 and self.stages >= 2
        assert (self.bm * ca) % self.threads == 0 and (self.bk * cb) % self.threads == 0, self
        assert cb >= 8, "B's swizzle needs rows of at least 8 chunks"
        assert self.static in (0, 1) and self.fast in (0, 1)
        assert self.threads % ca == 0 and self.threads % cb == 0, "a thread's chunks share one column"


DEFAULT = Tiles()
WIDE = Tiles(warps_m=2, warps_n=4, mi=4, nj=8, bk=64, stages=3)
COMMITTED = {"": DEFAULT, "_wide": WIDE}      # kernel-name suffix -> tile shape


def a_swizzle(tiles: Tiles, row: str, chunk: str) -> str:
    """The stored chunk of A's logical chunk `chunk` in row `row` (8 rows of an ldmatrix phase hit 8
    distinct 16-byte bank groups): rows of 4 chunks pair up in a 128-byte line, rows of 8 fill one."""
    if tiles.bk == 32:
        return f"({chunk} ^ (({row} >> 1) & 3))"
    return f"({chunk} ^ ({row} & 7))"


def loop_doc(t: Tiles) -> str:
    """The kernel docstring's paragraph on the k loop and the stores, as `t` has them."""
    ring = ("The k loop takes STAGES k-tiles a pass, k-tile kt0 + s in ring slot s, so that every shared-memory\n"
            "offset of ldmatrix and cp.async is a per-thread base (computed once) + a constant; a pass stops at\n"
            "the last k-tile." if t.static else
            "The k loop takes one k-tile at a time, in ring slot kt % STAGES, at per-thread offsets computed once.")
    fast = ("\nA workgroup whose tile lies inside M and N, with K whole k-tiles (`interior`, the same in all its\n"
            "threads), copies without per-chunk checks from per-thread source offsets and stores without checks;\n"
            "the others check every chunk and every pair of results." if t.fast else "")
    return f"\n{ring}{fast}\n"


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
{loop_doc(t)}
Shared memory, per stage: A as [{t.bm} rows][{ca} chunks] and B as [{t.bk} k][{cb} chunks], a chunk being 16 bytes (8
elements, 4 words); {t.stages} stages x {t.shared_kib / t.stages:g} KiB = {t.shared_kib:g} KiB (past 48 KiB the block is dynamic shared memory).
Chunks are stored XOR-swizzled so that each 8-lane phase of an ldmatrix reads 8 distinct 16-byte bank
groups: A's chunk c of row r at {a_swizzle(t, "r", "c")}, B's chunk c of k-row r at c ^ (r & 7).

Requirements (gpu_gemm.asset_for checks them, else gemm_bf16_tc runs): K, N, sa and sb multiples of 8,
so every 16-byte chunk of a row is aligned and lies wholly inside or outside the matrix; chunks outside
(rows past M, k past K, columns past N) are zero-filled by the copy itself; sc even (M * N is), so each
lane's two adjacent results are one aligned 32-bit store. Launch: threads =
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
    def store2(c, half, row, col, M, N, v0, v1):
        """C[row, col] and C[row, col + 1], where inside C (col, N and the batch offset 2 * half even: both or
        neither inside, one aligned 32-bit store)."""
        if row < M and col < N:
            at = pt.u64(half + row * (N >> 1) + (col >> 1)) * 2
            c[at] = LOW(v0)
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

{issue_fast(t)}
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
{offsets(t)}        zero = pt.f32(0.0)
'''


def acc_init(t: Tiles) -> str:
    out = []
    for i in range(t.mi):
        for j in range(t.nj):
            out.append(f"        c{i}_{j}_0, c{i}_{j}_1, c{i}_{j}_2, c{i}_{j}_3 = zero, zero, zero, zero")
    return "\n".join(out) + "\n"


def issue_fast(t: Tiles) -> str:
    """The unchecked copies of an interior k-tile, from the per-thread bases (`offsets`): chunk j of A is
    THREADS / (chunks a row) rows below the first, and shares its swizzle where that step is a multiple of
    8 rows (its slot offset then the first's + a constant); the same for B."""
    ca, cb = t.bk // 8, t.bn // 8
    ra, rb = t.threads // ca, t.threads // cb
    L = ["    @pt.device_fn",
         "    def issue_fast(sa_, sb_, a32, b32, stage, kt, a_dst, b_dst, a_src, b_src, ka, kb, kbn):",
         '        """Start the copies of k-tile kt into ring slot `stage` where the whole tile lies inside A and B."""',
         "        a0 = a_src + kt * (BK // 2)"]
    for j in range(t.bm * ca // t.threads):
        row = f"(pt.local_index_x() // {ca} + {j * ra})"
        dst = (f"a_dst + {j * t.threads * 4}" if ra % 8 == 0 else
               f"{row} * {ca * 4} + {a_swizzle(t, row, f'(pt.local_index_x() % {ca})')} * 4")
        L.append(f"        pt.copy_async(sa_, stage * A_WORDS + {dst}, a32, a0 + ka * {j}, True)")
    L.append("        b0 = b_src + kt * kbn")
    for j in range(t.bk * cb // t.threads):
        row = f"(pt.local_index_x() // {cb} + {j * rb})"
        dst = (f"b_dst + {j * t.threads * 4}" if rb % 8 == 0 else
               f"{row} * {cb * 4} + ((pt.local_index_x() % {cb}) ^ ({row} & 7)) * 4")
        L.append(f"        pt.copy_async(sb_, stage * B_WORDS + {dst}, b32, b0 + kb * {j}, True)")
    return "\n".join(L) + "\n"


def offsets(t: Tiles) -> str:
    """Per-thread offsets, computed once: ldmatrix's within a ring slot (A's per 16 of k, B's per n-tile pair;
    the swizzle is the same for every m-tile and k-step, which add constants) and the copies' (`issue_fast`)."""
    ca, cb = t.bk // 8, t.bn // 8
    L = ["        # ldmatrix word offsets within a slot: A's at k-step s (+ m-tile i: a constant), B's of n-tile pair p"]
    for s_ in range(t.bk // 16):
        L.append(f"        ao{s_} = arow * {t.bk // 2} + {a_swizzle(t, 'arow', f'(achunk + {2 * s_})')} * 4")
    for p in range(t.nj // 2):
        L.append(f"        bo{p} = bk * {t.bn // 2} + ((bchunk + {2 * p}) ^ (bk & 7)) * 4")
    if t.fast:
        L += ["        # interior tiles (the whole tile inside M and N, K whole k-tiles) copy without checks, from",
              "        # this thread's first chunk of A (row crow, chunk cch) and of B (k-row krow, chunk kch)",
              "        interior = m0 + BM <= M and n0 + BN <= N and K % BK == 0",
              f"        crow = local // {ca}",
              f"        cch = local % {ca}",
              f"        a_dst = crow * {ca * 4} + {a_swizzle(t, 'crow', 'cch')} * 4",
              "        a_src = (abase + (m0 + crow) * K + cch * 8) >> 1",
              f"        ka = {t.threads // ca} * (K >> 1)",
              f"        krow = local // {cb}",
              f"        kch = local % {cb}",
              f"        b_dst = krow * {cb * 4} + (kch ^ (krow & 7)) * 4",
              "        b_src = (bbase + krow * N + n0 + kch * 8) >> 1",
              f"        kb = {t.threads // cb} * (N >> 1)",
              "        kbn = BK * (N >> 1)"]
    return "\n".join(L) + "\n"


def issue_tile(t: Tiles, ind: str, kt: str, stage: str) -> list:
    """Start k-tile `kt`'s copies into slot `stage` (past the last k-tile: zeros; nothing when interior)."""
    checked = f"issue(sa_, sb_, a32, b32, {stage}, {kt} * BK, local, m0, n0, abase, bbase, M, N, K)"
    if not t.fast:
        return [ind + checked]
    return [f"{ind}if interior:",
            f"{ind}    if {kt} < ntiles:",
            f"{ind}        issue_fast(sa_, sb_, a32, b32, {stage}, {kt}, a_dst, b_dst, a_src, b_src, ka, kb, kbn)",
            f"{ind}else:",
            f"{ind}    {checked}"]


def compute(t: Tiles, ind: str, abase: str, bbase: str) -> list:
    """The multiply-accumulates of one k-tile whose slot starts at word `abase` of A's ring, `bbase` of B's."""
    L = []
    for s_ in range(t.bk // 16):
        for p in range(t.nj // 2):
            L.append(f"{ind}y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sb_, {bbase} + bo{p} + {16 * s_ * t.bn // 2})")
            for j, w in ((2 * p, 0), (2 * p + 1, 2)):
                L.append(f"{ind}fb{j}_0 = lo(y{w})")
                L.append(f"{ind}fb{j}_1 = hi(y{w})")
                L.append(f"{ind}fb{j}_2 = lo(y{w + 1})")
                L.append(f"{ind}fb{j}_3 = hi(y{w + 1})")
        for i in range(t.mi):
            L.append(f"{ind}x0, x1, x2, x3 = pt.ldmatrix_x4(sa_, {abase} + ao{s_} + {16 * i * t.bk // 2})")
            for w in range(4):
                L.append(f"{ind}fa{2 * w} = lo(x{w})")
                L.append(f"{ind}fa{2 * w + 1} = hi(x{w})")
            for j in range(t.nj):
                a = ", ".join(f"fa{e}" for e in range(8))
                b = ", ".join(f"fb{j}_{e}" for e in range(4))
                c = ", ".join(f"c{i}_{j}_{e}" for e in range(4))
                L.append(f"{ind}{c} = pt.mma_m16n8k16({a}, {b}, {c})")
    return L


def ktile(t: Tiles, ind: str, kt: str, slot) -> list:
    """One k-tile: wait for its copies, start those of the tile STAGES - 1 on (into the slot the previous
    tile read), multiply. `slot` an int: this tile's slot, a constant; None: kt % STAGES."""
    nxt_stage = f"pt.u32({(slot + t.stages - 1) % t.stages})" if slot is not None else "nxt % STAGES"
    L = [f"{ind}pt.copy_async_wait(STAGES - 2)",
         f"{ind}pt.workgroup_barrier()",
         f"{ind}nxt = {kt} + STAGES - 1"]
    L += issue_tile(t, ind, "nxt", nxt_stage)
    L.append(f"{ind}pt.copy_async_commit()")
    if slot is None:
        L += [f"{ind}sa0 = ({kt} % STAGES) * A_WORDS", f"{ind}sb0 = ({kt} % STAGES) * B_WORDS"]
        return L + compute(t, ind, "sa0", "sb0")
    return L + compute(t, ind, str(slot * t.bm * t.bk // 2), str(slot * t.bk * t.bn // 2))


def loop(t: Tiles) -> str:
    L = ["        ntiles = (K + BK - 1) // BK"]
    for s0 in range(t.stages - 1):
        L += issue_tile(t, "        ", f"pt.u32({s0})", f"pt.u32({s0})")
        L.append("        pt.copy_async_commit()")
    if t.static:
        L += ["        # STAGES k-tiles a pass, k-tile kt0 + s in slot s: every shared-memory offset is a constant",
              "        for kq in range((ntiles + STAGES - 1) // STAGES):",
              "            kt0 = kq * STAGES"]
        L += ktile(t, " " * 12, "kt0", 0)
        for slot in range(1, t.stages):
            L.append(f"            if kt0 + {slot} < ntiles:")
            L += ktile(t, " " * 16, f"(kt0 + {slot})", slot)
    else:
        L.append("        for kt in range(ntiles):")
        L += ktile(t, " " * 12, "kt", None)
    return "\n".join(L) + "\n"


def epi(t: Tiles) -> str:
    """Each lane's two adjacent columns of an m16n8 tile as one 32-bit store; in an interior tile (`fast`)
    unchecked, from one 64-bit element index per row (the n-tiles at constant offsets), else per pair checked."""
    L = ["        pt.copy_async_wait(0)",
         "        half = z * (sc >> 1)",
         f"        row0 = m0 + (warp // {t.warps_n}) * {16 * t.mi} + lane // 4",
         f"        col0 = n0 + (warp % {t.warps_n}) * {8 * t.nj} + 2 * (lane % 4)"]
    ind = "        "
    if t.fast:
        L += ["        if m0 + BM <= M and n0 + BN <= N:",
              "            at0 = pt.u64(half + row0 * (N >> 1) + (col0 >> 1)) * 2",
              "            rows8 = pt.u64(N) * 8"]
        for i in range(t.mi):
            for h in range(2):
                L.append(f"            at = at0 + rows8 * {2 * i + h}")
                for j in range(t.nj):
                    L.append(f"            c[at + {8 * j}] = LOW(c{i}_{j}_{2 * h})")
                    L.append(f"            c[at + {8 * j + 1}] = LOW(c{i}_{j}_{2 * h + 1})")
        L.append("        else:")
        ind = "            "
    for i in range(t.mi):
        for j in range(t.nj):
            L.append(f"{ind}store2(c, half, row0 + {16 * i}, col0 + {8 * j}, M, N, c{i}_{j}_0, c{i}_{j}_1)")
            L.append(f"{ind}store2(c, half, row0 + {16 * i + 8}, col0 + {8 * j}, M, N, c{i}_{j}_2, c{i}_{j}_3)")
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
    return (head(tiles, suffix) + acc_init(tiles) + loop(tiles) + epi(tiles) + instances(suffix)
            + TAIL + example_functions(suffix))


def outputs() -> dict:
    """The committed kernel files and their text."""
    return {KERNELS / f"gemm_bf16_async{suffix}.py": source(tiles, suffix) for suffix, tiles in COMMITTED.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", help="warps_m,warps_n,mi,nj,bk,stages[,group_m[,static[,fast]]]: write that shape's kernel as "
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
