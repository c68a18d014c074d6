"""Token sampling, one workgroup a row of logits: greedy argmax, or a draw after temperature, top-k,
top-p and min-p, the "sample" op's semantics (poot/graph/sampling.py, whose oracle is the reference).

Operands: logits [R, V] f32 row-major, bits [R] u32 (the row's 32 random bits), out [R] i64, scratch [R, V]
u32 (the kernel's own working row). Scalars: V, inv_temperature (each gap m - x below the row's maximum is
multiplied by it when `scaled`: scaling the gap, not the logit, cannot overflow into inf ties),
greedy, top_k (0: off), p24 (top-p as a 24-bit fixed-point fraction; 2**24: off) and mp24 (min-p likewise; 0: off).

Why integers: after the maximum m, every token's weight is q ~ floor(2**24 * exp((l - m) / T)) (the maximum
gets 2**24, -inf gets 0), computed from (m - l) * inv_temperature in integer arithmetic (a fixed-point 2**y
polynomial, `weight`), not with a float exp whose last bit differs between devices; and every sum the draw
depends on (the top-p mass, the total, the running mass the draw walks) is an int64 sum of those. Integer
sums do not depend on the order a device adds in, so the same bits and logits give the same token on every
device and in every lane count.

The row is processed in passes, each a strided loop over V and a reduction through shared memory:
1. clean (NaN -> -inf, -0 -> +0), store each logit's order-preserving 32-bit key in scratch; the maximum
   (greedy: the first index of the maximum, and done);
2. top-k: the k-th largest key, found bit by bit from the top (32 counting passes); keys below it drop;
3. scratch becomes q (0 for a dropped token); the total;
4. top-p: the smallest threshold v whose mass above it, sum of q > v, is below floor(total * p24 / 2**24)
   (25 passes of a binary search over [0, 2**24]); tokens with q below v, or below mp24, drop;
5. the draw: r = floor(bits * total / 2**32), exact in 64 bits; each lane sums a contiguous chunk of the
   row, takes the mass of the chunks before its own, and the lane whose chunk holds r walks it to the
   first index whose running mass exceeds r.

sample_rows_cpu is the same body with one lane a workgroup (a sequential loop a row: the CPU device runs
rows on its threads); sample_rows_gpu has LANES lanes."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 256                 # lanes of a GPU workgroup (wgpu's default limit on invocations a workgroup)
ONE = 16777216              # 2**24: the fixed-point weight of the most likely token
NEG_INF = float("-inf")
SIGN = 0x80000000
LOG2E_Q30 = 1549082005      # round(log2(e) * 2**30)
# round(ln(2)**k / k! * 2**32): 2**y = sum_k C_k y**k / 2**32 for y in [0, 1), Horner in 24-bit fixed point
C0, C1, C2, C3, C4, C5, C6, C7, C8 = (4294967296, 2977044472, 1031764991, 238388332, 41309550, 5726720, 661577,
                                      65510, 5676)


@pt.device_fn
def order_key(x):
    """x's bits mapped so that unsigned order is float order (x is not NaN, -0 already made +0)."""
    b = pt.bitcast(x, pt.u32)
    k = b | SIGN
    if b >= SIGN:
        k = ~b
    return k


@pt.device_fn
def key_value(k):
    """The float whose order_key is k."""
    b = ~k
    if k >= SIGN:
        b = k ^ SIGN
    return pt.bitcast(b, pt.f32)


