"""`pt.polynomial.polynomial`: NumPy's numpy.polynomial.polynomial (power series, coefficients lowest
degree first) for poot arrays.

Lazy: evaluation (polyval, polyval2d by Horner's rule with poot operations, so a polynomial of an
array fuses into one kernel), polyvander, polyder, polyint and polyfit (poot's lstsq, with NumPy's
column scaling). Read on the host: polyadd, polysub, polymul, polydiv, polypow, polyfromroots and
polyroots, whose result's length NumPy makes depend on the values (it trims trailing zeros; roots are
the eigenvalues of the companion matrix), as pt.roots and pt.polymul read theirs. Every function
returns poot arrays.
"""
from __future__ import annotations

import operator

import numpy as np
import numpy.polynomial.polynomial as _np_poly

from poot import dtypes as dt
from poot.errors import DomainError, ShapeError, api_boundary
from poot.polynomial.polyutils import host_series, series, to_poot
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import arange, asarray
from poot.trace.indexing import take
from poot.trace.lstsq import lstsq
from poot.trace.selection import where

__all__ = ["polyval", "polyval2d", "polyval3d", "polygrid2d", "polygrid3d", "polyvalfromroots", "polyvander",
           "polyvander2d", "polyvander3d", "polyder", "polyint", "polyfit", "polyadd", "polysub", "polymul",
           "polymulx", "polydiv", "polypow", "polyfromroots", "polyroots", "polycompanion", "polytrim",
           "polyline", "polydomain", "polyzero", "polyone", "polyx"]

polydomain = np.array([-1.0, 1.0])
polyzero = np.array([0])
polyone = np.array([1])
polyx = np.array([0, 1])


def _operand(x):
    """x as NumPy's polyval takes it: a list or tuple becomes an array, a number stays a number."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return asarray(x)
    return x


@api_boundary
def polyval(x, c, tensor=True):
    """c[0] + c[1]*x + ... + c[n]*x**n by Horner's rule, lazily. With `tensor` (the default) every
    column of a multi-dimensional c is evaluated at every element of x (the result has shape
    c.shape[1:] + x.shape); else c's columns broadcast against x."""
    c = series(c, "polyval")
    x = _operand(x)
    if tensor and isinstance(x, Array):
        c = mv.reshape(c, c.shape + (1,) * x.ndim)
    y = ew.add(c[-1], ew.multiply(x, 0))
    for k in range(2, c.shape[0] + 1):
        y = ew.add(c[-k], ew.multiply(y, x))
    return y


def _valnd(op, c, *points):
    """The n-D series c at the points (of one shape): NumPy's _valnd, lazily."""
    points = [_operand(p) for p in points]
    shapes = {p.shape if isinstance(p, Array) else np.shape(p) for p in points}
    if len(shapes) > 1:
        raise ShapeError(f"{op}: x, y{', z' if len(points) == 3 else ''} are incompatible (shapes "
                         f"{' and '.join(str(s) for s in sorted(shapes))})")
    c = polyval(points[0], c)
    for p in points[1:]:
        c = polyval(p, c, tensor=False)
    return c


def _gridnd(c, *points):
    """The n-D series c on the Cartesian product of the points: NumPy's _gridnd, lazily."""
    for p in points:
        c = polyval(_operand(p), c)
    return c


@api_boundary
def polyval2d(x, y, c):
    """The 2-D series c[i, j] * x**i * y**j at the points (x, y), lazily (x and y of one shape)."""
    return _valnd("polyval2d", c, x, y)


@api_boundary
def polyval3d(x, y, z, c):
    """The 3-D series c[i, j, k] * x**i * y**j * z**k at the points (x, y, z), lazily."""
    return _valnd("polyval3d", c, x, y, z)


@api_boundary
def polygrid2d(x, y, c):
    """The 2-D series c on the grid of x by y (shape c.shape[2:] + x.shape + y.shape), lazily."""
    return _gridnd(c, x, y)


