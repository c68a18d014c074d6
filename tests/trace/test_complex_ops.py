"""complex64/complex128 beyond elementwise: reductions, contractions (vecdot conjugates its first
argument), movement and indexing, @pt.jit, the graph lowering against the NumPy oracle, and the
complex graphs' refusals."""
import numpy as np
import pytest

import poot as pt
from poot.graph import Aval, Eqn, Graph, Var, evaluate
from poot.graph.complex_lower import has_complex, lower_complex
from tests.trace.test_complex import CDTYPES, assert_complex_close, sample


@pytest.mark.parametrize("d", CDTYPES)
def test_reductions(device, d):
    a = sample((3, 4, 5), d)
    x = pt.asarray(a)
    for axis in (None, 0, (1, 2), -1):
        assert_complex_close(pt.sum(x, axis=axis).numpy(), np.sum(a, axis=axis), ops=32)
        assert_complex_close(pt.mean(x, axis=axis).numpy(), np.mean(a, axis=axis), ops=32)
    for axis in (None, 1):
        assert_complex_close(pt.prod(x, axis=axis).numpy(), np.prod(a, axis=axis), ops=200)
    assert_complex_close(x.sum(axis=1, keepdims=True).numpy(), a.sum(axis=1, keepdims=True), ops=8)
    assert_complex_close(pt.cumsum(x, axis=2).numpy(), np.cumsum(a, axis=2), ops=8)
    np.testing.assert_allclose(pt.var(x, axis=0).numpy(), np.var(a, axis=0), rtol=1e-4)
    assert pt.std(x).dtype == np.std(a).dtype


@pytest.mark.parametrize("d", CDTYPES)
def test_contractions(device, d):
    a, b, v = sample((2, 3, 4), d, 1), sample((4, 5), d, 2), sample((4,), d, 3)
    x, y, w = pt.asarray(a), pt.asarray(b), pt.asarray(v)
    assert_complex_close((x @ y).numpy(), a @ b, ops=16)
    assert_complex_close((x @ w).numpy(), a @ v, ops=16)
    assert_complex_close(pt.matmul(x, pt.asarray(b.real)).numpy(), a @ b.real, ops=16)
    assert_complex_close(pt.vecdot(x, w).numpy(), np.vecdot(a, v), ops=16)      # conj(x1) . x2
    assert_complex_close(pt.vdot(w, w).numpy(), np.vdot(v, v), ops=16)
    assert_complex_close(pt.dot(x[0], y).numpy(), np.dot(a[0], b), ops=16)
    assert_complex_close(pt.tensordot(x, y, axes=1).numpy(), np.tensordot(a, b, axes=1), ops=16)
    assert_complex_close(pt.einsum("ijk,kl->il", x, y).numpy(), np.einsum("ijk,kl->il", a, b), ops=32)
    assert_complex_close(pt.outer(w, w).numpy(), np.outer(v, v))


def test_movement_and_indexing(device):
    a = sample((3, 4), pt.complex64)
    x = pt.asarray(a)
    cases = [(x.T, a.T), (x[1:, ::-2], a[1:, ::-2]), (x[[2, 0]], a[[2, 0]]), (x[x.real > 0], a[a.real > 0]),
             (pt.reshape(x, (2, 6)), a.reshape(2, 6)), (pt.flip(x, axis=0), np.flip(a, 0)),
             (pt.roll(x, 2), np.roll(a, 2)), (pt.concat([x, x[:1]]), np.concatenate([a, a[:1]])),
             (pt.stack([x, x], axis=-1), np.stack([a, a], -1)), (pt.broadcast_to(x[0], (2, 4)),
                                                                   np.broadcast_to(a[0], (2, 4))),
             (pt.pad(x, ((1, 0), (0, 2))), np.pad(a, ((1, 0), (0, 2)))),
             (pt.where(x.imag > 0, x, 1j), np.where(a.imag > 0, a, np.complex64(1j))),
             (pt.expand_dims(x, 1), a[:, None]), (pt.tril(x), np.tril(a))]
    for k, (got, want) in enumerate(cases):
        assert got.dtype == want.dtype, k
        np.testing.assert_array_equal(got.numpy(), want, err_msg=str(k))
    y = x.copy()
    y[1, 2] = 5j
    b = a.copy()
    b[1, 2] = 5j
    np.testing.assert_array_equal(y.numpy(), b)


