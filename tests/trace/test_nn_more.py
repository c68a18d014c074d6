"""pt.nn's activations (nn_activations.py: jax.nn and torch.nn.functional names), losses (nn_losses.py:
torch.nn.functional's semantics) and layers-as-functions (linear, embedding, dropout), against NumPy
references written here from the two libraries' definitions: float32 and float64 values, stability at
logits of 1e4, gradients against finite differences in float64, inside @pt.jit, on every device of
POOT_TEST_DEVICES, float16/bfloat16 rounding once, and the argument errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt


def _rand(shape, seed, dtype=np.float32, scale=2.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _close(got, want, dtype=np.float32, rtol=None, atol=None):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    if rtol is None:
        rtol = 1e-5 if dtype == np.float32 else 1e-12
    if atol is None:
        atol = 1e-6 if dtype == np.float32 else 1e-13
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _fd(f, x, h=1e-6):
    """Central finite differences of the scalar f at x (float64)."""
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        a, b = x.copy(), x.copy()
        a[i] += h
        b[i] -= h
        g[i] = (f(a) - f(b)) / (2 * h)
    return g


# --- references (float64 NumPy, from the definitions) --------------------------------------------
def np_softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta)


def np_sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def np_elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

ACTIVATIONS = {
    "softplus": (pt.nn.softplus, lambda x: np_softplus(x)),
    "softplus_beta": (lambda x: pt.nn.softplus(x, beta=2.0, threshold=5.0), lambda x: np_softplus(x, 2.0, 5.0)),
    "leaky_relu": (pt.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: pt.nn.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (lambda x: pt.nn.elu(x, 0.7), lambda x: np_elu(x, 0.7)),
    "selu": (pt.nn.selu, lambda x: SELU_S * np_elu(x, SELU_A)),
    "celu": (lambda x: pt.nn.celu(x, 1.5),
             lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * np.expm1(np.minimum(x, 0) / 1.5))),
    "relu6": (pt.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "hard_sigmoid": (pt.nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (pt.nn.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_swish": (pt.nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardswish": (pt.nn.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hard_tanh": (pt.nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hardtanh": (lambda x: pt.nn.hardtanh(x, -0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    "log_sigmoid": (pt.nn.log_sigmoid, lambda x: -np.logaddexp(0.0, -x)),
    "logsigmoid": (pt.nn.logsigmoid, lambda x: -np.logaddexp(0.0, -x)),
    "soft_sign": (pt.nn.soft_sign, lambda x: x / (1 + np.abs(x))),
    "softsign": (pt.nn.softsign, lambda x: x / (1 + np.abs(x))),
    "swish": (pt.nn.swish, lambda x: x * np_sigmoid(x)),
    "mish": (pt.nn.mish, lambda x: x * np.tanh(np.logaddexp(0.0, x))),
    "tanh": (pt.nn.tanh, np.tanh),
    "gelu_tanh_str": (lambda x: pt.nn.gelu(x, approximate="tanh"),
                      lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "gelu_tanh_bool": (lambda x: pt.nn.gelu(x, approximate=True),
                       lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values(name, dtype):
    f, ref = ACTIVATIONS[name]
    x = _rand((3, 17), 0, dtype, scale=4.0)
    x[0, :6] = [0.0, -3.0, 3.0, 6.0, -1.0, 1.0]          # the kinks
    _close(f(pt.array(x)), ref(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("name", ["softplus", "log_sigmoid", "mish", "elu", "selu", "celu", "swish"])
def test_activations_stable_at_large_inputs(name):
    f, ref = ACTIVATIONS[name]
    x = np.array([-1e4, -100.0, -30.0, 30.0, 100.0, 1e4], np.float32)
    got = f(pt.array(x)).numpy()
    assert np.isfinite(got).all(), got
    _close(got, ref(x.astype(np.float64)))


def test_activation_int_and_half_inputs():
    # integers compute in NumPy's float type (int32 -> float64); float16 / bfloat16 in float32, rounded once
    xi = np.array([-3, -1, 0, 2, 7], np.int32)
    _close(pt.nn.elu(pt.array(xi)), np_elu(xi.astype(np.float64)), np.float64)
    xh = _rand((20,), 1, np.float16)
    got = pt.nn.mish(pt.array(xh))
    assert got.dtype == pt.float16
    want = (xh.astype(np.float32) * np.tanh(np.logaddexp(np.float32(0), xh.astype(np.float32)))).astype(np.float16)
    np.testing.assert_array_equal(got.numpy(), want)
    xb = pt.asarray(_rand((8,), 2)).astype(pt.bfloat16)
    assert pt.nn.softplus(xb).dtype == pt.bfloat16
    assert pt.nn.relu6(pt.array(xi)).dtype == pt.int32                  # relu6 keeps the dtype, as relu
    np.testing.assert_array_equal(pt.nn.relu6(pt.array(xi)).numpy(), np.clip(xi, 0, 6))


def test_glu_standardize_normalize():
    x = _rand((3, 4, 6), 3, np.float64)
    a, b = x[..., :3], x[..., 3:]
    _close(pt.nn.glu(pt.array(x)), a * np_sigmoid(b), np.float64)
    _close(pt.nn.glu(pt.array(x), axis=1), x[:, :2] * np_sigmoid(x[:, 2:]), np.float64)
    _close(pt.nn.glu(pt.array(x), dim=1), x[:, :2] * np_sigmoid(x[:, 2:]), np.float64)

    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    _close(pt.nn.standardize(pt.array(x)), (x - m) / np.sqrt(v + 1e-5), np.float64)
    m = x.mean((0, 2), keepdims=True)
    v = ((x - m) ** 2).mean((0, 2), keepdims=True)
    _close(pt.nn.standardize(pt.array(x), axis=(0, 2), epsilon=1e-3), (x - m) / np.sqrt(v + 1e-3), np.float64)

    for p in (2, 1, 3.5, math.inf):
        n = np.linalg.norm(x, ord=p, axis=1, keepdims=True) if p != 3.5 else \
            (np.abs(x) ** p).sum(1, keepdims=True) ** (1 / p)
        _close(pt.nn.normalize(pt.array(x), p=p), x / np.maximum(n, 1e-12), np.float64)
    _close(pt.nn.normalize(pt.array(x), dim=-1), x / np.linalg.norm(x, axis=-1, keepdims=True), np.float64)
    z = np.zeros((2, 3))
    _close(pt.nn.normalize(pt.array(z)), z, np.float64)                 # a zero vector stays 0, not NaN
    g = pt.grad(lambda a: pt.nn.normalize(a).sum())(pt.array(z)).numpy()
    assert np.isfinite(g).all()


def test_jax_named_activations_match_jax():
    jnn = pytest.importorskip("jax.nn")
    x = _rand((40,), 4, np.float32, scale=5.0)
    for name in ("softplus", "leaky_relu", "elu", "selu", "celu", "relu6", "hard_sigmoid", "hard_swish",
                 "hard_tanh", "log_sigmoid", "soft_sign", "swish", "mish", "glu", "standardize"):
        got = getattr(pt.nn, name)(pt.array(x)).numpy()
        np.testing.assert_allclose(got, np.asarray(getattr(jnn, name)(x)), rtol=2e-5, atol=2e-6, err_msg=name)


# --- activation gradients ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["softplus", "softplus_beta", "elu", "mish", "selu", "celu", "log_sigmoid",
                                  "swish", "soft_sign", "hard_swish"])
def test_activation_grads_match_finite_differences(name):
    f, ref = ACTIVATIONS[name]
    x = _rand((13,), 5, np.float64, scale=3.0)
    r = _rand((13,), 6, np.float64)
    g = pt.grad(lambda a: (f(a) * r).sum())(pt.array(x)).numpy()
    np.testing.assert_allclose(g, _fd(lambda a: (ref(a) * r).sum(), x), rtol=1e-6, atol=1e-8)


def test_activation_grads_finite_at_extremes():
    x = np.array([-1e4, -200.0, 0.0, 200.0, 1e4])
    for f in (pt.nn.softplus, pt.nn.elu, pt.nn.mish, pt.nn.log_sigmoid, pt.nn.selu, pt.nn.celu):
        g = pt.grad(lambda a: f(a).sum())(pt.array(x)).numpy()
        assert np.isfinite(g).all(), (f, g)
    g = pt.grad(lambda a: pt.nn.softplus(a).sum())(pt.array(np.array([0.0]))).numpy()
    np.testing.assert_allclose(g, [0.5])                                 # sigmoid(0), not 0 or 1


# --- loss references -----------------------------------------------------------------------------
def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Straight from PyTorch's documented formulas, with explicit loops over samples."""
    x = np.asarray(x, np.float64)
    unb = x.ndim == 1
    if unb:
        x, t = x[None], np.asarray(t)[None]
    C = x.shape[1]
    lp = np.moveaxis(np_log_softmax(x, 1), 1, -1).reshape(-1, C)     # (M, C)
    w = np.ones(C) if weight is None else np.asarray(weight, np.float64)
    if np.asarray(t).dtype.kind == "f":                                 # probabilities
        tp = np.moveaxis(np.asarray(t, np.float64), 1, -1).reshape(-1, C)
        tp = tp * (1 - label_smoothing) + label_smoothing / C
        loss = -(lp * tp * w).sum(1)
        shape = x.shape[:1] + x.shape[2:]
        if reduction == "none":
            return loss.reshape(shape)[0] if unb else loss.reshape(shape)
        return loss.sum() if reduction == "sum" else loss.mean()
    ti = np.asarray(t).reshape(-1)
    nll, smooth, den = np.zeros(len(ti)), np.zeros(len(ti)), 0.0
    for i, c in enumerate(ti):
        if c == ignore_index:
            continue
        nll[i] = -w[c] * lp[i, c]
        smooth[i] = -(w * lp[i]).sum()
        den += w[c]
    if reduction == "none":
        out = ((1 - label_smoothing) * nll + label_smoothing / C * smooth).reshape(np.shape(t))
        return out[0] if unb else out
    if reduction == "sum":
        return (1 - label_smoothing) * nll.sum() + label_smoothing / C * smooth.sum()
    return (1 - label_smoothing) * nll.sum() / den + label_smoothing / C * smooth.sum() / den


