"""`pt.linalg.lstsq`: NumPy's least-squares solver, built on the SVD host step.

The factorization runs on the host (poot.graph.host, like `svd`); the rest (the cutoff of small
singular values, the solution, the residuals) is lazy poot arithmetic, so the solver works inside
`@pt.jit`, batches under `pt.vmap` and differentiates through the SVD's derivative rules.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import ShapeError, api_boundary
from poot.trace import reductions as red
from poot.trace.array_api_linalg import _float_dtype, _matrices, svd
from poot.trace.complex_values import conj_of, imag_of, real_of
from poot.trace.creation import zeros
from poot.trace.lazy import is_tracing
from poot.trace.movement import arr, matrix_transpose
from poot.trace.selection import where

__all__ = ["lstsq"]


@api_boundary
def lstsq(a, b, rcond=None):
    """The least-squares solution x of `a @ x = b` as NumPy's `numpy.linalg.lstsq`: returns
    `(x, residuals, rank, s)`. `a` is one (M, N) matrix, `b` has M rows (a vector or K columns);
    singular values at most `rcond` (default: machine epsilon times max(M, N)) times the largest are
    treated as zero. `residuals` are the squared 2-norms of the columns of `b - a @ x` when M > N, of
    shape (K,) ((1,) for a vector `b`), else empty. NumPy also returns them empty when the rank is
    below N: eagerly poot does the same, but inside a traced function a shape cannot depend on the
    values, so there (as in JAX) the residual sums are returned whatever the rank."""
    a = _matrices("lstsq", a)
    if a.ndim != 2:
        raise ShapeError(f"linalg.lstsq: a must be one matrix (2 dimensions), got {a.aval}")
    b = arr(b)
    d = dt.result_type(a.dtype, _float_dtype(b.dtype))
    a = a if a.dtype is d else a.astype(d)
    b = b if b.dtype is d else b.astype(d)
    m, n = a.shape
    vector = b.ndim == 1
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise ShapeError(f"linalg.lstsq: b {b.aval} does not fit a {a.aval}: it needs {m} rows "
                         f"(a vector, or a matrix of right-hand sides)")
    rhs = b.reshape((m, 1)) if vector else b
    u, s, vh = svd(a, full_matrices=False)
    if s.shape[0] == 0:      # an empty matrix: the minimum-norm solution is zero
        x = zeros((n, rhs.shape[1]), dtype=d, device=a.device)
        rank = zeros((), dtype=dt.int32, device=a.device)
    else:
        cutoff = max(m, n) * float(dt.finfo(d).eps) if rcond is None else float(rcond)
        keep = s > cutoff * s[:1]
        # 1/s only where kept: a zero singular value must not put inf * 0 into x or its derivative
        s_inv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
        # the pseudo-inverse V S^+ U^H: conjugate transposes, which a complex a needs (a = U S V^H)
        x = _adjoint(vh) @ (s_inv.reshape((-1, 1)) * (_adjoint(u) @ rhs))
        rank = red.count_nonzero(keep).astype(dt.int32)     # NumPy's rank is int32
    rd = dt.real_dtype(d)           # NumPy's residuals are real (sum |r|^2) for a complex system too
    residuals = _squared_norms(rhs - a @ x) if m > n else zeros((0,), dtype=rd, device=a.device)
    if m > n and not is_tracing() and int(rank) < n:
        residuals = zeros((0,), dtype=rd, device=a.device)
    return (x.reshape((n,)) if vector else x), residuals, rank, s


def _adjoint(m):
    """The conjugate transpose of matrix `m` (the plain transpose for a real one)."""
    return matrix_transpose(conj_of(m) if m.dtype.kind == "c" else m)


def _squared_norms(r):
    """The squared 2-norm of each column of `r`, real: re^2 + im^2 for a complex `r` (not r**2, which
    is complex and wrong, nor abs(r)**2, whose square root has no derivative at a zero residual)."""
    if r.dtype.kind == "c":
        return red.sum(real_of(r) ** 2 + imag_of(r) ** 2, axis=0)
    return red.sum(r ** 2, axis=0)