@api_boundary
def polygrid3d(x, y, z, c):
    """The 3-D series c on the grid of x by y by z, lazily."""
    return _gridnd(c, x, y, z)


@api_boundary
def polyvalfromroots(x, r, tensor=True):
    """prod(x - r) over the roots r (axis 0), lazily; `tensor` as polyval's."""
    r = series(r, "polyvalfromroots")
    x = _operand(x)
    if isinstance(x, Array):
        if tensor:
            r = mv.reshape(r, r.shape + (1,) * x.ndim)
        elif x.ndim >= r.ndim:
            raise ShapeError("polyvalfromroots: x.ndim must be < r.ndim when tensor == False")
    return red.prod(ew.subtract(x, r), axis=0)


def vander(op, columns, x, deg):
    """The pseudo-Vandermonde matrix of x in one basis: shape x.shape + (deg + 1,), [..., i] the i-th
    basis function at x; `columns(x, deg)` lists them (clenshaw.py's forward recurrences). x is at
    least 1-D and floating, as NumPy's *vander make it. Lazy."""
    deg = operator.index(deg)
    if deg < 0:
        raise DomainError(f"{op}: deg must be non-negative, got {deg}")
    x = mv.atleast_1d(mv.arr(x)) if not isinstance(x, Array) or x.ndim == 0 else x
    if x.dtype.kind in "biu":
        x = x.astype(dt.float64)
    return mv.stack(columns(x, deg), axis=-1)


def _powers(x, deg):
    cols = [ew.add(ew.multiply(x, 0), 1)]
    for _ in range(deg):
        cols.append(ew.multiply(cols[-1], x))
    return cols


@api_boundary
def polyvander(x, deg):
    """The Vandermonde matrix of x: shape x.shape + (deg + 1,), [..., i] = x**i. Lazy."""
    return vander("polyvander", _powers, x, deg)


def _vander_nd(op, points, degs):
    """NumPy's _vander_nd_flat: the product of the 1-D Vandermonde matrices of the points (of one
    shape), each along its own axis, flattened to shape points.shape + (prod(deg + 1),). Lazy."""
    if len(degs) != len(points):
        raise ShapeError(f"{op}: expected {len(points)} dimensions of degrees, got {len(degs)}")
    pts = [mv.arr(p) for p in points]
    if len({p.shape for p in pts}) > 1:
        raise ShapeError(f"{op}: the points must have one shape, got {[p.shape for p in pts]}")
    n = len(pts)
    v = None
    for i, (p, d) in enumerate(zip(pts, degs)):
        vi = polyvander(ew.add(p, 0.0), d)
        vi = mv.reshape(vi, vi.shape[:-1] + tuple(vi.shape[-1] if j == i else 1 for j in range(n)))
        v = vi if v is None else ew.multiply(v, vi)
    return mv.reshape(v, v.shape[:-n] + (-1,))


@api_boundary
def polyvander2d(x, y, deg):
    """The pseudo-Vandermonde matrix of the points (x, y) for degrees deg = [x_deg, y_deg]. Lazy."""
    return _vander_nd("polyvander2d", (x, y), [operator.index(d) for d in deg])


@api_boundary
def polyvander3d(x, y, z, deg):
    """The pseudo-Vandermonde matrix of the points (x, y, z) for degrees deg. Lazy."""
    return _vander_nd("polyvander3d", (x, y, z), [operator.index(d) for d in deg])


def _count(m, op):
    m = operator.index(m)
    if m < 0:
        raise DomainError(f"{op}: the order of {'derivation' if op == 'polyder' else 'integration'} "
                          f"must be non-negative, got {m}")
    return m


def _degree_axis(c, axis, op):
    return mv.axis_of(axis, c.ndim, op, c)


def _along(v, ndim):
    """v (1-D, one value per degree) shaped to broadcast along axis 0 of an ndim-dimensional series."""
    return mv.reshape(v, (-1,) + (1,) * (ndim - 1))