@pt.device_fn
def weight(x, m, inv_temperature, scaled):
    """The fixed-point weight of logit x under maximum m, in integer arithmetic after one subtraction and
    (when `scaled`) one product d = (m - x) * inv_temperature (poot/graph/sampling.py `weights`), so every
    device computes the same bits; a huge inv_temperature only makes d large, so the weight goes to 0."""
    q = pt.u32(0)
    d = m - x
    if scaled != 0:
        d = d * inv_temperature
    if x == m and x > NEG_INF:
        q = pt.u32(ONE)
    elif x > NEG_INF and d < 32.0:
        a = pt.u64(pt.u32(d * 16777216.0))                # d in 24-bit fixed point (< 2**29)
        ta = (a * LOG2E_Q30) >> 30                        # d * log2(e)
        n = (ta + 16777215) >> 24                         # 2**(x - m) = 2**(f / 2**24) / 2**n
        f = (n << 24) - ta
        acc = pt.u64(C8)
        acc = C7 + ((acc * f) >> 24)
        acc = C6 + ((acc * f) >> 24)
        acc = C5 + ((acc * f) >> 24)
        acc = C4 + ((acc * f) >> 24)
        acc = C3 + ((acc * f) >> 24)
        acc = C2 + ((acc * f) >> 24)
        acc = C1 + ((acc * f) >> 24)
        acc = C0 + ((acc * f) >> 24)                      # 2**(f / 2**24) * 2**32
        q = pt.u32(acc >> (n + 8))
    return q


def _make(lanes, name):
    @pt.device_fn
    def total_i64(s, t, v):
        """The sum of every lane's v (each lane gets it); the barrier first lets a previous read finish."""
        pt.workgroup_barrier()
        s[t] = v
        pt.workgroup_barrier()
        step = lanes // 2
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            pt.workgroup_barrier()
            step //= 2
        return s[0]

    @pt.kernel(workgroup=(lanes, 1, 1), name=name, checks=False)
    def sample_rows(logits: pt.In[pt.f32], bits: pt.In[pt.u32], out: pt.Out[pt.i64], scratch: pt.InOut[pt.u32],
                    V: pt.u32, inv_temperature: pt.f32, scaled: pt.u32, greedy: pt.u32, top_k: pt.u32, p24: pt.u32,
                    mp24: pt.u32):
        s_sum = pt.shared(pt.i64, lanes)
        s_max = pt.shared(pt.f32, lanes)
        s_at = pt.shared(pt.u32, lanes)
        t = pt.local_index_x()
        row = pt.group_index_x()
        base = row * V
        # 1. keys and the maximum (with its first index)
        best = pt.f32(NEG_INF)
        at = V
        for i in range(t, V, lanes):
            x = logits[base + i]
            if pt.isnan(x):
                x = pt.f32(NEG_INF)
            if x == 0.0:
                x = pt.f32(0.0)
            if greedy == 0:
                scratch[base + i] = order_key(x)
            if x > best or at == V:
                best = x
                at = i
        s_max[t] = best
        s_at[t] = at
        pt.workgroup_barrier()
        step = lanes // 2
        while step > 0:
            if t < step:
                ob = s_max[t + step]
                oa = s_at[t + step]
                if ob > s_max[t] or (ob == s_max[t] and oa < s_at[t]):
                    s_max[t] = ob
                    s_at[t] = oa
            pt.workgroup_barrier()
            step //= 2
        m = s_max[0]
        first = s_at[0]
        if greedy != 0:
            if t == 0:
                out[row] = pt.i64(min(first, V - 1))
            return
        # 2. top-k: the largest key k0 with at least top_k keys >= k0
        cut = pt.u32(0)
        if top_k > 0 and top_k < V:
            for b in range(31, -1, -1):
                cand = cut | (pt.u32(1) << pt.u32(b))
                c = pt.i64(0)
                for i in range(t, V, lanes):
                    if scratch[base + i] >= cand:
                        c += 1
                if total_i64(s_sum, t, c) >= pt.i64(top_k):
                    cut = cand
        # 3. weights in scratch, and their total
        mine = pt.i64(0)
        for i in range(t, V, lanes):
            k = scratch[base + i]
            q = pt.u32(0)
            if k >= cut:
                q = weight(key_value(k), m, inv_temperature, scaled)
            scratch[base + i] = q
            mine += pt.i64(q)
        total = total_i64(s_sum, t, mine)
        # 4. top-p and min-p: one threshold on the weights
        floor_q = max(mp24, pt.u32(1))
        if p24 < ONE and total > 0:
            limit = (total >> 24) * pt.i64(p24) + (((total & 16777215) * pt.i64(p24)) >> 24)
            lo = pt.u32(0)
            hi = pt.u32(ONE)
            for _ in range(25):
                mid = (lo + hi) // 2
                above = pt.i64(0)
                for i in range(t, V, lanes):
                    q = scratch[base + i]
                    if q > mid:
                        above += pt.i64(q)
                if total_i64(s_sum, t, above) < limit:
                    hi = mid
                else:
                    lo = mid + 1
            floor_q = max(floor_q, lo)
        # 5. the draw over the kept weights
        chunk = (V + lanes - 1) // lanes
        start = min(t * chunk, V)
        stop = min(start + chunk, V)
        part = pt.i64(0)
        for i in range(start, stop):
            q = scratch[base + i]
            if q >= floor_q:
                part += pt.i64(q)
        pt.workgroup_barrier()
        s_sum[t] = part
        pt.workgroup_barrier()
        before = pt.i64(0)
        for j in range(0, t):
            before += s_sum[j]
        kept = total_i64(s_sum, t, part)
        if kept == 0:
            if t == 0:
                out[row] = pt.i64(min(first, V - 1))
            return
        u = pt.u64(bits[row])
        x_hi = u * pt.u64(kept >> 24)
        x_lo = u * pt.u64(kept & 16777215)
        r = pt.i64((x_hi >> 8) + ((((x_hi & 255) << 24) + x_lo) >> 32))
        if before <= r and r < before + part:
            run = before
            for i in range(start, stop):
                q = scratch[base + i]
                if q >= floor_q:
                    run += pt.i64(q)
                    if run > r:
                        out[row] = pt.i64(i)
                        break

    return sample_rows


