"""Derivative rules of the host ops (poot.graph.host): sort and the linear-algebra factorizations.

Forward-mode rules are the textbook ones (Giles, "An extended collection of matrix derivative
results"; Murray, arXiv:1602.07527 for cholesky; Townsend 2016 for svd), written with poot ops and the host ops
themselves. Each is linear in the tangents, so its reverse-mode rule is its transpose, obtained
by running the reverse pass over the forward rule as a function of the tangents (`transposed`):
one formula per op serves both modes.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import NotBuiltError
from poot.trace.array import Array

from poot.trace.control import cond as pt_cond
from poot.trace.control import fori_loop

from .flat import vjp_flat
from .prims import bind, convert, reshape, where, zeros_like


def _mT(x: Array) -> Array:
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return bind("transpose", x, perm=perm)


def _mm(a: Array, b: Array) -> Array:
    return bind("matmul", a, b)


def _eye_mask(x: Array, lower: bool = False) -> Array:
    """A bool matrix of x's last two axes: the diagonal (or the lower triangle)."""
    n = x.shape[-1]
    rows = bind("iota", device=x.device, shape=(n, n), axis=0, dtype=dt.int64)
    cols = bind("iota", device=x.device, shape=(n, n), axis=1, dtype=dt.int64)
    return bind("ge" if lower else "eq", rows, cols)


def _trace_of_product(a: Array, b: Array) -> Array:
    """trace(a @ b) over the batch, as sum(a^T * b)."""
    return bind("reduce_sum", _mT(a) * b, axes=(a.ndim - 2, a.ndim - 1))


def _batch(x: Array) -> Array:
    """A (batch..., 1, 1)-shaped reduction result as the (batch...) shape of det/slogdet."""
    return reshape(x, x.shape[:-2])


def _expand(x: Array) -> Array:
    return reshape(x, x.shape + (1, 1))


# --- forward-mode rules -------------------------------------------------------------------------
def _sort_jvp(primals, tangents, out, axis, descending):
    from poot.trace.indexing import take_along_axis

    perm = bind("argsort", primals[0], axis=axis, descending=descending)
    return take_along_axis(tangents[0], perm, axis)


def _solve_jvp(primals, tangents, out, **params):
    a, b = primals
    ta, tb = tangents
    rhs = tb if tb is not None else zeros_like(out)
    if ta is not None:
        rhs = rhs - _mm(ta, out)
    return bind("solve", a, rhs)


def _inv_jvp(primals, tangents, out, **params):
    return -_mm(_mm(out, tangents[0]), out)


def _det_jvp(primals, tangents, out, **params):
    """d det(A) = sum(cof(A) * dA), cof(A) = adj(A)^T: defined at a singular A too, as in JAX."""
    cof = _cofactors(primals[0], out)
    return _batch(bind("reduce_sum", cof * tangents[0], axes=(out.ndim, out.ndim + 1)))


def _cofactors(a: Array, det: Array) -> Array:
    """The cofactor matrix of `a`: det(A) A^-T where every matrix of the batch is invertible (det is
    nonzero), else without an inverse (`_singular_cofactors`). A device cond picks one,
    so the usual case keeps inv's derivative (Hessians) and a singular matrix does not fail in inv."""
    flat = reshape(bind("abs", det), (det.size,))
    smallest = reshape(bind("reduce_min", flat, axes=(0,)), ())
    invertible = bind("gt", smallest, zeros_like(smallest))
    return pt_cond(invertible, lambda m, d: _expand(d) * _mT(bind("inv", m)), _singular_cofactors, a, det)


def _singular_cofactors(a: Array, det: Array) -> Array:
    """cof(A) of a batch with a singular matrix: the value from the SVD (`_svd_cofactors`, stable),
    the derivative from the Faddeev-LeVerrier polynomial (`_polynomial_cofactors`, exact at any
    order, where the SVD's derivative is undefined at repeated or zero singular values)."""
    poly = _polynomial_cofactors(a)
    return _cut(_svd_cofactors(a)) + (poly - _cut(poly))


def _cut(x: Array) -> Array:
    """`x`'s value without a derivative (a same-type bitcast: no rule relates the values)."""
    return bind("bitcast", x, dtype=x.dtype)


def _polynomial_cofactors(a: Array) -> Array:
    """cof(A) = adj(A)^T, adj(A) = (-1)^(n+1) M_n of the Faddeev-LeVerrier recurrence M_1 = I,
    M_(k+1) = A M_k + c_(n-k) I, c_(n-k-1) = -tr(A M_(k+1)) / (k+1): a polynomial in A, one device loop."""
    n = a.shape[-1]
    eye = zeros_like(a) + convert(_eye_mask(a), a.dtype)

    def step(k, carry):
        m, c = carry
        m = _mm(a, m) + c * eye
        return m, -_trace_of_product(a, m) / convert(k + 1, a.dtype)

    m, _ = fori_loop(1, n, step, (eye, -_trace_of_product(a, eye)))
    return _mT(m) if n % 2 else -_mT(m)


