"""`pt.testing`: NumPy's numpy.testing assertions, taking poot arrays.

A test written for NumPy (`np.testing.assert_allclose(f(x), expected)`) runs unchanged with
`import poot as np`: each poot Array among the arguments (also inside lists, tuples and dicts) is read
to the host as a NumPy array, and numpy.testing compares. The assertions raise numpy.testing's own
AssertionError, as test frameworks expect; nothing here is lazy, and inside @pt.jit the read of a
traced array raises TracerError.
"""
from __future__ import annotations

import functools

import numpy.testing as _npt

from poot.trace.array import Array

__all__ = ["assert_allclose", "assert_array_equal", "assert_equal", "assert_array_almost_equal",
           "assert_almost_equal", "assert_approx_equal", "assert_array_less", "assert_array_compare",
           "assert_array_almost_equal_nulp", "assert_array_max_ulp", "assert_string_equal", "assert_",
           "assert_raises", "assert_raises_regex", "assert_warns", "assert_no_warnings", "suppress_warnings"]


def _host(value):
    """`value` with every poot Array in it read as a NumPy array."""
    if isinstance(value, Array):
        return value.numpy()
    if isinstance(value, list):
        return [_host(v) for v in value]
    if type(value) is tuple:
        return tuple(_host(v) for v in value)
    if isinstance(value, dict):
        return {k: _host(v) for k, v in value.items()}
    return value


def _reading(fn):
    @functools.wraps(fn)
    def check(*args, **kwargs):
        __tracebackhide__ = True    # pytest shows the caller's line, as for numpy.testing's own
        return fn(*(_host(a) for a in args), **{k: _host(v) for k, v in kwargs.items()})

    check.__module__ = __name__
    return check


assert_allclose = _reading(_npt.assert_allclose)
assert_array_equal = _reading(_npt.assert_array_equal)
assert_equal = _reading(_npt.assert_equal)
assert_array_almost_equal = _reading(_npt.assert_array_almost_equal)
assert_almost_equal = _reading(_npt.assert_almost_equal)
assert_approx_equal = _reading(_npt.assert_approx_equal)
assert_array_less = _reading(_npt.assert_array_less)
assert_array_compare = _reading(_npt.assert_array_compare)
assert_array_almost_equal_nulp = _reading(_npt.assert_array_almost_equal_nulp)
assert_array_max_ulp = _reading(_npt.assert_array_max_ulp)
assert_string_equal = _reading(_npt.assert_string_equal)
assert_ = _reading(_npt.assert_)

# these check a call or a block, not values: numpy.testing's own
assert_raises = _npt.assert_raises
assert_raises_regex = _npt.assert_raises_regex
assert_warns = _npt.assert_warns
assert_no_warnings = _npt.assert_no_warnings
suppress_warnings = getattr(_npt, "suppress_warnings", None)
if suppress_warnings is None:     # not in every NumPy version
    __all__.remove("suppress_warnings")
