"""Flash decode without subgroup operations (SPIR-V: wgpu and Vulkan): few queries over a long KV cache,
the key range split across workgroups, partials merged by a combine kernel.

Same operands, scalars and semantics as the other flash kernels (kernels/attention/flash_gpu.py): q
[B * Hq, Lq, D], k [B * Hk, Lk, D], v [B * Hk, Lk, Dv] row-major of one dtype T, accumulated in f32; GQA by
ratio = Hq / Hk; an additive f32 mask at b * msb + h * msh + i * msq + j * msk when has_mask; query i sees
key j when -left <= j - i <= right; softcap > 0 applies softcap * tanh(s / softcap) before the mask.

attention_decode_simt_<T>: a workgroup of THREADS threads owns one query row and one split of its keys,
[lo + split * chunk, lo + (split + 1) * chunk) of the row's visible range. Each thread scores one key of a
step of THREADS keys (a dot product over D against q, held in shared memory); the step's keys pass through
shared memory DCH head dims at a time, loaded coalesced (a thread reading its own key's row from global
memory made every load of a warp touch 32 rows: 1-3% of the memory bandwidth on an H100); the step's maximum
and sum go through shared-memory trees; each thread then accumulates its own head dims (t and t + THREADS) of
sum_j p_j v_j, reading the step's probabilities from shared memory and V rows coalesced across threads.
It writes the split's maximum, sum and f32 accumulator (pm, pl, pacc), as attention_decode_* does.
attention_combine_simt_<T>: a workgroup a query row, a thread a head dim (two past THREADS), merges the
row's splits: O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s.

Why: the warp-per-key decode kernel (flash_decode.py) reduces with shuffles, which the SPIR-V lowering
does not have; without a split, a decode query on the prefill kernel walks the whole cache in one
workgroup. Long key ranges take this kernel for any number of queries on SPIR-V: a prefill thread's
loops over them grow with Lk * D, and lavapipe stops a shader's loop after some 32k iterations without
an error (a row of 4096 keys of head dim 128 came out wrong), while a split's loops stay short.

Launch: decode groups (B * Hq * Lq, splits, 1); combine groups (B * Hq * Lq, 1, 1)."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

THREADS = 128
DMAX = 2 * THREADS        # largest head dim (a thread accumulates dims t and t + THREADS)
DCH = 16                  # head dims of a step's keys staged in shared memory at once
KROW = DCH + 1            # a staged key's row in s_k, padded: thread t reads row t, each in another bank
NEG_INF = float("-inf")
UNBOUNDED = 1 << 30


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
def normalizer(total, zero_empty):
    """1 / total, or 0 for a query that saw no key when zero_empty (else 0 * inf: NaN)."""
    inv = 1.0 / total
    if total == 0.0 and zero_empty != 0:
        inv = 0.0
    return inv


@pt.device_fn
def tree_max(s, t, x):
    """The maximum of every thread's x (each thread gets it); the first barrier lets earlier reads end."""
    pt.workgroup_barrier()
    s[t] = x
    pt.workgroup_barrier()
    step = THREADS // 2
    while step > 0:
        if t < step:
            s[t] = max(s[t], s[t + step])
        pt.workgroup_barrier()
        step //= 2
    return s[0]


@pt.device_fn
def tree_sum(s, t, x):
    """The sum of every thread's x (each thread gets it), as tree_max."""
    pt.workgroup_barrier()
    s[t] = x
    pt.workgroup_barrier()
    step = THREADS // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        pt.workgroup_barrier()
        step //= 2
    return s[0]


