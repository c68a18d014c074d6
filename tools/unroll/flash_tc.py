"""Writes kernels/attention/flash_tc.py and flash_wg.py: their fragment code for head dims 64 and 128, unrolled.

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out. Edit it, not the kernel file, then run
`python tools/unroll/flash_tc.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel files are what this script writes). flash_wg.py is the
same kernel with its scores S = Q K^T taken by Hopper's warpgroup products (`Tiles.wg`)."""
import argparse
from dataclasses import dataclass
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/attention/flash_tc.py"
TARGET_WG = TARGET.with_name("flash_wg.py")
@dataclass(frozen=True)
class Tiles:
    mq: int = 1           # m16 query tiles per warp
    bkv: int = 64         # keys per tile (a multiple of 16)
    qregs: int = 1        # 1: Q's fragments stay in registers for the whole row; 0: read again per key tile
    ring: int = 1         # 1: D = 128's key loop unrolled by the ring's two slots (slot offsets are immediates;
                          # D = 64 stays rolled: unrolled, it spills at the 168 registers ptxas gives it); 0: rolled
    lazy: int = 0         # 1: O rescaled only where a row's maximum moved (a branch); 0: always
    last: int = 1         # 1: workgroup x takes the x-th query block from the end (causal rows' longest first); 0: x-th
    band: int = 1         # 1: a tile cut by the band alone (no mask, no softcap) gets selects, not the general scores
    wg: int = 0           # 1: S = Q K^T by warpgroup products from shared memory (sm_90a; one m-tile a warp)

    @property
    def bq(self) -> int:
        return 64 * self.mq

    def shared_kib(self, hd: int) -> float:
        return (self.bq + 4 * self.bkv) * hd * 2 / 1024

    @property
    def label(self) -> str:
        return (f"q{self.bq}_kv{self.bkv}" + ("" if self.qregs else "_qsmem") + ("" if self.ring else "_rolled")
                + ("_lazy" if self.lazy else "") + ("" if self.last else "_first") + ("" if self.band else "_scored")
                + ("_wg" if self.wg else ""))

    @property
    def kind(self) -> str:
        return "wg" if self.wg else "tc"





DEFAULT = Tiles()
WG = Tiles(ring=0, wg=1)     # the warpgroup form: slot offsets are one add each, so the key loop stays rolled


