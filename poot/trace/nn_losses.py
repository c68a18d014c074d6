"""`pt.nn` losses with torch.nn.functional's semantics: the same names, arguments and defaults
(reduction='mean' | 'sum' | 'none'), class axis 1 for (N, C, d1, ...) inputs, ignore_index=-100,
weight=, label_smoothing=, pos_weight=, log_target=.

Composed from lazy ops (so they fuse, run inside @pt.jit and differentiate through pt.grad), in
numerically stable forms: cross_entropy through a max-shifted log_softmax, the logits form of binary
cross-entropy as max(x, 0) - x * t + log1p(exp(-|x|)), binary_cross_entropy's logs clamped at -100 as
PyTorch. Integer inputs compute in NumPy's float type; float16/bfloat16 compute in float32 and round
once.

Differences from PyTorch: the elementwise losses (mse, l1, smooth_l1, huber, binary_cross_entropy[_with_
logits], kl_div) require input and target of one shape (PyTorch broadcasts mse/l1/smooth_l1/huber/kl_div
with only a warning); a class index outside [0, C) (other than ignore_index) is found by the gather's
bounds check and raises PootIndexError at the next host read, not at the call.
"""
from __future__ import annotations

import operator

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary
from poot.graph import broadcast_shapes
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace import selection as sel
from poot.trace.movement import arr
from poot.trace.promote import float_argument, float_of

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity"]

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(op, reduction, extra=()):
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS + tuple(extra):
        allowed = ", ".join(repr(r) for r in _REDUCTIONS + tuple(extra))
        raise ArgumentError(f"{op}: reduction must be one of {allowed}, got {reduction!r}")
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return red.sum(loss)
    return red.mean(loss)


def _float_types(op, *xs):
    """(the compute dtype, the result dtype) for float arrays xs (ints promote to NumPy's float)."""
    for x in xs:
        if x.dtype.kind == "c":
            raise DTypeError(f"{op}: complex input is not supported, got {x.aval}")
    d = float_of(dt.result_type(*(x.dtype for x in xs)))
    return (dt.float32 if d in (dt.float16, dt.bfloat16) else d), d


def _pair(op, input, target, what="target"):
    """input and target as Arrays of one shape, in their compute dtype; (x, t, result dtype)."""
    x = arr(input, op, (target,))
    t = arr(target, op, (x,))
    if x.shape != t.shape:
        raise ShapeError(f"{op}: {what} shape {t.shape} must match input shape {x.shape} "
                         f"(input {x.aval}, {what} {t.aval})")
    work, d = _float_types(op, x, t)
    return x.astype(work), t.astype(work), d


def _softplus(x):
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), both halves selecting on x >= 0."""
    pos = x >= 0
    return sel.where(pos, x, 0.0) + ew.log1p(ew.exp(sel.where(pos, -x, x)))


# --- regression losses ---------------------------------------------------------------------------
@api_boundary
def mse_loss(input, target, reduction="mean"):
    """torch.nn.functional.mse_loss: (input - target)**2, reduced. Shapes must match."""
    reduction = _reduction("mse_loss", reduction)
    x, t, d = _pair("mse_loss", input, target)
    r = x - t
    return _reduce(r * r, reduction).astype(d)


@api_boundary
def l1_loss(input, target, reduction="mean"):
    """torch.nn.functional.l1_loss: |input - target|, reduced. Shapes must match."""
    reduction = _reduction("l1_loss", reduction)
    x, t, d = _pair("l1_loss", input, target)
    return _reduce(ew.abs(x - t), reduction).astype(d)


@api_boundary
def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """torch.nn.functional.smooth_l1_loss: 0.5 * r**2 / beta where |r| < beta, else |r| - 0.5 * beta
    (r = input - target); beta = 0 is l1_loss. beta must be >= 0."""
    reduction = _reduction("smooth_l1_loss", reduction)
    b = float_argument(beta, "smooth_l1_loss", "beta")
    if b < 0:
        raise ArgumentError(f"smooth_l1_loss: beta must be 0 or more, got {beta!r}")
    x, t, d = _pair("smooth_l1_loss", input, target)
    a = ew.abs(x - t)
    if b == 0:
        return _reduce(a, reduction).astype(d)
    small = a < b
    r = x - t
    loss = sel.where(small, 0.5 * r * r / b, a - 0.5 * b)
    return _reduce(loss, reduction).astype(d)


@api_boundary
def huber_loss(input, target, reduction="mean", delta=1.0):
    """torch.nn.functional.huber_loss: 0.5 * r**2 where |r| < delta, else delta * (|r| - 0.5 * delta)
    (r = input - target) = delta * smooth_l1_loss(beta=delta). delta must be positive."""
    reduction = _reduction("huber_loss", reduction)
    dl = float_argument(delta, "huber_loss", "delta")
    if not dl > 0:
        raise ArgumentError(f"huber_loss: delta must be positive, got {delta!r}")
    x, t, d = _pair("huber_loss", input, target)
    r = x - t
    a = ew.abs(r)
    loss = sel.where(a < dl, 0.5 * r * r, dl * (a - 0.5 * dl))
    return _reduce(loss, reduction).astype(d)


# --- binary cross-entropy ------------------------------------------------------------------------
def _weight(op, weight, like, name="weight"):
    if weight is None:
        return None
    w = arr(weight, op, (like,))
    try:
        dt_shape = broadcast_shapes(w.shape, like.shape)
    except Exception:
        dt_shape = None
    if dt_shape != like.shape:
        raise ShapeError(f"{op}: {name} {w.aval} must broadcast to the input's shape {like.shape}")
    return w


@api_boundary
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy: -weight * (t * log(x) + (1 - t) * log(1 - x)) for
    probabilities x in [0, 1] (not checked: a value outside gives NaN, where PyTorch raises), each
    log clamped at -100 as PyTorch, so x = 0 or 1 gives a finite loss. For logits use
    binary_cross_entropy_with_logits, which is stable at any x."""
    op = "binary_cross_entropy"
    reduction = _reduction(op, reduction)
    x, t, d = _pair(op, input, target)
    w = _weight(op, weight, x)
    lx = ew.log(x)
    l1x = ew.log1p(-x)
    lx = sel.where(lx < -100.0, -100.0, lx)
    l1x = sel.where(l1x < -100.0, -100.0, l1x)
    loss = -(t * lx + (1.0 - t) * l1x)
    if w is not None:
        loss = loss * w.astype(x.dtype)
        d = dt.result_type(d, float_of(w.dtype))
    return _reduce(loss, reduction).astype(d)