CE_CASES = {
    "plain": dict(shape=(5, 4)),
    "weight": dict(shape=(6, 3), weight=True),
    "ignore": dict(shape=(6, 4), ignore=True),
    "weight_ignore_smooth": dict(shape=(6, 4), weight=True, ignore=True, label_smoothing=0.2),
    "spatial": dict(shape=(2, 3, 4, 2), weight=True, ignore=True),
    "spatial_smooth": dict(shape=(2, 3, 5), label_smoothing=0.1),
    "unbatched": dict(shape=(5,)),
    "probs": dict(shape=(4, 5), probs=True),
    "probs_weight_smooth": dict(shape=(2, 3, 4), probs=True, weight=True, label_smoothing=0.3),
}


def _ce_inputs(case, dtype, seed=0):
    kw = dict(CE_CASES[case])
    shape = kw.pop("shape")
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    C = shape[1] if len(shape) > 1 else shape[0]
    args = {}
    if kw.pop("probs", False):
        p = rng.random(shape)
        t = (p / p.sum(1 if len(shape) > 1 else 0, keepdims=True)).astype(dtype)
    else:
        tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
        t = rng.integers(0, C, tshape).astype(np.int64)
        if kw.pop("ignore", False):
            t.reshape(-1)[::3] = -100
    kw.pop("ignore", None)
    if kw.pop("weight", False):
        args["weight"] = rng.random(C).astype(dtype) + 0.5
    args.update(kw)
    return x, t, args


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", sorted(CE_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_values(case, reduction, dtype):
    x, t, args = _ce_inputs(case, dtype)
    got = pt.nn.cross_entropy(pt.array(x), pt.array(t), reduction=reduction,
                              **{k: (pt.array(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()})
    want = np_cross_entropy(x, t, reduction=reduction, **args)
    assert got.shape == np.shape(want)
    _close(got, want, dtype)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_values(reduction):
    x, t, args = _ce_inputs("weight_ignore_smooth", np.float64)
    args.pop("label_smoothing")
    lp = np_log_softmax(x, 1)
    got = pt.nn.nll_loss(pt.array(lp), pt.array(t), pt.array(args["weight"]), reduction=reduction)
    _close(got, np_cross_entropy(x, t, args["weight"], reduction=reduction), np.float64)
    # nll over log_softmax is cross_entropy
    ce = pt.nn.cross_entropy(pt.array(x), pt.array(t), pt.array(args["weight"]), reduction=reduction)
    _close(got, ce.numpy(), np.float64)


def test_cross_entropy_large_logits_stable():
    x = np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 1e4 - 1], [0.0, 0.0, 1e4]], np.float32)
    t = np.array([1, 2, 2])
    got = pt.nn.cross_entropy(pt.array(x), pt.array(t), reduction="none").numpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, np_cross_entropy(x, t, reduction="none"), rtol=1e-5)
    g = pt.grad(lambda a: pt.nn.cross_entropy(a, pt.array(t)))(pt.array(x)).numpy()
    assert np.isfinite(g).all()
    z = np.array([1e4, -1e4, 0.0, 50.0], np.float32)
    tb = np.array([0.0, 1.0, 0.5, 1.0], np.float32)
    got = pt.nn.binary_cross_entropy_with_logits(pt.array(z), pt.array(tb), reduction="none").numpy()
    np.testing.assert_allclose(got, np_bce_logits(z, tb), rtol=1e-5)


