"""Flash attention for the CPU: O = softmax(scale * Q K^T (softcapped, masked)) V without an L x L buffer.

A workgroup is one thread (the CPU device splits the grid over its cores) that owns a block of BQ
queries of one (batch, head) row: group x picks the query block, group y the row bh = b * Hq + h. It
walks the keys BK at a time, keeping per query the running maximum m, the running sum l of 2 ** (s - m)
and the f32 accumulator of sum 2 ** (s - m) v (the online softmax, the logits s in log2 units: the scale
carries LOG2E): when a tile raises the maximum, the old sum and accumulator are rescaled by
2 ** (m_old - m_new). Only the keys some query of the block may see are visited (causal and
sliding-window masking skip whole tiles).

Why this layout: LLVM vectorizes loops of independent lanes and packs adjacent scalar statements into
vectors (SLP), not float reductions (it may not reassociate), and the two products must run at the FMA
units' rate. So the block's queries are the vector lanes of the logits: Q is transposed and scaled once
into qt[d, i], and a tile's logits s[j, i] come from register blocks of KB keys x BQ queries,
s[j, :] += k[j, d] * qt[d, :], each key element a broadcast read from K in place (no transposed copy of
K). The tile's softmax then runs across the queries' lanes (maximum, exponentials, sums: plain vector
loops), and P V from register blocks of PQ queries x PD output dims,
acc[i, d0:d0 + PD] += s[j, i] * v[j, d0:d0 + PD], each weight a broadcast, each value row a vector
load, the tile's rescale folded into the block's load of acc. The weights come from exp2_nonpositive, a
short polynomial: the accurate exp2 took a sixth of the kernel's time.

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

BQ = 16           # queries per work item: the vector lanes of the logits
BK = 64           # keys per tile
KB = 8            # keys per register block of the logits
PQ = 8            # queries per register block of P V
PD = 16           # output dims per register block of P V
DMAX = 256        # largest head dim
NEG_INF = float("-inf")
LOG2E = 1.4426950408889634   # the logits are kept in log2 units: exp(x) = 2 ** (x * LOG2E)
LN2 = 0.6931471805599453
ROUNDER = 12582912.0              # 1.5 * 2**23: x + ROUNDER holds rint(x) in its low mantissa bits
ROUNDER_BITS_LESS_BIAS = 0x4B400000 - 127   # ROUNDER's bits less the exponent bias


@pt.device_fn
def larger(x, y):
    """x if x > y else y: one vector max instruction. A NaN logit may be passed over here, but its
    weight is NaN, so its query's output still is."""
    return x if x > y else y


