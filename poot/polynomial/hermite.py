"""`pt.polynomial.hermite`: NumPy's numpy.polynomial.hermite: evaluation (hermval, hermval2d)
lazily by Clenshaw's recurrence (clenshaw.py), the pseudo-Vandermonde matrix (hermvander) and the
least-squares fit (hermfit), lazy too."""
from __future__ import annotations

from poot.errors import ShapeError, api_boundary
from poot.polynomial import clenshaw
from poot.polynomial.clenshaw import prepare
from poot.polynomial.polynomial import fit, vander

__all__ = ["hermval", "hermval2d", "hermvander", "hermfit"]


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


@api_boundary
def hermvander(x, deg):
    """The pseudo-Vandermonde matrix of x: shape x.shape + (deg + 1,), [..., i] the Hermite basis
    function of degree i at x, as np.polynomial.hermite.hermvander. Lazy."""
    return vander("hermvander", clenshaw.hermite_columns, x, deg)


@api_boundary
def hermfit(x, y, deg, rcond=None, full=False, w=None):
    """The least-squares Hermite series of degree `deg` (an int, or the list of degrees to fit)
    through the points (x, y), as np.polynomial.hermite.hermfit: lazily, by poot's lstsq on hermvander
    with NumPy's column scaling and weights w (`full` also returns [residuals, rank, singular values,
    rcond])."""
    return fit(hermvander, "hermfit", x, y, deg, rcond, full, w)
