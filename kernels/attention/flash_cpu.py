"""Flash attention for the CPU: O = softmax(scale * Q K^T (softcapped, masked)) V without an L x L buffer.

A workgroup is one thread (the CPU device splits the grid over its cores) that owns a block of BQ
queries of one (batch, head) row: group x picks the query block, group y the row bh = b * Hq + h. It
walks the keys BK at a time, keeping per query the running maximum m, the running sum l of exp(s - m)
and the f32 accumulator of sum exp(s - m) v (the online softmax): when a tile raises the maximum, the
old sum and accumulator are rescaled by exp(m_old - m_new). Only the keys some query of the block may
see are visited (causal and sliding-window masking skip whole tiles).

Why this loop order: LLVM vectorizes loops of independent lanes, not float reductions (it may not
reassociate). So the scores of a tile are computed as s[i, :] += q[i, d] * kT[d, :] over the BK keys of
the tile (K transposed into a small stack array once per tile, amortized over BQ queries), the
exponentials as one loop over the tile, and P V as acc[i, :] += p[i, j] * v[j, :] over the head dim:
every hot inner loop is a contiguous, fixed-stride vector loop.

Layout: q [B * Hq, Lq, D], k [B * Hk, Lk, D], v [B * Hk, Lk, Dv], o [B * Hq, Lq, Dv], row-major, of one
dtype T (f32, f16 or bf16; 16-bit inputs are widened on load, the result rounded once). GQA: q head h
reads kv head h // ratio (ratio = Hq / Hk). `mask` is an additive f32 mask read at
b * msb + h * msh + i * msq + j * msk (strides of 0 broadcast it) when has_mask is non-zero. Query i
may see key j when -left <= j - i <= right (causal is right = 0, top-left aligned; "unbounded" is a
large value). softcap > 0 applies softcap * tanh(s / softcap) before the mask. A query that sees no key
gets 0 when zero_empty is non-zero (PyTorch's rule), else NaN (what softmax of all -inf gives).
Launch: threads = (ceil(Lq / BQ), B * Hq, 1), workgroup (1, 1, 1); D, Dv <= DMAX."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BQ = 16           # queries per work item
BK = 64           # keys per tile
DMAX = 256        # largest head dim
NEG_INF = float("-inf")


@pt.device_fn
def key_lo(q_first, left):
    """The first key query `q_first` may see (window's left edge, clamped at 0)."""
    return pt.u32(max(pt.i32(q_first) - left, 0))


@pt.device_fn
def key_hi(q_last, right, Lk):
    """One past the last key query `q_last` may see (window's right edge, clamped to Lk)."""
    return pt.u32(min(max(pt.i32(q_last) + right + 1, 0), pt.i32(Lk)))


@pt.device_fn
def score(x, qi, kj, Lk, left, right, mask, has_mask, at, softcap):
    """The logit of query qi against key kj: softcapped, plus the mask, -inf where not visible."""
    rel = pt.i32(kj) - pt.i32(qi)
    r = pt.f32(NEG_INF)
    if kj < Lk and rel >= -left and rel <= right:
        r = x
        if softcap > 0.0:
            r = softcap * pt.tanh(x / softcap)
        if has_mask != 0:
            r = r + mask[at]
    return r


def _make(T, name):
    @pt.kernel(workgroup=(1, 1, 1), name=name, checks=False)
    def attention_cpu(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], o: pt.Out[T],
                      Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,
                      left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,
                      msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):
        qs = pt.shared(pt.f32, BQ * DMAX)
        kt = pt.shared(pt.f32, DMAX * BK)
        s = pt.shared(pt.f32, BQ * BK)
        acc = pt.shared(pt.f32, BQ * DMAX)
        ms = pt.shared(pt.f32, BQ)
        ls = pt.shared(pt.f32, BQ)
        # 64-bit indices: offsets of one base by constants are then provably adjacent (SLP vectorizes them)
        nD = pt.u64(D)
        nDv = pt.u64(Dv)
        nLq = pt.u64(Lq)
        nLk = pt.u64(Lk)
        bh = pt.group_index_y()
        q0 = pt.group_index_x() * BQ
        nq = min(pt.u32(BQ), Lq - q0)
        b = bh // Hq
        h = bh % Hq
        kvh = pt.u64(b * (Hq // ratio) + h // ratio)
        qbase = pt.u64(bh) * nLq * nD
        kbase = kvh * nLk * nD
        vbase = kvh * nLk * nDv
        obase = pt.u64(bh) * nLq * nDv
        mbase = pt.u64(b) * pt.u64(msb) + pt.u64(h) * pt.u64(msh)
        dfull = nDv - nDv % 16
        plain = has_mask == 0 and softcap <= 0.0   # no per-element score transform
        for i in range(pt.u64(nq)):
            qrow = qbase + (pt.u64(q0) + i) * nD
            for d in range(nD):
                qs[i * DMAX + d] = pt.f32(q[qrow + d]) * scale
            for d in range(nDv):
                acc[i * DMAX + d] = 0.0
            ms[i] = NEG_INF
            ls[i] = 0.0
        lo = key_lo(q0, left)
        hi = key_hi(q0 + nq - 1, right, Lk)
        for k0 in range(lo, hi, BK):
            nk = pt.u64(min(pt.u32(BK), hi - k0))
            for j in range(nk):
                krow = kbase + (pt.u64(k0) + j) * nD
                for d in range(nD):
                    kt[d * BK + j] = pt.f32(k[krow + d])
            # scores of 4 queries x 16 keys at a time in registers (8 independent vector chains)
            for i0 in range(pt.u64(0), pt.u64(nq), 4):
                for jb in range(0, BK, 16):
                    a0_0 = pt.f32(0.0)
                    a0_1 = pt.f32(0.0)
                    a0_2 = pt.f32(0.0)
                    a0_3 = pt.f32(0.0)
                    a0_4 = pt.f32(0.0)
                    a0_5 = pt.f32(0.0)
                    a0_6 = pt.f32(0.0)
                    a0_7 = pt.f32(0.0)
                    a0_8 = pt.f32(0.0)
                    a0_9 = pt.f32(0.0)
                    a0_10 = pt.f32(0.0)
                    a0_11 = pt.f32(0.0)
                    a0_12 = pt.f32(0.0)
                    a0_13 = pt.f32(0.0)
                    a0_14 = pt.f32(0.0)
                    a0_15 = pt.f32(0.0)
                    a1_0 = pt.f32(0.0)
                    a1_1 = pt.f32(0.0)
                    a1_2 = pt.f32(0.0)
                    a1_3 = pt.f32(0.0)
                    a1_4 = pt.f32(0.0)
                    a1_5 = pt.f32(0.0)
                    a1_6 = pt.f32(0.0)
                    a1_7 = pt.f32(0.0)
                    a1_8 = pt.f32(0.0)
                    a1_9 = pt.f32(0.0)
                    a1_10 = pt.f32(0.0)
                    a1_11 = pt.f32(0.0)
                    a1_12 = pt.f32(0.0)
                    a1_13 = pt.f32(0.0)
                    a1_14 = pt.f32(0.0)
                    a1_15 = pt.f32(0.0)
                    a2_0 = pt.f32(0.0)
                    a2_1 = pt.f32(0.0)
                    a2_2 = pt.f32(0.0)
                    a2_3 = pt.f32(0.0)
                    a2_4 = pt.f32(0.0)
                    a2_5 = pt.f32(0.0)
                    a2_6 = pt.f32(0.0)
                    a2_7 = pt.f32(0.0)
                    a2_8 = pt.f32(0.0)
                    a2_9 = pt.f32(0.0)
                    a2_10 = pt.f32(0.0)
                    a2_11 = pt.f32(0.0)
                    a2_12 = pt.f32(0.0)
                    a2_13 = pt.f32(0.0)
                    a2_14 = pt.f32(0.0)
                    a2_15 = pt.f32(0.0)
                    a3_0 = pt.f32(0.0)
                    a3_1 = pt.f32(0.0)
                    a3_2 = pt.f32(0.0)
                    a3_3 = pt.f32(0.0)
                    a3_4 = pt.f32(0.0)
                    a3_5 = pt.f32(0.0)
                    a3_6 = pt.f32(0.0)
                    a3_7 = pt.f32(0.0)
                    a3_8 = pt.f32(0.0)
                    a3_9 = pt.f32(0.0)
                    a3_10 = pt.f32(0.0)
                    a3_11 = pt.f32(0.0)
                    a3_12 = pt.f32(0.0)
                    a3_13 = pt.f32(0.0)
                    a3_14 = pt.f32(0.0)
                    a3_15 = pt.f32(0.0)
                    for d in range(nD):
                        kd = d * BK + jb
                        w0 = qs[(i0 + 0) * DMAX + d]
                        w1 = qs[(i0 + 1) * DMAX + d]
                        w2 = qs[(i0 + 2) * DMAX + d]
                        w3 = qs[(i0 + 3) * DMAX + d]
                        a0_0 += w0 * kt[kd + 0]
                        a0_1 += w0 * kt[kd + 1]
                        a0_2 += w0 * kt[kd + 2]
                        a0_3 += w0 * kt[kd + 3]
                        a0_4 += w0 * kt[kd + 4]
                        a0_5 += w0 * kt[kd + 5]
                        a0_6 += w0 * kt[kd + 6]
                        a0_7 += w0 * kt[kd + 7]
                        a0_8 += w0 * kt[kd + 8]
                        a0_9 += w0 * kt[kd + 9]
                        a0_10 += w0 * kt[kd + 10]
                        a0_11 += w0 * kt[kd + 11]
                        a0_12 += w0 * kt[kd + 12]
                        a0_13 += w0 * kt[kd + 13]
                        a0_14 += w0 * kt[kd + 14]
                        a0_15 += w0 * kt[kd + 15]
                        a1_0 += w1 * kt[kd + 0]
                        a1_1 += w1 * kt[kd + 1]
                        a1_2 += w1 * kt[kd + 2]
                        a1_3 += w1 * kt[kd + 3]
                        a1_4 += w1 * kt[kd + 4]
                        a1_5 += w1 * kt[kd + 5]
                        a1_6 += w1 * kt[kd + 6]
                        a1_7 += w1 * kt[kd + 7]
                        a1_8 += w1 * kt[kd + 8]
                        a1_9 += w1 * kt[kd + 9]
                        a1_10 += w1 * kt[kd + 10]
                        a1_11 += w1 * kt[kd + 11]
                        a1_12 += w1 * kt[kd + 12]
                        a1_13 += w1 * kt[kd + 13]
                        a1_14 += w1 * kt[kd + 14]
                        a1_15 += w1 * kt[kd + 15]
                        a2_0 += w2 * kt[kd + 0]
                        a2_1 += w2 * kt[kd + 1]
                        a2_2 += w2 * kt[kd + 2]
                        a2_3 += w2 * kt[kd + 3]
                        a2_4 += w2 * kt[kd + 4]
                        a2_5 += w2 * kt[kd + 5]
                        a2_6 += w2 * kt[kd + 6]
                        a2_7 += w2 * kt[kd + 7]
                        a2_8 += w2 * kt[kd + 8]
                        a2_9 += w2 * kt[kd + 9]
                        a2_10 += w2 * kt[kd + 10]
                        a2_11 += w2 * kt[kd + 11]
                        a2_12 += w2 * kt[kd + 12]
                        a2_13 += w2 * kt[kd + 13]
                        a2_14 += w2 * kt[kd + 14]
                        a2_15 += w2 * kt[kd + 15]
                        a3_0 += w3 * kt[kd + 0]
                        a3_1 += w3 * kt[kd + 1]
                        a3_2 += w3 * kt[kd + 2]
                        a3_3 += w3 * kt[kd + 3]
                        a3_4 += w3 * kt[kd + 4]
                        a3_5 += w3 * kt[kd + 5]
                        a3_6 += w3 * kt[kd + 6]
                        a3_7 += w3 * kt[kd + 7]
                        a3_8 += w3 * kt[kd + 8]
                        a3_9 += w3 * kt[kd + 9]
                        a3_10 += w3 * kt[kd + 10]
                        a3_11 += w3 * kt[kd + 11]
                        a3_12 += w3 * kt[kd + 12]
                        a3_13 += w3 * kt[kd + 13]
                        a3_14 += w3 * kt[kd + 14]
                        a3_15 += w3 * kt[kd + 15]
                    s[(i0 + 0) * BK + jb + 0] = a0_0
                    s[(i0 + 0) * BK + jb + 1] = a0_1
                    s[(i0 + 0) * BK + jb + 2] = a0_2
                    s[(i0 + 0) * BK + jb + 3] = a0_3
                    s[(i0 + 0) * BK + jb + 4] = a0_4
                    s[(i0 + 0) * BK + jb + 5] = a0_5
                    s[(i0 + 0) * BK + jb + 6] = a0_6
                    s[(i0 + 0) * BK + jb + 7] = a0_7
                    s[(i0 + 0) * BK + jb + 8] = a0_8
                    s[(i0 + 0) * BK + jb + 9] = a0_9
                    s[(i0 + 0) * BK + jb + 10] = a0_10
                    s[(i0 + 0) * BK + jb + 11] = a0_11
                    s[(i0 + 0) * BK + jb + 12] = a0_12
                    s[(i0 + 0) * BK + jb + 13] = a0_13
                    s[(i0 + 0) * BK + jb + 14] = a0_14
                    s[(i0 + 0) * BK + jb + 15] = a0_15
                    s[(i0 + 1) * BK + jb + 0] = a1_0
                    s[(i0 + 1) * BK + jb + 1] = a1_1
                    s[(i0 + 1) * BK + jb + 2] = a1_2
                    s[(i0 + 1) * BK + jb + 3] = a1_3
                    s[(i0 + 1) * BK + jb + 4] = a1_4
                    s[(i0 + 1) * BK + jb + 5] = a1_5
                    s[(i0 + 1) * BK + jb + 6] = a1_6
                    s[(i0 + 1) * BK + jb + 7] = a1_7
                    s[(i0 + 1) * BK + jb + 8] = a1_8
                    s[(i0 + 1) * BK + jb + 9] = a1_9
                    s[(i0 + 1) * BK + jb + 10] = a1_10
                    s[(i0 + 1) * BK + jb + 11] = a1_11
                    s[(i0 + 1) * BK + jb + 12] = a1_12
                    s[(i0 + 1) * BK + jb + 13] = a1_13
                    s[(i0 + 1) * BK + jb + 14] = a1_14
                    s[(i0 + 1) * BK + jb + 15] = a1_15
                    s[(i0 + 2) * BK + jb + 0] = a2_0
                    s[(i0 + 2) * BK + jb + 1] = a2_1
                    s[(i0 + 2) * BK + jb + 2] = a2_2
                    s[(i0 + 2) * BK + jb + 3] = a2_3
                    s[(i0 + 2) * BK + jb + 4] = a2_4
                    s[(i0 + 2) * BK + jb + 5] = a2_5
                    s[(i0 + 2) * BK + jb + 6] = a2_6
                    s[(i0 + 2) * BK + jb + 7] = a2_7
                    s[(i0 + 2) * BK + jb + 8] = a2_8
                    s[(i0 + 2) * BK + jb + 9] = a2_9
                    s[(i0 + 2) * BK + jb + 10] = a2_10
                    s[(i0 + 2) * BK + jb + 11] = a2_11
                    s[(i0 + 2) * BK + jb + 12] = a2_12
                    s[(i0 + 2) * BK + jb + 13] = a2_13
                    s[(i0 + 2) * BK + jb + 14] = a2_14
                    s[(i0 + 2) * BK + jb + 15] = a2_15
                    s[(i0 + 3) * BK + jb + 0] = a3_0
                    s[(i0 + 3) * BK + jb + 1] = a3_1
                    s[(i0 + 3) * BK + jb + 2] = a3_2
                    s[(i0 + 3) * BK + jb + 3] = a3_3
                    s[(i0 + 3) * BK + jb + 4] = a3_4
                    s[(i0 + 3) * BK + jb + 5] = a3_5
                    s[(i0 + 3) * BK + jb + 6] = a3_6
                    s[(i0 + 3) * BK + jb + 7] = a3_7
                    s[(i0 + 3) * BK + jb + 8] = a3_8
                    s[(i0 + 3) * BK + jb + 9] = a3_9
                    s[(i0 + 3) * BK + jb + 10] = a3_10
                    s[(i0 + 3) * BK + jb + 11] = a3_11
                    s[(i0 + 3) * BK + jb + 12] = a3_12
                    s[(i0 + 3) * BK + jb + 13] = a3_13
                    s[(i0 + 3) * BK + jb + 14] = a3_14
                    s[(i0 + 3) * BK + jb + 15] = a3_15
            for i in range(pt.u64(nq)):
                row = i * BK
                qi = q0 + pt.u32(i)
                mrow = mbase + pt.u64(qi) * pt.u64(msq)
                m_old = ms[i]
                mx = m_old
                rel = pt.i32(k0) - pt.i32(qi)
                if plain and k0 + BK <= hi and rel >= -left and rel + (BK - 1) <= right:
                    # every key of the tile is visible: a branch-free maximum in 8 lanes
                    m0 = pt.f32(NEG_INF)
                    m1 = pt.f32(NEG_INF)
                    m2 = pt.f32(NEG_INF)
                    m3 = pt.f32(NEG_INF)
                    m4 = pt.f32(NEG_INF)
                    m5 = pt.f32(NEG_INF)
                    m6 = pt.f32(NEG_INF)
                    m7 = pt.f32(NEG_INF)
                    for jb in range(0, BK, 8):
                        m0 = max(m0, s[row + jb + 0])
                        m1 = max(m1, s[row + jb + 1])
                        m2 = max(m2, s[row + jb + 2])
                        m3 = max(m3, s[row + jb + 3])
                        m4 = max(m4, s[row + jb + 4])
                        m5 = max(m5, s[row + jb + 5])
                        m6 = max(m6, s[row + jb + 6])
                        m7 = max(m7, s[row + jb + 7])
                    mx = max(mx, max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7))))
                else:
                    for j in range(pt.u64(BK)):
                        kj = k0 + pt.u32(j)
                        at = mrow + pt.u64(kj) * pt.u64(msk)
                        x = score(s[row + j], qi, kj, hi, left, right, mask, has_mask, at, softcap)
                        s[row + j] = x
                        mx = max(mx, x)
                base = mx
                if mx == NEG_INF:          # nothing visible yet: exp(-inf - 0) keeps every term 0
                    base = 0.0
                for j in range(pt.u64(BK)):
                    s[row + j] = pt.exp(s[row + j] - base)
                t0 = pt.f32(0.0)
                t1 = pt.f32(0.0)
                t2 = pt.f32(0.0)
                t3 = pt.f32(0.0)
                t4 = pt.f32(0.0)
                t5 = pt.f32(0.0)
                t6 = pt.f32(0.0)
                t7 = pt.f32(0.0)
                for jb in range(0, BK, 8):
                    t0 += s[row + jb + 0]
                    t1 += s[row + jb + 1]
                    t2 += s[row + jb + 2]
                    t3 += s[row + jb + 3]
                    t4 += s[row + jb + 4]
                    t5 += s[row + jb + 5]
                    t6 += s[row + jb + 6]
                    t7 += s[row + jb + 7]
                total = ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7))
                alpha = pt.exp(m_old - base)
                ls[i] = ls[i] * alpha + total
                ms[i] = mx
                arow = i * DMAX
                for d in range(nDv):
                    acc[arow + d] *= alpha
            # P V: 4 queries x 16 output dims at a time in registers, over the tile's keys
            for i0 in range(pt.u64(0), pt.u64(nq), 4):
                for d0 in range(pt.u64(0), dfull, 16):
                    c0_0 = acc[(i0 + 0) * DMAX + d0 + 0]
                    c0_1 = acc[(i0 + 0) * DMAX + d0 + 1]
                    c0_2 = acc[(i0 + 0) * DMAX + d0 + 2]
                    c0_3 = acc[(i0 + 0) * DMAX + d0 + 3]
                    c0_4 = acc[(i0 + 0) * DMAX + d0 + 4]
                    c0_5 = acc[(i0 + 0) * DMAX + d0 + 5]
                    c0_6 = acc[(i0 + 0) * DMAX + d0 + 6]
                    c0_7 = acc[(i0 + 0) * DMAX + d0 + 7]
                    c0_8 = acc[(i0 + 0) * DMAX + d0 + 8]
                    c0_9 = acc[(i0 + 0) * DMAX + d0 + 9]
                    c0_10 = acc[(i0 + 0) * DMAX + d0 + 10]
                    c0_11 = acc[(i0 + 0) * DMAX + d0 + 11]
                    c0_12 = acc[(i0 + 0) * DMAX + d0 + 12]
                    c0_13 = acc[(i0 + 0) * DMAX + d0 + 13]
                    c0_14 = acc[(i0 + 0) * DMAX + d0 + 14]
                    c0_15 = acc[(i0 + 0) * DMAX + d0 + 15]
                    c1_0 = acc[(i0 + 1) * DMAX + d0 + 0]
                    c1_1 = acc[(i0 + 1) * DMAX + d0 + 1]
                    c1_2 = acc[(i0 + 1) * DMAX + d0 + 2]
                    c1_3 = acc[(i0 + 1) * DMAX + d0 + 3]
                    c1_4 = acc[(i0 + 1) * DMAX + d0 + 4]
                    c1_5 = acc[(i0 + 1) * DMAX + d0 + 5]
                    c1_6 = acc[(i0 + 1) * DMAX + d0 + 6]
                    c1_7 = acc[(i0 + 1) * DMAX + d0 + 7]
                    c1_8 = acc[(i0 + 1) * DMAX + d0 + 8]
                    c1_9 = acc[(i0 + 1) * DMAX + d0 + 9]
                    c1_10 = acc[(i0 + 1) * DMAX + d0 + 10]
                    c1_11 = acc[(i0 + 1) * DMAX + d0 + 11]
                    c1_12 = acc[(i0 + 1) * DMAX + d0 + 12]
                    c1_13 = acc[(i0 + 1) * DMAX + d0 + 13]
                    c1_14 = acc[(i0 + 1) * DMAX + d0 + 14]
                    c1_15 = acc[(i0 + 1) * DMAX + d0 + 15]
                    c2_0 = acc[(i0 + 2) * DMAX + d0 + 0]
                    c2_1 = acc[(i0 + 2) * DMAX + d0 + 1]
                    c2_2 = acc[(i0 + 2) * DMAX + d0 + 2]
                    c2_3 = acc[(i0 + 2) * DMAX + d0 + 3]
                    c2_4 = acc[(i0 + 2) * DMAX + d0 + 4]
                    c2_5 = acc[(i0 + 2) * DMAX + d0 + 5]
                    c2_6 = acc[(i0 + 2) * DMAX + d0 + 6]
                    c2_7 = acc[(i0 + 2) * DMAX + d0 + 7]
                    c2_8 = acc[(i0 + 2) * DMAX + d0 + 8]
                    c2_9 = acc[(i0 + 2) * DMAX + d0 + 9]
                    c2_10 = acc[(i0 + 2) * DMAX + d0 + 10]
                    c2_11 = acc[(i0 + 2) * DMAX + d0 + 11]
                    c2_12 = acc[(i0 + 2) * DMAX + d0 + 12]
                    c2_13 = acc[(i0 + 2) * DMAX + d0 + 13]
                    c2_14 = acc[(i0 + 2) * DMAX + d0 + 14]
                    c2_15 = acc[(i0 + 2) * DMAX + d0 + 15]
                    c3_0 = acc[(i0 + 3) * DMAX + d0 + 0]
                    c3_1 = acc[(i0 + 3) * DMAX + d0 + 1]
                    c3_2 = acc[(i0 + 3) * DMAX + d0 + 2]
                    c3_3 = acc[(i0 + 3) * DMAX + d0 + 3]
                    c3_4 = acc[(i0 + 3) * DMAX + d0 + 4]
                    c3_5 = acc[(i0 + 3) * DMAX + d0 + 5]
                    c3_6 = acc[(i0 + 3) * DMAX + d0 + 6]
                    c3_7 = acc[(i0 + 3) * DMAX + d0 + 7]
                    c3_8 = acc[(i0 + 3) * DMAX + d0 + 8]
                    c3_9 = acc[(i0 + 3) * DMAX + d0 + 9]
                    c3_10 = acc[(i0 + 3) * DMAX + d0 + 10]
                    c3_11 = acc[(i0 + 3) * DMAX + d0 + 11]
                    c3_12 = acc[(i0 + 3) * DMAX + d0 + 12]
                    c3_13 = acc[(i0 + 3) * DMAX + d0 + 13]
                    c3_14 = acc[(i0 + 3) * DMAX + d0 + 14]
                    c3_15 = acc[(i0 + 3) * DMAX + d0 + 15]
                    for j in range(nk):
                        vb = vbase + (pt.u64(k0) + j) * nDv + d0
                        p0 = s[(i0 + 0) * BK + j]
                        p1 = s[(i0 + 1) * BK + j]
                        p2 = s[(i0 + 2) * BK + j]
                        p3 = s[(i0 + 3) * BK + j]
                        v0 = pt.f32(v[vb + 0])
                        v1 = pt.f32(v[vb + 1])
                        v2 = pt.f32(v[vb + 2])
                        v3 = pt.f32(v[vb + 3])
                        v4 = pt.f32(v[vb + 4])
                        v5 = pt.f32(v[vb + 5])
                        v6 = pt.f32(v[vb + 6])
                        v7 = pt.f32(v[vb + 7])
                        v8 = pt.f32(v[vb + 8])
                        v9 = pt.f32(v[vb + 9])
                        v10 = pt.f32(v[vb + 10])
                        v11 = pt.f32(v[vb + 11])
                        v12 = pt.f32(v[vb + 12])
                        v13 = pt.f32(v[vb + 13])
                        v14 = pt.f32(v[vb + 14])
                        v15 = pt.f32(v[vb + 15])
                        c0_0 += p0 * v0
                        c0_1 += p0 * v1
                        c0_2 += p0 * v2
                        c0_3 += p0 * v3
                        c0_4 += p0 * v4
                        c0_5 += p0 * v5
                        c0_6 += p0 * v6
                        c0_7 += p0 * v7
                        c0_8 += p0 * v8
                        c0_9 += p0 * v9
                        c0_10 += p0 * v10
                        c0_11 += p0 * v11
                        c0_12 += p0 * v12
                        c0_13 += p0 * v13
                        c0_14 += p0 * v14
                        c0_15 += p0 * v15
                        c1_0 += p1 * v0
                        c1_1 += p1 * v1
                        c1_2 += p1 * v2
                        c1_3 += p1 * v3
                        c1_4 += p1 * v4
                        c1_5 += p1 * v5
                        c1_6 += p1 * v6
                        c1_7 += p1 * v7
                        c1_8 += p1 * v8
                        c1_9 += p1 * v9
                        c1_10 += p1 * v10
                        c1_11 += p1 * v11
                        c1_12 += p1 * v12
                        c1_13 += p1 * v13
                        c1_14 += p1 * v14
                        c1_15 += p1 * v15
                        c2_0 += p2 * v0
                        c2_1 += p2 * v1
                        c2_2 += p2 * v2
                        c2_3 += p2 * v3
                        c2_4 += p2 * v4
                        c2_5 += p2 * v5
                        c2_6 += p2 * v6
                        c2_7 += p2 * v7
                        c2_8 += p2 * v8
                        c2_9 += p2 * v9
                        c2_10 += p2 * v10
                        c2_11 += p2 * v11
                        c2_12 += p2 * v12
                        c2_13 += p2 * v13
                        c2_14 += p2 * v14
                        c2_15 += p2 * v15
                        c3_0 += p3 * v0
                        c3_1 += p3 * v1
                        c3_2 += p3 * v2
                        c3_3 += p3 * v3
                        c3_4 += p3 * v4
                        c3_5 += p3 * v5
                        c3_6 += p3 * v6
                        c3_7 += p3 * v7
                        c3_8 += p3 * v8
                        c3_9 += p3 * v9
                        c3_10 += p3 * v10
                        c3_11 += p3 * v11
                        c3_12 += p3 * v12
                        c3_13 += p3 * v13
                        c3_14 += p3 * v14
                        c3_15 += p3 * v15
                    acc[(i0 + 0) * DMAX + d0 + 0] = c0_0
                    acc[(i0 + 0) * DMAX + d0 + 1] = c0_1
                    acc[(i0 + 0) * DMAX + d0 + 2] = c0_2
                    acc[(i0 + 0) * DMAX + d0 + 3] = c0_3
                    acc[(i0 + 0) * DMAX + d0 + 4] = c0_4
                    acc[(i0 + 0) * DMAX + d0 + 5] = c0_5
                    acc[(i0 + 0) * DMAX + d0 + 6] = c0_6
                    acc[(i0 + 0) * DMAX + d0 + 7] = c0_7
                    acc[(i0 + 0) * DMAX + d0 + 8] = c0_8
                    acc[(i0 + 0) * DMAX + d0 + 9] = c0_9
                    acc[(i0 + 0) * DMAX + d0 + 10] = c0_10
                    acc[(i0 + 0) * DMAX + d0 + 11] = c0_11
                    acc[(i0 + 0) * DMAX + d0 + 12] = c0_12
                    acc[(i0 + 0) * DMAX + d0 + 13] = c0_13
                    acc[(i0 + 0) * DMAX + d0 + 14] = c0_14
                    acc[(i0 + 0) * DMAX + d0 + 15] = c0_15
                    acc[(i0 + 1) * DMAX + d0 + 0] = c1_0
                    acc[(i0 + 1) * DMAX + d0 + 1] = c1_1
                    acc[(i0 + 1) * DMAX + d0 + 2] = c1_2
                    acc[(i0 + 1) * DMAX + d0 + 3] = c1_3
                    acc[(i0 + 1) * DMAX + d0 + 4] = c1_4
                    acc[(i0 + 1) * DMAX + d0 + 5] = c1_5
                    acc[(i0 + 1) * DMAX + d0 + 6] = c1_6
                    acc[(i0 + 1) * DMAX + d0 + 7] = c1_7
                    acc[(i0 + 1) * DMAX + d0 + 8] = c1_8
                    acc[(i0 + 1) * DMAX + d0 + 9] = c1_9
                    acc[(i0 + 1) * DMAX + d0 + 10] = c1_10
                    acc[(i0 + 1) * DMAX + d0 + 11] = c1_11
                    acc[(i0 + 1) * DMAX + d0 + 12] = c1_12
                    acc[(i0 + 1) * DMAX + d0 + 13] = c1_13
                    acc[(i0 + 1) * DMAX + d0 + 14] = c1_14
                    acc[(i0 + 1) * DMAX + d0 + 15] = c1_15
                    acc[(i0 + 2) * DMAX + d0 + 0] = c2_0
                    acc[(i0 + 2) * DMAX + d0 + 1] = c2_1
                    acc[(i0 + 2) * DMAX + d0 + 2] = c2_2
                    acc[(i0 + 2) * DMAX + d0 + 3] = c2_3
                    acc[(i0 + 2) * DMAX + d0 + 4] = c2_4
                    acc[(i0 + 2) * DMAX + d0 + 5] = c2_5
                    acc[(i0 + 2) * DMAX + d0 + 6] = c2_6
                    acc[(i0 + 2) * DMAX + d0 + 7] = c2_7
                    acc[(i0 + 2) * DMAX + d0 + 8] = c2_8
                    acc[(i0 + 2) * DMAX + d0 + 9] = c2_9
                    acc[(i0 + 2) * DMAX + d0 + 10] = c2_10
                    acc[(i0 + 2) * DMAX + d0 + 11] = c2_11
                    acc[(i0 + 2) * DMAX + d0 + 12] = c2_12
                    acc[(i0 + 2) * DMAX + d0 + 13] = c2_13
                    acc[(i0 + 2) * DMAX + d0 + 14] = c2_14
                    acc[(i0 + 2) * DMAX + d0 + 15] = c2_15
                    acc[(i0 + 3) * DMAX + d0 + 0] = c3_0
                    acc[(i0 + 3) * DMAX + d0 + 1] = c3_1
                    acc[(i0 + 3) * DMAX + d0 + 2] = c3_2
                    acc[(i0 + 3) * DMAX + d0 + 3] = c3_3
                    acc[(i0 + 3) * DMAX + d0 + 4] = c3_4
                    acc[(i0 + 3) * DMAX + d0 + 5] = c3_5
                    acc[(i0 + 3) * DMAX + d0 + 6] = c3_6
                    acc[(i0 + 3) * DMAX + d0 + 7] = c3_7
                    acc[(i0 + 3) * DMAX + d0 + 8] = c3_8
                    acc[(i0 + 3) * DMAX + d0 + 9] = c3_9
                    acc[(i0 + 3) * DMAX + d0 + 10] = c3_10
                    acc[(i0 + 3) * DMAX + d0 + 11] = c3_11
                    acc[(i0 + 3) * DMAX + d0 + 12] = c3_12
                    acc[(i0 + 3) * DMAX + d0 + 13] = c3_13
                    acc[(i0 + 3) * DMAX + d0 + 14] = c3_14
                    acc[(i0 + 3) * DMAX + d0 + 15] = c3_15
                for i in range(i0, min(i0 + 4, pt.u64(nq))):
                    for d in range(dfull, nDv):
                        t = acc[i * DMAX + d]
                        for j in range(nk):
                            t += s[i * BK + j] * pt.f32(v[vbase + (pt.u64(k0) + j) * nDv + d])
                        acc[i * DMAX + d] = t
        for i in range(pt.u64(nq)):
            total = ls[i]
            inv = 1.0 / total
            if total == 0.0 and zero_empty != 0:
                inv = 0.0
            orow = obase + (pt.u64(q0) + i) * nDv
            for d in range(nDv):
                o[orow + d] = T(acc[i * DMAX + d] * inv)

    return attention_cpu


