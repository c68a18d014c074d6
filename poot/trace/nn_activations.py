"""`pt.nn` activations, normalizations and layers-as-functions beyond nn.py's core set, with the
semantics of jax.nn for JAX's names (hard_tanh, log_sigmoid, soft_sign, standardize, glu...) and of
torch.nn.functional for PyTorch's (hardtanh, logsigmoid, softsign, normalize, linear, embedding,
dropout...). Where both libraries use one name and agree, one function serves both.

All are composed from lazy elementwise ops, reductions and gathers, so they fuse, run inside @pt.jit
and differentiate through pt.grad with no rule of their own. Integer inputs compute in NumPy's float
type (nn.py's rule); float16/bfloat16 compute in float32 and round once. Branches that could overflow
in the branch a select discards (exp of a large x) are clamped before the exp, so the derivative of
the discarded branch is 0, not inf * 0 = NaN.
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, NotBuiltError, ShapeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace import selection as sel
from poot.trace.movement import arr, axis_of
from poot.trace.promote import float_argument, float_of

__all__ = ["softplus", "leaky_relu", "elu", "selu", "celu", "relu6", "hard_sigmoid", "hardsigmoid",
           "hard_swish", "hardswish", "hard_tanh", "hardtanh", "log_sigmoid", "logsigmoid", "soft_sign",
           "softsign", "swish", "mish", "glu", "tanh", "standardize", "normalize", "linear", "embedding",
           "dropout", "squareplus", "sparse_plus", "sparse_sigmoid", "hard_silu"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _work(x, op):
    """(x in its compute dtype, the result dtype)."""
    x = arr(x, op)
    d = float_of(x.dtype)
    if d.kind == "c":
        raise DTypeError(f"{op}: complex input is not supported, got {x.aval}")
    work = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    return x.astype(work), d


def _softplus(x):
    """log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): exp never overflows. Both halves select on
    x >= 0, so the derivative at 0 is 1 - 1/2 = 1/2 (abs's derivative at 0 would be 0)."""
    pos = x >= 0
    return sel.where(pos, x, 0.0) + ew.log1p(ew.exp(sel.where(pos, -x, x)))


def _sigmoid(x):
    pos = x >= 0
    e = ew.exp(sel.where(pos, -x, x))
    return sel.where(pos, 1.0, e) / (1.0 + e)


# --- activations -----------------------------------------------------------------------------------
@api_boundary
def softplus(x, beta=1.0, threshold=20.0):
    """torch.nn.functional.softplus: log(1 + exp(beta * x)) / beta, and x itself where beta * x >
    threshold (PyTorch's linear regime). With the defaults it agrees with jax.nn.softplus (log(1 +
    exp(x)), no threshold) to float32 rounding. Computed as max(bx, 0) + log1p(exp(-|bx|)): no
    overflow at any x."""
    x, d = _work(x, "softplus")
    beta = float_argument(beta, "softplus", "beta")
    threshold = float_argument(threshold, "softplus", "threshold")
    if beta == 0:
        raise ArgumentError("softplus: beta must be nonzero, got 0")
    bx = x * beta if beta != 1.0 else x
    y = _softplus(bx)
    if beta != 1.0:
        y = y / beta
    return sel.where(bx > threshold, x, y).astype(d)


@api_boundary
def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope * x (torch.nn.functional.leaky_relu and jax.nn.leaky_relu
    agree on values; at x = 0 the derivative is negative_slope, as PyTorch's)."""
    x, d = _work(x, "leaky_relu")
    s = float_argument(negative_slope, "leaky_relu", "negative_slope")
    return sel.where(x > 0, x, x * s).astype(d)


def _elu(x, alpha):
    neg = x <= 0
    return sel.where(neg, alpha * ew.expm1(sel.where(neg, x, 0.0)), x)


@api_boundary
def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1) (torch.nn.functional.elu and jax.nn.elu agree).
    expm1 keeps small negative x accurate."""
    x, d = _work(x, "elu")
    return _elu(x, float_argument(alpha, "elu", "alpha")).astype(d)


@api_boundary
def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants alpha = 1.6732632423543772,
    scale = 1.0507009873554805 (torch.nn.functional.selu and jax.nn.selu agree)."""
    x, d = _work(x, "selu")
    return (_SELU_SCALE * _elu(x, _SELU_ALPHA)).astype(d)


@api_boundary
def celu(x, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (torch.nn.functional.celu and jax.nn.celu
    agree). alpha must be nonzero."""
    x, d = _work(x, "celu")
    a = float_argument(alpha, "celu", "alpha")
    if a == 0:
        raise ArgumentError("celu: alpha must be nonzero, got 0")
    neg = x <= 0
    return sel.where(neg, a * ew.expm1(sel.where(neg, x, 0.0) / a), x).astype(d)


@api_boundary
def relu6(x):
    """min(max(x, 0), 6), in x's dtype as relu (torch.nn.functional.relu6 and jax.nn.relu6 agree;
    the derivative is 0 at both kinks)."""
    x = arr(x, "relu6")
    if x.dtype.kind == "b":
        return x
    return sel.where(x <= 0, 0, sel.where(x >= 6, 6, x))


def _hard_sigmoid(x):
    return sel.where(x <= -3, 0.0, sel.where(x >= 3, 1.0, x * (1 / 6) + 0.5))


@api_boundary
def hard_sigmoid(x):
    """relu6(x + 3) / 6 (jax.nn.hard_sigmoid; torch.nn.functional.hardsigmoid is the same function)."""
    x, d = _work(x, "hard_sigmoid")
    return _hard_sigmoid(x).astype(d)


@api_boundary
def hardsigmoid(input):
    """torch.nn.functional.hardsigmoid: 0 for x <= -3, 1 for x >= 3, x / 6 + 1/2 between (= hard_sigmoid)."""
    return hard_sigmoid(input)


@api_boundary
def hard_swish(x):
    """x * relu6(x + 3) / 6 (jax.nn.hard_swish; torch.nn.functional.hardswish is the same function)."""
    x, d = _work(x, "hard_swish")
    return (x * _hard_sigmoid(x)).astype(d)


@api_boundary
def hard_silu(x):
    """jax.nn.hard_silu: another name of hard_swish, x * relu6(x + 3) / 6."""
    return hard_swish(x)


@api_boundary
def squareplus(x, b=4):
    """jax.nn.squareplus: (x + sqrt(x**2 + b)) / 2, a smooth relu made of a square root."""
    x, d = _work(x, "squareplus")
    return ((x + ew.sqrt(x * x + float_argument(b, "squareplus", "b"))) / 2).astype(d)


@api_boundary
def sparse_plus(x):
    """jax.nn.sparse_plus: 0 for x <= -1, x for x >= 1, (x + 1)**2 / 4 between (a piecewise quadratic
    softplus)."""
    x, d = _work(x, "sparse_plus")
    mid = (x + 1) * (x + 1) / 4
    return sel.where(x <= -1, 0.0, sel.where(x >= 1, x, mid)).astype(d)


@api_boundary
def sparse_sigmoid(x):
    """jax.nn.sparse_sigmoid: (x + 1) / 2 clipped to [0, 1], the derivative of sparse_plus."""
    x, d = _work(x, "sparse_sigmoid")
    return (0.5 * sel.where(x <= -1, 0.0, sel.where(x >= 1, 2.0, x + 1))).astype(d)


@api_boundary
def hardswish(input):
    """torch.nn.functional.hardswish: x * relu6(x + 3) / 6 (= hard_swish)."""
    return hard_swish(input)


@api_boundary
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """torch.nn.functional.hardtanh: min_val below min_val, max_val above max_val, x between (the
    derivative is 0 at and beyond the limits)."""
    x, d = _work(input, "hardtanh")
    lo = float_argument(min_val, "hardtanh", "min_val")
    hi = float_argument(max_val, "hardtanh", "max_val")
    if lo > hi:
        raise ArgumentError(f"hardtanh: min_val ({min_val!r}) must not exceed max_val ({max_val!r})")
    return sel.where(x <= lo, lo, sel.where(x >= hi, hi, x)).astype(d)


@api_boundary
def hard_tanh(x):
    """jax.nn.hard_tanh: -1 below -1, 1 above 1, x between (hardtanh with PyTorch's default limits)."""
    return hardtanh(x)


@api_boundary
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable at any x (jax.nn.log_sigmoid; = logsigmoid)."""
    x, d = _work(x, "log_sigmoid")
    return (-_softplus(-x)).astype(d)


@api_boundary
def logsigmoid(input):
    """torch.nn.functional.logsigmoid: log(sigmoid(x)) (= log_sigmoid)."""
    return log_sigmoid(input)


@api_boundary
def soft_sign(x):
    """x / (|x| + 1) (jax.nn.soft_sign; = softsign)."""
    x, d = _work(x, "soft_sign")
    return (x / (ew.abs(x) + 1.0)).astype(d)


@api_boundary
def softsign(input):
    """torch.nn.functional.softsign: x / (|x| + 1) (= soft_sign)."""
    return soft_sign(input)


@api_boundary
def swish(x):
    """jax.nn.swish: x * sigmoid(x), the same function as pt.nn.silu."""
    x, d = _work(x, "swish")
    return (x * _sigmoid(x)).astype(d)


@api_boundary
def mish(x):
    """x * tanh(softplus(x)) (torch.nn.functional.mish and jax.nn.mish agree; softplus without
    PyTorch's threshold, which changes nothing above it: tanh is 1 there)."""
    x, d = _work(x, "mish")
    return (x * ew.tanh(_softplus(x))).astype(d)


@api_boundary
def tanh(x):
    """The hyperbolic tangent (jax.nn.tanh / torch.nn.functional.tanh: pt.tanh itself)."""
    return ew.tanh(x)


@api_boundary
def glu(x, axis=-1, *, dim=None):
    """Gated linear unit: a * sigmoid(b), where a and b are the two halves of x along `axis`
    (jax.nn.glu's name; PyTorch's F.glu(input, dim=-1) is the same, so dim= is accepted too). The
    axis must have an even length."""
    x, d = _work(x, "glu")
    if dim is not None:
        axis = dim
    ax = axis_of(axis, x.ndim, "glu", x)
    n = x.shape[ax]
    if n % 2:
        raise ShapeError(f"glu: the axis {ax} of {x.aval} must have an even length to halve, got {n}")
    lo = (slice(None),) * ax + (slice(0, n // 2),)
    hi = (slice(None),) * ax + (slice(n // 2, n),)
    return (x[lo] * _sigmoid(x[hi])).astype(d)


# --- normalizations ------------------------------------------------------------------------------
@api_boundary
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """jax.nn.standardize: (x - mean) / sqrt(variance + epsilon) over `axis` (an int or a tuple);
    mean and variance are computed over the axis unless given (the variance as mean((x - mean)**2),
    the centered form). No affine weight: pt.nn.layer_norm adds one. JAX's where= is not built."""
    x, d = _work(x, "standardize")
    eps = float_argument(epsilon, "standardize", "epsilon")
    m = red.mean(x, axis=axis, keepdims=True) if mean is None else arr(mean, "standardize")
    c = x - m
    v = red.mean(c * c, axis=axis, keepdims=True) if variance is None else arr(variance, "standardize")
    return (c / ew.sqrt(v + eps)).astype(d)


@api_boundary
def normalize(input, p=2.0, dim=1, eps=1e-12):
    """torch.nn.functional.normalize: x / max(||x||_p, eps) along `dim` (default 1, PyTorch's: the
    channel axis of (N, C, ...); pass dim=-1 for the last). p may be any positive number or inf. For
    p = 2 the clamp is applied to the sum of squares (max(sum x^2, eps^2)) so a zero vector has a
    finite derivative."""
    x, d = _work(input, "normalize")
    pp = float_argument(p, "normalize", "p")
    e = float_argument(eps, "normalize", "eps")
    if not pp > 0:
        raise ArgumentError(f"normalize: p must be positive, got {p!r}")
    if x.ndim == 0:
        raise ShapeError("normalize: input must have at least one axis, got a 0-d array")
    ax = axis_of(dim, x.ndim, "normalize", x)
    if pp == 2.0:
        s = red.sum(x * x, axis=ax, keepdims=True)
        floor = e * e
        if floor > 0 and floor >= float(dt.finfo(x.dtype).tiny):
            n = ew.sqrt(sel.where(s > floor, s, floor))
        else:                                      # eps**2 underflows: clamp the norm itself
            n = ew.sqrt(s)
            n = sel.where(n > e, n, e)
    else:
        a = ew.abs(x)
        if math.isinf(pp):
            n = red.max(a, axis=ax, keepdims=True)
        elif pp == 1.0:
            n = red.sum(a, axis=ax, keepdims=True)
        else:
            n = red.sum(a ** pp, axis=ax, keepdims=True) ** (1.0 / pp)
        n = sel.where(n > e, n, e)
    return (x / n).astype(d)


# --- layers as functions -------------------------------------------------------------------------
@api_boundary
def linear(input, weight, bias=None):
    """torch.nn.functional.linear: input @ weight.T + bias, for input (..., in), weight (out, in) (or
    (in,) for one output without its axis) and bias (out,) (or a scalar). Runs as one matmul."""
    from poot.trace.linalg import matmul

    x = arr(input, "linear", (weight, bias))
    w = arr(weight, "linear", (x, bias))
    if x.ndim == 0:
        raise ShapeError(f"linear: input must have at least one axis (..., in_features), got {x.aval}")
    if w.ndim not in (1, 2):
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features) or 1-D, got {w.aval}")
    if w.shape[-1] != x.shape[-1]:
        raise ShapeError(f"linear: input's last axis ({x.shape[-1]}) must match weight's in_features "
                         f"({w.shape[-1]}): input {x.aval}, weight {w.aval}")
    y = matmul(x, w.T if w.ndim == 2 else w)
    if bias is not None:
        b = arr(bias, "linear", (x, w))
        out = w.shape[0] if w.ndim == 2 else None
        if b.ndim > 1 or (b.ndim == 1 and b.shape[0] not in (out, 1)):
            raise ShapeError(f"linear: bias must have shape ({out},) (weight's out_features) or be a scalar, "
                             f"got {b.aval}")
        y = y + b
    return y


@api_boundary
def embedding(input, weight, padding_idx=None, max_norm=None):
    """torch.nn.functional.embedding: the rows of weight (num_embeddings, dim) at integer `input`
    (any shape) -> input.shape + (dim,). An index outside [0, num_embeddings) raises PootIndexError
    at the next host read (a gather's bounds check). padding_idx (its rows take no gradient in
    PyTorch) and max_norm's renormalization (which writes the weight in place in PyTorch) are not
    built: each raises NotBuiltError."""
    from poot.trace.indexing import take

    i = arr(input, "embedding", (weight,))
    w = arr(weight, "embedding", (i,))
    if i.dtype.kind not in "iu":
        raise DTypeError(f"embedding: input must hold integer indices, got {i.aval}")
    if w.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {w.aval}")
    if max_norm is not None:
        raise NotBuiltError("embedding: max_norm is not built (PyTorch renormalizes the weight in place)")
    if padding_idx is not None:
        # PyTorch's padding row takes no gradient; pt.nn sits below the transforms, so it cannot stop
        # a derivative itself: refused rather than differentiated the wrong way
        raise NotBuiltError("embedding: padding_idx is not built (its row would still get gradients); "
                            "mask the padding positions yourself, e.g. "
                            "pt.where((idx == p)[..., None], pt.stop_gradient(e), e)")
    if i.dtype.kind == "i":     # a negative id is out of range, as in PyTorch, not a row from the end
        i = sel.where(i < 0, w.shape[0], i)
    return take(w, i, axis=0)


@api_boundary
def dropout(input, p=0.5, training=True, *, key=None):
    """torch.nn.functional.dropout with an explicit key (poot's random numbers are JAX-style keys:
    pt.random.key(seed), split, fold_in): each element is zeroed with probability p and the others are
    scaled by 1 / (1 - p). `key` is required when training and 0 < p; with training=False or p = 0 the
    input comes back unchanged; p = 1 gives zeros. Inside @pt.jit pass the key as an argument (and
    fold_in a step number for a new mask each step)."""
    x = arr(input, "dropout")
    rate = float_argument(p, "dropout", "p")
    if not 0.0 <= rate <= 1.0:
        raise ArgumentError(f"dropout: p must be a probability in [0, 1], got {p!r}")
    if not training or rate == 0.0:
        return x
    if key is None:
        raise ArgumentError("dropout: key= is required when training with p > 0 (a pt.random.key; "
                            "split or fold_in it for a new mask each call)")
    x, d = _work(x, "dropout")
    if rate == 1.0:
        return (x * 0.0).astype(d)
    from poot.trace.random import bernoulli

    keep = bernoulli(key, 1.0 - rate, x.shape)
    return sel.where(keep, x * (1.0 / (1.0 - rate)), 0.0).astype(d)