def _svd_cofactors(a: Array) -> Array:
    """cof(A) for A = U S V^T: det(U) det(V) U adj(S) V^T, adj(S)_i the product of the other singular
    values (exact where one or more are zero)."""
    u, s, vh = (Array(bind("svd", a, full_matrices=False, index=k)._node) for k in range(3))
    n = s.shape[-1]
    others = where(_eye_mask(a), zeros_like(a) + 1.0, reshape(s, s.shape[:-1] + (1, n)) + zeros_like(a))
    adj_s = bind("reduce_prod", others, axes=(a.ndim - 1,))            # prod_{j != i} s_j: (..., n, 1)
    sign = bind("det", u) * bind("det", vh)
    return _expand(sign) * _mm(u * reshape(adj_s, adj_s.shape[:-2] + (1, n)), vh)


def _slogdet_jvp(primals, tangents, outs, **params):
    inv = bind("inv", primals[0])
    return [zeros_like(outs[0]), _batch(_trace_of_product(inv, tangents[0]))]


def _cholesky_jvp(primals, tangents, out, upper):
    """Murray's rule on the symmetric part of the tangent, (dA + dA^T) / 2, as JAX does: cholesky is
    defined on symmetric matrices, so only symmetric directions are meaningful, and symmetrizing
    here (the transposed rule then symmetrizes the cotangent) makes the gradient symmetric."""
    low = _mT(out) if upper else out
    inv = bind("inv", low)
    sym = (tangents[0] + _mT(tangents[0])) * 0.5
    inner = _mm(_mm(inv, sym), _mT(inv))                   # L^-1 sym(dA) L^-T
    mask = _eye_mask(inner, lower=True)
    half = where(_eye_mask(inner), inner * 0.5, inner)
    phi = where(mask, half, zeros_like(inner))
    d_low = _mm(low, phi)
    return _mT(d_low) if upper else d_low


def _eigh_parts(a: Array, ta: Array, w: Array, v: Array):
    """The tangents of eigh's eigenvalues and eigenvectors along the symmetric part of `ta`, as JAX
    (which symmetrizes eigh's input): eigh is defined on symmetric matrices, and the transposed rule
    then gives a symmetric gradient for the eigenvectors as it does for the eigenvalues."""
    n = a.shape[-1]
    ta = (ta + _mT(ta)) * 0.5
    eye = convert(_eye_mask(a), a.dtype)
    gap = reshape(w, w.shape[:-1] + (1, n)) - reshape(w, w.shape + (1,))
    f = 1.0 / (eye + gap) - eye                               # 1 / (w_j - w_i) off the diagonal
    vt_da_v = _mm(_mm(_mT(v), ta), v)
    dw = bind("reduce_sum", vt_da_v * eye, axes=(a.ndim - 1,))
    return reshape(dw, w.shape), _mm(v, f * vt_da_v)


def _eigh_jvp(primals, tangents, outs, **params):
    dw, dv = _eigh_parts(primals[0], tangents[0], outs[0], outs[1])
    return [dw, dv]


def _eigvalsh_jvp(primals, tangents, out, **params):
    a = primals[0]
    w, v = (Array(bind("eigh", a, index=k)._node) for k in (0, 1))
    return _eigh_parts(a, tangents[0], w, v)[0]


def _svdvals_jvp(primals, tangents, out, **params):
    a = primals[0]
    u, vh = (Array(bind("svd", a, full_matrices=False, index=k)._node) for k in (0, 2))
    ds = bind("reduce_sum", _mm(_mT(u), tangents[0]) * vh, axes=(a.ndim - 1,))   # diag(U^T dA V)
    return reshape(ds, out.shape)


def _svd_jvp(primals, tangents, outs, full_matrices):
    """Townsend, "Differentiating the singular value decomposition" (2016), for distinct nonzero
    singular values; with dP = U^T dA V and F_ij = 1 / (s_j^2 - s_i^2) off the diagonal:
    dS = diag(dP), dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V S^-1, and dV likewise."""
    a, ta = primals[0], tangents[0]
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise NotBuiltError(f"the derivative of svd(full_matrices=True) of a non-square {a.shape} matrix "
                            f"is not built (its extra singular vectors are not unique); pass "
                            f"full_matrices=False")
    u, s, vh = outs
    v = _mT(vh)
    k = s.shape[-1]
    row = reshape(s, s.shape[:-1] + (1, k))                  # s_j along the columns
    col = reshape(s, s.shape + (1,))                         # s_i along the rows
    ta_v, ta_t_u = _mm(ta, v), _mm(_mT(ta), u)
    dp = _mm(_mT(u), ta_v)
    eye = convert(_eye_mask(dp), a.dtype)
    f = 1.0 / (eye + (row * row - col * col)) - eye
    ds = reshape(bind("reduce_sum", dp * eye, axes=(a.ndim - 1,)), s.shape)
    du = _mm(u, f * (dp * row + col * _mT(dp))) + (ta_v - _mm(u, dp)) / row
    dv = _mm(v, f * (col * dp + _mT(dp) * row)) + (ta_t_u - _mm(v, _mT(dp))) / row
    return [du, ds, _mT(dv)]