def test_losses_half_and_int_inputs():
    # float16 / bfloat16 compute in float32 and round once; integers compute in NumPy's float type
    x = _rand((4, 5), 24, np.float16)
    t = np.array([0, 1, 2, 4])
    got = pt.nn.cross_entropy(pt.array(x), pt.array(t), label_smoothing=0.1)
    assert got.dtype == pt.float16
    want = pt.nn.cross_entropy(pt.array(x.astype(np.float32)), pt.array(t), label_smoothing=0.1).numpy()
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float16))
    xb = pt.asarray(x.astype(np.float32)).astype(pt.bfloat16)
    for f in (lambda a: pt.nn.cross_entropy(a, pt.array(t)), lambda a: pt.nn.mse_loss(a, a * 2),
              lambda a: pt.nn.binary_cross_entropy_with_logits(a, pt.nn.sigmoid(a)), pt.nn.softplus):
        assert f(xb).dtype == pt.bfloat16
    _close(pt.nn.mse_loss(np.arange(4), np.ones(4, np.int32)), np.mean((np.arange(4) - 1.0) ** 2), np.float64)


def test_cross_entropy_grad_matches_finite_differences():
    x, t, args = _ce_inputs("weight_ignore_smooth", np.float64, seed=3)
    w = args["weight"]
    g = pt.grad(lambda a: pt.nn.cross_entropy(a, pt.array(t), pt.array(w), label_smoothing=0.2))(pt.array(x))
    want = _fd(lambda a: np_cross_entropy(a, t, w, label_smoothing=0.2), x)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-9)
    x, t, _ = _ce_inputs("probs", np.float64, seed=4)
    gx, gt = pt.grad(lambda a, b: pt.nn.cross_entropy(a, b, reduction="sum"), argnums=(0, 1))(pt.array(x),
                                                                                            pt.array(t))
    np.testing.assert_allclose(gx.numpy(), _fd(lambda a: np_cross_entropy(a, t, reduction="sum"), x),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gt.numpy(), _fd(lambda b: np_cross_entropy(x, b, reduction="sum"), t),
                               rtol=1e-6, atol=1e-9)


