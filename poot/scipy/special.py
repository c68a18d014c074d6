"""`pt.scipy.special`: SciPy's special functions under JAX's names and semantics
(`jax.scipy.special`), composed from poot's elementwise operations, reductions and `while_loop`,
so that each runs eagerly, under `@pt.jit`, `pt.vmap` and `pt.grad`, on every device.

Dtypes follow JAX: a float input keeps its dtype (float16/bfloat16 compute in float32 and round
once), an integer or bool input computes in NumPy's float type for it, as `pt.exp` does; several
arguments promote together, Python scalars taking the arrays' dtype. Complex input is refused.
The numbers are SciPy's: the algorithms are Cephes' (the library SciPy's own are built from),
evaluated in the input's precision, so float32 results are float32-accurate rather than float64
values rounded.

Functions that poot already has are the same objects: `erf` is `pt.erf`, `i0` is `pt.i0`,
`expit` is `pt.nn.sigmoid`, `logsumexp`, `softmax` and `log_softmax` are `pt.nn`'s (softmax's
`axis` defaults to all axes here, as SciPy's and JAX's)."""
from __future__ import annotations

import math
import operator
from fractions import Fraction

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace import nn as _nn
from poot.trace.array import Array
from poot.trace.movement import arr
from poot.trace.numpy_tail import _I0_A, _I0_B, _chbevl, i0
from poot.trace.promote import float_of
from poot.trace.selection import where

__all__ = ["betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc", "gammaincc", "gammaln", "i0",
           "i0e", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy", "zeta"]

erf = ew.erf
expit = _nn.sigmoid
logsumexp = _nn.logsumexp

_INF = math.inf
_NAN = math.nan
_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)


def _floats(op: str, *xs):
    """The arguments as Arrays in their compute dtype (float32 for half precision), and the result
    dtype: the promoted float dtype of the array arguments (Python scalars are weak, as in JAX)."""
    arrays = [x for x in xs if not isinstance(x, (bool, int, float))]
    peers = [x for x in arrays if isinstance(x, Array)]
    ds = [arr(x, op, peers).dtype for x in arrays]
    d = dt.result_type(*ds) if ds else dt.float64
    if d.kind == "c":
        raise DTypeError(f"{op}: complex input is not supported (got {d.name})")
    d = float_of(d)
    work = dt.float32 if d.bits == 16 else d
    return [arr(x, op, peers).astype(work) for x in xs], d


def _standardized(op: str, x, loc, scale, *params):
    """(z = (x - loc) / scale, scale, params, result dtype) of a location-scale distribution of
    pt.scipy.stats: x, loc, scale and its shape parameters promoted together, as `_floats` does."""
    (x, loc, scale, *params), d = _floats(op, x, loc, scale, *params)
    return (x - loc) / scale, scale, params, d


def _eps(x) -> float:
    return 2.220446049250313e-16 if x.dtype == dt.float64 else 1.1920929e-07


def _polevl(x, coeffs):
    """coeffs[0] x^n + ... + coeffs[n] (Horner)."""
    r = coeffs[0]
    for c in coeffs[1:]:
        r = r * x + c
    return r


def _p1evl(x, coeffs):
    """x^n + coeffs[0] x^(n-1) + ... (Cephes' polynomial with an implied leading 1)."""
    return _polevl(x, [1.0] + list(coeffs))


def _sinpi_abs(x):
    """|sin(pi x)|, exact at integers and without pi x's rounding for large |x|."""
    return ew.abs(ew.sin(math.pi * (x - ew.round(x))))


# --- gamma and its logarithmic derivatives -------------------------------------------------------
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7]


def _lgamma_pos(x):
    """log Gamma(x) for x >= 0.5 (Lanczos, g = 7)."""
    z = x - 1.0
    s = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], 1):
        s = s + c / (z + float(i))
    t = z + 7.5
    return _LOG_2PI_HALF + (z + 0.5) * ew.log(t) - t + ew.log(s)


