"""Transcendental functions written in LLVM IR: internal, alwaysinline, branch-free (selects, no
branches, no libm calls), so the loop vectorizer widens them and GPU targets (which have no libm) take
the same code.

`require(module, op, ty)` defines `@poot.<op>.<f32|f64>` in `module` (with what it calls) and returns
its name. Every function exists for float and double. The functions in NATIVE_F32 (exp, exp2, log,
expm1, tanh, sinh, cosh, erf, sin, cos: the ones hot in array code) compute in float with float
coefficients (sin/cos reduce their argument in double);
the other float versions widen to double, compute there and round once (results within ~0.5 ulp).
On the CPU (Module.math_lanes set) float sin/cos/tanh come from mathvec.py instead: sin/cos as
non-inlined functions with vector variants that branch once per vector to this file's exact path.

Methods (double):
- exp/exp2: n = round(x*log2 e); Cody-Waite reduction with FMA (float: exact without one, as Vulkan
  drivers need not fuse, `_reduce_ln2`); degree-13 Taylor polynomial on |r| <= ln2/2; 2**n applied
  as two exact power-of-two factors (so subnormal results round once).
- log family: x = m * 2**e, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1) carried
  as a double-double, so log x comes out as hi + lo (~2**-59 relative): log, log2, log10, log1p
  round that sum; pow uses it as exp(y * (hi + lo)) with an exact FMA product.
- expm1: the exp reduction with e**r - 1 = r + r*r*P(r), recombined as fma(2**n, p, 2**n - 1).
- sin/cos/tan: n = round(x*2/pi), r = x - n*pi/2 with pi/2 as three doubles and FMAs; Taylor
  polynomials on |r| <= pi/4 (measured <= 3 ulp double, 1.1 ulp float). Cody-Waite is exact for
  |x| <= 2**50 (~1.1e15); beyond, mathtrig.py's Payne-Hanek reduction (a double-double r) takes
  the lanes, up to the largest double.
- atan: reduction to |t| <= tan(pi/8) (1/t and (t-1)/(t+1)), Chebyshev fit (mathcoeffs.py);
  atan2 reduces min/max(|x|,|y|) to atan and fixes the quadrant; asin/acos via atan2 and
  sqrt((1-x)(1+x)).
- sinh/cosh/tanh via expm1/exp (large |x| as (e**(x/2)/2)*e**(x/2)); asinh/acosh/atanh via log1p.
- erf: x*P(x*x) on |x| < 1, 1 - exp(-x*x)*erfcx(x) with four fitted pieces on [1, 6), 1 above.
- hypot: max * sqrt(1 + (min/max)**2) with inf beating NaN.
"""
from __future__ import annotations

import math


from poot.errors import NotBuiltError
from poot.jit.llvm import mathcoeffs as C
from poot.jit.llvm.mathtrig import TRIG_LIMIT, _cos, _sin, _tan
from poot.jit.llvm.ir import Module
from poot.jit.llvm.mathbuild import MathBuilder

_INF, _NAN = float("inf"), float("nan")
NATIVE_F32 = frozenset({"exp", "exp2", "log", "expm1", "tanh", "sinh", "cosh", "erf", "sin", "cos"})
BINARY = frozenset({"pow", "atan2", "hypot"})


# --- exp family ------------------------------------------------------------------------------------
_INV_FACT = [1.0 / math.factorial(k) for k in range(16)]


def _reduce_ln2(b: MathBuilder, x, n):
    """r = x - n ln 2 (Cody-Waite, ln 2 = hi + lo). Doubles: a full-width hi through two fmas (the
    SPIR-V target makes a double fma exact itself, spirv_intrinsics._fma64). Floats: fdlibm expf's hi,
    whose low 9 bits are zero, so n*hi and x - n*hi are exact for |n| < 512 and no fma is needed, and
    plain subtractions, whose left operands the SPIR-V worker hides from Mesa's float algebra: lavapipe
    computes a float Fma unfused and reassociated the two fma steps into x - n*(hi + lo), 33-62 ulps
    off at |x| ~ 70."""
    if b.dbl:
        nn = b.neg(n)
        return b.fma(nn, b.k(2.3190468138462996e-17), b.fma(nn, b.k(0.6931471805599453), x))
    r = b.sub(x, b.mul(n, b.k(0.693145751953125)))
    return b.sub(r, b.mul(n, b.k(1.428606765330187e-06)))