def test_jit_and_python_complex_scalars(device):
    a, b = sample((3, 4), pt.complex64, 4), sample((4, 2), pt.complex64, 5)

    @pt.jit
    def f(x, y, s):
        z = pt.exp(x * s) @ y.conj()
        return z / z.sum(axis=0), pt.abs(z), z.real

    want = np.exp(a * np.complex64(0.5j)) @ b.conj()
    for s in (0.5j, 0.5j):        # the second call replays the compiled program
        z, r, re = f(pt.asarray(a), pt.asarray(b), s)
        assert_complex_close(z.numpy(), want / want.sum(axis=0), ops=32)
        np.testing.assert_allclose(r.numpy(), np.abs(want), rtol=1e-5)
        assert re.dtype is pt.float32


def _graph(op_avals, build):
    ins = [Var(a) for a in op_avals]
    eqns = []

    def emit(op, args, aval, **params):
        v = Var(aval)
        eqns.append(Eqn(op, tuple(args), params, v))
        return v

    outs = build(emit, *ins)
    return Graph(ins, eqns, outs)


def test_lowering_matches_the_oracle():
    c = Aval((3, 2), pt.complex128)
    r = Aval((3, 2), pt.float64)

    def build(emit, x, y, f):
        p = emit("mul", (x, y), c)
        q = emit("div", (p, emit("convert", (f,), c, dtype=pt.complex128)), c)
        s = emit("reduce_prod", (emit("exp", (q,), c),), Aval((1, 2), pt.complex128), axes=(0,))
        return [s, emit("abs", (q,), r), emit("eq", (x, y), Aval((3, 2), pt.bool_))]

    g = _graph([c, c, r], build)
    xs = [sample((3, 2), pt.complex128, 6), sample((3, 2), pt.complex128, 7),
          np.random.default_rng(8).standard_normal((3, 2))]
    lowered = lower_complex(g)
    assert has_complex(g) and not has_complex(lowered)
    lowered.validate()
    parts = [x.view(np.float64).reshape(x.shape + (2,)) if x.dtype.kind == "c" else x for x in xs]
    want = evaluate(g, xs)
    got = evaluate(lowered, parts)
    assert_complex_close(got[0].reshape(-1).view(np.complex128).reshape(1, 2), want[0], ops=64)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_array_equal(got[2], want[2])
    assert lower_complex(lowered) is lowered


def test_oracle_device_agrees(device):
    a = sample((5,), pt.complex64)
    x = pt.asarray(a)
    want = (pt.sqrt(x) * pt.tan(x) + x.conj()).numpy()
    with pt.device("oracle"):
        y = pt.asarray(a)
        assert_complex_close((pt.sqrt(y) * pt.tan(y) + y.conj()).numpy(), want, ops=32)


def test_what_numpy_refuses_is_refused_clearly():
    """NumPy has no ceil, trunc or sign bit of complex values; poot names the dtype."""
    x = pt.asarray(sample((4,), pt.complex64))
    for fn in (pt.ceil, pt.trunc, pt.signbit):
        with pytest.raises(pt.DTypeError, match="complex64"):
            fn(x)


@pytest.mark.parametrize("d", CDTYPES)
def test_linalg_host_steps(device, d):
    a = sample((2, 3, 3), d, 9) + 3 * np.eye(3, dtype=d.np)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(3, dtype=d.np)       # Hermitian positive definite
    x, xh = pt.asarray(a), pt.asarray(h)
    close = lambda got, want: assert_complex_close(got.numpy(), want, ops=64)  # noqa: E731
    close(pt.linalg.inv(x), np.linalg.inv(a))
    close(pt.linalg.solve(x, x[..., :2]), np.linalg.solve(a, a[..., :2]))
    close(pt.linalg.det(x), np.linalg.det(a))
    w, v = pt.linalg.eigh(xh)
    assert w.dtype is pt.real(x).dtype
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h), rtol=1e-4)
    close(v @ (v.mT.conj() @ xh @ v), h @ v.numpy())          # xh v = v diag(w)
    u, s, vh = pt.linalg.svd(x, full_matrices=False)
    close((u * s[..., None, :].astype(d)) @ vh, a)
    q, r = pt.linalg.qr(x)
    close(q @ r, a)
    close(pt.linalg.cholesky(xh, upper=True), np.linalg.cholesky(h, upper=True))
    sign, logdet = pt.linalg.slogdet(x)
    ws, wl = np.linalg.slogdet(a)
    close(sign, ws)
    np.testing.assert_allclose(logdet.numpy(), wl, rtol=1e-4)
    close(pt.linalg.pinv(x), np.linalg.pinv(a))
    np.testing.assert_allclose(pt.linalg.matrix_norm(x).numpy(), np.linalg.norm(a, axis=(-2, -1)), rtol=1e-5)
    np.testing.assert_allclose(pt.linalg.vector_norm(x).numpy(), np.linalg.norm(a.ravel()), rtol=1e-5)
    assert pt.linalg.matrix_rank(x).numpy().tolist() == [3, 3]
    close(pt.jit(lambda m: pt.linalg.inv(m) @ m)(x), np.broadcast_to(np.eye(3, dtype=d.np), a.shape))