# --- elementwise losses --------------------------------------------------------------------------
def np_bce_logits(x, t, w=None, pw=None):
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    ls = -np.logaddexp(0.0, -x)                       # log sigmoid(x)
    l1s = -np.logaddexp(0.0, x)                       # log(1 - sigmoid(x))
    pw = 1.0 if pw is None else pw
    loss = -(pw * t * ls + (1 - t) * l1s)
    return loss if w is None else loss * w


def np_red(loss, reduction):
    return loss if reduction == "none" else (loss.sum() if reduction == "sum" else loss.mean())


def _kl(x, t, log_target):
    if log_target:
        return np.exp(t) * (t - x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, t))) - t * x


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_losses(reduction, dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 6)) * 2).astype(dtype)
    y = (rng.standard_normal((4, 6)) * 2).astype(dtype)
    p = rng.uniform(0.01, 0.99, (4, 6)).astype(dtype)
    t = rng.uniform(0, 1, (4, 6)).astype(dtype)
    t[0, :2] = [0.0, 1.0]
    w = (rng.random((6,)) + 0.5).astype(dtype)
    pw = (rng.random((6,)) + 0.5).astype(dtype)
    X, Y, P, T, W, PW = (pt.array(a) for a in (x, y, p, t, w, pw))
    x64, y64, p64, t64 = (a.astype(np.float64) for a in (x, y, p, t))
    r = x64 - y64
    a = np.abs(r)
    cases = [
        (pt.nn.mse_loss(X, Y, reduction=reduction), r * r),
        (pt.nn.l1_loss(X, Y, reduction=reduction), a),
        (pt.nn.smooth_l1_loss(X, Y, reduction=reduction), np.where(a < 1, 0.5 * r * r, a - 0.5)),
        (pt.nn.smooth_l1_loss(X, Y, reduction=reduction, beta=0.5), np.where(a < 0.5, r * r, a - 0.25)),
        (pt.nn.smooth_l1_loss(X, Y, reduction=reduction, beta=0.0), a),
        (pt.nn.huber_loss(X, Y, reduction=reduction, delta=1.5), np.where(a < 1.5, 0.5 * r * r, 1.5 * (a - 0.75))),
        (pt.nn.binary_cross_entropy(P, T, reduction=reduction),
         -(t64 * np.log(p64) + (1 - t64) * np.log1p(-p64))),
        (pt.nn.binary_cross_entropy(P, T, W, reduction=reduction),
         -(t64 * np.log(p64) + (1 - t64) * np.log1p(-p64)) * w),
        (pt.nn.binary_cross_entropy_with_logits(X, T, reduction=reduction), np_bce_logits(x64, t64)),
        (pt.nn.binary_cross_entropy_with_logits(X, T, W, reduction=reduction, pos_weight=PW),
         np_bce_logits(x64, t64, w, pw)),
        (pt.nn.kl_div(X, T, reduction=reduction), _kl(x64, t64, False)),
        (pt.nn.kl_div(X, Y, reduction=reduction, log_target=True), _kl(x64, y64, True)),
    ]
    for i, (got, loss) in enumerate(cases):
        assert got.dtype == dtype, i
        np.testing.assert_allclose(got.numpy(), np_red(loss, reduction), rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 if dtype == np.float32 else 1e-13, err_msg=str(i))