def _gammaln(x):
    small = x < 0.5
    pole = small & (ew.floor(x) == x)
    xs = where(small & ~pole, x, 0.25)            # the reflection's own argument, never a pole
    xb = where(small, 1.0, x)
    refl = math.log(math.pi) - ew.log(_sinpi_abs(xs)) - _lgamma_pos(1.0 - xs)
    big = x >= 8.0                                # Stirling's series: to the last bit or two
    xg = where(big & (x != _INF), x, 8.0)
    stirling = (xg - 0.5) * ew.log(xg) - xg + _LOG_2PI_HALF + _stirling_corr(xg)
    r = where(small, refl, where(big, stirling, _lgamma_pos(where(big, 1.0, xb))))
    r = where((x == 1.0) | (x == 2.0), 0.0, r)     # log Gamma's two zeros, exactly
    r = where(pole | (x == _INF), _INF, r)
    return where(x == -_INF, -_INF, r)


@api_boundary
def gammaln(x):
    """log|Gamma(x)| (scipy.special.gammaln): inf at the poles 0, -1, -2, ... (and -inf at -inf, as
    SciPy); Stirling's series from 8 on, the Lanczos series on [0.5, 8), the reflection formula
    below."""
    (x,), d = _floats("gammaln", x)
    return _gammaln(x).astype(d)


def _digamma(x):
    small = x < 0.5
    pole = small & (ew.floor(x) == x)
    xs = where(small & ~pole, x, 0.25)
    # psi(x) = psi(1 - x) - pi / tan(pi x); tan of the reduced argument keeps large |x| exact
    cot = math.pi / ew.tan(math.pi * (xs - ew.round(xs)))
    z = where(small, 1.0 - xs, x)
    acc = 0.0
    for _ in range(10):                          # psi(z) = psi(z + 1) - 1 / z, up to z >= 10
        low = z < 10.0
        acc = acc + where(low, 1.0 / z, 0.0)
        z = where(low, z + 1.0, z)
    zz = 1.0 / (z * z)
    # the asymptotic series, sum of B_2k / (2k z^2k) for k = 7 down to 1
    series = zz * _polevl(zz, [1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120,
                               1.0 / 12])
    r = ew.log(z) - 0.5 / z - series - acc
    r = where(small, r - cot, r)
    at_pole = where(x == 0.0, where(ew.signbit(x), _INF, -_INF), _NAN).astype(x.dtype)
    r = where(pole, at_pole, r)
    return where(x == -_INF, _NAN, r)


@api_boundary
def digamma(x):
    """The logarithmic derivative of Gamma (scipy.special.digamma = psi): -inf at +0.0 and inf at
    -0.0, as SciPy; NaN at the negative integers and -inf. Recurrence up to x >= 10, then the
    asymptotic series; the reflection formula below 0.5."""
    (x,), d = _floats("digamma", x)
    return _digamma(x).astype(d)


def _bernoulli_even(n):
    """B_0..B_n as Fractions (the Akiyama-Tanigawa algorithm; only the even ones are used)."""
    out, a = [], []
    for m in range(n + 1):
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return out


_B = _bernoulli_even(24)
# (2k)! / B_2k for k = 1..12: the Euler-Maclaurin tail of the Hurwitz zeta function (Cephes' A[])
_ZETA_A = [float(Fraction(math.factorial(2 * k)) / _B[2 * k]) for k in range(1, 13)]
_ZETA_N = 10


def _zeta(x, q):
    """Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x (Cephes' Euler-Maclaurin summation)."""
    s = 0.0
    for k in range(_ZETA_N):
        s = s + ew.power(q + float(k), -x)
    w = q + float(_ZETA_N)
    b = ew.power(w, -x)
    s = s + w * b / (x - 1.0) + 0.5 * b
    a, fac = 1.0, 0.0
    for i in range(12):
        a = a * (x + fac)
        b = b / w
        s = s + a * b / _ZETA_A[i]
        fac += 1.0
        a = a * (x + fac)
        b = b / w
        fac += 1.0
    s = where(x == 1.0, _INF, s)
    s = where((q <= 0.0) & (ew.floor(q) == q), _INF, s)
    s = where((q <= 0.0) & (ew.floor(x) != x), _NAN, s)
    return where(x < 1.0, _NAN, s)