def test_vmap_works_and_grad_refuses_clearly():
    a = sample((3, 4), pt.complex64, 10)
    got = pt.vmap(lambda v: pt.fft.fft(v * v.conj() + v))(pt.asarray(a))
    assert_complex_close(got.numpy(), np.fft.fft(a * a.conj() + a, axis=-1), ops=32)
    r = pt.asarray(np.array([1.0, 2.0]))
    with pytest.raises(pt.NotBuiltError, match="complex derivatives are not built"):
        pt.grad(lambda v: pt.abs(pt.exp(v * 1j) * v).sum())(r)
    with pytest.raises(pt.DTypeError, match="complex128"):
        pt.grad(lambda v: pt.abs(v).sum())(pt.asarray(np.array([1j])))


def test_unique_orders_complex_values_as_numpy(device):
    a = np.array([1 + 1j, 0j, 1 + 1j, np.nan, 2 - 1j, 1 - 1j, 0j], np.complex64)
    x = pt.asarray(a)
    want = np.unique_all(a)
    got = pt.unique_all(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    padded = pt.jit(lambda v: pt.unique_counts(v, size=7, fill_value=5j))(x)
    np.testing.assert_array_equal(padded.values.numpy(), np.concatenate([want.values, [5j, 5j]]))
    np.testing.assert_array_equal(padded.counts.numpy(), np.concatenate([want.counts, [0, 0]]))


def test_complex_integer_power_under_jit():
    """x ** n of a complex array multiplies (NumPy's exact x ** 2), traced too: the check of n must
    not build an array (pt.abs shadows abs in the module that defines it)."""
    a = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j], np.complex64)
    x = pt.asarray(a)
    for n in (2, -3, 5):
        got = pt.jit(lambda x, n=n: x ** n)(x).numpy()
        np.testing.assert_allclose(got, a ** n, rtol=1e-5)


def test_eig_of_real_matrices_keeps_numpys_real_eigenvalues_and_conjugate_pairs():
    """A real matrix goes to LAPACK's real eigensolver, as in NumPy: a real eigenvalue has imaginary
    part exactly 0 and complex ones come in exact conjugate pairs, in NumPy's order (the complex
    solver gave -3.8e-16 for a real one, so `w[w.imag == 0]` missed it)."""
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    np.testing.assert_array_equal(pt.linalg.eigvals(rotation).numpy(), np.linalg.eigvals(rotation))
    m = np.random.default_rng(1).standard_normal((2, 6, 6))
    w, v = pt.linalg.eig(m)
    want_w, want_v = np.linalg.eig(m)
    np.testing.assert_array_equal(w.numpy(), want_w.astype(np.complex128))
    np.testing.assert_array_equal(v.numpy(), want_v.astype(np.complex128))
    assert w.dtype == pt.complex128 and pt.linalg.eig(m.astype(np.float32))[0].dtype == pt.complex64
    w = pt.jit(pt.linalg.eigvals)(pt.asarray(m)).numpy()
    np.testing.assert_array_equal(w[w.imag == 0], want_w[want_w.imag == 0])
    c = m + 1j * m[::-1]                                   # complex input keeps the complex solver
    np.testing.assert_allclose(pt.linalg.eigvals(c).numpy(), np.linalg.eigvals(c), rtol=1e-10, atol=1e-12)
