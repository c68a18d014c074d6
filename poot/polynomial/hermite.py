"""`pt.polynomial.hermite`: NumPy's numpy.polynomial.hermite, so far its evaluation (hermval, hermval2d),
lazily by Clenshaw's recurrence (clenshaw.py)."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare

__all__ = ["hermval", "hermval2d"]


@api_boundary
def hermval(x, c, tensor=True):
    """The Hermite series with coefficients c (lowest degree first) at x, as np.polynomial.hermite.hermval
    (`tensor` as polyval's). Lazy."""
    x, c = prepare(x, c, tensor, "hermval")
    return clenshaw.hermite(x, c)


@api_boundary
def hermval2d(x, y, c):
    """The 2-D Hermite series c[i, j] * P_i(x) * P_j(y) at the points (x, y) (of one shape). Lazy."""
    if getattr(x, "shape", None) != getattr(y, "shape", None) and (hasattr(x, "shape") or hasattr(y, "shape")):
        raise ShapeError("hermval2d: x and y must have the same shape")
    return hermval(y, hermval(x, c), tensor=False)
