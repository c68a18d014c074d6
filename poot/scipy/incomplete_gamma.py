"""The regularized incomplete gamma functions of `pt.scipy.special` (gammainc, gammaincc): Cephes'
power series and continued fraction, each a while_loop run to the dtype's precision, with derivatives
in both arguments (custom JVPs). Kept apart from poot/scipy/special.py, whose helpers they use (read
through the module at call time, so either module may be imported first)."""
from __future__ import annotations

from poot.errors import api_boundary
from poot.scipy import special as _sp
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace.control import while_loop
from poot.trace.movement import broadcast_arrays
from poot.trace.selection import where
from poot.transforms import custom_jvp

__all__ = ["gammainc", "gammaincc"]


# --- the regularized incomplete gamma functions --------------------------------------------------
# the continued fraction converges in a few dozen steps; the series near x = a takes about 9 sqrt(a)
_IGAMMA_MAX_STEPS = 2000
_IGAMMA_SERIES_MAX_STEPS = 100_000


def _igamma_series(x, a, enabled, eps):
    """(sum, d sum / da) of the series sum(x^n / ((a+1)...(a+n))), P(a, x) = sum x^a e^-x / Gamma(a+1)
    (Cephes' igam), iterated in a while_loop until every enabled element has converged."""
    one = ew.add(ew.multiply(x, 0.0), 1.0)
    zero = one * 0.0

    def body(s):
        en, n, r, c, ans, dc, dans = s
        r2 = r + 1.0
        dc2 = dc * (x / r2) - c * x / (r2 * r2)
        c2 = c * (x / r2)
        ans2, dans2 = ans + c2, dans + dc2
        go = en & ((c2 > eps * ans2) | (ew.abs(dc2) > eps * ew.abs(dans2))) & (n < _IGAMMA_SERIES_MAX_STEPS)
        return (go, n + 1, where(en, r2, r), where(en, c2, c), where(en, ans2, ans), where(en, dc2, dc),
                where(en, dans2, dans))

    s = while_loop(lambda s: red.any(s[0]), body, (enabled, 0, a, one, one, zero, zero))
    return s[4], s[6]


def _igammac_fraction(x, a, enabled, eps):
    """(f, df/da) of the continued fraction with Q(a, x) = f x^a e^-x / Gamma(a) (Cephes' igamc),
    iterated until every enabled element has converged."""
    y = 1.0 - a
    z = x + y + 1.0
    pkm2 = x * 0.0 + 1.0
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    zero = x * 0.0
    dqkm1 = -x
    dans = -ans * dqkm1 / qkm1
    big = 1.0 / eps

    def body(s):
        en, c, ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans = s
        c2, y2, z2 = c + 1.0, y + 1.0, z + 2.0
        yc = y2 * c2
        pk = pkm1 * z2 - pkm2 * yc
        qk = qkm1 * z2 - qkm2 * yc
        nz = qk != 0.0
        r = pk / where(nz, qk, 1.0)
        t = where(nz, ew.abs((ans - r) / where(r != 0.0, r, 1.0)), 1.0)
        ans2 = where(nz, r, ans)
        dpk = dpkm1 * z2 - pkm1 - dpkm2 * yc + pkm2 * c2
        dqk = dqkm1 * z2 - qkm1 - dqkm2 * yc + qkm2 * c2
        dans2 = where(nz, (dpk - ans2 * dqk) / where(nz, qk, 1.0), dans)
        dt_ = where(nz, ew.abs(dans2 - dans), 1.0)
        scale = where(ew.abs(pk) > big, eps, 1.0).astype(x.dtype)     # keep the recurrences finite
        new = (pk * scale, qk * scale, pkm1 * scale, qkm1 * scale, dpk * scale, dqk * scale,
               dpkm1 * scale, dqkm1 * scale)
        old = (pkm1, qkm1, pkm2, qkm2, dpkm1, dqkm1, dpkm2, dqkm2)
        kept = tuple(where(en, nv, ov) for nv, ov in zip(new, old))
        go = en & ((t > eps) | (dt_ > eps)) & (c2 < _IGAMMA_MAX_STEPS)
        return (go, c2, where(en, ans2, ans), where(en, y2, y), where(en, z2, z), kept[0], kept[1], kept[2],
                kept[3], kept[6], kept[7], kept[4], kept[5], where(en, dans2, dans))

    init = (enabled, zero, ans, zero + y, z, pkm1, qkm1, pkm2, qkm2, zero, zero, zero, dqkm1, dans)
    s = while_loop(lambda s: red.any(s[0]), body, init)
    return s[2], s[13]


