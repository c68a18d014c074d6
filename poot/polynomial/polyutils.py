"""The shared pieces of `pt.polynomial` (NumPy's numpy.polynomial.polyutils): coefficient series as poot arrays,
their host values where a result's length depends on them, and the domain -> window maps.

numpy.polynomial keeps coefficients lowest degree first; a series of integers or booleans is float64,
as NumPy's `as_series` makes it. A result whose length depends on the coefficients' values (NumPy trims
the trailing zeros of a sum, a product or a quotient) is computed on the host from the values: it is
read where it is called, and refused inside a traced function, whose shapes cannot depend on values.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.creation import asarray
from poot.trace.indexing import refuse_data_dependent


def series(c, op: str) -> Array:
    """`c` as a coefficient series: a poot array of at least one dimension (axis 0 the degree), of a
    float or complex dtype."""
    x = mv.atleast_1d(mv.arr(c))
    if x.shape[0] == 0:
        raise ShapeError(f"{op}: the coefficient array is empty")
    if x.dtype.kind in "biu":
        x = x.astype(dt.float64)
    return x


def host_series(c, op: str) -> np.ndarray:
    """The values of series `c` (read now), for results whose length depends on them; refused while
    tracing."""
    x = series(c, op) if isinstance(c, Array) else c
    refuse_data_dependent(f"polynomial.{op}()", "NumPy trims the trailing zero coefficients of the result",
                          "call it outside the traced function, or keep the coefficients fixed-length "
                          "(evaluation, polyder, polyint and polyfit are lazy)")
    if isinstance(x, Array):
        return x.numpy()
    return np.asarray(x)


def to_poot(values, like=None) -> Array:
    """A host result as a poot array (on the device of `like` where it is a poot array)."""
    device = like.device if isinstance(like, Array) else None
    return asarray(np.asarray(values), device=device)


def mapparms(old, new) -> tuple:
    """(off, scl) of the linear map taking the interval `old` onto `new` (host values, as NumPy's)."""
    oldlen = old[1] - old[0]
    newlen = new[1] - new[0]
    off = (old[1] * new[0] - old[0] * new[1]) / oldlen
    scl = newlen / oldlen
    return off, scl


def mapdomain(x, old, new):
    """x mapped from the interval `old` onto `new`: off + scl * x, lazily for a poot array."""
    off, scl = mapparms(np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64))
    if not isinstance(x, Array):
        x = np.asanyarray(x)
    return off + scl * x


def getdomain(x) -> np.ndarray:
    """The smallest interval holding the values of x (NumPy's getdomain), read now: a Polynomial's
    domain is a pair of host numbers."""
    refuse_data_dependent("Polynomial.fit() without domain=", "the domain is the data's minimum and maximum",
                          "pass domain=(lo, hi)")
    v = x.numpy() if isinstance(x, Array) else np.asarray(x)
    return np.polynomial.polyutils.getdomain(v)


def interval(v, name: str, op: str) -> np.ndarray:
    """A domain or window: two host numbers."""
    host = np.asarray(v.numpy() if isinstance(v, Array) else v)
    if host.shape != (2,):
        raise ShapeError(f"{op}: {name} has to be of length 2, got shape {host.shape}")
    return host.astype(np.result_type(host.dtype, np.float64))