def test_kl_div_batchmean_and_bce_clamp():
    x = np_log_softmax(_rand((3, 5), 8, np.float64), 1)
    t = np.exp(np_log_softmax(_rand((3, 5), 9, np.float64), 1))
    _close(pt.nn.kl_div(pt.array(x), pt.array(t), reduction="batchmean"), _kl(x, t, False).sum() / 3, np.float64)
    # PyTorch clamps the logs at -100: a probability of exactly 0 or 1 gives 100, not inf
    got = pt.nn.binary_cross_entropy(pt.array(np.array([0.0, 1.0, 0.0])), pt.array(np.array([1.0, 0.0, 0.0])),
                                     reduction="none")
    _close(got, [100.0, 100.0, 0.0], np.float64)


def test_cosine_similarity():
    a, b = _rand((4, 5), 10, np.float64), _rand((4, 5), 11, np.float64)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    _close(pt.nn.cosine_similarity(pt.array(a), pt.array(b)), (a * b).sum(1) / (na * nb), np.float64)
    _close(pt.nn.cosine_similarity(pt.array(a), pt.array(b[:1]), dim=-1),
           (a * b[:1]).sum(1) / (na * np.linalg.norm(b[0])), np.float64)
    z = np.zeros((2, 3))
    _close(pt.nn.cosine_similarity(pt.array(z), pt.array(z)), [0.0, 0.0], np.float64)
    g = pt.grad(lambda u: pt.nn.cosine_similarity(u, pt.array(b[:2, :3])).sum())(pt.array(z)).numpy()
    assert np.isfinite(g).all()
    ga = pt.grad(lambda u: pt.nn.cosine_similarity(u, pt.array(b)).sum())(pt.array(a)).numpy()
    want = _fd(lambda u: ((u * b).sum(1) / (np.linalg.norm(u, axis=1) * nb)).sum(), a)
    np.testing.assert_allclose(ga, want, rtol=1e-6, atol=1e-9)


