"""JAX-style programs over `pt.vmap` with a named axis and the collectives (`pt.lax.psum`, `pmean`,
`pmax`, `pmin`, `axis_index`, `axis_size`, `all_gather`): normalizing over the batch, batch norm,
data-parallel gradients averaged with pmean, nested named vmaps, collectives inside loops and conds,
derivatives through them; and the JAX arguments such programs pass elsewhere (`jit(donate_argnames=)`,
`tree_util.register_dataclass`, `nn.softmax(where=)`, `nn.logsumexp(b=, return_sign=)`,
`nn.one_hot(axis=)`). Expected values are JAX's, computed here with NumPy (the tests do not import jax),
eagerly and under @pt.jit."""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

lax = pt.lax
F32 = pt.float32


def _close(got, expected, ops=8):
    e = np.asarray(expected)
    assert isinstance(got, pt.Array)
    a = got.numpy()
    assert a.dtype == e.dtype, f"{a.dtype} != {e.dtype}"
    assert_close(a, e, pt.dtypes.as_dtype(e.dtype), ops=ops)


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("jit", [False, True])
def test_collectives_over_a_named_axis_match_jax(device, jit):
    x = _rng().standard_normal((4, 3)).astype(np.float32)
    wrap = pt.jit if jit else (lambda f: f)

    def run(fn, *args, **kw):
        return wrap(pt.vmap(fn, axis_name="i", **kw))(*[pt.asarray(a) for a in args])

    _close(run(lambda v: lax.psum(v, "i"), x), np.broadcast_to(x.sum(0), x.shape))
    _close(run(lambda v: lax.psum(v, "i"), x, out_axes=None), x.sum(0))        # unbatched: out_axes None
    _close(run(lambda v: v - lax.pmean(v, "i"), x), x - x.mean(0))
    _close(run(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i"), x), np.broadcast_to(x.max(0) - x.min(0), x.shape))
    _close(run(lambda v: v * lax.axis_index("i").astype(F32), x), x * np.arange(4, dtype=np.float32)[:, None])
    _close(run(lambda v: v * lax.psum(1, "i") * lax.axis_size("i"), x), x * 16)   # a Python scalar stays weak
    _close(run(lambda v: lax.all_gather(v, "i"), x), np.broadcast_to(x, (4, 4, 3)))
    _close(run(lambda v: lax.all_gather(v, "i", axis=1), x), np.broadcast_to(x.transpose(1, 0), (4, 3, 4)))
    _close(run(lambda v: lax.all_gather(v, "i", tiled=True), x), np.broadcast_to(x.reshape(-1), (4, 12)))
    _close(run(lambda v: lax.psum(v, "i"), x, in_axes=1), np.broadcast_to(x.sum(1), (3, 4)))
    got = run(lambda v: lax.psum({"a": v, "b": (2 * v, v.sum())}, "i"), x)
    _close(got["a"], np.broadcast_to(x.sum(0), x.shape))
    _close(got["b"][1], np.full(4, x.sum(), np.float32))
    # batch norm over the vmap axis
    mu, var = x.mean(0), x.var(0)
    _close(run(lambda v: (v - lax.pmean(v, "i")) / pt.sqrt(lax.pmean((v - lax.pmean(v, "i")) ** 2, "i") + 1e-5), x),
           (x - mu) / np.sqrt(var + np.float32(1e-5)), ops=32)
    # a value every example shares: psum multiplies it by the batch size
    c = np.float32(3.0)
    _close(wrap(pt.vmap(lambda v, s: v + lax.psum(s, "i"), in_axes=(0, None), axis_name="i"))(
        pt.asarray(x), pt.asarray(c)), x + 12)


def test_nested_named_vmaps_and_collectives_inside_loops_and_conds(device):
    m = _rng(1).standard_normal((2, 3)).astype(np.float32)
    inner = pt.vmap(pt.vmap(lambda u: lax.psum(u, "i") + lax.psum(u, "j"), axis_name="j"), axis_name="i")
    _close(inner(pt.asarray(m)), m.sum(0, keepdims=True) + m.sum(1, keepdims=True))
    both = pt.vmap(pt.vmap(lambda u: lax.psum(u, ("i", "j")) * lax.axis_index(("i", "j")).astype(F32),
                           axis_name="j"), axis_name="i")
    _close(both(pt.asarray(m)), m.sum() * np.arange(6, dtype=np.float32).reshape(2, 3))
    # an unnamed vmap inside a named one passes the collective on to it
    _close(pt.vmap(lambda r: pt.vmap(lambda u: u - lax.pmean(u, "i"))(r), axis_name="i")(pt.asarray(m)), m - m.mean(0))

    x = np.abs(_rng(2).standard_normal(4)).astype(np.float32) + np.float32(0.5)
    c = x.copy()
    for k in range(3):
        c = c / c.sum() + np.float32(1)
    fori = pt.vmap(lambda v: lax.fori_loop(0, 3, lambda k, c: c / lax.psum(c, "i") + 1, v), axis_name="i")
    _close(fori(pt.asarray(x)), c)
    _close(pt.jit(fori)(pt.asarray(x)), c)
    xs = _rng(3).standard_normal((3, 5)).astype(np.float32)    # 3 examples, 5 steps each
    scan = pt.vmap(lambda v: lax.scan(lambda c, e: (c + lax.psum(e, "i"), c), v[0], v), axis_name="i")
    carry, ys = scan(pt.asarray(xs))
    totals = xs.sum(0)
    ref_ys = xs[:, :1] + np.concatenate([[0], np.cumsum(totals)[:-1]]).astype(np.float32)
    _close(ys, ref_ys)
    _close(carry, xs[:, 0] + totals.sum())
    # a per-example predicate: each branch runs for every example, the psum sees all of them (JAX's select)
    rows = np.array([[-1, -2, 0.5], [1, 2, 3], [4, -1, 0], [-3, 0, 0]], np.float32)
    take = rows.sum(1) > 0
    ref = np.where(take[:, None], rows - rows.mean(0), 0 * rows)
    for branchy in (lambda v: lax.cond(v.sum() > 0, lambda u: u - lax.pmean(u, "i"), lambda u: u * 0, v),
                    lambda v: pt.where(v.sum() > 0, v - lax.pmean(v, "i"), v * 0)):
        _close(pt.vmap(branchy, axis_name="i")(pt.asarray(rows)), ref)
    # a loop or cond whose operands every example shares still sums over the axis (value * size)
    c0 = pt.asarray(np.float32(2.0))
    shared = pt.vmap(lambda v: v + lax.fori_loop(0, 3, lambda k, c: c + lax.psum(c0, "i"), pt.zeros((), dtype=F32))
                     + lax.cond(c0 > 0, lambda: lax.psum(c0, "i"), lambda: c0), axis_name="i")
    _close(shared(pt.asarray(x)), x + 24 + 8)
    # while: the predicate reads a psum, so it is the same for every example
    grow = pt.vmap(lambda v: lax.while_loop(lambda c: lax.psum(c, "i").sum() < 100, lambda c: c * 2, v), axis_name="i")
    start = np.abs(rows) + 1
    ref, t = start.copy(), start.copy()
    while t.sum() < 100:
        t = t * 2
    _close(grow(pt.asarray(start)), t)


def test_derivatives_through_collectives_follow_jax(device):
    x = np.arange(4, dtype=np.float32) + np.float32(0.5)
    # vmap(grad(f)): the transpose of psum is psum, so each example collects every example's cotangent
    _close(pt.vmap(pt.grad(lambda v: lax.psum(v ** 2, "i")), axis_name="i")(pt.asarray(x)), 2 * x * 4)
    tan = pt.vmap(lambda v: pt.jvp(lambda u: lax.psum(pt.sin(u), "i"), (v,), (v,))[1], axis_name="i")(pt.asarray(x))
    _close(tan, np.full(4, (np.cos(x) * x).sum(), np.float32))
    # pmax: the derivative goes to the examples attaining it, ties sharing it
    ties = np.array([1, 3, 3, 0], np.float32)
    _close(pt.vmap(pt.grad(lambda u: lax.pmax(u, "i")), axis_name="i")(pt.asarray(ties)), np.array([0, 2, 2, 0], np.float32))

    # data parallel: per-example gradients averaged with pmean, returned once (out_axes=None)
    X = _rng(4).standard_normal((8, 3)).astype(np.float32)
    y = _rng(5).standard_normal(8).astype(np.float32)
    w = np.ones(3, np.float32)

    def step(w, xb, yb):
        g = pt.grad(lambda w_, a, b: ((a @ w_ - b) ** 2).sum())(w, xb, yb)
        return lax.pmean(g, "batch")

    ref = (2 * (X @ w - y)[:, None] * X).mean(0)
    dp = pt.vmap(step, in_axes=(None, 0, 0), axis_name="batch", out_axes=None)
    _close(dp(pt.asarray(w), pt.asarray(X), pt.asarray(y)), ref)
    _close(pt.jit(dp)(pt.asarray(w), pt.asarray(X), pt.asarray(y)), ref)

    # grad of a vmap whose examples are normalized by a psum (softmax over the batch by hand)
    def loss(w, xs):
        return pt.vmap(lambda r: pt.exp(r @ w) / lax.psum(pt.exp(r @ w), "b"), axis_name="b")(xs)[0]

    p = np.exp(X @ w) / np.exp(X @ w).sum()
    ref = p[0] * (X[0] - (p[:, None] * X).sum(0))
    _close(pt.grad(loss)(pt.asarray(w), pt.asarray(X)), ref, ops=32)
    _close(pt.jit(pt.grad(loss))(pt.asarray(w), pt.asarray(X)), ref, ops=32)


def test_an_unbound_axis_name_is_a_named_error(device):
    x = pt.asarray(np.arange(4.0))
    with pytest.raises(pt.AxisNameError, match="unbound axis name 'k'.*bind 'i'"):
        pt.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(x)
    with pytest.raises(NameError, match="unbound axis name 'i'"):          # JAX's NameError
        lax.pmean(x, "i")
    with pytest.raises(pt.AxisNameError, match="unbound axis name 'i'"):
        pt.vmap(lambda v: lax.axis_index("i"))(x)
    with pytest.raises(pt.AxisNameError, match="unbound axis name 'i'"):
        pt.jit(lambda v: lax.psum(v, "i"))(x)
    with pytest.raises(pt.DTypeError, match="psum does not take bool"):
        pt.vmap(lambda v: lax.psum(v > 1, "i"), axis_name="i")(x)
    with pytest.raises(pt.PootError, match="axis_name must be hashable"):
        pt.vmap(lambda v: v, axis_name=["i"])
    # JAX's positional order: vmap(f, in_axes, out_axes, axis_name)
    _close(pt.vmap(lambda v: lax.psum(v, "i"), 0, 0, "i")(x), np.full(4, 6.0))


def test_jit_donate_argnames(device):
    @functools.partial(pt.jit, donate_argnames=("params",))
    def update(params, grads):
        return pt.tree_map(lambda p, g: p - 0.5 * g, params, grads)

    w = np.arange(3, dtype=np.float32)
    p = {"w": pt.asarray(w)}
    old = p["w"]
    p = update(p, {"w": pt.ones(3, dtype=F32)})
    _close(p["w"], w - 0.5)
    with pytest.raises(pt.PootError, match="donated"):
        old.numpy()
    assert update.donate_argnums == frozenset({0})
    with pytest.raises(pt.ArgumentError, match="donate_argnames names 'q'"):
        pt.jit(lambda a, b: a, donate_argnames="q")


def test_register_dataclass_keeps_meta_fields_static(device):
    @functools.partial(pt.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        act: str

    @pt.tree_util.register_dataclass
    @dataclasses.dataclass
    class Scaled:
        x: object
        n: int = dataclasses.field(default=3, metadata={"static": True})

    W = _rng(6).standard_normal((3, 2)).astype(np.float32)
    v = _rng(7).standard_normal(3).astype(np.float32)
    layer = Layer(pt.asarray(W), pt.zeros(2, dtype=F32), "tanh")
    assert len(pt.tree_util.tree_leaves(layer)) == 2
    f = pt.jit(lambda L, x: pt.tanh(x @ L.w + L.b) if L.act == "tanh" else x @ L.w + L.b)
    _close(f(layer, pt.asarray(v)), np.tanh(v @ W))
    _close(f(Layer(layer.w, layer.b, "id"), pt.asarray(v)), v @ W)
    g = pt.grad(lambda L: f(L, pt.asarray(v)).sum())(layer)
    assert type(g) is Layer and g.act == "tanh"
    _close(g.w, np.outer(v, 1 - np.tanh(v @ W) ** 2))
    _close(pt.vmap(lambda s: s.x * s.n)(Scaled(pt.asarray(W))), W * 3)
    with pytest.raises(pt.ArgumentError, match="name each init field once"):
        pt.tree_util.register_dataclass(Layer, data_fields=["w"], meta_fields=["act"])


def test_nn_where_b_return_sign_and_one_hot_axis(device):
    rng = _rng(8)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = x > -0.3
    w[2] = False
    b = rng.standard_normal((4, 5)).astype(np.float32)
    xm = np.where(w, x, -np.inf)
    m = np.where(np.isfinite(xm.max(1, keepdims=True)), xm.max(1, keepdims=True), 0)
    e = np.where(w, np.exp(x - m), 0)
    s = e.sum(1, keepdims=True)
    soft = e / np.where(s == 0, 1, s)
    _close(pt.nn.softmax(pt.asarray(x), where=pt.asarray(w)), soft)
    _close(pt.jit(lambda v: pt.nn.softmax(v, where=pt.asarray(w)))(pt.asarray(x)), soft)
    with np.errstate(divide="ignore"):
        logsoft = np.where(w, x - m - np.log(s), -np.inf)
    _close(pt.nn.log_softmax(pt.asarray(x), where=pt.asarray(w)), logsoft)
    # the gradient through a masked softmax is finite and zero at the masked entries
    g = pt.grad(lambda v: (pt.nn.softmax(v, where=pt.asarray(w)) * pt.arange(5.0, dtype=F32)).sum())(pt.asarray(x))
    k = np.arange(5, dtype=np.float32)
    ref = soft * (k - (soft * k).sum(1, keepdims=True))
    _close(g, ref)
    total = (b * np.exp(x)).sum(1)
    lse, sign = pt.nn.logsumexp(pt.asarray(x), axis=1, b=pt.asarray(b), return_sign=True)
    _close(lse, np.log(np.abs(total)).astype(np.float32), ops=16)
    _close(sign, np.sign(total).astype(np.float32))
    _close(pt.nn.logsumexp(pt.asarray(x), axis=1, b=2.0), np.log(2 * np.exp(x).sum(1)).astype(np.float32), ops=16)
    _close(pt.nn.logsumexp(pt.asarray(x), axis=0, b=pt.asarray(np.abs(b)), keepdims=True),
           np.log((np.abs(b) * np.exp(x)).sum(0, keepdims=True)).astype(np.float32), ops=16)
    i = np.array([[0, 2, 1], [3, 3, 0]])
    eye = np.eye(4, dtype=np.float32)[i]                  # class axis last: (2, 3, 4)
    for axis, ref in ((0, eye.transpose(2, 0, 1)), (1, eye.transpose(0, 2, 1)), (-1, eye), (-2, eye.transpose(0, 2, 1))):
        _close(pt.nn.one_hot(pt.asarray(i), 4, dtype=F32, axis=axis), ref)


def test_key_paths_and_the_tree_namespace(device):
    from typing import NamedTuple

    class Dense(NamedTuple):
        w: object
        b: object

    params = {"layers": [Dense(pt.ones(2, dtype=F32), pt.zeros(2, dtype=F32)), Dense(pt.ones(2, dtype=F32), None)],
              "scale": (pt.ones((), dtype=F32),)}
    got = [(pt.tree_util.keystr(k), tuple(v.shape)) for k, v in pt.tree.leaves_with_path(params)]
    assert got == [("['layers'][0].w", (2,)), ("['layers'][0].b", (2,)), ("['layers'][1].w", (2,)),
                   ("['scale'][0]", ())]
    # weight decay on the weights only, picked by path (an optax-style mask)
    decayed = pt.tree.map_with_path(lambda path, p, g: p - 0.1 * g - (0.01 * p if path[-1] == pt.tree_util.GetAttrKey("w")
                                                                        else 0), params, params)
    _close(decayed["layers"][0].w, np.full(2, 0.89, np.float32))
    _close(decayed["layers"][0].b, np.zeros(2, np.float32))
    _close(decayed["scale"][0], np.float32(0.9))
    assert pt.tree_util.keystr(pt.tree.flatten_with_path(params)[0][1][0], simple=True, separator="/") == "layers/0/b"
    assert pt.tree.structure(params) == pt.tree_util.tree_structure(params)
    _close(pt.tree.reduce(lambda a, b: a + b.sum(), pt.tree.map(lambda p: p * 2, params), 0.0), np.float32(10.0))


def test_sdpa_takes_pytorchs_attn_mask_keyword(device):
    rng = _rng(9)
    q, k, v = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3))
    mask = np.tril(np.ones((3, 3), bool))
    s = np.where(mask, q @ k.transpose(0, 2, 1) / 2.0, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v
    _close(pt.nn.scaled_dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), attn_mask=pt.asarray(mask)),
           ref.astype(np.float32), ops=16)
    with pytest.raises(pt.ArgumentError, match="both mask and attn_mask"):
        pt.nn.scaled_dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), pt.asarray(mask),
                                           attn_mask=pt.asarray(mask))
    with pytest.raises(pt.PootError, match="dropout_p"):
        pt.nn.scaled_dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), dropout_p=0.1)


