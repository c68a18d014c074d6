"""NumPy's linalg functions beyond the array API standard, composed from poot.linalg's own:
multi_dot (matrix products in the cheapest order), cond (condition numbers), tensorinv and
tensorsolve (inv and solve on the tensor reshaped to a square matrix), and eig and eigvals of general
matrices (host steps)."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError, api_boundary, out_error
from poot.graph.host import LinAlgError
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.selection import where

__all__ = ["multi_dot", "cond", "tensorinv", "tensorsolve", "eig", "eigvals", "EigResult"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


def _general(op: str, x) -> Array:
    """x as the complex matrices a general eigenproblem is solved on."""
    from poot.trace.array_api_linalg import _matrices

    m = _matrices(op, x, square=True)
    return m if m.dtype.kind == "c" else m.astype(dt.complex64 if m.dtype.bits <= 32 else dt.complex128)


@api_boundary
def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit length) of general square matrices, always
    complex (as JAX's): NumPy returns real arrays when every eigenvalue happens to be real, a dtype that
    depends on the values, which a lazy array cannot have. Host step (NumPy's LAPACK call)."""
    from poot.trace.array_api_linalg import _host

    return EigResult(*_host("eig", [_general("eig", a)], results=2))


@api_boundary
def eigvals(a):
    """Eigenvalues of general square matrices, complex (see eig). Host step."""
    from poot.trace.array_api_linalg import _host

    return _host("eigvals", [_general("eigvals", a)])


def _chain_order(dims: list[int]) -> list[list[int]]:
    """split[i][j]: where the cheapest product of matrices i..j splits (dims[k] x dims[k+1] is
    matrix k), by the classic O(n**3) dynamic program (Cormen et al. 15.2), as NumPy's multi_dot."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _product(mats: list[Array], split, i: int, j: int) -> Array:
    if i == j:
        return mats[i]
    k = split[i][j]
    return _product(mats, split, i, k) @ _product(mats, split, k + 1, j)


@api_boundary
def multi_dot(arrays, *, out=None):
    """The product of two or more arrays in the order with the fewest scalar multiplications. The
    first may be 1-D (a row vector) and the last 1-D (a column vector); the others must be 2-D."""
    if out is not None:
        raise out_error("linalg.multi_dot", out, multi_dot(arrays))
    mats = [mv.arr(a) for a in arrays]
    if len(mats) < 2:
        raise ShapeError("linalg.multi_dot: expecting at least two arrays")
    first_vector, last_vector = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vector:
        mats[0] = mv.reshape(mats[0], (1, -1))
    if last_vector:
        mats[-1] = mv.reshape(mats[-1], (-1, 1))
    for i, m in enumerate(mats):
        if m.ndim != 2:
            raise ShapeError(f"linalg.multi_dot: array {i} has {m.ndim} dimensions; the first and last "
                             f"may be 1-D or 2-D, the others must be 2-D")
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ShapeError(f"linalg.multi_dot: arrays {i} {mats[i].shape} and {i + 1} "
                             f"{mats[i + 1].shape} are not aligned")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    result = _product(mats, _chain_order(dims), 0, len(mats) - 1)
    if first_vector and last_vector:
        return mv.reshape(result, ())
    if first_vector:
        return mv.reshape(result, result.shape[1:])
    if last_vector:
        return mv.reshape(result, result.shape[:1])
    return result


@api_boundary
def cond(x, p=None):
    """Condition numbers of (stacks of) matrices: p None, 2 and -2 from the singular values (any
    shape); 'fro', 'nuc', 1, -1, inf and -inf as norm(x, p) * norm(inv(x), p) (square matrices; inf
    for a singular one, as NumPy's). NaN results become inf unless x has NaNs."""
    from poot.trace.array_api_linalg import svdvals

    x = mv.arr(x)
    if x.dtype.kind not in "fc":
        x = x.astype(dt.float64)
    if x.ndim < 2:
        raise LinAlgError(f"linalg.cond: {x.ndim}-dimensional array given; it must be at least "
                          f"two-dimensional")
    if x.shape[-1] * x.shape[-2] == 0:
        raise LinAlgError("linalg.cond: cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(x)
        r = ew.divide(s[..., -1], s[..., 0]) if p == -2 else ew.divide(s[..., 0], s[..., -1])
    elif p in ("fro", "nuc", 1, -1, np.inf, -np.inf):
        if x.shape[-1] != x.shape[-2]:
            raise LinAlgError(f"linalg.cond: last 2 dimensions of the array must be square for p={p!r}, "
                              f"got {x.shape[-2:]}")
        r = _cond_by_inverse(x, p)
    else:
        raise ShapeError(f"linalg.cond: invalid norm order {p!r} for matrices")
    x_has_nan = red.any(ew.isnan(x), axis=(-2, -1))
    return where(ew.logical_and(ew.isnan(r), ew.logical_not(x_has_nan)), np.inf, r).astype(r.dtype)


def _cond_by_inverse(x: Array, p) -> Array:
    """norm(x, p) * norm(inv(x), p) for square `x`, inf for the singular matrices of the stack: NumPy
    inverts with its errors silenced and turns the NaNs into inf, where inv raises. The singular ones
    (an exactly zero LU pivot, what makes inv raise) are found by slogdet's sign 0, and an identity
    is inverted in their place so the rest of the stack still gets its inverse."""
    from poot.trace.array_api_linalg import inv, slogdet
    from poot.trace.creation import eye
    from poot.trace.numpy_more import norm

    singular = ew.equal(slogdet(x)[0], 0)
    n = x.shape[-1]
    safe = where(mv.reshape(singular, singular.shape + (1, 1)), eye(n, dtype=x.dtype, device=x.device), x)
    r = ew.multiply(norm(x, p, axis=(-2, -1)), norm(inv(safe), p, axis=(-2, -1)))
    return where(singular, np.inf, r).astype(r.dtype)


@api_boundary
def tensorinv(a, ind=2):
    """The inverse of a tensor under tensordot over `ind` axes: shape a.shape[ind:] + a.shape[:ind],
    the inverse of a reshaped to a square matrix."""
    from poot.trace.array_api_linalg import inv

    a = mv.arr(a)
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise ShapeError(f"linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise LinAlgError(f"linalg.tensorinv: prod(a.shape[:ind]) == {rows} differs from "
                          f"prod(a.shape[ind:]) == {cols}; the reshaped matrix must be square")
    return mv.reshape(inv(mv.reshape(a, (rows, cols))), a.shape[ind:] + a.shape[:ind])


@api_boundary
def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b: a (its `axes` moved to the end) reshaped to a square
    matrix and solved against b flattened; x has shape a.shape[b.ndim:]."""
    from poot.trace.array_api_linalg import solve

    a, b = mv.arr(a), mv.arr(b)
    if axes is not None:
        order = list(range(a.ndim))
        for k in axes:
            k = mv.axis_of(k, a.ndim, "linalg.tensorsolve", a)
            order.remove(k)
            order.append(k)
        a = mv.permute_dims(a, tuple(order))
    shape = a.shape[b.ndim:]
    n = math.prod(shape)
    if math.prod(a.shape) != n * n or math.prod(b.shape) != n:
        raise LinAlgError(f"linalg.tensorsolve: a {a.shape} and b {b.shape} do not fit: prod(a.shape"
                          f"[b.ndim:]) must equal prod(a.shape[:b.ndim]) and b.size")
    x = solve(mv.reshape(a, (n, n)), mv.reshape(b, (n,)))
    return mv.reshape(x, shape)
