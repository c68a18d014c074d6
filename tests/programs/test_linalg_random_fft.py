"""Numerical programs over pt.linalg, pt.random and pt.fft, written as NumPy and JAX users write them:
a Kalman filter over 50 steps (and the gradient of its likelihood), least squares four ways, PCA
through svd and eigh, a matrix exponential by scaling and squaring, batched determinants, inverses,
norms of every order; JAX's key-first samplers (choice, randint with array bounds, exponential,
gamma, beta, poisson, dirichlet, multivariate_normal and more) checked statistically and for
determinism; FFT convolution, a spectral derivative and every norm mode at odd lengths. Each
program runs eagerly and with its step under @pt.jit against NumPy; derivatives are checked against
central differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

from .harness import check_program

R = np.random.default_rng(50)


def central_difference(f, a, h=1e-6):
    """d f / d a (f: float64 NumPy function of a float64 array) by central differences."""
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = h
        g[i] = (f(a + e) - f(a - e)) / (2 * h)
    return g


# -- a constant-velocity Kalman filter over 50 measurements -----------------------------------------
DT = 0.1
F = np.array([[1, DT, 0, 0], [0, 1, 0, 0], [0, 0, 1, DT], [0, 0, 0, 1.0]])
H = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
ZS = R.normal(size=(50, 2)).cumsum(axis=0)


def kalman_step(xp, x, P, z, F, H, Q, Rm):
    x = F @ x
    P = F @ P @ F.T + Q
    S = H @ P @ H.T + Rm
    K = xp.linalg.solve(S.T, (P @ H.T).T).T
    v = z - H @ x
    x = x + K @ v
    eye = xp.eye(P.shape[0], dtype=P.dtype)
    P = (eye - K @ H) @ P @ (eye - K @ H).T + K @ Rm @ K.T      # Joseph form
    nll = 0.5 * (xp.linalg.slogdet(S)[1] + v @ xp.linalg.solve(S, v))
    return x, P, nll


def kalman_run(xp, step, zs, F, H, Q, Rm):
    x = xp.zeros(F.shape[0], dtype=F.dtype)
    P = xp.eye(F.shape[0], dtype=F.dtype)
    xs, nlls = [], []
    for t in range(zs.shape[0]):
        x, P, nll = step(xp, x, P, zs[t], F, H, Q, Rm)
        xs.append(x)
        nlls.append(nll)
    return xp.stack(xs), P, xp.stack(nlls)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_kalman_filter(device, dtype):
    inputs = tuple(a.astype(dtype) for a in (ZS, F, H, 0.01 * np.eye(4), 0.5 * np.eye(2)))
    check_program(device, kalman_run, kalman_step, inputs, ops=(400, 400, 400))


def kalman_nll(xp, log_q, log_r, zs):
    """The innovations negative log-likelihood of the noise levels (cholesky + triangular solves)."""
    Q = xp.exp(log_q) * xp.eye(4)
    Rm = xp.exp(log_r) * xp.eye(2)
    x, P, total = xp.zeros(4), xp.eye(4), 0.0
    for t in range(zs.shape[0]):
        x, P = F @ x, F @ P @ F.T + Q
        S = H @ P @ H.T + Rm
        v = zs[t] - H @ x
        L = xp.linalg.cholesky(S)
        a = xp.linalg.solve(L, v)
        total = total + 0.5 * (a @ a) + xp.sum(xp.log(xp.diagonal(L)))
        K = xp.linalg.solve(S, H @ P).T
        x, P = x + K @ v, P - K @ S @ K.T
    return total


def test_kalman_likelihood_gradient(device):
    zs = ZS[:20]
    f = pt.jit(pt.value_and_grad(lambda q, r: kalman_nll(pt, q, r, pt.asarray(zs)), argnums=(0, 1)))
    value, (gq, gr) = f(pt.asarray(-2.0), pt.asarray(0.3))
    assert_close(value.numpy(), kalman_nll(np, -2.0, 0.3, zs), pt.float64, ops=200)
    want = central_difference(lambda p: kalman_nll(np, p[0], p[1], zs), np.array([-2.0, 0.3]))
    np.testing.assert_allclose([float(gq), float(gr)], want, rtol=1e-6)


# -- least squares four ways, and PCA ---------------------------------------------------------------
def least_squares_step(xp, X, y, lam):
    n = X.shape[1]
    ridge = xp.linalg.solve(X.T @ X + lam * xp.eye(n, dtype=X.dtype), X.T @ y)
    ols = xp.linalg.lstsq(X, y, rcond=None)[0]
    via_pinv = xp.linalg.pinv(X) @ y
    L = xp.linalg.cholesky(X.T @ X + lam * xp.eye(n, dtype=X.dtype))
    via_cholesky = xp.linalg.solve(L.T, xp.linalg.solve(L, X.T @ y))
    return ridge, ols, via_pinv, via_cholesky


def least_squares_run(xp, step, X, y):
    return step(xp, X, y, 0.1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_least_squares(device, dtype):
    X = R.normal(size=(40, 5))
    y = X @ np.arange(1.0, 6.0) + 0.1 * R.normal(size=40)
    check_program(device, least_squares_run, least_squares_step, (X.astype(dtype), y.astype(dtype)), ops=300)


def pca_step(xp, X):
    Xc = X - X.mean(axis=0)
    _, s, Vt = xp.linalg.svd(Xc, full_matrices=False)
    w, V = xp.linalg.eigh(Xc.T @ Xc / (X.shape[0] - 1))
    by_svd = xp.abs(Xc @ Vt[:2].T)               # the scores, up to the sign of each component
    by_eigh = xp.abs(Xc @ V[:, ::-1][:, :2])
    return s**2 / (X.shape[0] - 1), w[::-1], by_svd, by_eigh


def pca_run(xp, step, X):
    return step(xp, X)


def test_pca_svd_and_eigh(device):
    X = R.normal(size=(60, 4)) @ np.diag([5.0, 3.0, 1.0, 0.5])
    check_program(device, pca_run, pca_step, (X,), ops=500)


# -- expm by scaling and squaring, batched determinants and friends ---------------------------------
def expm_step(xp, A):
    s = 6
    T = E = xp.eye(A.shape[0], dtype=A.dtype)
    for k in range(1, 14):                       # Taylor series of exp(A / 2**s) ...
        T = T @ (A / 2**s) / k
        E = E + T
    for _ in range(s):                           # ... squared s times
        E = E @ E
    return E, xp.linalg.det(E), xp.linalg.matrix_power(E, -2)


def expm_run(xp, step, A):
    return step(xp, A)


def test_matrix_exponential(device):
    A = R.normal(size=(4, 4))
    check_program(device, expm_run, expm_step, (A,), ops=2000)
    E = pt.jit(expm_step, static_argnums=0)(pt, pt.asarray(A))[1]
    assert_close(E.numpy(), math.exp(np.trace(A)), pt.float64, ops=2000)     # det(exp A) = exp(tr A)


def batched_step(xp, A):
    sign, logdet = xp.linalg.slogdet(A)
    return (xp.linalg.det(A), sign, logdet, xp.linalg.inv(A) @ A, xp.linalg.cond(A),
            xp.linalg.matrix_rank(A), xp.linalg.matrix_power(A, 3), xp.linalg.norm(A, 2, axis=(-2, -1)))


def batched_run(xp, step, A):
    return step(xp, A)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
def test_batched_matrix_functions(device, dtype):
    A = R.normal(size=(5, 3, 3)) + (1j * R.normal(size=(5, 3, 3)) if dtype == np.complex128 else 0)
    check_program(device, batched_run, batched_step, (A.astype(dtype),), ops=200)


MATRIX_ORDS = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]
VECTOR_ORDS = [None, np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5]


@pytest.mark.parametrize("ord_", MATRIX_ORDS, ids=str)
def test_matrix_norms(ord_):
    A = R.normal(size=(3, 4, 5))
    for axis, keepdims in (((1, 2), False), ((2, 0), True)):
        got = pt.jit(lambda a, axis=axis, keepdims=keepdims: pt.linalg.norm(a, ord_, axis, keepdims))(pt.asarray(A))
        assert_close(got.numpy(), np.linalg.norm(A, ord_, axis, keepdims), pt.float64, ops=50)


@pytest.mark.parametrize("ord_", VECTOR_ORDS, ids=str)
def test_vector_norms(ord_):
    A = R.normal(size=(3, 4, 5))
    for axis, keepdims in ((0, False), (-1, True)):
        got = pt.linalg.norm(pt.asarray(A), ord_, axis, keepdims)
        assert_close(got.numpy(), np.linalg.norm(A, ord_, axis, keepdims), pt.float64, ops=20)


# -- derivatives of the pseudo-inverse --------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)], ids=str)
def test_pinv_gradient_and_tangent(shape):
    a = R.normal(size=shape)
    w = R.normal(size=shape[:-2] + shape[::-1][:2])

    def loss(xp):
        return lambda m: (xp.linalg.pinv(m) * w).sum() + (xp.linalg.pinv(m) ** 2).sum()

    want = central_difference(loss(np), a)
    np.testing.assert_allclose(pt.grad(loss(pt))(pt.asarray(a)).numpy(), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(pt.jit(pt.grad(loss(pt)))(pt.asarray(a)).numpy(), want, rtol=1e-6, atol=1e-8)
    t = R.normal(size=shape)
    _, tangent = pt.jvp(pt.linalg.pinv, (pt.asarray(a),), (pt.asarray(t),))
    h = 1e-6
    fd = (np.linalg.pinv(a + h * t) - np.linalg.pinv(a - h * t)) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_least_squares_through_pinv_is_trainable():
    """grad of a pinv-based fit equals that of the solve-based normal equations (full column rank)."""
    X, y = R.normal(size=(12, 3)), R.normal(size=12)
    by_pinv = pt.grad(lambda m: ((m @ (pt.linalg.pinv(m) @ y) - y) ** 2).sum())(pt.asarray(X))
    by_solve = pt.grad(lambda m: ((m @ pt.linalg.solve(m.T @ m, m.T @ y) - y) ** 2).sum())(pt.asarray(X))
    np.testing.assert_allclose(by_pinv.numpy(), by_solve.numpy(), rtol=1e-8, atol=1e-10)


# -- JAX's key-first samplers -----------------------------------------------------------------------
KEY = pt.random.key(50)


def test_generator_shuffles_host_arrays_and_lists_in_place():
    """rng.shuffle(idx) on a NumPy index array or a list, as a data pipeline writes it."""
    rng = pt.random.default_rng(7)
    idx = np.arange(10)
    rng.shuffle(idx)
    assert sorted(idx.tolist()) == list(range(10)) and not np.array_equal(idx, np.arange(10))
    rows = np.arange(20).reshape(4, 5)
    rng.shuffle(rows, axis=1)
    assert (np.sort(rows, axis=1) == np.arange(20).reshape(4, 5)).all()
    assert (np.diff(rows, axis=0) == 5).all()             # every row moved by the same order
    items = list("abcdefgh")
    rng.shuffle(items)
    assert sorted(items) == list("abcdefgh")
    with pytest.raises(pt.AxisError):
        rng.shuffle(np.arange(3), axis=1)
    with pytest.raises(pt.DTypeError, match="a NumPy array or a list"):
        rng.shuffle((1, 2, 3))


def test_keyed_choice_shapes_and_replacement():
    x = pt.arange(12.0).reshape(4, 3)
    assert pt.random.choice(KEY, x, (2, 5), axis=1).shape == (4, 2, 5)
    assert pt.random.choice(KEY, x, ()).shape == (3,)
    drawn = pt.random.choice(KEY, 10, (10,), replace=False).numpy()
    assert sorted(drawn.tolist()) == list(range(10)) and drawn.dtype == np.int64
    top = pt.random.choice(KEY, 6, (3,), replace=False, p=pt.asarray([0.1, 0.1, 0.1, 0.1, 0.3, 0.3]))
    assert len(set(top.numpy().tolist())) == 3
    a = pt.random.choice(KEY, 7, (5,)).numpy()                      # deterministic, and within range
    assert np.array_equal(a, pt.random.choice(KEY, 7, (5,)).numpy()) and a.min() >= 0 and a.max() < 7
    with pytest.raises(pt.ShapeError, match="without replacement"):
        pt.random.choice(KEY, 3, (5,), replace=False)
    with pytest.raises(pt.ShapeError, match="p of shape"):
        pt.random.choice(KEY, 3, (5,), p=[0.5, 0.5])
    # NumPy's global-state choice is unchanged
    pt.random.seed(0)
    assert pt.random.choice(5, 3).shape == (3,)


def test_keyed_choice_frequencies_under_jit():
    p = pt.asarray([0.2, 0.3, 0.5])
    draws = pt.jit(lambda k, q: pt.random.choice(k, 3, (40_000,), p=q))(KEY, p).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, [0.2, 0.3, 0.5], atol=0.01)
    firsts = pt.vmap(lambda k: pt.random.choice(k, 4, (2,), replace=False, p=[0.1, 0.2, 0.3, 0.4]))(
        pt.random.split(KEY, 4000)).numpy()[:, 0]      # Gumbel top-k: the first pick follows p
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / firsts.size, [0.1, 0.2, 0.3, 0.4],
                               atol=0.025)


def test_randint_with_array_and_traced_bounds():
    lo, hi = np.array([0, 10, -5]), np.array([1, 11, 5])
    x = pt.random.randint(KEY, (20_000, 3), lo, hi).numpy()
    assert x.dtype == np.int64 and (x >= lo).all() and (x < hi).all()
    np.testing.assert_allclose(np.bincount(x[:, 2] + 5) / 20_000, np.full(10, 0.1), atol=0.01)
    traced = pt.jit(lambda k, n: pt.random.randint(k, (6,), 0, n))(KEY, pt.asarray(7)).numpy()
    assert np.array_equal(traced, pt.random.randint(KEY, (6,), 0, 7).numpy())  # the same words as scalars
    with pytest.raises(pt.ShapeError, match="does not broadcast"):
        pt.random.randint(KEY, (4,), np.array([1, 2, 3]), 10)


def _mean_var(x):
    x = np.asarray(x, dtype=np.float64)
    return x.mean(), x.var()


@pytest.mark.parametrize("name, call, mean, var", [
    ("exponential", lambda k, n: pt.random.exponential(k, (n,)), 1.0, 1.0),
    ("gamma", lambda k, n: pt.random.gamma(k, 2.5, (n,)), 2.5, 2.5),
    ("beta", lambda k, n: pt.random.beta(k, 2.0, 3.0, (n,)), 0.4, 0.04),
    ("poisson", lambda k, n: pt.random.poisson(k, 4.0, (n,)), 4.0, 4.0),
    ("laplace", lambda k, n: pt.random.laplace(k, (n,)), 0.0, 2.0),
    ("logistic", lambda k, n: pt.random.logistic(k, (n,)), 0.0, math.pi**2 / 3),
    ("binomial", lambda k, n: pt.random.binomial(k, 20, 0.3, (n,)), 6.0, 4.2),
    ("geometric", lambda k, n: pt.random.geometric(k, 0.3, (n,)), 1 / 0.3, 0.7 / 0.09),
    ("chisquare", lambda k, n: pt.random.chisquare(k, 3.0, (n,)), 3.0, 6.0),
    ("f", lambda k, n: pt.random.f(k, 10.0, 20.0, (n,)), 20 / 18, 2 * 400 * 28 / (10 * 18**2 * 16)),
    ("rayleigh", lambda k, n: pt.random.rayleigh(k, 2.0, (n,)), 2 * math.sqrt(math.pi / 2), (4 - math.pi) * 2),
    ("triangular", lambda k, n: pt.random.triangular(k, 0.0, 1.0, 3.0, (n,)), 4 / 3, 7 / 18),
    ("lognormal", lambda k, n: pt.random.lognormal(k, 0.5, (n,)), math.exp(0.125),
     (math.exp(0.25) - 1) * math.exp(0.25)),
    ("pareto", lambda k, n: pt.random.pareto(k, 6.0, (n,)), 1.2, 0.06),          # on [1, inf), as JAX's
    ("wald", lambda k, n: pt.random.wald(k, 1.5, (n,)), 1.5, 1.5**3),
    ("t", lambda k, n: pt.random.t(k, 10.0, (n,)), 0.0, 1.25),
    ("rademacher", lambda k, n: pt.random.rademacher(k, (n,)), 0.0, 1.0),
])
def test_keyed_distributions(name, call, mean, var):
    n = 40_000
    x = call(KEY, n)
    assert np.array_equal(x.numpy(), call(KEY, n).numpy()), f"{name} is not deterministic in its key"
    m, v = _mean_var(x.numpy())
    assert abs(m - mean) < 5 * math.sqrt(var / n), (name, m, mean)
    assert abs(v / var - 1) < 0.08, (name, v, var)


def test_keyed_draw_dtypes_and_cauchy_quartiles():
    assert pt.random.binomial(KEY, 5, 0.5, (3,)).dtype == pt.float64           # JAX's binomial is float
    assert pt.random.poisson(KEY, 2.0, (3,), pt.int32).dtype == pt.int32
    assert pt.random.gamma(KEY, 2.0, (3,), pt.float32).dtype == pt.float32
    assert pt.random.rademacher(KEY, (3,)).dtype == pt.int64
    assert pt.random.lognormal(KEY, shape=(2,)).shape == (2,)                  # sigma defaults to 1
    assert pt.random.gamma(KEY, pt.asarray([1.0, 2.0, 3.0])).shape == (3,)     # the parameters' shape
    q = np.quantile(pt.random.cauchy(KEY, (40_000,)).numpy(), [0.25, 0.5, 0.75])
    np.testing.assert_allclose(q, [-1.0, 0.0, 1.0], atol=0.05)
    with pytest.raises(pt.ArgumentError, match="missing the parameter 'a'"):
        pt.random.gamma(KEY)


def test_keyed_dirichlet_and_multivariate_normal():
    d = pt.random.dirichlet(KEY, pt.asarray([1.0, 2.0, 3.0]), (20_000,)).numpy()
    np.testing.assert_allclose(d.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(d.mean(axis=0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    for method in ("cholesky", "eigh", "svd"):
        x = pt.random.multivariate_normal(KEY, pt.asarray([1.0, -1.0]), pt.asarray(cov), (40_000,),
                                          method=method).numpy()
        np.testing.assert_allclose(x.mean(axis=0), [1.0, -1.0], atol=0.04)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    assert pt.random.multivariate_normal(KEY, pt.zeros((3, 2)), pt.eye(2)).shape == (3, 2)
    jitted = pt.jit(lambda k, m, c: pt.random.multivariate_normal(k, m, c, (4,)))
    assert jitted(KEY, pt.zeros(2), pt.eye(2)).shape == (4, 2)
    pt.random.seed(1)                        # NumPy's global-state forms are unchanged
    assert pt.random.multivariate_normal([0.0, 0.0], np.eye(2), 3).shape == (3, 2)
    assert pt.random.gamma(2.0, size=3).shape == (3,)


def test_key_data_round_trip():
    k = pt.random.split(KEY)[1]
    assert np.array_equal(pt.random.key_data(k).numpy(), k.numpy())
    assert np.array_equal(pt.random.wrap_key_data(k.numpy()).numpy(), k.numpy())
    with pytest.raises(pt.ArgumentError, match="key_data"):
        pt.random.key_data(pt.ones(2))


def test_keys_from_traced_seeds_and_split_shapes():
    for seed in (3, -1, 2**40 + 5):
        want = pt.random.key(seed).numpy()
        assert np.array_equal(pt.jit(pt.random.key)(pt.asarray(seed)).numpy(), want)
    keys = pt.vmap(pt.random.key)(pt.arange(3))
    assert np.array_equal(keys.numpy(), np.array([[0, 0], [0, 1], [0, 2]], np.uint32))
    draw = pt.jit(lambda s: pt.random.normal(pt.random.key(s), (4,)))
    assert np.array_equal(draw(pt.asarray(7)).numpy(), pt.random.normal(pt.random.key(7), (4,)).numpy())
    grid = pt.random.split(KEY, (2, 3))
    assert grid.shape == (2, 3, 2)
    assert np.array_equal(grid.numpy().reshape(6, 2), pt.random.split(KEY, 6).numpy())
    with pytest.raises(pt.ArgumentError, match="integer scalar"):
        pt.random.key(pt.asarray(1.5))
    with pytest.raises(pt.ArgumentError, match="tuple of them"):
        pt.random.split(KEY, (2, -1))


def test_reparameterized_monte_carlo_gradient():
    """d/dmu E[(mu + 2 z)^2] over fixed normal draws z: 2 mu + 4 mean(z), eagerly and under jit."""
    z = pt.random.normal(KEY, (1000,))

    def f(mu):
        return pt.mean((mu + 2 * pt.random.normal(KEY, (1000,))) ** 2)

    want = 2 * 1.5 + 4 * float(z.mean())
    assert abs(float(pt.grad(f)(pt.asarray(1.5))) - want) < 1e-12
    assert abs(float(pt.jit(pt.grad(f))(pt.asarray(1.5))) - want) < 1e-12


# -- FFT programs -----------------------------------------------------------------------------------
def fft_step(xp, a, k, u):
    n = a.shape[0] + k.shape[0] - 1
    conv = xp.fft.irfft(xp.fft.rfft(a, n) * xp.fft.rfft(k, n), n)      # linear convolution
    m = u.shape[0]
    wave = 1j * xp.fft.fftfreq(m, d=2 * np.pi / m) * 2 * np.pi
    deriv = xp.real(xp.fft.ifft(wave * xp.fft.fft(u)))                 # spectral derivative
    modes = tuple(xp.fft.fft(a, norm=nm) for nm in ("backward", "ortho", "forward"))
    back = tuple(xp.fft.irfft(xp.fft.rfft(a, norm=nm), a.shape[0], norm=nm) for nm in ("ortho", "forward"))
    return (conv, deriv, xp.fft.fftshift(xp.abs(xp.fft.fft2(a.reshape(a.shape[0] // 3, 3))))) + modes + back


def fft_run(xp, step, a, k, u):
    return step(xp, a, k, u)


def test_fft_programs(device):
    t = np.linspace(0, 2 * np.pi, 33, endpoint=False)
    inputs = (R.normal(size=21), R.normal(size=9), np.sin(3 * t))
    check_program(device, fft_run, fft_step, inputs, ops=200)
    got = pt.jit(fft_step, static_argnums=0)(pt, *(pt.asarray(v) for v in inputs))
    np.testing.assert_allclose(got[0].numpy(), np.convolve(inputs[0], inputs[1]), atol=1e-12)
    np.testing.assert_allclose(got[1].numpy(), 3 * np.cos(3 * t), atol=1e-12)
