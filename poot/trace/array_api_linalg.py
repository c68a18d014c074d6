"""`pt.linalg`: the array API standard's linear algebra extension (2023.12).

Two kinds of function, each docstring says which:
- planned (lazy, fused like any other poot operation): matmul, matrix_transpose, tensordot, vecdot,
  outer, diagonal, trace, cross, vector_norm, matrix_norm for ord 'fro', 1, -1, inf, -inf, and
  matrix_power for n >= 0 (repeated squaring with matmul);
- host steps (poot has no factorization kernels): cholesky, det, eigh, eigvalsh, inv, matrix_rank,
  pinv, qr, slogdet, solve, svd, svdvals, and what builds on them. Each is a host op (poot.graph.host):
  an equation the program runs with NumPy on the host (float16/bfloat16 in float32; integers and
  bools are converted to float64 first), in place on the CPU device, with the copies shown in the
  plan elsewhere. They work inside @pt.jit; called eagerly they run at once, so a LinAlgError is
  raised at the call.
Matrices are the last two axes; leading axes are a batch (a stack of matrices).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

from poot import dtypes as dt
from poot.errors import ArgumentError, ShapeError, api_boundary
from poot.graph.aval import broadcast_shapes
from poot.graph.host import LinAlgError, LinAlgShapeError
from poot.trace import elementwise as ew, reductions as red
from poot.trace.array import Array
from poot.trace.lazy import is_tracing, realize_nodes, record
from poot.trace.linalg import diagonal as _diagonal, matmul, tensordot, vecdot
from poot.trace.movement import arr, broadcast_to, matrix_transpose

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm", "LinAlgError",
           "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


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


# --- host step plumbing ------------------------------------------------------------------------
def _float_dtype(d: dt.DType) -> dt.DType:
    return d if d.kind in "fc" else dt.default_float


def _matrices(op: str, x, square: bool = False) -> Array:
    """x as an Array of its result dtype (floating), its shape checked."""
    x = arr(x)
    if x.ndim < 2:
        raise LinAlgShapeError(f"linalg.{op}: needs a matrix or a stack of matrices (2 or more dimensions), "
                         f"got {x.aval}")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgShapeError(f"linalg.{op}: needs square matrices, got {x.aval} "
                               f"({x.shape[-2]} x {x.shape[-1]})")
    d = _float_dtype(x.dtype)
    return x if x.dtype is d else x.astype(d)


def _host(op: str, inputs, params: dict | None = None, results: int = 1):
    """Record host op `op`'s results; eagerly they are computed now (errors surface at the call)."""
    params = params or {}
    if any(a.dtype.kind == "c" for a in inputs):
        from poot.trace.complex_values import host_complex_nodes

        nodes = host_complex_nodes(op, inputs, params, results)
    else:
        nodes = [record(op, tuple(a._node for a in inputs), {**params, "index": k} if results > 1 else params)
                 for k in range(results)]
    if not is_tracing():
        realize_nodes(nodes, f"linalg.{op}()")
    out = [Array(n) for n in nodes]
    return out if results > 1 else out[0]


_HOST_DOC = (" Host step: NumPy on the host as one step of the program (works inside @pt.jit; "
             "eagerly it runs at the call).")


# --- host steps --------------------------------------------------------------------------------
@api_boundary
def cholesky(x, /, *, upper=False):
    """Cholesky factor L (x = L @ L.mT) of symmetric positive-definite matrices; U = L.mT with
    upper=True."""
    return _host("cholesky", [_matrices("cholesky", x, square=True)], {"upper": bool(upper)})


@api_boundary
def det(x, /):
    """Determinants of square matrices."""
    return _host("det", [_matrices("det", x, square=True)])


@api_boundary
def slogdet(x, /):
    """(sign, log|det|) of square matrices; sign 0 and logabsdet -inf for a singular one."""
    return SlogdetResult(*_host("slogdet", [_matrices("slogdet", x, square=True)], results=2))


@api_boundary
def inv(x, /):
    """Inverses of square matrices (LinAlgError for a singular one)."""
    return _host("inv", [_matrices("inv", x, square=True)])


def _triangle(op: str, x, UPLO) -> Array:
    """The square matrices `x` arranged so the host step's lower triangle is the one NumPy's UPLO
    names: for 'U' the conjugate transpose (its lower triangle holds the upper one's values, and
    the Hermitian matrix both define is the same)."""
    a = _matrices(op, x, square=True)
    uplo = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if uplo not in ("L", "U"):
        raise ArgumentError(f"linalg.{op}: UPLO must be 'L' or 'U', got {UPLO!r}")
    if uplo == "L":
        return a
    a = matrix_transpose(a)
    if a.dtype.kind == "c":
        from poot.trace.complex_values import conj_of

        a = conj_of(a)
    return a