def test_bce_with_logits_grad_matches_finite_differences():
    rng = np.random.default_rng(12)
    x, t = rng.standard_normal((3, 4)) * 3, rng.random((3, 4))
    w, pw = rng.random(4) + 0.5, rng.random(4) + 0.5
    g = pt.grad(lambda a: pt.nn.binary_cross_entropy_with_logits(a, pt.array(t), pt.array(w),
                                                                pos_weight=pt.array(pw)))(pt.array(x))
    want = _fd(lambda a: np_bce_logits(a, t, w, pw).mean(), x)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-9)


# --- layers as functions -------------------------------------------------------------------------
def test_linear_and_embedding():
    x, w, b = _rand((2, 3, 4), 13, np.float64), _rand((5, 4), 14, np.float64), _rand((5,), 15, np.float64)
    _close(pt.nn.linear(pt.array(x), pt.array(w), pt.array(b)), x @ w.T + b, np.float64)
    _close(pt.nn.linear(pt.array(x), pt.array(w)), x @ w.T, np.float64)
    _close(pt.nn.linear(pt.array(x), pt.array(w[0])), x @ w[0], np.float64)
    gw = pt.grad(lambda m: pt.nn.linear(pt.array(x), m, pt.array(b)).sum())(pt.array(w)).numpy()
    np.testing.assert_allclose(gw, np.broadcast_to(x.reshape(-1, 4).sum(0), (5, 4)), rtol=1e-12)

    table = _rand((6, 3), 16, np.float64)
    idx = np.array([[0, 5, 2], [2, 2, 1]])
    _close(pt.nn.embedding(pt.array(idx), pt.array(table)), table[idx], np.float64)
    g = pt.grad(lambda m: (pt.nn.embedding(pt.array(idx), m) ** 2).sum())(pt.array(table)).numpy()
    want = np.zeros_like(table)
    for i in idx.reshape(-1):
        want[i] += 2 * table[i]
    np.testing.assert_allclose(g, want, rtol=1e-12)
    with pytest.raises(pt.NotBuiltError, match="padding_idx"):
        pt.nn.embedding(pt.array(idx), pt.array(table), padding_idx=2)
    with pytest.raises(pt.PootIndexError):
        pt.nn.embedding(pt.array(np.array([0, 6])), pt.array(table)).numpy()


