"""Attention written by hand becomes the "attention" op (poot/graph/attention.py), so NumPy-style code
gets the flash kernels instead of an [Lq, Lk] score buffer per head.

The claimed pattern, over the last axis, with every intermediate read only inside the pattern:

    s = q @ transpose(k)            (the transpose swaps the last two axes of k)
    s = s * c  |  c * s  |  s / c   (optional; c a one-element value)
    s = s + mask | mask + s         (optional; mask broadcastable, each dim 1 or full)
    e = exp(s - max(s, -1))
    out = (e / sum(e, -1)) @ v      (float16/bfloat16 sum in float32: convert(sum(convert(e))))

with q, k, v of one float dtype the kernels take (float32, float16, bfloat16), the same batch dims,
head dims up to 256 and 3 or 4 dims ([H, L, D] or [B, H, L, D]). A constant scale becomes the op's
`scale`; any other one-element scale multiplies (or divides) q first, an [.., L, D] product (the
logits round differently, within the op's float32-accumulation tolerance). The mask is prepared as the
tracer prepares SDPA's (kernel_mask: clamped, cast to float32). The op keeps the hand-written
semantics for a row that sees no key (NaN: zero_empty=False). Softmax written without the maximum
(exp(s) / sum) is not claimed: it overflows where the claimed form would not.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.graph import Aval, Eqn, Graph, Var

KERNEL_DTYPES = (dt.float32, dt.float16, dt.bfloat16)
HEAD_DIM_MAX = 256
# Finite additive masks are clamped into [MASK_FLOOR, MASK_CEIL] for the float32 kernels (kernel_mask).
MASK_FLOOR = -1e38
MASK_CEIL = 1e38


def kernel_mask(m, emit):
    """The attention op's float32 additive mask from the float mask `m` (a value with an `.aval`), its
    equations made by `emit(op, inputs, params, aval)`: the tracer (poot/trace/attention.py) records
    them, the claim of hand-written attention (here) adds them to the graph, so both mean one thing.

    Why clamp: the CPU kernel keeps the logits in log2 units (x * log2(e)), so a finite mask near
    float32's extremes (finfo.min, as Hugging Face masks rows) would overflow to -inf there and make a
    row that softmax averages look empty, or to +inf and turn the row into NaN. A logit of +-1e38
    dominates (or vanishes beside) any ordinary one, and float32 rounding already erases the scores
    added to it, so the clamp keeps softmax's result; infinities and NaN pass unchanged. A float64
    mask is clamped before its cast, which would turn float64's own extremes into -inf."""
    d = m.aval.dtype
    f32 = dt.float32
    wide = float(dt.finfo(d).max) > MASK_CEIL     # float16's values need no clamp

    def convert(x):
        return emit("convert", (x,), {"dtype": f32}, Aval(x.aval.shape, f32))

    if d is not f32 and d.bits <= 32:           # float16, bfloat16: exact in float32
        m, d = convert(m), f32
    if wide:
        aval = Aval(m.aval.shape, d)

        def const(value):
            return emit("full", (), {"shape": (), "value": value, "dtype": d}, Aval((), d))

        clamped = emit("min", (emit("max", (m, const(MASK_FLOOR)), {}, aval), const(MASK_CEIL)), {}, aval)
        m = emit("select", (emit("isfinite", (m,), {}, Aval(aval.shape, dt.bool_)), clamped, m), {}, aval)
    return m if d is f32 else convert(m)


def claim_attention(graph: Graph) -> Graph:
    """`graph` with each hand-written attention replaced by one attention equation (dead equations
    of the pattern are left for DCE)."""
    if not any(e.op == "exp" for e in graph.eqns):
        return graph
    producer = {e.out.id: e for e in graph.eqns}
    uses: dict[int, int] = {}
    for e in graph.eqns:
        for v in e.inputs:
            uses[v.id] = uses.get(v.id, 0) + 1
    for v in graph.outputs:
        uses[v.id] = uses.get(v.id, 0) + 1
    eqns: list[Eqn] = []
    changed = False
    for e in graph.eqns:
        new = _match(e, producer, uses) if e.op == "matmul" else None
        if new is None:
            eqns.append(e)
        else:
            eqns.extend(new)
            changed = True
    return Graph(graph.inputs, eqns, graph.outputs) if changed else graph


def _only(v: Var, producer, uses, op: str, count: int = 1):
    """The equation producing `v` if it is `op` and `v` is read `count` times, else None."""
    e = producer.get(v.id)
    return e if e is not None and e.op == op and uses.get(v.id, 0) == count else None


def _last_axis(e: Eqn) -> bool:
    return tuple(e.params.get("axes", ())) == (e.inputs[0].aval.ndim - 1,)