@api_boundary
def polyder(c, m=1, scl=1, axis=0):
    """The m-th derivative of the series c along `axis`, each differentiation multiplied by scl (a
    change of variable). Lazy."""
    c = series(c, "polyder")
    m = _count(m, "polyder")
    ax = _degree_axis(c, axis, "polyder")
    c = mv.moveaxis(c, ax, 0)
    for _ in range(m):
        n = c.shape[0]
        if n <= 1:
            c = ew.multiply(c[:1], 0)
            break
        c = ew.multiply(ew.multiply(c[1:], _along(arange(1, n, dtype=c.dtype), c.ndim)), scl)
    return mv.moveaxis(c, 0, ax)


@api_boundary
def polyint(c, m=1, k=(), lbnd=0, scl=1, axis=0):
    """The m-th integral of the series c along `axis`: integration constants k (the value at lbnd of
    each integral, zeros where not given), each integration multiplied by scl. Lazy, but for a series
    of one coefficient, whose integral NumPy keeps at length one when it is zero (read then)."""
    c = series(c, "polyint")
    m = _count(m, "polyint")
    k = [k] if np.ndim(k) == 0 and not isinstance(k, (list, tuple)) else list(k)
    if len(k) > m:
        raise ShapeError(f"polyint: too many integration constants ({len(k)} for m={m})")
    if np.ndim(lbnd) != 0:
        raise ShapeError("polyint: lbnd must be a scalar")
    if np.ndim(scl) != 0:
        raise ShapeError("polyint: scl must be a scalar")
    k = k + [0] * (m - len(k))
    ax = _degree_axis(c, axis, "polyint")
    c = mv.moveaxis(c, ax, 0)
    for i in range(m):
        c = ew.multiply(c, scl)
        n = c.shape[0]
        if n == 1 and not bool(np.any(host_series(c, "polyint") != 0)):
            c = ew.add(c, k[i])
            continue
        higher = ew.divide(c, _along(arange(1, n + 1, dtype=c.dtype), c.ndim))
        tmp = mv.concatenate([ew.multiply(c[:1], 0), higher], axis=0)
        first = ew.add(tmp[0], ew.subtract(k[i], polyval(lbnd, tmp)))
        c = mv.concatenate([mv.expand_dims(first, 0), tmp[1:]], axis=0)
    return mv.moveaxis(c, 0, ax)


def fit(vander, op, x, y, deg, rcond=None, full=False, w=None):
    """NumPy's polyutils._fit, for any basis: the least-squares series of degree `deg` (an int, or the
    list of degrees to fit) through the points (x, y), lazily by poot's lstsq on `vander(x, deg)` with
    NumPy's column scaling and weights w. `full` also returns [residuals, rank, singular values,
    rcond] (NumPy warns of a deficient rank, which would read the rank: poot does not)."""
    x = ew.add(mv.arr(x), 0.0)
    y = ew.add(mv.arr(y), 0.0)
    if x.ndim != 1:
        raise ShapeError(f"{op}: expected 1-D vector for x, got {x.aval}")
    if y.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected 1-D or 2-D array for y, got {y.aval}")
    if x.shape[0] != y.shape[0]:
        raise ShapeError(f"{op}: expected x and y to have the same length, got {x.shape[0]} and {y.shape[0]}")
    degs = np.asarray(deg)
    if degs.dtype.kind not in "iu" or degs.ndim > 1 or degs.size == 0:
        raise ShapeError(f"{op}: deg must be an int or a non-empty 1-D array of ints, got {deg!r}")
    if degs.min() < 0:
        raise DomainError(f"{op}: expected deg >= 0, got {deg!r}")
    if degs.ndim == 0:
        lmax, van = int(degs), vander(x, int(degs))
    else:
        degs = np.sort(degs)
        lmax = int(degs[-1])
        van = take(vander(x, lmax), asarray(degs), axis=1)
    lhs, rhs = mv.matrix_transpose(van), mv.permute_dims(y, tuple(range(y.ndim))[::-1])
    if w is not None:
        w = mv.arr(w)
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise ShapeError(f"{op}: expected w to be 1-D of the length of x, got {w.aval}")
        lhs, rhs = ew.multiply(lhs, w), ew.multiply(rhs, w)
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype.np).eps)
    sq = ew.abs(lhs) if lhs.dtype.kind == "c" else lhs
    scl = ew.sqrt(red.sum(ew.multiply(sq, sq), axis=1))
    scl = where(ew.equal(scl, 0), 1, scl).astype(scl.dtype)
    a = ew.divide(mv.matrix_transpose(lhs), scl)
    b = mv.permute_dims(rhs, tuple(range(rhs.ndim))[::-1])
    c, resids, rank, s = lstsq(a, b, rcond)
    c = ew.divide(c, _along(scl, c.ndim))
    if degs.ndim > 0:       # the degrees not fitted get zero coefficients
        cc = mv.moveaxis(c, 0, -1)
        pos = {int(d): i for i, d in enumerate(degs)}
        cols = [cc[..., pos[d]] if d in pos else ew.multiply(cc[..., 0], 0) for d in range(lmax + 1)]
        c = mv.moveaxis(mv.stack(cols, axis=-1), -1, 0)
    if full:
        return c, [resids, rank, s, rcond]
    return c