sample_rows_cpu = _make(1, "sample_rows_cpu")
sample_rows_gpu = _make(LANES, "sample_rows_gpu")


CASES = (  # rows, vocabulary, greedy, temperature, top_k, top_p, min_p
    (3, 1000, True, 1.0, 0, 1.0, 0.0),
    (4, 777, False, 1.0, 0, 1.0, 0.0),
    (3, 1500, False, 0.7, 40, 1.0, 0.0),
    (3, 1500, False, 1.3, 0, 0.9, 0.0),
    (2, 513, False, 1.0, 50, 0.8, 0.05),
    (2, 64, False, 1.0, 0, 0.5, 0.2),
    (3, 300, False, 1e-30, 0, 1.0, 0.0),    # 1 / temperature times a logit would overflow float32
)


def _logits(rows, vocab, rng):
    """Scaled normal logits with ties, -inf, NaN and -0 in them, and one row of -inf only."""
    x = (rng.standard_normal((rows, vocab)) * 3).astype(np.float32)
    x[:, 5] = x[:, 9] = x.max(axis=1) + 1          # two equal maxima: the first wins
    x[0, 11] = np.nan
    x[0, 12] = -np.inf
    x[-1, :] = -np.inf if rows > 3 else x[-1, :]
    x[:, 13] = -0.0
    return x


def _examples(lanes):
    from poot.graph.sampling import sample_oracle, scaled

    rng = np.random.default_rng(7)
    out = []
    for rows, vocab, greedy, temperature, top_k, top_p, min_p in CASES:
        x = _logits(rows, vocab, rng)
        bits = rng.integers(0, 2**32, rows, dtype=np.uint32)
        p24, mp24 = scaled(top_p, min_p)
        expected = sample_oracle((x, bits), greedy, temperature, top_k, p24, mp24)
        out.append(Example(args=(x.reshape(-1), bits, np.zeros(rows, np.int64), np.zeros(rows * vocab, np.uint32),
                                 vocab, np.float32(1 / temperature), int(temperature != 1.0 and not greedy), int(greedy), top_k,
                                 p24, mp24),
                           threads=(rows * lanes, 1, 1), expected={"out": expected}))
    return out


def example_sample_rows_cpu(rng):
    return _examples(1)


def example_sample_rows_gpu(rng):
    return _examples(LANES)
