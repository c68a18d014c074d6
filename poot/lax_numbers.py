"""jax.lax's number functions for `pt.lax` (poot/lax.py re-exports them): `round` with its
RoundingMethod (ties away from zero by default, unlike NumPy's), complex numbers from and to their parts
(`complex`, `real`, `imag`, `conj`), and the special functions `lgamma`, `digamma`, `erf_inv` of float
operands (pt.scipy.special's, with JAX's values at the poles)."""
from __future__ import annotations

import enum

import numpy as np

import poot.trace as _t
from poot import dtypes as _dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.trace.array import Array
from poot.trace.movement import arr as _arr

__all__ = ["RoundingMethod", "round", "complex", "real", "imag", "conj", "lgamma", "digamma", "erf_inv"]


class RoundingMethod(enum.IntEnum):
    """jax.lax.RoundingMethod: how `lax.round` breaks ties."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


@api_boundary
def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    """x rounded to an integral value (jax.lax.round): ties away from zero by default (2.5 -> 3,
    -0.5 -> -1), unlike NumPy's and pt.round's ties-to-even, which RoundingMethod.TO_NEAREST_EVEN
    gives. Floating-point operands only, as JAX."""
    x = _arr(x)
    if x.dtype.kind != "f":
        raise DTypeError(f"lax.round takes a floating-point array, got {x.dtype.name}")
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return _t.rint(x)
    if int(rounding_method) != RoundingMethod.AWAY_FROM_ZERO:
        raise ArgumentError(f"lax.round: rounding_method must be a lax.RoundingMethod, got {rounding_method!r}")
    t = _t.trunc(x)                   # x - t is exact: no 0.49999999999999994 + 0.5 == 1.0 mistake
    return _t.where(_t.abs(x - t) >= 0.5, t + _t.sign(x), t)


@api_boundary
def complex(x, y):  # noqa: A001
    """x + i*y from real float parts (jax.lax.complex): float32 parts give complex64, float64 give
    complex128 (Python scalars take the other part's dtype). The parts are placed as they are, so
    an infinite or NaN part stays in its place, where `x + 1j * y` would mix them (inf * 0j is NaN)."""
    from poot.trace import complex_values as _cv
    from poot.trace.promote import finish, promote, wrap

    items, d, dev = promote("lax.complex", (x, y))
    if d not in (_dt.float32, _dt.float64):
        raise DTypeError(f"lax.complex: the real and imaginary parts must be float32 or float64 (of one dtype), "
                         f"got {_dtype_name(x)} and {_dtype_name(y)}")
    re, im = (wrap(n) for n in finish("lax.complex", items, d, dev))
    if re.shape != im.shape:
        try:
            np.broadcast_shapes(re.shape, im.shape)
        except ValueError:
            raise ShapeError(f"lax.complex: parts of shapes {re.shape} and {im.shape} do not broadcast") from None
    return _cv.from_parts(re, im)


def _dtype_name(x) -> str:
    return x.dtype.name if isinstance(x, Array) else type(x).__name__


@api_boundary
def real(x):
    """The real part of a complex array (jax.lax.real: complex operands only)."""
    return _complex_part(x, "real")


@api_boundary
def imag(x):
    """The imaginary part of a complex array (jax.lax.imag: complex operands only)."""
    return _complex_part(x, "imag")


@api_boundary
def conj(x):
    """The complex conjugate (jax.lax.conj): a real operand gives the complex array x + 0i."""
    from poot.trace import complex_values as _cv

    x = _arr(x)
    if x.dtype.kind != "c":
        x = complex(x.astype(_dt.float64 if x.dtype is _dt.float64 else _dt.float32), 0.0)
    return _cv.conj_of(x)


def _complex_part(x, which: str):
    from poot.trace import complex_values as _cv

    x = _arr(x)
    if x.dtype.kind != "c":
        raise DTypeError(f"lax.{which} takes a complex array, got {x.dtype.name} (pt.{which} also takes real ones)")
    return _cv.real_of(x) if which == "real" else _cv.imag_of(x)



def _float_only(name: str, x) -> Array:
    """x for a lax function of real floats only: JAX refuses integer, bool and complex operands."""
    a = _arr(x)
    if a.dtype.kind != "f":
        raise DTypeError(f"lax.{name} takes floating-point operands; got {a.dtype.name} (convert it, "
                         f"e.g. x.astype(pt.float32))")
    return a


@api_boundary
def lgamma(x):
    """log|Gamma(x)| (jax.lax.lgamma; pt.scipy.special.gammaln), inf at the poles and at -inf;
    float operands only."""
    from poot.scipy.special import gammaln
    a = _float_only("lgamma", x)
    return _t.where(a == -np.inf, np.inf, gammaln(a)).astype(a.dtype)


@api_boundary
def digamma(x):
    """The derivative of lgamma (jax.lax.digamma; pt.scipy.special.digamma), NaN at the poles
    0, -1, -2, ... (both zeros included, as JAX: SciPy gives -inf/inf at +0/-0); float operands only."""
    from poot.scipy.special import digamma as psi
    a = _float_only("digamma", x)
    pole = (a <= 0) & (_t.floor(a) == a)
    return _t.where(pole, np.nan, psi(a)).astype(a.dtype)


@api_boundary
def erf_inv(x):
    """The inverse error function (jax.lax.erf_inv; pt.scipy.special.erfinv): +-inf at +-1, NaN
    outside [-1, 1]; float operands only."""
    from poot.scipy.special import erfinv
    return erfinv(_float_only("erf_inv", x))