@api_boundary
def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """torch.nn.functional.binary_cross_entropy_with_logits: -weight * (pos_weight * t * log
    sigmoid(x) + (1 - t) * log(1 - sigmoid(x))), computed as (1 - t) * x + (1 + (pos_weight - 1) * t)
    * softplus(-x), softplus(z) = max(z, 0) + log1p(exp(-|z|)): finite at any logit. pos_weight
    broadcasts along the last (class) axis, as PyTorch's."""
    op = "binary_cross_entropy_with_logits"
    reduction = _reduction(op, reduction)
    x, t, d = _pair(op, input, target)
    w = _weight(op, weight, x)
    pw = _weight(op, pos_weight, x, "pos_weight")
    sp = _softplus(-x)
    if pw is None:
        loss = (1.0 - t) * x + sp
    else:
        loss = (1.0 - t) * x + (1.0 + (pw.astype(x.dtype) - 1.0) * t) * sp
        d = dt.result_type(d, float_of(pw.dtype))
    if w is not None:
        loss = loss * w.astype(x.dtype)
        d = dt.result_type(d, float_of(w.dtype))
    return _reduce(loss, reduction).astype(d)


# --- KL divergence -------------------------------------------------------------------------------
@api_boundary
def kl_div(input, target, reduction="mean", log_target=False):
    """torch.nn.functional.kl_div: the pointwise KL divergence target * (log(target) - input), with
    `input` log-probabilities and `target` probabilities (0 * log 0 = 0), or, with log_target=True,
    log-probabilities: exp(target) * (target - input). reduction: 'mean' (over all elements, PyTorch's
    default, which is not the true KL), 'batchmean' (sum / input.shape[0]: the KL divergence per
    sample), 'sum' or 'none'."""
    reduction = _reduction("kl_div", reduction, ("batchmean",))
    x, t, d = _pair("kl_div", input, target)
    if log_target:
        loss = ew.exp(t) * (t - x)
    else:
        zero = t == 0                 # xlogy: 0 * log 0 = 0 (a negative target gives NaN, as PyTorch)
        loss = sel.where(zero, 0.0, t * ew.log(sel.where(zero, 1.0, t))) - t * x
    if reduction == "batchmean":
        n = x.shape[0] if x.ndim else 1
        return (red.sum(loss) / n).astype(d)
    return _reduce(loss, reduction).astype(d)


