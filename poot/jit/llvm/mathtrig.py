"""mathlib's sin, cos and tan (see mathlib.py's docstring for the method), and the Payne-Hanek
argument reduction for huge arguments (|x| >= 2**50, up to the largest double), in LLVM IR through
MathBuilder: branch-free, table-free (the table is a select chain over constants), double only (float
arguments reduce in double too). The huge path costs ~700 operations, so `trig` computes it behind a
branch taken only when an argument needs it (`branch_rare`).

mathlib's Cody-Waite reduction subtracts n*pi/2 with pi/2 as three doubles: exact while n*pi/2's
partial products are, i.e. |x| < 2**50. Beyond it, x * 2/pi mod 4 needs 2/pi to about 53 + 64 +
(exponent of x) bits. Method (all steps exact unless said):
- |x| = M * 2**(24b - 2), b = (exponent(x) - 50) // 24 in [0, 40]: M is an integer below 2**76.
- F_b = (2**(24b - 2) * 2/pi) mod 4, precomputed, as 8 chunks C_k of 26 bits each (fixed point:
  C_k holds the bits of weight 2**(1-26k) .. 2**(-24-26k)), so |x| * 2/pi = M * F_b (mod 4: M is
  an integer, so the dropped multiple of 4 stays one) up to a truncation below 2**-130.
- M = Mh + Ml (Mh: M's top 26 bits, by masking; Ml >= 0 the rest); every Mh*C_k and Ml*C_k is an
  exact double (<= 53 bits) and >= 0, so its value mod 4 (t - 4*floor(t/4)) is exact too.
- The 15 reduced products are summed into a triple word (hi mod 4, mid, lo) with two two_sums
  each: error below 2**-150.
- n = rint(hi); the fraction (hi - n) + mid + lo in double-double, times pi/2 in double-double:
  r_hi + r_lo with |r| <= ~pi/4 and relative error ~2**-100 even for the worst-case doubles
  (|r| ~ 2**-61, x = 6381956970095103 * 2**797).
The caller evaluates its polynomials at r_hi with r_lo as a first-order correction, the quadrant n
mod 4, and the sign of x (sin, tan odd; cos even).
"""
from __future__ import annotations

import math

from poot.jit.llvm import mathcoeffs as C
from poot.jit.llvm.mathbuild import MathBuilder

_NAN = float("nan")

CHUNK_BITS = 26
CHUNKS = 8
BUCKET_BITS = 24
BUCKETS = 41                    # b = (1023 - 50) // 24 + 1
HUGE_MIN = 2.0 ** 50            # where the reduction takes over from mathlib's Cody-Waite
_FRAC_BITS = 24 + CHUNK_BITS * (CHUNKS - 1)         # F_b's fixed-point fraction bits (206)
PIO2_HI, PIO2_LO = 1.5707963267948966, 6.123233995736766e-17