def head(t: Tiles) -> str:
    bq, kib = t.bq, t.shared_kib
    ring = (""" At D = 128 the key loop is unrolled by the ring's two slots, so that
every ldmatrix address is one of a few per-thread offsets (computed before the loop) plus an immediate.""" if t.ring else "")
    pad = " " * (14 - len(str(bq)))
    wg = ("""

This is flash_tc.py (the sm_80 kernel) with the scores taken by Hopper's warpgroup products: per key tile,
`pt.wgmma_m64n64k64_bt` over each 64 of the head dim multiplies Q and K straight from shared memory (no Q or
K fragments in registers), and its result is the m16n8 accumulator layout the rest of the tile works on.
Q and K are therefore stored in blocks of 64 head dims (a block: one 128-byte line a row); V as before.
PTX sm_90a only: the planner takes it on sm_90 GPUs (H100, H200), where it is about 5% faster than
flash_tc.py.""" if t.wg else "")
    pick = ("see below" if t.wg else "poot/jit/codegen/attention.py picks it where it applies")
    first = ("Flash attention prefill on Hopper's tensor cores (PTX sm_90a)" if t.wg else
             "Flash attention prefill on tensor cores (PTX sm_80 and newer)")
    return f'''"""{first}, for 16-bit q, k, v with head dims 64 and 128.

Same operands, scalars and semantics as attention_prefill_<T> in flash_gpu.py (masks, windows, softcap,
GQA, zero_empty), except that D == Dv == the kernel's head dim and q, k, v arrive as 32-bit word views of
the 16-bit arrays (attention_{t.kind}_<T>_d<D>; {pick}).{wg}

A workgroup of 128 threads (4 warps) owns BQ = {bq} queries of one (batch, head) row, {16 * t.mq} per warp. The
keys go BKV = {t.bkv} at a time through a two-slot ring in shared memory, filled by 16-byte `pt.copy_async`
(the next tile's K and V are in flight while the warps work on this one; rows past the visible keys are
zero-filled and their scores masked). Per tile, each warp computes its {16 * t.mq} x {t.bkv} scores S = Q K^T with
m16n8k16 multiply-accumulates (Q's fragments stay in registers for the whole row; K's come by
`pt.ldmatrix_x4`), applies scale, softcap, mask and visibility (none of it on a tile every query of the
workgroup sees whole, without mask or softcap: there the scale rides in the exponentials' multiply-add),
updates the running row maximum and sum (the online softmax, in log2 units: P = 2 ** (S * scale * log2(e)
- m), one multiply-add and one ex2 an element; a row is held by the 4 lanes of a quad, which exchange
maxima by `pt.shuffle_xor`), rounds P to the input dtype (bf16 by adding half an ulp to the bits) and
accumulates O += P V with V's fragments by `pt.ldmatrix_x4_trans`. P never leaves registers: the
accumulator layout of S is the A-fragment layout of P V (the usual FlashAttention-2 arrangement). No
L x L buffer, and no f32 accumulator in shared memory. A key tile whose rows all exist is copied without
per-row checks.{ring}

Shared memory: Q as [{bq}][D] plus two slots of K and V as [{t.bkv}][D], rows of D / 8 16-byte chunks stored
XOR-swizzled (chunk c of row r at c ^ (r & 7)) so that each 8-lane phase of an ldmatrix reads 8
distinct bank groups: {kib(128):g} KiB at D = 128, {kib(64):g} KiB at D = 64 (past 48 KiB the block is dynamic
shared memory).
Launch: threads = (ceil(Lq / {bq}) * 128, B * Hq, 1), workgroup (128, 1, 1).

This file is written by tools/unroll/flash_tc.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BQ = {bq}{pad}# queries per workgroup ({16 * t.mq} per warp)
BKV = {t.bkv}          # keys per tile
NEG_INF = float("-inf")
UNBOUNDED = 1 << 30
LOG2E = 1.4426950408889634   # exp(x) = 2 ** (x * LOG2E): the exponentials are pt.fast_exp2


@pt.device_fn
def key_lo(q_first, left):
    """The first key query `q_first` may see (window's left edge, clamped at 0)."""
    return pt.u32(max(pt.i32(q_first) - left, 0))


@pt.device_fn
def key_hi(q_last, right, Lk):
    """One past the last key query `q_last` may see (window's right edge, clamped to Lk)."""
    return pt.u32(min(max(pt.i32(q_last) + right + 1, 0), pt.i32(Lk)))


@pt.device_fn
def score(x, qi, kj, hi, left, right, mask, has_mask, at, softcap):
    """The logit of query qi against key kj: softcapped, plus the mask, -inf where not visible."""
    rel = pt.i32(kj) - pt.i32(qi)
    r = pt.f32(NEG_INF)
    if kj < hi and rel >= -left and rel <= right:
        r = x
        if softcap > 0.0:
            r = softcap * pt.tanh(x / softcap)
        if has_mask != 0:
            r = r + mask[at]
    return r


@pt.device_fn
def quad_max(x):
    """The maximum over the 4 lanes of this lane's quad (one row of the fragments)."""
    x = max(x, pt.shuffle_xor(x, 1))
    return max(x, pt.shuffle_xor(x, 2))


@pt.device_fn
def quad_sum(x):
    x = x + pt.shuffle_xor(x, 1)
    return x + pt.shuffle_xor(x, 2)


@pt.device_fn
def offset(m):
    """What exp() subtracts for a row whose maximum is m (0 while the row has seen nothing)."""
    r = m
    if m == NEG_INF:
        r = pt.f32(0.0)
    return r


@pt.device_fn
def normalizer(total, zero_empty):
    """1 / total, or 0 for a query that saw no key when zero_empty (else 0 * inf: NaN)."""
    inv = 1.0 / total
    if total == 0.0 and zero_empty != 0:
        inv = 0.0
    return inv
'''