@api_boundary
def zeta(x, q=None):
    """The Hurwitz zeta function sum((q + k)**-x for k >= 0) (scipy.special.zeta; with q None, the
    Riemann zeta function, x > 1 only: NaN for x < 1, inf at x = 1)."""
    if q is None:
        q = 1.0
    (x, q), d = _floats("zeta", x, q)
    return _zeta(x, q).astype(d)


@api_boundary
def polygamma(n, x):
    """The n-th derivative of digamma (scipy.special.polygamma), n a non-negative integer (array or
    scalar): (-1)**(n+1) n! zeta(n + 1, x) for n >= 1, digamma for n = 0."""
    if isinstance(n, (int, float)) and not isinstance(n, bool):
        if n != int(n) or n < 0:
            raise ArgumentError(f"polygamma: n must be a non-negative integer, got {n!r}")
    else:
        nd = arr(n, "polygamma").dtype
        if nd.kind not in "iuf":
            raise DTypeError(f"polygamma: n must be integers, got {nd.name}")
    (n, x), d = _floats("polygamma", n, x)
    nn = where(n < 1.0, 1.0, n)
    sign = where(nn - 2.0 * ew.floor(0.5 * nn) == 0.0, -1.0, 1.0).astype(x.dtype)
    r = sign * ew.exp(_gammaln(nn + 1.0)) * _zeta(nn + 1.0, x)
    return where(n == 0.0, _digamma(x), r).astype(d)


@api_boundary
def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a Python int):
    d(d-1)/4 log(pi) + sum(gammaln(a - j/2) for j < d) (scipy.special.multigammaln; JAX's, which
    does not check a > (d-1)/2)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise ArgumentError(f"multigammaln: d must be a Python integer, got {d!r}") from None
    if d < 1:
        raise ArgumentError(f"multigammaln: d must be at least 1, got {d}")
    (a,), dtype = _floats("multigammaln", a)
    r = d * (d - 1) / 4.0 * math.log(math.pi)
    for j in range(d):
        r = r + _gammaln(a - j / 2.0)
    return r.astype(dtype)


# Stirling's correction log Gamma(x) - ((x - 1/2) log x - x + log(2 pi)/2), for x >= 8
_STIRLING = [float(_B[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 8)]


def _stirling_corr(x):
    zz = 1.0 / (x * x)
    return _polevl(zz, _STIRLING[::-1]) / x


def _betaln(a, b):
    lo = ew.minimum(a, b)
    hi = ew.maximum(a, b)
    direct = _gammaln(lo) + _gammaln(hi) - _gammaln(lo + hi)
    # hi >= 8: log Gamma(hi) - log Gamma(lo + hi) from Stirling's formula, without the cancellation
    # of two large logarithms (log B(1, 1e10) = -log(1e10) exactly)
    hs = where(hi >= 8.0, hi, 8.0)
    ls = where(hi >= 8.0, ew.maximum(lo, 1e-30), 1.0)
    s = ls + hs
    diff = ((hs - 0.5) * ew.log1p(-ls / s) - ls * ew.log(s) + ls
            + _stirling_corr(hs) - _stirling_corr(s))
    one_big = _gammaln(ls) + diff
    # both >= 8: log Gamma(lo) by Stirling too
    both = (_LOG_2PI_HALF - 0.5 * ew.log(hs) + (ls - 0.5) * ew.log(ls / s) + hs * ew.log1p(-ls / s)
            + _stirling_corr(ls) + _stirling_corr(hs) - _stirling_corr(s))
    r = where(lo >= 8.0, both, one_big)
    return where((hi >= 8.0) & (lo > 0.0), r, direct)


@api_boundary
def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b) (scipy.special.betaln), with
    Stirling's series where an argument is large, so that no two big logarithms cancel."""
    (a, b), d = _floats("betaln", a, b)
    return _betaln(a, b).astype(d)


# --- the error function and the normal distribution ----------------------------------------------
# Cephes ndtr.c: erfc(x) = exp(-x^2) P(x) / Q(x) on [1, 8), R(x) / S(x) from 8 on
_ERFC_P = [2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
           4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
           9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2]
_ERFC_Q = [1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
           9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
           1.65666309194161350182E3, 5.57535340817727675546E2]
_ERFC_R = [5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
           6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0]
