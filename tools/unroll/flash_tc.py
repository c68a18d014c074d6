"""Writes kernels/attention/flash_tc.py: flash_tc.py's fragment code for head dims 64 and 128, unrolled.

The kernel language has no register arrays, so a warp's accumulator tiles and fragments are named
locals, one statement per tile; this script spells them out. Edit it, not the kernel file, then run
`python tools/unroll/flash_tc.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes)."""
import argparse
from dataclasses import dataclass
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/attention/flash_tc.py"
@dataclass(frozen=True)
class Tiles:
    mq: int = 1           # m16 query tiles per warp
    bkv: int = 64         # keys per tile (a multiple of 16)
    qregs: int = 1        # 1: Q's fragments stay in registers for the whole row; 0: read again per key tile

    @property
    def bq(self) -> int:
        return 64 * self.mq

    def shared_kib(self, hd: int) -> float:
        return (self.bq + 4 * self.bkv) * hd * 2 / 1024

    @property
    def label(self) -> str:
        return f"q{self.bq}_kv{self.bkv}" + ("" if self.qregs else "_qsmem")


DEFAULT = Tiles()


def head(t: Tiles) -> str:
    bq, kib = t.bq, t.shared_kib
    pad = " " * (14 - len(str(bq)))
    return f'''"""Flash attention prefill on tensor cores (PTX sm_80 and newer), for 16-bit q, k, v with head dims 64 and 128.

Same operands, scalars and semantics as attention_prefill_<T> in flash_gpu.py (masks, windows, softcap,
GQA, zero_empty), except that D == Dv == the kernel's head dim and q, k, v arrive as 32-bit word views of
the 16-bit arrays (attention_tc_<T>_d<D>; poot/jit/codegen/attention.py picks it where it applies).

A workgroup of 128 threads (4 warps) owns BQ = {bq} queries of one (batch, head) row, {16 * t.mq} per warp. The
keys go BKV = {t.bkv} at a time through a two-slot ring in shared memory, filled by 16-byte `pt.copy_async`
(the next tile's K and V are in flight while the warps work on this one; rows past the visible keys are
zero-filled and their scores masked). Per tile, each warp computes its {16 * t.mq} x {t.bkv} scores S = Q K^T with
m16n8k16 multiply-accumulates (Q's fragments stay in registers for the whole row; K's come by
`pt.ldmatrix_x4`), applies scale, softcap, mask and visibility (only the scale on a tile every query of
the workgroup sees whole, without mask or softcap), updates the running row maximum and sum
(the online softmax; a row is held by the 4 lanes of a quad, which exchange maxima by `pt.shuffle_xor`),
rounds P = exp(S - m) to the input dtype and accumulates O += P V with V's fragments by
`pt.ldmatrix_x4_trans`. P never leaves registers: the accumulator layout of S is the A-fragment layout of
P V (the usual FlashAttention-2 arrangement). No L x L buffer, and no f32 accumulator in shared memory.

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
    a(f'        """Start the copies of keys k0 .. k0 + {BKV - 1} (K and V) into ring slot `slot` (zeros past hi_)."""')
    a(f"        for j in range({BKV * CH // 128}):")           # a key tile's chunks over 128 threads
    a("            at = local + 128 * pt.u32(j)")
    a(f"            r = at // {CH}")
    a(f"            c = at % {CH}")
    a("            ok = k0 + r < hi_")
    a(f"            src = (kbase + (k0 + r) * {HD} + c * 8) // 2 * pt.u32(ok)")
    a(f"            dst = slot * {BKV * RW} + r * {RW} + (c ^ (r & 7)) * 4")
    a("            pt.copy_async(sk, dst, k32, src, ok)")
    a("            pt.copy_async(sv, dst, v32, src, ok)")
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
    a(f"            pt.copy_async(sq, r * {RW} + (c ^ (r & 7)) * 4, q32, src, ok)")
    a("        issue_kv(sk, sv, k32, v32, 0, lo_, hi_, local, kbase)")
    a("        pt.copy_async_commit()")
    a("        pt.copy_async_wait(0)")
    a("        pt.workgroup_barrier()")
    def q_fragment(ind, m, c, name):
        a(f"{ind}qrow = warp * {16 * MQ} + {16 * m} + r8 + 8 * (qm % 2)")
        a(f"{ind}x0, x1, x2, x3 = pt.ldmatrix_x4(sq, qrow * {RW} + ((2 * {c} + qm // 2) ^ (qrow & 7)) * 4)")
        for w in range(4):
            a(f"{ind}{name}_{2*w} = lo(x{w})")
            a(f"{ind}{name}_{2*w+1} = hi(x{w})")

    for m in range(MQ if t.qregs else 0):
        for c in range(KC):
            q_fragment("        ", m, c, f"fq{m}_{c}")
    a("        zero = pt.f32(0.0)")
    for m in range(MQ):
        for j in range(NT):
            a(f"        o{m}_{j}_0, o{m}_{j}_1, o{m}_{j}_2, o{m}_{j}_3 = zero, zero, zero, zero")
    for m in range(MQ):
        a(f"        m{m}_0 = pt.f32(NEG_INF)")
        a(f"        m{m}_1 = pt.f32(NEG_INF)")
        a(f"        l{m}_0 = pt.f32(0.0)")
        a(f"        l{m}_1 = pt.f32(0.0)")
        a(f"        qa{m} = q0 + warp * {16 * MQ} + {16 * m} + g")
        a(f"        qb{m} = qa{m} + 8")
        a(f"        ma{m} = b * msb + h * msh + min(qa{m}, Lq - 1) * msq")
        a(f"        mb{m} = b * msb + h * msh + min(qb{m}, Lq - 1) * msq")
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
    a(f"            slot = (kt % 2) * {BKV * RW}")
    # S = Q K^T: SJ n8 tiles (keys), by pairs p (keys 16p .. 16p + 15); one K fragment serves every m-tile
    for m in range(MQ):
        for j in range(SJ):
            a(f"            s{m}_{j}_0, s{m}_{j}_1, s{m}_{j}_2, s{m}_{j}_3 = zero, zero, zero, zero")
    for c in range(KC):
        for m in range(MQ if not t.qregs else 0):
            q_fragment("            ", m, c, f"fq{m}_{c}")
        for p in range(SJ // 2):
            a(f"            kr = {16 * p} + r8 + 8 * (qm // 2)")
            a(f"            y0, y1, y2, y3 = pt.ldmatrix_x4(sk, slot + kr * {RW} + ((2 * {c} + qm % 2) ^ (kr & 7)) * 4)")
            for m in range(MQ):
                for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                    fa = ", ".join(f"fq{m}_{c}_{e}" for e in range(8))
                    sv_ = ", ".join(f"s{m}_{tile}_{e}" for e in range(4))
                    a(f"            {sv_} = pt.mma_m16n8k16({fa}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), {sv_})")
    # scores -> logits: a tile inside every query's band, without mask or softcap, needs the scale only
    a("            whole = (has_mask == 0 and softcap <= 0.0 and k0 + BKV <= hi_ and pt.i32(k0) - pt.i32(q0 + BQ - 1) >= -left")
    a("                     and pt.i32(k0 + BKV - 1) - pt.i32(q0) <= right)")
    a("            if whole:")
    for m in range(MQ):
        for j in range(SJ):
            for e in range(4):
                a(f"                s{m}_{j}_{e} = s{m}_{j}_{e} * scale")
    a("            else:")
    for m in range(MQ):
        for j in range(SJ):
            for e in range(4):
                row = f"qa{m}" if e < 2 else f"qb{m}"
                mrow = f"ma{m}" if e < 2 else f"mb{m}"
                a(f"                kj = k0 + {8 * j} + 2 * t + {e % 2}")
                a(f"                s{m}_{j}_{e} = score(s{m}_{j}_{e} * scale, {row}, kj, hi_, left, right, mask, has_mask, {mrow} + kj * msk, softcap)")

    def tree(op, xs):
        while len(xs) > 1:
            xs = [op(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
        return xs[0]

    for m in range(MQ):
        for half, (e0, e1) in enumerate(((0, 1), (2, 3))):
            mx = tree(lambda x, y: f"max({x}, {y})", [f"s{m}_{j}_{e}" for j in range(SJ) for e in (e0, e1)])
            a(f"            mx{half} = max(quad_max({mx}), m{m}_{half})")
            a(f"            base{m}_{half} = offset(mx{half}) * LOG2E")
            a(f"            alpha{half} = pt.fast_exp2(m{m}_{half} * LOG2E - base{m}_{half})")
            a(f"            m{m}_{half} = mx{half}")
        for j in range(SJ):
            for e in range(4):
                a(f"            s{m}_{j}_{e} = pt.fast_exp2(s{m}_{j}_{e} * LOG2E - base{m}_{e // 2})")
        for half, (e0, e1) in enumerate(((0, 1), (2, 3))):
            total = tree(lambda x, y: f"({x} + {y})", [f"s{m}_{j}_{e}" for j in range(SJ) for e in (e0, e1)])
            a(f"            l{m}_{half} = l{m}_{half} * alpha{half} + {total}")
        for j in range(NT):
            a(f"            o{m}_{j}_0 = o{m}_{j}_0 * alpha0")
            a(f"            o{m}_{j}_1 = o{m}_{j}_1 * alpha0")
            a(f"            o{m}_{j}_2 = o{m}_{j}_2 * alpha1")
            a(f"            o{m}_{j}_3 = o{m}_{j}_3 * alpha1")
    # O += P V: k16 chunks kc (keys 16kc ..), P of m-tile m from its s tiles 2kc, 2kc + 1; one V fragment
    # serves every m-tile
    for kc in range(BKV // 16):
        a(f"            vr = {16 * kc} + r8 + 8 * (qm % 2)")
        for p in range(NT // 2):
            a(f"            y0, y1, y2, y3 = pt.ldmatrix_x4_trans(sv, slot + vr * {RW} + ((2 * {p} + qm // 2) ^ (vr & 7)) * 4)")
            for m in range(MQ):
                A = (f"T(s{m}_{2*kc}_0), T(s{m}_{2*kc}_1), T(s{m}_{2*kc}_2), T(s{m}_{2*kc}_3), "
                     f"T(s{m}_{2*kc+1}_0), T(s{m}_{2*kc+1}_1), T(s{m}_{2*kc+1}_2), T(s{m}_{2*kc+1}_3)")
                for (tile, w0) in ((2 * p, 0), (2 * p + 1, 2)):
                    ov = ", ".join(f"o{m}_{tile}_{e}" for e in range(4))
                    a(f"            {ov} = pt.mma_m16n8k16({A}, lo(y{w0}), hi(y{w0}), lo(y{w0+1}), hi(y{w0+1}), {ov})")
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


def example_attention_tc_bf16_d64(rng):
    return _examples(ml_dtypes.bfloat16, 64)


def example_attention_tc_f16_d64(rng):
    return _examples(np.float16, 64)


def example_attention_tc_bf16_d128(rng):
    return _examples(ml_dtypes.bfloat16, 128)


def example_attention_tc_f16_d128(rng):
    return _examples(np.float16, 128)
'''



def source(tiles: Tiles = DEFAULT) -> str:
    return head(tiles) + make(64, tiles) + make(128, tiles) + TAIL


def outputs() -> dict:
    """The committed kernel file and its text."""
    return {TARGET: source()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", help="mq,bkv[,qregs]: m16 query tiles per warp, keys per tile, Q kept in registers "
                    "(default: the committed shape)")
    ap.add_argument("--out", type=Path, help="write flash_tc_<shape>.py into this folder instead")
    args = ap.parse_args(argv)
    tiles = Tiles(*map(int, args.tiles.split(","))) if args.tiles else DEFAULT
    target = TARGET if args.out is None else args.out / f"flash_tc_{tiles.label}.py"
    target.write_text(source(tiles))
    print(target)


if __name__ == "__main__":
    main()
