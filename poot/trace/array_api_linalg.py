"""`pt.linalg`: the array API standard's linear algebra extension (2023.12).

Two kinds of function, each docstring says which:
- planned (lazy, fused like any other poot operation): matmul, matrix_transpose, tensordot, vecdot,
  outer, diagonal, trace, cross, vector_norm, matrix_norm for ord 'fro', 1, -1, inf, -inf, and
  matrix_power for n >= 0 (repeated squaring with matmul);
- host fallbacks (poot has no factorization kernels): cholesky, det, eigh, eigvalsh, inv,
  matrix_rank, pinv, qr, slogdet, solve, svd, svdvals, and what builds on them. They realize their
  input, compute with NumPy on the host (float16/bfloat16 in float32, integers and bools in float64)
  and return new arrays on the input's device. Inside @pt.jit they raise TracerError.
Matrices are the last two axes; leading axes are a batch (a stack of matrices).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes as dt
from ..errors import PootError, ShapeError, api_boundary
from . import elementwise as ew, reductions as red
from .array import Array
from .lazy import from_numpy
from .linalg import diagonal as _diagonal, matmul, tensordot, vecdot
from .movement import arr, matrix_transpose

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm", "LinAlgError",
           "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class LinAlgError(PootError, np.linalg.LinAlgError):
    """A matrix has no answer for this function (singular for inv/solve, not positive definite for
    cholesky...). Also a NumPy LinAlgError, so code that catches NumPy's keeps working."""


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --- host fallback plumbing --------------------------------------------------------------------
def _float_dtype(d: dt.DType) -> dt.DType:
    return d if d.kind == "f" else dt.default_float


def _matrices(op: str, x, square: bool = False):
    """-> (x as an Array, its value on the host in the compute dtype, the result dtype)."""
    x = arr(x)
    if x.ndim < 2:
        raise ShapeError(f"linalg.{op}: needs a matrix or a stack of matrices (2 or more dimensions), "
                         f"got {x.aval}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"linalg.{op}: needs square matrices, got {x.aval} "
                         f"({x.shape[-2]} x {x.shape[-1]})")
    d = _float_dtype(x.dtype)
    work = np.float32 if d.bits < 32 else d.np
    x._realize(f"linalg.{op}()")
    return x, x.numpy().astype(work, copy=False), d


def _leaf(a, d: dt.DType, device: str) -> Array:
    return Array(from_numpy(np.asarray(a).astype(d.np, copy=False), device))


def _numpy(op: str, fn, *args, **kwargs):
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"linalg.{op}: {e}") from None


# --- host fallbacks ----------------------------------------------------------------------------
@api_boundary
def cholesky(x, /, *, upper=False):
    """Cholesky factor L (x = L @ L.mT) of symmetric positive-definite matrices; U = L.mT with
    upper=True. Host fallback: realizes x and factors with NumPy on the host."""
    x, a, d = _matrices("cholesky", x, square=True)
    lower = _numpy("cholesky", np.linalg.cholesky, a)
    return _leaf(np.swapaxes(lower, -1, -2) if upper else lower, d, x.device)


@api_boundary
def det(x, /):
    """Determinants of square matrices. Host fallback: realizes x and computes with NumPy."""
    x, a, d = _matrices("det", x, square=True)
    return _leaf(_numpy("det", np.linalg.det, a), d, x.device)


@api_boundary
def slogdet(x, /):
    """(sign, log|det|) of square matrices; sign 0 and logabsdet -inf for a singular one. Host
    fallback: realizes x and computes with NumPy on the host."""
    x, a, d = _matrices("slogdet", x, square=True)
    sign, logabs = _numpy("slogdet", np.linalg.slogdet, a)
    return SlogdetResult(_leaf(sign, d, x.device), _leaf(logabs, d, x.device))


@api_boundary
def inv(x, /):
    """Inverses of square matrices (LinAlgError for a singular one). Host fallback: realizes x and
    inverts with NumPy on the host."""
    x, a, d = _matrices("inv", x, square=True)
    return _leaf(_numpy("inv", np.linalg.inv, a), d, x.device)


