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
O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s. A workgroup of 128 threads per row: the row's
maximum and weights exp(m_s - M) are found once (subgroup reductions, weights in shared memory) rather
than per output element, and each thread sums its dims' accumulators four splits at a time, so a
hundred splits cost a few dependent memory latencies, not a hundred. Subgroup operations: PTX and
AMDGCN, as the decode kernels. Launch: threads = (rows * 128, 1, 1).
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
COMBINE = 128     # combine: threads per workgroup (one query row)
MAX_SPLITS = 1024  # combine: the most splits a row may have (its weights sit in shared memory)


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


def _make_combine(T, name):
    @pt.kernel(workgroup=(COMBINE, 1, 1), name=name, checks=False)
    def attention_combine(pm: pt.In[pt.f32], pl: pt.In[pt.f32], pacc: pt.In[pt.f32], o: pt.Out[T], rows: pt.u32,
                          Dv: pt.u32, splits: pt.u32, zero_empty: pt.u32):
        s_w = pt.shared(pt.f32, MAX_SPLITS)       # the row's split weights exp(m_s - M)
        s_max = pt.shared(pt.f32, COMBINE // 32)
        s_sum = pt.shared(pt.f32, COMBINE // 32)
        t = pt.local_index_x()
        lane = pt.lane_index()
        warp = t // 32
        row = pt.group_index_x()
        first = row * splits
        big = pt.f32(NEG_INF)
        for s in range(t, splits, COMBINE):
            big = max(big, pm[first + s])
        big = pt.subgroup_max(big)
        if lane == 0:
            s_max[warp] = big
        pt.workgroup_barrier()
        base = offset(max(s_max[0], s_max[1], s_max[2], s_max[3]))    # the COMBINE // 32 = 4 warps'
        total = pt.f32(0.0)
        for s in range(t, splits, COMBINE):
            w = pt.exp(pm[first + s] - base)
            s_w[s] = w
            total += pl[first + s] * w
        total = pt.subgroup_sum(total)
        if lane == 0:
            s_sum[warp] = total
        pt.workgroup_barrier()
        inv = normalizer(s_sum[0] + s_sum[1] + s_sum[2] + s_sum[3], zero_empty)
        quads = splits // 4 * 4
        for d in range(t, Dv, COMBINE):
            at = first * Dv + d
            a0 = pt.f32(0.0)
            a1 = pt.f32(0.0)
            a2 = pt.f32(0.0)
            a3 = pt.f32(0.0)
            for s in range(0, quads, 4):          # four independent loads in flight
                a0 += pacc[at + s * Dv] * s_w[s]
                a1 += pacc[at + (s + 1) * Dv] * s_w[s + 1]
                a2 += pacc[at + (s + 2) * Dv] * s_w[s + 2]
                a3 += pacc[at + (s + 3) * Dv] * s_w[s + 3]
            for s in range(quads, splits):
                a0 += pacc[at + s * Dv] * s_w[s]
            o[row * Dv + d] = T(((a0 + a1) + (a2 + a3)) * inv)

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


def _combine_examples(np_dtype):
    """Rows with an empty split, a row with every split empty (0 when zero_empty, else NaN), dims past one
    thread's (Dv > 128) and split counts with and without a remainder after the groups of four."""
    rng = np.random.default_rng(8)
    out = []
    for rows, dv, splits, zero_empty in ((3, 5, 4, 1), (2, 200, 7, 1), (2, 3, 9, 0)):
        pm = rng.standard_normal(rows * splits).astype(np.float32)
        pl = rng.random(rows * splits).astype(np.float32) + 0.5
        pm[1], pl[1] = -np.inf, 0.0                      # an empty split
        pm[-splits:], pl[-splits:] = -np.inf, 0.0        # the last row saw no key
        pacc = rng.standard_normal(rows * splits * dv).astype(np.float32)
        pacc.reshape(rows, splits, dv)[-1] = 0.0
        big = pm.reshape(rows, splits).max(1)
        w = np.exp(pm.astype(np.float64) - np.where(np.isfinite(big), big, 0).repeat(splits))
        total = (pl * w).reshape(rows, splits).sum(1)
        acc = (pacc.reshape(rows, splits, dv) * w.reshape(rows, splits, 1)).sum(1)
        with np.errstate(invalid="ignore"):
            ref = acc / total[:, None]
        ref[-1] = 0.0 if zero_empty else np.nan
        rtol, atol = _tolerance(np_dtype)
        out.append(Example(args=(pm, pl, pacc, np.zeros(rows * dv, np_dtype), rows, dv, splits, zero_empty),
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
