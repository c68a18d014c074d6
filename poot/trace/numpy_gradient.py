"""NumPy's numerical differences on arrays: gradient (central differences inside, one-sided ones of
edge_order 1 or 2 at the ends, for uniform or coordinate spacings) and unwrap. Both lazy: shifted
differences, so they trace under @pt.jit.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.movement import arr, axis_of
from poot.trace.numpy_more import diff
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


def _spacing_arg(d, n, ax):
    """One axis's spacing: a uniform step (a Python float, or a 0-d Array kept lazy so that a traced
    step works under @pt.jit) or a float64 Array of the n-1 coordinate steps."""
    if np.ndim(d) == 0:
        return d if isinstance(d, Array) else float(d)
    c = arr(d)
    if c.ndim != 1:
        raise ShapeError(f"gradient: distances must be either scalars or 1d, got {c.aval}")
    if c.shape[0] != n:
        raise ShapeError(f"gradient: when 1d, distances must match the length of the corresponding "
                         f"dimension (axis {ax}: {c.shape[0]} for {n})")
    if c.dtype.kind in "iub":
        c = c.astype(dt.float64)
    steps = diff(c)
    if not isinstance(d, Array):
        host = np.diff(np.asarray(d, dtype=c.dtype.np))
        if host.size and (host == host[0]).all():     # uniform: NumPy's simpler formula
            return host[0].item() if isinstance(host[0], np.generic) else host[0]
    return steps


def _gradient(f, *varargs, axis=None, edge_order=1):
    x = arr(f)
    n_dim = x.ndim
    if axis is None:
        axes = tuple(range(n_dim))
    else:               # in the order given: the results follow it
        axes = tuple(axis_of(a, n_dim, "gradient", x) for a in ((axis,) if np.ndim(axis) == 0 else axis))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"gradient: repeated axis in {axis!r}")
    if edge_order not in (1, 2):
        raise ShapeError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        dx = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        dx = list(varargs)
    else:
        raise ShapeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    if x.dtype.kind in "iu":
        x = x.astype(dt.float64)
    elif x.dtype.kind == "b":
        raise DTypeError("gradient: boolean input has no differences; convert it to numbers first")
    od = x.dtype
    out = []
    for ax, d in zip(axes, dx):
        n = x.shape[ax]
        if n < edge_order + 1:
            raise ShapeError(f"gradient: shape of array too small to calculate a numerical gradient, "
                             f"at least (edge_order + 1) elements are required (axis {ax} has {n})")
        h = _spacing_arg(d, n, ax)
        out.append(_gradient_axis(x, ax, h, edge_order).astype(od))
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_axis(x, ax, h, order):
    lead = (slice(None),) * ax

    def s(a, b=None):
        return x[lead + (slice(a, b),)]

    def along(v):             # a 1-D step array shaped to broadcast along `ax`
        return mv.reshape(v, (-1,) + (1,) * (x.ndim - ax - 1))

    uniform = not isinstance(h, Array) or h.ndim == 0
    if uniform:
        mid = ew.divide(ew.subtract(s(2), s(None, -2)), 2.0 * h)
    else:
        d1, d2 = along(h[:-1]), along(h[1:])
        a = ew.divide(ew.negative(d2), ew.multiply(d1, ew.add(d1, d2)))
        b = ew.divide(ew.subtract(d2, d1), ew.multiply(d1, d2))
        c = ew.divide(d1, ew.multiply(d2, ew.add(d1, d2)))
        mid = ew.add(ew.add(ew.multiply(a, s(None, -2)), ew.multiply(b, s(1, -1))), ew.multiply(c, s(2)))
    if order == 1:
        h0, hn = (h, h) if uniform else (h[0], h[-1])
        first = ew.divide(ew.subtract(s(1, 2), s(0, 1)), h0)
        last = ew.divide(ew.subtract(s(-1), s(-2, -1)), hn)
    else:
        if uniform:
            a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
            a2, b2, c2 = 0.5 / h, -2.0 / h, 1.5 / h
        else:
            d1, d2 = h[0], h[1]
            a = ew.divide(ew.negative(ew.add(ew.multiply(d1, 2.0), d2)), ew.multiply(d1, ew.add(d1, d2)))
            b = ew.divide(ew.add(d1, d2), ew.multiply(d1, d2))
            c = ew.divide(ew.negative(d1), ew.multiply(d2, ew.add(d1, d2)))
            d1, d2 = h[-2], h[-1]
            a2 = ew.divide(d2, ew.multiply(d1, ew.add(d1, d2)))
            b2 = ew.divide(ew.negative(ew.add(d2, d1)), ew.multiply(d1, d2))
            c2 = ew.divide(ew.add(ew.multiply(d2, 2.0), d1), ew.multiply(d2, ew.add(d1, d2)))
        first = ew.add(ew.add(ew.multiply(a, s(0, 1)), ew.multiply(b, s(1, 2))), ew.multiply(c, s(2, 3)))
        last = ew.add(ew.add(ew.multiply(a2, s(-3, -2)), ew.multiply(b2, s(-2, -1))), ew.multiply(c2, s(-1)))
    d = x.dtype
    return mv.concatenate([first.astype(d), mid.astype(d), last.astype(d)], axis=ax)


def _unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    x = arr(p)
    ax = axis_of(axis, x.ndim, "unwrap", x)
    dd = diff(x, axis=ax)
    if discont is None:
        discont = period / 2
    weak = isinstance(period, (int, float)) and not isinstance(period, bool)
    d = dt.promote_with_scalar(dd.dtype, period) if weak else dt.result_type(dd.dtype, arr(period).dtype)
    if d.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddw = dd.astype(d)
    ddmod = ew.add(ew.remainder(ew.subtract(ddw, low), period), low).astype(d)
    if ambiguous:
        ddmod = where(ew.logical_and(ew.equal(ddmod, low), ew.greater(ddw, 0)), high, ddmod).astype(d)
    correct = where(ew.less(ew.abs(ddw), discont), 0, ew.subtract(ddmod, ddw)).astype(d)
    lead = (slice(None),) * ax
    up = x.astype(d)
    if x.shape[ax] < 2:
        return up
    rest = ew.add(up[lead + (slice(1, None),)], red.cumsum(correct, axis=ax)).astype(d)
    return mv.concatenate([up[lead + (slice(0, 1),)], rest], axis=ax)


_export("gradient", _gradient, "The gradient by central differences inside and one-sided differences "
                               "(edge_order 1 or 2) at the ends, for uniform or coordinate spacings, as "
                               "np.gradient. Lazy.")
_export("unwrap", _unwrap, "Unwraps jumps larger than discont by multiples of period along axis, as "
                           "np.unwrap. Lazy.")