@api_boundary
def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, from the lower
    triangle. Host fallback: realizes x and computes with NumPy on the host."""
    x, a, d = _matrices("eigh", x, square=True)
    w, v = _numpy("eigh", np.linalg.eigh, a)
    return EighResult(_leaf(w, d, x.device), _leaf(v, d, x.device))


@api_boundary
def eigvalsh(x, /):
    """Eigenvalues (ascending) of symmetric matrices. Host fallback: realizes x, NumPy on the host."""
    x, a, d = _matrices("eigvalsh", x, square=True)
    return _leaf(_numpy("eigvalsh", np.linalg.eigvalsh, a), d, x.device)


@api_boundary
def qr(x, /, *, mode="reduced"):
    """QR factorization (mode 'reduced' or 'complete'). Host fallback: realizes x, NumPy on the host."""
    if mode not in ("reduced", "complete"):
        raise ShapeError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x, a, d = _matrices("qr", x)
    q, r = _numpy("qr", np.linalg.qr, a, mode=mode)
    return QRResult(_leaf(q, d, x.device), _leaf(r, d, x.device))


@api_boundary
def svd(x, /, *, full_matrices=True):
    """Singular value decomposition x = U @ diag(S) @ Vh, S descending. Host fallback: realizes x
    and decomposes with NumPy on the host."""
    x, a, d = _matrices("svd", x)
    u, s, vh = _numpy("svd", np.linalg.svd, a, full_matrices=full_matrices)
    return SVDResult(_leaf(u, d, x.device), _leaf(s, d, x.device), _leaf(vh, d, x.device))


@api_boundary
def svdvals(x, /):
    """Singular values, descending. Host fallback: realizes x and computes with NumPy on the host."""
    x, a, d = _matrices("svdvals", x)
    return _leaf(_numpy("svdvals", np.linalg.svd, a, compute_uv=False), d, x.device)


def _rtol(rtol, x, d):
    """The relative cutoff: max(M, N) * eps by default (the standard's), else rtol broadcast
    against the stack, as a host array with a trailing axis."""
    if rtol is None:
        return np.asarray(max(x.shape[-2:]) * float(dt.finfo(d).eps))
    r = rtol.numpy() if isinstance(rtol, Array) else np.asarray(rtol)
    return r.astype(np.float64)[..., None]


@api_boundary
def matrix_rank(x, /, *, rtol=None):
    """How many singular values exceed rtol times the largest (int64). Host fallback: realizes x
    and computes the singular values with NumPy on the host."""
    x, a, d = _matrices("matrix_rank", x)
    s = _numpy("matrix_rank", np.linalg.svd, a, compute_uv=False)
    if s.shape[-1] == 0:
        return _leaf(np.zeros(s.shape[:-1], np.int64), dt.int64, x.device)
    tol = _rtol(rtol, x, d) * s.max(axis=-1, keepdims=True)
    return _leaf(np.count_nonzero(s > tol, axis=-1), dt.int64, x.device)


@api_boundary
def pinv(x, /, *, rtol=None):
    """Moore-Penrose pseudo-inverse, singular values below rtol times the largest set to zero.
    Host fallback: realizes x and computes with NumPy on the host."""
    x, a, d = _matrices("pinv", x)
    rc = _rtol(rtol, x, d)
    return _leaf(_numpy("pinv", np.linalg.pinv, a, rc[..., 0] if rc.ndim else rc), d, x.device)


@api_boundary
def solve(x1, x2, /):
    """The solution X of x1 @ X = x2 for square x1; a 1-D x2 is one vector, otherwise x2 is a
    (stack of) matrix (batch axes broadcast). Host fallback: realizes both, NumPy on the host."""
    a_arr, a, d1 = _matrices("solve", x1, square=True)
    b_arr = arr(x2)
    d = dt.result_type(d1, _float_dtype(b_arr.dtype))
    work = np.float32 if d.bits < 32 else d.np
    b_arr._realize("linalg.solve()")
    b = b_arr.numpy().astype(work, copy=False)
    a = a.astype(work, copy=False)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve: x2 {b_arr.aval} does not fit x1 {a_arr.aval}: it needs "
                         f"{a.shape[-1]} rows")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(f"linalg.solve: batch axes of {a_arr.aval} and {b_arr.aval} do not "
                         f"broadcast") from None
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = _numpy("solve", np.linalg.solve, a, b)
    return _leaf(out[..., 0] if vector else out, d, a_arr.device)


# --- planned (lazy) ----------------------------------------------------------------------------
@api_boundary
def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes (offset > 0 above the main one), lazily."""
    return _diagonal(arr(x), offset, -2, -1)


@api_boundary
def trace(x, /, *, offset=0, dtype=None):
    """Sums of the diagonals of the last two axes, with sum's result dtypes, lazily."""
    return red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


@api_boundary
def outer(x1, x2, /):
    """Outer product of two 1-D arrays: out[i, j] = x1[i] * x2[j], lazily."""
    from .linalg import outer as outer_

    a, b = arr(x1), arr(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"linalg.outer: both operands must be one-dimensional, got {a.aval} and {b.aval}")
    return outer_(a, b)


@api_boundary
def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (other axes broadcast), lazily."""
    from .movement import broadcast_arrays, moveaxis, stack

    a, b = arr(x1), arr(x2)
    nd = min(a.ndim, b.ndim)
    if nd == 0 or not -nd <= axis < nd:
        raise ShapeError(f"linalg.cross: axis {axis} is out of range for {a.aval} and {b.aval}")
    ax = axis if axis < 0 else axis - nd  # the standard counts from the end of the shorter operand
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ShapeError(f"linalg.cross: axis {axis} must have size 3 in both operands, got "
                         f"{a.aval} and {b.aval}")
    a, b = broadcast_arrays(moveaxis(a, ax, -1), moveaxis(b, ax, -1))
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, ax)


def _as_float(x: Array) -> Array:
    d = _float_dtype(x.dtype)
    return x if x.dtype is d else x.astype(d)


@api_boundary
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 (the standard's name)
    """The p-norm over `axis` (all axes when None, or a tuple): ord inf/-inf are max/min of |x|, 0
    counts nonzeros, others are (sum |x|**ord) ** (1/ord). Lazy (one reduction)."""
    x = _as_float(arr(x))
    a = ew.abs(x)
    if ord == math.inf:
        return red.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(x, 0), axis=axis, keepdims=keepdims).astype(x.dtype)
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return ew.sqrt(red.sum(x * x, axis=axis, keepdims=keepdims))
    p = float(ord)
    return ew.power(red.sum(ew.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


@api_boundary
def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 (the standard's name)
    """Norms of the matrices in the last two axes. ord 'fro', 1, -1, inf, -inf are lazy; 2, -2 and
    'nuc' need singular values: a host fallback through svdvals (realizes x)."""
    x = _as_float(arr(x))
    if x.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: needs a matrix or a stack of matrices, got {x.aval}")
    if ord == "fro":
        r = ew.sqrt(red.sum(x * x, axis=(-2, -1)))
    elif ord in (1, -1, math.inf, -math.inf):
        rows = ord in (math.inf, -math.inf)  # inf: max row sum; 1: max column sum
        sums = red.sum(ew.abs(x), axis=-1 if rows else -2)
        r = red.max(sums, axis=-1) if ord > 0 else red.min(sums, axis=-1)
    elif ord in (2, -2, "nuc"):
        s = svdvals(x)
        r = red.max(s, axis=-1) if ord == 2 else red.min(s, axis=-1) if ord == -2 else red.sum(s, axis=-1)
    else:
        raise ShapeError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, "
                         f"got {ord!r}")
    return r.reshape(r.shape + (1, 1)) if keepdims else r


@api_boundary
def matrix_power(x, n, /):
    """x raised to the integer power n: identity for 0, repeated squaring with matmul for n > 0
    (lazy); n < 0 inverts first (a host fallback through inv, realizes x)."""
    from .creation import eye
    from .movement import broadcast_to

    n = operator.index(n)
    x = arr(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: needs square matrices, got {x.aval}")
    if n == 0:
        return broadcast_to(eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape)
    if n < 0:
        x, n = inv(x), -n
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result