# --- similarity ----------------------------------------------------------------------------------
@api_boundary
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.nn.functional.cosine_similarity: sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))
    along `dim` (default 1), after broadcasting x1 and x2 together; that axis is removed."""
    from poot.trace.movement import axis_of

    a = arr(x1, "cosine_similarity", (x2,))
    b = arr(x2, "cosine_similarity", (a,))
    work, d = _float_types("cosine_similarity", a, b)
    e = float_argument(eps, "cosine_similarity", "eps")
    try:
        shape = broadcast_shapes(a.shape, b.shape)
    except Exception:
        raise ShapeError(f"cosine_similarity: x1 {a.aval} and x2 {b.aval} do not broadcast together") from None
    a = mv.broadcast_to(a.astype(work), shape)
    b = mv.broadcast_to(b.astype(work), shape)
    if not shape:
        raise ShapeError("cosine_similarity: inputs must have at least one axis")
    ax = axis_of(dim, len(shape), "cosine_similarity", a)
    floor = e * e
    if floor > 0 and floor >= float(dt.finfo(work).tiny):
        # max(||v||, eps) as sqrt(max(sum v^2, eps^2)): a zero vector then has a finite derivative
        n1, n2 = (ew.sqrt(sel.where(s > floor, s, floor)) for s in (red.sum(a * a, axis=ax), red.sum(b * b, axis=ax)))
    else:
        n1, n2 = (sel.where(n > e, n, e) for n in (ew.sqrt(red.sum(a * a, axis=ax)), ew.sqrt(red.sum(b * b, axis=ax))))
    return (red.sum(a * b, axis=ax) / (n1 * n2)).astype(d)


# --- classification ------------------------------------------------------------------------------
def _class_layout(op, x, t):
    """Check (input, integer target) shapes; return (input (N, C, ...), target (N, ...), unbatched)."""
    if x.ndim == 0:
        raise ShapeError(f"{op}: input must be (C,), (N, C) or (N, C, d1, ...), got a 0-d {x.aval}")
    if x.ndim == 1:
        if t.ndim != 0:
            raise ShapeError(f"{op}: for an unbatched input (C,) = {x.shape}, target must be a 0-d class "
                             f"index, got {t.aval}")
        return mv.expand_dims(x, 0), t.reshape((1,)), True
    want = (x.shape[0],) + x.shape[2:]
    if t.shape != want:
        raise ShapeError(f"{op}: target shape {t.shape} must be input's shape without the class axis 1, "
                         f"{want} (input {x.aval}, target {t.aval})")
    return x, t, False


def _ignore(op, ignore_index):
    if isinstance(ignore_index, bool):
        raise ArgumentError(f"{op}: ignore_index must be an int, got {ignore_index!r}")
    try:
        return operator.index(ignore_index)
    except TypeError:
        raise ArgumentError(f"{op}: ignore_index must be an int, got {ignore_index!r}") from None


def _class_weight(op, weight, C, like):
    if weight is None:
        return None
    w = arr(weight, op, (like,))
    if w.shape != (C,):
        raise ShapeError(f"{op}: weight must have shape ({C},) (one per class), got {w.aval}")
    return w


def _picked(logp, t, ignore, w):
    """nll over class indices t (N, ...) of logp (N, C, ...): (per-element loss with 0 at ignored
    places, the per-element weight, valid mask). Each index is gathered (a bounds-checked take), so a
    class outside [0, C) raises at the next host read; ignored places gather class 0 and are zeroed."""
    from poot.trace.indexing import take, take_along_axis

    C = logp.shape[1]
    t64 = t.astype(dt.int64)
    valid = t64 != ignore
    # ignored -> 0 (any in-range class); other negatives -> C, out of range, so the gather's bounds
    # check reports them (NumPy's take would wrap -1 to the last class silently)
    idx = sel.where(valid, sel.where(t64 < 0, C, t64), 0)
    g = take_along_axis(logp, mv.expand_dims(idx, 1), axis=1)
    g = g.reshape(t.shape)
    if w is not None:
        wt = sel.where(valid, take(w.astype(logp.dtype), idx, axis=0), 0.0)
    else:
        wt = sel.where(valid, 1.0, 0.0).astype(logp.dtype)
    return -g * wt, wt, valid


def _nll_reduce(loss, wt, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return red.sum(loss)
    return red.sum(loss) / red.sum(wt)          # PyTorch: the weighted mean over non-ignored targets


@api_boundary
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch.nn.functional.nll_loss: -weight[t] * input[n, t] for log-probabilities input (C,), (N, C)
    or (N, C, d1, ...) and integer class indices target (), (N,) or (N, d1, ...). Targets equal to
    ignore_index contribute 0 and do not count in the mean; 'mean' divides by the sum of the targets'
    weights (NaN if every target is ignored, as PyTorch). A class outside [0, C) raises
    PootIndexError at the next host read (a gather's bounds check), not at the call."""
    op = "nll_loss"
    reduction = _reduction(op, reduction)
    ignore = _ignore(op, ignore_index)
    x = arr(input, op, (target, weight))
    t = arr(target, op, (x,))
    if t.dtype.kind not in "iu":
        raise DTypeError(f"nll_loss: target must hold integer class indices, got {t.aval}")
    work, d = _float_types(op, x)
    xb, tb, unbatched = _class_layout(op, x, t)
    w = _class_weight(op, weight, xb.shape[1], xb)
    if w is not None:
        d = dt.result_type(d, float_of(w.dtype))
    loss, wt, _ = _picked(xb.astype(work), tb, ignore, w)
    out = _nll_reduce(loss, wt, reduction)
    if unbatched and reduction == "none":
        out = out.reshape(())
    return out.astype(d)


