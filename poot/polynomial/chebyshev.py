"""`pt.polynomial.chebyshev`: NumPy's numpy.polynomial.chebyshev: evaluation (chebval, chebval2d)
lazily by Clenshaw's recurrence (clenshaw.py), the pseudo-Vandermonde matrix (chebvander) and the
least-squares fit (chebfit), lazy too."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare
from poot.polynomial.polynomial import fit, vander

__all__ = ["chebval", "chebval2d", "chebvander", "chebfit"]


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


@api_boundary
def chebvander(x, deg):
    """The pseudo-Vandermonde matrix of x: shape x.shape + (deg + 1,), [..., i] the Chebyshev basis
    function of degree i at x, as np.polynomial.chebyshev.chebvander. Lazy."""
    return vander("chebvander", clenshaw.chebyshev_columns, x, deg)


@api_boundary
def chebfit(x, y, deg, rcond=None, full=False, w=None):
    """The least-squares Chebyshev series of degree `deg` (an int, or the list of degrees to fit)
    through the points (x, y), as np.polynomial.chebyshev.chebfit: lazily, by poot's lstsq on chebvander
    with NumPy's column scaling and weights w (`full` also returns [residuals, rank, singular values,
    rcond])."""
    return fit(chebvander, "chebfit", x, y, deg, rcond, full, w)