def _pi_fixed(bits: int) -> int:
    """floor(pi * 2**bits), by Machin's formula in integers (guard bits dropped at the end)."""
    guard = 32
    one = 1 << (bits + guard)

    def atan_inv(k: int) -> int:
        total, term, n, sign = 0, one // k, 1, 1
        k2 = k * k
        while term:
            total += sign * (term // n)
            term //= k2
            n += 2
            sign = -sign
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> guard


def _chunk_table() -> list[list[float]]:
    """table[k][b]: chunk k of F_b = (2**(24b - 2) * 2/pi) mod 4, as an exact double."""
    top = BUCKET_BITS * (BUCKETS - 1) + _FRAC_BITS + 64          # 64 guard bits below the last used
    pi = _pi_fixed(top + 16)
    two_over_pi = (1 << (2 * top + 17)) // pi        # ~ 2/pi * 2**top
    table = [[0.0] * BUCKETS for _ in range(CHUNKS)]
    for b in range(BUCKETS):
        # floor(2**(24b - 2 + FRAC) * 2/pi) mod 2**(FRAC + 2): F_b in units of 2**-FRAC
        shift = top - (BUCKET_BITS * b - 2 + _FRAC_BITS)
        w = (two_over_pi >> shift) & ((1 << (_FRAC_BITS + 2)) - 1)
        for k in range(CHUNKS):
            low = _FRAC_BITS - 24 - CHUNK_BITS * k          # the chunk's lowest bit, in those units
            bits = (w >> low) & ((1 << CHUNK_BITS) - 1) if k else w >> low
            table[k][b] = float(bits) * 2.0 ** (low - _FRAC_BITS)
    return table


TABLE = _chunk_table()


def _mod4(b: MathBuilder, t):
    """t mod 4 for t >= 0, exact."""
    return b.sub(t, b.mul(b.k(4.0), b.floor(b.mul(t, b.k(0.25)))))


def reduce_huge(b: MathBuilder, x):
    """(r_hi, r_lo, quadrant as a double in {0, 1, 2, 3}) with |x| = (quadrant + 4j) * pi/2 + r_hi +
    r_lo; `b` a double builder. Meaningful for finite |x| >= HUGE_MIN (other lanes get garbage,
    the caller selects them away)."""
    assert b.dbl
    ax = b.fabs(x)
    biased = b.i("and", b.i("lshr", b.bits_of(ax), 52), 0x7FF)
    e = b.i("sub", biased, 1023 + 50)
    e = b.sel(b.o(f"icmp slt {b.it} {e}, {b.splat(0, 'i64')}"), "0", e, ty="i64")
    e = b.sel(b.o(f"icmp sgt {b.it} {e}, {b.splat(BUCKET_BITS * BUCKETS - 1, 'i64')}"),
              str(BUCKET_BITS * BUCKETS - 1), e, ty="i64")
    bucket = b.i("udiv", e, BUCKET_BITS)
    scale = b.from_bits(b.i("shl", b.i("sub", b.splat(1025, "i64"), b.i("mul", bucket, BUCKET_BITS)), 52))
    m = b.mul(ax, scale)                                # |x| * 2**(2 - 24b): exact, an integer
    mh = b.from_bits(b.i("and", b.bits_of(m), str(~((1 << 27) - 1) & ((1 << 64) - 1))))
    ml = b.sub(m, mh)                                                     # exact, >= 0
    chunks = [b.k(TABLE[k][0]) for k in range(CHUNKS)]
    for j in range(1, BUCKETS):
        hit = b.o(f"icmp eq {b.it} {bucket}, {b.splat(j, 'i64')}")
        chunks = [b.sel(hit, b.k(TABLE[k][j]), chunks[k]) for k in range(CHUNKS)]
    terms = [b.mul(mh, chunks[0])]
    for k in range(1, CHUNKS):
        terms += [b.mul(ml, chunks[k - 1]), b.mul(mh, chunks[k])]
    hi, mid, lo = b.k(0.0), b.k(0.0), b.k(0.0)
    for t in terms:
        s, err = b.two_sum(hi, _mod4(b, t))
        hi = _mod4(b, s)
        mid, err2 = b.two_sum(mid, err)
        lo = b.add(lo, err2)
    n = b.rint(hi)
    u, ue = b.two_sum(b.sub(hi, n), mid)
    ul = b.add(ue, lo)
    r_hi = b.mul(u, b.k(PIO2_HI))
    r_lo = b.add(b.fma(u, b.k(PIO2_HI), b.neg(r_hi)), b.fma(u, b.k(PIO2_LO), b.mul(ul, b.k(PIO2_HI))))
    r, rr = b.two_sum(r_hi, r_lo)
    q = b.sub(n, b.mul(b.k(4.0), b.floor(b.mul(n, b.k(0.25)))))
    return r, rr, q


# --- sin, cos, tan ----------------------------------------------------------------------------------
_SIN_P = [(-1) ** k / math.factorial(2 * k + 1) for k in range(1, 9)]
_COS_P = [(-1) ** k / math.factorial(2 * k) for k in range(2, 10)]


def _huge(b, x):
    """For lanes with |x| > TRIG_LIMIT: (r, r_lo, quadrant) of x by mathtrig's Payne-Hanek reduction
    (of |x|, then negated for x < 0: -(q pi/2 + r) = (4 - q) pi/2 - r, mod 2 pi); and the lane mask."""
    r, rr, q = reduce_huge(b, x)
    neg = b.signbit(x)
    q = b.sel(neg, b.sub(b.k(4.0), q), q)
    q = b.sel(b.cmp("oeq", q, b.k(4.0)), b.k(0.0), q)
    big = b.cmp("ogt", b.fabs(x), b.k(TRIG_LIMIT))
    return b.sel(neg, b.neg(r), r), b.sel(neg, b.neg(rr), rr), q, big


def _sincos_core(b, x, huge=True):
    """(sin r, cos r, quadrant as a float in {0, 1, 2, 3}) with x = r + quadrant*pi/2; `huge`: also
    right for |x| > TRIG_LIMIT (the Payne-Hanek lanes; without it those are garbage)."""
    n = b.rint(b.mul(x, b.k(0.6366197723675814)))
    nn = b.neg(n)
    r = b.fma(nn, b.k(C.PIO2[0]), x)
    r = b.fma(nn, b.k(C.PIO2[1]), r)
    r = b.fma(nn, b.k(C.PIO2[2]), r)
    q = b.sub(n, b.mul(b.k(4.0), b.floor(b.mul(n, b.k(0.25)))))   # n mod 4 in float: exact, any n
    lo = b.k(0.0)
    if huge:
        hr, hlo, hq, big = _huge(b, x)
        r, q, lo = b.sel(big, hr, r), b.sel(big, hq, q), b.sel(big, hlo, lo)
    z = b.mul(r, r)
    s = b.fma(b.mul(r, z), b.horner(z, _SIN_P), r)
    hz = b.mul(b.k(0.5), z)
    w = b.sub(b.k(1.0), hz)
    corr = b.sub(b.sub(b.k(1.0), w), hz)
    c = b.add(w, b.fma(b.mul(z, z), b.horner(z, _COS_P), corr))
    if huge:
        s, c = b.fma(lo, c, s), b.fma(b.neg(lo), s, c)      # sin, cos of r + lo (lo: 0 unless huge)
    return s, c, q


def _sincos_f32(b, x, huge=True):
    """float sin/cos: the reduction in double (Cody-Waite up to 2**50, mathtrig's beyond), r rounded to
    float with its rounding error kept as a first-order correction, then float polynomials (Taylor to
    r**9 / r**10: truncation < 2**-28 on |r| <= pi/4); about half the work of computing in double."""
    d = MathBuilder(b.m, "double", b.lanes)
    d.f = b.f
    xd = b.o(f"fpext {b.ty} {x} to {d.ty}")
    n = d.rint(d.mul(xd, d.k(0.6366197723675814)))
    nn = d.neg(n)
    r = d.fma(nn, d.k(C.PIO2[0]), xd)
    r = d.fma(nn, d.k(C.PIO2[1]), r)
    r = d.fma(nn, d.k(C.PIO2[2]), r)
    q = d.sub(n, d.mul(d.k(4.0), d.floor(d.mul(n, d.k(0.25)))))
    if huge:
        hr, hlo, hq, big = _huge(d, xd)
        r, q = d.sel(big, d.add(hr, hlo), r), d.sel(big, hq, q)
    q = b.o(f"fptrunc {d.ty} {q} to {b.ty}")
    rf = b.o(f"fptrunc {d.ty} {r} to {b.ty}")
    lo = b.o(f"fptrunc {d.ty} {d.sub(r, b.o(f'fpext {b.ty} {rf} to {d.ty}'))} to {b.ty}")  # r - rf
    z = b.mul(rf, rf)
    sn = b.add(rf, b.fma(b.mul(rf, z), b.horner(z, _SIN_P[:4]), lo))      # sin(rf + lo) ~ .. + lo
    cs = b.add(b.k(1.0), b.fma(z, b.horner(z, [-0.5] + _COS_P[:4]), b.mul(b.neg(lo), rf)))
    return sn, cs, q


def _quadrant(b, q, vals):
    out = vals[0]
    for j in (1, 2, 3):
        out = b.sel(b.cmp("oeq", q, b.k(float(j))), vals[j], out)
    return out


TRIG_LIMIT = HUGE_MIN     # |x| beyond this: mathtrig's reduction (Cody-Waite is no longer exact)


def _in_range(b, x, res):
    """res, with NaN for x = +-inf (the huge reduction gives NaN there too; said outright)."""
    return b.sel(b.isinf(x), b.k(_NAN), res)


def _sin_value(b, x, huge):
    s, c, q = _sincos_core(b, x, huge) if b.dbl else _sincos_f32(b, x, huge)
    return b.keep_zero(x, _quadrant(b, q, [s, c, b.neg(s), b.neg(c)]))


def _cos_value(b, x, huge):
    s, c, q = _sincos_core(b, x, huge) if b.dbl else _sincos_f32(b, x, huge)
    return _quadrant(b, q, [c, b.neg(s), b.neg(c), s])


def _tan_value(b, x, huge):
    s, c, q = _sincos_core(b, x, huge)
    odd = b.or_(b.cmp("oeq", q, b.k(1.0)), b.cmp("oeq", q, b.k(3.0)))
    return b.keep_zero(x, b.sel(odd, b.neg(b.div(c, s)), b.div(s, c)))


TRIG_VALUES = {"sin": _sin_value, "cos": _cos_value, "tan": _tan_value}


def branch_rare(b, fast, rare_lanes, slow_fn, name: str):
    """`fast`, with the lanes in `rare_lanes` (an i1 or a vector of them) from `slow_fn()`, which is
    computed in a block of its own, entered once when any lane needs it: a GPU thread or a CPU
    vector skips the expensive path unless it needs it (a select would always compute it)."""
    anyrare = rare_lanes
    if b.lanes:
        fn = b.m.intrinsic(f"llvm.vector.reduce.or.v{b.lanes}i1", "i1", b.i1)
        anyrare = b.o(f"call i1 {fn}({b.i1} {rare_lanes})")
    here = b.f.blocks[-1][0]
    b.f.cbr(anyrare, f"{name}.slow", f"{name}.done")
    b.f.start(f"{name}.slow")
    slow = slow_fn()
    if b.lanes:     # each lane as the scalar function computes it
        slow = b.sel(rare_lanes, slow, fast)
    there = b.f.blocks[-1][0]
    b.f.br(f"{name}.done")
    b.f.start(f"{name}.done")
    return b.o(f"phi {b.ty} [ {fast}, %{here} ], [ {slow}, %{there} ]")


def trig(b, x, op: str):
    """sin/cos/tan: the Cody-Waite result, and the Payne-Hanek one (mathtrig.py) computed only when
    an argument is beyond TRIG_LIMIT, behind a branch (branch_rare). Inside a vector lane builder
    (mathvec's exact path, itself behind a branch) both are computed and selected."""
    value = TRIG_VALUES[op]
    if b.lanes:
        return _in_range(b, x, value(b, x, True))
    big = b.cmp("ogt", b.fabs(x), b.k(TRIG_LIMIT))
    res = branch_rare(b, value(b, x, False), big, lambda: value(b, x, True), "trig")
    return _in_range(b, x, res)


def _sin(b, x): return trig(b, x, "sin")
def _cos(b, x): return trig(b, x, "cos")
def _tan(b, x): return trig(b, x, "tan")


__all__ = ["reduce_huge", "trig", "branch_rare", "HUGE_MIN", "TRIG_LIMIT", "TRIG_VALUES", "TABLE"]