@api_boundary
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch.nn.functional.cross_entropy: log_softmax over the class axis (1; 0 for an unbatched (C,)
    input) of the logits `input`, then

    - integer class indices `target` ((), (N,) or (N, d1, ...)): nll_loss with weight and
      ignore_index, 'mean' dividing by the sum of the non-ignored targets' weights;
    - class probabilities `target` (a float array of input's shape): -sum_c weight_c * t_c * logp_c,
      'mean' dividing by the number of samples N * d1 * ... (ignore_index does not apply).

    label_smoothing = e in [0, 1] mixes the target with the uniform distribution: (1 - e) * target + e / C
    (for indices, PyTorch's formula: (1 - e) * nll + e / C * sum_c -weight_c * logp_c, ignored places
    0). The log-softmax subtracts the max, so logits of 1e4 are fine. A class index outside [0, C)
    raises PootIndexError at the next host read (a gather's bounds check), not at the call."""
    op = "cross_entropy"
    reduction = _reduction(op, reduction)
    ignore = _ignore(op, ignore_index)
    eps = float_argument(label_smoothing, op, "label_smoothing")
    if not 0.0 <= eps <= 1.0:
        raise ArgumentError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    x = arr(input, op, (target, weight))
    t = arr(target, op, (x,))
    if x.ndim == 0:
        raise ShapeError(f"{op}: input must be (C,), (N, C) or (N, C, d1, ...), got a 0-d {x.aval}")
    if t.dtype.kind in "iu":
        probs = False
    elif t.dtype.kind == "f":
        if t.shape != x.shape:
            raise DTypeError(f"{op}: a float target holds class probabilities and must have input's shape "
                             f"{x.shape}; got {t.aval} (class indices must be an integer array)")
        probs = True
    else:
        raise DTypeError(f"{op}: target must be integer class indices or float class probabilities, "
                         f"got {t.aval}")
    work, d = _float_types(op, x, *((t,) if probs else ()))
    if probs:
        unbatched = x.ndim == 1
        xb = mv.expand_dims(x, 0) if unbatched else x
        tb = (mv.expand_dims(t, 0) if unbatched else t).astype(work)
    else:
        xb, tb, unbatched = _class_layout(op, x, t)
    C = xb.shape[1]
    w = _class_weight(op, weight, C, xb)
    if w is not None:
        d = dt.result_type(d, float_of(w.dtype))
    xw = xb.astype(work)
    if C == 0:
        raise ShapeError(f"{op}: input has no classes (C = 0): {x.aval}")
    shifted = xw - red.max(xw, axis=1, keepdims=True)
    logp = shifted - ew.log(red.sum(ew.exp(shifted), axis=1, keepdims=True))
    wc = None
    if w is not None:
        wc = w.astype(work).reshape((1, C) + (1,) * (xb.ndim - 2))

    if probs:
        if eps:
            tb = tb * (1.0 - eps) + eps / C
        prod = logp * tb if wc is None else logp * tb * wc
        loss = -red.sum(prod, axis=1)
        if reduction == "none":
            out = loss.reshape(()) if unbatched else loss
        elif reduction == "sum":
            out = red.sum(loss)
        else:
            out = red.mean(loss)
        return out.astype(d)

    loss, wt, valid = _picked(logp, tb, ignore, w)
    if eps:
        smooth = -red.sum(logp if wc is None else logp * wc, axis=1)
        smooth = sel.where(valid, smooth, 0.0)
        if reduction == "none":
            loss = (1.0 - eps) * loss + (eps / C) * smooth
            out = loss
        elif reduction == "sum":
            out = (1.0 - eps) * red.sum(loss) + (eps / C) * red.sum(smooth)
        else:
            den = red.sum(wt)
            out = (1.0 - eps) * (red.sum(loss) / den) + (eps / C) * (red.sum(smooth) / den)
    else:
        out = _nll_reduce(loss, wt, reduction)
    if unbatched and reduction == "none":
        out = out.reshape(())
    return out.astype(d)
