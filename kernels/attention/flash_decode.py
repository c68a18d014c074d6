"""Flash decode for GPUs: few queries over a long KV cache, bandwidth-bound (PTX and AMDGCN: subgroup ops).

Same operands, scalars and semantics as the other flash kernels (kernels/attention/flash_gpu.py): q
[B * Hq, Lq, D], k [B * Hk, Lk, D], v [B * Hk, Lk, Dv] row-major of one dtype T, accumulated in f32; GQA by
ratio = Hq / Hk; an additive f32 mask at b * msb + h * msh + i * msq + j * msk when has_mask; query i sees
key j when -left <= j - i <= right; softcap > 0 applies softcap * tanh(s / softcap) before the mask.

attention_decode_<T>_d<N> (D, Dv <= N; N = 128 or 256) writes, per query row and split, the partial
maximum, sum and f32 accumulator (pm, pl, pacc) that attention_combine_<T> (flash_gpu.py) merges. The
16-bit kernels take q, k and v as 32-bit word views (two elements a word; D and Dv even).

Why this shape: decode reads every K and V row once and does little arithmetic per byte, so the kernel is
organised around the loads. A warp works on one key at a time: lane l owns head dims l, l + 32, ... (f32) or
the word pairs 2w, 2w + 1 of words w = l, l + 32, ... (16-bit), so each load instruction of a warp reads 128
contiguous bytes of a row. Every lane keeps the online-softmax state (m, l) of each query row redundantly
next to its own dims of the accumulator: the key loop has no barrier and no shared memory. Each warp has
KEYS = 4 keys in flight per step (their K and V loads issued before any reduction). One workgroup (WARPS = 4
warps) serves up to ROWS = 4 query rows that share a KV head (GQA heads x queries), so K and V are read once
for all of them (more rows: more workgroups along y, whose reads of the same keys at about the same time
mostly hit L2; 4 rows rather than 8 keep a d128 kernel near 128 registers, 4 workgroups an SM); q,
pre-scaled, stays in registers. The 16 partial dot products of a step (4 rows x 4 keys) are summed over the
warp by one transposing butterfly (32 shuffles where 16 butterflies take 80). A step whose keys every row of
the workgroup sees (no softcap) skips the per-key checks of `score` (a mask is still added). The warps of a
workgroup take interleaved groups of KEYS keys of the split's range and merge their states once, at the end,
through shared memory. Query rows of one workgroup share the union of their visible key ranges; `score`
masks each row's own window.

Launch: workgroup (128, 1, 1), groups (splits, B * Hk * ceil(ratio * Lq / 4), 1); split s covers keys
[lo + s * chunk, lo + (s + 1) * chunk) of the workgroup's visible range [lo, hi).

This file is written by tools/unroll/flash_decode.py (the per-row code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

WARPS = 4                     # warps per workgroup
THREADS = 32 * WARPS
KEYS = 4                      # keys in flight per warp per step
VEC = 1                       # 32-bit words a lane loads at once from a 16-bit row (4: pt.load_x4)
STEP = WARPS * KEYS           # keys per workgroup step
NEG_INF = float("-inf")
UNBOUNDED = 1 << 30
LOG2E = 1.4426950408889634    # exp(x) = 2 ** (x * LOG2E): the exponentials are pt.fast_exp2


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
def offset(m):
    """What exp() subtracts for a row whose maximum is m (0 while the row has seen nothing)."""
    r = m
    if m == NEG_INF:
        r = pt.f32(0.0)
    return r


@pt.device_fn
def bf16_low(w):
    """The first (lower-addressed) bfloat16 of a 32-bit word, widened: its bits are a float32's top half."""
    return pt.bitcast(w << 16, pt.f32)


@pt.device_fn
def bf16_high(w):
    return pt.bitcast(w & 0xFFFF0000, pt.f32)


@pt.device_fn
def f16_low(w):
    """The first (lower-addressed) float16 of a 32-bit word, widened."""
    return pt.f32(pt.bitcast(pt.u16(w & 0xFFFF), pt.f16))


@pt.device_fn
def f16_high(w):
    return pt.f32(pt.bitcast(pt.u16(w >> 16), pt.f16))