@api_boundary
def polyfit(x, y, deg, rcond=None, full=False, w=None):
    """The least-squares power series of degree `deg` (an int, or the list of degrees to fit) through
    the points (x, y), as NumPy's polyfit (lowest degree first): lazily, by poot's lstsq on the
    Vandermonde matrix (see `fit`)."""
    return fit(polyvander, "polyfit", x, y, deg, rcond, full, w)


# --- coefficient algebra: read on the host (NumPy trims the result) ------------------------------
def _host_op(name, np_fn, doc):
    def fn(*series_args):
        hosts = [host_series(c, name) if isinstance(c, Array) else c for c in series_args]
        like = next((c for c in series_args if isinstance(c, Array)), None)
        result = np_fn(*hosts)
        if isinstance(result, tuple):
            return tuple(to_poot(r, like) for r in result)
        return to_poot(result, like)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return api_boundary(fn)


polyadd = _host_op("polyadd", _np_poly.polyadd, "c1 + c2 (trailing zeros trimmed, as NumPy). Reads the values.")
polysub = _host_op("polysub", _np_poly.polysub, "c1 - c2 (trailing zeros trimmed, as NumPy). Reads the values.")
polymul = _host_op("polymul", _np_poly.polymul, "c1 * c2 (trailing zeros trimmed, as NumPy). Reads the values.")
polydiv = _host_op("polydiv", _np_poly.polydiv, "(quotient, remainder) of c1 / c2. Reads the values.")
polyfromroots = _host_op("polyfromroots", _np_poly.polyfromroots,
                         "The monic series with the given roots. Reads the values.")
polymulx = _host_op("polymulx", _np_poly.polymulx, "c * x (the series shifted up one degree). Reads "
                                                    "the values, as NumPy's (which trims nothing) computes them.")
polycompanion = _host_op("polycompanion", _np_poly.polycompanion, "The companion matrix of the series "
                                                                  "(scaled as NumPy's). Reads the values.")
polytrim = _host_op("polytrim", _np_poly.polytrim, "The series without its trailing coefficients of "
                                                   "magnitude at most tol. Reads the values.")
polyroots = _host_op("polyroots", _np_poly.polyroots, "The roots of the series (the eigenvalues of its "
                                                      "companion matrix, sorted). Reads the values.")


@api_boundary
def polypow(c, pow, maxpower=None):  # noqa: A002 (NumPy's name)
    """c ** pow (a non-negative int; maxpower caps it, 16 by default as NumPy). Reads the values."""
    host = host_series(c, "polypow") if isinstance(c, Array) else c
    return to_poot(_np_poly.polypow(host, pow, maxpower), c)


@api_boundary
def polyline(off, scl):
    """The series off + scl*x (just [off] when scl is 0, as NumPy)."""
    return to_poot(_np_poly.polyline(off, scl))