def _match(final: Eqn, producer, uses) -> list[Eqn] | None:
    p, v = final.inputs
    div = _only(p, producer, uses, "div")
    if div is None:
        return None
    e, total = div.inputs
    sum_eqn, summed = _row_sum(total, producer, uses)
    exp_eqn = _only(e, producer, uses, "exp", 2)
    if sum_eqn is None or exp_eqn is None or summed.id != e.id or not _last_axis(sum_eqn):
        return None
    sub = _only(exp_eqn.inputs[0], producer, uses, "sub")
    if sub is None:
        return None
    z, mx = sub.inputs
    max_eqn = _only(mx, producer, uses, "reduce_max")
    if max_eqn is None or max_eqn.inputs[0].id != z.id or not _last_axis(max_eqn) or uses.get(z.id) != 2:
        return None
    s, mask = z, None
    add = producer.get(z.id)
    if add is not None and add.op == "add":
        a, b = add.inputs
        s, mask = (a, b) if _scores_like(a, producer) else (b, a)
    scale_var, divide = None, False
    y = producer.get(s.id)
    if y is not None and y.op in ("mul", "div") and uses.get(s.id) == (2 if s is z else 1):
        a, b = y.inputs
        if y.op == "div" and b.aval.size == 1:
            s, scale_var, divide = a, b, True
        elif y.op == "mul" and b.aval.size == 1:
            s, scale_var = a, b
        elif y.op == "mul" and a.aval.size == 1:
            s, scale_var = b, a
        else:
            return None
    mm = _only(s, producer, uses, "matmul", 2 if s is z else 1)    # unscaled, unmasked: max and sub read it
    if mm is None:
        return None
    q, kt = mm.inputs
    tr = producer.get(kt.id)
    nd = q.aval.ndim
    if tr is None or tr.op != "transpose" or tuple(tr.params["perm"]) != tuple(range(nd - 2)) + (nd - 1, nd - 2):
        return None
    k = tr.inputs[0]
    if not _fits(q, k, v, final.out):
        return None
    if mask is not None and not _mask_fits(mask, z.aval.shape):
        return None
    return _rewrite(final, q, k, v, mask, scale_var, divide, producer)


def _row_sum(total: Var, producer, uses):
    """(the reduce_sum equation, the value it sums) for the softmax's denominator `total`, or (None, None).
    A float16/bfloat16 sum is recorded in float32: convert(reduce_sum(convert(e, f32)), f16)."""
    back = _only(total, producer, uses, "convert")
    if back is not None:
        total = back.inputs[0]
        if not (dt.is_float(total.aval.dtype) and total.aval.dtype.bits > back.out.aval.dtype.bits):
            return None, None
    sum_eqn = _only(total, producer, uses, "reduce_sum")
    if sum_eqn is None:
        return None, None
    summed = sum_eqn.inputs[0]
    if back is not None:
        widen = _only(summed, producer, uses, "convert")
        if widen is None or widen.inputs[0].aval.dtype is not back.out.aval.dtype:
            return None, None
        summed = widen.inputs[0]
    return sum_eqn, summed


def _scores_like(x: Var, producer) -> bool:
    """Whether x is the scores side of `scores + mask` (a matmul, or a scaled one)."""
    e = producer.get(x.id)
    while e is not None and e.op in ("mul", "div"):
        big = [w for w in e.inputs if w.aval.size != 1]
        if len(big) != 1:
            return False
        e = producer.get(big[0].id)
    return e is not None and e.op == "matmul"


def _fits(q: Var, k: Var, v: Var, out: Var) -> bool:
    qa, ka, va = q.aval, k.aval, v.aval
    return (qa.ndim in (3, 4) and ka.ndim == qa.ndim and va.ndim == qa.ndim
            and qa.dtype in KERNEL_DTYPES and ka.dtype is qa.dtype and va.dtype is qa.dtype
            and qa.shape[:-2] == ka.shape[:-2] == va.shape[:-2] and ka.shape[-2] == va.shape[-2]
            and ka.shape[-1] == qa.shape[-1] and max(qa.shape[-1], va.shape[-1]) <= HEAD_DIM_MAX
            and out.aval.shape == qa.shape[:-1] + (va.shape[-1],) and qa.size > 0 and ka.size > 0)


def _mask_fits(mask: Var, scores: tuple) -> bool:
    m = mask.aval.shape
    if len(m) > len(scores):
        return False
    m = (1,) * (len(scores) - len(m)) + m
    return all(x in (1, f) for x, f in zip(m, scores))


def _rewrite(final, q, k, v, mask, scale_var, divide, producer) -> list[Eqn]:
    new: list[Eqn] = []

    def emit(op, inputs, params, aval) -> Var:
        out = Var(aval)
        new.append(Eqn(op, tuple(inputs), params, out, final.where))
        return out

    scale = 1.0
    if scale_var is not None:
        const = producer.get(scale_var.id)
        if const is not None and const.op == "full":
            c = float(const.params["value"])
            scale = 1.0 / c if divide else c
        else:
            q = emit("div" if divide else "mul", (q, scale_var), {}, q.aval)
    four = lambda x: x if x.aval.ndim == 4 else emit(  # noqa: E731
        "reshape", (x,), {"shape": (1,) + x.aval.shape}, Aval((1,) + x.aval.shape, x.aval.dtype))
    operands = [four(q), four(k), four(v)]
    if mask is not None:
        m = kernel_mask(mask, emit)
        shape = (1,) * (4 - m.aval.ndim) + m.aval.shape if m.aval.ndim <= 4 else m.aval.shape
        if shape != m.aval.shape:
            m = emit("reshape", (m,), {"shape": shape}, Aval(shape, dt.float32))
        operands.append(m)
    params = {"scale": scale, "softcap": 0.0, "left": None, "right": None, "zero_empty": False}
    shape4 = operands[0].aval.shape[:3] + (v.aval.shape[-1],)
    if final.out.aval.ndim == 4:
        new.append(Eqn("attention", tuple(operands), params, final.out, final.where))
    else:
        r = emit("attention", operands, params, Aval(shape4, final.out.aval.dtype))
        new.append(Eqn("reshape", (r,), {"shape": final.out.aval.shape}, final.out, final.where))
    return new