def _exp_core(b: MathBuilder, x, lo=None, base2=False):
    if base2:
        xc = b.clamp(x, -1076.0, 1025.0) if b.dbl else b.clamp(x, -151.0, 129.0)
        n = b.rint(xc)
        r = b.sub(xc, n)
        deg = 13 if b.dbl else 7
        ln2 = math.log(2.0)
        p = b.horner(r, [ln2 ** k * _INV_FACT[k] for k in range(deg + 1)])
    else:
        xc = b.clamp(x, -746.0, 710.0) if b.dbl else b.clamp(x, -104.0, 89.0)
        n = b.rint(b.mul(xc, b.k(1.4426950408889634)))
        r = _reduce_ln2(b, xc, n)
        if lo is not None:       # x's low part (pow): meaningless once x is clamped, and huge then
            r = b.add(r, b.sel(b.cmp("oeq", xc, x), lo, b.k(0.0)))
        p = b.horner(r, _INV_FACT[: (14 if b.dbl else 8)])
    return b.nan_through(x, b.scale(p, n))


def _exp(b, x): return _exp_core(b, x)
def _exp2(b, x): return _exp_core(b, x, base2=True)


def _expm1(b, x):
    hi_x = 709.0 if b.dbl else 88.0
    res = b.sel(b.cmp("ogt", x, b.k(hi_x)), b.call("exp", x), _expm1_core(b, x))
    return b.nan_through(x, b.keep_zero(x, res))


def _expm1_core(b, x):
    """e**x - 1 for x up to 709 (double) / 88 (float); larger x is the caller's business."""
    hi_x, lo_x = (709.0, -60.0) if b.dbl else (88.0, -30.0)
    xc = b.clamp(x, lo_x, hi_x)
    n = b.rint(b.mul(xc, b.k(1.4426950408889634)))
    r = _reduce_ln2(b, xc, n)
    p = b.fma(b.mul(r, r), b.horner(r, _INV_FACT[2:16] if b.dbl else _INV_FACT[2:10]), r)
    t = b.pow2(b.to_int(n))
    return b.fma(t, p, b.sub(t, b.k(1.0)))


# --- log family ------------------------------------------------------------------------------------
_LOG_P = [2.0 / (2 * k + 3) for k in range(11)]          # 2/3, 2/5, ..., 2/23
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10   # fdlibm: e*LN2_HI exact


def _log_dd(b: MathBuilder, x):
    """log(x) = H + L for finite x > 0 (double only), normalized (|L| <= ulp(H) / 2) and good to ~2**-62
    relative: pow multiplies it by y, up to |y log x| ~ 745, and reduces only y*H by n ln 2, so an
    unnormalized L (the series tail, up to ~3e-3, was left there) gave exp's polynomial an argument far
    outside |r| <= ln2 / 2 (x ** 700 was wrong by 1e8 ulp), and a tail rounded in plain double
    (1e-2 of log x) cost tens of ulps. log(x) = e ln 2 + 2s + s^3 (2/3 + s^2 Q(s^2)), s = (m-1)/(m+1)."""
    tiny = b.cmp("olt", x, b.k(2.2250738585072014e-308))
    xs = b.sel(tiny, b.mul(x, b.k(2.0 ** 54)), x)
    eadj = b.sel(tiny, "-54", "0", ty="i64")
    ix = b.i("add", b.bits_of(xs), str((0x3FF00000 - 0x3FE6A09E) << 32))
    e = b.i("add", b.i("sub", b.i("lshr", ix, 52), 1023), eadj)
    m = b.from_bits(b.i("add", b.i("and", ix, str((1 << 52) - 1)), str(0x3FE6A09E << 32)))
    one = b.k(1.0)
    num = b.sub(m, one)
    den, den_lo = b.two_sum(m, one)
    s = b.div(num, den)
    ns = b.neg(s)
    rr = b.fma(ns, den, num)
    rr = b.fma(ns, den_lo, rr)
    s_lo = b.div(rr, den)
    t_hi, t_lo, z = _log_tail(b, s)
    ef = b.to_float(e)
    h, err = b.two_sum(b.mul(ef, b.k(LN2_HI)), b.add(s, s))
    h, err2 = b.two_sum(h, t_hi)
    ds = b.mul(b.add(s_lo, s_lo), b.add(one, z))        # d(2s + 2/3 s^3) = 2 (1 + s^2) ds
    low = b.add(b.add(b.add(err, err2), b.add(t_lo, ds)), b.mul(ef, b.k(LN2_LO)))
    return b.two_sum(h, low)