def test_jax_nn_dot_product_attention_and_the_sparse_activations(device):
    rng = _rng(10)
    B, T, S, N, K, H = 2, 3, 4, 4, 2, 8           # two query heads share each key/value head
    q = rng.standard_normal((B, T, N, H)).astype(np.float32)
    k = rng.standard_normal((B, S, K, H)).astype(np.float32)
    v = rng.standard_normal((B, S, K, H)).astype(np.float32)
    mask = rng.random((B, 1, T, S)) > 0.3
    mask[..., 0] = True
    bias = rng.standard_normal((1, N, T, S)).astype(np.float32)
    kk, vv = (np.repeat(t, N // K, axis=2) for t in (k, v))
    s = np.einsum("btnh,bsnh->bnts", q, kk) / np.sqrt(H) + bias
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("bnts,bsnh->btnh", p / p.sum(-1, keepdims=True), vv).astype(np.float32)
    got = pt.nn.dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), bias=pt.asarray(bias),
                                      mask=pt.asarray(mask))
    _close(got, ref, ops=32)
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    _close(pt.nn.squareplus(pt.asarray(x)), ((x + np.sqrt(x * x + 4)) / 2).astype(np.float32))
    _close(pt.nn.sparse_plus(pt.asarray(x)), np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)).astype(np.float32))
    _close(pt.nn.sparse_sigmoid(pt.asarray(x)), (0.5 * np.clip(x + 1, 0, 2)).astype(np.float32))
    _close(pt.grad(lambda t: pt.nn.sparse_plus(t).sum())(pt.asarray(x)), (0.5 * np.clip(x + 1, 0, 2)).astype(np.float32))
