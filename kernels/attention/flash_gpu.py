"""Flash attention for GPUs: a prefill kernel (many queries), and the combine of the split-K decode kernels.

Shared conventions (as kernels/attention/flash_cpu.py): q [B * Hq, Lq, D], k [B * Hk, Lk, D],
v [B * Hk, Lk, Dv], o [B * Hq, Lq, Dv] row-major of one dtype T, accumulated in f32; GQA by ratio =
Hq / Hk; an additive f32 mask at b * msb + h * msh + i * msq + j * msk when has_mask; query i sees key j
when -left <= j - i <= right; softcap > 0 applies softcap * tanh(s / softcap) before the mask; a query
that sees no key gets 0 when zero_empty, else NaN. D, Dv <= DMAX.

attention_prefill_<T>: a workgroup of 128 threads owns BQ = 8 queries of one (b, h) row, LANES = 16
threads per query. Keys go BK = 16 at a time: each thread scores one (query, key) pair, the tile's
scores meet in shared memory, every lane of a query reads its row to update the running maximum m and
sum l (kept redundantly in each lane's registers: no reduction tree), then each lane rescales and
accumulates its share of the head dim (d = lane, lane + 16, ...) in a shared f32 accumulator. Two
barriers per tile; 8.3 KiB of shared memory (within WebGPU's 16 KiB). Tiles no query of the block
sees (causal, sliding window) are never visited: the key range is uniform per workgroup.
Launch: threads = (ceil(Lq / 8) * 128, B * Hq, 1).

attention_combine_<T> merges the `splits` (at most MAX_SPLITS) partial maxima, sums and f32 accumulators
(pm, pl, pacc) a query row gets from the split-K decode kernels (kernels/attention/flash_decode.py):
O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s. Only `rows` workgroups exist (a few dozen), so
each is as wide as a workgroup goes (WARPS = 32 warps) and its time is a few dependent memory latencies
whatever the split count: thread t reads split t's m and l (one load each), the row's maximum and the
weights exp(m_s - M) are found once (subgroup reductions, weights in shared memory); warp w takes splits
w, w + 32, w + 64, ... two at a time, lane l the dims l + 32 g (g < 8: eight named accumulators, as the
language has no register arrays), every load of a pair issued before its multiply-adds, and the warp's
first pair is read before the weights are known. Up to 64 splits that is one round of loads overlapping
the maximum's; each further 64 splits add one. The warps' sums meet in shared memory (32 x DMAX f32:
36 KiB in all, within PTX's 48 KiB of static shared memory and AMDGCN's 64 KiB of LDS) and thread d
adds those of the min(splits, 32) warps that had a split, so few splits cost few adds. Subgroup
operations: PTX and AMDGCN, as the decode kernels. Launch: threads = (rows * COMBINE, 1, 1).
"""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 16        # prefill: threads per query
BQ = 8            # prefill: queries per workgroup
BK = 16           # prefill: keys per tile
DMAX = 256        # largest head dim
NEG_INF = float("-inf")
UNBOUNDED = 1 << 30
WARPS = 32        # combine: warps per workgroup (one query row)
COMBINE = 32 * WARPS   # combine: threads per workgroup
MAX_SPLITS = COMBINE   # combine: the most splits a row may have (one a thread, weights in shared memory)


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


@pt.device_fn
def offset(m):
    """What exp() subtracts for a row whose maximum is m (0 where every split is empty)."""
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