_TWO_THIRDS_LO = 3.700743415417188e-17      # 2/3 - float(2/3)


def _log_tail(b: MathBuilder, s):
    """The series tail s^3 (2/3 + z Q(z)), z = s^2, as hi + lo: s^3 * 2/3 from exact products (it is up
    to 1% of log x), the rest (2% of that) in plain double. Also returns z."""
    z = b.mul(s, s)
    z_lo = b.fma(s, s, b.neg(z))
    s3 = b.mul(s, z)
    s3_lo = b.add(b.fma(s, z, b.neg(s3)), b.mul(s, z_lo))
    c = b.k(_LOG_P[0])
    t_hi = b.mul(s3, c)
    rest = b.mul(b.mul(s3, z), b.horner(z, _LOG_P[1:]))
    t_lo = b.fma(s3, c, b.neg(t_hi))
    t_lo = b.add(t_lo, b.add(b.fma(s3, b.k(_TWO_THIRDS_LO), b.mul(s3_lo, c)), rest))
    return t_hi, t_lo, z


def _log_special(b: MathBuilder, x, res):
    res = b.sel(b.is_zero(x), b.k(-_INF), res)
    res = b.sel(b.cmp("olt", x, b.k(0.0)), b.k(_NAN), res)
    res = b.sel(b.cmp("oeq", x, b.k(_INF)), x, res)
    return b.sel(b.isnan(x), x, res)


def _log(b, x):
    if b.dbl:
        h, low = _log_dd(b, x)
        return _log_special(b, x, b.add(h, low))
    tiny = b.cmp("olt", x, b.k(1.1754943508222875e-38))
    xs = b.sel(tiny, b.mul(x, b.k(2.0 ** 25)), x)
    eadj = b.sel(tiny, "-25", "0", ty="i32")
    ix = b.i("add", b.bits_of(xs), str(0x3F800000 - 0x3F3504F3))
    e = b.i("add", b.i("sub", b.i("lshr", ix, 23), 127), eadj)
    m = b.from_bits(b.i("add", b.i("and", ix, str(0x7FFFFF)), str(0x3F3504F3)))
    f = b.sub(m, b.k(1.0))
    s = b.div(f, b.add(f, b.k(2.0)))
    z = b.mul(s, s)
    r = b.mul(z, b.horner(z, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]))
    hfsq = b.mul(b.mul(b.k(0.5), f), f)
    dk = b.to_float(e)
    t = b.fma(s, b.add(hfsq, r), b.mul(dk, b.k(9.0580006145e-06)))
    res = b.add(b.add(b.sub(t, hfsq), f), b.mul(dk, b.k(6.9313812256e-01)))
    return _log_special(b, x, res)


def _log_scaled(b, x, c_hi, c_lo):
    h, low = _log_dd(b, x)
    p = b.mul(h, b.k(c_hi))
    pe = b.fma(h, b.k(c_hi), b.neg(p))
    res = b.add(p, b.add(pe, b.fma(h, b.k(c_lo), b.mul(low, b.k(c_hi)))))
    return _log_special(b, x, res)