@api_boundary
def eigh(x, /, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric (Hermitian) matrices, from the
    lower triangle (UPLO='L', the default) or the upper one (UPLO='U'), as NumPy's."""
    return EighResult(*_host("eigh", [_triangle("eigh", x, UPLO)], results=2))


@api_boundary
def eigvalsh(x, /, UPLO="L"):
    """Eigenvalues (ascending) of symmetric (Hermitian) matrices, from the lower triangle
    (UPLO='L') or the upper one (UPLO='U')."""
    return _host("eigvalsh", [_triangle("eigvalsh", x, UPLO)])


@api_boundary
def qr(x, /, mode="reduced"):
    """QR factorization: mode 'reduced' (Q m x k, R k x n, k = min(m, n)) or 'complete' (Q m x m)
    give (Q, R); mode 'r' gives the reduced R alone, as NumPy's ('raw' is not built)."""
    if mode not in ("reduced", "complete", "r"):
        raise ShapeError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}"
                         + (" ('raw', LAPACK's Householder form, is not built)" if mode == "raw" else ""))
    if mode == "r":
        return _host("qr", [_matrices("qr", x)], {"mode": "reduced"}, results=2)[1]
    return QRResult(*_host("qr", [_matrices("qr", x)], {"mode": mode}, results=2))