def _make_decode_d128(T, name):
    """Head dims up to 128, f32 elements: 4 dims a lane, 4 query rows a workgroup."""
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                         pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32,
                         Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32,
                         msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32, chunk: pt.u32,
                         splits: pt.u32):
        s_m = pt.shared(pt.f32, WARPS * 4)          # each warp's (m, l, accumulator) per row
        s_l = pt.shared(pt.f32, WARPS * 4)
        s_acc = pt.shared(pt.f32, WARPS * 512)
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        split = pt.group_index_x()
        grows = ratio * Lq                              # query rows on one KV head: (head, query) pairs
        blocks = (grows + 3) // 4
        kvrow = pt.group_index_y() // blocks
        t0 = pt.group_index_y() % blocks * 4            # this workgroup's first row among them
        nr = min(grows - t0, pt.u32(4))
        row0 = kvrow * grows + t0                        # its first output row (b * Hq + h) * Lq + i
        b = kvrow // (Hq // ratio)
        h0 = kvrow % (Hq // ratio) * ratio
        kbase = kvrow * Lk * D
        vbase = kvrow * Lk * Dv
        qa = t0 % Lq
        qb = (t0 + nr - 1) % Lq
        if (t0 + nr - 1) // Lq != t0 // Lq:               # the rows span every query
            qa = pt.u32(0)
            qb = Lq - 1
        c0 = key_lo(qa, left) + split * chunk
        c1 = min(c0 + chunk, key_hi(qb, right, Lk))
        d0 = lane
        d1 = lane + 32
        d2 = lane + 64
        d3 = lane + 96
        e0 = min(d0, D - 1)                             # past the head: load the last one
        f0 = min(d0, Dv - 1)
        ok0 = d0 < D
        e1 = min(d1, D - 1)
        f1 = min(d1, Dv - 1)
        ok1 = d1 < D
        e2 = min(d2, D - 1)
        f2 = min(d2, Dv - 1)
        ok2 = d2 < D
        e3 = min(d3, D - 1)
        f3 = min(d3, Dv - 1)
        ok3 = d3 < D
        u0 = t0
        mr0 = b * msb + (h0 + u0 // Lq) * msh + u0 % Lq * msq     # its mask row
        at = (kvrow * grows + u0) * D
        q0_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q0_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q0_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q0_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        m0 = pt.f32(NEG_INF)
        l0 = pt.f32(0.0)
        a0_0 = a0_1 = a0_2 = a0_3 = pt.f32(0.0)
        u1 = t0 + min(pt.u32(1), nr - 1)             # rows past nr load the last row and store nothing
        mr1 = b * msb + (h0 + u1 // Lq) * msh + u1 % Lq * msq
        at = (kvrow * grows + u1) * D
        q1_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q1_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q1_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q1_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        m1 = pt.f32(NEG_INF)
        l1 = pt.f32(0.0)
        a1_0 = a1_1 = a1_2 = a1_3 = pt.f32(0.0)
        u2 = t0 + min(pt.u32(2), nr - 1)
        mr2 = b * msb + (h0 + u2 // Lq) * msh + u2 % Lq * msq
        at = (kvrow * grows + u2) * D
        q2_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q2_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q2_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q2_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        m2 = pt.f32(NEG_INF)
        l2 = pt.f32(0.0)
        a2_0 = a2_1 = a2_2 = a2_3 = pt.f32(0.0)
        u3 = t0 + min(pt.u32(3), nr - 1)
        mr3 = b * msb + (h0 + u3 // Lq) * msh + u3 % Lq * msq
        at = (kvrow * grows + u3) * D
        q3_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q3_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q3_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q3_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        m3 = pt.f32(NEG_INF)
        l3 = pt.f32(0.0)
        a3_0 = a3_1 = a3_2 = a3_3 = pt.f32(0.0)
        up16 = (lane & 16) != 0
        up8 = (lane & 8) != 0
        up4 = (lane & 4) != 0
        up2 = (lane & 2) != 0
        plain = softcap <= 0.0
        for k0 in range(c0, c1, STEP):
            j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1
            j1 = j0 + 1
            j2 = j0 + 2
            j3 = j0 + 3
            kr = kbase + min(j0, c1 - 1) * D
            k0_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k0_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k0_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k0_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            kr = kbase + min(j1, c1 - 1) * D
            k1_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k1_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k1_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k1_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            kr = kbase + min(j2, c1 - 1) * D
            k2_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k2_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k2_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k2_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            kr = kbase + min(j3, c1 - 1) * D
            k3_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k3_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k3_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k3_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            vr = vbase + min(j0, c1 - 1) * Dv
            v0_0 = pt.f32(v[vr + f0])
            v0_1 = pt.f32(v[vr + f1])
            v0_2 = pt.f32(v[vr + f2])
            v0_3 = pt.f32(v[vr + f3])
            vr = vbase + min(j1, c1 - 1) * Dv
            v1_0 = pt.f32(v[vr + f0])
            v1_1 = pt.f32(v[vr + f1])
            v1_2 = pt.f32(v[vr + f2])
            v1_3 = pt.f32(v[vr + f3])
            vr = vbase + min(j2, c1 - 1) * Dv
            v2_0 = pt.f32(v[vr + f0])
            v2_1 = pt.f32(v[vr + f1])
            v2_2 = pt.f32(v[vr + f2])
            v2_3 = pt.f32(v[vr + f3])
            vr = vbase + min(j3, c1 - 1) * Dv
            v3_0 = pt.f32(v[vr + f0])
            v3_1 = pt.f32(v[vr + f1])
            v3_2 = pt.f32(v[vr + f2])
            v3_3 = pt.f32(v[vr + f3])
            # every key of the step visible to every row, no softcap: the scores need no per-key checks
            whole = plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right
            # the rows x keys dot products, summed over the warp by a transposing butterfly
            y0 = q0_0 * k0_0 + q0_1 * k0_1 + q0_2 * k0_2 + q0_3 * k0_3
            y1 = q0_0 * k1_0 + q0_1 * k1_1 + q0_2 * k1_2 + q0_3 * k1_3
            y2 = q0_0 * k2_0 + q0_1 * k2_1 + q0_2 * k2_2 + q0_3 * k2_3
            y3 = q0_0 * k3_0 + q0_1 * k3_1 + q0_2 * k3_2 + q0_3 * k3_3
            y4 = q1_0 * k0_0 + q1_1 * k0_1 + q1_2 * k0_2 + q1_3 * k0_3
            y5 = q1_0 * k1_0 + q1_1 * k1_1 + q1_2 * k1_2 + q1_3 * k1_3
            y6 = q1_0 * k2_0 + q1_1 * k2_1 + q1_2 * k2_2 + q1_3 * k2_3
            y7 = q1_0 * k3_0 + q1_1 * k3_1 + q1_2 * k3_2 + q1_3 * k3_3
            y8 = q2_0 * k0_0 + q2_1 * k0_1 + q2_2 * k0_2 + q2_3 * k0_3
            y9 = q2_0 * k1_0 + q2_1 * k1_1 + q2_2 * k1_2 + q2_3 * k1_3
            y10 = q2_0 * k2_0 + q2_1 * k2_1 + q2_2 * k2_2 + q2_3 * k2_3
            y11 = q2_0 * k3_0 + q2_1 * k3_1 + q2_2 * k3_2 + q2_3 * k3_3
            y12 = q3_0 * k0_0 + q3_1 * k0_1 + q3_2 * k0_2 + q3_3 * k0_3
            y13 = q3_0 * k1_0 + q3_1 * k1_1 + q3_2 * k1_2 + q3_3 * k1_3
            y14 = q3_0 * k2_0 + q3_1 * k2_1 + q3_2 * k2_2 + q3_3 * k2_3
            y15 = q3_0 * k3_0 + q3_1 * k3_1 + q3_2 * k3_2 + q3_3 * k3_3
            z16_0 = pt.where(up16, y8, y0) + pt.shuffle_xor(pt.where(up16, y0, y8), 16)
            z16_1 = pt.where(up16, y9, y1) + pt.shuffle_xor(pt.where(up16, y1, y9), 16)
            z16_2 = pt.where(up16, y10, y2) + pt.shuffle_xor(pt.where(up16, y2, y10), 16)
            z16_3 = pt.where(up16, y11, y3) + pt.shuffle_xor(pt.where(up16, y3, y11), 16)
            z16_4 = pt.where(up16, y12, y4) + pt.shuffle_xor(pt.where(up16, y4, y12), 16)
            z16_5 = pt.where(up16, y13, y5) + pt.shuffle_xor(pt.where(up16, y5, y13), 16)
            z16_6 = pt.where(up16, y14, y6) + pt.shuffle_xor(pt.where(up16, y6, y14), 16)
            z16_7 = pt.where(up16, y15, y7) + pt.shuffle_xor(pt.where(up16, y7, y15), 16)
            z8_0 = pt.where(up8, z16_4, z16_0) + pt.shuffle_xor(pt.where(up8, z16_0, z16_4), 8)
            z8_1 = pt.where(up8, z16_5, z16_1) + pt.shuffle_xor(pt.where(up8, z16_1, z16_5), 8)
            z8_2 = pt.where(up8, z16_6, z16_2) + pt.shuffle_xor(pt.where(up8, z16_2, z16_6), 8)
            z8_3 = pt.where(up8, z16_7, z16_3) + pt.shuffle_xor(pt.where(up8, z16_3, z16_7), 8)
            z4_0 = pt.where(up4, z8_2, z8_0) + pt.shuffle_xor(pt.where(up4, z8_0, z8_2), 4)
            z4_1 = pt.where(up4, z8_3, z8_1) + pt.shuffle_xor(pt.where(up4, z8_1, z8_3), 4)
            z2_0 = pt.where(up2, z4_1, z4_0) + pt.shuffle_xor(pt.where(up2, z4_0, z4_1), 2)
            z2_0 = z2_0 + pt.shuffle_xor(z2_0, 1)
            x0 = pt.shuffle(z2_0, 0)
            x1 = pt.shuffle(z2_0, 2)
            x2 = pt.shuffle(z2_0, 4)
            x3 = pt.shuffle(z2_0, 6)
            x4 = pt.shuffle(z2_0, 8)
            x5 = pt.shuffle(z2_0, 10)
            x6 = pt.shuffle(z2_0, 12)
            x7 = pt.shuffle(z2_0, 14)
            x8 = pt.shuffle(z2_0, 16)
            x9 = pt.shuffle(z2_0, 18)
            x10 = pt.shuffle(z2_0, 20)
            x11 = pt.shuffle(z2_0, 22)
            x12 = pt.shuffle(z2_0, 24)
            x13 = pt.shuffle(z2_0, 26)
            x14 = pt.shuffle(z2_0, 28)
            x15 = pt.shuffle(z2_0, 30)
            if whole:
                s0, s1, s2, s3 = x0, x1, x2, x3
                if has_mask != 0:
                    s0 = s0 + mask[mr0 + j0 * msk]
                    s1 = s1 + mask[mr0 + j1 * msk]
                    s2 = s2 + mask[mr0 + j2 * msk]
                    s3 = s3 + mask[mr0 + j3 * msk]
            else:
                qi = t0 % Lq
                s0 = score(x0, qi, j0, c1, left, right, mask, has_mask, mr0 + j0 * msk, softcap)
                s1 = score(x1, qi, j1, c1, left, right, mask, has_mask, mr0 + j1 * msk, softcap)
                s2 = score(x2, qi, j2, c1, left, right, mask, has_mask, mr0 + j2 * msk, softcap)
                s3 = score(x3, qi, j3, c1, left, right, mask, has_mask, mr0 + j3 * msk, softcap)
            mx = max(m0, s0, s1, s2, s3)
            base = offset(mx)
            alpha = pt.fast_exp2((m0 - base) * LOG2E)
            p0 = pt.fast_exp2((s0 - base) * LOG2E)
            p1 = pt.fast_exp2((s1 - base) * LOG2E)
            p2 = pt.fast_exp2((s2 - base) * LOG2E)
            p3 = pt.fast_exp2((s3 - base) * LOG2E)
            m0 = mx
            l0 = l0 * alpha + (p0 + p1 + p2 + p3)
            a0_0 = a0_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
            a0_1 = a0_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
            a0_2 = a0_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
            a0_3 = a0_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 1:
                if whole:
                    s0, s1, s2, s3 = x4, x5, x6, x7
                    if has_mask != 0:
                        s0 = s0 + mask[mr1 + j0 * msk]
                        s1 = s1 + mask[mr1 + j1 * msk]
                        s2 = s2 + mask[mr1 + j2 * msk]
                        s3 = s3 + mask[mr1 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(1), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x4, qi, j0, c1, left, right, mask, has_mask, mr1 + j0 * msk, softcap)
                    s1 = score(x5, qi, j1, c1, left, right, mask, has_mask, mr1 + j1 * msk, softcap)
                    s2 = score(x6, qi, j2, c1, left, right, mask, has_mask, mr1 + j2 * msk, softcap)
                    s3 = score(x7, qi, j3, c1, left, right, mask, has_mask, mr1 + j3 * msk, softcap)
                mx = max(m1, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m1 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m1 = mx
                l1 = l1 * alpha + (p0 + p1 + p2 + p3)
                a1_0 = a1_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a1_1 = a1_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a1_2 = a1_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a1_3 = a1_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 2:
                if whole:
                    s0, s1, s2, s3 = x8, x9, x10, x11
                    if has_mask != 0:
                        s0 = s0 + mask[mr2 + j0 * msk]
                        s1 = s1 + mask[mr2 + j1 * msk]
                        s2 = s2 + mask[mr2 + j2 * msk]
                        s3 = s3 + mask[mr2 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(2), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x8, qi, j0, c1, left, right, mask, has_mask, mr2 + j0 * msk, softcap)
                    s1 = score(x9, qi, j1, c1, left, right, mask, has_mask, mr2 + j1 * msk, softcap)
                    s2 = score(x10, qi, j2, c1, left, right, mask, has_mask, mr2 + j2 * msk, softcap)
                    s3 = score(x11, qi, j3, c1, left, right, mask, has_mask, mr2 + j3 * msk, softcap)
                mx = max(m2, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m2 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m2 = mx
                l2 = l2 * alpha + (p0 + p1 + p2 + p3)
                a2_0 = a2_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a2_1 = a2_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a2_2 = a2_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a2_3 = a2_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 3:
                if whole:
                    s0, s1, s2, s3 = x12, x13, x14, x15
                    if has_mask != 0:
                        s0 = s0 + mask[mr3 + j0 * msk]
                        s1 = s1 + mask[mr3 + j1 * msk]
                        s2 = s2 + mask[mr3 + j2 * msk]
                        s3 = s3 + mask[mr3 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(3), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x12, qi, j0, c1, left, right, mask, has_mask, mr3 + j0 * msk, softcap)
                    s1 = score(x13, qi, j1, c1, left, right, mask, has_mask, mr3 + j1 * msk, softcap)
                    s2 = score(x14, qi, j2, c1, left, right, mask, has_mask, mr3 + j2 * msk, softcap)
                    s3 = score(x15, qi, j3, c1, left, right, mask, has_mask, mr3 + j3 * msk, softcap)
                mx = max(m3, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m3 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m3 = mx
                l3 = l3 * alpha + (p0 + p1 + p2 + p3)
                a3_0 = a3_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a3_1 = a3_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a3_2 = a3_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a3_3 = a3_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
        if lane == 0:
            s_m[warp * 4 + 0] = m0
            s_l[warp * 4 + 0] = l0
            s_m[warp * 4 + 1] = m1
            s_l[warp * 4 + 1] = l1
            s_m[warp * 4 + 2] = m2
            s_l[warp * 4 + 2] = l2
            s_m[warp * 4 + 3] = m3
            s_l[warp * 4 + 3] = l3
        s_acc[(warp * 4 + 0) * 128 + d0] = a0_0
        s_acc[(warp * 4 + 0) * 128 + d1] = a0_1
        s_acc[(warp * 4 + 0) * 128 + d2] = a0_2
        s_acc[(warp * 4 + 0) * 128 + d3] = a0_3
        s_acc[(warp * 4 + 1) * 128 + d0] = a1_0
        s_acc[(warp * 4 + 1) * 128 + d1] = a1_1
        s_acc[(warp * 4 + 1) * 128 + d2] = a1_2
        s_acc[(warp * 4 + 1) * 128 + d3] = a1_3
        s_acc[(warp * 4 + 2) * 128 + d0] = a2_0
        s_acc[(warp * 4 + 2) * 128 + d1] = a2_1
        s_acc[(warp * 4 + 2) * 128 + d2] = a2_2
        s_acc[(warp * 4 + 2) * 128 + d3] = a2_3
        s_acc[(warp * 4 + 3) * 128 + d0] = a3_0
        s_acc[(warp * 4 + 3) * 128 + d1] = a3_1
        s_acc[(warp * 4 + 3) * 128 + d2] = a3_2
        s_acc[(warp * 4 + 3) * 128 + d3] = a3_3
        pt.workgroup_barrier()
        for e in range(t, nr * Dv, THREADS):            # merge the warps' states: one (row, dim) a thread
            r = e // Dv
            d = e % Dv
            big = max(s_m[0 + r], s_m[4 + r], s_m[8 + r], s_m[12 + r])
            base = offset(big)
            w0 = pt.fast_exp2((s_m[0 + r] - base) * LOG2E)
            w1 = pt.fast_exp2((s_m[4 + r] - base) * LOG2E)
            w2 = pt.fast_exp2((s_m[8 + r] - base) * LOG2E)
            w3 = pt.fast_exp2((s_m[12 + r] - base) * LOG2E)
            part = (row0 + r) * splits + split
            pacc[part * Dv + d] = s_acc[(0 + r) * 128 + d] * w0 + s_acc[(4 + r) * 128 + d] * w1 + s_acc[(8 + r) * 128 + d] * w2 + s_acc[(12 + r) * 128 + d] * w3
            if d == 0:
                pm[part] = big
                pl[part] = s_l[0 + r] * w0 + s_l[4 + r] * w1 + s_l[8 + r] * w2 + s_l[12 + r] * w3

    return attention_decode


def _make_decode_words_d128(T, name, low, high):
    """Head dims up to 128 (even), 16-bit q, k, v as 32-bit words: 4 dims a lane, 4 query rows
    a workgroup; `low` and `high` widen a word's two elements."""
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode(q: pt.In[pt.u32], k: pt.In[pt.u32], v: pt.In[pt.u32], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                         pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32,
                         Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32,
                         msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32, chunk: pt.u32,
                         splits: pt.u32):
        s_m = pt.shared(pt.f32, WARPS * 4)          # each warp's (m, l, accumulator) per row
        s_l = pt.shared(pt.f32, WARPS * 4)
        s_acc = pt.shared(pt.f32, WARPS * 512)
        Dw = D // 2                                   # words a row of q or k, of v
        Dvw = Dv // 2
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        split = pt.group_index_x()
        grows = ratio * Lq                              # query rows on one KV head: (head, query) pairs
        blocks = (grows + 3) // 4
        kvrow = pt.group_index_y() // blocks
        t0 = pt.group_index_y() % blocks * 4            # this workgroup's first row among them
        nr = min(grows - t0, pt.u32(4))
        row0 = kvrow * grows + t0                        # its first output row (b * Hq + h) * Lq + i
        b = kvrow // (Hq // ratio)
        h0 = kvrow % (Hq // ratio) * ratio
        kbase = kvrow * Lk * Dw
        vbase = kvrow * Lk * Dvw
        qa = t0 % Lq
        qb = (t0 + nr - 1) % Lq
        if (t0 + nr - 1) // Lq != t0 // Lq:               # the rows span every query
            qa = pt.u32(0)
            qb = Lq - 1
        c0 = key_lo(qa, left) + split * chunk
        c1 = min(c0 + chunk, key_hi(qb, right, Lk))
        d0 = lane
        d1 = lane + 32
        e0 = min(d0, Dw - 1)                             # past the head: load the last one
        f0 = min(d0, Dvw - 1)
        ok0 = d0 < Dw
        e1 = min(d1, Dw - 1)
        f1 = min(d1, Dvw - 1)
        ok1 = d1 < Dw
        u0 = t0
        mr0 = b * msb + (h0 + u0 // Lq) * msh + u0 % Lq * msq     # its mask row
        at = (kvrow * grows + u0) * Dw
        x = q[at + e0]
        q0_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q0_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q0_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q0_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        m0 = pt.f32(NEG_INF)
        l0 = pt.f32(0.0)
        a0_0 = a0_1 = a0_2 = a0_3 = pt.f32(0.0)
        u1 = t0 + min(pt.u32(1), nr - 1)             # rows past nr load the last row and store nothing
        mr1 = b * msb + (h0 + u1 // Lq) * msh + u1 % Lq * msq
        at = (kvrow * grows + u1) * Dw
        x = q[at + e0]
        q1_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q1_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q1_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q1_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        m1 = pt.f32(NEG_INF)
        l1 = pt.f32(0.0)
        a1_0 = a1_1 = a1_2 = a1_3 = pt.f32(0.0)
        u2 = t0 + min(pt.u32(2), nr - 1)
        mr2 = b * msb + (h0 + u2 // Lq) * msh + u2 % Lq * msq
        at = (kvrow * grows + u2) * Dw
        x = q[at + e0]
        q2_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q2_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q2_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q2_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        m2 = pt.f32(NEG_INF)
        l2 = pt.f32(0.0)
        a2_0 = a2_1 = a2_2 = a2_3 = pt.f32(0.0)
        u3 = t0 + min(pt.u32(3), nr - 1)
        mr3 = b * msb + (h0 + u3 // Lq) * msh + u3 % Lq * msq
        at = (kvrow * grows + u3) * Dw
        x = q[at + e0]
        q3_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q3_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q3_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q3_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        m3 = pt.f32(NEG_INF)
        l3 = pt.f32(0.0)
        a3_0 = a3_1 = a3_2 = a3_3 = pt.f32(0.0)
        up16 = (lane & 16) != 0
        up8 = (lane & 8) != 0
        up4 = (lane & 4) != 0
        up2 = (lane & 2) != 0
        plain = softcap <= 0.0
        for k0 in range(c0, c1, STEP):
            j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1
            j1 = j0 + 1
            j2 = j0 + 2
            j3 = j0 + 3
            kr = kbase + min(j0, c1 - 1) * Dw
            x = k[kr + e0]
            k0_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k0_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k0_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k0_3 = pt.where(ok1, high(x), pt.f32(0.0))
            kr = kbase + min(j1, c1 - 1) * Dw
            x = k[kr + e0]
            k1_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k1_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k1_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k1_3 = pt.where(ok1, high(x), pt.f32(0.0))
            kr = kbase + min(j2, c1 - 1) * Dw
            x = k[kr + e0]
            k2_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k2_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k2_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k2_3 = pt.where(ok1, high(x), pt.f32(0.0))
            kr = kbase + min(j3, c1 - 1) * Dw
            x = k[kr + e0]
            k3_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k3_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k3_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k3_3 = pt.where(ok1, high(x), pt.f32(0.0))
            vr = vbase + min(j0, c1 - 1) * Dvw
            x = v[vr + f0]
            v0_0 = low(x)
            v0_1 = high(x)
            x = v[vr + f1]
            v0_2 = low(x)
            v0_3 = high(x)
            vr = vbase + min(j1, c1 - 1) * Dvw
            x = v[vr + f0]
            v1_0 = low(x)
            v1_1 = high(x)
            x = v[vr + f1]
            v1_2 = low(x)
            v1_3 = high(x)
            vr = vbase + min(j2, c1 - 1) * Dvw
            x = v[vr + f0]
            v2_0 = low(x)
            v2_1 = high(x)
            x = v[vr + f1]
            v2_2 = low(x)
            v2_3 = high(x)
            vr = vbase + min(j3, c1 - 1) * Dvw
            x = v[vr + f0]
            v3_0 = low(x)
            v3_1 = high(x)
            x = v[vr + f1]
            v3_2 = low(x)
            v3_3 = high(x)
            # every key of the step visible to every row, no softcap: the scores need no per-key checks
            whole = plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right
            # the rows x keys dot products, summed over the warp by a transposing butterfly
            y0 = q0_0 * k0_0 + q0_1 * k0_1 + q0_2 * k0_2 + q0_3 * k0_3
            y1 = q0_0 * k1_0 + q0_1 * k1_1 + q0_2 * k1_2 + q0_3 * k1_3
            y2 = q0_0 * k2_0 + q0_1 * k2_1 + q0_2 * k2_2 + q0_3 * k2_3
            y3 = q0_0 * k3_0 + q0_1 * k3_1 + q0_2 * k3_2 + q0_3 * k3_3
            y4 = q1_0 * k0_0 + q1_1 * k0_1 + q1_2 * k0_2 + q1_3 * k0_3
            y5 = q1_0 * k1_0 + q1_1 * k1_1 + q1_2 * k1_2 + q1_3 * k1_3
            y6 = q1_0 * k2_0 + q1_1 * k2_1 + q1_2 * k2_2 + q1_3 * k2_3
            y7 = q1_0 * k3_0 + q1_1 * k3_1 + q1_2 * k3_2 + q1_3 * k3_3
            y8 = q2_0 * k0_0 + q2_1 * k0_1 + q2_2 * k0_2 + q2_3 * k0_3
            y9 = q2_0 * k1_0 + q2_1 * k1_1 + q2_2 * k1_2 + q2_3 * k1_3
            y10 = q2_0 * k2_0 + q2_1 * k2_1 + q2_2 * k2_2 + q2_3 * k2_3
            y11 = q2_0 * k3_0 + q2_1 * k3_1 + q2_2 * k3_2 + q2_3 * k3_3
            y12 = q3_0 * k0_0 + q3_1 * k0_1 + q3_2 * k0_2 + q3_3 * k0_3
            y13 = q3_0 * k1_0 + q3_1 * k1_1 + q3_2 * k1_2 + q3_3 * k1_3
            y14 = q3_0 * k2_0 + q3_1 * k2_1 + q3_2 * k2_2 + q3_3 * k2_3
            y15 = q3_0 * k3_0 + q3_1 * k3_1 + q3_2 * k3_2 + q3_3 * k3_3
            z16_0 = pt.where(up16, y8, y0) + pt.shuffle_xor(pt.where(up16, y0, y8), 16)
            z16_1 = pt.where(up16, y9, y1) + pt.shuffle_xor(pt.where(up16, y1, y9), 16)
            z16_2 = pt.where(up16, y10, y2) + pt.shuffle_xor(pt.where(up16, y2, y10), 16)
            z16_3 = pt.where(up16, y11, y3) + pt.shuffle_xor(pt.where(up16, y3, y11), 16)
            z16_4 = pt.where(up16, y12, y4) + pt.shuffle_xor(pt.where(up16, y4, y12), 16)
            z16_5 = pt.where(up16, y13, y5) + pt.shuffle_xor(pt.where(up16, y5, y13), 16)
            z16_6 = pt.where(up16, y14, y6) + pt.shuffle_xor(pt.where(up16, y6, y14), 16)
            z16_7 = pt.where(up16, y15, y7) + pt.shuffle_xor(pt.where(up16, y7, y15), 16)
            z8_0 = pt.where(up8, z16_4, z16_0) + pt.shuffle_xor(pt.where(up8, z16_0, z16_4), 8)
            z8_1 = pt.where(up8, z16_5, z16_1) + pt.shuffle_xor(pt.where(up8, z16_1, z16_5), 8)
            z8_2 = pt.where(up8, z16_6, z16_2) + pt.shuffle_xor(pt.where(up8, z16_2, z16_6), 8)
            z8_3 = pt.where(up8, z16_7, z16_3) + pt.shuffle_xor(pt.where(up8, z16_3, z16_7), 8)
            z4_0 = pt.where(up4, z8_2, z8_0) + pt.shuffle_xor(pt.where(up4, z8_0, z8_2), 4)
            z4_1 = pt.where(up4, z8_3, z8_1) + pt.shuffle_xor(pt.where(up4, z8_1, z8_3), 4)
            z2_0 = pt.where(up2, z4_1, z4_0) + pt.shuffle_xor(pt.where(up2, z4_0, z4_1), 2)
            z2_0 = z2_0 + pt.shuffle_xor(z2_0, 1)
            x0 = pt.shuffle(z2_0, 0)
            x1 = pt.shuffle(z2_0, 2)
            x2 = pt.shuffle(z2_0, 4)
            x3 = pt.shuffle(z2_0, 6)
            x4 = pt.shuffle(z2_0, 8)
            x5 = pt.shuffle(z2_0, 10)
            x6 = pt.shuffle(z2_0, 12)
            x7 = pt.shuffle(z2_0, 14)
            x8 = pt.shuffle(z2_0, 16)
            x9 = pt.shuffle(z2_0, 18)
            x10 = pt.shuffle(z2_0, 20)
            x11 = pt.shuffle(z2_0, 22)
            x12 = pt.shuffle(z2_0, 24)
            x13 = pt.shuffle(z2_0, 26)
            x14 = pt.shuffle(z2_0, 28)
            x15 = pt.shuffle(z2_0, 30)
            if whole:
                s0, s1, s2, s3 = x0, x1, x2, x3
                if has_mask != 0:
                    s0 = s0 + mask[mr0 + j0 * msk]
                    s1 = s1 + mask[mr0 + j1 * msk]
                    s2 = s2 + mask[mr0 + j2 * msk]
                    s3 = s3 + mask[mr0 + j3 * msk]
            else:
                qi = t0 % Lq
                s0 = score(x0, qi, j0, c1, left, right, mask, has_mask, mr0 + j0 * msk, softcap)
                s1 = score(x1, qi, j1, c1, left, right, mask, has_mask, mr0 + j1 * msk, softcap)
                s2 = score(x2, qi, j2, c1, left, right, mask, has_mask, mr0 + j2 * msk, softcap)
                s3 = score(x3, qi, j3, c1, left, right, mask, has_mask, mr0 + j3 * msk, softcap)
            mx = max(m0, s0, s1, s2, s3)
            base = offset(mx)
            alpha = pt.fast_exp2((m0 - base) * LOG2E)
            p0 = pt.fast_exp2((s0 - base) * LOG2E)
            p1 = pt.fast_exp2((s1 - base) * LOG2E)
            p2 = pt.fast_exp2((s2 - base) * LOG2E)
            p3 = pt.fast_exp2((s3 - base) * LOG2E)
            m0 = mx
            l0 = l0 * alpha + (p0 + p1 + p2 + p3)
            a0_0 = a0_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
            a0_1 = a0_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
            a0_2 = a0_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
            a0_3 = a0_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 1:
                if whole:
                    s0, s1, s2, s3 = x4, x5, x6, x7
                    if has_mask != 0:
                        s0 = s0 + mask[mr1 + j0 * msk]
                        s1 = s1 + mask[mr1 + j1 * msk]
                        s2 = s2 + mask[mr1 + j2 * msk]
                        s3 = s3 + mask[mr1 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(1), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x4, qi, j0, c1, left, right, mask, has_mask, mr1 + j0 * msk, softcap)
                    s1 = score(x5, qi, j1, c1, left, right, mask, has_mask, mr1 + j1 * msk, softcap)
                    s2 = score(x6, qi, j2, c1, left, right, mask, has_mask, mr1 + j2 * msk, softcap)
                    s3 = score(x7, qi, j3, c1, left, right, mask, has_mask, mr1 + j3 * msk, softcap)
                mx = max(m1, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m1 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m1 = mx
                l1 = l1 * alpha + (p0 + p1 + p2 + p3)
                a1_0 = a1_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a1_1 = a1_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a1_2 = a1_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a1_3 = a1_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 2:
                if whole:
                    s0, s1, s2, s3 = x8, x9, x10, x11
                    if has_mask != 0:
                        s0 = s0 + mask[mr2 + j0 * msk]
                        s1 = s1 + mask[mr2 + j1 * msk]
                        s2 = s2 + mask[mr2 + j2 * msk]
                        s3 = s3 + mask[mr2 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(2), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x8, qi, j0, c1, left, right, mask, has_mask, mr2 + j0 * msk, softcap)
                    s1 = score(x9, qi, j1, c1, left, right, mask, has_mask, mr2 + j1 * msk, softcap)
                    s2 = score(x10, qi, j2, c1, left, right, mask, has_mask, mr2 + j2 * msk, softcap)
                    s3 = score(x11, qi, j3, c1, left, right, mask, has_mask, mr2 + j3 * msk, softcap)
                mx = max(m2, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m2 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m2 = mx
                l2 = l2 * alpha + (p0 + p1 + p2 + p3)
                a2_0 = a2_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a2_1 = a2_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a2_2 = a2_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a2_3 = a2_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            if nr > 3:
                if whole:
                    s0, s1, s2, s3 = x12, x13, x14, x15
                    if has_mask != 0:
                        s0 = s0 + mask[mr3 + j0 * msk]
                        s1 = s1 + mask[mr3 + j1 * msk]
                        s2 = s2 + mask[mr3 + j2 * msk]
                        s3 = s3 + mask[mr3 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(3), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x12, qi, j0, c1, left, right, mask, has_mask, mr3 + j0 * msk, softcap)
                    s1 = score(x13, qi, j1, c1, left, right, mask, has_mask, mr3 + j1 * msk, softcap)
                    s2 = score(x14, qi, j2, c1, left, right, mask, has_mask, mr3 + j2 * msk, softcap)
                    s3 = score(x15, qi, j3, c1, left, right, mask, has_mask, mr3 + j3 * msk, softcap)
                mx = max(m3, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m3 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m3 = mx
                l3 = l3 * alpha + (p0 + p1 + p2 + p3)
                a3_0 = a3_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a3_1 = a3_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a3_2 = a3_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a3_3 = a3_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
        if lane == 0:
            s_m[warp * 4 + 0] = m0
            s_l[warp * 4 + 0] = l0
            s_m[warp * 4 + 1] = m1
            s_l[warp * 4 + 1] = l1
            s_m[warp * 4 + 2] = m2
            s_l[warp * 4 + 2] = l2
            s_m[warp * 4 + 3] = m3
            s_l[warp * 4 + 3] = l3
        s_acc[(warp * 4 + 0) * 128 + 2 * d0] = a0_0
        s_acc[(warp * 4 + 0) * 128 + 2 * d0 + 1] = a0_1
        s_acc[(warp * 4 + 0) * 128 + 2 * d1] = a0_2
        s_acc[(warp * 4 + 0) * 128 + 2 * d1 + 1] = a0_3
        s_acc[(warp * 4 + 1) * 128 + 2 * d0] = a1_0
        s_acc[(warp * 4 + 1) * 128 + 2 * d0 + 1] = a1_1
        s_acc[(warp * 4 + 1) * 128 + 2 * d1] = a1_2
        s_acc[(warp * 4 + 1) * 128 + 2 * d1 + 1] = a1_3
        s_acc[(warp * 4 + 2) * 128 + 2 * d0] = a2_0
        s_acc[(warp * 4 + 2) * 128 + 2 * d0 + 1] = a2_1
        s_acc[(warp * 4 + 2) * 128 + 2 * d1] = a2_2
        s_acc[(warp * 4 + 2) * 128 + 2 * d1 + 1] = a2_3
        s_acc[(warp * 4 + 3) * 128 + 2 * d0] = a3_0
        s_acc[(warp * 4 + 3) * 128 + 2 * d0 + 1] = a3_1
        s_acc[(warp * 4 + 3) * 128 + 2 * d1] = a3_2
        s_acc[(warp * 4 + 3) * 128 + 2 * d1 + 1] = a3_3
        pt.workgroup_barrier()
        for e in range(t, nr * Dv, THREADS):            # merge the warps' states: one (row, dim) a thread
            r = e // Dv
            d = e % Dv
            big = max(s_m[0 + r], s_m[4 + r], s_m[8 + r], s_m[12 + r])
            base = offset(big)
            w0 = pt.fast_exp2((s_m[0 + r] - base) * LOG2E)
            w1 = pt.fast_exp2((s_m[4 + r] - base) * LOG2E)
            w2 = pt.fast_exp2((s_m[8 + r] - base) * LOG2E)
            w3 = pt.fast_exp2((s_m[12 + r] - base) * LOG2E)
            part = (row0 + r) * splits + split
            pacc[part * Dv + d] = s_acc[(0 + r) * 128 + d] * w0 + s_acc[(4 + r) * 128 + d] * w1 + s_acc[(8 + r) * 128 + d] * w2 + s_acc[(12 + r) * 128 + d] * w3
            if d == 0:
                pm[part] = big
                pl[part] = s_l[0 + r] * w0 + s_l[4 + r] * w1 + s_l[8 + r] * w2 + s_l[12 + r] * w3

    return attention_decode


def _make_decode_d256(T, name):
    """Head dims up to 256, f32 elements: 8 dims a lane, 4 query rows a workgroup."""
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                         pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32,
                         Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32,
                         msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32, chunk: pt.u32,
                         splits: pt.u32):
        s_m = pt.shared(pt.f32, WARPS * 4)          # each warp's (m, l, accumulator) per row
        s_l = pt.shared(pt.f32, WARPS * 4)
        s_acc = pt.shared(pt.f32, WARPS * 1024)
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        split = pt.group_index_x()
        grows = ratio * Lq                              # query rows on one KV head: (head, query) pairs
        blocks = (grows + 3) // 4
        kvrow = pt.group_index_y() // blocks
        t0 = pt.group_index_y() % blocks * 4            # this workgroup's first row among them
        nr = min(grows - t0, pt.u32(4))
        row0 = kvrow * grows + t0                        # its first output row (b * Hq + h) * Lq + i
        b = kvrow // (Hq // ratio)
        h0 = kvrow % (Hq // ratio) * ratio
        kbase = kvrow * Lk * D
        vbase = kvrow * Lk * Dv
        qa = t0 % Lq
        qb = (t0 + nr - 1) % Lq
        if (t0 + nr - 1) // Lq != t0 // Lq:               # the rows span every query
            qa = pt.u32(0)
            qb = Lq - 1
        c0 = key_lo(qa, left) + split * chunk
        c1 = min(c0 + chunk, key_hi(qb, right, Lk))
        d0 = lane
        d1 = lane + 32
        d2 = lane + 64
        d3 = lane + 96
        d4 = lane + 128
        d5 = lane + 160
        d6 = lane + 192
        d7 = lane + 224
        e0 = min(d0, D - 1)                             # past the head: load the last one
        f0 = min(d0, Dv - 1)
        ok0 = d0 < D
        e1 = min(d1, D - 1)
        f1 = min(d1, Dv - 1)
        ok1 = d1 < D
        e2 = min(d2, D - 1)
        f2 = min(d2, Dv - 1)
        ok2 = d2 < D
        e3 = min(d3, D - 1)
        f3 = min(d3, Dv - 1)
        ok3 = d3 < D
        e4 = min(d4, D - 1)
        f4 = min(d4, Dv - 1)
        ok4 = d4 < D
        e5 = min(d5, D - 1)
        f5 = min(d5, Dv - 1)
        ok5 = d5 < D
        e6 = min(d6, D - 1)
        f6 = min(d6, Dv - 1)
        ok6 = d6 < D
        e7 = min(d7, D - 1)
        f7 = min(d7, Dv - 1)
        ok7 = d7 < D
        u0 = t0
        mr0 = b * msb + (h0 + u0 // Lq) * msh + u0 % Lq * msq     # its mask row
        at = (kvrow * grows + u0) * D
        q0_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q0_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q0_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q0_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        q0_4 = pt.where(ok4, pt.f32(q[at + e4]) * scale, pt.f32(0.0))
        q0_5 = pt.where(ok5, pt.f32(q[at + e5]) * scale, pt.f32(0.0))
        q0_6 = pt.where(ok6, pt.f32(q[at + e6]) * scale, pt.f32(0.0))
        q0_7 = pt.where(ok7, pt.f32(q[at + e7]) * scale, pt.f32(0.0))
        m0 = pt.f32(NEG_INF)
        l0 = pt.f32(0.0)
        a0_0 = a0_1 = a0_2 = a0_3 = a0_4 = a0_5 = a0_6 = a0_7 = pt.f32(0.0)
        u1 = t0 + min(pt.u32(1), nr - 1)             # rows past nr load the last row and store nothing
        mr1 = b * msb + (h0 + u1 // Lq) * msh + u1 % Lq * msq
        at = (kvrow * grows + u1) * D
        q1_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q1_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q1_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q1_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        q1_4 = pt.where(ok4, pt.f32(q[at + e4]) * scale, pt.f32(0.0))
        q1_5 = pt.where(ok5, pt.f32(q[at + e5]) * scale, pt.f32(0.0))
        q1_6 = pt.where(ok6, pt.f32(q[at + e6]) * scale, pt.f32(0.0))
        q1_7 = pt.where(ok7, pt.f32(q[at + e7]) * scale, pt.f32(0.0))
        m1 = pt.f32(NEG_INF)
        l1 = pt.f32(0.0)
        a1_0 = a1_1 = a1_2 = a1_3 = a1_4 = a1_5 = a1_6 = a1_7 = pt.f32(0.0)
        u2 = t0 + min(pt.u32(2), nr - 1)
        mr2 = b * msb + (h0 + u2 // Lq) * msh + u2 % Lq * msq
        at = (kvrow * grows + u2) * D
        q2_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q2_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q2_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q2_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        q2_4 = pt.where(ok4, pt.f32(q[at + e4]) * scale, pt.f32(0.0))
        q2_5 = pt.where(ok5, pt.f32(q[at + e5]) * scale, pt.f32(0.0))
        q2_6 = pt.where(ok6, pt.f32(q[at + e6]) * scale, pt.f32(0.0))
        q2_7 = pt.where(ok7, pt.f32(q[at + e7]) * scale, pt.f32(0.0))
        m2 = pt.f32(NEG_INF)
        l2 = pt.f32(0.0)
        a2_0 = a2_1 = a2_2 = a2_3 = a2_4 = a2_5 = a2_6 = a2_7 = pt.f32(0.0)
        u3 = t0 + min(pt.u32(3), nr - 1)
        mr3 = b * msb + (h0 + u3 // Lq) * msh + u3 % Lq * msq
        at = (kvrow * grows + u3) * D
        q3_0 = pt.where(ok0, pt.f32(q[at + e0]) * scale, pt.f32(0.0))
        q3_1 = pt.where(ok1, pt.f32(q[at + e1]) * scale, pt.f32(0.0))
        q3_2 = pt.where(ok2, pt.f32(q[at + e2]) * scale, pt.f32(0.0))
        q3_3 = pt.where(ok3, pt.f32(q[at + e3]) * scale, pt.f32(0.0))
        q3_4 = pt.where(ok4, pt.f32(q[at + e4]) * scale, pt.f32(0.0))
        q3_5 = pt.where(ok5, pt.f32(q[at + e5]) * scale, pt.f32(0.0))
        q3_6 = pt.where(ok6, pt.f32(q[at + e6]) * scale, pt.f32(0.0))
        q3_7 = pt.where(ok7, pt.f32(q[at + e7]) * scale, pt.f32(0.0))
        m3 = pt.f32(NEG_INF)
        l3 = pt.f32(0.0)
        a3_0 = a3_1 = a3_2 = a3_3 = a3_4 = a3_5 = a3_6 = a3_7 = pt.f32(0.0)
        up16 = (lane & 16) != 0
        up8 = (lane & 8) != 0
        up4 = (lane & 4) != 0
        up2 = (lane & 2) != 0
        plain = softcap <= 0.0
        for k0 in range(c0, c1, STEP):
            j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1
            j1 = j0 + 1
            j2 = j0 + 2
            j3 = j0 + 3
            kr = kbase + min(j0, c1 - 1) * D
            k0_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k0_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k0_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k0_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            k0_4 = pt.where(ok4, pt.f32(k[kr + e4]), pt.f32(0.0))
            k0_5 = pt.where(ok5, pt.f32(k[kr + e5]), pt.f32(0.0))
            k0_6 = pt.where(ok6, pt.f32(k[kr + e6]), pt.f32(0.0))
            k0_7 = pt.where(ok7, pt.f32(k[kr + e7]), pt.f32(0.0))
            kr = kbase + min(j1, c1 - 1) * D
            k1_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k1_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k1_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k1_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            k1_4 = pt.where(ok4, pt.f32(k[kr + e4]), pt.f32(0.0))
            k1_5 = pt.where(ok5, pt.f32(k[kr + e5]), pt.f32(0.0))
            k1_6 = pt.where(ok6, pt.f32(k[kr + e6]), pt.f32(0.0))
            k1_7 = pt.where(ok7, pt.f32(k[kr + e7]), pt.f32(0.0))
            kr = kbase + min(j2, c1 - 1) * D
            k2_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k2_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k2_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k2_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            k2_4 = pt.where(ok4, pt.f32(k[kr + e4]), pt.f32(0.0))
            k2_5 = pt.where(ok5, pt.f32(k[kr + e5]), pt.f32(0.0))
            k2_6 = pt.where(ok6, pt.f32(k[kr + e6]), pt.f32(0.0))
            k2_7 = pt.where(ok7, pt.f32(k[kr + e7]), pt.f32(0.0))
            kr = kbase + min(j3, c1 - 1) * D
            k3_0 = pt.where(ok0, pt.f32(k[kr + e0]), pt.f32(0.0))
            k3_1 = pt.where(ok1, pt.f32(k[kr + e1]), pt.f32(0.0))
            k3_2 = pt.where(ok2, pt.f32(k[kr + e2]), pt.f32(0.0))
            k3_3 = pt.where(ok3, pt.f32(k[kr + e3]), pt.f32(0.0))
            k3_4 = pt.where(ok4, pt.f32(k[kr + e4]), pt.f32(0.0))
            k3_5 = pt.where(ok5, pt.f32(k[kr + e5]), pt.f32(0.0))
            k3_6 = pt.where(ok6, pt.f32(k[kr + e6]), pt.f32(0.0))
            k3_7 = pt.where(ok7, pt.f32(k[kr + e7]), pt.f32(0.0))
            vr = vbase + min(j0, c1 - 1) * Dv
            v0_0 = pt.f32(v[vr + f0])
            v0_1 = pt.f32(v[vr + f1])
            v0_2 = pt.f32(v[vr + f2])
            v0_3 = pt.f32(v[vr + f3])
            v0_4 = pt.f32(v[vr + f4])
            v0_5 = pt.f32(v[vr + f5])
            v0_6 = pt.f32(v[vr + f6])
            v0_7 = pt.f32(v[vr + f7])
            vr = vbase + min(j1, c1 - 1) * Dv
            v1_0 = pt.f32(v[vr + f0])
            v1_1 = pt.f32(v[vr + f1])
            v1_2 = pt.f32(v[vr + f2])
            v1_3 = pt.f32(v[vr + f3])
            v1_4 = pt.f32(v[vr + f4])
            v1_5 = pt.f32(v[vr + f5])
            v1_6 = pt.f32(v[vr + f6])
            v1_7 = pt.f32(v[vr + f7])
            vr = vbase + min(j2, c1 - 1) * Dv
            v2_0 = pt.f32(v[vr + f0])
            v2_1 = pt.f32(v[vr + f1])
            v2_2 = pt.f32(v[vr + f2])
            v2_3 = pt.f32(v[vr + f3])
            v2_4 = pt.f32(v[vr + f4])
            v2_5 = pt.f32(v[vr + f5])
            v2_6 = pt.f32(v[vr + f6])
            v2_7 = pt.f32(v[vr + f7])
            vr = vbase + min(j3, c1 - 1) * Dv
            v3_0 = pt.f32(v[vr + f0])
            v3_1 = pt.f32(v[vr + f1])
            v3_2 = pt.f32(v[vr + f2])
            v3_3 = pt.f32(v[vr + f3])
            v3_4 = pt.f32(v[vr + f4])
            v3_5 = pt.f32(v[vr + f5])
            v3_6 = pt.f32(v[vr + f6])
            v3_7 = pt.f32(v[vr + f7])
            # every key of the step visible to every row, no softcap: the scores need no per-key checks
            whole = plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right
            # the rows x keys dot products, summed over the warp by a transposing butterfly
            y0 = q0_0 * k0_0 + q0_1 * k0_1 + q0_2 * k0_2 + q0_3 * k0_3 + q0_4 * k0_4 + q0_5 * k0_5 + q0_6 * k0_6 + q0_7 * k0_7
            y1 = q0_0 * k1_0 + q0_1 * k1_1 + q0_2 * k1_2 + q0_3 * k1_3 + q0_4 * k1_4 + q0_5 * k1_5 + q0_6 * k1_6 + q0_7 * k1_7
            y2 = q0_0 * k2_0 + q0_1 * k2_1 + q0_2 * k2_2 + q0_3 * k2_3 + q0_4 * k2_4 + q0_5 * k2_5 + q0_6 * k2_6 + q0_7 * k2_7
            y3 = q0_0 * k3_0 + q0_1 * k3_1 + q0_2 * k3_2 + q0_3 * k3_3 + q0_4 * k3_4 + q0_5 * k3_5 + q0_6 * k3_6 + q0_7 * k3_7
            y4 = q1_0 * k0_0 + q1_1 * k0_1 + q1_2 * k0_2 + q1_3 * k0_3 + q1_4 * k0_4 + q1_5 * k0_5 + q1_6 * k0_6 + q1_7 * k0_7
            y5 = q1_0 * k1_0 + q1_1 * k1_1 + q1_2 * k1_2 + q1_3 * k1_3 + q1_4 * k1_4 + q1_5 * k1_5 + q1_6 * k1_6 + q1_7 * k1_7
            y6 = q1_0 * k2_0 + q1_1 * k2_1 + q1_2 * k2_2 + q1_3 * k2_3 + q1_4 * k2_4 + q1_5 * k2_5 + q1_6 * k2_6 + q1_7 * k2_7
            y7 = q1_0 * k3_0 + q1_1 * k3_1 + q1_2 * k3_2 + q1_3 * k3_3 + q1_4 * k3_4 + q1_5 * k3_5 + q1_6 * k3_6 + q1_7 * k3_7
            y8 = q2_0 * k0_0 + q2_1 * k0_1 + q2_2 * k0_2 + q2_3 * k0_3 + q2_4 * k0_4 + q2_5 * k0_5 + q2_6 * k0_6 + q2_7 * k0_7
            y9 = q2_0 * k1_0 + q2_1 * k1_1 + q2_2 * k1_2 + q2_3 * k1_3 + q2_4 * k1_4 + q2_5 * k1_5 + q2_6 * k1_6 + q2_7 * k1_7
            y10 = q2_0 * k2_0 + q2_1 * k2_1 + q2_2 * k2_2 + q2_3 * k2_3 + q2_4 * k2_4 + q2_5 * k2_5 + q2_6 * k2_6 + q2_7 * k2_7
            y11 = q2_0 * k3_0 + q2_1 * k3_1 + q2_2 * k3_2 + q2_3 * k3_3 + q2_4 * k3_4 + q2_5 * k3_5 + q2_6 * k3_6 + q2_7 * k3_7
            y12 = q3_0 * k0_0 + q3_1 * k0_1 + q3_2 * k0_2 + q3_3 * k0_3 + q3_4 * k0_4 + q3_5 * k0_5 + q3_6 * k0_6 + q3_7 * k0_7
            y13 = q3_0 * k1_0 + q3_1 * k1_1 + q3_2 * k1_2 + q3_3 * k1_3 + q3_4 * k1_4 + q3_5 * k1_5 + q3_6 * k1_6 + q3_7 * k1_7
            y14 = q3_0 * k2_0 + q3_1 * k2_1 + q3_2 * k2_2 + q3_3 * k2_3 + q3_4 * k2_4 + q3_5 * k2_5 + q3_6 * k2_6 + q3_7 * k2_7
            y15 = q3_0 * k3_0 + q3_1 * k3_1 + q3_2 * k3_2 + q3_3 * k3_3 + q3_4 * k3_4 + q3_5 * k3_5 + q3_6 * k3_6 + q3_7 * k3_7
            z16_0 = pt.where(up16, y8, y0) + pt.shuffle_xor(pt.where(up16, y0, y8), 16)
            z16_1 = pt.where(up16, y9, y1) + pt.shuffle_xor(pt.where(up16, y1, y9), 16)
            z16_2 = pt.where(up16, y10, y2) + pt.shuffle_xor(pt.where(up16, y2, y10), 16)
            z16_3 = pt.where(up16, y11, y3) + pt.shuffle_xor(pt.where(up16, y3, y11), 16)
            z16_4 = pt.where(up16, y12, y4) + pt.shuffle_xor(pt.where(up16, y4, y12), 16)
            z16_5 = pt.where(up16, y13, y5) + pt.shuffle_xor(pt.where(up16, y5, y13), 16)
            z16_6 = pt.where(up16, y14, y6) + pt.shuffle_xor(pt.where(up16, y6, y14), 16)
            z16_7 = pt.where(up16, y15, y7) + pt.shuffle_xor(pt.where(up16, y7, y15), 16)
            z8_0 = pt.where(up8, z16_4, z16_0) + pt.shuffle_xor(pt.where(up8, z16_0, z16_4), 8)
            z8_1 = pt.where(up8, z16_5, z16_1) + pt.shuffle_xor(pt.where(up8, z16_1, z16_5), 8)
            z8_2 = pt.where(up8, z16_6, z16_2) + pt.shuffle_xor(pt.where(up8, z16_2, z16_6), 8)
            z8_3 = pt.where(up8, z16_7, z16_3) + pt.shuffle_xor(pt.where(up8, z16_3, z16_7), 8)
            z4_0 = pt.where(up4, z8_2, z8_0) + pt.shuffle_xor(pt.where(up4, z8_0, z8_2), 4)
            z4_1 = pt.where(up4, z8_3, z8_1) + pt.shuffle_xor(pt.where(up4, z8_1, z8_3), 4)
            z2_0 = pt.where(up2, z4_1, z4_0) + pt.shuffle_xor(pt.where(up2, z4_0, z4_1), 2)
            z2_0 = z2_0 + pt.shuffle_xor(z2_0, 1)
            x0 = pt.shuffle(z2_0, 0)
            x1 = pt.shuffle(z2_0, 2)
            x2 = pt.shuffle(z2_0, 4)
            x3 = pt.shuffle(z2_0, 6)
            x4 = pt.shuffle(z2_0, 8)
            x5 = pt.shuffle(z2_0, 10)
            x6 = pt.shuffle(z2_0, 12)
            x7 = pt.shuffle(z2_0, 14)
            x8 = pt.shuffle(z2_0, 16)
            x9 = pt.shuffle(z2_0, 18)
            x10 = pt.shuffle(z2_0, 20)
            x11 = pt.shuffle(z2_0, 22)
            x12 = pt.shuffle(z2_0, 24)
            x13 = pt.shuffle(z2_0, 26)
            x14 = pt.shuffle(z2_0, 28)
            x15 = pt.shuffle(z2_0, 30)
            if whole:
                s0, s1, s2, s3 = x0, x1, x2, x3
                if has_mask != 0:
                    s0 = s0 + mask[mr0 + j0 * msk]
                    s1 = s1 + mask[mr0 + j1 * msk]
                    s2 = s2 + mask[mr0 + j2 * msk]
                    s3 = s3 + mask[mr0 + j3 * msk]
            else:
                qi = t0 % Lq
                s0 = score(x0, qi, j0, c1, left, right, mask, has_mask, mr0 + j0 * msk, softcap)
                s1 = score(x1, qi, j1, c1, left, right, mask, has_mask, mr0 + j1 * msk, softcap)
                s2 = score(x2, qi, j2, c1, left, right, mask, has_mask, mr0 + j2 * msk, softcap)
                s3 = score(x3, qi, j3, c1, left, right, mask, has_mask, mr0 + j3 * msk, softcap)
            mx = max(m0, s0, s1, s2, s3)
            base = offset(mx)
            alpha = pt.fast_exp2((m0 - base) * LOG2E)
            p0 = pt.fast_exp2((s0 - base) * LOG2E)
            p1 = pt.fast_exp2((s1 - base) * LOG2E)
            p2 = pt.fast_exp2((s2 - base) * LOG2E)
            p3 = pt.fast_exp2((s3 - base) * LOG2E)
            m0 = mx
            l0 = l0 * alpha + (p0 + p1 + p2 + p3)
            a0_0 = a0_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
            a0_1 = a0_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
            a0_2 = a0_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
            a0_3 = a0_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            a0_4 = a0_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
            a0_5 = a0_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
            a0_6 = a0_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
            a0_7 = a0_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 1:
                if whole:
                    s0, s1, s2, s3 = x4, x5, x6, x7
                    if has_mask != 0:
                        s0 = s0 + mask[mr1 + j0 * msk]
                        s1 = s1 + mask[mr1 + j1 * msk]
                        s2 = s2 + mask[mr1 + j2 * msk]
                        s3 = s3 + mask[mr1 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(1), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x4, qi, j0, c1, left, right, mask, has_mask, mr1 + j0 * msk, softcap)
                    s1 = score(x5, qi, j1, c1, left, right, mask, has_mask, mr1 + j1 * msk, softcap)
                    s2 = score(x6, qi, j2, c1, left, right, mask, has_mask, mr1 + j2 * msk, softcap)
                    s3 = score(x7, qi, j3, c1, left, right, mask, has_mask, mr1 + j3 * msk, softcap)
                mx = max(m1, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m1 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m1 = mx
                l1 = l1 * alpha + (p0 + p1 + p2 + p3)
                a1_0 = a1_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a1_1 = a1_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a1_2 = a1_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a1_3 = a1_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a1_4 = a1_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a1_5 = a1_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a1_6 = a1_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a1_7 = a1_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 2:
                if whole:
                    s0, s1, s2, s3 = x8, x9, x10, x11
                    if has_mask != 0:
                        s0 = s0 + mask[mr2 + j0 * msk]
                        s1 = s1 + mask[mr2 + j1 * msk]
                        s2 = s2 + mask[mr2 + j2 * msk]
                        s3 = s3 + mask[mr2 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(2), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x8, qi, j0, c1, left, right, mask, has_mask, mr2 + j0 * msk, softcap)
                    s1 = score(x9, qi, j1, c1, left, right, mask, has_mask, mr2 + j1 * msk, softcap)
                    s2 = score(x10, qi, j2, c1, left, right, mask, has_mask, mr2 + j2 * msk, softcap)
                    s3 = score(x11, qi, j3, c1, left, right, mask, has_mask, mr2 + j3 * msk, softcap)
                mx = max(m2, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m2 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m2 = mx
                l2 = l2 * alpha + (p0 + p1 + p2 + p3)
                a2_0 = a2_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a2_1 = a2_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a2_2 = a2_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a2_3 = a2_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a2_4 = a2_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a2_5 = a2_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a2_6 = a2_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a2_7 = a2_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 3:
                if whole:
                    s0, s1, s2, s3 = x12, x13, x14, x15
                    if has_mask != 0:
                        s0 = s0 + mask[mr3 + j0 * msk]
                        s1 = s1 + mask[mr3 + j1 * msk]
                        s2 = s2 + mask[mr3 + j2 * msk]
                        s3 = s3 + mask[mr3 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(3), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x12, qi, j0, c1, left, right, mask, has_mask, mr3 + j0 * msk, softcap)
                    s1 = score(x13, qi, j1, c1, left, right, mask, has_mask, mr3 + j1 * msk, softcap)
                    s2 = score(x14, qi, j2, c1, left, right, mask, has_mask, mr3 + j2 * msk, softcap)
                    s3 = score(x15, qi, j3, c1, left, right, mask, has_mask, mr3 + j3 * msk, softcap)
                mx = max(m3, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m3 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m3 = mx
                l3 = l3 * alpha + (p0 + p1 + p2 + p3)
                a3_0 = a3_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a3_1 = a3_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a3_2 = a3_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a3_3 = a3_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a3_4 = a3_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a3_5 = a3_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a3_6 = a3_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a3_7 = a3_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
        if lane == 0:
            s_m[warp * 4 + 0] = m0
            s_l[warp * 4 + 0] = l0
            s_m[warp * 4 + 1] = m1
            s_l[warp * 4 + 1] = l1
            s_m[warp * 4 + 2] = m2
            s_l[warp * 4 + 2] = l2
            s_m[warp * 4 + 3] = m3
            s_l[warp * 4 + 3] = l3
        s_acc[(warp * 4 + 0) * 256 + d0] = a0_0
        s_acc[(warp * 4 + 0) * 256 + d1] = a0_1
        s_acc[(warp * 4 + 0) * 256 + d2] = a0_2
        s_acc[(warp * 4 + 0) * 256 + d3] = a0_3
        s_acc[(warp * 4 + 0) * 256 + d4] = a0_4
        s_acc[(warp * 4 + 0) * 256 + d5] = a0_5
        s_acc[(warp * 4 + 0) * 256 + d6] = a0_6
        s_acc[(warp * 4 + 0) * 256 + d7] = a0_7
        s_acc[(warp * 4 + 1) * 256 + d0] = a1_0
        s_acc[(warp * 4 + 1) * 256 + d1] = a1_1
        s_acc[(warp * 4 + 1) * 256 + d2] = a1_2
        s_acc[(warp * 4 + 1) * 256 + d3] = a1_3
        s_acc[(warp * 4 + 1) * 256 + d4] = a1_4
        s_acc[(warp * 4 + 1) * 256 + d5] = a1_5
        s_acc[(warp * 4 + 1) * 256 + d6] = a1_6
        s_acc[(warp * 4 + 1) * 256 + d7] = a1_7
        s_acc[(warp * 4 + 2) * 256 + d0] = a2_0
        s_acc[(warp * 4 + 2) * 256 + d1] = a2_1
        s_acc[(warp * 4 + 2) * 256 + d2] = a2_2
        s_acc[(warp * 4 + 2) * 256 + d3] = a2_3
        s_acc[(warp * 4 + 2) * 256 + d4] = a2_4
        s_acc[(warp * 4 + 2) * 256 + d5] = a2_5
        s_acc[(warp * 4 + 2) * 256 + d6] = a2_6
        s_acc[(warp * 4 + 2) * 256 + d7] = a2_7
        s_acc[(warp * 4 + 3) * 256 + d0] = a3_0
        s_acc[(warp * 4 + 3) * 256 + d1] = a3_1
        s_acc[(warp * 4 + 3) * 256 + d2] = a3_2
        s_acc[(warp * 4 + 3) * 256 + d3] = a3_3
        s_acc[(warp * 4 + 3) * 256 + d4] = a3_4
        s_acc[(warp * 4 + 3) * 256 + d5] = a3_5
        s_acc[(warp * 4 + 3) * 256 + d6] = a3_6
        s_acc[(warp * 4 + 3) * 256 + d7] = a3_7
        pt.workgroup_barrier()
        for e in range(t, nr * Dv, THREADS):            # merge the warps' states: one (row, dim) a thread
            r = e // Dv
            d = e % Dv
            big = max(s_m[0 + r], s_m[4 + r], s_m[8 + r], s_m[12 + r])
            base = offset(big)
            w0 = pt.fast_exp2((s_m[0 + r] - base) * LOG2E)
            w1 = pt.fast_exp2((s_m[4 + r] - base) * LOG2E)
            w2 = pt.fast_exp2((s_m[8 + r] - base) * LOG2E)
            w3 = pt.fast_exp2((s_m[12 + r] - base) * LOG2E)
            part = (row0 + r) * splits + split
            pacc[part * Dv + d] = s_acc[(0 + r) * 256 + d] * w0 + s_acc[(4 + r) * 256 + d] * w1 + s_acc[(8 + r) * 256 + d] * w2 + s_acc[(12 + r) * 256 + d] * w3
            if d == 0:
                pm[part] = big
                pl[part] = s_l[0 + r] * w0 + s_l[4 + r] * w1 + s_l[8 + r] * w2 + s_l[12 + r] * w3

    return attention_decode


def _make_decode_words_d256(T, name, low, high):
    """Head dims up to 256 (even), 16-bit q, k, v as 32-bit words: 8 dims a lane, 4 query rows
    a workgroup; `low` and `high` widen a word's two elements."""
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode(q: pt.In[pt.u32], k: pt.In[pt.u32], v: pt.In[pt.u32], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                         pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32,
                         Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32,
                         msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32, chunk: pt.u32,
                         splits: pt.u32):
        s_m = pt.shared(pt.f32, WARPS * 4)          # each warp's (m, l, accumulator) per row
        s_l = pt.shared(pt.f32, WARPS * 4)
        s_acc = pt.shared(pt.f32, WARPS * 1024)
        Dw = D // 2                                   # words a row of q or k, of v
        Dvw = Dv // 2
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        split = pt.group_index_x()
        grows = ratio * Lq                              # query rows on one KV head: (head, query) pairs
        blocks = (grows + 3) // 4
        kvrow = pt.group_index_y() // blocks
        t0 = pt.group_index_y() % blocks * 4            # this workgroup's first row among them
        nr = min(grows - t0, pt.u32(4))
        row0 = kvrow * grows + t0                        # its first output row (b * Hq + h) * Lq + i
        b = kvrow // (Hq // ratio)
        h0 = kvrow % (Hq // ratio) * ratio
        kbase = kvrow * Lk * Dw
        vbase = kvrow * Lk * Dvw
        qa = t0 % Lq
        qb = (t0 + nr - 1) % Lq
        if (t0 + nr - 1) // Lq != t0 // Lq:               # the rows span every query
            qa = pt.u32(0)
            qb = Lq - 1
        c0 = key_lo(qa, left) + split * chunk
        c1 = min(c0 + chunk, key_hi(qb, right, Lk))
        d0 = lane
        d1 = lane + 32
        d2 = lane + 64
        d3 = lane + 96
        e0 = min(d0, Dw - 1)                             # past the head: load the last one
        f0 = min(d0, Dvw - 1)
        ok0 = d0 < Dw
        e1 = min(d1, Dw - 1)
        f1 = min(d1, Dvw - 1)
        ok1 = d1 < Dw
        e2 = min(d2, Dw - 1)
        f2 = min(d2, Dvw - 1)
        ok2 = d2 < Dw
        e3 = min(d3, Dw - 1)
        f3 = min(d3, Dvw - 1)
        ok3 = d3 < Dw
        u0 = t0
        mr0 = b * msb + (h0 + u0 // Lq) * msh + u0 % Lq * msq     # its mask row
        at = (kvrow * grows + u0) * Dw
        x = q[at + e0]
        q0_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q0_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q0_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q0_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        x = q[at + e2]
        q0_4 = pt.where(ok2, low(x) * scale, pt.f32(0.0))
        q0_5 = pt.where(ok2, high(x) * scale, pt.f32(0.0))
        x = q[at + e3]
        q0_6 = pt.where(ok3, low(x) * scale, pt.f32(0.0))
        q0_7 = pt.where(ok3, high(x) * scale, pt.f32(0.0))
        m0 = pt.f32(NEG_INF)
        l0 = pt.f32(0.0)
        a0_0 = a0_1 = a0_2 = a0_3 = a0_4 = a0_5 = a0_6 = a0_7 = pt.f32(0.0)
        u1 = t0 + min(pt.u32(1), nr - 1)             # rows past nr load the last row and store nothing
        mr1 = b * msb + (h0 + u1 // Lq) * msh + u1 % Lq * msq
        at = (kvrow * grows + u1) * Dw
        x = q[at + e0]
        q1_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q1_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q1_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q1_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        x = q[at + e2]
        q1_4 = pt.where(ok2, low(x) * scale, pt.f32(0.0))
        q1_5 = pt.where(ok2, high(x) * scale, pt.f32(0.0))
        x = q[at + e3]
        q1_6 = pt.where(ok3, low(x) * scale, pt.f32(0.0))
        q1_7 = pt.where(ok3, high(x) * scale, pt.f32(0.0))
        m1 = pt.f32(NEG_INF)
        l1 = pt.f32(0.0)
        a1_0 = a1_1 = a1_2 = a1_3 = a1_4 = a1_5 = a1_6 = a1_7 = pt.f32(0.0)
        u2 = t0 + min(pt.u32(2), nr - 1)
        mr2 = b * msb + (h0 + u2 // Lq) * msh + u2 % Lq * msq
        at = (kvrow * grows + u2) * Dw
        x = q[at + e0]
        q2_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q2_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q2_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q2_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        x = q[at + e2]
        q2_4 = pt.where(ok2, low(x) * scale, pt.f32(0.0))
        q2_5 = pt.where(ok2, high(x) * scale, pt.f32(0.0))
        x = q[at + e3]
        q2_6 = pt.where(ok3, low(x) * scale, pt.f32(0.0))
        q2_7 = pt.where(ok3, high(x) * scale, pt.f32(0.0))
        m2 = pt.f32(NEG_INF)
        l2 = pt.f32(0.0)
        a2_0 = a2_1 = a2_2 = a2_3 = a2_4 = a2_5 = a2_6 = a2_7 = pt.f32(0.0)
        u3 = t0 + min(pt.u32(3), nr - 1)
        mr3 = b * msb + (h0 + u3 // Lq) * msh + u3 % Lq * msq
        at = (kvrow * grows + u3) * Dw
        x = q[at + e0]
        q3_0 = pt.where(ok0, low(x) * scale, pt.f32(0.0))
        q3_1 = pt.where(ok0, high(x) * scale, pt.f32(0.0))
        x = q[at + e1]
        q3_2 = pt.where(ok1, low(x) * scale, pt.f32(0.0))
        q3_3 = pt.where(ok1, high(x) * scale, pt.f32(0.0))
        x = q[at + e2]
        q3_4 = pt.where(ok2, low(x) * scale, pt.f32(0.0))
        q3_5 = pt.where(ok2, high(x) * scale, pt.f32(0.0))
        x = q[at + e3]
        q3_6 = pt.where(ok3, low(x) * scale, pt.f32(0.0))
        q3_7 = pt.where(ok3, high(x) * scale, pt.f32(0.0))
        m3 = pt.f32(NEG_INF)
        l3 = pt.f32(0.0)
        a3_0 = a3_1 = a3_2 = a3_3 = a3_4 = a3_5 = a3_6 = a3_7 = pt.f32(0.0)
        up16 = (lane & 16) != 0
        up8 = (lane & 8) != 0
        up4 = (lane & 4) != 0
        up2 = (lane & 2) != 0
        plain = softcap <= 0.0
        for k0 in range(c0, c1, STEP):
            j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1
            j1 = j0 + 1
            j2 = j0 + 2
            j3 = j0 + 3
            kr = kbase + min(j0, c1 - 1) * Dw
            x = k[kr + e0]
            k0_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k0_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k0_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k0_3 = pt.where(ok1, high(x), pt.f32(0.0))
            x = k[kr + e2]
            k0_4 = pt.where(ok2, low(x), pt.f32(0.0))
            k0_5 = pt.where(ok2, high(x), pt.f32(0.0))
            x = k[kr + e3]
            k0_6 = pt.where(ok3, low(x), pt.f32(0.0))
            k0_7 = pt.where(ok3, high(x), pt.f32(0.0))
            kr = kbase + min(j1, c1 - 1) * Dw
            x = k[kr + e0]
            k1_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k1_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k1_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k1_3 = pt.where(ok1, high(x), pt.f32(0.0))
            x = k[kr + e2]
            k1_4 = pt.where(ok2, low(x), pt.f32(0.0))
            k1_5 = pt.where(ok2, high(x), pt.f32(0.0))
            x = k[kr + e3]
            k1_6 = pt.where(ok3, low(x), pt.f32(0.0))
            k1_7 = pt.where(ok3, high(x), pt.f32(0.0))
            kr = kbase + min(j2, c1 - 1) * Dw
            x = k[kr + e0]
            k2_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k2_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k2_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k2_3 = pt.where(ok1, high(x), pt.f32(0.0))
            x = k[kr + e2]
            k2_4 = pt.where(ok2, low(x), pt.f32(0.0))
            k2_5 = pt.where(ok2, high(x), pt.f32(0.0))
            x = k[kr + e3]
            k2_6 = pt.where(ok3, low(x), pt.f32(0.0))
            k2_7 = pt.where(ok3, high(x), pt.f32(0.0))
            kr = kbase + min(j3, c1 - 1) * Dw
            x = k[kr + e0]
            k3_0 = pt.where(ok0, low(x), pt.f32(0.0))
            k3_1 = pt.where(ok0, high(x), pt.f32(0.0))
            x = k[kr + e1]
            k3_2 = pt.where(ok1, low(x), pt.f32(0.0))
            k3_3 = pt.where(ok1, high(x), pt.f32(0.0))
            x = k[kr + e2]
            k3_4 = pt.where(ok2, low(x), pt.f32(0.0))
            k3_5 = pt.where(ok2, high(x), pt.f32(0.0))
            x = k[kr + e3]
            k3_6 = pt.where(ok3, low(x), pt.f32(0.0))
            k3_7 = pt.where(ok3, high(x), pt.f32(0.0))
            vr = vbase + min(j0, c1 - 1) * Dvw
            x = v[vr + f0]
            v0_0 = low(x)
            v0_1 = high(x)
            x = v[vr + f1]
            v0_2 = low(x)
            v0_3 = high(x)
            x = v[vr + f2]
            v0_4 = low(x)
            v0_5 = high(x)
            x = v[vr + f3]
            v0_6 = low(x)
            v0_7 = high(x)
            vr = vbase + min(j1, c1 - 1) * Dvw
            x = v[vr + f0]
            v1_0 = low(x)
            v1_1 = high(x)
            x = v[vr + f1]
            v1_2 = low(x)
            v1_3 = high(x)
            x = v[vr + f2]
            v1_4 = low(x)
            v1_5 = high(x)
            x = v[vr + f3]
            v1_6 = low(x)
            v1_7 = high(x)
            vr = vbase + min(j2, c1 - 1) * Dvw
            x = v[vr + f0]
            v2_0 = low(x)
            v2_1 = high(x)
            x = v[vr + f1]
            v2_2 = low(x)
            v2_3 = high(x)
            x = v[vr + f2]
            v2_4 = low(x)
            v2_5 = high(x)
            x = v[vr + f3]
            v2_6 = low(x)
            v2_7 = high(x)
            vr = vbase + min(j3, c1 - 1) * Dvw
            x = v[vr + f0]
            v3_0 = low(x)
            v3_1 = high(x)
            x = v[vr + f1]
            v3_2 = low(x)
            v3_3 = high(x)
            x = v[vr + f2]
            v3_4 = low(x)
            v3_5 = high(x)
            x = v[vr + f3]
            v3_6 = low(x)
            v3_7 = high(x)
            # every key of the step visible to every row, no softcap: the scores need no per-key checks
            whole = plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right
            # the rows x keys dot products, summed over the warp by a transposing butterfly
            y0 = q0_0 * k0_0 + q0_1 * k0_1 + q0_2 * k0_2 + q0_3 * k0_3 + q0_4 * k0_4 + q0_5 * k0_5 + q0_6 * k0_6 + q0_7 * k0_7
            y1 = q0_0 * k1_0 + q0_1 * k1_1 + q0_2 * k1_2 + q0_3 * k1_3 + q0_4 * k1_4 + q0_5 * k1_5 + q0_6 * k1_6 + q0_7 * k1_7
            y2 = q0_0 * k2_0 + q0_1 * k2_1 + q0_2 * k2_2 + q0_3 * k2_3 + q0_4 * k2_4 + q0_5 * k2_5 + q0_6 * k2_6 + q0_7 * k2_7
            y3 = q0_0 * k3_0 + q0_1 * k3_1 + q0_2 * k3_2 + q0_3 * k3_3 + q0_4 * k3_4 + q0_5 * k3_5 + q0_6 * k3_6 + q0_7 * k3_7
            y4 = q1_0 * k0_0 + q1_1 * k0_1 + q1_2 * k0_2 + q1_3 * k0_3 + q1_4 * k0_4 + q1_5 * k0_5 + q1_6 * k0_6 + q1_7 * k0_7
            y5 = q1_0 * k1_0 + q1_1 * k1_1 + q1_2 * k1_2 + q1_3 * k1_3 + q1_4 * k1_4 + q1_5 * k1_5 + q1_6 * k1_6 + q1_7 * k1_7
            y6 = q1_0 * k2_0 + q1_1 * k2_1 + q1_2 * k2_2 + q1_3 * k2_3 + q1_4 * k2_4 + q1_5 * k2_5 + q1_6 * k2_6 + q1_7 * k2_7
            y7 = q1_0 * k3_0 + q1_1 * k3_1 + q1_2 * k3_2 + q1_3 * k3_3 + q1_4 * k3_4 + q1_5 * k3_5 + q1_6 * k3_6 + q1_7 * k3_7
            y8 = q2_0 * k0_0 + q2_1 * k0_1 + q2_2 * k0_2 + q2_3 * k0_3 + q2_4 * k0_4 + q2_5 * k0_5 + q2_6 * k0_6 + q2_7 * k0_7
            y9 = q2_0 * k1_0 + q2_1 * k1_1 + q2_2 * k1_2 + q2_3 * k1_3 + q2_4 * k1_4 + q2_5 * k1_5 + q2_6 * k1_6 + q2_7 * k1_7
            y10 = q2_0 * k2_0 + q2_1 * k2_1 + q2_2 * k2_2 + q2_3 * k2_3 + q2_4 * k2_4 + q2_5 * k2_5 + q2_6 * k2_6 + q2_7 * k2_7
            y11 = q2_0 * k3_0 + q2_1 * k3_1 + q2_2 * k3_2 + q2_3 * k3_3 + q2_4 * k3_4 + q2_5 * k3_5 + q2_6 * k3_6 + q2_7 * k3_7
            y12 = q3_0 * k0_0 + q3_1 * k0_1 + q3_2 * k0_2 + q3_3 * k0_3 + q3_4 * k0_4 + q3_5 * k0_5 + q3_6 * k0_6 + q3_7 * k0_7
            y13 = q3_0 * k1_0 + q3_1 * k1_1 + q3_2 * k1_2 + q3_3 * k1_3 + q3_4 * k1_4 + q3_5 * k1_5 + q3_6 * k1_6 + q3_7 * k1_7
            y14 = q3_0 * k2_0 + q3_1 * k2_1 + q3_2 * k2_2 + q3_3 * k2_3 + q3_4 * k2_4 + q3_5 * k2_5 + q3_6 * k2_6 + q3_7 * k2_7
            y15 = q3_0 * k3_0 + q3_1 * k3_1 + q3_2 * k3_2 + q3_3 * k3_3 + q3_4 * k3_4 + q3_5 * k3_5 + q3_6 * k3_6 + q3_7 * k3_7
            z16_0 = pt.where(up16, y8, y0) + pt.shuffle_xor(pt.where(up16, y0, y8), 16)
            z16_1 = pt.where(up16, y9, y1) + pt.shuffle_xor(pt.where(up16, y1, y9), 16)
            z16_2 = pt.where(up16, y10, y2) + pt.shuffle_xor(pt.where(up16, y2, y10), 16)
            z16_3 = pt.where(up16, y11, y3) + pt.shuffle_xor(pt.where(up16, y3, y11), 16)
            z16_4 = pt.where(up16, y12, y4) + pt.shuffle_xor(pt.where(up16, y4, y12), 16)
            z16_5 = pt.where(up16, y13, y5) + pt.shuffle_xor(pt.where(up16, y5, y13), 16)
            z16_6 = pt.where(up16, y14, y6) + pt.shuffle_xor(pt.where(up16, y6, y14), 16)
            z16_7 = pt.where(up16, y15, y7) + pt.shuffle_xor(pt.where(up16, y7, y15), 16)
            z8_0 = pt.where(up8, z16_4, z16_0) + pt.shuffle_xor(pt.where(up8, z16_0, z16_4), 8)
            z8_1 = pt.where(up8, z16_5, z16_1) + pt.shuffle_xor(pt.where(up8, z16_1, z16_5), 8)
            z8_2 = pt.where(up8, z16_6, z16_2) + pt.shuffle_xor(pt.where(up8, z16_2, z16_6), 8)
            z8_3 = pt.where(up8, z16_7, z16_3) + pt.shuffle_xor(pt.where(up8, z16_3, z16_7), 8)
            z4_0 = pt.where(up4, z8_2, z8_0) + pt.shuffle_xor(pt.where(up4, z8_0, z8_2), 4)
            z4_1 = pt.where(up4, z8_3, z8_1) + pt.shuffle_xor(pt.where(up4, z8_1, z8_3), 4)
            z2_0 = pt.where(up2, z4_1, z4_0) + pt.shuffle_xor(pt.where(up2, z4_0, z4_1), 2)
            z2_0 = z2_0 + pt.shuffle_xor(z2_0, 1)
            x0 = pt.shuffle(z2_0, 0)
            x1 = pt.shuffle(z2_0, 2)
            x2 = pt.shuffle(z2_0, 4)
            x3 = pt.shuffle(z2_0, 6)
            x4 = pt.shuffle(z2_0, 8)
            x5 = pt.shuffle(z2_0, 10)
            x6 = pt.shuffle(z2_0, 12)
            x7 = pt.shuffle(z2_0, 14)
            x8 = pt.shuffle(z2_0, 16)
            x9 = pt.shuffle(z2_0, 18)
            x10 = pt.shuffle(z2_0, 20)
            x11 = pt.shuffle(z2_0, 22)
            x12 = pt.shuffle(z2_0, 24)
            x13 = pt.shuffle(z2_0, 26)
            x14 = pt.shuffle(z2_0, 28)
            x15 = pt.shuffle(z2_0, 30)
            if whole:
                s0, s1, s2, s3 = x0, x1, x2, x3
                if has_mask != 0:
                    s0 = s0 + mask[mr0 + j0 * msk]
                    s1 = s1 + mask[mr0 + j1 * msk]
                    s2 = s2 + mask[mr0 + j2 * msk]
                    s3 = s3 + mask[mr0 + j3 * msk]
            else:
                qi = t0 % Lq
                s0 = score(x0, qi, j0, c1, left, right, mask, has_mask, mr0 + j0 * msk, softcap)
                s1 = score(x1, qi, j1, c1, left, right, mask, has_mask, mr0 + j1 * msk, softcap)
                s2 = score(x2, qi, j2, c1, left, right, mask, has_mask, mr0 + j2 * msk, softcap)
                s3 = score(x3, qi, j3, c1, left, right, mask, has_mask, mr0 + j3 * msk, softcap)
            mx = max(m0, s0, s1, s2, s3)
            base = offset(mx)
            alpha = pt.fast_exp2((m0 - base) * LOG2E)
            p0 = pt.fast_exp2((s0 - base) * LOG2E)
            p1 = pt.fast_exp2((s1 - base) * LOG2E)
            p2 = pt.fast_exp2((s2 - base) * LOG2E)
            p3 = pt.fast_exp2((s3 - base) * LOG2E)
            m0 = mx
            l0 = l0 * alpha + (p0 + p1 + p2 + p3)
            a0_0 = a0_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
            a0_1 = a0_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
            a0_2 = a0_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
            a0_3 = a0_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
            a0_4 = a0_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
            a0_5 = a0_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
            a0_6 = a0_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
            a0_7 = a0_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 1:
                if whole:
                    s0, s1, s2, s3 = x4, x5, x6, x7
                    if has_mask != 0:
                        s0 = s0 + mask[mr1 + j0 * msk]
                        s1 = s1 + mask[mr1 + j1 * msk]
                        s2 = s2 + mask[mr1 + j2 * msk]
                        s3 = s3 + mask[mr1 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(1), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x4, qi, j0, c1, left, right, mask, has_mask, mr1 + j0 * msk, softcap)
                    s1 = score(x5, qi, j1, c1, left, right, mask, has_mask, mr1 + j1 * msk, softcap)
                    s2 = score(x6, qi, j2, c1, left, right, mask, has_mask, mr1 + j2 * msk, softcap)
                    s3 = score(x7, qi, j3, c1, left, right, mask, has_mask, mr1 + j3 * msk, softcap)
                mx = max(m1, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m1 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m1 = mx
                l1 = l1 * alpha + (p0 + p1 + p2 + p3)
                a1_0 = a1_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a1_1 = a1_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a1_2 = a1_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a1_3 = a1_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a1_4 = a1_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a1_5 = a1_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a1_6 = a1_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a1_7 = a1_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 2:
                if whole:
                    s0, s1, s2, s3 = x8, x9, x10, x11
                    if has_mask != 0:
                        s0 = s0 + mask[mr2 + j0 * msk]
                        s1 = s1 + mask[mr2 + j1 * msk]
                        s2 = s2 + mask[mr2 + j2 * msk]
                        s3 = s3 + mask[mr2 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(2), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x8, qi, j0, c1, left, right, mask, has_mask, mr2 + j0 * msk, softcap)
                    s1 = score(x9, qi, j1, c1, left, right, mask, has_mask, mr2 + j1 * msk, softcap)
                    s2 = score(x10, qi, j2, c1, left, right, mask, has_mask, mr2 + j2 * msk, softcap)
                    s3 = score(x11, qi, j3, c1, left, right, mask, has_mask, mr2 + j3 * msk, softcap)
                mx = max(m2, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m2 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m2 = mx
                l2 = l2 * alpha + (p0 + p1 + p2 + p3)
                a2_0 = a2_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a2_1 = a2_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a2_2 = a2_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a2_3 = a2_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a2_4 = a2_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a2_5 = a2_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a2_6 = a2_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a2_7 = a2_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
            if nr > 3:
                if whole:
                    s0, s1, s2, s3 = x12, x13, x14, x15
                    if has_mask != 0:
                        s0 = s0 + mask[mr3 + j0 * msk]
                        s1 = s1 + mask[mr3 + j1 * msk]
                        s2 = s2 + mask[mr3 + j2 * msk]
                        s3 = s3 + mask[mr3 + j3 * msk]
                else:
                    qi = (t0 + min(pt.u32(3), nr - 1)) % Lq       # recomputed here: one live register less
                    s0 = score(x12, qi, j0, c1, left, right, mask, has_mask, mr3 + j0 * msk, softcap)
                    s1 = score(x13, qi, j1, c1, left, right, mask, has_mask, mr3 + j1 * msk, softcap)
                    s2 = score(x14, qi, j2, c1, left, right, mask, has_mask, mr3 + j2 * msk, softcap)
                    s3 = score(x15, qi, j3, c1, left, right, mask, has_mask, mr3 + j3 * msk, softcap)
                mx = max(m3, s0, s1, s2, s3)
                base = offset(mx)
                alpha = pt.fast_exp2((m3 - base) * LOG2E)
                p0 = pt.fast_exp2((s0 - base) * LOG2E)
                p1 = pt.fast_exp2((s1 - base) * LOG2E)
                p2 = pt.fast_exp2((s2 - base) * LOG2E)
                p3 = pt.fast_exp2((s3 - base) * LOG2E)
                m3 = mx
                l3 = l3 * alpha + (p0 + p1 + p2 + p3)
                a3_0 = a3_0 * alpha + p0 * v0_0 + p1 * v1_0 + p2 * v2_0 + p3 * v3_0
                a3_1 = a3_1 * alpha + p0 * v0_1 + p1 * v1_1 + p2 * v2_1 + p3 * v3_1
                a3_2 = a3_2 * alpha + p0 * v0_2 + p1 * v1_2 + p2 * v2_2 + p3 * v3_2
                a3_3 = a3_3 * alpha + p0 * v0_3 + p1 * v1_3 + p2 * v2_3 + p3 * v3_3
                a3_4 = a3_4 * alpha + p0 * v0_4 + p1 * v1_4 + p2 * v2_4 + p3 * v3_4
                a3_5 = a3_5 * alpha + p0 * v0_5 + p1 * v1_5 + p2 * v2_5 + p3 * v3_5
                a3_6 = a3_6 * alpha + p0 * v0_6 + p1 * v1_6 + p2 * v2_6 + p3 * v3_6
                a3_7 = a3_7 * alpha + p0 * v0_7 + p1 * v1_7 + p2 * v2_7 + p3 * v3_7
        if lane == 0:
            s_m[warp * 4 + 0] = m0
            s_l[warp * 4 + 0] = l0
            s_m[warp * 4 + 1] = m1
            s_l[warp * 4 + 1] = l1
            s_m[warp * 4 + 2] = m2
            s_l[warp * 4 + 2] = l2
            s_m[warp * 4 + 3] = m3
            s_l[warp * 4 + 3] = l3
        s_acc[(warp * 4 + 0) * 256 + 2 * d0] = a0_0
        s_acc[(warp * 4 + 0) * 256 + 2 * d0 + 1] = a0_1
        s_acc[(warp * 4 + 0) * 256 + 2 * d1] = a0_2
        s_acc[(warp * 4 + 0) * 256 + 2 * d1 + 1] = a0_3
        s_acc[(warp * 4 + 0) * 256 + 2 * d2] = a0_4
        s_acc[(warp * 4 + 0) * 256 + 2 * d2 + 1] = a0_5
        s_acc[(warp * 4 + 0) * 256 + 2 * d3] = a0_6
        s_acc[(warp * 4 + 0) * 256 + 2 * d3 + 1] = a0_7
        s_acc[(warp * 4 + 1) * 256 + 2 * d0] = a1_0
        s_acc[(warp * 4 + 1) * 256 + 2 * d0 + 1] = a1_1
        s_acc[(warp * 4 + 1) * 256 + 2 * d1] = a1_2
        s_acc[(warp * 4 + 1) * 256 + 2 * d1 + 1] = a1_3
        s_acc[(warp * 4 + 1) * 256 + 2 * d2] = a1_4
        s_acc[(warp * 4 + 1) * 256 + 2 * d2 + 1] = a1_5
        s_acc[(warp * 4 + 1) * 256 + 2 * d3] = a1_6
        s_acc[(warp * 4 + 1) * 256 + 2 * d3 + 1] = a1_7
        s_acc[(warp * 4 + 2) * 256 + 2 * d0] = a2_0
        s_acc[(warp * 4 + 2) * 256 + 2 * d0 + 1] = a2_1
        s_acc[(warp * 4 + 2) * 256 + 2 * d1] = a2_2
        s_acc[(warp * 4 + 2) * 256 + 2 * d1 + 1] = a2_3
        s_acc[(warp * 4 + 2) * 256 + 2 * d2] = a2_4
        s_acc[(warp * 4 + 2) * 256 + 2 * d2 + 1] = a2_5
        s_acc[(warp * 4 + 2) * 256 + 2 * d3] = a2_6
        s_acc[(warp * 4 + 2) * 256 + 2 * d3 + 1] = a2_7
        s_acc[(warp * 4 + 3) * 256 + 2 * d0] = a3_0
        s_acc[(warp * 4 + 3) * 256 + 2 * d0 + 1] = a3_1
        s_acc[(warp * 4 + 3) * 256 + 2 * d1] = a3_2
        s_acc[(warp * 4 + 3) * 256 + 2 * d1 + 1] = a3_3
        s_acc[(warp * 4 + 3) * 256 + 2 * d2] = a3_4
        s_acc[(warp * 4 + 3) * 256 + 2 * d2 + 1] = a3_5
        s_acc[(warp * 4 + 3) * 256 + 2 * d3] = a3_6
        s_acc[(warp * 4 + 3) * 256 + 2 * d3 + 1] = a3_7
        pt.workgroup_barrier()
        for e in range(t, nr * Dv, THREADS):            # merge the warps' states: one (row, dim) a thread
            r = e // Dv
            d = e % Dv
            big = max(s_m[0 + r], s_m[4 + r], s_m[8 + r], s_m[12 + r])
            base = offset(big)
            w0 = pt.fast_exp2((s_m[0 + r] - base) * LOG2E)
            w1 = pt.fast_exp2((s_m[4 + r] - base) * LOG2E)
            w2 = pt.fast_exp2((s_m[8 + r] - base) * LOG2E)
            w3 = pt.fast_exp2((s_m[12 + r] - base) * LOG2E)
            part = (row0 + r) * splits + split
            pacc[part * Dv + d] = s_acc[(0 + r) * 256 + d] * w0 + s_acc[(4 + r) * 256 + d] * w1 + s_acc[(8 + r) * 256 + d] * w2 + s_acc[(12 + r) * 256 + d] * w3
            if d == 0:
                pm[part] = big
                pl[part] = s_l[0 + r] * w0 + s_l[4 + r] * w1 + s_l[8 + r] * w2 + s_l[12 + r] * w3

    return attention_decode


attention_decode_f32_d128 = _make_decode_d128(pt.f32, "attention_decode_f32_d128")
attention_decode_f16_d128 = _make_decode_words_d128(pt.f16, "attention_decode_f16_d128", f16_low, f16_high)
attention_decode_bf16_d128 = _make_decode_words_d128(pt.bf16, "attention_decode_bf16_d128", bf16_low, bf16_high)
attention_decode_f32_d256 = _make_decode_d256(pt.f32, "attention_decode_f32_d256")
attention_decode_f16_d256 = _make_decode_words_d256(pt.f16, "attention_decode_f16_d256", f16_low, f16_high)
attention_decode_bf16_d256 = _make_decode_words_d256(pt.bf16, "attention_decode_bf16_d256", bf16_low, bf16_high)
ROWS = {128: 4, 256: 4}               # query rows a workgroup, by variant


def decode_groups(splits: int, kv_rows: int, grows: int, dmax: int) -> tuple[int, int, int]:
    """The decode launch's grid in threads: (splits, KV rows x row blocks) workgroups of THREADS."""
    return (splits * THREADS, kv_rows * -(-grows // ROWS[dmax]), 1)


def scores(q, k, mask, left, right, scale, softcap):
    """[rows, Lq, Lk] float64 logits as the kernel forms them (GQA by head ratio), -inf where not visible."""
    ratio = q.shape[0] // k.shape[0]
    k64 = np.repeat(k.astype(np.float64), ratio, axis=0)
    s = q.astype(np.float64) @ np.swapaxes(k64, -1, -2) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask
    rel = np.arange(k.shape[1])[None, :] - np.arange(q.shape[1])[:, None]
    return np.where((rel >= -left) & (rel <= right), s, -np.inf)


def partials(s, v, left, right, chunk, splits, rows_per_group):
    """Each (row, split)'s (max, sum, accumulator) in float64: the rows of one workgroup share the union of
    their visible key ranges, cut into `chunk`-key splits, as the kernel does."""
    rows, lq, lk = s.shape
    kv, dv = v.shape[0], v.shape[2]
    grows = rows // kv * lq
    s = s.reshape(kv, grows, lk)
    pm = np.full((kv, grows, splits), -np.inf)
    pl = np.zeros((kv, grows, splits))
    pacc = np.zeros((kv, grows, splits, dv))
    for g in range(kv):
        for t0 in range(0, grows, rows_per_group):
            nr = min(rows_per_group, grows - t0)
            qa, qb = (t0 % lq, (t0 + nr - 1) % lq) if (t0 + nr - 1) // lq == t0 // lq else (0, lq - 1)
            lo, hi = max(qa - left, 0), min(max(qb + right + 1, 0), lk)
            for sp in range(splits):
                c0, c1 = lo + sp * chunk, min(lo + (sp + 1) * chunk, hi)
                seg = s[g, t0:t0 + nr, c0:max(c0, c1)]
                if seg.shape[1] == 0:
                    continue
                m = seg.max(-1)
                e = np.exp(seg - np.where(np.isfinite(m), m, 0)[:, None])
                pm[g, t0:t0 + nr, sp] = m
                pl[g, t0:t0 + nr, sp] = e.sum(-1)
                pacc[g, t0:t0 + nr, sp] = e @ v[g, c0:c1].astype(np.float64)
    return pm.reshape(-1), pl.reshape(-1), pacc.reshape(-1)


CASES = (  # Hq, Hk, Lq, Lk, D, Dv, left, right, mask, softcap, chunk, splits
    (4, 1, 1, 37, 64, 64, UNBOUNDED, UNBOUNDED, False, 0.0, 32, 2),     # GQA 4, odd Lk, a partial step
    (7, 1, 2, 45, 80, 48, 20, 0, True, 3.0, 16, 3),                      # GQA 7 x 2 queries: two row blocks
    (2, 2, 3, 50, 128, 128, 5, 3, False, 0.0, 32, 2),                    # windows: splits past hi stay empty
)
WIDE = (
    (2, 1, 2, 29, 256, 200, UNBOUNDED, UNBOUNDED, True, 0.0, 16, 2),
    (3, 3, 1, 21, 160, 256, 4, UNBOUNDED, False, 5.0, 32, 1),
)


def _decode_examples(np_dtype, dmax):
    rng = np.random.default_rng(6)
    out = []
    for hq, hk, lq, lk, d, dv, left, right, with_mask, cap, chunk, splits in (CASES if dmax == 128 else WIDE):
        q = rng.standard_normal((hq, lq, d)).astype(np_dtype)
        k = rng.standard_normal((hk, lk, d)).astype(np_dtype)
        v = rng.standard_normal((hk, lk, dv)).astype(np_dtype)
        mask = (rng.standard_normal((hq, lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
        scale = float(1 / np.sqrt(d))
        s = scores(q, k, mask if with_mask else None, left, right, scale, cap)
        pm, pl, pacc = partials(s, v, left, right, chunk, splits, ROWS[dmax])
        rows = hq * lq
        strides = (0, lq * lk, lk, 1) if with_mask else (0, 0, 0, 0)
        qkv = tuple(x.reshape(-1) if np_dtype == np.float32 else x.reshape(-1).view(np.uint32) for x in (q, k, v))
        args = qkv + (mask.reshape(-1), np.zeros(rows * splits, np.float32),
                np.zeros(rows * splits, np.float32), np.zeros(rows * splits * dv, np.float32), lq, lk, d, dv, hq,
                hq // hk, left, right, int(with_mask)) + strides + (scale, cap, chunk, splits)
        out.append(Example(args=args, threads=decode_groups(splits, hk, hq // hk * lq, dmax),
                           expected={"pm": pm.astype(np.float32), "pl": pl.astype(np.float32),
                                     "pacc": pacc.astype(np.float32)}, rtol=2e-5, atol=2e-5))
    return out




def example_attention_decode_f32_d128(rng):
    return _decode_examples(np.float32, 128)


def example_attention_decode_f16_d128(rng):
    return _decode_examples(np.float16, 128)


def example_attention_decode_bf16_d128(rng):
    return _decode_examples(ml_dtypes.bfloat16, 128)


def example_attention_decode_f32_d256(rng):
    return _decode_examples(np.float32, 256)


def example_attention_decode_f16_d256(rng):
    return _decode_examples(np.float16, 256)


def example_attention_decode_bf16_d256(rng):
    return _decode_examples(ml_dtypes.bfloat16, 256)