def _log2(b, x): return _log_scaled(b, x, 1.4426950408889634, 2.0355273740931033e-17)
def _log10(b, x): return _log_scaled(b, x, 0.4342944819032518, 1.098319650216765e-17)


def _log1p(b, x):
    u, ulo = b.two_sum(b.k(1.0), x)
    h, low = _log_dd(b, u)
    res = b.add(h, b.add(low, b.div(ulo, u)))
    res = _log_special(b, u, res)
    res = b.sel(b.isnan(x), x, res)
    return b.keep_zero(x, res)


def _pow(b, x, y):
    ax = b.fabs(x)
    h, low = _log_dd(b, ax)
    p = b.mul(y, h)
    lo = b.add(b.fma(y, h, b.neg(p)), b.mul(y, low))
    res = _exp_core(b, p, lo=lo)
    inf, zero, one = b.k(_INF), b.k(0.0), b.k(1.0)
    yneg = b.cmp("olt", y, zero)
    res = b.sel(b.is_zero(ax), b.sel(yneg, inf, zero), res)
    res = b.sel(b.cmp("oeq", ax, inf), b.sel(yneg, zero, inf), res)
    big = b.cmp("ogt", ax, one)
    yinf = b.sel(b.cmp("oeq", ax, one), one, b.sel(b.o(f"xor i1 {big}, {yneg}"), inf, zero))
    res = b.sel(b.isinf(y), yinf, res)
    yint = b.cmp("oeq", b.floor(y), y)
    half = b.mul(y, b.k(0.5))
    yodd = b.and_(yint, b.cmp("une", b.floor(half), half))
    xneg = b.signbit(x)
    res = b.sel(b.and_(xneg, yodd), b.neg(res), res)
    finite_neg = b.and_(b.cmp("olt", x, zero), b.cmp("ogt", x, b.k(-_INF)))
    res = b.sel(b.and_(finite_neg, b.not_(yint)), b.k(_NAN), res)
    res = b.sel(b.cmp("uno", x, y), b.add(x, y), res)
    res = b.sel(b.is_zero(y), one, res)
    return b.sel(b.cmp("oeq", x, one), one, res)


# --- trigonometric: mathtrig.py -------------------------------------------------------------------


PI_HI, PI_LO = 3.141592653589793, 1.2246467991473532e-16
PIO2_HI, PIO2_LO = 1.5707963267948966, 6.123233995736766e-17
PIO4_HI, PIO4_LO = 0.7853981633974483, 3.061616997868383e-17


def _atan01(b, t):
    """atan(t) for t in [0, 1] (and NaN)."""
    mid = b.cmp("ogt", t, b.k(0.41421356237309503))
    one = b.k(1.0)
    tr = b.sel(mid, b.div(b.sub(t, one), b.add(t, one)), t)
    z = b.mul(tr, tr)
    a = b.fma(b.mul(tr, z), b.horner(z, C.ATAN_P), tr)
    return b.sel(mid, b.add(b.k(PIO4_HI), b.add(a, b.k(PIO4_LO))), a)


def _atan(b, x):
    t = b.fabs(x)
    big = b.cmp("ogt", t, b.k(1.0))
    a = _atan01(b, b.sel(big, b.div(b.k(1.0), t), t))
    a = b.sel(big, b.add(b.sub(b.k(PIO2_HI), a), b.k(PIO2_LO)), a)
    return b.copysign(a, x)


def _atan2(b, y, x):
    ax, ay = b.fabs(x), b.fabs(y)
    swap = b.cmp("ogt", ay, ax)
    r = b.div(b.sel(swap, ax, ay), b.sel(swap, ay, ax))
    r = b.sel(b.and_(b.isinf(ax), b.isinf(ay)), b.k(1.0), r)
    r = b.sel(b.and_(b.is_zero(ax), b.is_zero(ay)), b.k(0.0), r)
    a = _atan01(b, r)
    a = b.sel(swap, b.add(b.sub(b.k(PIO2_HI), a), b.k(PIO2_LO)), a)
    a = b.sel(b.signbit(x), b.add(b.sub(b.k(PI_HI), a), b.k(PI_LO)), a)
    a = b.copysign(a, y)
    return b.sel(b.cmp("uno", x, y), b.add(x, y), a)


