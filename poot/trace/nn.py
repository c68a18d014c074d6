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
from poot.trace.nn_activations import (celu, dropout, elu, embedding, glu, hard_sigmoid, hard_silu, hard_swish,
                                       hard_tanh, hardsigmoid, hardswish, hardtanh, leaky_relu, linear,
                                       log_sigmoid, logsigmoid, mish, normalize, relu6, selu, soft_sign,
                                       softplus, softsign, sparse_plus, sparse_sigmoid, squareplus,
                                       standardize, swish, tanh)
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
           "dropout", "squareplus", "sparse_plus", "sparse_sigmoid", "hard_silu", "dot_product_attention",
           "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
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


def _shifted(x, axis, where):
    """x minus its max along `axis` (over the elements `where` selects; a row without any is shifted
    by 0), -inf where `where` is False: exp of it is then 0, and so is its derivative."""
    if where is None:
        return x - red.max(x, axis=axis, keepdims=True)
    w = arr(where)
    if w.dtype.kind != "b":
        raise DTypeError(f"where must be a boolean mask, got {w.dtype.name}")
    m = red.max(sel.where(w, x, -math.inf), axis=axis, keepdims=True)
    return sel.where(w, x - sel.where(ew.isfinite(m), m, 0.0), -math.inf)


@api_boundary
def softmax(x, axis=-1, where=None):
    """exp(x - max) / sum(exp(x - max)) along `axis`; with `where` (a bool mask, JAX's), only the
    selected elements take part and the others are 0 (a row with none is all 0)."""
    x, d = _work(x)
    if _empty_over(x, axis):
        return x.astype(d)
    e = ew.exp(_shifted(x, axis, where))
    s = red.sum(e, axis=axis, keepdims=True)
    if where is not None:
        s = sel.where(s == 0, 1.0, s)
    return (e / s).astype(d)