def _igamma_parts(a, x):
    """(P(a, x), Q(a, x), dP/da) for a, x of one shape and dtype."""
    eps = _sp._eps(x)
    nan = ew.isnan(a) | ew.isnan(x)
    domain = (x < 0.0) | (a < 0.0) | ((a == 0.0) & (x == 0.0)) | nan
    x_inf = x == _sp._INF
    trivial = domain | x_inf | (x == 0.0) | (a == 0.0) | (a == _sp._INF)
    use_cf = (x >= 1.0) & (x > a)
    aa = where(trivial, 1.0, a)
    xx = where(trivial, 1.0, x)
    log_ax = aa * ew.log(xx) - xx - _sp._gammaln(aa)
    # for a >= 8, with x = a (1 + t) and Stirling's log Gamma(a), the same as
    # a (log1p(t) - t) + log(a) / 2 - log(2 pi) / 2 - corr(a): no two terms of size a log x cancel
    ab = where(aa >= 8.0, aa, 8.0)
    t = (xx - ab) / ab
    stirling = ab * (ew.log1p(t) - t) + 0.5 * ew.log(ab) - _sp._LOG_2PI_HALF - _sp._stirling_corr(ab)
    log_ax = where(aa >= 8.0, stirling, log_ax)
    ax = ew.exp(log_ax)
    s_ans, s_dans = _igamma_series(xx, aa, ~trivial & ~use_cf, eps)
    f_ans, f_dans = _igammac_fraction(xx, aa, ~trivial & use_cf, eps)
    p_series = s_ans * ax / aa
    q_cf = f_ans * ax
    dp_series = ax * (s_ans * (ew.log(xx) - _sp._digamma(aa + 1.0)) + s_dans) / aa
    dq_cf = ax * (f_ans * (ew.log(xx) - _sp._digamma(aa)) + f_dans)
    p = where(use_cf, 1.0 - q_cf, p_series)
    q = where(use_cf, q_cf, 1.0 - p_series)
    dp = where(use_cf, -dq_cf, dp_series)
    one_at = x_inf | ((a == 0.0) & (x > 0.0))
    zero_at = (x == 0.0) | ((a == _sp._INF) & ~x_inf)
    p = where(one_at, 1.0, where(zero_at, 0.0, p))
    q = where(one_at, 0.0, where(zero_at, 1.0, q))
    dp = where(one_at | zero_at, 0.0, dp)
    return where(domain, _sp._NAN, p), where(domain, _sp._NAN, q), where(domain, _sp._NAN, dp)


def _density(a, x):
    """dP(a, x)/dx = x^(a-1) e^-x / Gamma(a)."""
    return ew.exp(_sp._xlogy(a - 1.0, x, ew.log) - x - _sp._gammaln(a))


def _broadcast(a, x):
    return tuple(broadcast_arrays(a, x))


@custom_jvp
def _gammainc_core(a, x):
    return _igamma_parts(a, x)[0]


@custom_jvp
def _gammaincc_core(a, x):
    return _igamma_parts(a, x)[1]


@_gammainc_core.defjvp
def _gammainc_jvp(primals, tangents):
    a, x = primals
    ta, tx = tangents
    p, _, dp = _igamma_parts(a, x)
    return p, ta * dp + tx * _density(a, x)


@_gammaincc_core.defjvp
def _gammaincc_jvp(primals, tangents):
    a, x = primals
    ta, tx = tangents
    _, q, dp = _igamma_parts(a, x)
    return q, -(ta * dp + tx * _density(a, x))


def _gammainc_value(a, x):
    return _gammainc_core(*_broadcast(a, x))


def _gammaincc_value(a, x):
    return _gammaincc_core(*_broadcast(a, x))


@api_boundary
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a)
    (scipy.special.gammainc): Cephes' power series for x < max(1, a), its continued fraction for
    Q = 1 - P elsewhere, each a while_loop run to the dtype's precision. Differentiable in x and in
    a (the series' derivative in a is carried along with it)."""
    (a, x), d = _sp._floats("gammainc", a, x)
    return _gammainc_value(a, x).astype(d)


@api_boundary
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (scipy.special.gammaincc), accurate where Q is tiny."""
    (a, x), d = _sp._floats("gammaincc", a, x)
    return _gammaincc_value(a, x).astype(d)
