"""Writes kernels/attention/flash_tc.py: flash_tc.py's fragment code for head dims 64 and 128, unrolled.

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out. Edit it, not the kernel file, then run
`python tools/unroll/flash_tc.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes)."""
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/attention/flash_tc.py"
HEAD = '''"""Flash attention prefill on tensor cores (PTX sm_80 and newer), for 16-bit q, k, v with head dims 64 and 128.

Same operands, scalars and semantics as attention_prefill_<T> in flash_gpu.py (masks, windows, softcap,
GQA, zero_empty), except that D == Dv == the kernel's head dim and q, k, v arrive as 32-bit word views of
the 16-bit arrays (attention_tc_<T>_d<D>; poot/jit/codegen/attention.py picks it where it applies).

A workgroup of 128 threads (4 warps) owns BQ = 64 queries of one (batch, head) row, 16 per warp. The
keys go BKV = 32 at a time through a two-slot ring in shared memory, filled by 16-byte `pt.copy_async`
(the next tile's K and V are in flight while the warps work on this one; rows past the visible keys are
zero-filled and their scores masked). Per tile, each warp computes its 16 x 32 scores S = Q K^T with
m16n8k16 multiply-accumulates (Q's fragments stay in registers for the whole row; K's come by
`pt.ldmatrix_x4`), applies scale, softcap, mask and visibility (only the scale on a tile every query of
the workgroup sees whole, without mask or softcap), updates the running row maximum and sum
(the online softmax; a row is held by the 4 lanes of a quad, which exchange maxima by `pt.shuffle_xor`),
rounds P = exp(S - m) to the input dtype and accumulates O += P V with V's fragments by
`pt.ldmatrix_x4_trans`. P never leaves registers: the accumulator layout of S is the A-fragment layout of
P V (the usual FlashAttention-2 arrangement). No L x L buffer, and no f32 accumulator in shared memory.

Shared memory: Q as [64][D] plus two slots of K and V as [32][D], rows of D / 8 16-byte chunks stored
XOR-swizzled (chunk c of row r at c ^ (r & 7)) so that each 8-lane phase of an ldmatrix reads 8
distinct bank groups: 48 KiB at D = 128, 24 KiB at D = 64.
Launch: threads = (ceil(Lq / 64) * 128, B * Hq, 1), workgroup (128, 1, 1).

This file is written by tools/unroll/flash_tc.py (the fragment code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

BQ = 64           # queries per workgroup (16 per warp)
BKV = 32          # keys per tile
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

def make(HD):
    CH = HD // 8          # 16-byte chunks per row
    KC = HD // 16         # k16 chunks of the head dim
    NT = HD // 8          # n8 tiles of the output
    RW = HD // 2          # words per row
    L = []
    a = L.append
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
    a("    @pt.device_fn")
    a("    def store2(o, row, col, v0, v1, inv):")
    a("        o[row + col] = T(v0 * inv)")
    a("        o[row + col + 1] = T(v1 * inv)")
    a("")
    a("    @pt.device_fn")
    a("    def issue_kv(sk, sv, k32, v32, slot, k0, hi_, local, kbase):")
    a('        """Start the copies of keys k0 .. k0 + 31 (K and V) into ring slot `slot` (zeros past hi_)."""')
    a(f"        for j in range({32 * CH // 128}):")           # a key tile's chunks over 128 threads
    a("            at = local + 128 * pt.u32(j)")
    a(f"            r = at // {CH}")
    a(f"            c = at % {CH}")
    a("            ok = k0 + r < hi_")
    a(f"            src = (kbase + (k0 + r) * {HD} + c * 8) // 2 * pt.u32(ok)")
    a(f"            dst = slot * {32 * RW} + r * {RW} + (c ^ (r & 7)) * 4")
    a("            pt.copy_async(sk, dst, k32, src, ok)")
    a("            pt.copy_async(sv, dst, v32, src, ok)")
    a("")
    a(f"    @pt.kernel(workgroup=(128, 1, 1), name=name, checks=False)")
    a("    def attention_tc(q32: pt.In[pt.u32], k32: pt.In[pt.u32], v32: pt.In[pt.u32], mask: pt.In[pt.f32], o: pt.Out[T],")
    a("                     Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32, Hq: pt.u32, ratio: pt.u32,")
    a("                     left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32, msh: pt.u32, msq: pt.u32,")
    a("                     msk: pt.u32, zero_empty: pt.u32, scale: pt.f32, softcap: pt.f32):")
    a(f"        sq = pt.shared(pt.u32, {64 * RW})")
    a(f"        sk = pt.shared(pt.u32, {2 * 32 * RW})")
    a(f"        sv = pt.shared(pt.u32, {2 * 32 * RW})")
    a("        local = pt.local_index_x()")
    a("        lane = local % 32")
    a("        warp = local // 32")
    a("        g = lane // 4")
    a("        t = lane % 4")
    a("        qm = lane // 8")
    a("        r8 = lane % 8")
    a("        bh = pt.group_index_y()")
    a("        q0 = pt.group_index_x() * BQ")
    a("        nq = min(pt.u32(BQ), Lq - q0)")
    a("        b = bh // Hq")
    a("        h = bh % Hq")
    a("        kvh = b * (Hq // ratio) + h // ratio")
    a(f"        kbase = kvh * Lk * {HD}")
    a("        lo_ = key_lo(q0, left)")
    a("        hi_ = key_hi(q0 + nq - 1, right, Lk)")
    a("        # the query tile, then the first key tile")
    a(f"        for j in range({64 * CH // 128}):")           # the query tile's chunks over 128 threads
    a("            at = local + 128 * pt.u32(j)")
    a(f"            r = at // {CH}")
    a(f"            c = at % {CH}")
    a("            ok = q0 + r < Lq")
    a(f"            src = ((bh * Lq + q0 + r) * {HD} + c * 8) // 2 * pt.u32(ok)")
    a(f"            pt.copy_async(sq, r * {RW} + (c ^ (r & 7)) * 4, q32, src, ok)")
    a("        issue_kv(sk, sv, k32, v32, 0, lo_, hi_, local, kbase)")
    a("        pt.copy_async_commit()")
    a("        pt.copy_async_wait(0)")
    a("        pt.workgroup_barrier()")
    a("        qrow = warp * 16 + r8 + 8 * (qm % 2)")
    for c in range(KC):
        a(f"        x0, x1, x2, x3 = pt.ldmatrix_x4(sq, qrow * {RW} + ((2 * {c} + qm // 2) ^ (qrow & 7)) * 4)")
        for w in range(4):
            a(f"        fq{c}_{2*w} = lo(x{w})")
            a(f"        fq{c}_{2*w+1} = hi(x{w})")
    a("        zero = pt.f32(0.0)")
    for j in range(NT):
        a(f"        o{j}_0, o{j}_1, o{j}_2, o{j}_3 = zero, zero, zero, zero")
    a("        m0 = pt.f32(NEG_INF)")
    a("        m1 = pt.f32(NEG_INF)")
    a("        l0 = pt.f32(0.0)")
    a("        l1 = pt.f32(0.0)")
    a("        qa = q0 + warp * 16 + g")
    a("        qb = qa + 8")
    a("        qac = min(qa, Lq - 1)")
    a("        qbc = min(qb, Lq - 1)")
    a("        ma = b * msb + h * msh + qac * msq")
    a("        mb = b * msb + h * msh + qbc * msq")
    a("        ntiles = pt.u32(0)")
    a("        if hi_ > lo_:                 # a block whose window ends before it starts sees no key")
    a("            ntiles = (hi_ - lo_ + BKV - 1) // BKV")
    a("        for kt in range(ntiles):")
    a("            if kt > 0:")
    a("                pt.copy_async_wait(0)")
    a("                pt.workgroup_barrier()")
    a("            k0 = lo_ + kt * BKV")
    a("            issue_kv(sk, sv, k32, v32, (kt + 1) % 2, k0 + BKV, hi_, local, kbase)")
    a("            pt.copy_async_commit()")
    a(f"            slot = (kt % 2) * {32 * RW}")
    # S = Q K^T : 4 n8 tiles (keys), via pairs p (keys 16p..16p+15)
    for j in range(4):
        a(f"            s{j}_0, s{j}_1, s{j}_2, s{j}_3 = zero, zero, zero, zero")
    for p in range(2):
        a(f"            kr = {16 * p} + r8 + 8 * (qm // 2)")
        for c in range(KC):
            a(f"            y0, y1, y2, y3 = pt.ldmatrix_x4(sk, slot + kr * {RW} + ((2 * {c} + qm % 2) ^ (kr & 7)) * 4)")
            for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                fa = ", ".join(f"fq{c}_{e}" for e in range(8))
                a(f"            s{tile}_0, s{tile}_1, s{tile}_2, s{tile}_3 = pt.mma_m16n8k16({fa}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), s{tile}_0, s{tile}_1, s{tile}_2, s{tile}_3)")
    # scores -> logits: a tile inside every query's band, without mask or softcap, needs the scale only
    a("            whole = (has_mask == 0 and softcap <= 0.0 and k0 + BKV <= hi_ and pt.i32(k0) - pt.i32(q0 + BQ - 1) >= -left")
    a("                     and pt.i32(k0 + BKV - 1) - pt.i32(q0) <= right)")
    a("            if whole:")
    for j in range(4):
        for e in range(4):
            a(f"                s{j}_{e} = s{j}_{e} * scale")
    a("            else:")
    for j in range(4):
        for e in range(4):
            row = "qa" if e < 2 else "qb"
            mrow = "ma" if e < 2 else "mb"
            a(f"                kj = k0 + {8 * j} + 2 * t + {e % 2}")
            a(f"                s{j}_{e} = score(s{j}_{e} * scale, {row}, kj, hi_, left, right, mask, has_mask, {mrow} + kj * msk, softcap)")
    a("            mx0 = quad_max(max(max(max(s0_0, s0_1), max(s1_0, s1_1)), max(max(s2_0, s2_1), max(s3_0, s3_1))))")
    a("            mx1 = quad_max(max(max(max(s0_2, s0_3), max(s1_2, s1_3)), max(max(s2_2, s2_3), max(s3_2, s3_3))))")
    a("            mx0 = max(mx0, m0)")
    a("            mx1 = max(mx1, m1)")
    a("            base0 = offset(mx0) * LOG2E")
    a("            base1 = offset(mx1) * LOG2E")
    a("            alpha0 = pt.fast_exp2(m0 * LOG2E - base0)")
    a("            alpha1 = pt.fast_exp2(m1 * LOG2E - base1)")
    a("            m0 = mx0")
    a("            m1 = mx1")
    for j in range(4):
        for e in range(4):
            a(f"            s{j}_{e} = pt.fast_exp2(s{j}_{e} * LOG2E - base{e // 2})")
    a("            l0 = l0 * alpha0 + ((s0_0 + s0_1) + (s1_0 + s1_1)) + ((s2_0 + s2_1) + (s3_0 + s3_1))")
    a("            l1 = l1 * alpha1 + ((s0_2 + s0_3) + (s1_2 + s1_3)) + ((s2_2 + s2_3) + (s3_2 + s3_3))")
    for j in range(NT):
        a(f"            o{j}_0 = o{j}_0 * alpha0")
        a(f"            o{j}_1 = o{j}_1 * alpha0")
        a(f"            o{j}_2 = o{j}_2 * alpha1")
        a(f"            o{j}_3 = o{j}_3 * alpha1")
    # O += P V: k16 chunks kc (keys 16kc..), P from s tiles 2kc, 2kc+1
    for kc in range(2):
        A = (f"T(s{2*kc}_0), T(s{2*kc}_1), T(s{2*kc}_2), T(s{2*kc}_3), "
             f"T(s{2*kc+1}_0), T(s{2*kc+1}_1), T(s{2*kc+1}_2), T(s{2*kc+1}_3)")
        a(f"            vr = {16 * kc} + r8 + 8 * (qm % 2)")
        for p in range(NT // 2):
            a(f"            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vr * {RW} + ((2 * {p} + qm // 2) ^ (vr & 7)) * 4)")
            for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                a(f"            o{tile}_0, o{tile}_1, o{tile}_2, o{tile}_3 = pt.mma_m16n8k16({A}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), o{tile}_0, o{tile}_1, o{tile}_2, o{tile}_3)")
    a("        pt.copy_async_wait(0)")
    a("        inv0 = normalizer(quad_sum(l0), zero_empty)")
    a("        inv1 = normalizer(quad_sum(l1), zero_empty)")
    a(f"        ra = (bh * Lq + qa) * {HD}")
    a(f"        rb = (bh * Lq + qb) * {HD}")
    a("        if qa < Lq:")
    for j in range(NT):
        a(f"            store2(o, ra, {8 * j} + 2 * t, o{j}_0, o{j}_1, inv0)")
    a("        if qb < Lq:")
    for j in range(NT):
        a(f"            store2(o, rb, {8 * j} + 2 * t, o{j}_2, o{j}_3, inv1)")
    a("")
    a("    return attention_tc")
    return "\n".join(L) + "\n"


TAIL = '''

attention_tc_bf16_d64 = _make_d64(pt.bf16, "attention_tc_bf16_d64")
attention_tc_f16_d64 = _make_d64(pt.f16, "attention_tc_f16_d64")
attention_tc_bf16_d128 = _make_d128(pt.bf16, "attention_tc_bf16_d128")
attention_tc_f16_d128 = _make_d128(pt.f16, "attention_tc_f16_d128")
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


def example_attention_tc_bf16_d64(rng):
    return _examples(ml_dtypes.bfloat16, 64)


def example_attention_tc_f16_d64(rng):
    return _examples(np.float16, 64)


def example_attention_tc_bf16_d128(rng):
    return _examples(ml_dtypes.bfloat16, 128)


def example_attention_tc_f16_d128(rng):
    return _examples(np.float16, 128)
'''



def source() -> str:
    return HEAD + make(64) + make(128) + TAIL


if __name__ == "__main__":
    TARGET.write_text(source())
