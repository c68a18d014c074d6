"""`pt.polynomial.legendre`: NumPy's numpy.polynomial.legendre, so far its evaluation (legval, legval2d),
lazily by Clenshaw's recurrence (clenshaw.py)."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare

__all__ = ["legval", "legval2d"]


@api_boundary
def legval(x, c, tensor=True):
    """The Legendre series with coefficients c (lowest degree first) at x, as np.polynomial.legendre.legval
    (`tensor` as polyval's). Lazy."""
    x, c = prepare(x, c, tensor, "legval")
    return clenshaw.legendre(x, c)


@api_boundary
def legval2d(x, y, c):
    """The 2-D Legendre series c[i, j] * P_i(x) * P_j(y) at the points (x, y) (of one shape). Lazy."""
    if getattr(x, "shape", None) != getattr(y, "shape", None) and (hasattr(x, "shape") or hasattr(y, "shape")):
        raise ShapeError("legval2d: x and y must have the same shape")
    return legval(y, legval(x, c), tensor=False)
