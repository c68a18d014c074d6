"""Evaluation of the orthogonal series of `pt.polynomial` (Chebyshev, Legendre, Hermite) by their
three-term recurrences run backwards (Clenshaw's algorithm, as NumPy's chebval, legval and hermval):
lazy poot operations, one step per coefficient, so a series of an array fuses into one kernel. The
same recurrences run forwards give the basis functions themselves (the columns of chebvander,
legvander and hermvander, which the fits solve with)."""
from __future__ import annotations

from poot.polynomial.polyutils import series
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.creation import asarray


def prepare(x, c, tensor: bool, op: str):
    """(x, c) as NumPy's *val functions take them: a list x becomes an array, and with `tensor` every
    column of c is evaluated at every element of x."""
    c = series(c, op)
    if isinstance(x, (list, tuple)):
        x = asarray(x)
    if tensor and isinstance(x, Array):
        c = mv.reshape(c, c.shape + (1,) * x.ndim)
    return x, c


def finish(c, x, c0, c1, scale=1):
    """c0 + c1*scale*x, of the shape NumPy's result has (a series of one coefficient still meets x)."""
    if c.shape[0] == 1:
        return ew.add(c0, ew.multiply(x, 0))
    return ew.add(c0, ew.multiply(c1, ew.multiply(x, scale)))


def chebyshev(x, c):
    if c.shape[0] <= 2:
        return finish(c, x, c[0], c[-1])
    x2 = ew.multiply(x, 2)
    c0, c1 = c[-2], c[-1]
    for i in range(3, c.shape[0] + 1):
        c0, c1 = ew.subtract(c[-i], c1), ew.add(c0, ew.multiply(c1, x2))
    return finish(c, x, c0, c1)


def legendre(x, c):
    if c.shape[0] <= 2:
        return finish(c, x, c[0], c[-1])
    nd = c.shape[0]
    c0, c1 = c[-2], c[-1]
    for i in range(3, c.shape[0] + 1):
        nd -= 1
        c0, c1 = (ew.subtract(c[-i], ew.divide(ew.multiply(c1, nd - 1), nd)),
                  ew.add(c0, ew.divide(ew.multiply(ew.multiply(c1, x), 2 * nd - 1), nd)))
    return finish(c, x, c0, c1)


def hermite(x, c):
    """Physicists' Hermite series (H_1 = 2x)."""
    if c.shape[0] <= 2:
        return finish(c, x, c[0], c[-1], 2)
    x2 = ew.multiply(x, 2)
    nd = c.shape[0]
    c0, c1 = c[-2], c[-1]
    for i in range(3, c.shape[0] + 1):
        nd -= 1
        c0, c1 = ew.subtract(c[-i], ew.multiply(c1, 2 * (nd - 1))), ew.add(c0, ew.multiply(c1, x2))
    return finish(c, x, c0, c1, 2)


def chebyshev_columns(x, deg):
    """T_0(x) .. T_deg(x): T_1 = x, T_i = 2x T_(i-1) - T_(i-2) (NumPy's chebvander)."""
    cols = [ew.add(ew.multiply(x, 0), 1)]
    if deg > 0:
        cols.append(x)
        x2 = ew.multiply(x, 2)
        for _ in range(2, deg + 1):
            cols.append(ew.subtract(ew.multiply(cols[-1], x2), cols[-2]))
    return cols


def legendre_columns(x, deg):
    """P_0(x) .. P_deg(x): P_1 = x, P_i = (P_(i-1) x (2i - 1) - P_(i-2) (i - 1)) / i (NumPy's legvander)."""
    cols = [ew.add(ew.multiply(x, 0), 1)]
    if deg > 0:
        cols.append(x)
        for i in range(2, deg + 1):
            cols.append(ew.divide(ew.subtract(ew.multiply(ew.multiply(cols[-1], x), 2 * i - 1),
                                              ew.multiply(cols[-2], i - 1)), i))
    return cols


def hermite_columns(x, deg):
    """H_0(x) .. H_deg(x), physicists': H_1 = 2x, H_i = 2x H_(i-1) - 2(i - 1) H_(i-2) (NumPy's
    hermvander)."""
    cols = [ew.add(ew.multiply(x, 0), 1)]
    if deg > 0:
        x2 = ew.multiply(x, 2)
        cols.append(x2)
        for i in range(2, deg + 1):
            cols.append(ew.subtract(ew.multiply(cols[-1], x2), ew.multiply(cols[-2], 2 * (i - 1))))
    return cols