_ERFC_S = [2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
           1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0]


def _neg_square(u, c=1.0):
    """-c u^2 (c = 1 or 1/2) as hi + lo with u = h + l, h a multiple of 1/64: h^2 is exact, so
    exp(hi) exp(lo) does not take the rounding error of u^2 times u^2 (Cephes' expx2). Beyond 2^30
    (and at inf) u^2 alone is exact enough: its exp is 0 and its log is -c u^2 to the last bit."""
    split = u < 2.0 ** 30
    uf = where(split, u, 0.0)
    h = ew.floor(uf * 64.0) / 64.0
    l = uf - h
    return where(split, -(h * h) * c, -(u * u) * c), where(split, -((h + h + l) * l) * c, 0.0)


def _erfcx_big(z):
    """log(erfc(z) exp(z^2)) for z >= 1: the rational factor of Cephes' erfc."""
    zm = where(z < 8.0, z, 1.0)
    zb = where(z < 8.0, 8.0, z)
    mid = _polevl(zm, _ERFC_P) / _p1evl(zm, _ERFC_Q)
    w = 1.0 / zb                                 # R(z) / S(z) in powers of 1/z: no overflow
    far = _polevl(w, _ERFC_R[::-1]) / (zb * _polevl(w, ([1.0] + _ERFC_S)[::-1]))
    return where(z < 8.0, mid, far)


def _erfc_big(z, u=None, c=1.0):
    """erfc(z) for z >= 1 (others: any finite value, unused), exp(-z^2) taken as exp(-c u^2) from
    the exact u with z = u sqrt(c) where given (ndtr's |x|: x / sqrt 2 is rounded)."""
    big = z >= 1.0
    zs = where(big, z, 1.0)
    hi, lo = _neg_square(zs) if u is None else _neg_square(where(big, u, 2.0), c)
    return ew.exp(hi) * ew.exp(lo) * _erfcx_big(zs)


def _erfc(x):
    ax = ew.abs(x)
    big = _erfc_big(ax)
    r = where(x < 0.0, 2.0 - big, big)
    r = where(ax < 1.0, 1.0 - ew.erf(where(ax < 1.0, x, 0.0)), r)
    return where(ew.isnan(x), _NAN, r)


@api_boundary
def erfc(x):
    """1 - erf(x), accurate in the upper tail where 1 - erf(x) would lose every digit
    (scipy.special.erfc)."""
    (x,), d = _floats("erfc", x)
    return _erfc(x).astype(d)


def _ndtr(x):
    z = x * math.sqrt(0.5)
    az = ew.abs(z)
    tail = 0.5 * _erfc_big(az, ew.abs(x), 0.5)
    far = where(z > 0.0, 1.0 - tail, tail)
    near = 0.5 + 0.5 * ew.erf(where(az < 1.0, z, 0.0))
    return where(ew.isnan(x), _NAN, where(az < 1.0, near, far))


@api_boundary
def ndtr(x):
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2 (scipy.special.ndtr), accurate in the
    lower tail (erfc's rational form)."""
    (x,), d = _floats("ndtr", x)
    return _ndtr(x).astype(d)


def _log_ndtr(x):
    # x > 0: log1p(-ndtr(-x)); -sqrt(2) < x <= 0: log(ndtr(x)); further down log(erfc(z) / 2) as
    # -z^2 + log(erfcx(z)) - log 2 with z = -x / sqrt 2: no underflow however far the tail
    up = x > 0.0
    q = _ndtr(where(up, -x, x))
    z = -x * math.sqrt(0.5)
    zs = where(z >= 1.0, z, 1.0)
    hi, lo = _neg_square(where(z >= 1.0, -x, 2.0), 0.5)
    low = (hi + lo) + ew.log(_erfcx_big(zs)) - math.log(2.0)
    r = where(z >= 1.0, low, ew.log(q))
    return where(ew.isnan(x), _NAN, where(up, ew.log1p(-q), r))


@api_boundary
def log_ndtr(x, series_order=3):
    """log(ndtr(x)) (scipy.special.log_ndtr), accurate at both tails: log1p(-ndtr(-x)) above 0 and
    the log of erfc's rational form far below, so no value underflows to -inf. `series_order` is
    JAX's argument (a Python int in [0, 30]); this evaluation needs no asymptotic series and is
    exact to the dtype for any order."""
    if not isinstance(series_order, int) or isinstance(series_order, bool) or not 0 <= series_order <= 30:
        raise ArgumentError(f"log_ndtr: series_order must be a Python int in [0, 30], got {series_order!r}")
    (x,), d = _floats("log_ndtr", x)
    return _log_ndtr(x).astype(d)


# Cephes ndtri.c: the central region p in (exp(-2), 1 - exp(-2)) and the two tails
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]
_EXP_M2 = math.exp(-2.0)


