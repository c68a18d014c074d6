"""`pt.nn`: activations and normalizations, composed from elementwise ops and reductions; convolution
and pooling (nn_conv.py), from lazy window gathers and one einsum. Integer inputs compute in NumPy's
float type; float16/bfloat16 compute in float32 and round once."""
from __future__ import annotations

import math
import operator

from poot import dtypes as dt
from poot.errors import ArgumentError, ArgumentValueError, DTypeError, api_boundary
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace import selection as sel
from poot.trace.movement import arr, axes_of
from poot.trace.promote import float_argument, float_of
from poot.trace.attention import scaled_dot_product_attention  # noqa: E402,F401  (one fused op)
from poot.trace.sampling import sample  # noqa: E402,F401  (one fused op)
from poot.trace.nn_conv import (avg_pool1d, avg_pool2d, conv1d, conv2d,  # noqa: F401  (gathers + einsum)
                                max_pool1d, max_pool2d)
from poot.trace.nn_activations import (celu, dropout, elu, embedding, glu, hard_sigmoid, hard_swish,
                                       hard_tanh, hardsigmoid, hardswish, hardtanh, leaky_relu, linear,
                                       log_sigmoid, logsigmoid, mish, normalize, relu6, selu, soft_sign,
                                       softplus, softsign, standardize, swish, tanh)
from poot.trace.nn_losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_similarity,
                                  cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss,
                                  smooth_l1_loss)

__all__ = ["relu", "gelu", "silu", "sigmoid", "softmax", "log_softmax", "logsumexp", "layer_norm",
           "rms_norm", "one_hot", "scaled_dot_product_attention", "sample", "conv1d", "conv2d", "max_pool1d",
           "max_pool2d", "avg_pool1d", "avg_pool2d",
           # nn_activations.py (jax.nn and torch.nn.functional names) and nn_losses.py (torch's losses)
           "softplus", "leaky_relu", "elu", "selu", "celu", "relu6", "hard_sigmoid", "hardsigmoid",
           "hard_swish", "hardswish", "hard_tanh", "hardtanh", "log_sigmoid", "logsigmoid", "soft_sign",
           "softsign", "swish", "mish", "glu", "tanh", "standardize", "normalize", "linear", "embedding",
           "dropout", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity"]


def _work(x):
    """(x in its compute dtype, the result dtype)."""
    x = arr(x)
    d = float_of(x.dtype)
    work = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    return x.astype(work), d


@api_boundary
def relu(x):
    """max(x, 0), in x's dtype (NaN stays NaN). A select, not maximum: maximum's derivative at a tie
    splits (0.5 at x = 0), where PyTorch's and JAX's relu have 0."""
    x = arr(x)
    if x.dtype.kind == "b":
        return x
    return sel.where(x <= 0, 0, x)


def _sigmoid(x):
    """1 / (1 + exp(-x)) as exp(-|x|) / (1 + exp(-|x|)) for x < 0: exp never overflows, so neither
    does the derivative (the direct form's is inf * 0 = NaN below about -88 in float32). -|x| is a
    select rather than abs, whose derivative at 0 would be 0. All elementwise: one fused kernel."""
    pos = x >= 0
    e = ew.exp(sel.where(pos, -x, x))
    return sel.where(pos, 1.0, e) / (1.0 + e)


@api_boundary
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    x, d = _work(x)
    return _sigmoid(x).astype(d)


@api_boundary
def silu(x):
    """x * sigmoid(x) (also called swish)."""
    x, d = _work(x)
    return (x * _sigmoid(x)).astype(d)


@api_boundary
def gelu(x, approximate="none"):
    """x * Phi(x): the exact erf form, or approximate='tanh' for the tanh approximation."""
    if approximate is True:
        approximate = "tanh"
    elif approximate is False:
        approximate = "none"
    x, d = _work(x)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return (0.5 * x * (1.0 + ew.tanh(inner))).astype(d)
    if approximate != "none":
        raise ArgumentValueError(f"gelu: approximate must be 'none' or 'tanh' (or True/False, as in JAX), "
                                 f"got {approximate!r}")
    return (0.5 * x * (1.0 + ew.erf(x * (1 / math.sqrt(2))))).astype(d)


def _empty_over(x, axis):
    return any(x.shape[a] == 0 for a in axes_of(axis, x.ndim, "softmax", x))


@api_boundary
def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    x, d = _work(x)
    if _empty_over(x, axis):
        return x.astype(d)
    e = ew.exp(x - red.max(x, axis=axis, keepdims=True))
    return (e / red.sum(e, axis=axis, keepdims=True)).astype(d)


@api_boundary
def log_softmax(x, axis=-1):
    """x - logsumexp(x) along `axis`, computed stably."""
    x, d = _work(x)
    if _empty_over(x, axis):
        return x.astype(d)
    shifted = x - red.max(x, axis=axis, keepdims=True)
    return (shifted - ew.log(red.sum(ew.exp(shifted), axis=axis, keepdims=True))).astype(d)


@api_boundary
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) along `axis`, computed stably."""
    x, d = _work(x)
    m = red.max(x, axis=axis, keepdims=True)
    m = sel.where(ew.isfinite(m), m, 0.0)
    r = ew.log(red.sum(ew.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        axes = axes_of(axis, x.ndim, "logsumexp", x)
        r = r.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))
    return r.astype(d)


@api_boundary
def layer_norm(x, weight=None, bias=None, eps=1e-5, axis=-1):
    """(x - mean) / sqrt(var + eps) over `axis` (the last by default), then * weight + bias."""
    x, d = _work(x)
    m = red.mean(x, axis=axis, keepdims=True)
    c = x - m
    v = red.mean(c * c, axis=axis, keepdims=True)
    y = c / ew.sqrt(v + float_argument(eps, "layer_norm", "eps"))
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(dt.result_type(d, *(arr(p).dtype for p in (weight, bias) if p is not None)))


@api_boundary
def rms_norm(x, weight=None, eps=1e-6, axis=-1):
    """x / sqrt(mean(x**2) + eps) over `axis` (the last by default), then * weight."""
    x, d = _work(x)
    y = x / ew.sqrt(red.mean(x * x, axis=axis, keepdims=True) + float_argument(eps, "rms_norm", "eps"))
    if weight is not None:
        y = y * weight
        d = dt.result_type(d, arr(weight).dtype)
    return y.astype(d)


@api_boundary
def one_hot(indices, num_classes, dtype=None):
    """out[..., k] = (indices[...] == k), as `dtype` (float64 by default)."""
    from poot.trace.creation import arange

    i = arr(indices)
    if i.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: indices must be integers, got {i.dtype.name}")
    try:
        count = operator.index(num_classes)
    except TypeError:
        count = None
    if count is None or isinstance(num_classes, bool):
        raise ArgumentError(f"one_hot: num_classes must be an int, got {num_classes!r}")
    num_classes = count
    if num_classes < 0:
        raise ArgumentError(f"one_hot: num_classes must be 0 or more, got {num_classes}")
    return ew.equal(i[..., None], arange(num_classes, device=i.device)).astype(dtype or dt.float64)


def __dir__():
    """pt.nn's functions, not the modules and helpers this file imports (what tab completion offers)."""
    return sorted(__all__)