def test_dropout():
    x = pt.ones((200, 50))
    key = pt.random.key(0)
    y = pt.nn.dropout(x, 0.25, key=key).numpy()
    assert set(np.unique(y)) <= {0.0, 1 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.02
    np.testing.assert_array_equal(pt.nn.dropout(x, 0.25, key=key).numpy(), y)    # same key, same mask
    assert (pt.nn.dropout(x, 0.25, key=pt.random.fold_in(key, 1)).numpy() != y).any()
    np.testing.assert_array_equal(pt.nn.dropout(x, 0.25, training=False).numpy(), 1.0)
    np.testing.assert_array_equal(pt.nn.dropout(x, 1.0, key=key).numpy(), 0.0)

    @pt.jit
    def step(x, key, i):
        return pt.nn.dropout(x, 0.5, key=pt.random.fold_in(key, i))

    a, b = step(x, key, pt.asarray(1)).numpy(), step(x, key, pt.asarray(2)).numpy()
    assert (a != b).any() and set(np.unique(a)) <= {0.0, 2.0}


# --- jit and devices -----------------------------------------------------------------------------
def test_training_step_inside_jit():
    x, w = _rand((8, 5), 17, np.float64), _rand((3, 5), 18, np.float64)
    t = np.random.default_rng(19).integers(0, 3, 8)

    def loss(w, x, t):
        h = pt.nn.linear(x, w)
        return pt.nn.cross_entropy(pt.nn.mish(h), t, label_smoothing=0.1)

    step = pt.jit(pt.grad(loss))
    want = _fd(lambda m: np_cross_entropy(
        (lambda h: h * np.tanh(np.logaddexp(0, h)))(x @ m.T), t, label_smoothing=0.1), w)
    for _ in range(2):               # the second call replays the traced program
        np.testing.assert_allclose(step(pt.array(w), pt.array(x), pt.array(t)).numpy(), want, rtol=1e-6,
                                   atol=1e-9)

    @pt.jit
    def losses(x, y):
        return (pt.nn.mse_loss(x, y), pt.nn.binary_cross_entropy_with_logits(x, pt.nn.sigmoid(y)),
                pt.nn.softplus(x), pt.nn.normalize(x))

    a, b = _rand((4, 3), 20), _rand((4, 3), 21)
    m, bce, sp, nz = losses(pt.array(a), pt.array(b))
    _close(m, ((a - b.astype(np.float64)) ** 2).mean(), np.float32)
    _close(bce, np_bce_logits(a, np_sigmoid(b.astype(np.float64))).mean(), np.float32)
    _close(sp, np_softplus(a.astype(np.float64)), np.float32)
    _close(nz, a / np.linalg.norm(a.astype(np.float64), axis=1, keepdims=True), np.float32)


@pytest.mark.parametrize("case", ["weight_ignore_smooth", "spatial", "probs"])
def test_cross_entropy_on_device(device, case):
    x, t, args = _ce_inputs(case, np.float32, seed=5)
    kw = {k: (pt.array(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    got = pt.nn.cross_entropy(pt.array(x), pt.array(t), **kw)
    assert got.device == device
    _close(got, np_cross_entropy(x, t, **args), np.float32, rtol=1e-5, atol=1e-5)


def test_activations_and_losses_on_device(device):
    x = _rand((4, 6), 22, np.float32, scale=4.0)
    y = _rand((4, 6), 23, np.float32)
    for name in ("softplus", "elu", "mish", "hard_swish", "log_sigmoid", "leaky_relu"):
        f, ref = ACTIVATIONS[name]
        got = f(pt.array(x))
        assert got.device == device
        _close(got, ref(x.astype(np.float64)), np.float32, rtol=1e-5, atol=1e-5)
    _close(pt.nn.binary_cross_entropy_with_logits(pt.array(x), pt.array(np_sigmoid(y).astype(np.float32))),
           np_bce_logits(x, np_sigmoid(y.astype(np.float64))).mean(), np.float32, rtol=1e-5, atol=1e-5)
    _close(pt.nn.smooth_l1_loss(pt.array(x), pt.array(y), reduction="sum"),
           (lambda a, r: np.where(a < 1, 0.5 * r * r, a - 0.5))(np.abs(x - y.astype(np.float64)),
                                                                x - y.astype(np.float64)).sum(),
           np.float32, rtol=1e-5, atol=1e-5)


# --- errors --------------------------------------------------------------------------------------
F = np.zeros((3, 4), np.float32)
T = np.array([0, 1, 2])


@pytest.mark.parametrize("call,err,words", [
    (lambda: pt.nn.mse_loss(F, F, reduction="avg"), pt.ArgumentError, "reduction must be one of"),
    (lambda: pt.nn.cross_entropy(F, T, reduction=None), pt.ArgumentError, "reduction"),
    (lambda: pt.nn.kl_div(F, F, reduction="batch"), pt.ArgumentError, "'batchmean'"),
    (lambda: pt.nn.mse_loss(F, F[:2]), pt.ShapeError, "target shape (2, 4) must match input shape (3, 4)"),
    (lambda: pt.nn.binary_cross_entropy_with_logits(F, F.T), pt.ShapeError, "target shape"),
    (lambda: pt.nn.cross_entropy(F, T[:2]), pt.ShapeError, "target shape (2,)"),
    (lambda: pt.nn.cross_entropy(F, T.astype(np.float32)), pt.DTypeError, "integer"),
    (lambda: pt.nn.cross_entropy(F, T.astype(bool)), pt.DTypeError, "target must be integer class indices"),
    (lambda: pt.nn.nll_loss(F, T.astype(np.float32)), pt.DTypeError, "target must hold integer class indices"),
    (lambda: pt.nn.cross_entropy(F, T, weight=np.ones(3)), pt.ShapeError, "weight must have shape (4,)"),
    (lambda: pt.nn.cross_entropy(np.zeros(4), T), pt.ShapeError, "0-d class index"),
    (lambda: pt.nn.cross_entropy(F, T, label_smoothing=1.5), pt.ArgumentError, "label_smoothing"),
    (lambda: pt.nn.cross_entropy(F, T, ignore_index=1.5), pt.ArgumentError, "ignore_index"),
    (lambda: pt.nn.binary_cross_entropy(F, F, weight=np.ones(3)), pt.ShapeError, "weight"),
    (lambda: pt.nn.smooth_l1_loss(F, F, beta=-1), pt.ArgumentError, "beta"),
    (lambda: pt.nn.huber_loss(F, F, delta=0), pt.ArgumentError, "delta"),
    (lambda: pt.nn.softplus(F, beta=0), pt.ArgumentError, "beta"),
    (lambda: pt.nn.celu(F, alpha=0), pt.ArgumentError, "alpha"),
    (lambda: pt.nn.hardtanh(F, 1, -1), pt.ArgumentError, "min_val"),
    (lambda: pt.nn.glu(np.zeros((2, 3))), pt.ShapeError, "even length"),
    (lambda: pt.nn.normalize(F, p=0), pt.ArgumentError, "p must be positive"),
    (lambda: pt.nn.cosine_similarity(F, np.zeros((2, 4))), pt.ShapeError, "broadcast"),
    (lambda: pt.nn.linear(F, np.zeros((2, 3))), pt.ShapeError, "in_features"),
    (lambda: pt.nn.linear(F, np.zeros((2, 4)), np.zeros(3)), pt.ShapeError, "bias"),
    (lambda: pt.nn.embedding(F, F), pt.DTypeError, "integer indices"),
    (lambda: pt.nn.dropout(F, 0.5), pt.ArgumentError, "key= is required"),
    (lambda: pt.nn.dropout(F, 1.5, key=pt.random.key(0)), pt.ArgumentError, "p must be a probability"),
])
def test_argument_errors(call, err, words):
    with pytest.raises(err) as e:
        call()
    assert words in str(e.value), str(e.value)


@pytest.mark.parametrize("bad", [4, 7, -1, -5])
def test_out_of_range_class_raises_at_host_read(bad):
    t = np.array([0, bad, 1])
    loss = pt.nn.cross_entropy(pt.array(F), pt.array(t))          # lazy: no host read yet
    with pytest.raises(pt.PootIndexError):
        loss.numpy()
    with pytest.raises(pt.PootIndexError):
        pt.nn.nll_loss(pt.array(F), pt.array(t), reduction="none").numpy()
    # ignore_index is never gathered, whatever its value
    np.testing.assert_allclose(pt.nn.cross_entropy(pt.array(F), pt.array(t), ignore_index=bad).numpy(),
                               math.log(4), rtol=1e-6)


def test_gelu_with_an_unknown_approximation_is_a_value_error():
    """A bad option value is an ArgumentValueError (NumPy's and JAX's ValueError), not a ShapeError."""
    with pytest.raises(pt.ArgumentValueError, match="approximate must be 'none' or 'tanh'"):
        pt.nn.gelu(pt.ones(3), approximate="erf")
