"""`pt.polynomial.Polynomial`: NumPy's numpy.polynomial.Polynomial over poot arrays.

The coefficients (`coef`, lowest degree first) are a poot array; the domain and window are two host
numbers each, as NumPy's. Calling a Polynomial maps its argument from the domain to the window and
evaluates by Horner's rule with poot operations, so `p(x)` of a poot array is lazy and fuses; `deriv`,
`integ`, `linspace` and `fit` (poot's lstsq) are lazy too. The arithmetic (+, -, *, //, %, **), `roots`
and `trim` read the coefficients, as NumPy trims trailing zeros (the result's length depends on the
values); they run NumPy's own Polynomial on the host values and return poot coefficients.
"""
from __future__ import annotations

import numbers

import numpy as np

from poot.errors import ArgumentError, DomainError, NotBuiltError, ShapeError
from poot.polynomial import polynomial as P
from poot.polynomial.polyutils import getdomain, host_series, interval, mapdomain, mapparms, series, to_poot
from poot.trace.array import Array
from poot.trace.creation import linspace as _linspace


class Polynomial:
    """A power series c[0] + c[1]*x + ... (x mapped from `domain` to `window` first), as NumPy's
    numpy.polynomial.Polynomial (see the module docstring for what is lazy)."""

    domain = np.array([-1.0, 1.0])
    window = np.array([-1.0, 1.0])
    basis_name = None
    __array_ufunc__ = None      # NumPy's arrays and scalars defer their operators to the Polynomial
    __hash__ = None

    def __init__(self, coef, domain=None, window=None, symbol="x"):
        self.coef = series(coef, "Polynomial")
        if self.coef.ndim != 1:
            raise ShapeError(f"Polynomial: coefficient array is not 1-d, got {self.coef.aval}")
        if domain is not None:
            self.domain = interval(domain, "domain", "Polynomial")
        if window is not None:
            self.window = interval(window, "window", "Polynomial")
        if not isinstance(symbol, str) or not symbol.isidentifier():
            raise ArgumentError(f"Polynomial: symbol must be a valid Python identifier, got {symbol!r}")
        self._symbol = symbol

    @property
    def symbol(self) -> str:
        return self._symbol

    # --- NumPy's Polynomial on the host values ---------------------------------------------------
    def _host(self) -> np.polynomial.Polynomial:
        return np.polynomial.Polynomial(host_series(self.coef, "Polynomial"), self.domain, self.window,
                                        self._symbol)

    def _wrap(self, p: np.polynomial.Polynomial) -> Polynomial:
        return type(self)(to_poot(p.coef, self.coef), p.domain, p.window, p.symbol)

    def _other(self, other):
        if isinstance(other, Polynomial):
            if type(other) is not type(self):
                raise ArgumentError(f"Polynomial: cannot combine a {type(self).__name__} with a "
                                    f"{type(other).__name__}")
            return other._host()
        if isinstance(other, Array):
            return host_series(other, "Polynomial")
        return other

    def _binary(self, op, other, reflected=False):
        try:
            o = self._other(other)
        except ArgumentError:
            return NotImplemented
        h = self._host()
        r = op(o, h) if reflected else op(h, o)
        if isinstance(r, tuple):
            return tuple(self._wrap(x) for x in r)
        return self._wrap(r)

    def __add__(self, other):
        return self._binary(lambda a, b: a + b, other)

    def __radd__(self, other):
        return self._binary(lambda a, b: a + b, other, True)

    def __sub__(self, other):
        return self._binary(lambda a, b: a - b, other)

    def __rsub__(self, other):
        return self._binary(lambda a, b: a - b, other, True)

    def __mul__(self, other):
        return self._binary(lambda a, b: a * b, other)

    def __rmul__(self, other):
        return self._binary(lambda a, b: a * b, other, True)

    def __truediv__(self, other):
        if not isinstance(other, numbers.Number) or isinstance(other, bool):
            raise ArgumentError(f"Polynomial: division by {type(other).__name__} is not defined; use // "
                                f"for the quotient of two polynomials")
        return self._binary(lambda a, b: a / b, other)

    def __floordiv__(self, other):
        return self._binary(lambda a, b: a // b, other)

    def __rfloordiv__(self, other):
        return self._binary(lambda a, b: a // b, other, True)

    def __mod__(self, other):
        return self._binary(lambda a, b: a % b, other)

    def __rmod__(self, other):
        return self._binary(lambda a, b: a % b, other, True)

    def __divmod__(self, other):
        return self._binary(divmod, other)

    def __rdivmod__(self, other):
        return self._binary(divmod, other, True)

    def __pow__(self, n):
        return self._wrap(self._host() ** n)

    def __neg__(self):
        return type(self)(-self.coef, self.domain, self.window, self._symbol)

    def __pos__(self):
        return self

    def __eq__(self, other):
        return (isinstance(other, Polynomial) and type(other) is type(self)
                and np.array_equal(self.domain, other.domain) and np.array_equal(self.window, other.window)
                and self.coef.shape == other.coef.shape and self._symbol == other._symbol
                and bool(np.all(host_series(self.coef, "Polynomial") == host_series(other.coef, "Polynomial"))))

    def __ne__(self, other):
        return not self == other

    def __len__(self) -> int:
        return self.coef.shape[0]

    def __iter__(self):
        return iter(self.coef)

    def __repr__(self) -> str:
        return repr(self._host())

    def __str__(self) -> str:
        return str(self._host())

    def __format__(self, fmt_str) -> str:
        return format(self._host(), fmt_str)

    def _repr_latex_(self) -> str:
        return self._host()._repr_latex_()

    # --- lazy ------------------------------------------------------------------------------------
    def __call__(self, arg):
        """The polynomial at arg (mapped from domain to window first): lazy for a poot array."""
        return P.polyval(mapdomain(arg, self.domain, self.window), self.coef)

    def degree(self) -> int:
        return self.coef.shape[0] - 1

    def mapparms(self) -> tuple:
        """(off, scl) of the map from domain to window."""
        return mapparms(self.domain, self.window)

    def copy(self) -> Polynomial:
        return type(self)(self.coef, self.domain, self.window, self._symbol)

    def deriv(self, m=1) -> Polynomial:
        """The m-th derivative (in the domain's variable). Lazy."""
        _, scl = self.mapparms()
        return type(self)(P.polyder(self.coef, m, scl), self.domain, self.window, self._symbol)

    def integ(self, m=1, k=(), lbnd=None) -> Polynomial:
        """The m-th integral, integration constants k (the values at lbnd, the domain's variable)."""
        off, scl = self.mapparms()
        lbnd = 0 if lbnd is None else off + scl * lbnd
        return type(self)(P.polyint(self.coef, m, k, lbnd, 1.0 / scl), self.domain, self.window, self._symbol)

    def truncate(self, size) -> Polynomial:
        """The first `size` coefficients (a polynomial of degree size - 1 at most)."""
        size = int(size)
        if size < 1:
            raise DomainError(f"Polynomial.truncate: size must be a positive integer, got {size}")
        return type(self)(self.coef[:size], self.domain, self.window, self._symbol)

    def cutdeg(self, deg) -> Polynomial:
        """The series cut to degree deg."""
        return self.truncate(int(deg) + 1)

    def linspace(self, n=100, domain=None):
        """(x, self(x)) at n evenly spaced points of `domain` (the polynomial's by default). Lazy."""
        lo, hi = self.domain if domain is None else interval(domain, "domain", "Polynomial.linspace")
        x = _linspace(float(lo), float(hi), n)
        return x, self(x)

    # --- read on the host ------------------------------------------------------------------------
    def roots(self):
        """The roots, in the domain's variable (the eigenvalues of the companion matrix). Reads the
        coefficients."""
        return to_poot(self._host().roots(), self.coef)

    def trim(self, tol=0) -> Polynomial:
        """The polynomial without its trailing coefficients of magnitude at most tol. Reads them."""
        return self._wrap(self._host().trim(tol))

    def convert(self, domain=None, kind=None, window=None) -> Polynomial:
        """The same polynomial with another domain and window (the class defaults when None), as
        NumPy's convert: `Polynomial.fit(x, y, deg).convert().coef` are the coefficients in x itself.
        Reads the coefficients (NumPy composes the series and trims its trailing zeros)."""
        if kind is not None and kind is not type(self) and kind is not np.polynomial.Polynomial:
            raise NotBuiltError(f"{type(self).__name__}.convert: only kind={type(self).__name__} is "
                                f"built, got {kind!r}")
        domain = None if domain is None else interval(domain, "domain", "convert")
        window = None if window is None else interval(window, "window", "convert")
        host = self._host().convert(domain=domain, kind=np.polynomial.Polynomial, window=window)
        return self._wrap(host)

    @classmethod
    def cast(cls, series, domain=None, window=None):
        """`series` (a Polynomial) converted to this class, as NumPy's cast. Reads the coefficients."""
        return series.convert(domain, cls, window)

    def has_sametype(self, other) -> bool:
        return isinstance(other, self.__class__)

    def has_samecoef(self, other) -> bool:
        return self.coef.shape == other.coef.shape and bool(
            np.all(host_series(self.coef, "Polynomial") == host_series(other.coef, "Polynomial")))

    def has_samedomain(self, other) -> bool:
        return np.array_equal(self.domain, other.domain)

    def has_samewindow(self, other) -> bool:
        return np.array_equal(self.window, other.window)

    # --- constructors ----------------------------------------------------------------------------
    @classmethod
    def fit(cls, x, y, deg, domain=None, rcond=None, full=False, w=None, window=None, symbol="x"):
        """The least-squares polynomial of degree deg through (x, y), as NumPy's Polynomial.fit: x is
        mapped from `domain` (the data's minimum and maximum when None, read then; [] for the class
        default) to `window` and the fit is lazy (polyfit: poot's lstsq)."""
        if domain is None:
            domain = getdomain(x)
        elif isinstance(domain, list) and len(domain) == 0:
            domain = cls.domain
        if window is None:
            window = cls.window
        domain, window = interval(domain, "domain", "fit"), interval(window, "window", "fit")
        xnew = mapdomain(x if isinstance(x, Array) else np.asarray(x, dtype=float), domain, window)
        res = P.polyfit(xnew, y, deg, w=w, rcond=rcond, full=full)
        if full:
            coef, status = res
            return cls(coef, domain=domain, window=window, symbol=symbol), status
        return cls(res, domain=domain, window=window, symbol=symbol)

    @classmethod
    def fromroots(cls, roots, domain=(), window=None, symbol="x"):
        """The monic polynomial with the given roots (in the domain's variable). Reads them."""
        r = host_series(roots, "fromroots") if isinstance(roots, Array) else roots
        p = np.polynomial.Polynomial.fromroots(r, domain=list(domain) if isinstance(domain, tuple) else domain,
                                               window=window, symbol=symbol)
        return cls(to_poot(p.coef, roots), p.domain, p.window, symbol)

    @classmethod
    def identity(cls, domain=None, window=None, symbol="x"):
        """The polynomial p(x) = x (in the domain's variable)."""
        domain = cls.domain if domain is None else interval(domain, "domain", "identity")
        window = cls.window if window is None else interval(window, "window", "identity")
        off, scl = mapparms(window, domain)
        return cls(P.polyline(off, scl), domain, window, symbol)

    @classmethod
    def basis(cls, deg, domain=None, window=None, symbol="x"):
        """The polynomial x**deg (in the window's variable)."""
        deg = int(deg)
        if deg < 0:
            raise DomainError(f"Polynomial.basis: deg must be non-negative, got {deg}")
        return cls([0] * deg + [1], domain, window, symbol)
