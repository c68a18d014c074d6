"""Complex numbers at the array level: the real and imaginary parts of an array, its conjugate, its
angle, and building a complex array from parts.

A complex array's parts are read through `bitcast` to the parts' dtype, which views complex64[S] as
float32[S + (2,)] (NumPy's memory layout), so `real(x)` is `parts(x)[..., 0]`: two movement ops the
fusion planner reads in place, after poot/graph/complex_lower.py has rewritten the complex graph into
a real one. Everything here is lazy and works inside @pt.jit.
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.errors import DTypeError, api_boundary
from poot.trace.array import Array
from poot.trace.lazy import record
from poot.trace.movement import arr

__all__ = ["angle", "iscomplexobj", "isrealobj", "iscomplex", "isreal"]


def parts(x: Array) -> Array:
    """The parts of complex `x` (shape S) as a real array of shape S + (2,): [..., 0] real, [..., 1]
    imaginary."""
    return Array(record("bitcast", (x._node,), {"dtype": dt.real_dtype(x.dtype)}))


def from_parts(re, im) -> Array:
    """The complex array re + i*im (re and im: real arrays of one floating dtype; broadcast)."""
    from poot.trace.movement import broadcast_arrays, stack

    re, im = broadcast_arrays(re, im)
    d = dt.result_type(re.dtype, im.dtype)
    if d.kind != "f":
        raise DTypeError(f"complex parts must be floating, got {re.dtype.name} and {im.dtype.name}")
    p = stack([re.astype(d), im.astype(d)], axis=-1)
    return Array(record("bitcast", (p._node,), {"dtype": dt.complex_dtype(d)}))


def abs2_node(n):
    """The node of |z|^2 = re^2 + im^2 for the complex node `n` (real, of the parts' dtype)."""
    p = Array(record("bitcast", (n,), {"dtype": dt.real_dtype(n.aval.dtype)}))
    re, im = p[..., 0], p[..., 1]
    return (re * re + im * im)._node


def conj_node(n):
    """The node of the conjugate of the complex node `n`."""
    return conj_of(Array(n))._node


def host_complex_nodes(op: str, inputs: list, params: dict, results: int) -> list:
    """The result nodes of host op `op` (linalg.inv, solve, eigh...) on `inputs`, some complex: the
    `host_complex` op (poot/graph/host_complex.py) on their parts, complex results viewed back."""
    from poot.graph.host_complex import REAL_RESULTS

    kinds = tuple(a.dtype.kind == "c" for a in inputs)
    nodes = tuple(parts(a)._node if c else a._node for a, c in zip(inputs, kinds))
    cdt = next(a.dtype for a, c in zip(inputs, kinds) if c)
    base = {"wrapped": op, "options": tuple(sorted(params.items())), "complex_inputs": kinds}
    out = []
    for k in range(results):
        n = record("host_complex", nodes, {**base, "index": k})
        if k not in REAL_RESULTS.get(op, ()):
            n = record("bitcast", (n,), {"dtype": cdt})
        out.append(n)
    return out


def integer_power(x: Array, n: int) -> Array:
    """x ** n for complex x and a Python integer |n| < 100 by repeated squaring, as NumPy computes
    it (so x ** 2 is x * x exactly); a negative n divides 1 by the result."""
    from poot.trace.creation import ones_like

    result, base, k = None, x, abs(n)
    while k:
        if k & 1:
            result = base if result is None else result * base
        k >>= 1
        if k:
            base = base * base
    if result is None:
        return ones_like(x)
    return 1 / result if n < 0 else result.copy()


def real_of(x) -> Array:
    x = arr(x)
    return parts(x)[..., 0] if x.dtype.kind == "c" else x.copy()


def imag_of(x) -> Array:
    from poot.trace.creation import zeros_like

    x = arr(x)
    return parts(x)[..., 1] if x.dtype.kind == "c" else zeros_like(x)


def conj_of(x) -> Array:
    x = arr(x)
    if x.dtype.kind != "c":
        return x.copy()
    p = parts(x)
    return from_parts(p[..., 0], -p[..., 1])


@api_boundary
def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis, atan2(imag, real) (in degrees with
    deg=True); real inputs give 0 or pi, as NumPy.

    A real `z` is NumPy's arctan2(0, z): the imaginary part is +0 (not z * 0, which is -0 for negative
    z and would give -pi), and the Python int 0 makes bools float64 while integers take float_of."""
    from poot.trace.elementwise import arctan2

    z = arr(z)
    if z.dtype.kind == "c":
        a = arctan2(imag_of(z), real_of(z))
    else:
        from poot.trace.promote import float_of

        zf = z.astype(dt.float64 if z.dtype.kind == "b" else float_of(z.dtype))
        a = arctan2(0.0, zf)
    return a * (180.0 / math.pi) if deg else a


@api_boundary
def iscomplexobj(x) -> bool:
    """Is `x`'s dtype complex (whatever its values)?"""
    d = x.dtype if hasattr(x, "dtype") else dt.as_dtype(type(x))
    return dt.as_dtype(d).kind == "c"


@api_boundary
def isrealobj(x) -> bool:
    """Is `x`'s dtype not complex?"""
    return not iscomplexobj(x)


@api_boundary
def iscomplex(x):
    """Elementwise: is the imaginary part non-zero (False for real dtypes)?"""
    return imag_of(x) != 0


@api_boundary
def isreal(x):
    """Elementwise: is the imaginary part zero (True for real dtypes)?"""
    return imag_of(x) == 0