def _cosine_side(b, x):
    one = b.k(1.0)
    return b.sqrt(b.mul(b.sub(one, x), b.add(one, x)))


def _asin(b, x): return b.call("atan2", x, _cosine_side(b, x))
def _acos(b, x): return b.call("atan2", _cosine_side(b, x), x)


# --- hyperbolic ------------------------------------------------------------------------------------
def _sinh(b, x):
    ax = b.fabs(x)
    t = b.call("expm1", ax)
    small = b.mul(b.k(0.5), b.add(t, b.div(t, b.add(t, b.k(1.0)))))
    w = b.call("exp", b.mul(b.k(0.5), ax))
    large = b.mul(b.mul(b.k(0.5), w), w)
    return b.copysign(b.sel(b.cmp("ogt", ax, b.k(22.0)), large, small), x)


def _cosh(b, x):
    ax = b.fabs(x)
    t = b.call("exp", ax)
    small = b.mul(b.k(0.5), b.add(t, b.div(b.k(1.0), t)))
    w = b.call("exp", b.mul(b.k(0.5), ax))
    large = b.mul(b.mul(b.k(0.5), w), w)
    return b.sel(b.cmp("ogt", ax, b.k(22.0)), large, small)


def _tanh(b, x):
    ax = b.clamp(b.fabs(x), 0.0, 20.0 if b.dbl else 9.0)
    t = b.keep_zero(ax, _expm1_core(b, b.add(ax, ax)))      # 2|x| <= 40: no overflow branch
    return b.nan_through(x, b.copysign(b.div(t, b.add(t, b.k(2.0))), x))


def _asinh(b, x):
    ax = b.fabs(x)
    one = b.k(1.0)
    x2 = b.mul(ax, ax)
    small = b.call("log1p", b.add(ax, b.div(x2, b.add(one, b.sqrt(b.add(one, x2))))))
    large = b.add(b.call("log", ax), b.k(math.log(2.0)))
    return b.copysign(b.sel(b.cmp("ogt", ax, b.k(2.0 ** 28)), large, small), x)


def _acosh(b, x):
    t = b.sub(x, b.k(1.0))                       # exact below 2**53
    w = b.fma(t, t, b.add(t, t))                 # x*x - 1, one rounding
    sq = b.sqrt(w)
    if b.dbl:   # log(x + sqrt(x*x - 1)) with the sum kept as hi + lo: <= 1 ulp near 1
        sq_lo = b.keep_zero(sq, b.div(b.fma(b.neg(sq), sq, w), b.add(sq, sq)))   # 0/0 at x = 1
        hi, lo = b.two_sum(x, sq)
        h, low = _log_dd(b, hi)
        small = b.add(h, b.add(low, b.div(b.add(lo, sq_lo), hi)))
    else:
        small = b.call("log1p", b.add(t, sq))
    large = b.add(b.call("log", x), b.k(math.log(2.0)))
    res = b.sel(b.cmp("ogt", x, b.k(2.0 ** 28)), large, small)
    return b.sel(b.cmp("olt", x, b.k(1.0)), b.k(_NAN), res)


def _atanh(b, x):
    ax = b.fabs(x)
    r = b.mul(b.k(0.5), b.call("log1p", b.div(b.add(ax, ax), b.sub(b.k(1.0), ax))))
    return b.copysign(r, x)