def _ndtri(w2, q, upper):
    """The normal quantile from p's two exact forms: w2 = 2p - 1 (used in the central region; for
    erfinv, its own argument, so that no subnormal is halved away) and q = min(p, 1 - p) (in the
    tails; `upper` where q = 1 - p). Values outside are NaN-free."""
    central = q > _EXP_M2
    wc = where(central, w2, 0.0)
    ww = 0.25 * wc * wc
    xc = wc * (1.0 + ww * _polevl(ww, _NDTRI_P0) / _p1evl(ww, _NDTRI_Q0)) * math.sqrt(0.5 * math.pi)
    qt = where(central | (q <= 0.0), 0.01, q)
    z = ew.sqrt(-2.0 * ew.log(qt))
    iz = 1.0 / z
    x1 = iz * _polevl(iz, _NDTRI_P1) / _p1evl(iz, _NDTRI_Q1)
    x2 = iz * _polevl(iz, _NDTRI_P2) / _p1evl(iz, _NDTRI_Q2)
    xt = z - ew.log(z) / z - where(z < 8.0, x1, x2)
    xt = where(upper, xt, -xt)
    xt = where(q == 0.0, where(upper, _INF, -_INF).astype(xt.dtype), xt)
    return where(central, xc, xt)


@api_boundary
def ndtri(p):
    """The inverse of ndtr (scipy.special.ndtri): -inf at 0, inf at 1, NaN outside [0, 1]."""
    (p,), d = _floats("ndtri", p)
    upper = p > 0.5
    r = _ndtri((p - 0.5) * 2.0, where(upper, 1.0 - p, p), upper)
    return where((p < 0.0) | (p > 1.0), _NAN, r).astype(d)


@api_boundary
def erfinv(x):
    """The inverse error function (scipy.special.erfinv): ndtri((1 + x) / 2) / sqrt 2, with
    (1 + x) / 2 - 1/2 = x / 2 and (1 - |x|) / 2 formed exactly; +-inf at +-1, NaN outside."""
    (x,), d = _floats("erfinv", x)
    upper = x > 0.0
    r = _ndtri(x, 0.5 * (1.0 - ew.abs(x)), upper) * math.sqrt(0.5)
    return where(ew.abs(x) > 1.0, _NAN, r).astype(d)


# --- logarithms that are 0 at 0, entropies -------------------------------------------------------
def _xlogy(x, y, log):
    zero = (x == 0.0) & ~ew.isnan(y)
    return where(zero, 0.0, x * log(where(zero, 1.0, y)))


@api_boundary
def xlogy(x, y):
    """x * log(y), 0 where x is 0 (unless y is NaN) (scipy.special.xlogy); the derivative at x = 0
    is 0, so that log-likelihood terms with zero weight stay finite."""
    (x, y), d = _floats("xlogy", x, y)
    return _xlogy(x, y, ew.log).astype(d)


@api_boundary
def xlog1py(x, y):
    """x * log1p(y), 0 where x is 0 (unless y is NaN) (scipy.special.xlog1py)."""
    (x, y), d = _floats("xlog1py", x, y)
    return _xlogy(x, y, ew.log1p).astype(d)


def _logit(p):
    # log(p) - log1p(-p) keeps small p exact; from 1/4 on, 2 atanh(2p - 1) (2p - 1 is exact there)
    # has no cancellation near p = 1/2
    return where(p < 0.25, ew.log(p) - ew.log1p(-p), 2.0 * ew.arctanh(2.0 * p - 1.0))