@pt.device_fn
def exp2_nonpositive(x):
    """2 ** x for x <= 0 (the weights of an online softmax) in half the accurate exp2's instructions,
    with no float-to-int conversion (which the CPU target does lane by lane): adding 1.5 * 2**23 rounds
    x to the integer n in the low bits of the sum, 2 ** (x - n) is a degree-6 fit on [-1/2, 1/2]
    (within 1.1e-7 relative) and 2 ** n is built in the exponent bits. x <= -127 gives 0 exactly (so
    -inf does); NaN stays NaN."""
    xc = pt.f32(-127.0) if x < -127.0 else x
    t = xc + ROUNDER
    f = xc - (t - ROUNDER)
    p = 0.00015337576041929424 * f + 0.0013399859890341759
    p = p * f + 0.009618519805371761
    p = p * f + 0.05550329014658928
    p = p * f + 0.24022646248340607
    p = p * f + 0.6931471824645996
    p = p * f + 1.0
    return p * pt.bitcast((pt.bitcast(t, pt.u32) - ROUNDER_BITS_LESS_BIAS) << 23, pt.f32)


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
    @pt.kernel(workgroup=(1, 1, 1), name=name, checks=False, cpu_vector_bits=512)
    def attention_cpu(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], o: pt.Out[T],
                      Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,
                      left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,
                      msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):
        qt = pt.shared(pt.f32, DMAX * BQ)    # the block's queries transposed, in log2 units: qt[d * BQ + i]
        s = pt.shared(pt.f32, BK * BQ)       # a tile's logits, then its weights: s[j * BQ + i]
        acc = pt.shared(pt.f32, BQ * DMAX)   # sum of weights times values: acc[i * DMAX + d]
        ms = pt.shared(pt.f32, BQ)           # running maximum
        ls = pt.shared(pt.f32, BQ)           # running sum of weights
        mt = pt.shared(pt.f32, BQ)           # the tile's maximum over its even keys
        mu = pt.shared(pt.f32, BQ)           # and over its odd keys
        base = pt.shared(pt.f32, BQ)         # what the tile's exponents subtract
        alpha = pt.shared(pt.f32, BQ)        # the rescale of the old sum and accumulator
        tsum = pt.shared(pt.f32, BQ)         # the tile's sum of weights
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
        dfull = nDv - nDv % PD
        plain = has_mask == 0 and softcap <= 0.0   # no per-element logit transform
        to_log2 = scale * LOG2E
        for d in range(nD):
            for i in range(pt.u64(BQ)):
                x = pt.f32(0.0)            # rows past Lq score 0: finite, never written out
                if i < pt.u64(nq):
                    x = pt.f32(q[qbase + (pt.u64(q0) + i) * nD + d]) * to_log2
                qt[d * BQ + i] = x
        for i in range(pt.u64(BQ)):
            for d in range(nDv):
                acc[i * DMAX + d] = 0.0
            ms[i] = NEG_INF
            ls[i] = 0.0
        lo = key_lo(q0, left)
        hi = key_hi(q0 + nq - 1, right, Lk)
        for k0 in range(lo, hi, BK):
            nk = min(pt.u32(BK), hi - k0)
            nk64 = pt.u64(nk)
            # logits of KB keys x BQ queries in registers: the queries are the vector lanes, each key's
            # element a broadcast, so K is read in place (rows past the tile's end repeat its last row)
            for j0 in range(pt.u64(0), nk64, KB):
                r0 = kbase + pt.u64(min(k0 + pt.u32(j0) + 0, hi - 1)) * nD
                r1 = kbase + pt.u64(min(k0 + pt.u32(j0) + 1, hi - 1)) * nD
                r2 = kbase + pt.u64(min(k0 + pt.u32(j0) + 2, hi - 1)) * nD
                r3 = kbase + pt.u64(min(k0 + pt.u32(j0) + 3, hi - 1)) * nD
                r4 = kbase + pt.u64(min(k0 + pt.u32(j0) + 4, hi - 1)) * nD
                r5 = kbase + pt.u64(min(k0 + pt.u32(j0) + 5, hi - 1)) * nD
                r6 = kbase + pt.u64(min(k0 + pt.u32(j0) + 6, hi - 1)) * nD
                r7 = kbase + pt.u64(min(k0 + pt.u32(j0) + 7, hi - 1)) * nD
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
                a4_0 = pt.f32(0.0)
                a4_1 = pt.f32(0.0)
                a4_2 = pt.f32(0.0)
                a4_3 = pt.f32(0.0)
                a4_4 = pt.f32(0.0)
                a4_5 = pt.f32(0.0)
                a4_6 = pt.f32(0.0)
                a4_7 = pt.f32(0.0)
                a4_8 = pt.f32(0.0)
                a4_9 = pt.f32(0.0)
                a4_10 = pt.f32(0.0)
                a4_11 = pt.f32(0.0)
                a4_12 = pt.f32(0.0)
                a4_13 = pt.f32(0.0)
                a4_14 = pt.f32(0.0)
                a4_15 = pt.f32(0.0)
                a5_0 = pt.f32(0.0)
                a5_1 = pt.f32(0.0)
                a5_2 = pt.f32(0.0)
                a5_3 = pt.f32(0.0)
                a5_4 = pt.f32(0.0)
                a5_5 = pt.f32(0.0)
                a5_6 = pt.f32(0.0)
                a5_7 = pt.f32(0.0)
                a5_8 = pt.f32(0.0)
                a5_9 = pt.f32(0.0)
                a5_10 = pt.f32(0.0)
                a5_11 = pt.f32(0.0)
                a5_12 = pt.f32(0.0)
                a5_13 = pt.f32(0.0)
                a5_14 = pt.f32(0.0)
                a5_15 = pt.f32(0.0)
                a6_0 = pt.f32(0.0)
                a6_1 = pt.f32(0.0)
                a6_2 = pt.f32(0.0)
                a6_3 = pt.f32(0.0)
                a6_4 = pt.f32(0.0)
                a6_5 = pt.f32(0.0)
                a6_6 = pt.f32(0.0)
                a6_7 = pt.f32(0.0)
                a6_8 = pt.f32(0.0)
                a6_9 = pt.f32(0.0)
                a6_10 = pt.f32(0.0)
                a6_11 = pt.f32(0.0)
                a6_12 = pt.f32(0.0)
                a6_13 = pt.f32(0.0)
                a6_14 = pt.f32(0.0)
                a6_15 = pt.f32(0.0)
                a7_0 = pt.f32(0.0)
                a7_1 = pt.f32(0.0)
                a7_2 = pt.f32(0.0)
                a7_3 = pt.f32(0.0)
                a7_4 = pt.f32(0.0)
                a7_5 = pt.f32(0.0)
                a7_6 = pt.f32(0.0)
                a7_7 = pt.f32(0.0)
                a7_8 = pt.f32(0.0)
                a7_9 = pt.f32(0.0)
                a7_10 = pt.f32(0.0)
                a7_11 = pt.f32(0.0)
                a7_12 = pt.f32(0.0)
                a7_13 = pt.f32(0.0)
                a7_14 = pt.f32(0.0)
                a7_15 = pt.f32(0.0)
                for d in range(nD):
                    w0 = qt[d * BQ + 0]
                    w1 = qt[d * BQ + 1]
                    w2 = qt[d * BQ + 2]
                    w3 = qt[d * BQ + 3]
                    w4 = qt[d * BQ + 4]
                    w5 = qt[d * BQ + 5]
                    w6 = qt[d * BQ + 6]
                    w7 = qt[d * BQ + 7]
                    w8 = qt[d * BQ + 8]
                    w9 = qt[d * BQ + 9]
                    w10 = qt[d * BQ + 10]
                    w11 = qt[d * BQ + 11]
                    w12 = qt[d * BQ + 12]
                    w13 = qt[d * BQ + 13]
                    w14 = qt[d * BQ + 14]
                    w15 = qt[d * BQ + 15]
                    e0 = pt.f32(k[r0 + d])
                    e1 = pt.f32(k[r1 + d])
                    e2 = pt.f32(k[r2 + d])
                    e3 = pt.f32(k[r3 + d])
                    e4 = pt.f32(k[r4 + d])
                    e5 = pt.f32(k[r5 + d])
                    e6 = pt.f32(k[r6 + d])
                    e7 = pt.f32(k[r7 + d])
                    a0_0 += e0 * w0
                    a0_1 += e0 * w1
                    a0_2 += e0 * w2
                    a0_3 += e0 * w3
                    a0_4 += e0 * w4
                    a0_5 += e0 * w5
                    a0_6 += e0 * w6
                    a0_7 += e0 * w7
                    a0_8 += e0 * w8
                    a0_9 += e0 * w9
                    a0_10 += e0 * w10
                    a0_11 += e0 * w11
                    a0_12 += e0 * w12
                    a0_13 += e0 * w13
                    a0_14 += e0 * w14
                    a0_15 += e0 * w15
                    a1_0 += e1 * w0
                    a1_1 += e1 * w1
                    a1_2 += e1 * w2
                    a1_3 += e1 * w3
                    a1_4 += e1 * w4
                    a1_5 += e1 * w5
                    a1_6 += e1 * w6
                    a1_7 += e1 * w7
                    a1_8 += e1 * w8
                    a1_9 += e1 * w9
                    a1_10 += e1 * w10
                    a1_11 += e1 * w11
                    a1_12 += e1 * w12
                    a1_13 += e1 * w13
                    a1_14 += e1 * w14
                    a1_15 += e1 * w15
                    a2_0 += e2 * w0
                    a2_1 += e2 * w1
                    a2_2 += e2 * w2
                    a2_3 += e2 * w3
                    a2_4 += e2 * w4
                    a2_5 += e2 * w5
                    a2_6 += e2 * w6
                    a2_7 += e2 * w7
                    a2_8 += e2 * w8
                    a2_9 += e2 * w9
                    a2_10 += e2 * w10
                    a2_11 += e2 * w11
                    a2_12 += e2 * w12
                    a2_13 += e2 * w13
                    a2_14 += e2 * w14
                    a2_15 += e2 * w15
                    a3_0 += e3 * w0
                    a3_1 += e3 * w1
                    a3_2 += e3 * w2
                    a3_3 += e3 * w3
                    a3_4 += e3 * w4
                    a3_5 += e3 * w5
                    a3_6 += e3 * w6
                    a3_7 += e3 * w7
                    a3_8 += e3 * w8
                    a3_9 += e3 * w9
                    a3_10 += e3 * w10
                    a3_11 += e3 * w11
                    a3_12 += e3 * w12
                    a3_13 += e3 * w13
                    a3_14 += e3 * w14
                    a3_15 += e3 * w15
                    a4_0 += e4 * w0
                    a4_1 += e4 * w1
                    a4_2 += e4 * w2
                    a4_3 += e4 * w3
                    a4_4 += e4 * w4
                    a4_5 += e4 * w5
                    a4_6 += e4 * w6
                    a4_7 += e4 * w7
                    a4_8 += e4 * w8
                    a4_9 += e4 * w9
                    a4_10 += e4 * w10
                    a4_11 += e4 * w11
                    a4_12 += e4 * w12
                    a4_13 += e4 * w13
                    a4_14 += e4 * w14
                    a4_15 += e4 * w15
                    a5_0 += e5 * w0
                    a5_1 += e5 * w1
                    a5_2 += e5 * w2
                    a5_3 += e5 * w3
                    a5_4 += e5 * w4
                    a5_5 += e5 * w5
                    a5_6 += e5 * w6
                    a5_7 += e5 * w7
                    a5_8 += e5 * w8
                    a5_9 += e5 * w9
                    a5_10 += e5 * w10
                    a5_11 += e5 * w11
                    a5_12 += e5 * w12
                    a5_13 += e5 * w13
                    a5_14 += e5 * w14
                    a5_15 += e5 * w15
                    a6_0 += e6 * w0
                    a6_1 += e6 * w1
                    a6_2 += e6 * w2
                    a6_3 += e6 * w3
                    a6_4 += e6 * w4
                    a6_5 += e6 * w5
                    a6_6 += e6 * w6
                    a6_7 += e6 * w7
                    a6_8 += e6 * w8
                    a6_9 += e6 * w9
                    a6_10 += e6 * w10
                    a6_11 += e6 * w11
                    a6_12 += e6 * w12
                    a6_13 += e6 * w13
                    a6_14 += e6 * w14
                    a6_15 += e6 * w15
                    a7_0 += e7 * w0
                    a7_1 += e7 * w1
                    a7_2 += e7 * w2
                    a7_3 += e7 * w3
                    a7_4 += e7 * w4
                    a7_5 += e7 * w5
                    a7_6 += e7 * w6
                    a7_7 += e7 * w7
                    a7_8 += e7 * w8
                    a7_9 += e7 * w9
                    a7_10 += e7 * w10
                    a7_11 += e7 * w11
                    a7_12 += e7 * w12
                    a7_13 += e7 * w13
                    a7_14 += e7 * w14
                    a7_15 += e7 * w15
                s[(j0 + 0) * BQ + 0] = a0_0
                s[(j0 + 0) * BQ + 1] = a0_1
                s[(j0 + 0) * BQ + 2] = a0_2
                s[(j0 + 0) * BQ + 3] = a0_3
                s[(j0 + 0) * BQ + 4] = a0_4
                s[(j0 + 0) * BQ + 5] = a0_5
                s[(j0 + 0) * BQ + 6] = a0_6
                s[(j0 + 0) * BQ + 7] = a0_7
                s[(j0 + 0) * BQ + 8] = a0_8
                s[(j0 + 0) * BQ + 9] = a0_9
                s[(j0 + 0) * BQ + 10] = a0_10
                s[(j0 + 0) * BQ + 11] = a0_11
                s[(j0 + 0) * BQ + 12] = a0_12
                s[(j0 + 0) * BQ + 13] = a0_13
                s[(j0 + 0) * BQ + 14] = a0_14
                s[(j0 + 0) * BQ + 15] = a0_15
                s[(j0 + 1) * BQ + 0] = a1_0
                s[(j0 + 1) * BQ + 1] = a1_1
                s[(j0 + 1) * BQ + 2] = a1_2
                s[(j0 + 1) * BQ + 3] = a1_3
                s[(j0 + 1) * BQ + 4] = a1_4
                s[(j0 + 1) * BQ + 5] = a1_5
                s[(j0 + 1) * BQ + 6] = a1_6
                s[(j0 + 1) * BQ + 7] = a1_7
                s[(j0 + 1) * BQ + 8] = a1_8
                s[(j0 + 1) * BQ + 9] = a1_9
                s[(j0 + 1) * BQ + 10] = a1_10
                s[(j0 + 1) * BQ + 11] = a1_11
                s[(j0 + 1) * BQ + 12] = a1_12
                s[(j0 + 1) * BQ + 13] = a1_13
                s[(j0 + 1) * BQ + 14] = a1_14
                s[(j0 + 1) * BQ + 15] = a1_15
                s[(j0 + 2) * BQ + 0] = a2_0
                s[(j0 + 2) * BQ + 1] = a2_1
                s[(j0 + 2) * BQ + 2] = a2_2
                s[(j0 + 2) * BQ + 3] = a2_3
                s[(j0 + 2) * BQ + 4] = a2_4
                s[(j0 + 2) * BQ + 5] = a2_5
                s[(j0 + 2) * BQ + 6] = a2_6
                s[(j0 + 2) * BQ + 7] = a2_7
                s[(j0 + 2) * BQ + 8] = a2_8
                s[(j0 + 2) * BQ + 9] = a2_9
                s[(j0 + 2) * BQ + 10] = a2_10
                s[(j0 + 2) * BQ + 11] = a2_11
                s[(j0 + 2) * BQ + 12] = a2_12
                s[(j0 + 2) * BQ + 13] = a2_13
                s[(j0 + 2) * BQ + 14] = a2_14
                s[(j0 + 2) * BQ + 15] = a2_15
                s[(j0 + 3) * BQ + 0] = a3_0
                s[(j0 + 3) * BQ + 1] = a3_1
                s[(j0 + 3) * BQ + 2] = a3_2
                s[(j0 + 3) * BQ + 3] = a3_3
                s[(j0 + 3) * BQ + 4] = a3_4
                s[(j0 + 3) * BQ + 5] = a3_5
                s[(j0 + 3) * BQ + 6] = a3_6
                s[(j0 + 3) * BQ + 7] = a3_7
                s[(j0 + 3) * BQ + 8] = a3_8
                s[(j0 + 3) * BQ + 9] = a3_9
                s[(j0 + 3) * BQ + 10] = a3_10
                s[(j0 + 3) * BQ + 11] = a3_11
                s[(j0 + 3) * BQ + 12] = a3_12
                s[(j0 + 3) * BQ + 13] = a3_13
                s[(j0 + 3) * BQ + 14] = a3_14
                s[(j0 + 3) * BQ + 15] = a3_15
                s[(j0 + 4) * BQ + 0] = a4_0
                s[(j0 + 4) * BQ + 1] = a4_1
                s[(j0 + 4) * BQ + 2] = a4_2
                s[(j0 + 4) * BQ + 3] = a4_3
                s[(j0 + 4) * BQ + 4] = a4_4
                s[(j0 + 4) * BQ + 5] = a4_5
                s[(j0 + 4) * BQ + 6] = a4_6
                s[(j0 + 4) * BQ + 7] = a4_7
                s[(j0 + 4) * BQ + 8] = a4_8
                s[(j0 + 4) * BQ + 9] = a4_9
                s[(j0 + 4) * BQ + 10] = a4_10
                s[(j0 + 4) * BQ + 11] = a4_11
                s[(j0 + 4) * BQ + 12] = a4_12
                s[(j0 + 4) * BQ + 13] = a4_13
                s[(j0 + 4) * BQ + 14] = a4_14
                s[(j0 + 4) * BQ + 15] = a4_15
                s[(j0 + 5) * BQ + 0] = a5_0
                s[(j0 + 5) * BQ + 1] = a5_1
                s[(j0 + 5) * BQ + 2] = a5_2
                s[(j0 + 5) * BQ + 3] = a5_3
                s[(j0 + 5) * BQ + 4] = a5_4
                s[(j0 + 5) * BQ + 5] = a5_5
                s[(j0 + 5) * BQ + 6] = a5_6
                s[(j0 + 5) * BQ + 7] = a5_7
                s[(j0 + 5) * BQ + 8] = a5_8
                s[(j0 + 5) * BQ + 9] = a5_9
                s[(j0 + 5) * BQ + 10] = a5_10
                s[(j0 + 5) * BQ + 11] = a5_11
                s[(j0 + 5) * BQ + 12] = a5_12
                s[(j0 + 5) * BQ + 13] = a5_13
                s[(j0 + 5) * BQ + 14] = a5_14
                s[(j0 + 5) * BQ + 15] = a5_15
                s[(j0 + 6) * BQ + 0] = a6_0
                s[(j0 + 6) * BQ + 1] = a6_1
                s[(j0 + 6) * BQ + 2] = a6_2
                s[(j0 + 6) * BQ + 3] = a6_3
                s[(j0 + 6) * BQ + 4] = a6_4
                s[(j0 + 6) * BQ + 5] = a6_5
                s[(j0 + 6) * BQ + 6] = a6_6
                s[(j0 + 6) * BQ + 7] = a6_7
                s[(j0 + 6) * BQ + 8] = a6_8
                s[(j0 + 6) * BQ + 9] = a6_9
                s[(j0 + 6) * BQ + 10] = a6_10
                s[(j0 + 6) * BQ + 11] = a6_11
                s[(j0 + 6) * BQ + 12] = a6_12
                s[(j0 + 6) * BQ + 13] = a6_13
                s[(j0 + 6) * BQ + 14] = a6_14
                s[(j0 + 6) * BQ + 15] = a6_15
                s[(j0 + 7) * BQ + 0] = a7_0
                s[(j0 + 7) * BQ + 1] = a7_1
                s[(j0 + 7) * BQ + 2] = a7_2
                s[(j0 + 7) * BQ + 3] = a7_3
                s[(j0 + 7) * BQ + 4] = a7_4
                s[(j0 + 7) * BQ + 5] = a7_5
                s[(j0 + 7) * BQ + 6] = a7_6
                s[(j0 + 7) * BQ + 7] = a7_7
                s[(j0 + 7) * BQ + 8] = a7_8
                s[(j0 + 7) * BQ + 9] = a7_9
                s[(j0 + 7) * BQ + 10] = a7_10
                s[(j0 + 7) * BQ + 11] = a7_11
                s[(j0 + 7) * BQ + 12] = a7_12
                s[(j0 + 7) * BQ + 13] = a7_13
                s[(j0 + 7) * BQ + 14] = a7_14
                s[(j0 + 7) * BQ + 15] = a7_15
            nearest = pt.i32(k0) - pt.i32(q0 + nq - 1)      # the smallest key - query offset of the tile
            farthest = pt.i32(k0) + (BK - 1) - pt.i32(q0)  # the largest
            if not (plain and k0 + BK <= hi and nearest >= -left and farthest <= right):
                for j in range(pt.u64(BK)):
                    kj = k0 + pt.u32(j)
                    for i in range(pt.u64(BQ)):
                        x = pt.f32(NEG_INF)     # keys past the tile's end and rows past Lq see nothing
                        if i < pt.u64(nq):
                            qi = q0 + pt.u32(i)
                            at = mbase + pt.u64(qi) * pt.u64(msq) + pt.u64(kj) * pt.u64(msk)
                            x = score(s[j * BQ + i] * LN2, qi, kj, hi, left, right, mask, has_mask, at,
                                      softcap) * LOG2E
                        s[j * BQ + i] = x
            for i in range(pt.u64(BQ)):
                mt[i] = NEG_INF
                mu[i] = NEG_INF
            for j in range(pt.u64(0), pt.u64(BK), 2):    # two chains of maxima: half the latency
                for i in range(pt.u64(BQ)):
                    mt[i] = larger(mt[i], s[j * BQ + i])
                    mu[i] = larger(mu[i], s[(j + 1) * BQ + i])
            for i in range(pt.u64(BQ)):
                m_old = ms[i]
                mx = larger(m_old, larger(mt[i], mu[i]))
                offset = mx
                if mx == NEG_INF:          # nothing visible yet: 2 ** (-inf - 0) keeps every term 0
                    offset = 0.0
                alpha[i] = exp2_nonpositive(m_old - offset)
                base[i] = offset
                ms[i] = mx
                tsum[i] = 0.0
            for j in range(pt.u64(BK)):
                for i in range(pt.u64(BQ)):
                    e = exp2_nonpositive(s[j * BQ + i] - base[i])
                    s[j * BQ + i] = e
                    tsum[i] += e
            for i in range(pt.u64(BQ)):
                ls[i] = ls[i] * alpha[i] + tsum[i]
            # P V: PQ queries x PD output dims in registers (the rescale folded into their load), over
            # the tile's keys: each weight a broadcast, each value row a vector load
            for i0 in range(pt.u64(0), pt.u64(nq), PQ):      # blocks past Lq stay undone
                for d0 in range(pt.u64(0), dfull, PD):
                    c0_0 = acc[(i0 + 0) * DMAX + d0 + 0] * alpha[i0 + 0]
                    c0_1 = acc[(i0 + 0) * DMAX + d0 + 1] * alpha[i0 + 0]
                    c0_2 = acc[(i0 + 0) * DMAX + d0 + 2] * alpha[i0 + 0]
                    c0_3 = acc[(i0 + 0) * DMAX + d0 + 3] * alpha[i0 + 0]
                    c0_4 = acc[(i0 + 0) * DMAX + d0 + 4] * alpha[i0 + 0]
                    c0_5 = acc[(i0 + 0) * DMAX + d0 + 5] * alpha[i0 + 0]
                    c0_6 = acc[(i0 + 0) * DMAX + d0 + 6] * alpha[i0 + 0]
                    c0_7 = acc[(i0 + 0) * DMAX + d0 + 7] * alpha[i0 + 0]
                    c0_8 = acc[(i0 + 0) * DMAX + d0 + 8] * alpha[i0 + 0]
                    c0_9 = acc[(i0 + 0) * DMAX + d0 + 9] * alpha[i0 + 0]
                    c0_10 = acc[(i0 + 0) * DMAX + d0 + 10] * alpha[i0 + 0]
                    c0_11 = acc[(i0 + 0) * DMAX + d0 + 11] * alpha[i0 + 0]
                    c0_12 = acc[(i0 + 0) * DMAX + d0 + 12] * alpha[i0 + 0]
                    c0_13 = acc[(i0 + 0) * DMAX + d0 + 13] * alpha[i0 + 0]
                    c0_14 = acc[(i0 + 0) * DMAX + d0 + 14] * alpha[i0 + 0]
                    c0_15 = acc[(i0 + 0) * DMAX + d0 + 15] * alpha[i0 + 0]
                    c1_0 = acc[(i0 + 1) * DMAX + d0 + 0] * alpha[i0 + 1]
                    c1_1 = acc[(i0 + 1) * DMAX + d0 + 1] * alpha[i0 + 1]
                    c1_2 = acc[(i0 + 1) * DMAX + d0 + 2] * alpha[i0 + 1]
                    c1_3 = acc[(i0 + 1) * DMAX + d0 + 3] * alpha[i0 + 1]
                    c1_4 = acc[(i0 + 1) * DMAX + d0 + 4] * alpha[i0 + 1]
                    c1_5 = acc[(i0 + 1) * DMAX + d0 + 5] * alpha[i0 + 1]
                    c1_6 = acc[(i0 + 1) * DMAX + d0 + 6] * alpha[i0 + 1]
                    c1_7 = acc[(i0 + 1) * DMAX + d0 + 7] * alpha[i0 + 1]
                    c1_8 = acc[(i0 + 1) * DMAX + d0 + 8] * alpha[i0 + 1]
                    c1_9 = acc[(i0 + 1) * DMAX + d0 + 9] * alpha[i0 + 1]
                    c1_10 = acc[(i0 + 1) * DMAX + d0 + 10] * alpha[i0 + 1]
                    c1_11 = acc[(i0 + 1) * DMAX + d0 + 11] * alpha[i0 + 1]
                    c1_12 = acc[(i0 + 1) * DMAX + d0 + 12] * alpha[i0 + 1]
                    c1_13 = acc[(i0 + 1) * DMAX + d0 + 13] * alpha[i0 + 1]
                    c1_14 = acc[(i0 + 1) * DMAX + d0 + 14] * alpha[i0 + 1]
                    c1_15 = acc[(i0 + 1) * DMAX + d0 + 15] * alpha[i0 + 1]
                    c2_0 = acc[(i0 + 2) * DMAX + d0 + 0] * alpha[i0 + 2]
                    c2_1 = acc[(i0 + 2) * DMAX + d0 + 1] * alpha[i0 + 2]
                    c2_2 = acc[(i0 + 2) * DMAX + d0 + 2] * alpha[i0 + 2]
                    c2_3 = acc[(i0 + 2) * DMAX + d0 + 3] * alpha[i0 + 2]
                    c2_4 = acc[(i0 + 2) * DMAX + d0 + 4] * alpha[i0 + 2]
                    c2_5 = acc[(i0 + 2) * DMAX + d0 + 5] * alpha[i0 + 2]
                    c2_6 = acc[(i0 + 2) * DMAX + d0 + 6] * alpha[i0 + 2]
                    c2_7 = acc[(i0 + 2) * DMAX + d0 + 7] * alpha[i0 + 2]
                    c2_8 = acc[(i0 + 2) * DMAX + d0 + 8] * alpha[i0 + 2]
                    c2_9 = acc[(i0 + 2) * DMAX + d0 + 9] * alpha[i0 + 2]
                    c2_10 = acc[(i0 + 2) * DMAX + d0 + 10] * alpha[i0 + 2]
                    c2_11 = acc[(i0 + 2) * DMAX + d0 + 11] * alpha[i0 + 2]
                    c2_12 = acc[(i0 + 2) * DMAX + d0 + 12] * alpha[i0 + 2]
                    c2_13 = acc[(i0 + 2) * DMAX + d0 + 13] * alpha[i0 + 2]
                    c2_14 = acc[(i0 + 2) * DMAX + d0 + 14] * alpha[i0 + 2]
                    c2_15 = acc[(i0 + 2) * DMAX + d0 + 15] * alpha[i0 + 2]
                    c3_0 = acc[(i0 + 3) * DMAX + d0 + 0] * alpha[i0 + 3]
                    c3_1 = acc[(i0 + 3) * DMAX + d0 + 1] * alpha[i0 + 3]
                    c3_2 = acc[(i0 + 3) * DMAX + d0 + 2] * alpha[i0 + 3]
                    c3_3 = acc[(i0 + 3) * DMAX + d0 + 3] * alpha[i0 + 3]
                    c3_4 = acc[(i0 + 3) * DMAX + d0 + 4] * alpha[i0 + 3]
                    c3_5 = acc[(i0 + 3) * DMAX + d0 + 5] * alpha[i0 + 3]
                    c3_6 = acc[(i0 + 3) * DMAX + d0 + 6] * alpha[i0 + 3]
                    c3_7 = acc[(i0 + 3) * DMAX + d0 + 7] * alpha[i0 + 3]
                    c3_8 = acc[(i0 + 3) * DMAX + d0 + 8] * alpha[i0 + 3]
                    c3_9 = acc[(i0 + 3) * DMAX + d0 + 9] * alpha[i0 + 3]
                    c3_10 = acc[(i0 + 3) * DMAX + d0 + 10] * alpha[i0 + 3]
                    c3_11 = acc[(i0 + 3) * DMAX + d0 + 11] * alpha[i0 + 3]
                    c3_12 = acc[(i0 + 3) * DMAX + d0 + 12] * alpha[i0 + 3]
                    c3_13 = acc[(i0 + 3) * DMAX + d0 + 13] * alpha[i0 + 3]
                    c3_14 = acc[(i0 + 3) * DMAX + d0 + 14] * alpha[i0 + 3]
                    c3_15 = acc[(i0 + 3) * DMAX + d0 + 15] * alpha[i0 + 3]
                    c4_0 = acc[(i0 + 4) * DMAX + d0 + 0] * alpha[i0 + 4]
                    c4_1 = acc[(i0 + 4) * DMAX + d0 + 1] * alpha[i0 + 4]
                    c4_2 = acc[(i0 + 4) * DMAX + d0 + 2] * alpha[i0 + 4]
                    c4_3 = acc[(i0 + 4) * DMAX + d0 + 3] * alpha[i0 + 4]
                    c4_4 = acc[(i0 + 4) * DMAX + d0 + 4] * alpha[i0 + 4]
                    c4_5 = acc[(i0 + 4) * DMAX + d0 + 5] * alpha[i0 + 4]
                    c4_6 = acc[(i0 + 4) * DMAX + d0 + 6] * alpha[i0 + 4]
                    c4_7 = acc[(i0 + 4) * DMAX + d0 + 7] * alpha[i0 + 4]
                    c4_8 = acc[(i0 + 4) * DMAX + d0 + 8] * alpha[i0 + 4]
                    c4_9 = acc[(i0 + 4) * DMAX + d0 + 9] * alpha[i0 + 4]
                    c4_10 = acc[(i0 + 4) * DMAX + d0 + 10] * alpha[i0 + 4]
                    c4_11 = acc[(i0 + 4) * DMAX + d0 + 11] * alpha[i0 + 4]
                    c4_12 = acc[(i0 + 4) * DMAX + d0 + 12] * alpha[i0 + 4]
                    c4_13 = acc[(i0 + 4) * DMAX + d0 + 13] * alpha[i0 + 4]
                    c4_14 = acc[(i0 + 4) * DMAX + d0 + 14] * alpha[i0 + 4]
                    c4_15 = acc[(i0 + 4) * DMAX + d0 + 15] * alpha[i0 + 4]
                    c5_0 = acc[(i0 + 5) * DMAX + d0 + 0] * alpha[i0 + 5]
                    c5_1 = acc[(i0 + 5) * DMAX + d0 + 1] * alpha[i0 + 5]
                    c5_2 = acc[(i0 + 5) * DMAX + d0 + 2] * alpha[i0 + 5]
                    c5_3 = acc[(i0 + 5) * DMAX + d0 + 3] * alpha[i0 + 5]
                    c5_4 = acc[(i0 + 5) * DMAX + d0 + 4] * alpha[i0 + 5]
                    c5_5 = acc[(i0 + 5) * DMAX + d0 + 5] * alpha[i0 + 5]
                    c5_6 = acc[(i0 + 5) * DMAX + d0 + 6] * alpha[i0 + 5]
                    c5_7 = acc[(i0 + 5) * DMAX + d0 + 7] * alpha[i0 + 5]
                    c5_8 = acc[(i0 + 5) * DMAX + d0 + 8] * alpha[i0 + 5]
                    c5_9 = acc[(i0 + 5) * DMAX + d0 + 9] * alpha[i0 + 5]
                    c5_10 = acc[(i0 + 5) * DMAX + d0 + 10] * alpha[i0 + 5]
                    c5_11 = acc[(i0 + 5) * DMAX + d0 + 11] * alpha[i0 + 5]
                    c5_12 = acc[(i0 + 5) * DMAX + d0 + 12] * alpha[i0 + 5]
                    c5_13 = acc[(i0 + 5) * DMAX + d0 + 13] * alpha[i0 + 5]
                    c5_14 = acc[(i0 + 5) * DMAX + d0 + 14] * alpha[i0 + 5]
                    c5_15 = acc[(i0 + 5) * DMAX + d0 + 15] * alpha[i0 + 5]
                    c6_0 = acc[(i0 + 6) * DMAX + d0 + 0] * alpha[i0 + 6]
                    c6_1 = acc[(i0 + 6) * DMAX + d0 + 1] * alpha[i0 + 6]
                    c6_2 = acc[(i0 + 6) * DMAX + d0 + 2] * alpha[i0 + 6]
                    c6_3 = acc[(i0 + 6) * DMAX + d0 + 3] * alpha[i0 + 6]
                    c6_4 = acc[(i0 + 6) * DMAX + d0 + 4] * alpha[i0 + 6]
                    c6_5 = acc[(i0 + 6) * DMAX + d0 + 5] * alpha[i0 + 6]
                    c6_6 = acc[(i0 + 6) * DMAX + d0 + 6] * alpha[i0 + 6]
                    c6_7 = acc[(i0 + 6) * DMAX + d0 + 7] * alpha[i0 + 6]
                    c6_8 = acc[(i0 + 6) * DMAX + d0 + 8] * alpha[i0 + 6]
                    c6_9 = acc[(i0 + 6) * DMAX + d0 + 9] * alpha[i0 + 6]
                    c6_10 = acc[(i0 + 6) * DMAX + d0 + 10] * alpha[i0 + 6]
                    c6_11 = acc[(i0 + 6) * DMAX + d0 + 11] * alpha[i0 + 6]
                    c6_12 = acc[(i0 + 6) * DMAX + d0 + 12] * alpha[i0 + 6]
                    c6_13 = acc[(i0 + 6) * DMAX + d0 + 13] * alpha[i0 + 6]
                    c6_14 = acc[(i0 + 6) * DMAX + d0 + 14] * alpha[i0 + 6]
                    c6_15 = acc[(i0 + 6) * DMAX + d0 + 15] * alpha[i0 + 6]
                    c7_0 = acc[(i0 + 7) * DMAX + d0 + 0] * alpha[i0 + 7]
                    c7_1 = acc[(i0 + 7) * DMAX + d0 + 1] * alpha[i0 + 7]
                    c7_2 = acc[(i0 + 7) * DMAX + d0 + 2] * alpha[i0 + 7]
                    c7_3 = acc[(i0 + 7) * DMAX + d0 + 3] * alpha[i0 + 7]
                    c7_4 = acc[(i0 + 7) * DMAX + d0 + 4] * alpha[i0 + 7]
                    c7_5 = acc[(i0 + 7) * DMAX + d0 + 5] * alpha[i0 + 7]
                    c7_6 = acc[(i0 + 7) * DMAX + d0 + 6] * alpha[i0 + 7]
                    c7_7 = acc[(i0 + 7) * DMAX + d0 + 7] * alpha[i0 + 7]
                    c7_8 = acc[(i0 + 7) * DMAX + d0 + 8] * alpha[i0 + 7]
                    c7_9 = acc[(i0 + 7) * DMAX + d0 + 9] * alpha[i0 + 7]
                    c7_10 = acc[(i0 + 7) * DMAX + d0 + 10] * alpha[i0 + 7]
                    c7_11 = acc[(i0 + 7) * DMAX + d0 + 11] * alpha[i0 + 7]
                    c7_12 = acc[(i0 + 7) * DMAX + d0 + 12] * alpha[i0 + 7]
                    c7_13 = acc[(i0 + 7) * DMAX + d0 + 13] * alpha[i0 + 7]
                    c7_14 = acc[(i0 + 7) * DMAX + d0 + 14] * alpha[i0 + 7]
                    c7_15 = acc[(i0 + 7) * DMAX + d0 + 15] * alpha[i0 + 7]
                    for j in range(nk64):
                        vb = vbase + (pt.u64(k0) + j) * nDv + d0
                        p0 = s[j * BQ + i0 + 0]
                        p1 = s[j * BQ + i0 + 1]
                        p2 = s[j * BQ + i0 + 2]
                        p3 = s[j * BQ + i0 + 3]
                        p4 = s[j * BQ + i0 + 4]
                        p5 = s[j * BQ + i0 + 5]
                        p6 = s[j * BQ + i0 + 6]
                        p7 = s[j * BQ + i0 + 7]
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
                        c4_0 += p4 * v0
                        c4_1 += p4 * v1
                        c4_2 += p4 * v2
                        c4_3 += p4 * v3
                        c4_4 += p4 * v4
                        c4_5 += p4 * v5
                        c4_6 += p4 * v6
                        c4_7 += p4 * v7
                        c4_8 += p4 * v8
                        c4_9 += p4 * v9
                        c4_10 += p4 * v10
                        c4_11 += p4 * v11
                        c4_12 += p4 * v12
                        c4_13 += p4 * v13
                        c4_14 += p4 * v14
                        c4_15 += p4 * v15
                        c5_0 += p5 * v0
                        c5_1 += p5 * v1
                        c5_2 += p5 * v2
                        c5_3 += p5 * v3
                        c5_4 += p5 * v4
                        c5_5 += p5 * v5
                        c5_6 += p5 * v6
                        c5_7 += p5 * v7
                        c5_8 += p5 * v8
                        c5_9 += p5 * v9
                        c5_10 += p5 * v10
                        c5_11 += p5 * v11
                        c5_12 += p5 * v12
                        c5_13 += p5 * v13
                        c5_14 += p5 * v14
                        c5_15 += p5 * v15
                        c6_0 += p6 * v0
                        c6_1 += p6 * v1
                        c6_2 += p6 * v2
                        c6_3 += p6 * v3
                        c6_4 += p6 * v4
                        c6_5 += p6 * v5
                        c6_6 += p6 * v6
                        c6_7 += p6 * v7
                        c6_8 += p6 * v8
                        c6_9 += p6 * v9
                        c6_10 += p6 * v10
                        c6_11 += p6 * v11
                        c6_12 += p6 * v12
                        c6_13 += p6 * v13
                        c6_14 += p6 * v14
                        c6_15 += p6 * v15
                        c7_0 += p7 * v0
                        c7_1 += p7 * v1
                        c7_2 += p7 * v2
                        c7_3 += p7 * v3
                        c7_4 += p7 * v4
                        c7_5 += p7 * v5
                        c7_6 += p7 * v6
                        c7_7 += p7 * v7
                        c7_8 += p7 * v8
                        c7_9 += p7 * v9
                        c7_10 += p7 * v10
                        c7_11 += p7 * v11
                        c7_12 += p7 * v12
                        c7_13 += p7 * v13
                        c7_14 += p7 * v14
                        c7_15 += p7 * v15
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
                    acc[(i0 + 4) * DMAX + d0 + 0] = c4_0
                    acc[(i0 + 4) * DMAX + d0 + 1] = c4_1
                    acc[(i0 + 4) * DMAX + d0 + 2] = c4_2
                    acc[(i0 + 4) * DMAX + d0 + 3] = c4_3
                    acc[(i0 + 4) * DMAX + d0 + 4] = c4_4
                    acc[(i0 + 4) * DMAX + d0 + 5] = c4_5
                    acc[(i0 + 4) * DMAX + d0 + 6] = c4_6
                    acc[(i0 + 4) * DMAX + d0 + 7] = c4_7
                    acc[(i0 + 4) * DMAX + d0 + 8] = c4_8
                    acc[(i0 + 4) * DMAX + d0 + 9] = c4_9
                    acc[(i0 + 4) * DMAX + d0 + 10] = c4_10
                    acc[(i0 + 4) * DMAX + d0 + 11] = c4_11
                    acc[(i0 + 4) * DMAX + d0 + 12] = c4_12
                    acc[(i0 + 4) * DMAX + d0 + 13] = c4_13
                    acc[(i0 + 4) * DMAX + d0 + 14] = c4_14
                    acc[(i0 + 4) * DMAX + d0 + 15] = c4_15
                    acc[(i0 + 5) * DMAX + d0 + 0] = c5_0
                    acc[(i0 + 5) * DMAX + d0 + 1] = c5_1
                    acc[(i0 + 5) * DMAX + d0 + 2] = c5_2
                    acc[(i0 + 5) * DMAX + d0 + 3] = c5_3
                    acc[(i0 + 5) * DMAX + d0 + 4] = c5_4
                    acc[(i0 + 5) * DMAX + d0 + 5] = c5_5
                    acc[(i0 + 5) * DMAX + d0 + 6] = c5_6
                    acc[(i0 + 5) * DMAX + d0 + 7] = c5_7
                    acc[(i0 + 5) * DMAX + d0 + 8] = c5_8
                    acc[(i0 + 5) * DMAX + d0 + 9] = c5_9
                    acc[(i0 + 5) * DMAX + d0 + 10] = c5_10
                    acc[(i0 + 5) * DMAX + d0 + 11] = c5_11
                    acc[(i0 + 5) * DMAX + d0 + 12] = c5_12
                    acc[(i0 + 5) * DMAX + d0 + 13] = c5_13
                    acc[(i0 + 5) * DMAX + d0 + 14] = c5_14
                    acc[(i0 + 5) * DMAX + d0 + 15] = c5_15
                    acc[(i0 + 6) * DMAX + d0 + 0] = c6_0
                    acc[(i0 + 6) * DMAX + d0 + 1] = c6_1
                    acc[(i0 + 6) * DMAX + d0 + 2] = c6_2
                    acc[(i0 + 6) * DMAX + d0 + 3] = c6_3
                    acc[(i0 + 6) * DMAX + d0 + 4] = c6_4
                    acc[(i0 + 6) * DMAX + d0 + 5] = c6_5
                    acc[(i0 + 6) * DMAX + d0 + 6] = c6_6
                    acc[(i0 + 6) * DMAX + d0 + 7] = c6_7
                    acc[(i0 + 6) * DMAX + d0 + 8] = c6_8
                    acc[(i0 + 6) * DMAX + d0 + 9] = c6_9
                    acc[(i0 + 6) * DMAX + d0 + 10] = c6_10
                    acc[(i0 + 6) * DMAX + d0 + 11] = c6_11
                    acc[(i0 + 6) * DMAX + d0 + 12] = c6_12
                    acc[(i0 + 6) * DMAX + d0 + 13] = c6_13
                    acc[(i0 + 6) * DMAX + d0 + 14] = c6_14
                    acc[(i0 + 6) * DMAX + d0 + 15] = c6_15
                    acc[(i0 + 7) * DMAX + d0 + 0] = c7_0
                    acc[(i0 + 7) * DMAX + d0 + 1] = c7_1
                    acc[(i0 + 7) * DMAX + d0 + 2] = c7_2
                    acc[(i0 + 7) * DMAX + d0 + 3] = c7_3
                    acc[(i0 + 7) * DMAX + d0 + 4] = c7_4
                    acc[(i0 + 7) * DMAX + d0 + 5] = c7_5
                    acc[(i0 + 7) * DMAX + d0 + 6] = c7_6
                    acc[(i0 + 7) * DMAX + d0 + 7] = c7_7
                    acc[(i0 + 7) * DMAX + d0 + 8] = c7_8
                    acc[(i0 + 7) * DMAX + d0 + 9] = c7_9
                    acc[(i0 + 7) * DMAX + d0 + 10] = c7_10
                    acc[(i0 + 7) * DMAX + d0 + 11] = c7_11
                    acc[(i0 + 7) * DMAX + d0 + 12] = c7_12
                    acc[(i0 + 7) * DMAX + d0 + 13] = c7_13
                    acc[(i0 + 7) * DMAX + d0 + 14] = c7_14
                    acc[(i0 + 7) * DMAX + d0 + 15] = c7_15
                for i in range(i0, i0 + PQ):
                    for d in range(dfull, nDv):
                        t = acc[i * DMAX + d] * alpha[i]
                        for j in range(nk64):
                            t += s[j * BQ + i] * pt.f32(v[vbase + (pt.u64(k0) + j) * nDv + d])
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
