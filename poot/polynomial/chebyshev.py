"""`pt.polynomial.chebyshev`: NumPy's numpy.polynomial.chebyshev, so far its evaluation (chebval, chebval2d),
lazily by Clenshaw's recurrence (clenshaw.py)."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare

__all__ = ["chebval", "chebval2d"]


@api_boundary
def chebval(x, c, tensor=True):
    """The Chebyshev series with coefficients c (lowest degree first) at x, as np.polynomial.chebyshev.chebval
    (`tensor` as polyval's). Lazy."""
    x, c = prepare(x, c, tensor, "chebval")
    return clenshaw.chebyshev(x, c)


@api_boundary
def chebval2d(x, y, c):
    """The 2-D Chebyshev series c[i, j] * P_i(x) * P_j(y) at the points (x, y) (of one shape). Lazy."""
    if getattr(x, "shape", None) != getattr(y, "shape", None) and (hasattr(x, "shape") or hasattr(y, "shape")):
        raise ShapeError("chebval2d: x and y must have the same shape")
    return chebval(y, chebval(x, c), tensor=False)