def _make_prefill(T, name):
    @pt.kernel(workgroup=(LANES * BQ, 1, 1), name=name, checks=False)
    def attention_prefill(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], o: pt.Out[T],
                          Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,
                          left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,
                          msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):
        s_scores = pt.shared(pt.f32, BQ * BK)
        s_probs = pt.shared(pt.f32, BQ * BK)
        acc = pt.shared(pt.f32, BQ * DMAX)
        local = pt.local_index_x()
        r = local // LANES
        lane = local % LANES
        bh = pt.group_index_y()
        q0 = pt.group_index_x() * BQ
        qi = q0 + r
        qc = min(qi, Lq - 1)          # rows past Lq compute on the last row and store nothing
        nq = min(pt.u32(BQ), Lq - q0)
        b = bh // Hq
        h = bh % Hq
        kvh = b * (Hq // ratio) + h // ratio
        qrow = (bh * Lq + qc) * D
        kbase = kvh * Lk * D
        vbase = kvh * Lk * Dv
        mrow = b * msb + h * msh + qc * msq
        slot = r * BK
        arow = r * DMAX
        for d in range(lane, Dv, LANES):
            acc[arow + d] = 0.0
        m = pt.f32(NEG_INF)
        l = pt.f32(0.0)
        lo = key_lo(q0, left)
        hi = key_hi(q0 + nq - 1, right, Lk)
        for k0 in range(lo, hi, BK):
            kj = k0 + lane
            x = pt.f32(NEG_INF)
            if kj < hi:
                dot = pt.f32(0.0)
                krow = kbase + kj * D
                for d in range(D):
                    dot += pt.f32(q[qrow + d]) * pt.f32(k[krow + d])
                x = score(dot * scale, qc, kj, hi, left, right, mask, has_mask, mrow + kj * msk, softcap)
            s_scores[slot + lane] = x
            pt.workgroup_barrier()
            mx = m
            for j in range(BK):
                mx = max(mx, s_scores[slot + j])
            base = mx
            if mx == NEG_INF:
                base = 0.0
            s_probs[slot + lane] = pt.exp(x - base)
            alpha = pt.exp(m - base)
            m = mx
            pt.workgroup_barrier()
            total = pt.f32(0.0)
            for j in range(BK):
                total += s_probs[slot + j]
            l = l * alpha + total
            nk = min(pt.u32(BK), hi - k0)
            for d in range(lane, Dv, LANES):
                a = acc[arow + d] * alpha
                for j in range(nk):
                    a += s_probs[slot + j] * pt.f32(v[vbase + (k0 + j) * Dv + d])
                acc[arow + d] = a
        if qi < Lq:
            inv = normalizer(l, zero_empty)
            orow = (bh * Lq + qi) * Dv
            for d in range(lane, Dv, LANES):
                o[orow + d] = T(acc[arow + d] * inv)

    return attention_prefill


@pt.device_fn
def fetch(pacc, at, ok):
    """pacc[at] where ok (a split and a dim group this lane takes), else 0: nothing is read past a row."""
    r = pt.f32(0.0)
    if ok:
        r = pacc[at]
    return r


def _make_combine(T, name):
    @pt.kernel(workgroup=(COMBINE, 1, 1), name=name, checks=False)
    def attention_combine(pm: pt.In[pt.f32], pl: pt.In[pt.f32], pacc: pt.In[pt.f32], o: pt.Out[T], rows: pt.u32,
                          Dv: pt.u32, splits: pt.u32, zero_empty: pt.u32):
        s_w = pt.shared(pt.f32, MAX_SPLITS)                # the row's split weights exp(m_s - M)
        s_max = pt.shared(pt.f32, WARPS)
        s_sum = pt.shared(pt.f32, WARPS)
        s_part = pt.shared(pt.f32, WARPS * DMAX)           # each warp's weighted sum of its splits
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        row = pt.group_index_x()
        first = row * splits
        groups = (Dv + 31) // 32                           # dim groups d = lane + 32 * g of a split's row
        e0 = min(lane, Dv - 1)                             # a lane past Dv reads the last dim; no output takes it
        e1 = min(lane + 32, Dv - 1)
        e2 = min(lane + 64, Dv - 1)
        e3 = min(lane + 96, Dv - 1)
        e4 = min(lane + 128, Dv - 1)
        e5 = min(lane + 160, Dv - 1)
        e6 = min(lane + 192, Dv - 1)
        e7 = min(lane + 224, Dv - 1)
        mine = pt.f32(NEG_INF)                             # thread t holds split t's maximum and sum
        mass = pt.f32(0.0)
        if t < splits:
            mine = pm[first + t]
            mass = pl[first + t]
        # the warp's first two splits (warp, warp + 32) are read while the weights are found
        na = pt.where(warp < splits, groups, pt.u32(0))
        nb = pt.where(warp + WARPS < splits, groups, pt.u32(0))
        ra = (first + warp) * Dv
        rb = ra + WARPS * Dv
        xa0 = fetch(pacc, ra + e0, na > 0)
        xa1 = fetch(pacc, ra + e1, na > 1)
        xa2 = fetch(pacc, ra + e2, na > 2)
        xa3 = fetch(pacc, ra + e3, na > 3)
        xa4 = fetch(pacc, ra + e4, na > 4)
        xa5 = fetch(pacc, ra + e5, na > 5)
        xa6 = fetch(pacc, ra + e6, na > 6)
        xa7 = fetch(pacc, ra + e7, na > 7)
        xb0 = fetch(pacc, rb + e0, nb > 0)
        xb1 = fetch(pacc, rb + e1, nb > 1)
        xb2 = fetch(pacc, rb + e2, nb > 2)
        xb3 = fetch(pacc, rb + e3, nb > 3)
        xb4 = fetch(pacc, rb + e4, nb > 4)
        xb5 = fetch(pacc, rb + e5, nb > 5)
        xb6 = fetch(pacc, rb + e6, nb > 6)
        xb7 = fetch(pacc, rb + e7, nb > 7)
        big = pt.subgroup_max(mine)
        if lane == 0:
            s_max[warp] = big
        pt.workgroup_barrier()
        base = offset(pt.subgroup_max(s_max[lane]))
        w = pt.exp(mine - base)                            # 0 for an empty split and for t >= splits
        s_w[t] = w
        total = pt.subgroup_sum(mass * w)
        if lane == 0:
            s_sum[warp] = total
        pt.workgroup_barrier()
        inv = normalizer(pt.subgroup_sum(s_sum[lane]), zero_empty)
        wa = s_w[warp]
        wb = s_w[warp + WARPS]
        a0 = xa0 * wa + xb0 * wb
        a1 = xa1 * wa + xb1 * wb
        a2 = xa2 * wa + xb2 * wb
        a3 = xa3 * wa + xb3 * wb
        a4 = xa4 * wa + xb4 * wb
        a5 = xa5 * wa + xb5 * wb
        a6 = xa6 * wa + xb6 * wb
        a7 = xa7 * wa + xb7 * wb
        for s in range(warp + 2 * WARPS, splits, 2 * WARPS):     # more than 64 splits: two more at a time
            nb = pt.where(s + WARPS < splits, groups, pt.u32(0))
            ra = (first + s) * Dv
            rb = ra + WARPS * Dv
            xa0 = pacc[ra + e0]
            xa1 = fetch(pacc, ra + e1, groups > 1)
            xa2 = fetch(pacc, ra + e2, groups > 2)
            xa3 = fetch(pacc, ra + e3, groups > 3)
            xa4 = fetch(pacc, ra + e4, groups > 4)
            xa5 = fetch(pacc, ra + e5, groups > 5)
            xa6 = fetch(pacc, ra + e6, groups > 6)
            xa7 = fetch(pacc, ra + e7, groups > 7)
            xb0 = fetch(pacc, rb + e0, nb > 0)
            xb1 = fetch(pacc, rb + e1, nb > 1)
            xb2 = fetch(pacc, rb + e2, nb > 2)
            xb3 = fetch(pacc, rb + e3, nb > 3)
            xb4 = fetch(pacc, rb + e4, nb > 4)
            xb5 = fetch(pacc, rb + e5, nb > 5)
            xb6 = fetch(pacc, rb + e6, nb > 6)
            xb7 = fetch(pacc, rb + e7, nb > 7)
            wa = s_w[s]
            wb = s_w[min(s + WARPS, pt.u32(MAX_SPLITS - 1))]
            a0 += xa0 * wa + xb0 * wb
            a1 += xa1 * wa + xb1 * wb
            a2 += xa2 * wa + xb2 * wb
            a3 += xa3 * wa + xb3 * wb
            a4 += xa4 * wa + xb4 * wb
            a5 += xa5 * wa + xb5 * wb
            a6 += xa6 * wa + xb6 * wb
            a7 += xa7 * wa + xb7 * wb
        if warp < splits:                                  # lanes past Dv fill slots nothing reads
            at = warp * DMAX + lane
            s_part[at] = a0
            s_part[at + 32] = a1
            s_part[at + 64] = a2
            s_part[at + 96] = a3
            s_part[at + 128] = a4
            s_part[at + 160] = a5
            s_part[at + 192] = a6
            s_part[at + 224] = a7
        pt.workgroup_barrier()
        if t < Dv:
            acc = pt.f32(0.0)
            for u in range(min(splits, pt.u32(WARPS))):
                acc += s_part[u * DMAX + t]
            o[row * Dv + t] = T(acc * inv)

    return attention_combine


attention_prefill_f32 = _make_prefill(pt.f32, "attention_prefill_f32")
attention_prefill_f16 = _make_prefill(pt.f16, "attention_prefill_f16")
attention_prefill_bf16 = _make_prefill(pt.bf16, "attention_prefill_bf16")
attention_combine_f32 = _make_combine(pt.f32, "attention_combine_f32")
attention_combine_f16 = _make_combine(pt.f16, "attention_combine_f16")
attention_combine_bf16 = _make_combine(pt.bf16, "attention_combine_bf16")


def prefill_threads(lq: int, rows: int) -> tuple[int, int, int]:
    return (-(-lq // BQ) * LANES * BQ, rows, 1)


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


CASES = (  # rows, kv rows, Lq, Lk, D, left, right, mask, softcap
    (1, 1, 11, 37, 4, UNBOUNDED, UNBOUNDED, False, 0.0),
    (2, 1, 9, 9, 4, UNBOUNDED, 0, True, 0.0),
    (1, 1, 5, 40, 4, 5, 3, False, 2.0),
)


def _inputs(np_dtype, case, rng):
    rows, kv, lq, lk, d, left, right, with_mask, cap = case
    q = rng.standard_normal((rows, lq, d)).astype(np_dtype)
    k = rng.standard_normal((kv, lk, d)).astype(np_dtype)
    v = rng.standard_normal((kv, lk, d)).astype(np_dtype)
    mask = (rng.standard_normal((lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
    ref = reference(q, k, v, mask if with_mask else None, left, right, softcap=cap)
    scalars = (lq, lk, d, d, rows, rows // kv, left, right, int(with_mask), 0, 0, lk if with_mask else 0,
               1 if with_mask else 0)
    return q, k, v, mask, ref, scalars


def _tolerance(np_dtype):
    eps = float(ml_dtypes.finfo(np_dtype).eps)
    return 4 * eps, 8 * eps + 1e-5


def _prefill_examples(np_dtype):
    rng = np.random.default_rng(5)
    out = []
    for case in CASES:
        q, k, v, mask, ref, scalars = _inputs(np_dtype, case, rng)
        o = np.zeros((case[0], case[2], case[4]), np_dtype)
        args = (q.reshape(-1), k.reshape(-1), v.reshape(-1), mask.reshape(-1), o.reshape(-1)) + scalars + (
            1, float(1 / np.sqrt(case[4])), case[8])
        rtol, atol = _tolerance(np_dtype)
        out.append(Example(args=args, threads=prefill_threads(case[2], case[0]),
                           expected={"o": ref.astype(np_dtype).reshape(-1)}, rtol=rtol, atol=atol))
    return out


COMBINE_CASES = (  # rows, Dv, splits, zero_empty
    (3, 5, 4, 1),          # a split each for a few warps
    (2, 200, 7, 1),        # dims past four groups of 32, the last group partial
    (2, 3, 9, 0),          # the row that saw no key is NaN
    (1, 256, 1, 1),        # one split, the widest head
    (2, 33, 150, 1),       # three rounds of a warp's pairs of splits, the last pair half past the end
    (1, 2, MAX_SPLITS, 0),  # every thread a split
)


def _combine_inputs(rows, dv, splits, rng):
    """Partials as the decode kernel writes them: an empty split (m = -inf, l = 0, acc = 0), and, given
    several rows, a last row whose every split is empty."""
    pm = rng.standard_normal((rows, splits)).astype(np.float32) * 4
    pl = rng.random((rows, splits)).astype(np.float32) + 0.5
    pacc = rng.standard_normal((rows, splits, dv)).astype(np.float32)
    empty = np.zeros((rows, splits), bool)
    empty.flat[min(1, empty.size - 1)] = rows * splits > 1
    if rows > 1:
        empty[-1] = True
    pm[empty], pl[empty], pacc[empty] = -np.inf, 0.0, 0.0
    return pm, pl, pacc


def combine_reference(pm, pl, pacc, zero_empty):
    """o[r] = sum_s w_s acc_s / sum_s w_s l_s with w_s = exp(m_s - max_s m_s), in float64; a row with
    every split empty is 0 when zero_empty, else NaN."""
    big = pm.max(1, keepdims=True)
    w = np.exp(pm.astype(np.float64) - np.where(np.isfinite(big), big, 0))
    total = (pl * w).sum(1)
    acc = (pacc * w[:, :, None]).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = acc / total[:, None]
    out[total == 0] = 0.0 if zero_empty else np.nan
    return out


def _combine_examples(np_dtype):
    rng = np.random.default_rng(8)
    out = []
    rtol, atol = _tolerance(np_dtype)
    for rows, dv, splits, zero_empty in COMBINE_CASES:
        pm, pl, pacc = _combine_inputs(rows, dv, splits, rng)
        ref = combine_reference(pm, pl, pacc, zero_empty)
        out.append(Example(args=(pm.reshape(-1), pl.reshape(-1), pacc.reshape(-1), np.zeros(rows * dv, np_dtype),
                                 rows, dv, splits, zero_empty),
                           threads=(rows * COMBINE, 1, 1), expected={"o": ref.astype(np_dtype).reshape(-1)},
                           rtol=rtol, atol=atol))
    return out


def example_attention_prefill_f32(rng):
    return _prefill_examples(np.float32)


def example_attention_prefill_f16(rng):
    return _prefill_examples(np.float16)


def example_attention_prefill_bf16(rng):
    return _prefill_examples(ml_dtypes.bfloat16)


def example_attention_combine_f32(rng):
    return _combine_examples(np.float32)


def example_attention_combine_f16(rng):
    return _combine_examples(np.float16)


def example_attention_combine_bf16(rng):
    return _combine_examples(ml_dtypes.bfloat16)