def make(HD, t: Tiles = DEFAULT):
    CH = HD // 8          # 16-byte chunks per row
    KC = HD // 16         # k16 chunks of the head dim
    NT = HD // 8          # n8 tiles of the output
    RW = HD // 2          # words per row
    MQ = t.mq             # m16 query tiles per warp
    BQ, BKV = t.bq, t.bkv
    SJ = BKV // 8         # n8 key tiles of a score tile
    assert not t.wg or (MQ == 1 and BKV == 64 and t.qregs), "the warpgroup form: one m16 tile a warp, 64 keys a tile"
    L = []
    a = L.append

    def kq_at(r, c, rows):
        """The word of row r's 16-byte chunk c in Q's or K's layout (`rows` rows): rows of D / 8 chunks, chunk
        c of row r at c ^ (r & 7); for the warpgroup form, blocks of 64 head dims (rows of 128 bytes)."""
        if not t.wg:
            return f"{r} * {RW} + ({c} ^ ({r} & 7)) * 4"
        blk = f"({c}) // 8 * {rows * 32} + " if CH > 8 else ""
        return f"{blk}{r} * 32 + (({c}) % 8 ^ ({r} & 7)) * 4"

    k_row_words = 32 if t.wg else RW         # K's words from one row to the next within a block
    a("")
    a("")
    a(f"def _make_d{HD}(T, name):")
    a("    @pt.device_fn")
    a("    def lo(w):")
    a("        return pt.bitcast(pt.u16(w & 0xFFFF), T)")
    a("")
    a("    @pt.device_fn")
    a("    def hi(w):")
    a("        return pt.bitcast(pt.u16(w >> 16), T)")
    a("")
    a("    if T is pt.bf16:")
    a("        @pt.device_fn")
    a("        def to_t(x):")
    a('            """An element of P (0 <= x <= 1, or NaN) as bf16: half an ulp added to the bits, then truncated')
    a('            (round to nearest, ties away from zero): two integer operations, no NaN or tie handling."""')
    a("            return pt.bitcast(pt.u16((pt.bitcast(x, pt.u32) + 0x8000) >> 16), T)")
    a("    else:")
    a("        to_t = T")
    a("")
    a("    @pt.device_fn")
    a("    def store2(o, row, col, v0, v1, inv):")
    a("        o[row + col] = T(v0 * inv)")
    a("        o[row + col + 1] = T(v1 * inv)")
    a("")
    a("    @pt.device_fn")
    a("    def issue_kv(sk, sv, k32, v32, slot, k0, hi_, local, kbase):")
    a(f'        """Start the copies of keys k0 .. k0 + {BKV - 1} (K and V) into ring slot `slot` (zeros past hi_)."""')
    # thread `local` copies chunk local % CH of rows local // CH + j * (128 / CH): one swizzle for all of them
    a(f"        if k0 + {BKV} <= hi_:            # every row a key: no checks, word offsets step by constants")
    a(f"            src = kbase // 2 + (k0 + local // {CH}) * {RW} + local % {CH} * 4")
    a(f"            dst = slot * {BKV * RW} + local // {CH} * {RW} + (local % {CH} ^ (local // {CH} & 7)) * 4")
    if t.wg:
        a(f"            dstk = slot * {BKV * RW} + {kq_at(f'(local // {CH})', f'local % {CH}', BKV)}")
    kd = "dstk" if t.wg else "dst"
    a(f"            for j in range({BKV * CH // 128}):")
    a(f"                pt.copy_async(sk, {kd} + {128 // CH * k_row_words} * pt.u32(j), k32, src + {128 // CH * RW} * pt.u32(j), True)")
    a(f"                pt.copy_async(sv, dst + {128 // CH * RW} * pt.u32(j), v32, src + {128 // CH * RW} * pt.u32(j), True)")
    a("        else:")
    a(f"            for j in range({BKV * CH // 128}):")           # a key tile's chunks over 128 threads
    a("                at = local + 128 * pt.u32(j)")
    a(f"                r = at // {CH}")
    a(f"                c = at % {CH}")
    a("                ok = k0 + r < hi_")
    a(f"                src = (kbase + (k0 + r) * {HD} + c * 8) // 2 * pt.u32(ok)")
    a(f"                dst = slot * {BKV * RW} + r * {RW} + (c ^ (r & 7)) * 4")
    a(f"                pt.copy_async(sk, slot * {BKV * RW} + {kq_at('r', 'c', BKV)}, k32, src, ok)" if t.wg else
      "                pt.copy_async(sk, dst, k32, src, ok)")
    a("                pt.copy_async(sv, dst, v32, src, ok)")
    a("")
    a(f"    @pt.kernel(workgroup=(128, 1, 1), name=name, checks=False)")
    a("    def attention_tc(q32: pt.In[pt.u32], k32: pt.In[pt.u32], v32: pt.In[pt.u32], mask: pt.In[pt.f32], o: pt.Out[T],")
    a("                     Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,")
    a("                     left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,")
    a("                     msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):")
    a(f"        sq = pt.shared(pt.u32, {BQ * RW})")
    a(f"        sk = pt.shared(pt.u32, {2 * BKV * RW})")
    a(f"        sv = pt.shared(pt.u32, {2 * BKV * RW})")
    a("        local = pt.local_index_x()")
    a("        lane = local % 32")
    a("        warp = local // 32")
    a("        g = lane // 4")
    a("        t = lane % 4")
    a("        qm = lane // 8")
    a("        r8 = lane % 8")
    a("        bh = pt.group_index_y()")
    if t.last:
        a("        q0 = (pt.num_groups_x() - 1 - pt.group_index_x()) * BQ   # the longest causal rows start first")
    else:
        a("        q0 = pt.group_index_x() * BQ")
    a("        nq = min(pt.u32(BQ), Lq - q0)")
    a("        b = bh // Hq")
    a("        h = bh % Hq")
    a("        kvh = b * (Hq // ratio) + h // ratio")
    a(f"        kbase = kvh * Lk * {HD}")
    a("        lo_ = key_lo(q0, left)")
    a("        hi_ = key_hi(q0 + nq - 1, right, Lk)")
    a("        # the query tile, then the first key tile")
    a(f"        for j in range({BQ * CH // 128}):")           # the query tile's chunks over 128 threads
    a("            at = local + 128 * pt.u32(j)")
    a(f"            r = at // {CH}")
    a(f"            c = at % {CH}")
    a("            ok = q0 + r < Lq")
    a(f"            src = ((bh * Lq + q0 + r) * {HD} + c * 8) // 2 * pt.u32(ok)")
    a(f"            pt.copy_async(sq, {kq_at('r', 'c', BQ)}, q32, src, ok)")
    a("        issue_kv(sk, sv, k32, v32, 0, lo_, hi_, local, kbase)")
    a("        pt.copy_async_commit()")
    a("        pt.copy_async_wait(0)")
    if t.wg:
        a("        pt.fence_proxy_async()          # the copies, for the tensor cores' reads")
    a("        pt.workgroup_barrier()")
    # ldmatrix addresses: a lane reads row r8 + 8 * (one bit of qm) of a 16-row block, 16-byte chunk
    # 2c + (the other bit of qm), swizzled by r8 (every such block starts at a multiple of 8 rows). With
    # x = that bit ^ r8 (< 8), the chunk is 2c ^ x = 8 * (c // 4) + ((2 * (c % 4)) ^ x): four per-thread
    # offsets per operand, the rest (c // 4, the block's row, the ring slot) immediates.
    def offsets(name, row, bit, n):
        a(f"        {name}x = ({bit}) ^ r8")
        a(f"        {name}row = ({row}) * {RW}")
        for i in range(min(4, n)):
            a(f"        {name}{i} = {name}row + ({2 * i} ^ {name}x) * 4")

    def at(name, c, const, slot):
        const += 32 * (c // 4)
        dyn = f"slot + " if slot is None else ""
        const += 0 if slot is None else slot * BKV * RW
        return f"{dyn}{name}{c % 4}" + (f" + {const}" if const else "")

    if not t.wg:
        offsets("qo", f"warp * {16 * MQ} + r8 + 8 * (qm % 2)", "qm // 2", KC)
        offsets("ko", "r8 + 8 * (qm // 2)", "qm % 2", KC)
    offsets("vo", "r8 + 8 * (qm % 2)", "qm // 2", NT // 2)

    def q_fragment(ind, m, c, name):
        a(f"{ind}x0, x1, x2, x3 = pt.ldmatrix_x4(sq, {at('qo', c, 16 * m * RW, 0)})")
        for w in range(4):
            a(f"{ind}{name}_{2*w} = lo(x{w})")
            a(f"{ind}{name}_{2*w+1} = hi(x{w})")

    for m in range(MQ if t.qregs and not t.wg else 0):
        for c in range(KC):
            q_fragment("        ", m, c, f"fq{m}_{c}")
    a("        zero = pt.f32(0.0)")
    for m in range(MQ):
        for j in range(NT):
            a(f"        o{m}_{j}_0, o{m}_{j}_1, o{m}_{j}_2, o{m}_{j}_3 = zero, zero, zero, zero")
    for m in range(MQ):
        # the running row maxima are kept in log2 units (the logit times LOG2E)
        a(f"        m{m}_0 = pt.f32(NEG_INF)")
        a(f"        m{m}_1 = pt.f32(NEG_INF)")
        a(f"        l{m}_0 = pt.f32(0.0)")
        a(f"        l{m}_1 = pt.f32(0.0)")
        a(f"        qa{m} = q0 + warp * {16 * MQ} + {16 * m} + g")
        a(f"        qb{m} = qa{m} + 8")
        a(f"        ma{m} = b * msb + h * msh + min(qa{m}, Lq - 1) * msq")
        a(f"        mb{m} = b * msb + h * msh + min(qb{m}, Lq - 1) * msq")
    a("        plain = has_mask == 0 and softcap <= 0.0 and scale > 0.0")
    a("        scale2 = scale * LOG2E")
    a("        ntiles = pt.u32(0)")
    a("        if hi_ > lo_:                 # a block whose window ends before it starts sees no key")
    a("            ntiles = (hi_ - lo_ + BKV - 1) // BKV")

    def tree(op, xs):
        while len(xs) > 1:
            xs = [op(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
        return xs[0]

    def body(ind, kt, slot, first):
        """One key tile, kt its index; slot: its ring slot (0, 1), or None where it is the variable `slot`."""
        fence = ["pt.fence_proxy_async()"] if t.wg else []
        if first:
            a(f"{ind}if {kt} > 0:")
            for x in ["pt.copy_async_wait(0)"] + fence + ["pt.workgroup_barrier()"]:
                a(f"{ind}    {x}")
        else:
            for x in ["pt.copy_async_wait(0)"] + fence + ["pt.workgroup_barrier()"]:
                a(f"{ind}{x}")
        a(f"{ind}k0 = lo_ + {kt} * BKV")
        nxt = f"({kt} + 1) % 2" if slot is None else str(1 - slot)
        a(f"{ind}issue_kv(sk, sv, k32, v32, {nxt}, k0 + BKV, hi_, local, kbase)")
        a(f"{ind}pt.copy_async_commit()")
        if slot is None:
            a(f"{ind}slot = ({kt} % 2) * {BKV * RW}")
        # S = Q K^T: SJ n8 tiles (keys), by pairs p (keys 16p .. 16p + 15); one K fragment serves every m-tile
        for m in range(MQ):
            for j in range(SJ):
                a(f"{ind}s{m}_{j}_0, s{m}_{j}_1, s{m}_{j}_2, s{m}_{j}_3 = zero, zero, zero, zero")
        for h in range(HD // 64 if t.wg else 0):       # the warpgroup: Q's rows by K's rows, 64 head dims a step
            sv_ = ", ".join(f"s0_{j}_{e}" for j in range(SJ) for e in range(4))
            k_at = (f"slot + {h * BKV * 32}" if slot is None else str(slot * BKV * RW + h * BKV * 32))
            a(f"{ind}{sv_} = pt.wgmma_m64n64k64_bt(T, sq, {h * BQ * 32}, sk, {k_at}, {sv_})")
        for c in range(KC if not t.wg else 0):
            for m in range(MQ if not t.qregs else 0):
                q_fragment(ind, m, c, f"fq{m}_{c}")
            for p in range(SJ // 2):
                a(f"{ind}y0, y1, y2, y3 = pt.ldmatrix_x4(sk, {at('ko', c, 16 * p * RW, slot)})")
                for m in range(MQ):
                    for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                        fa = ", ".join(f"fq{m}_{c}_{e}" for e in range(8))
                        sv_ = ", ".join(f"s{m}_{tile}_{e}" for e in range(4))
                        a(f"{ind}{sv_} = pt.mma_m16n8k16({fa}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), {sv_})")
        # scores -> log2 logits. A tile inside every query's band, without mask or softcap, needs the scale
        # only, which the exponentials' multiply-add takes (sl); the others are turned into log2 units here,
        # each product rounded once (sl = 1): a masked logit can be as large as 1e38, and the multiply-add
        # s * LOG2E - round(max * LOG2E) would then be off by half an ulp of 1e38 for the row's maximum
        # itself, where s * 1 - max is exactly 0 (a Hugging Face finfo.min row averages its values).
        a(f"{ind}sl = scale2")
        a(f"{ind}if not (plain and k0 + BKV <= hi_ and pt.i32(k0) - pt.i32(q0 + BQ - 1) >= -left")
        a(f"{ind}        and pt.i32(k0 + BKV - 1) - pt.i32(q0) <= right):")
        if t.band:
            # without mask or softcap (a causal row's diagonal tile, say) only visibility: key kj of row qi
            # is seen where -left <= kj - qi <= right and kj < hi_, i.e. where the element's offset
            # 8j + e % 2 from the lane's first key k0 + 2t lies in [lo, up] (per row, two selects an element)
            a(f"{ind}    if plain:")
            for m in range(MQ):
                for r, row in (("a", f"qa{m}"), ("b", f"qb{m}")):
                    a(f"{ind}        d{r} = pt.i32(k0 + 2 * t) - pt.i32({row})")
                    a(f"{ind}        lo{r} = -left - d{r}")
                    a(f"{ind}        up{r} = min(right, pt.i32(hi_) - 1 - pt.i32({row})) - d{r}")
                for j in range(SJ):
                    for e in range(4):
                        r, c = ("a" if e < 2 else "b"), 8 * j + e % 2
                        v = f"s{m}_{j}_{e}"
                        a(f"{ind}        {v} = {v} if pt.i32({c}) <= up{r} else NEG_INF")
                        a(f"{ind}        {v} = {v} if pt.i32({c}) >= lo{r} else NEG_INF")
            a(f"{ind}    else:")
        i2 = ind + ("        " if t.band else "    ")
        a(f"{i2}sl = pt.f32(1.0)")
        for m in range(MQ):
            for j in range(SJ):
                for e in range(4):
                    row = f"qa{m}" if e < 2 else f"qb{m}"
                    mrow = f"ma{m}" if e < 2 else f"mb{m}"
                    a(f"{i2}kj = k0 + {8 * j} + 2 * t + {e % 2}")
                    a(f"{i2}s{m}_{j}_{e} = score(s{m}_{j}_{e} * scale, {row}, kj, hi_, left, right, mask, has_mask, {mrow} + kj * msk, softcap) * LOG2E")
        for m in range(MQ):
            for half, (e0, e1) in enumerate(((0, 1), (2, 3))):
                mx = tree(lambda x, y: f"max({x}, {y})", [f"s{m}_{j}_{e}" for j in range(SJ) for e in (e0, e1)])
                a(f"{ind}mx{half} = max(quad_max({mx}) * sl, m{m}_{half})")
                a(f"{ind}base{half} = offset(mx{half})")
                a(f"{ind}alpha{half} = pt.fast_exp2(m{m}_{half} - base{half})")
                a(f"{ind}m{m}_{half} = mx{half}")
            for j in range(SJ):
                for e in range(4):
                    a(f"{ind}s{m}_{j}_{e} = pt.fast_exp2(s{m}_{j}_{e} * sl - base{e // 2})")
            for half, (e0, e1) in enumerate(((0, 1), (2, 3))):
                total = tree(lambda x, y: f"({x} + {y})", [f"s{m}_{j}_{e}" for j in range(SJ) for e in (e0, e1)])
                a(f"{ind}l{m}_{half} = l{m}_{half} * alpha{half} + {total}")
            ind2 = ind
            if t.lazy:
                a(f"{ind}if alpha0 != 1.0 or alpha1 != 1.0:")
                ind2 = ind + "    "
            for j in range(NT):
                a(f"{ind2}o{m}_{j}_0 = o{m}_{j}_0 * alpha0")
                a(f"{ind2}o{m}_{j}_1 = o{m}_{j}_1 * alpha0")
                a(f"{ind2}o{m}_{j}_2 = o{m}_{j}_2 * alpha1")
                a(f"{ind2}o{m}_{j}_3 = o{m}_{j}_3 * alpha1")
        # O += P V: k16 chunks kc (keys 16kc ..), P of m-tile m from its s tiles 2kc, 2kc + 1; one V fragment
        # serves every m-tile
        for kc in range(BKV // 16):
            for m in range(MQ):
                for e in range(8):
                    a(f"{ind}p{m}_{e} = to_t(s{m}_{2 * kc + e // 4}_{e % 4})")
            for p in range(NT // 2):
                a(f"{ind}y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, {at('vo', p, 16 * kc * RW, slot)})")
                for m in range(MQ):
                    A = ", ".join(f"p{m}_{e}" for e in range(8))
                    for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                        ov = ", ".join(f"o{m}_{tile}_{e}" for e in range(4))
                        a(f"{ind}{ov} = pt.mma_m16n8k16({A}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), {ov})")

    if t.ring and HD >= 128:
        a("        for kt in range(pt.u32(0), ntiles, 2):     # the ring's two slots in turn: slot offsets are constants")
        body("            ", "kt", 0, True)
        a("            if kt + 1 < ntiles:")
        body("                ", "(kt + 1)", 1, False)
    else:
        a("        for kt in range(ntiles):")
        body("            ", "kt", None, True)
    a("        pt.copy_async_wait(0)")
    for m in range(MQ):
        a(f"        inv0 = normalizer(quad_sum(l{m}_0), zero_empty)")
        a(f"        inv1 = normalizer(quad_sum(l{m}_1), zero_empty)")
        a(f"        ra = (bh * Lq + qa{m}) * {HD}")
        a(f"        rb = (bh * Lq + qb{m}) * {HD}")
        a(f"        if qa{m} < Lq:")
        for j in range(NT):
            a(f"            store2(o, ra, {8 * j} + 2 * t, o{m}_{j}_0, o{m}_{j}_1, inv0)")
        a(f"        if qb{m} < Lq:")
        for j in range(NT):
            a(f"            store2(o, rb, {8 * j} + 2 * t, o{m}_{j}_2, o{m}_{j}_3, inv1)")
    a("")
    a("    return attention_tc")
    return "\n".join(L) + "\n"


TAIL = '''

attention_KIND_bf16_d64 = _make_d64(pt.bf16, "attention_KIND_bf16_d64")
attention_KIND_f16_d64 = _make_d64(pt.f16, "attention_KIND_f16_d64")
attention_KIND_bf16_d128 = _make_d128(pt.bf16, "attention_KIND_bf16_d128")
attention_KIND_f16_d128 = _make_d128(pt.f16, "attention_KIND_f16_d128")
HEAD_DIMS = (64, 128)


def threads(lq: int, rows: int) -> tuple[int, int, int]:
    return (-(-lq // BQ) * 128, rows, 1)


def reference(q, k, v, mask=None, left=UNBOUNDED, right=UNBOUNDED, scale=None, softcap=0.0):
    """Attention in float64 over [BH, L, D] arrays (GQA by head ratio); 0 for a query seeing no key."""
    rows, lq, d = q.shape
    ratio = rows // k.shape[0]
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    k64, v64 = np.repeat(k64, ratio, axis=0), np.repeat(v64, ratio, axis=0)
    s = q64 @ np.swapaxes(k64, -1, -2) * (scale if scale is not None else 1 / np.sqrt(d))
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask
    rel = np.arange(k.shape[1])[None, :] - np.arange(lq)[:, None]
    s = np.where((rel >= -left) & (rel <= right), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(-1, keepdims=True)
    return np.where(total > 0, (e @ v64) / np.where(total > 0, total, 1), 0.0)


CASES = (  # rows, kv rows, Lq, Lk, left, right, mask, softcap
    (2, 1, 70, 45, UNBOUNDED, 0, False, 0.0),
    (1, 1, 20, 37, 6, 3, True, 2.0),
    (1, 1, 70, 20, 2, 0, False, 0.0),      # the second query block's window lies past the last key
    (2, 2, BQ + 30, BQ + 40, UNBOUNDED, 0, False, 0.0),    # causal over two query blocks, keys ending a tile early
)


def _examples(np_dtype, d):
    rng = np.random.default_rng(9)
    out = []
    for rows, kv, lq, lk, left, right, with_mask, cap in CASES:
        q = rng.standard_normal((rows, lq, d)).astype(np_dtype)
        k = rng.standard_normal((kv, lk, d)).astype(np_dtype)
        v = rng.standard_normal((kv, lk, d)).astype(np_dtype)
        mask = (rng.standard_normal((lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
        scale = float(1 / np.sqrt(d))
        ref = reference(q, k, v, mask if with_mask else None, left, right, scale, cap)
        o = np.zeros((rows, lq, d), np_dtype)
        words = [x.reshape(-1).view(np.uint32) for x in (q, k, v)]
        args = tuple(words) + (mask.reshape(-1), o.reshape(-1), lq, lk, d, d, rows, rows // kv, left, right,
                               int(with_mask), 0, 0, lk if with_mask else 0, 1 if with_mask else 0, 1, scale, cap)
        eps = float(ml_dtypes.finfo(np_dtype).eps)
        out.append(Example(args=args, threads=threads(lq, rows), expected={"o": ref.astype(np_dtype).reshape(-1)},
                           rtol=4 * eps, atol=8 * eps + 1e-5))
    return out


def example_attention_KIND_bf16_d64(rng):
    return _examples(ml_dtypes.bfloat16, 64)


def example_attention_KIND_f16_d64(rng):
    return _examples(np.float16, 64)


def example_attention_KIND_bf16_d128(rng):
    return _examples(ml_dtypes.bfloat16, 128)


def example_attention_KIND_f16_d128(rng):
    return _examples(np.float16, 128)
'''



def source(tiles: Tiles = DEFAULT) -> str:
    return head(tiles) + make(64, tiles) + make(128, tiles) + TAIL.replace("KIND", tiles.kind)


def outputs() -> dict:
    """The committed kernel files and their text."""
    return {TARGET: source(), TARGET_WG: source(WG)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", help="mq,bkv[,qregs[,ring[,lazy[,last[,band]]]]]: m16 query tiles per warp, keys per "
                    "tile, Q kept in registers, key loop unrolled by the ring's slots, O rescaled only where a maximum "
                    "moved, query blocks from the last, band-only tiles by selects (default: the committed shape)")
    ap.add_argument("--out", type=Path, help="write flash_tc_<shape>.py into this folder instead")
    args = ap.parse_args(argv)
    tiles = Tiles(*map(int, args.tiles.split(","))) if args.tiles else DEFAULT
    if args.tiles is None and args.out is None:
        for path, text in outputs().items():
            path.write_text(text)
            print(path)
        return
    target = (TARGET_WG if tiles.wg else TARGET) if args.out is None else args.out / f"flash_tc_{tiles.label}.py"
    target.write_text(source(tiles))
    print(target)


if __name__ == "__main__":
    main()