@api_boundary
def logit(p):
    """log(p / (1 - p)) (scipy.special.logit): -inf at 0, inf at 1, NaN outside [0, 1]."""
    (p,), d = _floats("logit", p)
    return _logit(p).astype(d)


@api_boundary
def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes when None, as scipy.special.softmax); pt.nn.softmax."""
    return _nn.softmax(x, axis=axis)


@api_boundary
def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (all axes when None, as scipy.special.log_softmax)."""
    return _nn.log_softmax(x, axis=axis)


@api_boundary
def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf below (scipy.special.entr)."""
    (x,), d = _floats("entr", x)
    pos = x > 0.0
    r = where(pos, -x * ew.log(where(pos, x, 1.0)), where(x == 0.0, 0.0, -_INF).astype(x.dtype))
    return where(ew.isnan(x), _NAN, r).astype(d)


def _log_ratio(x, y):
    """log(x / y) for x, y > 0, as log1p((x - y) / y) where x and y are close (x - y is exact)."""
    t = (x - y) / y
    return where(ew.abs(t) < 0.5, ew.log1p(t), ew.log(x / y))


def _rel_entr(x, y):
    both = (x > 0.0) & (y > 0.0)
    r = where(both, x * _log_ratio(where(both, x, 1.0), where(both, y, 1.0)),
              where((x == 0.0) & (y >= 0.0), 0.0, _INF))
    return where(ew.isnan(x) | ew.isnan(y), _NAN, r)


@api_boundary
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 for x = 0 and y >= 0; inf otherwise (scipy.special.rel_entr)."""
    (x, y), d = _floats("rel_entr", x, y)
    return _rel_entr(x, y).astype(d)


@api_boundary
def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y for x = 0 and y >= 0; inf otherwise
    (scipy.special.kl_div, elementwise: not torch's pt.nn.kl_div)."""
    (x, y), d = _floats("kl_div", x, y)
    both = (x > 0.0) & (y > 0.0)
    xs, ys = where(both, x, 1.0), where(both, y, 1.0)
    direct = xs * _log_ratio(xs, ys) - xs + ys
    # x = y (1 + t): y ((1 + t) log1p(t) - t) = y sum((-t)^n / (n (n - 1)), n >= 2) for small t, where
    # the direct form cancels
    t = (xs - ys) / ys
    near = ew.abs(t) < 0.1
    tn = where(near, t, 0.0)
    series = 0.0
    for n in range(17, 1, -1):
        series = (series * tn) + (1.0 if n % 2 == 0 else -1.0) / (n * (n - 1))
    r = where(near, ys * series * tn * tn, direct)
    r = where(both, r, where((x == 0.0) & (y >= 0.0), y, _INF))
    return where(ew.isnan(x) | ew.isnan(y), _NAN, r).astype(d)


# --- exponentially scaled modified Bessel functions ----------------------------------------------
# Cephes i1.c: Chebyshev coefficients for exp(-x) I1(x) / x on [0, 8] and exp(-x) sqrt(x) I1(x) above
_I1_A = [2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1]
_I1_B = [7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1]


def _bessel_e(x, a, b, odd):
    ax = ew.abs(x)
    near_x = where(ax <= 8.0, ax, 8.0)
    far_x = where(ax <= 8.0, 9.0, ax)
    near = _chbevl(near_x * 0.5 - 2.0, a)
    if odd:
        near = near * near_x
    far = _chbevl(32.0 / far_x - 2.0, b) / ew.sqrt(far_x)
    r = where(ax <= 8.0, near, far)
    return where(x < 0.0, -r, r) if odd else r


@api_boundary
def i0e(x):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0
    (scipy.special.i0e; the Chebyshev expansions pt.i0 uses, without the exp)."""
    (x,), d = _floats("i0e", x)
    return _bessel_e(x, _I0_A, _I0_B, False).astype(d)


@api_boundary
def i1e(x):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1
    (scipy.special.i1e; Cephes' Chebyshev expansions)."""
    (x,), d = _floats("i1e", x)
    return _bessel_e(x, _I1_A, _I1_B, True).astype(d)


# the incomplete gamma functions live in their own module (imported last: it builds on this one)
from poot.scipy.incomplete_gamma import gammainc, gammaincc
