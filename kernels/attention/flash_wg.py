"""Flash attention prefill on Hopper's tensor cores (PTX sm_90a), for 16-bit q, k, v with head dims 64 and 128.

Same operands, scalars and semantics as attention_prefill_<T> in flash_gpu.py (masks, windows, softcap,
GQA, zero_empty), except that D == Dv == the kernel's head dim and q, k, v arrive as 32-bit word views of
the 16-bit arrays (attention_wg_<T>_d<D>; see below).

This is flash_tc.py (the sm_80 kernel) with the scores taken by Hopper's warpgroup products: per key tile,
`pt.wgmma_m64n64k64_bt` over each 64 of the head dim multiplies Q and K straight from shared memory (no Q or
K fragments in registers), and its result is the m16n8 accumulator layout the rest of the tile works on.
Q and K are therefore stored in blocks of 64 head dims (a block: one 128-byte line a row); V as before.
PTX sm_90a only: the planner takes it on sm_90 GPUs (H100, H200), where it is about 5% faster than
flash_tc.py.

A workgroup of 128 threads (4 warps) owns BQ = 64 queries of one (batch, head) row, 16 per warp. The
keys go BKV = 64 at a time through a two-slot ring in shared memory, filled by 16-byte `pt.copy_async`
(the next tile's K and V are in flight while the warps work on this one; rows past the visible keys are
zero-filled and their scores masked). Per tile, each warp computes its 16 x 64 scores S = Q K^T with
m16n8k16 multiply-accumulates (Q's fragments stay in registers for the whole row; K's come by
`pt.ldmatrix_x4`), applies scale, softcap, mask and visibility (none of it on a tile every query of the
workgroup sees whole, without mask or softcap: there the scale rides in the exponentials' multiply-add),
updates the running row maximum and sum (the online softmax, in log2 units: P = 2 ** (S * scale * log2(e)
- m), one multiply-add and one ex2 an element; a row is held by the 4 lanes of a quad, which exchange
maxima by `pt.shuffle_xor`), rounds P to the input dtype (bf16 by adding half an ulp to the bits) and
accumulates O += P V with V's fragments by `pt.ldmatrix_x4_trans`. P never leaves registers: the
accumulator layout of S is the A-fragment layout of P V (the usual FlashAttention-2 arrangement). No
L x L buffer, and no f32 accumulator in shared memory. A key tile whose rows all exist is copied without
per-row checks.

Shared memory: Q as [64][D] plus two slots of K and V as [64][D], rows of D / 8 16-byte chunks stored
XOR-swizzled (chunk c of row r at c ^ (r & 7)) so that each 8-lane phase of an ldmatrix reads 8
distinct bank groups: 80 KiB at D = 128, 40 KiB at D = 64 (past 48 KiB the block is dynamic
shared memory).
Launch: threads = (ceil(Lq / 64) * 128, B * Hq, 1), workgroup (128, 1, 1).

This file is written by tools/unroll/flash_tc.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BQ = 64            # queries per workgroup (16 per warp)
BKV = 64          # keys per tile
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


def _make_d64(T, name):
    @pt.device_fn
    def lo(w):
        return pt.bitcast(pt.u16(w & 0xFFFF), T)

    @pt.device_fn
    def hi(w):
        return pt.bitcast(pt.u16(w >> 16), T)

    if T is pt.bf16:
        @pt.device_fn
        def to_t(x):
            """An element of P (0 <= x <= 1, or NaN) as bf16: half an ulp added to the bits, then truncated
            (round to nearest, ties away from zero): two integer operations, no NaN or tie handling."""
            return pt.bitcast(pt.u16((pt.bitcast(x, pt.u32) + 0x8000) >> 16), T)
    else:
        to_t = T

    @pt.device_fn
    def store2(o, row, col, v0, v1, inv):
        o[row + col] = T(v0 * inv)
        o[row + col + 1] = T(v1 * inv)

    @pt.device_fn
    def issue_kv(sk, sv, k32, v32, slot, k0, hi_, local, kbase):
        """Start the copies of keys k0 .. k0 + 63 (K and V) into ring slot `slot` (zeros past hi_)."""
        if k0 + 64 <= hi_:            # every row a key: no checks, word offsets step by constants
            src = kbase // 2 + (k0 + local // 8) * 32 + local % 8 * 4
            dst = slot * 2048 + local // 8 * 32 + (local % 8 ^ (local // 8 & 7)) * 4
            dstk = slot * 2048 + (local // 8) * 32 + ((local % 8) % 8 ^ ((local // 8) & 7)) * 4
            for j in range(4):
                pt.copy_async(sk, dstk + 512 * pt.u32(j), k32, src + 512 * pt.u32(j), True)
                pt.copy_async(sv, dst + 512 * pt.u32(j), v32, src + 512 * pt.u32(j), True)
        else:
            for j in range(4):
                at = local + 128 * pt.u32(j)
                r = at // 8
                c = at % 8
                ok = k0 + r < hi_
                src = (kbase + (k0 + r) * 64 + c * 8) // 2 * pt.u32(ok)
                dst = slot * 2048 + r * 32 + (c ^ (r & 7)) * 4
                pt.copy_async(sk, slot * 2048 + r * 32 + ((c) % 8 ^ (r & 7)) * 4, k32, src, ok)
                pt.copy_async(sv, dst, v32, src, ok)

    @pt.kernel(workgroup=(128, 1, 1), name=name, checks=False)
    def attention_tc(q32: pt.In[pt.u32], k32: pt.In[pt.u32], v32: pt.In[pt.u32], mask: pt.In[pt.f32], o: pt.Out[T],
                     Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,
                     left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,
                     msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):
        sq = pt.shared(pt.u32, 2048)
        sk = pt.shared(pt.u32, 4096)
        sv = pt.shared(pt.u32, 4096)
        local = pt.local_index_x()
        lane = local % 32
        warp = local // 32
        g = lane // 4
        t = lane % 4
        qm = lane // 8
        r8 = lane % 8
        bh = pt.group_index_y()
        q0 = (pt.num_groups_x() - 1 - pt.group_index_x()) * BQ   # the longest causal rows start first
        nq = min(pt.u32(BQ), Lq - q0)
        b = bh // Hq
        h = bh % Hq
        kvh = b * (Hq // ratio) + h // ratio
        kbase = kvh * Lk * 64
        lo_ = key_lo(q0, left)
        hi_ = key_hi(q0 + nq - 1, right, Lk)
        # the query tile, then the first key tile
        for j in range(4):
            at = local + 128 * pt.u32(j)
            r = at // 8
            c = at % 8
            ok = q0 + r < Lq
            src = ((bh * Lq + q0 + r) * 64 + c * 8) // 2 * pt.u32(ok)
            pt.copy_async(sq, r * 32 + ((c) % 8 ^ (r & 7)) * 4, q32, src, ok)
        issue_kv(sk, sv, k32, v32, 0, lo_, hi_, local, kbase)
        pt.copy_async_commit()
        pt.copy_async_wait(0)
        pt.fence_proxy_async()          # the copies, for the tensor cores' reads
        pt.workgroup_barrier()
        vox = (qm // 2) ^ r8
        vorow = (r8 + 8 * (qm % 2)) * 32
        vo0 = vorow + (0 ^ vox) * 4
        vo1 = vorow + (2 ^ vox) * 4
        vo2 = vorow + (4 ^ vox) * 4
        vo3 = vorow + (6 ^ vox) * 4
        zero = pt.f32(0.0)
        o0_0_0, o0_0_1, o0_0_2, o0_0_3 = zero, zero, zero, zero
        o0_1_0, o0_1_1, o0_1_2, o0_1_3 = zero, zero, zero, zero
        o0_2_0, o0_2_1, o0_2_2, o0_2_3 = zero, zero, zero, zero
        o0_3_0, o0_3_1, o0_3_2, o0_3_3 = zero, zero, zero, zero
        o0_4_0, o0_4_1, o0_4_2, o0_4_3 = zero, zero, zero, zero
        o0_5_0, o0_5_1, o0_5_2, o0_5_3 = zero, zero, zero, zero
        o0_6_0, o0_6_1, o0_6_2, o0_6_3 = zero, zero, zero, zero
        o0_7_0, o0_7_1, o0_7_2, o0_7_3 = zero, zero, zero, zero
        m0_0 = pt.f32(NEG_INF)
        m0_1 = pt.f32(NEG_INF)
        l0_0 = pt.f32(0.0)
        l0_1 = pt.f32(0.0)
        qa0 = q0 + warp * 16 + 0 + g
        qb0 = qa0 + 8
        ma0 = b * msb + h * msh + min(qa0, Lq - 1) * msq
        mb0 = b * msb + h * msh + min(qb0, Lq - 1) * msq
        plain = has_mask == 0 and softcap <= 0.0 and scale > 0.0
        scale2 = scale * LOG2E
        ntiles = pt.u32(0)
        if hi_ > lo_:                 # a block whose window ends before it starts sees no key
            ntiles = (hi_ - lo_ + BKV - 1) // BKV
        for kt in range(ntiles):
            if kt > 0:
                pt.copy_async_wait(0)
                pt.fence_proxy_async()
                pt.workgroup_barrier()
            k0 = lo_ + kt * BKV
            issue_kv(sk, sv, k32, v32, (kt + 1) % 2, k0 + BKV, hi_, local, kbase)
            pt.copy_async_commit()
            slot = (kt % 2) * 2048
            s0_0_0, s0_0_1, s0_0_2, s0_0_3 = zero, zero, zero, zero
            s0_1_0, s0_1_1, s0_1_2, s0_1_3 = zero, zero, zero, zero
            s0_2_0, s0_2_1, s0_2_2, s0_2_3 = zero, zero, zero, zero
            s0_3_0, s0_3_1, s0_3_2, s0_3_3 = zero, zero, zero, zero
            s0_4_0, s0_4_1, s0_4_2, s0_4_3 = zero, zero, zero, zero
            s0_5_0, s0_5_1, s0_5_2, s0_5_3 = zero, zero, zero, zero
            s0_6_0, s0_6_1, s0_6_2, s0_6_3 = zero, zero, zero, zero
            s0_7_0, s0_7_1, s0_7_2, s0_7_3 = zero, zero, zero, zero
            s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3 = pt.wgmma_m64n64k64_bt(T, sq, 0, sk, slot + 0, s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3)
            sl = scale2
            if not (plain and k0 + BKV <= hi_ and pt.i32(k0) - pt.i32(q0 + BQ - 1) >= -left
                    and pt.i32(k0 + BKV - 1) - pt.i32(q0) <= right):
                if plain:
                    da = pt.i32(k0 + 2 * t) - pt.i32(qa0)
                    loa = -left - da
                    upa = min(right, pt.i32(hi_) - 1 - pt.i32(qa0)) - da
                    db = pt.i32(k0 + 2 * t) - pt.i32(qb0)
                    lob = -left - db
                    upb = min(right, pt.i32(hi_) - 1 - pt.i32(qb0)) - db
                    s0_0_0 = s0_0_0 if pt.i32(0) <= upa else NEG_INF
                    s0_0_0 = s0_0_0 if pt.i32(0) >= loa else NEG_INF
                    s0_0_1 = s0_0_1 if pt.i32(1) <= upa else NEG_INF
                    s0_0_1 = s0_0_1 if pt.i32(1) >= loa else NEG_INF
                    s0_0_2 = s0_0_2 if pt.i32(0) <= upb else NEG_INF
                    s0_0_2 = s0_0_2 if pt.i32(0) >= lob else NEG_INF
                    s0_0_3 = s0_0_3 if pt.i32(1) <= upb else NEG_INF
                    s0_0_3 = s0_0_3 if pt.i32(1) >= lob else NEG_INF
                    s0_1_0 = s0_1_0 if pt.i32(8) <= upa else NEG_INF
                    s0_1_0 = s0_1_0 if pt.i32(8) >= loa else NEG_INF
                    s0_1_1 = s0_1_1 if pt.i32(9) <= upa else NEG_INF
                    s0_1_1 = s0_1_1 if pt.i32(9) >= loa else NEG_INF
                    s0_1_2 = s0_1_2 if pt.i32(8) <= upb else NEG_INF
                    s0_1_2 = s0_1_2 if pt.i32(8) >= lob else NEG_INF
                    s0_1_3 = s0_1_3 if pt.i32(9) <= upb else NEG_INF
                    s0_1_3 = s0_1_3 if pt.i32(9) >= lob else NEG_INF
                    s0_2_0 = s0_2_0 if pt.i32(16) <= upa else NEG_INF
                    s0_2_0 = s0_2_0 if pt.i32(16) >= loa else NEG_INF
                    s0_2_1 = s0_2_1 if pt.i32(17) <= upa else NEG_INF
                    s0_2_1 = s0_2_1 if pt.i32(17) >= loa else NEG_INF
                    s0_2_2 = s0_2_2 if pt.i32(16) <= upb else NEG_INF
                    s0_2_2 = s0_2_2 if pt.i32(16) >= lob else NEG_INF
                    s0_2_3 = s0_2_3 if pt.i32(17) <= upb else NEG_INF
                    s0_2_3 = s0_2_3 if pt.i32(17) >= lob else NEG_INF
                    s0_3_0 = s0_3_0 if pt.i32(24) <= upa else NEG_INF
                    s0_3_0 = s0_3_0 if pt.i32(24) >= loa else NEG_INF
                    s0_3_1 = s0_3_1 if pt.i32(25) <= upa else NEG_INF
                    s0_3_1 = s0_3_1 if pt.i32(25) >= loa else NEG_INF
                    s0_3_2 = s0_3_2 if pt.i32(24) <= upb else NEG_INF
                    s0_3_2 = s0_3_2 if pt.i32(24) >= lob else NEG_INF
                    s0_3_3 = s0_3_3 if pt.i32(25) <= upb else NEG_INF
                    s0_3_3 = s0_3_3 if pt.i32(25) >= lob else NEG_INF
                    s0_4_0 = s0_4_0 if pt.i32(32) <= upa else NEG_INF
                    s0_4_0 = s0_4_0 if pt.i32(32) >= loa else NEG_INF
                    s0_4_1 = s0_4_1 if pt.i32(33) <= upa else NEG_INF
                    s0_4_1 = s0_4_1 if pt.i32(33) >= loa else NEG_INF
                    s0_4_2 = s0_4_2 if pt.i32(32) <= upb else NEG_INF
                    s0_4_2 = s0_4_2 if pt.i32(32) >= lob else NEG_INF
                    s0_4_3 = s0_4_3 if pt.i32(33) <= upb else NEG_INF
                    s0_4_3 = s0_4_3 if pt.i32(33) >= lob else NEG_INF
                    s0_5_0 = s0_5_0 if pt.i32(40) <= upa else NEG_INF
                    s0_5_0 = s0_5_0 if pt.i32(40) >= loa else NEG_INF
                    s0_5_1 = s0_5_1 if pt.i32(41) <= upa else NEG_INF
                    s0_5_1 = s0_5_1 if pt.i32(41) >= loa else NEG_INF
                    s0_5_2 = s0_5_2 if pt.i32(40) <= upb else NEG_INF
                    s0_5_2 = s0_5_2 if pt.i32(40) >= lob else NEG_INF
                    s0_5_3 = s0_5_3 if pt.i32(41) <= upb else NEG_INF
                    s0_5_3 = s0_5_3 if pt.i32(41) >= lob else NEG_INF
                    s0_6_0 = s0_6_0 if pt.i32(48) <= upa else NEG_INF
                    s0_6_0 = s0_6_0 if pt.i32(48) >= loa else NEG_INF
                    s0_6_1 = s0_6_1 if pt.i32(49) <= upa else NEG_INF
                    s0_6_1 = s0_6_1 if pt.i32(49) >= loa else NEG_INF
                    s0_6_2 = s0_6_2 if pt.i32(48) <= upb else NEG_INF
                    s0_6_2 = s0_6_2 if pt.i32(48) >= lob else NEG_INF
                    s0_6_3 = s0_6_3 if pt.i32(49) <= upb else NEG_INF
                    s0_6_3 = s0_6_3 if pt.i32(49) >= lob else NEG_INF
                    s0_7_0 = s0_7_0 if pt.i32(56) <= upa else NEG_INF
                    s0_7_0 = s0_7_0 if pt.i32(56) >= loa else NEG_INF
                    s0_7_1 = s0_7_1 if pt.i32(57) <= upa else NEG_INF
                    s0_7_1 = s0_7_1 if pt.i32(57) >= loa else NEG_INF
                    s0_7_2 = s0_7_2 if pt.i32(56) <= upb else NEG_INF
                    s0_7_2 = s0_7_2 if pt.i32(56) >= lob else NEG_INF
                    s0_7_3 = s0_7_3 if pt.i32(57) <= upb else NEG_INF
                    s0_7_3 = s0_7_3 if pt.i32(57) >= lob else NEG_INF
                else:
                    sl = pt.f32(1.0)
                    kj = k0 + 0 + 2 * t + 0
                    s0_0_0 = score(s0_0_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 1
                    s0_0_1 = score(s0_0_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 0
                    s0_0_2 = score(s0_0_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 1
                    s0_0_3 = score(s0_0_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 0
                    s0_1_0 = score(s0_1_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 1
                    s0_1_1 = score(s0_1_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 0
                    s0_1_2 = score(s0_1_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 1
                    s0_1_3 = score(s0_1_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 0
                    s0_2_0 = score(s0_2_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 1
                    s0_2_1 = score(s0_2_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 0
                    s0_2_2 = score(s0_2_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 1
                    s0_2_3 = score(s0_2_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 0
                    s0_3_0 = score(s0_3_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 1
                    s0_3_1 = score(s0_3_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 0
                    s0_3_2 = score(s0_3_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 1
                    s0_3_3 = score(s0_3_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 0
                    s0_4_0 = score(s0_4_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 1
                    s0_4_1 = score(s0_4_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 0
                    s0_4_2 = score(s0_4_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 1
                    s0_4_3 = score(s0_4_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 0
                    s0_5_0 = score(s0_5_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 1
                    s0_5_1 = score(s0_5_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 0
                    s0_5_2 = score(s0_5_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 1
                    s0_5_3 = score(s0_5_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 0
                    s0_6_0 = score(s0_6_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 1
                    s0_6_1 = score(s0_6_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 0
                    s0_6_2 = score(s0_6_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 1
                    s0_6_3 = score(s0_6_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 0
                    s0_7_0 = score(s0_7_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 1
                    s0_7_1 = score(s0_7_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 0
                    s0_7_2 = score(s0_7_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 1
                    s0_7_3 = score(s0_7_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
            mx0 = max(quad_max(max(max(max(max(s0_0_0, s0_0_1), max(s0_1_0, s0_1_1)), max(max(s0_2_0, s0_2_1), max(s0_3_0, s0_3_1))), max(max(max(s0_4_0, s0_4_1), max(s0_5_0, s0_5_1)), max(max(s0_6_0, s0_6_1), max(s0_7_0, s0_7_1))))) * sl, m0_0)
            base0 = offset(mx0)
            alpha0 = pt.fast_exp2(m0_0 - base0)
            m0_0 = mx0
            mx1 = max(quad_max(max(max(max(max(s0_0_2, s0_0_3), max(s0_1_2, s0_1_3)), max(max(s0_2_2, s0_2_3), max(s0_3_2, s0_3_3))), max(max(max(s0_4_2, s0_4_3), max(s0_5_2, s0_5_3)), max(max(s0_6_2, s0_6_3), max(s0_7_2, s0_7_3))))) * sl, m0_1)
            base1 = offset(mx1)
            alpha1 = pt.fast_exp2(m0_1 - base1)
            m0_1 = mx1
            s0_0_0 = pt.fast_exp2(s0_0_0 * sl - base0)
            s0_0_1 = pt.fast_exp2(s0_0_1 * sl - base0)
            s0_0_2 = pt.fast_exp2(s0_0_2 * sl - base1)
            s0_0_3 = pt.fast_exp2(s0_0_3 * sl - base1)
            s0_1_0 = pt.fast_exp2(s0_1_0 * sl - base0)
            s0_1_1 = pt.fast_exp2(s0_1_1 * sl - base0)
            s0_1_2 = pt.fast_exp2(s0_1_2 * sl - base1)
            s0_1_3 = pt.fast_exp2(s0_1_3 * sl - base1)
            s0_2_0 = pt.fast_exp2(s0_2_0 * sl - base0)
            s0_2_1 = pt.fast_exp2(s0_2_1 * sl - base0)
            s0_2_2 = pt.fast_exp2(s0_2_2 * sl - base1)
            s0_2_3 = pt.fast_exp2(s0_2_3 * sl - base1)
            s0_3_0 = pt.fast_exp2(s0_3_0 * sl - base0)
            s0_3_1 = pt.fast_exp2(s0_3_1 * sl - base0)
            s0_3_2 = pt.fast_exp2(s0_3_2 * sl - base1)
            s0_3_3 = pt.fast_exp2(s0_3_3 * sl - base1)
            s0_4_0 = pt.fast_exp2(s0_4_0 * sl - base0)
            s0_4_1 = pt.fast_exp2(s0_4_1 * sl - base0)
            s0_4_2 = pt.fast_exp2(s0_4_2 * sl - base1)
            s0_4_3 = pt.fast_exp2(s0_4_3 * sl - base1)
            s0_5_0 = pt.fast_exp2(s0_5_0 * sl - base0)
            s0_5_1 = pt.fast_exp2(s0_5_1 * sl - base0)
            s0_5_2 = pt.fast_exp2(s0_5_2 * sl - base1)
            s0_5_3 = pt.fast_exp2(s0_5_3 * sl - base1)
            s0_6_0 = pt.fast_exp2(s0_6_0 * sl - base0)
            s0_6_1 = pt.fast_exp2(s0_6_1 * sl - base0)
            s0_6_2 = pt.fast_exp2(s0_6_2 * sl - base1)
            s0_6_3 = pt.fast_exp2(s0_6_3 * sl - base1)
            s0_7_0 = pt.fast_exp2(s0_7_0 * sl - base0)
            s0_7_1 = pt.fast_exp2(s0_7_1 * sl - base0)
            s0_7_2 = pt.fast_exp2(s0_7_2 * sl - base1)
            s0_7_3 = pt.fast_exp2(s0_7_3 * sl - base1)
            l0_0 = l0_0 * alpha0 + ((((s0_0_0 + s0_0_1) + (s0_1_0 + s0_1_1)) + ((s0_2_0 + s0_2_1) + (s0_3_0 + s0_3_1))) + (((s0_4_0 + s0_4_1) + (s0_5_0 + s0_5_1)) + ((s0_6_0 + s0_6_1) + (s0_7_0 + s0_7_1))))
            l0_1 = l0_1 * alpha1 + ((((s0_0_2 + s0_0_3) + (s0_1_2 + s0_1_3)) + ((s0_2_2 + s0_2_3) + (s0_3_2 + s0_3_3))) + (((s0_4_2 + s0_4_3) + (s0_5_2 + s0_5_3)) + ((s0_6_2 + s0_6_3) + (s0_7_2 + s0_7_3))))
            o0_0_0 = o0_0_0 * alpha0
            o0_0_1 = o0_0_1 * alpha0
            o0_0_2 = o0_0_2 * alpha1
            o0_0_3 = o0_0_3 * alpha1
            o0_1_0 = o0_1_0 * alpha0
            o0_1_1 = o0_1_1 * alpha0
            o0_1_2 = o0_1_2 * alpha1
            o0_1_3 = o0_1_3 * alpha1
            o0_2_0 = o0_2_0 * alpha0
            o0_2_1 = o0_2_1 * alpha0
            o0_2_2 = o0_2_2 * alpha1
            o0_2_3 = o0_2_3 * alpha1
            o0_3_0 = o0_3_0 * alpha0
            o0_3_1 = o0_3_1 * alpha0
            o0_3_2 = o0_3_2 * alpha1
            o0_3_3 = o0_3_3 * alpha1
            o0_4_0 = o0_4_0 * alpha0
            o0_4_1 = o0_4_1 * alpha0
            o0_4_2 = o0_4_2 * alpha1
            o0_4_3 = o0_4_3 * alpha1
            o0_5_0 = o0_5_0 * alpha0
            o0_5_1 = o0_5_1 * alpha0
            o0_5_2 = o0_5_2 * alpha1
            o0_5_3 = o0_5_3 * alpha1
            o0_6_0 = o0_6_0 * alpha0
            o0_6_1 = o0_6_1 * alpha0
            o0_6_2 = o0_6_2 * alpha1
            o0_6_3 = o0_6_3 * alpha1
            o0_7_0 = o0_7_0 * alpha0
            o0_7_1 = o0_7_1 * alpha0
            o0_7_2 = o0_7_2 * alpha1
            o0_7_3 = o0_7_3 * alpha1
            p0_0 = to_t(s0_0_0)
            p0_1 = to_t(s0_0_1)
            p0_2 = to_t(s0_0_2)
            p0_3 = to_t(s0_0_3)
            p0_4 = to_t(s0_1_0)
            p0_5 = to_t(s0_1_1)
            p0_6 = to_t(s0_1_2)
            p0_7 = to_t(s0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            p0_0 = to_t(s0_2_0)
            p0_1 = to_t(s0_2_1)
            p0_2 = to_t(s0_2_2)
            p0_3 = to_t(s0_2_3)
            p0_4 = to_t(s0_3_0)
            p0_5 = to_t(s0_3_1)
            p0_6 = to_t(s0_3_2)
            p0_7 = to_t(s0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 512)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 512)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 512)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 512)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            p0_0 = to_t(s0_4_0)
            p0_1 = to_t(s0_4_1)
            p0_2 = to_t(s0_4_2)
            p0_3 = to_t(s0_4_3)
            p0_4 = to_t(s0_5_0)
            p0_5 = to_t(s0_5_1)
            p0_6 = to_t(s0_5_2)
            p0_7 = to_t(s0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 1024)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 1024)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 1024)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 1024)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            p0_0 = to_t(s0_6_0)
            p0_1 = to_t(s0_6_1)
            p0_2 = to_t(s0_6_2)
            p0_3 = to_t(s0_6_3)
            p0_4 = to_t(s0_7_0)
            p0_5 = to_t(s0_7_1)
            p0_6 = to_t(s0_7_2)
            p0_7 = to_t(s0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 1536)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 1536)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 1536)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 1536)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
        pt.copy_async_wait(0)
        inv0 = normalizer(quad_sum(l0_0), zero_empty)
        inv1 = normalizer(quad_sum(l0_1), zero_empty)
        ra = (bh * Lq + qa0) * 64
        rb = (bh * Lq + qb0) * 64
        if qa0 < Lq:
            store2(o, ra, 0 + 2 * t, o0_0_0, o0_0_1, inv0)
            store2(o, ra, 8 + 2 * t, o0_1_0, o0_1_1, inv0)
            store2(o, ra, 16 + 2 * t, o0_2_0, o0_2_1, inv0)
            store2(o, ra, 24 + 2 * t, o0_3_0, o0_3_1, inv0)
            store2(o, ra, 32 + 2 * t, o0_4_0, o0_4_1, inv0)
            store2(o, ra, 40 + 2 * t, o0_5_0, o0_5_1, inv0)
            store2(o, ra, 48 + 2 * t, o0_6_0, o0_6_1, inv0)
            store2(o, ra, 56 + 2 * t, o0_7_0, o0_7_1, inv0)
        if qb0 < Lq:
            store2(o, rb, 0 + 2 * t, o0_0_2, o0_0_3, inv1)
            store2(o, rb, 8 + 2 * t, o0_1_2, o0_1_3, inv1)
            store2(o, rb, 16 + 2 * t, o0_2_2, o0_2_3, inv1)
            store2(o, rb, 24 + 2 * t, o0_3_2, o0_3_3, inv1)
            store2(o, rb, 32 + 2 * t, o0_4_2, o0_4_3, inv1)
            store2(o, rb, 40 + 2 * t, o0_5_2, o0_5_3, inv1)
            store2(o, rb, 48 + 2 * t, o0_6_2, o0_6_3, inv1)
            store2(o, rb, 56 + 2 * t, o0_7_2, o0_7_3, inv1)

    return attention_tc


def _make_d128(T, name):
    @pt.device_fn
    def lo(w):
        return pt.bitcast(pt.u16(w & 0xFFFF), T)

    @pt.device_fn
    def hi(w):
        return pt.bitcast(pt.u16(w >> 16), T)

    if T is pt.bf16:
        @pt.device_fn
        def to_t(x):
            """An element of P (0 <= x <= 1, or NaN) as bf16: half an ulp added to the bits, then truncated
            (round to nearest, ties away from zero): two integer operations, no NaN or tie handling."""
            return pt.bitcast(pt.u16((pt.bitcast(x, pt.u32) + 0x8000) >> 16), T)
    else:
        to_t = T

    @pt.device_fn
    def store2(o, row, col, v0, v1, inv):
        o[row + col] = T(v0 * inv)
        o[row + col + 1] = T(v1 * inv)

    @pt.device_fn
    def issue_kv(sk, sv, k32, v32, slot, k0, hi_, local, kbase):
        """Start the copies of keys k0 .. k0 + 63 (K and V) into ring slot `slot` (zeros past hi_)."""
        if k0 + 64 <= hi_:            # every row a key: no checks, word offsets step by constants
            src = kbase // 2 + (k0 + local // 16) * 64 + local % 16 * 4
            dst = slot * 4096 + local // 16 * 64 + (local % 16 ^ (local // 16 & 7)) * 4
            dstk = slot * 4096 + (local % 16) // 8 * 2048 + (local // 16) * 32 + ((local % 16) % 8 ^ ((local // 16) & 7)) * 4
            for j in range(8):
                pt.copy_async(sk, dstk + 256 * pt.u32(j), k32, src + 512 * pt.u32(j), True)
                pt.copy_async(sv, dst + 512 * pt.u32(j), v32, src + 512 * pt.u32(j), True)
        else:
            for j in range(8):
                at = local + 128 * pt.u32(j)
                r = at // 16
                c = at % 16
                ok = k0 + r < hi_
                src = (kbase + (k0 + r) * 128 + c * 8) // 2 * pt.u32(ok)
                dst = slot * 4096 + r * 64 + (c ^ (r & 7)) * 4
                pt.copy_async(sk, slot * 4096 + (c) // 8 * 2048 + r * 32 + ((c) % 8 ^ (r & 7)) * 4, k32, src, ok)
                pt.copy_async(sv, dst, v32, src, ok)

    @pt.kernel(workgroup=(128, 1, 1), name=name, checks=False)
    def attention_tc(q32: pt.In[pt.u32], k32: pt.In[pt.u32], v32: pt.In[pt.u32], mask: pt.In[pt.f32], o: pt.Out[T],
                     Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,
                     left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,
                     msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):
        sq = pt.shared(pt.u32, 4096)
        sk = pt.shared(pt.u32, 8192)
        sv = pt.shared(pt.u32, 8192)
        local = pt.local_index_x()
        lane = local % 32
        warp = local // 32
        g = lane // 4
        t = lane % 4
        qm = lane // 8
        r8 = lane % 8
        bh = pt.group_index_y()
        q0 = (pt.num_groups_x() - 1 - pt.group_index_x()) * BQ   # the longest causal rows start first
        nq = min(pt.u32(BQ), Lq - q0)
        b = bh // Hq
        h = bh % Hq
        kvh = b * (Hq // ratio) + h // ratio
        kbase = kvh * Lk * 128
        lo_ = key_lo(q0, left)
        hi_ = key_hi(q0 + nq - 1, right, Lk)
        # the query tile, then the first key tile
        for j in range(8):
            at = local + 128 * pt.u32(j)
            r = at // 16
            c = at % 16
            ok = q0 + r < Lq
            src = ((bh * Lq + q0 + r) * 128 + c * 8) // 2 * pt.u32(ok)
            pt.copy_async(sq, (c) // 8 * 2048 + r * 32 + ((c) % 8 ^ (r & 7)) * 4, q32, src, ok)
        issue_kv(sk, sv, k32, v32, 0, lo_, hi_, local, kbase)
        pt.copy_async_commit()
        pt.copy_async_wait(0)
        pt.fence_proxy_async()          # the copies, for the tensor cores' reads
        pt.workgroup_barrier()
        vox = (qm // 2) ^ r8
        vorow = (r8 + 8 * (qm % 2)) * 64
        vo0 = vorow + (0 ^ vox) * 4
        vo1 = vorow + (2 ^ vox) * 4
        vo2 = vorow + (4 ^ vox) * 4
        vo3 = vorow + (6 ^ vox) * 4
        zero = pt.f32(0.0)
        o0_0_0, o0_0_1, o0_0_2, o0_0_3 = zero, zero, zero, zero
        o0_1_0, o0_1_1, o0_1_2, o0_1_3 = zero, zero, zero, zero
        o0_2_0, o0_2_1, o0_2_2, o0_2_3 = zero, zero, zero, zero
        o0_3_0, o0_3_1, o0_3_2, o0_3_3 = zero, zero, zero, zero
        o0_4_0, o0_4_1, o0_4_2, o0_4_3 = zero, zero, zero, zero
        o0_5_0, o0_5_1, o0_5_2, o0_5_3 = zero, zero, zero, zero
        o0_6_0, o0_6_1, o0_6_2, o0_6_3 = zero, zero, zero, zero
        o0_7_0, o0_7_1, o0_7_2, o0_7_3 = zero, zero, zero, zero
        o0_8_0, o0_8_1, o0_8_2, o0_8_3 = zero, zero, zero, zero
        o0_9_0, o0_9_1, o0_9_2, o0_9_3 = zero, zero, zero, zero
        o0_10_0, o0_10_1, o0_10_2, o0_10_3 = zero, zero, zero, zero
        o0_11_0, o0_11_1, o0_11_2, o0_11_3 = zero, zero, zero, zero
        o0_12_0, o0_12_1, o0_12_2, o0_12_3 = zero, zero, zero, zero
        o0_13_0, o0_13_1, o0_13_2, o0_13_3 = zero, zero, zero, zero
        o0_14_0, o0_14_1, o0_14_2, o0_14_3 = zero, zero, zero, zero
        o0_15_0, o0_15_1, o0_15_2, o0_15_3 = zero, zero, zero, zero
        m0_0 = pt.f32(NEG_INF)
        m0_1 = pt.f32(NEG_INF)
        l0_0 = pt.f32(0.0)
        l0_1 = pt.f32(0.0)
        qa0 = q0 + warp * 16 + 0 + g
        qb0 = qa0 + 8
        ma0 = b * msb + h * msh + min(qa0, Lq - 1) * msq
        mb0 = b * msb + h * msh + min(qb0, Lq - 1) * msq
        plain = has_mask == 0 and softcap <= 0.0 and scale > 0.0
        scale2 = scale * LOG2E
        ntiles = pt.u32(0)
        if hi_ > lo_:                 # a block whose window ends before it starts sees no key
            ntiles = (hi_ - lo_ + BKV - 1) // BKV
        for kt in range(ntiles):
            if kt > 0:
                pt.copy_async_wait(0)
                pt.fence_proxy_async()
                pt.workgroup_barrier()
            k0 = lo_ + kt * BKV
            issue_kv(sk, sv, k32, v32, (kt + 1) % 2, k0 + BKV, hi_, local, kbase)
            pt.copy_async_commit()
            slot = (kt % 2) * 4096
            s0_0_0, s0_0_1, s0_0_2, s0_0_3 = zero, zero, zero, zero
            s0_1_0, s0_1_1, s0_1_2, s0_1_3 = zero, zero, zero, zero
            s0_2_0, s0_2_1, s0_2_2, s0_2_3 = zero, zero, zero, zero
            s0_3_0, s0_3_1, s0_3_2, s0_3_3 = zero, zero, zero, zero
            s0_4_0, s0_4_1, s0_4_2, s0_4_3 = zero, zero, zero, zero
            s0_5_0, s0_5_1, s0_5_2, s0_5_3 = zero, zero, zero, zero
            s0_6_0, s0_6_1, s0_6_2, s0_6_3 = zero, zero, zero, zero
            s0_7_0, s0_7_1, s0_7_2, s0_7_3 = zero, zero, zero, zero
            s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3 = pt.wgmma_m64n64k64_bt(T, sq, 0, sk, slot + 0, s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3)
            s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3 = pt.wgmma_m64n64k64_bt(T, sq, 2048, sk, slot + 2048, s0_0_0, s0_0_1, s0_0_2, s0_0_3, s0_1_0, s0_1_1, s0_1_2, s0_1_3, s0_2_0, s0_2_1, s0_2_2, s0_2_3, s0_3_0, s0_3_1, s0_3_2, s0_3_3, s0_4_0, s0_4_1, s0_4_2, s0_4_3, s0_5_0, s0_5_1, s0_5_2, s0_5_3, s0_6_0, s0_6_1, s0_6_2, s0_6_3, s0_7_0, s0_7_1, s0_7_2, s0_7_3)
            sl = scale2
            if not (plain and k0 + BKV <= hi_ and pt.i32(k0) - pt.i32(q0 + BQ - 1) >= -left
                    and pt.i32(k0 + BKV - 1) - pt.i32(q0) <= right):
                if plain:
                    da = pt.i32(k0 + 2 * t) - pt.i32(qa0)
                    loa = -left - da
                    upa = min(right, pt.i32(hi_) - 1 - pt.i32(qa0)) - da
                    db = pt.i32(k0 + 2 * t) - pt.i32(qb0)
                    lob = -left - db
                    upb = min(right, pt.i32(hi_) - 1 - pt.i32(qb0)) - db
                    s0_0_0 = s0_0_0 if pt.i32(0) <= upa else NEG_INF
                    s0_0_0 = s0_0_0 if pt.i32(0) >= loa else NEG_INF
                    s0_0_1 = s0_0_1 if pt.i32(1) <= upa else NEG_INF
                    s0_0_1 = s0_0_1 if pt.i32(1) >= loa else NEG_INF
                    s0_0_2 = s0_0_2 if pt.i32(0) <= upb else NEG_INF
                    s0_0_2 = s0_0_2 if pt.i32(0) >= lob else NEG_INF
                    s0_0_3 = s0_0_3 if pt.i32(1) <= upb else NEG_INF
                    s0_0_3 = s0_0_3 if pt.i32(1) >= lob else NEG_INF
                    s0_1_0 = s0_1_0 if pt.i32(8) <= upa else NEG_INF
                    s0_1_0 = s0_1_0 if pt.i32(8) >= loa else NEG_INF
                    s0_1_1 = s0_1_1 if pt.i32(9) <= upa else NEG_INF
                    s0_1_1 = s0_1_1 if pt.i32(9) >= loa else NEG_INF
                    s0_1_2 = s0_1_2 if pt.i32(8) <= upb else NEG_INF
                    s0_1_2 = s0_1_2 if pt.i32(8) >= lob else NEG_INF
                    s0_1_3 = s0_1_3 if pt.i32(9) <= upb else NEG_INF
                    s0_1_3 = s0_1_3 if pt.i32(9) >= lob else NEG_INF
                    s0_2_0 = s0_2_0 if pt.i32(16) <= upa else NEG_INF
                    s0_2_0 = s0_2_0 if pt.i32(16) >= loa else NEG_INF
                    s0_2_1 = s0_2_1 if pt.i32(17) <= upa else NEG_INF
                    s0_2_1 = s0_2_1 if pt.i32(17) >= loa else NEG_INF
                    s0_2_2 = s0_2_2 if pt.i32(16) <= upb else NEG_INF
                    s0_2_2 = s0_2_2 if pt.i32(16) >= lob else NEG_INF
                    s0_2_3 = s0_2_3 if pt.i32(17) <= upb else NEG_INF
                    s0_2_3 = s0_2_3 if pt.i32(17) >= lob else NEG_INF
                    s0_3_0 = s0_3_0 if pt.i32(24) <= upa else NEG_INF
                    s0_3_0 = s0_3_0 if pt.i32(24) >= loa else NEG_INF
                    s0_3_1 = s0_3_1 if pt.i32(25) <= upa else NEG_INF
                    s0_3_1 = s0_3_1 if pt.i32(25) >= loa else NEG_INF
                    s0_3_2 = s0_3_2 if pt.i32(24) <= upb else NEG_INF
                    s0_3_2 = s0_3_2 if pt.i32(24) >= lob else NEG_INF
                    s0_3_3 = s0_3_3 if pt.i32(25) <= upb else NEG_INF
                    s0_3_3 = s0_3_3 if pt.i32(25) >= lob else NEG_INF
                    s0_4_0 = s0_4_0 if pt.i32(32) <= upa else NEG_INF
                    s0_4_0 = s0_4_0 if pt.i32(32) >= loa else NEG_INF
                    s0_4_1 = s0_4_1 if pt.i32(33) <= upa else NEG_INF
                    s0_4_1 = s0_4_1 if pt.i32(33) >= loa else NEG_INF
                    s0_4_2 = s0_4_2 if pt.i32(32) <= upb else NEG_INF
                    s0_4_2 = s0_4_2 if pt.i32(32) >= lob else NEG_INF
                    s0_4_3 = s0_4_3 if pt.i32(33) <= upb else NEG_INF
                    s0_4_3 = s0_4_3 if pt.i32(33) >= lob else NEG_INF
                    s0_5_0 = s0_5_0 if pt.i32(40) <= upa else NEG_INF
                    s0_5_0 = s0_5_0 if pt.i32(40) >= loa else NEG_INF
                    s0_5_1 = s0_5_1 if pt.i32(41) <= upa else NEG_INF
                    s0_5_1 = s0_5_1 if pt.i32(41) >= loa else NEG_INF
                    s0_5_2 = s0_5_2 if pt.i32(40) <= upb else NEG_INF
                    s0_5_2 = s0_5_2 if pt.i32(40) >= lob else NEG_INF
                    s0_5_3 = s0_5_3 if pt.i32(41) <= upb else NEG_INF
                    s0_5_3 = s0_5_3 if pt.i32(41) >= lob else NEG_INF
                    s0_6_0 = s0_6_0 if pt.i32(48) <= upa else NEG_INF
                    s0_6_0 = s0_6_0 if pt.i32(48) >= loa else NEG_INF
                    s0_6_1 = s0_6_1 if pt.i32(49) <= upa else NEG_INF
                    s0_6_1 = s0_6_1 if pt.i32(49) >= loa else NEG_INF
                    s0_6_2 = s0_6_2 if pt.i32(48) <= upb else NEG_INF
                    s0_6_2 = s0_6_2 if pt.i32(48) >= lob else NEG_INF
                    s0_6_3 = s0_6_3 if pt.i32(49) <= upb else NEG_INF
                    s0_6_3 = s0_6_3 if pt.i32(49) >= lob else NEG_INF
                    s0_7_0 = s0_7_0 if pt.i32(56) <= upa else NEG_INF
                    s0_7_0 = s0_7_0 if pt.i32(56) >= loa else NEG_INF
                    s0_7_1 = s0_7_1 if pt.i32(57) <= upa else NEG_INF
                    s0_7_1 = s0_7_1 if pt.i32(57) >= loa else NEG_INF
                    s0_7_2 = s0_7_2 if pt.i32(56) <= upb else NEG_INF
                    s0_7_2 = s0_7_2 if pt.i32(56) >= lob else NEG_INF
                    s0_7_3 = s0_7_3 if pt.i32(57) <= upb else NEG_INF
                    s0_7_3 = s0_7_3 if pt.i32(57) >= lob else NEG_INF
                else:
                    sl = pt.f32(1.0)
                    kj = k0 + 0 + 2 * t + 0
                    s0_0_0 = score(s0_0_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 1
                    s0_0_1 = score(s0_0_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 0
                    s0_0_2 = score(s0_0_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 0 + 2 * t + 1
                    s0_0_3 = score(s0_0_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 0
                    s0_1_0 = score(s0_1_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 1
                    s0_1_1 = score(s0_1_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 0
                    s0_1_2 = score(s0_1_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 8 + 2 * t + 1
                    s0_1_3 = score(s0_1_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 0
                    s0_2_0 = score(s0_2_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 1
                    s0_2_1 = score(s0_2_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 0
                    s0_2_2 = score(s0_2_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 16 + 2 * t + 1
                    s0_2_3 = score(s0_2_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 0
                    s0_3_0 = score(s0_3_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 1
                    s0_3_1 = score(s0_3_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 0
                    s0_3_2 = score(s0_3_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 24 + 2 * t + 1
                    s0_3_3 = score(s0_3_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 0
                    s0_4_0 = score(s0_4_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 1
                    s0_4_1 = score(s0_4_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 0
                    s0_4_2 = score(s0_4_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 32 + 2 * t + 1
                    s0_4_3 = score(s0_4_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 0
                    s0_5_0 = score(s0_5_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 1
                    s0_5_1 = score(s0_5_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 0
                    s0_5_2 = score(s0_5_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 40 + 2 * t + 1
                    s0_5_3 = score(s0_5_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 0
                    s0_6_0 = score(s0_6_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 1
                    s0_6_1 = score(s0_6_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 0
                    s0_6_2 = score(s0_6_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 48 + 2 * t + 1
                    s0_6_3 = score(s0_6_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 0
                    s0_7_0 = score(s0_7_0 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 1
                    s0_7_1 = score(s0_7_1 * scale, qa0, kj, hi_, left, right, mask, has_mask, ma0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 0
                    s0_7_2 = score(s0_7_2 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
                    kj = k0 + 56 + 2 * t + 1
                    s0_7_3 = score(s0_7_3 * scale, qb0, kj, hi_, left, right, mask, has_mask, mb0 + kj * msk, softcap) * LOG2E
            mx0 = max(quad_max(max(max(max(max(s0_0_0, s0_0_1), max(s0_1_0, s0_1_1)), max(max(s0_2_0, s0_2_1), max(s0_3_0, s0_3_1))), max(max(max(s0_4_0, s0_4_1), max(s0_5_0, s0_5_1)), max(max(s0_6_0, s0_6_1), max(s0_7_0, s0_7_1))))) * sl, m0_0)
            base0 = offset(mx0)
            alpha0 = pt.fast_exp2(m0_0 - base0)
            m0_0 = mx0
            mx1 = max(quad_max(max(max(max(max(s0_0_2, s0_0_3), max(s0_1_2, s0_1_3)), max(max(s0_2_2, s0_2_3), max(s0_3_2, s0_3_3))), max(max(max(s0_4_2, s0_4_3), max(s0_5_2, s0_5_3)), max(max(s0_6_2, s0_6_3), max(s0_7_2, s0_7_3))))) * sl, m0_1)
            base1 = offset(mx1)
            alpha1 = pt.fast_exp2(m0_1 - base1)
            m0_1 = mx1
            s0_0_0 = pt.fast_exp2(s0_0_0 * sl - base0)
            s0_0_1 = pt.fast_exp2(s0_0_1 * sl - base0)
            s0_0_2 = pt.fast_exp2(s0_0_2 * sl - base1)
            s0_0_3 = pt.fast_exp2(s0_0_3 * sl - base1)
            s0_1_0 = pt.fast_exp2(s0_1_0 * sl - base0)
            s0_1_1 = pt.fast_exp2(s0_1_1 * sl - base0)
            s0_1_2 = pt.fast_exp2(s0_1_2 * sl - base1)
            s0_1_3 = pt.fast_exp2(s0_1_3 * sl - base1)
            s0_2_0 = pt.fast_exp2(s0_2_0 * sl - base0)
            s0_2_1 = pt.fast_exp2(s0_2_1 * sl - base0)
            s0_2_2 = pt.fast_exp2(s0_2_2 * sl - base1)
            s0_2_3 = pt.fast_exp2(s0_2_3 * sl - base1)
            s0_3_0 = pt.fast_exp2(s0_3_0 * sl - base0)
            s0_3_1 = pt.fast_exp2(s0_3_1 * sl - base0)
            s0_3_2 = pt.fast_exp2(s0_3_2 * sl - base1)
            s0_3_3 = pt.fast_exp2(s0_3_3 * sl - base1)
            s0_4_0 = pt.fast_exp2(s0_4_0 * sl - base0)
            s0_4_1 = pt.fast_exp2(s0_4_1 * sl - base0)
            s0_4_2 = pt.fast_exp2(s0_4_2 * sl - base1)
            s0_4_3 = pt.fast_exp2(s0_4_3 * sl - base1)
            s0_5_0 = pt.fast_exp2(s0_5_0 * sl - base0)
            s0_5_1 = pt.fast_exp2(s0_5_1 * sl - base0)
            s0_5_2 = pt.fast_exp2(s0_5_2 * sl - base1)
            s0_5_3 = pt.fast_exp2(s0_5_3 * sl - base1)
            s0_6_0 = pt.fast_exp2(s0_6_0 * sl - base0)
            s0_6_1 = pt.fast_exp2(s0_6_1 * sl - base0)
            s0_6_2 = pt.fast_exp2(s0_6_2 * sl - base1)
            s0_6_3 = pt.fast_exp2(s0_6_3 * sl - base1)
            s0_7_0 = pt.fast_exp2(s0_7_0 * sl - base0)
            s0_7_1 = pt.fast_exp2(s0_7_1 * sl - base0)
            s0_7_2 = pt.fast_exp2(s0_7_2 * sl - base1)
            s0_7_3 = pt.fast_exp2(s0_7_3 * sl - base1)
            l0_0 = l0_0 * alpha0 + ((((s0_0_0 + s0_0_1) + (s0_1_0 + s0_1_1)) + ((s0_2_0 + s0_2_1) + (s0_3_0 + s0_3_1))) + (((s0_4_0 + s0_4_1) + (s0_5_0 + s0_5_1)) + ((s0_6_0 + s0_6_1) + (s0_7_0 + s0_7_1))))
            l0_1 = l0_1 * alpha1 + ((((s0_0_2 + s0_0_3) + (s0_1_2 + s0_1_3)) + ((s0_2_2 + s0_2_3) + (s0_3_2 + s0_3_3))) + (((s0_4_2 + s0_4_3) + (s0_5_2 + s0_5_3)) + ((s0_6_2 + s0_6_3) + (s0_7_2 + s0_7_3))))
            o0_0_0 = o0_0_0 * alpha0
            o0_0_1 = o0_0_1 * alpha0
            o0_0_2 = o0_0_2 * alpha1
            o0_0_3 = o0_0_3 * alpha1
            o0_1_0 = o0_1_0 * alpha0
            o0_1_1 = o0_1_1 * alpha0
            o0_1_2 = o0_1_2 * alpha1
            o0_1_3 = o0_1_3 * alpha1
            o0_2_0 = o0_2_0 * alpha0
            o0_2_1 = o0_2_1 * alpha0
            o0_2_2 = o0_2_2 * alpha1
            o0_2_3 = o0_2_3 * alpha1
            o0_3_0 = o0_3_0 * alpha0
            o0_3_1 = o0_3_1 * alpha0
            o0_3_2 = o0_3_2 * alpha1
            o0_3_3 = o0_3_3 * alpha1
            o0_4_0 = o0_4_0 * alpha0
            o0_4_1 = o0_4_1 * alpha0
            o0_4_2 = o0_4_2 * alpha1
            o0_4_3 = o0_4_3 * alpha1
            o0_5_0 = o0_5_0 * alpha0
            o0_5_1 = o0_5_1 * alpha0
            o0_5_2 = o0_5_2 * alpha1
            o0_5_3 = o0_5_3 * alpha1
            o0_6_0 = o0_6_0 * alpha0
            o0_6_1 = o0_6_1 * alpha0
            o0_6_2 = o0_6_2 * alpha1
            o0_6_3 = o0_6_3 * alpha1
            o0_7_0 = o0_7_0 * alpha0
            o0_7_1 = o0_7_1 * alpha0
            o0_7_2 = o0_7_2 * alpha1
            o0_7_3 = o0_7_3 * alpha1
            o0_8_0 = o0_8_0 * alpha0
            o0_8_1 = o0_8_1 * alpha0
            o0_8_2 = o0_8_2 * alpha1
            o0_8_3 = o0_8_3 * alpha1
            o0_9_0 = o0_9_0 * alpha0
            o0_9_1 = o0_9_1 * alpha0
            o0_9_2 = o0_9_2 * alpha1
            o0_9_3 = o0_9_3 * alpha1
            o0_10_0 = o0_10_0 * alpha0
            o0_10_1 = o0_10_1 * alpha0
            o0_10_2 = o0_10_2 * alpha1
            o0_10_3 = o0_10_3 * alpha1
            o0_11_0 = o0_11_0 * alpha0
            o0_11_1 = o0_11_1 * alpha0
            o0_11_2 = o0_11_2 * alpha1
            o0_11_3 = o0_11_3 * alpha1
            o0_12_0 = o0_12_0 * alpha0
            o0_12_1 = o0_12_1 * alpha0
            o0_12_2 = o0_12_2 * alpha1
            o0_12_3 = o0_12_3 * alpha1
            o0_13_0 = o0_13_0 * alpha0
            o0_13_1 = o0_13_1 * alpha0
            o0_13_2 = o0_13_2 * alpha1
            o0_13_3 = o0_13_3 * alpha1
            o0_14_0 = o0_14_0 * alpha0
            o0_14_1 = o0_14_1 * alpha0
            o0_14_2 = o0_14_2 * alpha1
            o0_14_3 = o0_14_3 * alpha1
            o0_15_0 = o0_15_0 * alpha0
            o0_15_1 = o0_15_1 * alpha0
            o0_15_2 = o0_15_2 * alpha1
            o0_15_3 = o0_15_3 * alpha1
            p0_0 = to_t(s0_0_0)
            p0_1 = to_t(s0_0_1)
            p0_2 = to_t(s0_0_2)
            p0_3 = to_t(s0_0_3)
            p0_4 = to_t(s0_1_0)
            p0_5 = to_t(s0_1_1)
            p0_6 = to_t(s0_1_2)
            p0_7 = to_t(s0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 32)
            o0_8_0, o0_8_1, o0_8_2, o0_8_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_8_0, o0_8_1, o0_8_2, o0_8_3)
            o0_9_0, o0_9_1, o0_9_2, o0_9_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_9_0, o0_9_1, o0_9_2, o0_9_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 32)
            o0_10_0, o0_10_1, o0_10_2, o0_10_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_10_0, o0_10_1, o0_10_2, o0_10_3)
            o0_11_0, o0_11_1, o0_11_2, o0_11_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_11_0, o0_11_1, o0_11_2, o0_11_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 32)
            o0_12_0, o0_12_1, o0_12_2, o0_12_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_12_0, o0_12_1, o0_12_2, o0_12_3)
            o0_13_0, o0_13_1, o0_13_2, o0_13_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_13_0, o0_13_1, o0_13_2, o0_13_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 32)
            o0_14_0, o0_14_1, o0_14_2, o0_14_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_14_0, o0_14_1, o0_14_2, o0_14_3)
            o0_15_0, o0_15_1, o0_15_2, o0_15_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_15_0, o0_15_1, o0_15_2, o0_15_3)
            p0_0 = to_t(s0_2_0)
            p0_1 = to_t(s0_2_1)
            p0_2 = to_t(s0_2_2)
            p0_3 = to_t(s0_2_3)
            p0_4 = to_t(s0_3_0)
            p0_5 = to_t(s0_3_1)
            p0_6 = to_t(s0_3_2)
            p0_7 = to_t(s0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 1024)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 1024)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 1024)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 1024)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 1056)
            o0_8_0, o0_8_1, o0_8_2, o0_8_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_8_0, o0_8_1, o0_8_2, o0_8_3)
            o0_9_0, o0_9_1, o0_9_2, o0_9_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_9_0, o0_9_1, o0_9_2, o0_9_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 1056)
            o0_10_0, o0_10_1, o0_10_2, o0_10_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_10_0, o0_10_1, o0_10_2, o0_10_3)
            o0_11_0, o0_11_1, o0_11_2, o0_11_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_11_0, o0_11_1, o0_11_2, o0_11_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 1056)
            o0_12_0, o0_12_1, o0_12_2, o0_12_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_12_0, o0_12_1, o0_12_2, o0_12_3)
            o0_13_0, o0_13_1, o0_13_2, o0_13_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_13_0, o0_13_1, o0_13_2, o0_13_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 1056)
            o0_14_0, o0_14_1, o0_14_2, o0_14_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_14_0, o0_14_1, o0_14_2, o0_14_3)
            o0_15_0, o0_15_1, o0_15_2, o0_15_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_15_0, o0_15_1, o0_15_2, o0_15_3)
            p0_0 = to_t(s0_4_0)
            p0_1 = to_t(s0_4_1)
            p0_2 = to_t(s0_4_2)
            p0_3 = to_t(s0_4_3)
            p0_4 = to_t(s0_5_0)
            p0_5 = to_t(s0_5_1)
            p0_6 = to_t(s0_5_2)
            p0_7 = to_t(s0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 2048)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 2048)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 2048)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 2048)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 2080)
            o0_8_0, o0_8_1, o0_8_2, o0_8_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_8_0, o0_8_1, o0_8_2, o0_8_3)
            o0_9_0, o0_9_1, o0_9_2, o0_9_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_9_0, o0_9_1, o0_9_2, o0_9_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 2080)
            o0_10_0, o0_10_1, o0_10_2, o0_10_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_10_0, o0_10_1, o0_10_2, o0_10_3)
            o0_11_0, o0_11_1, o0_11_2, o0_11_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_11_0, o0_11_1, o0_11_2, o0_11_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 2080)
            o0_12_0, o0_12_1, o0_12_2, o0_12_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_12_0, o0_12_1, o0_12_2, o0_12_3)
            o0_13_0, o0_13_1, o0_13_2, o0_13_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_13_0, o0_13_1, o0_13_2, o0_13_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 2080)
            o0_14_0, o0_14_1, o0_14_2, o0_14_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_14_0, o0_14_1, o0_14_2, o0_14_3)
            o0_15_0, o0_15_1, o0_15_2, o0_15_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_15_0, o0_15_1, o0_15_2, o0_15_3)
            p0_0 = to_t(s0_6_0)
            p0_1 = to_t(s0_6_1)
            p0_2 = to_t(s0_6_2)
            p0_3 = to_t(s0_6_3)
            p0_4 = to_t(s0_7_0)
            p0_5 = to_t(s0_7_1)
            p0_6 = to_t(s0_7_2)
            p0_7 = to_t(s0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 3072)
            o0_0_0, o0_0_1, o0_0_2, o0_0_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_0_0, o0_0_1, o0_0_2, o0_0_3)
            o0_1_0, o0_1_1, o0_1_2, o0_1_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_1_0, o0_1_1, o0_1_2, o0_1_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 3072)
            o0_2_0, o0_2_1, o0_2_2, o0_2_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_2_0, o0_2_1, o0_2_2, o0_2_3)
            o0_3_0, o0_3_1, o0_3_2, o0_3_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_3_0, o0_3_1, o0_3_2, o0_3_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 3072)
            o0_4_0, o0_4_1, o0_4_2, o0_4_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_4_0, o0_4_1, o0_4_2, o0_4_3)
            o0_5_0, o0_5_1, o0_5_2, o0_5_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_5_0, o0_5_1, o0_5_2, o0_5_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 3072)
            o0_6_0, o0_6_1, o0_6_2, o0_6_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_6_0, o0_6_1, o0_6_2, o0_6_3)
            o0_7_0, o0_7_1, o0_7_2, o0_7_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_7_0, o0_7_1, o0_7_2, o0_7_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo0 + 3104)
            o0_8_0, o0_8_1, o0_8_2, o0_8_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_8_0, o0_8_1, o0_8_2, o0_8_3)
            o0_9_0, o0_9_1, o0_9_2, o0_9_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_9_0, o0_9_1, o0_9_2, o0_9_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo1 + 3104)
            o0_10_0, o0_10_1, o0_10_2, o0_10_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_10_0, o0_10_1, o0_10_2, o0_10_3)
            o0_11_0, o0_11_1, o0_11_2, o0_11_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_11_0, o0_11_1, o0_11_2, o0_11_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo2 + 3104)
            o0_12_0, o0_12_1, o0_12_2, o0_12_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_12_0, o0_12_1, o0_12_2, o0_12_3)
            o0_13_0, o0_13_1, o0_13_2, o0_13_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_13_0, o0_13_1, o0_13_2, o0_13_3)
            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vo3 + 3104)
            o0_14_0, o0_14_1, o0_14_2, o0_14_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y0), hi(y0), lo(y1), hi(y1), o0_14_0, o0_14_1, o0_14_2, o0_14_3)
            o0_15_0, o0_15_1, o0_15_2, o0_15_3 = pt.mma_m16n8k16(p0_0, p0_1, p0_2, p0_3, p0_4, p0_5, p0_6, p0_7, lo(y2), hi(y2), lo(y3), hi(y3), o0_15_0, o0_15_1, o0_15_2, o0_15_3)
        pt.copy_async_wait(0)
        inv0 = normalizer(quad_sum(l0_0), zero_empty)
        inv1 = normalizer(quad_sum(l0_1), zero_empty)
        ra = (bh * Lq + qa0) * 128
        rb = (bh * Lq + qb0) * 128
        if qa0 < Lq:
            store2(o, ra, 0 + 2 * t, o0_0_0, o0_0_1, inv0)
            store2(o, ra, 8 + 2 * t, o0_1_0, o0_1_1, inv0)
            store2(o, ra, 16 + 2 * t, o0_2_0, o0_2_1, inv0)
            store2(o, ra, 24 + 2 * t, o0_3_0, o0_3_1, inv0)
            store2(o, ra, 32 + 2 * t, o0_4_0, o0_4_1, inv0)
            store2(o, ra, 40 + 2 * t, o0_5_0, o0_5_1, inv0)
            store2(o, ra, 48 + 2 * t, o0_6_0, o0_6_1, inv0)
            store2(o, ra, 56 + 2 * t, o0_7_0, o0_7_1, inv0)
            store2(o, ra, 64 + 2 * t, o0_8_0, o0_8_1, inv0)
            store2(o, ra, 72 + 2 * t, o0_9_0, o0_9_1, inv0)
            store2(o, ra, 80 + 2 * t, o0_10_0, o0_10_1, inv0)
            store2(o, ra, 88 + 2 * t, o0_11_0, o0_11_1, inv0)
            store2(o, ra, 96 + 2 * t, o0_12_0, o0_12_1, inv0)
            store2(o, ra, 104 + 2 * t, o0_13_0, o0_13_1, inv0)
            store2(o, ra, 112 + 2 * t, o0_14_0, o0_14_1, inv0)
            store2(o, ra, 120 + 2 * t, o0_15_0, o0_15_1, inv0)
        if qb0 < Lq:
            store2(o, rb, 0 + 2 * t, o0_0_2, o0_0_3, inv1)
            store2(o, rb, 8 + 2 * t, o0_1_2, o0_1_3, inv1)
            store2(o, rb, 16 + 2 * t, o0_2_2, o0_2_3, inv1)
            store2(o, rb, 24 + 2 * t, o0_3_2, o0_3_3, inv1)
            store2(o, rb, 32 + 2 * t, o0_4_2, o0_4_3, inv1)
            store2(o, rb, 40 + 2 * t, o0_5_2, o0_5_3, inv1)
            store2(o, rb, 48 + 2 * t, o0_6_2, o0_6_3, inv1)
            store2(o, rb, 56 + 2 * t, o0_7_2, o0_7_3, inv1)
            store2(o, rb, 64 + 2 * t, o0_8_2, o0_8_3, inv1)
            store2(o, rb, 72 + 2 * t, o0_9_2, o0_9_3, inv1)
            store2(o, rb, 80 + 2 * t, o0_10_2, o0_10_3, inv1)
            store2(o, rb, 88 + 2 * t, o0_11_2, o0_11_3, inv1)
            store2(o, rb, 96 + 2 * t, o0_12_2, o0_12_3, inv1)
            store2(o, rb, 104 + 2 * t, o0_13_2, o0_13_3, inv1)
            store2(o, rb, 112 + 2 * t, o0_14_2, o0_14_3, inv1)
            store2(o, rb, 120 + 2 * t, o0_15_2, o0_15_3, inv1)

    return attention_tc


attention_wg_bf16_d64 = _make_d64(pt.bf16, "attention_wg_bf16_d64")
attention_wg_f16_d64 = _make_d64(pt.f16, "attention_wg_f16_d64")
attention_wg_bf16_d128 = _make_d128(pt.bf16, "attention_wg_bf16_d128")
attention_wg_f16_d128 = _make_d128(pt.f16, "attention_wg_f16_d128")
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


def example_attention_wg_bf16_d64(rng):
    return _examples(ml_dtypes.bfloat16, 64)


def example_attention_wg_f16_d64(rng):
    return _examples(np.float16, 64)


def example_attention_wg_bf16_d128(rng):
    return _examples(ml_dtypes.bfloat16, 128)


def example_attention_wg_f16_d128(rng):
    return _examples(np.float16, 128)