def _qr_jvp(primals, tangents, outs, mode):
    """Reduced QR of a tall or square matrix (Walter and Lehmann; as in JAX): with X = dA R^-1 and
    C = Q^T X, omega = the skew-symmetric part built from C's strict lower triangle, dQ = Q omega +
    X - Q C and dR = (C - omega) R."""
    a, ta = primals[0], tangents[0]
    m, n = a.shape[-2:]
    if m < n or (mode == "complete" and m != n):
        raise NotBuiltError(f"the derivative of qr of a {a.shape} matrix in mode '{mode}' is not built "
                            f"(only the reduced QR of a matrix with at least as many rows as columns)")
    q, r = outs
    x = _mT(bind("solve", _mT(r), _mT(ta)))                  # dA R^-1
    c = _mm(_mT(q), x)
    rows = bind("iota", device=a.device, shape=(n, n), axis=0, dtype=dt.int64)
    cols = bind("iota", device=a.device, shape=(n, n), axis=1, dtype=dt.int64)
    low = where(bind("gt", rows, cols), c, zeros_like(c))
    omega = low - _mT(low)
    return [_mm(q, omega) + x - _mm(q, c), _mm(c - omega, r)]


def _pinv_jvp(primals, tangents, out, **params):
    """Golub and Pereyra (1973), as in JAX, for a matrix whose rank the cutoff keeps unchanged near A:
    with P = pinv(A) (N x M), dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P. The cutoff
    operand has no derivative (the rank is piecewise constant in it)."""
    a, ta = primals[0], tangents[0]
    if ta is None:
        return zeros_like(out)
    p, ta_t = out, _mT(ta)
    eye_m = convert(_eye_mask(_mm(a, p)), a.dtype)
    eye_n = convert(_eye_mask(_mm(p, a)), a.dtype)
    d = -_mm(_mm(p, ta), p)
    d = d + _mm(_mm(_mm(p, _mT(p)), ta_t), eye_m - _mm(a, p))
    return d + _mm(_mm(_mm(eye_n - _mm(p, a), ta_t), _mT(p)), p)


JVP = {"sort": _sort_jvp, "solve": _solve_jvp, "inv": _inv_jvp, "det": _det_jvp,
       "slogdet": _slogdet_jvp, "cholesky": _cholesky_jvp, "eigh": _eigh_jvp,
       "eigvalsh": _eigvalsh_jvp, "svdvals": _svdvals_jvp, "svd": _svd_jvp, "qr": _qr_jvp,
       "pinv": _pinv_jvp}

_MULTI = {"slogdet", "eigh", "svd", "qr"}


# --- reverse mode: the transposed forward rules --------------------------------------------------
def transposed(op: str, jvp_rule, multi: bool):
    """The reverse-mode rule of an op whose forward rule is linear in the tangents."""
    def rule(cts, primals, outs, **params):
        floats = [i for i, p in enumerate(primals) if p.dtype.kind == "f"]
        results = outs if multi else [outs]
        cts = cts if multi else [cts]

        def linear(*ts):
            tangents = [None] * len(primals)
            for i, t in zip(floats, ts):
                tangents[i] = t
            got = jvp_rule(primals, tangents, outs, **params)
            got = got if multi else [got]
            return [g if g is not None else zeros_like(r) for g, r in zip(got, results)]

        _, pull = vjp_flat(linear, [zeros_like(primals[i]) for i in floats], f"grad of {op}")
        back = pull([c if r.dtype.kind == "f" else None for c, r in zip(cts, results)])
        full = [None] * len(primals)
        for i, b in zip(floats, back):
            full[i] = b
        return full
    return rule


def _solve_vjp(ct, primals, out, **params):
    """Direct, not transposed: the transpose of solve's forward rule is itself a solve."""
    a, b = primals
    ct_b = bind("solve", _mT(a), ct)
    return [-_mm(ct_b, _mT(out)), ct_b]


VJP = {op: transposed(op, rule, op in _MULTI) for op, rule in JVP.items()}
VJP["solve"] = _solve_vjp
