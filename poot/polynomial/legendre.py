"""`pt.polynomial.legendre`: NumPy's numpy.polynomial.legendre: evaluation (legval, legval2d)
lazily by Clenshaw's recurrence (clenshaw.py), the pseudo-Vandermonde matrix (legvander) and the
least-squares fit (legfit), lazy too."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare
from poot.polynomial.polynomial import fit, vander

__all__ = ["legval", "legval2d", "legvander", "legfit"]


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


@api_boundary
def legvander(x, deg):
    """The pseudo-Vandermonde matrix of x: shape x.shape + (deg + 1,), [..., i] the Legendre basis
    function of degree i at x, as np.polynomial.legendre.legvander. Lazy."""
    return vander("legvander", clenshaw.legendre_columns, x, deg)


@api_boundary
def legfit(x, y, deg, rcond=None, full=False, w=None):
    """The least-squares Legendre series of degree `deg` (an int, or the list of degrees to fit)
    through the points (x, y), as np.polynomial.legendre.legfit: lazily, by poot's lstsq on legvander
    with NumPy's column scaling and weights w (`full` also returns [residuals, rank, singular values,
    rcond])."""
    return fit(legvander, "legfit", x, y, deg, rcond, full, w)