attention_cpu_f32 = _make(pt.f32, "attention_cpu_f32")
attention_cpu_f16 = _make(pt.f16, "attention_cpu_f16")
attention_cpu_bf16 = _make(pt.bf16, "attention_cpu_bf16")

UNBOUNDED = 1 << 30


def launch_threads(lq: int, rows: int) -> tuple[int, int, int]:
    """The grid for `rows` = B * Hq rows of Lq queries."""
    return (-(-lq // BQ), rows, 1)


def reference(q, k, v, mask=None, left=UNBOUNDED, right=UNBOUNDED, scale=None, softcap=0.0, zero_empty=True):
    """Attention in float64 over [BH, L, D] arrays (GQA by head ratio), the examples' reference."""
    rows, lq, d = q.shape
    ratio = rows // k.shape[0]
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    k64 = np.repeat(k64, ratio, axis=0)
    v64 = np.repeat(v64, ratio, axis=0)
    s = q64 @ np.swapaxes(k64, -1, -2) * (scale if scale is not None else 1 / np.sqrt(d))
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask
    rel = np.arange(k.shape[1])[None, :] - np.arange(lq)[:, None]
    s = np.where((rel >= -left) & (rel <= right), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    l = e.sum(-1, keepdims=True)
    out = (e @ v64) / l
    return np.where(l > 0, out, 0.0) if zero_empty else out


def _examples(np_dtype, name):
    rng = np.random.default_rng(3)
    out = []
    # (rows, kv rows, Lq, Lk, D, left, right, mask, softcap): odd lengths over two tiles, causal GQA with
    # a mask broadcast over rows, a sliding window with softcap
    for rows, kv, lq, lk, d, left, right, with_mask, cap in (
            (1, 1, 17, 70, 4, UNBOUNDED, UNBOUNDED, False, 0.0),
            (2, 1, 9, 9, 4, UNBOUNDED, 0, True, 0.0),
            (1, 1, 5, 70, 4, 5, 3, False, 2.0)):
        q = rng.standard_normal((rows, lq, d)).astype(np_dtype)
        k = rng.standard_normal((kv, lk, d)).astype(np_dtype)
        v = rng.standard_normal((kv, lk, d)).astype(np_dtype)
        mask = (rng.standard_normal((lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
        ref = reference(q, k, v, mask if with_mask else None, left, right, softcap=cap)
        o = np.zeros((rows, lq, d), np_dtype)
        args = (q.reshape(-1), k.reshape(-1), v.reshape(-1), mask.reshape(-1), o.reshape(-1), lq, lk, d, d, rows,
                rows // kv, left, right, int(with_mask), 0, 0, lk if with_mask else 0, 1 if with_mask else 0, 1,
                float(1 / np.sqrt(d)), cap)
        eps = float(ml_dtypes.finfo(np_dtype).eps)
        out.append(Example(args=args, threads=launch_threads(lq, rows), expected={"o": ref.astype(np_dtype).reshape(-1)},
                           rtol=4 * eps, atol=8 * eps + 1e-5))
    return out


def example_attention_cpu_f32(rng):
    return _examples(np.float32, "attention_cpu_f32")


def example_attention_cpu_f16(rng):
    return _examples(np.float16, "attention_cpu_f16")


def example_attention_cpu_bf16(rng):
    return _examples(ml_dtypes.bfloat16, "attention_cpu_bf16")