def _make_decode(T, name):
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode_simt(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                              pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32,
                              Dv: pt.u32, Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32,
                              msb: pt.u32, msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32,
                              chunk: pt.u32, splits: pt.u32):
        s_q = pt.shared(pt.f32, DMAX)
        s_p = pt.shared(pt.f32, THREADS)
        s_red = pt.shared(pt.f32, THREADS)
        s_k = pt.shared(pt.f32, THREADS * KROW)
        t = pt.local_index_x()
        row = pt.group_index_x()                   # (b * Hq + h) * Lq + i
        split = pt.group_index_y()
        qi = row % Lq
        bh = row // Lq
        b = bh // Hq
        h = bh % Hq
        kvrow = b * (Hq // ratio) + h // ratio
        kbase = kvrow * Lk * D
        vbase = kvrow * Lk * Dv
        mrow = b * msb + h * msh + qi * msq
        for d in range(t, D, THREADS):
            s_q[d] = pt.f32(q[row * D + d]) * scale
        c0 = key_lo(qi, left) + split * chunk
        c1 = min(c0 + chunk, key_hi(qi, right, Lk))
        d0 = min(t, Dv - 1)                        # a thread past Dv accumulates the last dim; none stores it
        d1 = min(t + THREADS, Dv - 1)
        m = pt.f32(NEG_INF)
        l = pt.f32(0.0)
        a0 = pt.f32(0.0)
        a1 = pt.f32(0.0)
        pt.workgroup_barrier()
        for k0 in range(c0, c1, THREADS):
            kj = k0 + t
            nk = min(pt.u32(THREADS), c1 - k0)
            dot = pt.f32(0.0)
            for dc in range(0, D, DCH):
                # the step's keys x dims [dc, dc + DCH) into s_k, coalesced (a warp reads whole DCH-element
                # pieces of rows), then each thread's key row out of it (padded rows: no bank conflicts)
                pt.workgroup_barrier()
                for i in range(DCH):
                    e = t + pt.u32(i) * THREADS
                    key = e // DCH
                    dim = dc + e % DCH
                    val = pt.f32(0.0)
                    if key < nk and dim < D:
                        val = pt.f32(k[kbase + (k0 + key) * D + dim])
                    s_k[key * KROW + e % DCH] = val
                pt.workgroup_barrier()
                for i in range(min(pt.u32(DCH), D - dc)):
                    # the clamp never acts; it keeps LLVM from merging these reads into vector loads
                    dot += s_q[dc + i] * s_k[t * KROW + min(i, pt.u32(DCH - 1))]
            x = pt.f32(NEG_INF)
            if kj < c1:
                x = score(dot, qi, kj, c1, left, right, mask, has_mask, mrow + kj * msk, softcap)
            big = max(m, tree_max(s_red, t, x))
            base = offset(big)
            p = pt.exp(x - base)
            alpha = pt.exp(m - base)
            m = big
            s_p[t] = p
            l = l * alpha + tree_sum(s_red, t, p)   # its barriers also publish s_p
            a0 *= alpha
            a1 *= alpha
            quads = nk - nk % 4
            for j in range(0, quads, 4):
                # four keys' V loads issued before their sums (one at a time, each waited for its load);
                # the clamps never act (j + 3 < nk <= THREADS): they keep LLVM from merging the reads of s_p
                # into vector loads, which its SPIR-V backend cannot legalize ("Unsupported ptrcast user")
                at = vbase + (k0 + j) * Dv
                w0 = pt.f32(v[at + d0])
                w1 = pt.f32(v[at + Dv + d0])
                w2 = pt.f32(v[at + 2 * Dv + d0])
                w3 = pt.f32(v[at + 3 * Dv + d0])
                p0 = s_p[min(j, pt.u32(THREADS - 1))]
                p1 = s_p[min(j + 1, pt.u32(THREADS - 1))]
                p2 = s_p[min(j + 2, pt.u32(THREADS - 1))]
                p3 = s_p[min(j + 3, pt.u32(THREADS - 1))]
                a0 += (p0 * w0 + p1 * w1) + (p2 * w2 + p3 * w3)
                if Dv > THREADS:
                    a1 += (p0 * pt.f32(v[at + d1]) + p1 * pt.f32(v[at + Dv + d1])) \
                        + (p2 * pt.f32(v[at + 2 * Dv + d1]) + p3 * pt.f32(v[at + 3 * Dv + d1]))
            for j in range(quads, nk):
                pj = s_p[min(j, pt.u32(THREADS - 1))]
                at = vbase + (k0 + j) * Dv
                a0 += pj * pt.f32(v[at + d0])
                a1 += pj * pt.f32(v[at + d1])
            pt.workgroup_barrier()                  # s_p is rewritten by the next step
        part = row * splits + split
        if t < Dv:
            pacc[part * Dv + t] = a0
        if t + THREADS < Dv:
            pacc[part * Dv + t + THREADS] = a1
        if t == 0:
            pm[part] = m
            pl[part] = l

    return attention_decode_simt


def _make_combine(T, name):
    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_combine_simt(pm: pt.In[pt.f32], pl: pt.In[pt.f32], pacc: pt.In[pt.f32], o: pt.Out[T],
                               rows: pt.u32, Dv: pt.u32, splits: pt.u32, zero_empty: pt.u32):
        t = pt.local_index_x()
        row = pt.group_index_x()
        first = row * splits
        big = pt.f32(NEG_INF)
        for s in range(splits):
            big = max(big, pm[first + s])
        base = offset(big)
        total = pt.f32(0.0)
        d0 = min(t, Dv - 1)
        d1 = min(t + THREADS, Dv - 1)
        a0 = pt.f32(0.0)
        a1 = pt.f32(0.0)
        for s in range(splits):
            w = pt.exp(pm[first + s] - base)          # 0 for an empty split
            total += pl[first + s] * w
            at = (first + s) * Dv
            a0 += pacc[at + d0] * w
            a1 += pacc[at + d1] * w
        inv = normalizer(total, zero_empty)
        if t < Dv:
            o[row * Dv + t] = T(a0 * inv)
        if t + THREADS < Dv:
            o[row * Dv + t + THREADS] = T(a1 * inv)

    return attention_combine_simt


attention_decode_simt_f32 = _make_decode(pt.f32, "attention_decode_simt_f32")
attention_decode_simt_f16 = _make_decode(pt.f16, "attention_decode_simt_f16")
attention_decode_simt_bf16 = _make_decode(pt.bf16, "attention_decode_simt_bf16")
attention_combine_simt_f32 = _make_combine(pt.f32, "attention_combine_simt_f32")
attention_combine_simt_f16 = _make_combine(pt.f16, "attention_combine_simt_f16")
attention_combine_simt_bf16 = _make_combine(pt.bf16, "attention_combine_simt_bf16")


def reference(q, k, v, mask=None, left=UNBOUNDED, right=UNBOUNDED, scale=1.0, softcap=0.0):
    """Attention in float64 over [BH, L, D] arrays (GQA by head ratio); 0 for a query seeing no key."""
    rows, lq, d = q.shape
    ratio = rows // k.shape[0]
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    k64, v64 = np.repeat(k64, ratio, axis=0), np.repeat(v64, ratio, axis=0)
    s = q64 @ np.swapaxes(k64, -1, -2) * scale
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


# rows (B * Hq), kv rows, Lq, Lk, D, Dv, left, right, mask, softcap, splits
CASES = (
    (4, 2, 1, 300, 8, 6, UNBOUNDED, UNBOUNDED, False, 0.0, 3),
    (2, 1, 2, 40, 5, 5, 6, 0, True, 1.5, 2),
    (1, 1, 1, 20, 130, 130, UNBOUNDED, UNBOUNDED, False, 0.0, 4),    # dims past THREADS; an empty split
)


def _case(np_dtype, case, rng):
    rows, kv, lq, lk, d, dv, left, right, with_mask, cap, splits = case
    q = rng.standard_normal((rows, lq, d)).astype(np_dtype)
    k = rng.standard_normal((kv, lk, d)).astype(np_dtype)
    v = rng.standard_normal((kv, lk, dv)).astype(np_dtype)
    mask = (rng.standard_normal((lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
    scale = float(1 / np.sqrt(d))
    ref = reference(q, k, v, mask if with_mask else None, left, right, scale, cap)
    chunk = -(-lk // splits)
    scalars = (lq, lk, d, dv, rows, rows // kv, left, right, int(with_mask), 0, 0, lk if with_mask else 0,
               1 if with_mask else 0)
    return (q, k, v, mask), ref, scalars, (scale, cap, chunk, splits)


def _tolerance(np_dtype):
    eps = float(ml_dtypes.finfo(np_dtype).eps)
    return 4 * eps, 8 * eps + 1e-5


def _decode_examples(np_dtype):
    """The decode kernel's partials, merged on the host by the combine's formula, against the reference."""
    rng = np.random.default_rng(9)
    out = []
    rtol, atol = _tolerance(np.float32)
    for case in CASES:
        (q, k, v, mask), ref, scalars, extra = _case(np_dtype, case, rng)
        rows, lq, dv, splits = case[0] * case[2], case[2], case[5], case[10]
        pm, pl, pacc = (np.zeros(n, np.float32) for n in (rows * splits, rows * splits, rows * splits * dv))
        out.append(Example(args=(q.reshape(-1), k.reshape(-1), v.reshape(-1), mask.reshape(-1), pm, pl, pacc)
                           + scalars + extra, threads=(rows * THREADS, splits, 1), rtol=rtol, atol=atol))
        del lq
    return out


def _combine_examples(np_dtype):
    """Decode then combine, the combine's output against the reference."""
    rng = np.random.default_rng(10)
    out = []
    rtol, atol = _tolerance(np_dtype)
    for case in CASES:
        (q, k, v, mask), ref, scalars, extra = _case(np_dtype, case, rng)
        rows, dv, splits = case[0] * case[2], case[5], case[10]
        pm, pl, pacc = (np.zeros(n, np.float32) for n in (rows * splits, rows * splits, rows * splits * dv))
        decode = globals()[f"attention_decode_simt_{_SUFFIX[np.dtype(np_dtype).name]}"]
        decode.emulate(q.reshape(-1), k.reshape(-1), v.reshape(-1), mask.reshape(-1), pm, pl, pacc, *scalars, *extra,
                       threads=(rows * THREADS, splits, 1))
        out.append(Example(args=(pm, pl, pacc, np.zeros(rows * dv, np_dtype), rows, dv, splits, 1),
                           threads=(rows * THREADS, 1, 1), expected={"o": ref.astype(np_dtype).reshape(-1)},
                           rtol=rtol, atol=atol))
    return out


_SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def example_attention_decode_simt_f32(rng):
    return _decode_examples(np.float32)


def example_attention_decode_simt_f16(rng):
    return _decode_examples(np.float16)


def example_attention_decode_simt_bf16(rng):
    return _decode_examples(ml_dtypes.bfloat16)


def example_attention_combine_simt_f32(rng):
    return _combine_examples(np.float32)


def example_attention_combine_simt_f16(rng):
    return _combine_examples(np.float16)


def example_attention_combine_simt_bf16(rng):
    return _combine_examples(ml_dtypes.bfloat16)