@api_boundary
def svd(x, /, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition x = U @ diag(S) @ Vh, S descending. NumPy's compute_uv=False
    gives the singular values alone; hermitian=True is accepted (the general algorithm serves)."""
    if not compute_uv:
        return svdvals(x)
    return SVDResult(*_host("svd", [_matrices("svd", x)], {"full_matrices": bool(full_matrices)},
                            results=3))


@api_boundary
def svdvals(x, /):
    """Singular values, descending."""
    return _host("svdvals", [_matrices("svdvals", x)])


def _rtol(rtol, x: Array):
    """The relative cutoff, one per matrix of the stack (x's batch shape, x's dtype): max(M, N) * eps
    by default (the standard's), else rtol broadcast against the stack."""
    from poot.trace.creation import full

    batch = x.shape[:-2]
    d = dt.real_dtype(x.dtype)     # a complex stack's cutoffs are real
    if rtol is None:
        return full(batch, max(x.shape[-2:]) * float(dt.finfo(x.dtype).eps), dtype=d, device=x.device)
    r = arr(rtol)
    r = r if r.dtype is d else r.astype(d)
    try:
        return broadcast_to(r, broadcast_shapes(r.shape, batch, op="linalg")) \
            if r.shape != batch else r
    except ShapeError:
        raise ShapeError(f"linalg: rtol {r.aval} does not broadcast against the stack {x.aval}") from None


@api_boundary
def matrix_rank(x, /, tol=None, hermitian=False, *, rtol=None):
    """How many singular values exceed rtol times the largest (int64), or exceed the absolute `tol`
    (NumPy's; one per matrix of the stack). A 0-d or 1-D x has rank 1 unless it is all zeros, as
    NumPy's. hermitian=True is accepted (the singular values of the general algorithm serve). The
    singular values are a host step (svdvals); the count is lazy."""
    from poot.trace.creation import zeros

    if tol is not None and rtol is not None:
        raise ArgumentError("linalg.matrix_rank: tol and rtol cannot both be given (as NumPy)")
    xa = arr(x)
    if xa.ndim < 2:
        return red.any(ew.not_equal(xa, 0)).astype(dt.int64)
    x = _matrices("matrix_rank", xa)
    s = svdvals(x)
    if s.shape[-1] == 0:
        return zeros(s.shape[:-1], dtype=dt.int64, device=x.device)
    if tol is not None:
        t = arr(tol, "linalg.matrix_rank", (x,))
        t = t.astype(s.dtype) if t.dtype is not s.dtype else t
        try:
            t = broadcast_to(t, broadcast_shapes(t.shape, s.shape[:-1], op="linalg.matrix_rank"))
        except ShapeError:
            raise ShapeError(f"linalg.matrix_rank: tol {t.aval} does not broadcast against the stack "
                             f"{x.aval}") from None
        return red.count_nonzero(ew.greater(s, t.reshape(t.shape + (1,))), axis=-1)
    tol = _rtol(rtol, x).reshape(s.shape[:-1] + (1,)) * red.max(s, axis=-1, keepdims=True)
    return red.count_nonzero(ew.greater(s, tol), axis=-1)


_NO_VALUE = object()


@api_boundary
def pinv(x, /, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """Moore-Penrose pseudo-inverse, singular values below rtol times the largest set to zero.
    NumPy's rcond (its older name) is taken as rtol; by default the cutoff is the standard's
    max(M, N) * eps (NumPy's pinv defaults to rcond=1e-15). hermitian=True is accepted (the general
    algorithm serves)."""
    if rcond is not None and rtol is not _NO_VALUE:
        raise ArgumentError("linalg.pinv: rtol and rcond cannot both be given (as NumPy)")
    if rtol is _NO_VALUE:
        rtol = rcond
    x = _matrices("pinv", x)
    rc = _rtol(rtol, x)
    if rc.shape != x.shape[:-2]:
        raise ShapeError(f"linalg.pinv: rtol {rc.aval} must broadcast to the stack's batch "
                         f"{x.shape[:-2]}")
    return _host("pinv", [x, rc])


@api_boundary
def solve(x1, x2, /):
    """The solution X of x1 @ X = x2 for square x1; a 1-D x2 is one vector, otherwise x2 is a
    (stack of) matrix (batch axes broadcast)."""
    a = _matrices("solve", x1, square=True)
    b = arr(x2)
    d = dt.result_type(a.dtype, _float_dtype(b.dtype))
    a = a if a.dtype is d else a.astype(d)
    b = b if b.dtype is d else b.astype(d)
    vector = b.ndim == 1
    if vector:
        b = b.reshape(b.shape + (1,))
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve: x2 {arr(x2).aval} does not fit x1 {arr(x1).aval}: it needs "
                         f"{a.shape[-1]} rows")
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="linalg.solve")
    except ShapeError:
        raise ShapeError(f"linalg.solve: batch axes of {a.aval} and {b.aval} do not "
                         f"broadcast") from None
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    out = _host("solve", [a, b])
    return out[..., 0] if vector else out


for _f in (cholesky, det, slogdet, inv, eigh, eigvalsh, qr, svd, svdvals, pinv, solve):
    _f.__doc__ += _HOST_DOC


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
    from poot.trace.linalg import outer as outer_

    a, b = arr(x1), arr(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"linalg.outer: both operands must be one-dimensional, got {a.aval} and {b.aval}")
    return outer_(a, b)


@api_boundary
def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (other axes broadcast), lazily."""
    from poot.trace.movement import broadcast_arrays, moveaxis, stack

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
    if ord is None:                          # NumPy's spelling of the default 2-norm
        ord = 2  # noqa: A001
    if ord == 2 and x.dtype.kind != "c":     # the usual norm: x * x, a sum and a root (no |x| recorded)
        return ew.sqrt(red.sum(x * x, axis=axis, keepdims=keepdims))
    a = ew.abs(x)
    if ord == math.inf:      # initial 0 as NumPy's: the largest |x| of no elements is 0, not an error
        return red.max(a, axis=axis, keepdims=keepdims, initial=0)
    if ord == -math.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(x, 0), axis=axis, keepdims=keepdims).astype(a.dtype)
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return ew.sqrt(red.sum(a * a, axis=axis, keepdims=keepdims))    # |x|^2 (real) of complex values
    p = float(ord)
    return ew.power(red.sum(ew.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


@api_boundary
def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 (the standard's name)
    """Norms of the matrices in the last two axes. ord 'fro', 1, -1, inf, -inf are lazy; 2, -2 and
    'nuc' need singular values: a host step through svdvals."""
    x = _as_float(arr(x))
    if x.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: needs a matrix or a stack of matrices, got {x.aval}")
    if ord == "fro":
        sq = ew.abs(x) ** 2 if x.dtype.kind == "c" else x * x    # |x|^2 (real) for complex values
        r = ew.sqrt(red.sum(sq, axis=(-2, -1)))
    elif ord in (1, -1, math.inf, -math.inf):
        rows = ord in (math.inf, -math.inf)  # inf: max row sum; 1: max column sum
        sums = red.sum(ew.abs(x), axis=-1 if rows else -2)
        r = red.max(sums, axis=-1, initial=0) if ord > 0 else red.min(sums, axis=-1)   # 0 when empty
    elif ord in (2, -2, "nuc"):
        s = svdvals(x)
        r = (red.max(s, axis=-1, initial=0) if ord == 2 else red.min(s, axis=-1) if ord == -2    # as NumPy:
             else red.sum(s, axis=-1))                  # an empty matrix's 2-norm is 0, its -2 one an error
    else:
        raise ShapeError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, "
                         f"got {ord!r}")
    return r.reshape(r.shape + (1, 1)) if keepdims else r


@api_boundary
def matrix_power(x, n, /):
    """x raised to the integer power n: identity for 0, repeated squaring with matmul for n > 0
    (lazy); n < 0 inverts first (a host step through inv)."""
    from poot.trace.creation import eye
    from poot.trace.movement import broadcast_to

    n = operator.index(n)
    x = arr(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgShapeError(f"linalg.matrix_power: needs square matrices, got {x.aval}")
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
