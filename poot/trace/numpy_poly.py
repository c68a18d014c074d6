"""NumPy's polynomial functions on coefficient arrays, highest power first (polyval, polyadd,
polysub, polymul, polyder, polyint, polyfit) and the np.poly1d class over them. (gradient and unwrap
are in numpy_gradient.py, histogram2d and histogramdd in numpy_histdd.py.)

All lazy but polymul (NumPy trims leading zero coefficients first, which reads the values): Horner
steps, padding and convolution for the polynomials, lstsq for polyfit (NumPy's
column scaling, no rank warning, which would need to read the rank). roots (the eigenvalues of the companion
matrix, computed on the host by NumPy once the values are read) and polydiv read the values, as polymul does: NumPy trims
zeros first, so the result's length depends on them; poly is lazy but for complex zeros (NumPy returns
real coefficients where the zeros come in conjugate pairs, a dtype that depends on the values).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.indexing import refuse_data_dependent
from poot.trace.lazy import is_tracing
from poot.trace.creation import arange, asarray, zeros, zeros_like
from poot.trace.array_api_linalg import inv
from poot.trace.linalg import matmul
from poot.trace.lstsq import lstsq
from poot.trace.movement import arr
from poot.trace.numpy_extras import vander
from poot.trace.numpy_signals import convolve
from poot.trace.array_api_sets import argsort
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


def _coeffs(p, op):
    x = arr(p)
    if x.ndim > 1:
        raise ShapeError(f"{op}: coefficients must be 1-D, got {x.aval}")
    return mv.reshape(x, (-1,))


# --- polynomials ---------------------------------------------------------------------------------
def _keeps_poly1d(fn, n_poly: int, wrap: bool = True, compose: bool = False):
    """`fn` taking np.poly1d's place in NumPy's functions: its first `n_poly` arguments may be poly1d
    objects (their coefficients are used), and then the result is a poly1d too (each part of a
    tuple), as NumPy returns. With `compose`, a poly1d x (polyval's) gives the composition p(x)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        head = args[:n_poly]
        if compose and len(args) > 1 and isinstance(args[1], poly1d):
            return poly1d(head[0])(args[1])
        given = any(isinstance(a, poly1d) for a in head)
        out = fn(*(a.coeffs if isinstance(a, poly1d) else a for a in head), *args[n_poly:], **kwargs)
        if not (given and wrap):
            return out
        return tuple(poly1d(o) for o in out) if isinstance(out, tuple) else poly1d(out)

    return call


def _polyval(p, x):
    c = arr(p, "polyval", (x,))
    xs = arr(x, "polyval", (c,))
    y = zeros_like(xs)
    for k in range(c.shape[0] if c.ndim else 0):
        y = ew.add(ew.multiply(y, xs), c[k])
    return y


def _padded_pair(a1, a2, op):
    a, b = _coeffs(a1, op), _coeffs(a2, op)
    n = max(a.shape[0], b.shape[0])
    a = mv.concatenate([zeros(n - a.shape[0], dtype=a.dtype), a]) if a.shape[0] < n else a
    b = mv.concatenate([zeros(n - b.shape[0], dtype=b.dtype), b]) if b.shape[0] < n else b
    return a, b


def _polyadd(a1, a2):
    return ew.add(*_padded_pair(a1, a2, "polyadd"))


def _polysub(a1, a2):
    return ew.subtract(*_padded_pair(a1, a2, "polysub"))


def _leading_zeros_trimmed(a, op):
    """a without its leading zeros ([0] if all are), as NumPy's poly1d makes it: the length depends
    on the values, so they are read."""
    refuse_data_dependent(f"{op}()", "NumPy trims the leading zero coefficients first",
                          "use convolve for the untrimmed product")
    host = a.numpy() if isinstance(a, Array) else np.asarray(a)
    hit = np.flatnonzero(host)
    return a[int(hit[0]):] if hit.size else mv.reshape(zeros(1, dtype=a.dtype), (1,))


def _polymul(a1, a2):
    a, b = _coeffs(a1, "polymul"), _coeffs(a2, "polymul")
    return convolve(_leading_zeros_trimmed(a, "polymul"), _leading_zeros_trimmed(b, "polymul"))


def _polyder(p, m=1):
    m = operator.index(m)
    if m < 0:
        raise ShapeError(f"polyder: order of derivative must be positive (see polyint), got {m}")
    c = arr(p)
    for _ in range(m):
        n = c.shape[0] - 1
        c = ew.multiply(c[:-1], arange(n, 0, -1))
    return c


def _polyint(p, m=1, k=None):
    m = operator.index(m)
    if m < 0:
        raise ShapeError(f"polyint: order of integral must be positive (see polyder), got {m}")
    ks = [0] * m if k is None else ([k] * m if np.ndim(k) == 0 else list(k))
    if len(ks) < m:
        raise ShapeError("polyint: k must be a scalar or a sequence of at least m values")
    c = arr(p)
    for j in range(m):
        n = c.shape[0]
        c = mv.concatenate([ew.divide(c, arange(n, 0, -1)), asarray([ks[j]])])
    return c


def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    order = operator.index(deg) + 1
    if order < 1:
        raise ShapeError(f"polyfit: expected deg >= 0, got {deg}")
    xs, ys = ew.add(arr(x), 0.0), ew.add(arr(y), 0.0)
    if xs.ndim != 1 or xs.size == 0:
        raise ShapeError(f"polyfit: expected a non-empty 1-D x, got {xs.aval}")
    if ys.ndim not in (1, 2) or ys.shape[0] != xs.shape[0]:
        raise ShapeError(f"polyfit: y {ys.aval} needs a 1-D or 2-D array of x's length {xs.shape[0]}")
    if rcond is None:
        rcond = xs.shape[0] * float(np.finfo(xs.dtype.np).eps)
    lhs, rhs = vander(xs, order), ys
    if w is not None:
        ws = ew.add(arr(w), 0.0)
        if ws.shape != (xs.shape[0],):
            raise ShapeError(f"polyfit: w must be 1-D of x's length {xs.shape[0]}, got {ws.aval}")
        lhs = ew.multiply(lhs, mv.reshape(ws, (-1, 1)))
        rhs = ew.multiply(rhs, mv.reshape(ws, (-1, 1)) if rhs.ndim == 2 else ws)
    scale = ew.sqrt(red.sum(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = ew.divide(c, mv.reshape(scale, (-1, 1)) if c.ndim == 2 else scale)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = ew.divide(inv(matmul(mv.matrix_transpose(lhs), lhs)), ew.multiply(mv.reshape(scale, (-1, 1)), scale))
    if cov == "unscaled":
        fac = 1.0
    else:
        if xs.shape[0] <= order:
            raise ShapeError("polyfit: the number of data points must exceed order to scale the covariance matrix")
        fac = ew.divide(resids, xs.shape[0] - order)
    if ys.ndim == 1:
        return c, ew.multiply(base, fac)
    return c, ew.multiply(mv.expand_dims(base, -1), fac)


def _host_values(a: Array, op: str, why: str, fix: str) -> np.ndarray:
    refuse_data_dependent(f"{op}()", why, fix)
    return a.numpy()


def _roots_fixed_length(c):
    """JAX's roots(p, strip_zeros=False), lazy: the eigenvalues of the companion matrix of p with its
    k leading zeros rolled to the end (each trailing zero gives a zero root), the zero roots sorted
    last and the final k roots NaN; always complex, len(p) - 1 of them."""
    from poot.trace.indexing import take_along_axis
    from poot.trace.linalg_extra import eigvals

    n = c.shape[0] - 1
    if c.dtype.kind not in "fc" or c.dtype in (dt.float16, dt.bfloat16):
        c = c.astype(dt.float32 if c.dtype in (dt.float16, dt.bfloat16) else dt.float64)
    cplx = dt.complex_dtype(dt.real_dtype(c.dtype))
    if n < 1:
        return zeros(0, dtype=cplx, device=c.device)
    zero = ew.equal(c, 0)
    lead = where(red.all(zero), n + 1, red.argmin(zero))     # the count of leading zeros
    c = where(ew.equal(lead, n + 1), 1, c).astype(c.dtype)   # all zero: no LAPACK error, all NaN
    c = mv.roll(c, ew.negative(lead))
    rows = arange(n, device=c.device)
    sub = ew.equal(mv.reshape(rows, (-1, 1)), ew.add(rows, 1)).astype(c.dtype)  # ones below the diagonal
    top = ew.negative(ew.divide(c[1:], c[0]))
    a = where(ew.equal(mv.reshape(rows, (-1, 1)), 0), top, sub)
    r = eigvals(a).astype(cplx)
    r = take_along_axis(r, argsort(ew.equal(r, 0).astype(dt.int8)), axis=0)   # stable
    return where(ew.less(arange(n, device=c.device), ew.subtract(n, lead)), r,
                 asarray(complex(np.nan, np.nan), dtype=cplx, device=c.device))


def _roots(p, *, strip_zeros=True):
    c = mv.atleast_1d(arr(p))
    if c.ndim != 1:
        raise ShapeError(f"roots: input must be a rank-1 array, got {c.aval}")
    if not strip_zeros:
        return _roots_fixed_length(c)
    host = _host_values(c, "roots", "NumPy trims the leading and trailing zero coefficients first",
                        "call it outside the traced function")
    if c.dtype in (dt.float16, dt.bfloat16):     # LAPACK has no half precision: float32, as linalg
        host = host.astype(np.float32)
    # the values are at hand: NumPy's own companion matrix and LAPACK call (the real solver for real
    # coefficients, so real roots come out exactly real and the result is real, as np.roots gives)
    r = np.roots(host)
    return asarray(r, device=c.device)


def _poly(seq_of_zeros):
    from poot.trace.linalg_extra import eigvals

    z = mv.atleast_1d(arr(seq_of_zeros))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        real_matrix = z.dtype.kind != "c"
        z = eigvals(z)
    elif z.ndim == 1:
        real_matrix = False
        if z.dtype.kind not in "fc" or z.dtype in (dt.float16, dt.bfloat16):
            z = z.astype(dt.float64)                 # np.mintypecode: float64 for other dtypes
    else:
        raise ShapeError(f"poly: input must be 1d or non-empty square 2d array, got {z.aval}")
    if z.shape[0] == 0:
        return 1.0
    a = asarray([1], dtype=z.dtype, device=z.device)
    zero = zeros(1, dtype=z.dtype, device=z.device)
    for k in range(z.shape[0]):     # a * (x - z[k]): shift and subtract
        a = ew.subtract(mv.concatenate([a, zero]), ew.multiply(z[k], mv.concatenate([zero, a])))
    if a.dtype.kind == "c":
        from poot.trace.complex_values import real_of

        if real_matrix:        # a real matrix's eigenvalues come in conjugate pairs
            return real_of(a)
        r = _host_values(z, "poly", "NumPy returns real coefficients when the complex zeros come "
                         "in conjugate pairs, a dtype that depends on the values",
                         "call it outside the traced function")
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            return real_of(a)
    return a


def _polydiv(u, v):
    a = ew.add(mv.atleast_1d(arr(u, "polydiv", (v,))), 0.0)
    b = ew.add(mv.atleast_1d(arr(v, "polydiv", (u,))), 0.0)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"polydiv: coefficients must be 1-D, got {a.aval} and {b.aval}")
    d = dt.result_type(a.dtype, b.dtype)
    a, b = a.astype(d), b.astype(d)
    m, n = a.shape[0] - 1, b.shape[0] - 1
    scale = ew.divide(1.0, b[0])
    q, r = [], a
    for k in range(m - n + 1):       # NumPy's long division, one quotient coefficient at a time
        f = ew.multiply(scale, r[k])
        q.append(f)
        r = mv.concatenate([r[:k], ew.subtract(r[k:k + n + 1], ew.multiply(f, b)), r[k + n + 1:]])
    q = mv.stack(q) if q else zeros(1, dtype=d, device=a.device)
    host = _host_values(r, "polydiv", "NumPy trims the remainder's leading (near) zeros",
                        "call it outside the traced function")
    lead = 0
    while host.shape[-1] - lead > 1 and np.allclose(host[lead], 0, rtol=1e-14):
        lead += 1
    return q, r[lead:]


_export("roots", _keeps_poly1d(_roots, 1, wrap=False),
        "The roots of a polynomial (coefficients highest power first): the eigenvalues of its companion "
        "matrix, as np.roots (real when every root is). Reads the values (zeros are trimmed first); the "
        "eigenvalues are a host step. strip_zeros=False (JAX's) keeps len(p) - 1 complex roots, NaN for "
        "each leading zero, and is lazy, so it works inside @pt.jit.")
_export("poly", _poly, "The coefficients of the monic polynomial with the given zeros (or a square "
                       "matrix's characteristic polynomial), as np.poly. Lazy, but complex zeros are "
                       "read to decide whether the result is real (NumPy's rule).")
_export("polydiv", _keeps_poly1d(_polydiv, 2), "(quotient, remainder) of polynomial division u / v, as "
        "np.polydiv (the remainder's leading near-zeros trimmed, which reads the values).")
_export("polyval", _keeps_poly1d(_polyval, 1, wrap=False, compose=True),
        "The polynomial p (highest power first) at x, by Horner's rule. Lazy.")
_export("polyadd", _keeps_poly1d(_polyadd, 2),
        "The sum of two polynomials (coefficient arrays, highest power first). Lazy.")
_export("polysub", _keeps_poly1d(_polysub, 2), "The difference of two polynomials (a1 - a2). Lazy.")
_export("polymul", _keeps_poly1d(_polymul, 2), "The product of two polynomials: the convolution of the "
        "coefficients without their leading zeros, as np.polymul (reads the values to trim them).")
_export("polyder", _keeps_poly1d(_polyder, 1), "The m-th derivative of a polynomial. Lazy.")
_export("polyint", _keeps_poly1d(_polyint, 1),
        "The m-th antiderivative of a polynomial, integration constants k. Lazy.")
_export("polyfit", _polyfit, "Least-squares polynomial coefficients of degree deg (weights w, full "
                             "results, covariance), as np.polyfit through lstsq. Lazy; no RankWarning.")


# --- poly1d --------------------------------------------------------------------------------------
def _is_scalar(v) -> bool:
    return np.isscalar(v) or (isinstance(v, Array) and v.ndim == 0)


class poly1d:
    """np.poly1d over a poot coefficient array (highest power first): `p = pt.poly1d(pt.polyfit(x, y,
    3)); p(x)`, with NumPy's attributes (coeffs, order, roots, variable), arithmetic, deriv and integ.

    NumPy drops the leading zero coefficients, which reads them: poot does so where the values are at
    hand, and inside a traced function (@pt.jit, a loop body) keeps the coefficients as given, so that
    a poly1d works there too: evaluation, sums, products, powers, derivatives and integrals are lazy
    and give NumPy's values; `order` then counts any leading zeros. Division, roots, comparison and the
    text forms read the coefficients, as np.polydiv and np.roots do."""

    __hash__ = None

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, poly1d):
            self._coeffs, self._variable = c_or_r._coeffs, c_or_r._variable
            if variable is not None:
                self._variable = variable
            return
        c = mv.atleast_1d(_poly(c_or_r) if r else arr(c_or_r))
        if c.ndim > 1:
            raise ShapeError(f"poly1d: polynomial must be 1d only, got {c.aval}")
        if not is_tracing():
            host = c.numpy()
            hit = np.flatnonzero(host)
            c = c[int(hit[0]):] if hit.size else zeros(1, dtype=c.dtype, device=c.device)
        self._coeffs = c
        self._variable = variable or "x"

    # --- attributes, as NumPy's -------------------------------------------------------------------
    @property
    def coeffs(self) -> Array:
        return self._coeffs

    c = coef = coefficients = coeffs

    @property
    def order(self) -> int:
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def variable(self) -> str:
        return self._variable

    @property
    def roots(self) -> Array:
        return _roots(self._coeffs)

    r = roots

    def __len__(self) -> int:
        return self.order

    def __iter__(self):
        return iter(self._coeffs)

    def __array__(self, dtype=None, copy=None):
        a = self._coeffs.numpy()
        return a if dtype is None else a.astype(dtype)

    def _host(self) -> np.poly1d:
        return np.poly1d(self._coeffs.numpy(), variable=self._variable)

    def __repr__(self) -> str:
        if is_tracing():
            return f"poly1d(<traced {self._coeffs.aval}>)"
        return repr(self._host())

    def __str__(self) -> str:
        return repr(self) if is_tracing() else str(self._host())

    # --- lazy -------------------------------------------------------------------------------------
    def __call__(self, val):
        """p(val): Horner's rule (lazy); a poly1d val gives the composition p(val(x))."""
        if isinstance(val, poly1d):     # Horner's rule over poly1d objects
            out = poly1d(self._coeffs[:1])
            for k in range(1, self._coeffs.shape[0]):
                out = out * val + self._coeffs[k]
            return out
        return _polyval(self._coeffs, val)

    def deriv(self, m=1) -> poly1d:
        return poly1d(_polyder(self._coeffs, m))

    def integ(self, m=1, k=0) -> poly1d:
        return poly1d(_polyint(self._coeffs, m, k))

    def __neg__(self) -> poly1d:
        return poly1d(ew.negative(self._coeffs))

    def __pos__(self) -> poly1d:
        return self

    def __add__(self, other) -> poly1d:
        return poly1d(_polyadd(self._coeffs, poly1d(other)._coeffs))

    __radd__ = __add__

    def __sub__(self, other) -> poly1d:
        return poly1d(_polysub(self._coeffs, poly1d(other)._coeffs))

    def __rsub__(self, other) -> poly1d:
        return poly1d(_polysub(poly1d(other)._coeffs, self._coeffs))

    def __mul__(self, other) -> poly1d:
        if _is_scalar(other):
            return poly1d(ew.multiply(self._coeffs, other))
        return poly1d(convolve(self._coeffs, poly1d(other)._coeffs))   # both trimmed: NumPy's polymul

    __rmul__ = __mul__

    def __pow__(self, val) -> poly1d:
        if not np.isscalar(val) or int(val) != val or val < 0:
            raise ShapeError(f"poly1d: power to non-negative integers only, got {val!r}")
        out = asarray([1], device=self._coeffs.device)     # NumPy's [1]: int64 for a 0th power
        for _ in range(int(val)):
            out = convolve(self._coeffs, out)
        return poly1d(out)

    def __getitem__(self, power):
        """The coefficient of x**power (0 beyond the order), as NumPy's."""
        power = operator.index(power)
        if power > self.order or power < 0:
            return zeros((), dtype=self._coeffs.dtype, device=self._coeffs.device)
        return self._coeffs[self.order - power]

    def __setitem__(self, power, value):
        """Sets the coefficient of x**power, growing the polynomial as NumPy does (a new array: poot
        arrays are values)."""
        power = operator.index(power)
        if power < 0:
            raise ShapeError("poly1d: does not support negative powers")
        c = self._coeffs
        if power > self.order:
            c = mv.concatenate([zeros(power - self.order, dtype=c.dtype, device=c.device), c])
        self._coeffs = c.at[c.shape[0] - 1 - power].set(value)

    # --- read on the host -------------------------------------------------------------------------
    def __truediv__(self, other):
        if _is_scalar(other):
            return poly1d(ew.divide(self._coeffs, other))
        q, rem = _polydiv(self._coeffs, poly1d(other)._coeffs)
        return poly1d(q), poly1d(rem)

    def __rtruediv__(self, other):
        if _is_scalar(other):
            return poly1d(ew.divide(other, self._coeffs))
        q, rem = _polydiv(poly1d(other)._coeffs, self._coeffs)
        return poly1d(q), poly1d(rem)

    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        return bool(red.all(ew.equal(self._coeffs, other._coeffs)))

    def __ne__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        return not self == other


__all__.append("poly1d")