@api_boundary
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`, computed stably; with `where` (a bool mask, JAX's), over the
    selected elements only, -inf at the others."""
    x, d = _work(x)
    if _empty_over(x, axis):
        return x.astype(d)
    shifted = _shifted(x, axis, where)
    r = shifted - ew.log(red.sum(ew.exp(shifted), axis=axis, keepdims=True))
    if where is not None:
        r = sel.where(where, r, -math.inf)
    return r.astype(d)


@api_boundary
def logsumexp(x, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(x))) along `axis`, computed stably (JAX's and SciPy's arguments): `b` scales
    each term (1 if not given), `where` (a bool mask) picks the terms. A negative sum gives NaN,
    unless `return_sign`: then the result is (log|sum|, sign(sum))."""
    x, d = _work(x)
    if where is not None:
        w = arr(where)
        if w.dtype.kind != "b":
            raise DTypeError(f"logsumexp: where must be a boolean mask, got {w.dtype.name}")
        x = sel.where(w, x, -math.inf)
    m = red.max(x, axis=axis, keepdims=True)
    m = sel.where(ew.isfinite(m), m, 0.0)
    e = ew.exp(x - m)
    if b is not None:
        bb = arr(b)
        e = e * (bb.astype(x.dtype) if bb.dtype.kind in "biu" or isinstance(b, (int, float)) else bb)
        if not isinstance(b, (int, float)):       # a Python scalar takes x's dtype
            d = dt.result_type(d, float_of(bb.dtype))
    s = red.sum(e, axis=axis, keepdims=True)
    sign = None
    if return_sign:
        sign = ew.sign(s)
        s = ew.abs(s)
    r = ew.log(s) + m
    if not keepdims:
        axes = axes_of(axis, x.ndim, "logsumexp", x)
        shape = tuple(n for i, n in enumerate(r.shape) if i not in axes)
        r = r.reshape(shape)
        sign = sign.reshape(shape) if sign is not None else None
    return (r.astype(d), sign.astype(d)) if return_sign else r.astype(d)


def _refuse_normalized_shape(op: str, x, weight) -> None:
    """torch's F.layer_norm(x, normalized_shape) and F.rms_norm(x, normalized_shape) take x's trailing
    shape second; here the second argument is `weight`, and such a shape would silently scale the
    result by its sizes. A tuple or list of ints equal to x's trailing shape is refused by name."""
    if isinstance(weight, (tuple, list)) and weight and all(type(w) is int for w in weight) and \
            tuple(weight) == tuple(arr(x).shape[-len(weight):]):
        raise ArgumentError(f"{op}: the second argument is weight (poot normalizes over axis=, the last by "
                            f"default), but {tuple(weight)} is x's trailing shape, as torch's normalized_shape; "
                            f"drop it, or pass axis=(-2, -1) to normalize over more axes")


@api_boundary
def layer_norm(x, weight=None, bias=None, eps=1e-5, axis=-1):
    """(x - mean) / sqrt(var + eps) over `axis` (the last by default), then * weight + bias."""
    _refuse_normalized_shape("layer_norm", x, weight)
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
    _refuse_normalized_shape("rms_norm", x, weight)
    x, d = _work(x)
    y = x / ew.sqrt(red.mean(x * x, axis=axis, keepdims=True) + float_argument(eps, "rms_norm", "eps"))
    if weight is not None:
        y = y * weight
        d = dt.result_type(d, arr(weight).dtype)
    return y.astype(d)


@api_boundary
def one_hot(indices, num_classes, dtype=None, *, axis=-1):
    """out[..., k] = (indices[...] == k), as `dtype` (float64 by default); `axis` (JAX's) places
    the class axis (the last by default)."""
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
    out = ew.equal(i[..., None], arange(num_classes, device=i.device)).astype(dtype or dt.float64)
    if axis in (-1, i.ndim):
        return out
    from poot.trace.movement import moveaxis

    return moveaxis(out, -1, axis)


@api_boundary
def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          local_window_size=None, implementation=None, **unsupported):
    """jax.nn.dot_product_attention: softmax(q k^T * scale + bias, masked) v over [B, T, N, H] arrays
    (JAX's layout: sequence before heads; [T, N, H] too), by pt.nn.scaled_dot_product_attention on
    the heads-first transposes. `mask` is bool (True keeps), `bias` is added to the scores, fewer key
    heads than query heads are shared (grouped-query), `local_window_size` is (left, right) or one
    int, as JAX's. Sequence-length arguments are not built."""
    from poot.trace.attention import scaled_dot_product_attention as sdpa
    from poot.trace.movement import swapaxes

    if unsupported:
        raise ArgumentError(f"dot_product_attention: {sorted(unsupported)} not built; pass masks (mask=) "
                            f"for padded sequences")
    if implementation not in (None, "xla"):
        raise ArgumentValueError(f"dot_product_attention: implementation={implementation!r} is not built; "
                                 f"poot picks its own kernel (None)")
    q, k, v = (arr(t) for t in (query, key, value))
    if q.ndim not in (3, 4):
        raise ShapeError(f"dot_product_attention: query must be [B, T, N, H] or [T, N, H], got {q.shape}")
    heads_first = [swapaxes(t, -2, -3) for t in (q, k, v)]
    m = None
    if mask is not None:
        mb = arr(mask)
        if mb.dtype.kind != "b":
            raise DTypeError(f"dot_product_attention: mask must be bool (True keeps), got {mb.dtype.name}")
        m = mb
    if bias is not None:
        b = arr(bias)
        m = b if m is None else sel.where(m, b, -math.inf)
    window = None
    if local_window_size is not None:
        window = ((local_window_size, local_window_size) if isinstance(local_window_size, int)
                  else tuple(local_window_size))
    out = sdpa(*heads_first, m, is_causal=bool(is_causal), scale=scale,
               enable_gqa=heads_first[0].shape[-3] != heads_first[1].shape[-3], window=window)
    return swapaxes(out, -2, -3)


def __dir__():
    """pt.nn's functions, not the modules and helpers this file imports (what tab completion offers)."""
    return sorted(__all__)
