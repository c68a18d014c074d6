"""`pt.polynomial`: NumPy's numpy.polynomial for poot arrays: the power series functions
(`pt.polynomial.polynomial`: polyval, polyfit, polyder, polyint, polyadd...), the `Polynomial` class,
and the evaluation, pseudo-Vandermonde matrices and least-squares fits of Chebyshev, Legendre and
Hermite series (chebval, chebvander, chebfit; legval...; hermval...).

Coefficients are lowest degree first, as in numpy.polynomial (the top-level pt.polyval and friends
follow np.polyval's highest-first order). Evaluation, derivatives, integrals and fits are lazy poot
operations; results whose length NumPy makes depend on the values (sums and products trim trailing
zeros, roots) read the coefficients, as each function's docstring says.
"""
from poot.polynomial import chebyshev, hermite, legendre, polynomial
from poot.polynomial.polynomial_class import Polynomial

__all__ = ["Polynomial", "polynomial", "chebyshev", "legendre", "hermite"]
