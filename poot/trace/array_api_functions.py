"""Functions of the array API standard (2023.12) that poot's NumPy-like API did not have:
cumulative_sum, unstack, conj, real, imag (the complex parts: poot/trace/complex_values.py). All lazy. (Sorting, searching and sets are in
array_api_sets, inspection and dtype functions in array_api_info, linalg in array_api_linalg.)"""
from __future__ import annotations

from poot.errors import AxisError, api_boundary
from poot.trace import complex_values
from poot.trace.movement import arr, axis_of

__all__ = ["cumulative_sum", "unstack", "conj", "conjugate", "real", "imag"]


@api_boundary
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along `axis` (optional only for 1-D x), with sum's result dtypes (signed ints
    -> int64, unsigned -> uint64, bool -> int64). `include_initial=True` starts with a zero, so the
    axis grows by one."""
    from poot.trace.reductions import cumsum

    return cumulative(x, axis, dtype, include_initial, cumsum, 0, "cumulative_sum")


def cumulative(x, axis, dtype, include_initial: bool, scan, initial, what: str):
    """`scan(x, axis=, dtype=)` along `axis` (optional only for 1-D x), as the array API's cumulative
    functions take it; `include_initial` starts it with `initial` (the scan's identity)."""
    from poot.trace.creation import full
    from poot.trace.movement import concat

    x = arr(x)
    if x.ndim == 0:     # NumPy 2's cumulative_sum/prod take a 0-d array as a 1-element vector
        x = x.reshape((1,))
    if axis is None:
        if x.ndim > 1:
            raise AxisError(f"{what}: axis is required for an array of {x.ndim} dimensions "
                            f"({x.aval}); pass axis=")
        axis = 0
    ax = axis_of(axis, x.ndim, what, x)
    out = scan(x, axis=ax, dtype=dtype)
    if not include_initial:
        return out
    first = full(x.shape[:ax] + (1,) + x.shape[ax + 1:], initial, dtype=out.dtype, device=x.device)
    return concat([first, out], axis=ax)


@api_boundary
def unstack(x, /, *, axis=0):
    """The slices of `x` along `axis`, as a tuple of arrays (the inverse of stack)."""
    x = arr(x)
    ax = axis_of(axis, x.ndim, "unstack", x)
    lead = (slice(None),) * ax
    return tuple(x[lead + (i,)] for i in range(x.shape[ax]))


@api_boundary
def conj(x, /):
    """The complex conjugate (a real array: itself, same dtype)."""
    return complex_values.conj_of(x)


@api_boundary
def real(x, /):
    """The real component (float32 for complex64, float64 for complex128; a real array: itself)."""
    return complex_values.real_of(x)


@api_boundary
def imag(x, /):
    """The imaginary component (a real array: zeros of its shape and dtype)."""
    return complex_values.imag_of(x)


conjugate = conj