# --- erf, hypot ------------------------------------------------------------------------------------
def _erf(b, x):
    ax = b.fabs(x)
    small = b.mul(ax, b.horner(b.mul(ax, ax), C.ERF_SMALL_P))
    pieces = C.ERFCX_PIECES
    cen = b.k(pieces[0][2])
    coeffs = [b.k(c) for c in pieces[0][3]]
    for lo, _, center, cs in pieces[1:]:
        use = b.cmp("oge", ax, b.k(lo))
        cen = b.sel(use, b.k(center), cen)
        coeffs = [b.sel(use, b.k(c), prev) for c, prev in zip(cs, coeffs)]
    t = b.sub(ax, cen)
    v = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        v = b.fma(v, t, c)
    h = b.mul(ax, ax)
    low = b.fma(ax, ax, b.neg(h))
    em = b.mul(b.call("exp", b.neg(h)), b.sub(b.k(1.0), low))
    large = b.fma(b.neg(em), v, b.k(1.0))
    res = b.sel(b.cmp("olt", ax, b.k(1.0)), small, large)
    res = b.sel(b.cmp("oge", ax, b.k(6.0)), b.k(1.0), res)
    return b.copysign(res, x)


def _hypot(b, x, y):
    ax, ay = b.fabs(x), b.fabs(y)
    gt = b.cmp("ogt", ax, ay)
    hi, lo = b.sel(gt, ax, ay), b.sel(gt, ay, ax)
    r = b.div(lo, hi)
    res = b.mul(hi, b.sqrt(b.fma(r, r, b.k(1.0))))
    res = b.sel(b.is_zero(hi), b.k(0.0), res)
    res = b.sel(b.cmp("uno", x, y), b.add(x, y), res)
    return b.sel(b.or_(b.isinf(ax), b.isinf(ay)), b.k(_INF), res)


_IMPL = {
    "exp": _exp, "exp2": _exp2, "expm1": _expm1, "log": _log, "log2": _log2, "log10": _log10,
    "log1p": _log1p, "sin": _sin, "cos": _cos, "tan": _tan, "asin": _asin, "acos": _acos, "atan": _atan,
    "sinh": _sinh, "cosh": _cosh, "tanh": _tanh, "asinh": _asinh, "acosh": _acosh, "atanh": _atanh,
    "erf": _erf, "pow": _pow, "atan2": _atan2, "hypot": _hypot,
}
FUNCTIONS = tuple(sorted(_IMPL))


def require(module: Module, op: str, ty: str) -> str:
    """Define `@poot.<op>.<f32|f64>` (and its dependencies) in `module` once; return its name."""
    if op not in _IMPL:
        raise NotBuiltError(f"mathlib function '{op}'")
    sfx = "f64" if ty == "double" else "f32"
    name = f"@poot.{op}.{sfx}"
    defined = getattr(module, "_math_defined", None)
    if defined is None:
        defined = module._math_defined = set()
    if name in defined:
        return name
    defined.add(name)
    impl = _IMPL[op]
    if ty == "float" and module.math_lanes:       # the CPU's own float versions
        from poot.jit.llvm import mathvec

        if op in mathvec.OPS:
            return mathvec.require(module, op, module.math_lanes)
        impl = mathvec.CPU_FLOAT.get(op, impl)
    if ty == "double" and module.math_lanes:      # the CPU's double sin/cos/tan: a branch for huge x
        from poot.jit.llvm import mathvec

        if op in mathvec.DOUBLE_OPS:
            return mathvec.require(module, op, module.math_lanes, "double")
    nargs = 2 if op in BINARY else 1
    params = ", ".join(f"{ty} %a{i}" for i in range(nargs))
    args = [f"%a{i}" for i in range(nargs)]
    b = MathBuilder(module, ty)
    if ty == "float" and op not in NATIVE_F32:
        wide = [b.o(f"fpext float {a} to double") for a in args]
        fn = require(module, op, "double")
        r = b.o(f"call double {fn}(" + ", ".join(f"double {w}" for w in wide) + ")")
        res = b.o(f"fptrunc double {r} to float")
    else:
        res = impl(b, *args)
    b.f.term(f"ret {ty} {res}")
    module.functions.append(b.f.render(f"define internal {ty} {name}({params}) #1"))
    return name


__all__ = ["require", "FUNCTIONS", "NATIVE_F32", "TRIG_LIMIT"]
