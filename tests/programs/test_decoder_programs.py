"""Decoder programs as users write them: a Llama-style model (RMSNorm, rotary embeddings, grouped-query
attention, SwiGLU, tied embeddings) and a GPT-2-style one (LayerNorm, fused QKV, GELU, learned
positions), with a KV cache updated per step under @pt.jit, left-padded batches, sampling loops and
quantized weights, each compared with a NumPy reference within its dtype's tolerance."""
from __future__ import annotations

import math

import numpy as np
import pytest
from tolerance import assert_close

import poot as pt

V, D, H, HK, LAYERS, F, T = 48, 32, 4, 2, 2, 48, 16
HD = D // H


# -- NumPy references ---------------------------------------------------------------------------------
def np_rms(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def np_layer_norm(x, w, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps) * w + b


def np_attention(q, k, v, keep=None, scale=None, softcap=None):
    """softmax(q k^T * scale) v over [..., H, L, D], key/value heads repeated for grouped queries;
    `keep` a boolean mask (True: attend)."""
    k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def np_rope_half(x, pos):
    inv = 1.0 / 10000.0 ** (np.arange(0, HD, 2) / HD)
    ang = np.asarray(pos, np.float64)[..., None] * inv
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., :HD // 2], x[..., HD // 2:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)


def np_rope_interleaved(x, pos):
    inv = 1.0 / 10000.0 ** (np.arange(0, HD, 2) / HD)
    ang = np.asarray(pos, np.float64)[..., None] * inv
    c, s = np.cos(ang), np.sin(ang)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
    return out


def np_silu(x):
    return x / (1 + np.exp(-x))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def llama_params(seed=0):
    rng = np.random.default_rng(seed)
    p = {"emb": (rng.standard_normal((V, D)) * 0.5).astype(np.float32),
         "norm": (1 + 0.1 * rng.standard_normal(D)).astype(np.float32), "layers": []}
    shapes = dict(wq=(D, H * HD), wk=(D, HK * HD), wv=(D, HK * HD), wo=(H * HD, D), w1=(D, F), w3=(D, F), w2=(F, D))
    for _ in range(LAYERS):
        layer = {k: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32) for k, s in shapes.items()}
        layer["n1"] = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
        layer["n2"] = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
        p["layers"].append(layer)
    return p


def np_llama(p, toks):
    """Logits [B, S, V] of the whole sequence (float64)."""
    p = {"emb": p["emb"].astype(np.float64), "norm": p["norm"],
         "layers": [{k: w.astype(np.float64) for k, w in lp.items()} for lp in p["layers"]]}
    b, s = toks.shape
    x = p["emb"][toks]
    pos = np.arange(s)
    for lp in p["layers"]:
        h = np_rms(x, lp["n1"])
        q = (h @ lp["wq"]).reshape(b, s, H, HD).transpose(0, 2, 1, 3)
        k = (h @ lp["wk"]).reshape(b, s, HK, HD).transpose(0, 2, 1, 3)
        v = (h @ lp["wv"]).reshape(b, s, HK, HD).transpose(0, 2, 1, 3)
        a = np_attention(np_rope_half(q, pos), np_rope_half(k, pos), v, np.tril(np.ones((s, s), bool)))
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, D) @ lp["wo"]
        h = np_rms(x, lp["n2"])
        x = x + (np_silu(h @ lp["w1"]) * (h @ lp["w3"])) @ lp["w2"]
    return np_rms(x, p["norm"]) @ p["emb"].T


# -- the poot programs --------------------------------------------------------------------------------
def rope_half(x, pos):
    inv = 1.0 / 10000.0 ** (pt.arange(0, HD, 2, dtype=pt.float32) / HD)
    ang = pos[:, None].astype(pt.float32) * inv
    c, s = pt.cos(ang), pt.sin(ang)
    x1, x2 = x[..., :HD // 2], x[..., HD // 2:]
    return pt.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1).astype(x.dtype)


def llama_step(p, toks, pos0, kc, vc, form="dus"):
    """Logits (float32) of tokens [B, S] at positions pos0.., the caches [LAYERS, B, HK, T, HD] with
    their rows written (by `form`: dynamic_update_slice, .at[].set or x[...] = , the last two for
    one token); every query attends to the cache under a mask of the positions up to its own."""
    b, s = toks.shape
    x = p["emb"][toks]
    pos = pos0 + pt.arange(s)
    mask = pt.arange(T)[None, :] <= pos[:, None]
    for i, lp in enumerate(p["layers"]):
        h = pt.nn.rms_norm(x, lp["n1"]).astype(x.dtype)
        q = (h @ lp["wq"]).reshape(b, s, H, HD).transpose(0, 2, 1, 3)
        k = (h @ lp["wk"]).reshape(b, s, HK, HD).transpose(0, 2, 1, 3)
        v = (h @ lp["wv"]).reshape(b, s, HK, HD).transpose(0, 2, 1, 3)
        q, k = rope_half(q, pos), rope_half(k, pos)
        if form == "at":
            kc = kc.at[i, :, :, pos0].set(k[:, :, 0])
            vc = vc.at[i, :, :, pos0].set(v[:, :, 0])
        elif form == "setitem":
            kc[i, :, :, pos0] = k[:, :, 0]
            vc[i, :, :, pos0] = v[:, :, 0]
        else:
            kc = pt.lax.dynamic_update_slice(kc, k[None], (i, 0, 0, pos0, 0))
            vc = pt.lax.dynamic_update_slice(vc, v[None], (i, 0, 0, pos0, 0))
        a = pt.nn.scaled_dot_product_attention(q, kc[i], vc[i], mask=mask, enable_gqa=True)
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, D) @ lp["wo"]
        h = pt.nn.rms_norm(x, lp["n2"]).astype(x.dtype)
        x = x + (pt.nn.silu(h @ lp["w1"]) * (h @ lp["w3"])) @ lp["w2"]
    x = pt.nn.rms_norm(x, p["norm"]).astype(x.dtype)
    return (x @ p["emb"].T).astype(pt.float32), kc, vc


def to_poot(p, dtype=pt.float32):
    return pt.tree_util.tree_map(lambda a: pt.asarray(a).astype(dtype), p)


def empty_caches(batch, dtype=pt.float32):
    return (pt.zeros((LAYERS, batch, HK, T, HD), dtype=dtype), pt.zeros((LAYERS, batch, HK, T, HD), dtype=dtype))


def _address(a):
    pt.realize(a)
    return a._node.buf.handle.ctypes.data


# -- Llama --------------------------------------------------------------------------------------------
def test_llama_prefill_and_greedy_decode_match_numpy():
    p = llama_params()
    pp = to_poot(p)
    toks = np.random.default_rng(1).integers(0, V, (2, 5))
    want = np_llama(p, toks)
    got, _, _ = llama_step(pp, pt.asarray(toks), 0, *empty_caches(2))
    assert_close(got.numpy(), want.astype(np.float32), pt.float32, ops=64, err_msg="eager prefill")
    step = pt.jit(llama_step, static_argnums=5, donate_argnums=(3, 4))
    lg, kc, vc = step(pp, pt.asarray(toks), 0, *empty_caches(2))
    assert_close(lg.numpy(), want.astype(np.float32), pt.float32, ops=64, err_msg="jitted prefill")
    seq, pos = toks, toks.shape[1]
    nxt = lg.numpy()[:, -1].argmax(-1)
    for _ in range(3):                        # greedy tokens, each step's logits against the whole sequence's
        seq = np.concatenate([seq, nxt[:, None]], 1)
        lg, kc, vc = step(pp, pt.asarray(nxt[:, None]), pt.asarray(pos), kc, vc)
        want = np_llama(p, seq)[:, -1]
        assert_close(lg.numpy()[:, 0], want.astype(np.float32), pt.float32, ops=64, err_msg=f"decode {pos}")
        nxt = lg.numpy()[:, 0].argmax(-1)
        np.testing.assert_array_equal(nxt, want.argmax(-1))
        pos += 1
    assert step.trace_count == 2              # the prefill's shape and the one-token step's


@pytest.mark.parametrize("form,dtype", [("dus", pt.float32), ("at", pt.bfloat16), ("setitem", pt.float32)])
def test_llama_decode_updates_the_donated_cache_in_place(form, dtype):
    """Token by token under @pt.jit with donated caches: the logits equal the prefill's (one call over
    the whole prompt), and every layer writes into the one cache buffer: after the first calls no
    cache-sized buffer is allocated and the caches stay where they are."""
    p = llama_params(2)
    pp = to_poot(p, dtype)
    toks = np.random.default_rng(3).integers(0, V, (2, 6))
    full, _, _ = llama_step(pp, pt.asarray(toks), 0, *empty_caches(2, dtype))
    step = pt.jit(llama_step, static_argnums=5, donate_argnums=(3, 4))
    kc, vc = empty_caches(2, dtype)
    dev = pt.devices.get("cpu")
    sizes, real = [], dev.allocate
    cache_bytes = kc.nbytes
    outs, where = [], set()
    try:
        for t in range(toks.shape[1]):
            if t == 2:
                dev.allocate = lambda n, *a, **kw: sizes.append(n) or real(n, *a, **kw)
            lg, kc, vc = step(pp, pt.asarray(toks[:, t:t + 1]), pt.asarray(t), kc, vc, form)
            outs.append(lg.numpy()[:, 0])
            if t >= 2:
                where.add((_address(kc), _address(vc)))
    finally:
        del dev.allocate
    assert not [n for n in sizes if n >= cache_bytes], f"cache-sized allocations per step: {sizes}"
    assert len(where) == 1, f"the caches moved between steps: {where}"
    inc = np.stack(outs, 1)
    assert_close(inc, full.numpy(), dtype, ops=16, err_msg="token by token vs prefill")
    if dtype is pt.float32:
        assert_close(inc, np_llama(p, toks).astype(np.float32), pt.float32, ops=64)
    assert step.trace_count == 1


def test_whole_generation_in_one_jit_with_fori_loop():
    """Prefill, then a lax.fori_loop of decode steps carrying the caches, the key and the tokens
    written with .at[:, i].set: greedy tokens equal NumPy's; sampled ones equal the eager run's."""
    p = llama_params(4)
    pp = to_poot(p)
    prompt = np.random.default_rng(5).integers(0, V, (2, 4))
    new = 5

    def generate(p, prompt, key, temperature):
        lg, kc, vc = llama_step(p, prompt, 0, *empty_caches(2))
        out = pt.zeros((2, new), dtype=pt.int64)

        def body(i, carry):
            tok, kc, vc, out, key = carry
            out = out.at[:, i].set(tok)
            key, sub = pt.random.split(key)
            lg, kc, vc = llama_step(p, tok[:, None], prompt.shape[1] + i, kc, vc)
            return pt.nn.sample(lg[:, -1], sub, temperature=temperature), kc, vc, out, key

        return pt.lax.fori_loop(0, new, body, (pt.argmax(lg[:, -1], axis=-1), kc, vc, out, key))[3]

    seq = prompt
    for _ in range(new):
        seq = np.concatenate([seq, np_llama(p, seq)[:, -1].argmax(-1)[:, None]], 1)
    jitted = pt.jit(generate, static_argnums=3)
    np.testing.assert_array_equal(jitted(pp, pt.asarray(prompt), pt.random.key(0), 0.0).numpy(), seq[:, 4:])
    np.testing.assert_array_equal(jitted(pp, pt.asarray(prompt), pt.random.key(7), 0.9).numpy(),
                                  generate(pp, pt.asarray(prompt), pt.random.key(7), 0.9).numpy())


# -- left-padded batches, interleaved rotary embeddings as complex numbers ----------------------------
def rope_interleaved_complex(x, pos):
    """Meta's reference form: pairs (x0, x1) as complex numbers times exp(i * angle)."""
    inv = 1.0 / 10000.0 ** (pt.arange(0, HD, 2, dtype=pt.float32) / HD)
    rot = pt.exp(1j * (pos[..., None].astype(pt.float32) * inv))            # [B, S, HD/2]
    pairs = x.reshape(x.shape[:-1] + (HD // 2, 2))
    y = pt.lax.complex(pairs[..., 0], pairs[..., 1]) * rot[:, None]
    return pt.stack([pt.lax.real(y), pt.lax.imag(y)], -1).reshape(x.shape)


def attention_layer(w, toks, pos, kc, vc, at, valid):
    b, s = toks.shape
    x = w["emb"][toks]
    q = (x @ w["wq"]).reshape(b, s, H, HD).transpose(0, 2, 1, 3)
    k = (x @ w["wk"]).reshape(b, s, 1, HD).transpose(0, 2, 1, 3)
    v = (x @ w["wv"]).reshape(b, s, 1, HD).transpose(0, 2, 1, 3)
    q, k = rope_interleaved_complex(q, pos), rope_interleaved_complex(k, pos)
    kc = pt.lax.dynamic_update_slice(kc, k, (0, 0, at, 0))
    vc = pt.lax.dynamic_update_slice(vc, v, (0, 0, at, 0))
    causal = pt.arange(T)[None, :] <= (at + pt.arange(s))[:, None]
    mask = causal[None, None] & valid[:, None, None, :]
    a = pt.nn.scaled_dot_product_attention(q, kc, vc, mask=mask, enable_gqa=True)
    return a.transpose(0, 2, 1, 3).reshape(b, s, D) @ w["wo"], kc, vc


def test_left_padded_batch_matches_each_prompt_alone():
    rng = np.random.default_rng(6)
    w = {k: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32)
         for k, s in dict(emb=(V, D), wq=(D, D), wk=(D, HD), wv=(D, HD), wo=(D, D)).items()}

    def alone(toks):
        s = len(toks)
        x = w["emb"][toks].astype(np.float64)[None]
        q = (x @ w["wq"]).reshape(1, s, H, HD).transpose(0, 2, 1, 3)
        k = (x @ w["wk"]).reshape(1, s, 1, HD).transpose(0, 2, 1, 3)
        v = (x @ w["wv"]).reshape(1, s, 1, HD).transpose(0, 2, 1, 3)
        pos = np.arange(s)[None, None]
        a = np_attention(np_rope_interleaved(q, pos), np_rope_interleaved(k, pos), v, np.tril(np.ones((s, s), bool)))
        return (a.transpose(0, 2, 1, 3).reshape(1, s, D) @ w["wo"])[0]

    prompts = [rng.integers(0, V, n) for n in (5, 3, 1)]
    width = 5
    toks = np.zeros((3, width), np.int64)
    pos = np.zeros((3, width), np.int64)
    valid = np.zeros((3, T), bool)
    for i, pr in enumerate(prompts):
        toks[i, width - len(pr):] = pr
        pos[i, width - len(pr):] = np.arange(len(pr))
        valid[i, width - len(pr):width] = True
    wp = {k: pt.asarray(a) for k, a in w.items()}
    kc, vc = pt.zeros((3, 1, T, HD), dtype=pt.float32), pt.zeros((3, 1, T, HD), dtype=pt.float32)
    out, kc, vc = attention_layer(wp, pt.asarray(toks), pt.asarray(pos), kc, vc, 0, pt.asarray(valid))
    for i, pr in enumerate(prompts):
        assert_close(out.numpy()[i, width - len(pr):], alone(pr).astype(np.float32), pt.float32, ops=32)
    step = pt.jit(attention_layer, donate_argnums=(3, 4))
    seqs = [list(pr) for pr in prompts]
    nxt = np.array([len(pr) for pr in prompts])
    for t in range(3):
        new = rng.integers(0, V, 3)
        valid[:, width + t] = True
        out, kc, vc = step(wp, pt.asarray(new[:, None]), pt.asarray(nxt[:, None]), kc, vc, pt.asarray(width + t),
                           pt.asarray(valid))
        for i in range(3):
            seqs[i].append(new[i])
            assert_close(out.numpy()[i, 0], alone(np.array(seqs[i]))[-1].astype(np.float32), pt.float32, ops=32)
        nxt += 1
    assert step.trace_count == 1


def test_lax_complex_parts():
    re = np.array([1.0, np.inf, np.nan, -0.0], np.float32)
    im = np.array([np.inf, 0.0, 2.0, -3.0], np.float32)
    z = pt.lax.complex(re, im)
    assert z.dtype is pt.complex64
    got = z.numpy()
    np.testing.assert_array_equal(got.real, re)           # the parts placed as given (inf stays put)
    np.testing.assert_array_equal(got.imag, im)
    assert pt.lax.complex(pt.ones(2, dtype=pt.float64), 2.0).dtype is pt.complex128
    jz = pt.jit(lambda a, b: pt.lax.conj(pt.lax.complex(a, b)))(re, im).numpy()
    np.testing.assert_array_equal(jz.imag, -im)
    np.testing.assert_array_equal(pt.lax.real(z).numpy(), re)
    np.testing.assert_array_equal(pt.lax.imag(z).numpy(), im)
    with pytest.raises(pt.DTypeError, match="float32 or float64"):
        pt.lax.complex(np.ones(2, np.int32), np.ones(2, np.int32))
    with pytest.raises(pt.ShapeError, match="do not broadcast"):
        pt.lax.complex(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(pt.DTypeError, match="complex array"):
        pt.lax.real(np.ones(2, np.float32))


# -- GPT-2 --------------------------------------------------------------------------------------------
def gpt2_params(seed=8):
    rng = np.random.default_rng(seed)
    n = lambda *s, sc=1.0: (rng.standard_normal(s) * sc).astype(np.float32)
    p = {"wte": n(V, D, sc=0.3), "wpe": n(T, D, sc=0.1), "lnf_g": 1 + n(D, sc=0.1), "lnf_b": n(D, sc=0.1), "h": []}
    for _ in range(LAYERS):
        p["h"].append(dict(ln1_g=1 + n(D, sc=0.1), ln1_b=n(D, sc=0.1), attn_w=n(D, 3 * D, sc=D ** -0.5),
                           attn_b=n(3 * D, sc=0.1), proj_w=n(D, D, sc=D ** -0.5), proj_b=n(D, sc=0.1),
                           ln2_g=1 + n(D, sc=0.1), ln2_b=n(D, sc=0.1), fc_w=n(D, 4 * D, sc=D ** -0.5),
                           fc_b=n(4 * D, sc=0.1), fc2_w=n(4 * D, D, sc=(4 * D) ** -0.5), fc2_b=n(D, sc=0.1)))
    return p


def np_gpt2(p, toks):
    b, s = toks.shape
    x = (p["wte"][toks] + p["wpe"][:s]).astype(np.float64)
    for lp in p["h"]:
        qkv = np_layer_norm(x, lp["ln1_g"], lp["ln1_b"]) @ lp["attn_w"] + lp["attn_b"]
        q, k, v = (t.reshape(b, s, H, HD).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        a = np_attention(q, k, v, np.tril(np.ones((s, s), bool)))
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, D) @ lp["proj_w"] + lp["proj_b"]
        h = np_layer_norm(x, lp["ln2_g"], lp["ln2_b"])
        x = x + np_gelu_tanh(h @ lp["fc_w"] + lp["fc_b"]) @ lp["fc2_w"] + lp["fc2_b"]
    return np_layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T.astype(np.float64)


def gpt2(p, toks, by_hand=False):
    b, s = toks.shape
    x = p["wte"][toks] + p["wpe"][:s]
    for lp in p["h"]:
        qkv = pt.nn.layer_norm(x, lp["ln1_g"], lp["ln1_b"]) @ lp["attn_w"] + lp["attn_b"]
        q, k, v = (t.reshape(b, s, H, HD).transpose(0, 2, 1, 3) for t in pt.split(qkv, 3, axis=-1))
        if by_hand:         # the scores in float32 whatever the weights' dtype
            sc = (q.astype(pt.float32) @ k.astype(pt.float32).swapaxes(-1, -2)) * (1 / math.sqrt(HD))
            sc = sc + pt.where(pt.tril(pt.ones((s, s), dtype=bool)), 0.0, -pt.inf).astype(pt.float32)
            a = (pt.nn.softmax(sc, axis=-1) @ v.astype(pt.float32)).astype(x.dtype)
        else:
            a = pt.nn.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, D) @ lp["proj_w"] + lp["proj_b"]
        h = pt.nn.layer_norm(x, lp["ln2_g"], lp["ln2_b"])
        x = x + pt.nn.gelu(h @ lp["fc_w"] + lp["fc_b"], approximate="tanh") @ lp["fc2_w"] + lp["fc2_b"]
    return pt.nn.layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T


@pytest.mark.parametrize("dtype,by_hand", [(pt.float32, False), (pt.float32, True), (pt.bfloat16, True),
                                           (pt.float16, False)])
def test_gpt2_logits_match_numpy(dtype, by_hand):
    p = gpt2_params()
    toks = np.random.default_rng(9).integers(0, V, (3, 7))
    # the reference runs on the weights as rounded to `dtype`
    rounded = pt.tree_util.tree_map(lambda a: pt.asarray(a).astype(dtype).astype(pt.float32).numpy(), p)
    want = np_gpt2(rounded, toks)
    pp = to_poot(p, dtype)
    for got in (gpt2(pp, pt.asarray(toks), by_hand), pt.jit(gpt2, static_argnums=2)(pp, pt.asarray(toks), by_hand)):
        assert got.dtype is dtype
        ops = 64 if dtype is pt.float32 else 24      # bf16/f16 activations round at every layer
        assert_close(got.astype(pt.float32).numpy(), want.astype(np.float32), dtype, ops=ops)


# -- attention variants -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [pt.float32, pt.bfloat16, pt.float16])
def test_attention_windows_and_softcap_match_numpy(dtype):
    rng = np.random.default_rng(10)
    q = rng.standard_normal((2, H, 9, 16)).astype(np.float32)
    k = rng.standard_normal((2, HK, 9, 16)).astype(np.float32)
    v = rng.standard_normal((2, HK, 9, 16)).astype(np.float32)
    args = [pt.asarray(a).astype(dtype) for a in (q, k, v)]
    r64 = [a.astype(pt.float64).numpy() for a in args]
    i, j = np.arange(9)[:, None], np.arange(9)[None]
    cases = [(dict(is_causal=True), dict(keep=j <= i)),
             (dict(is_causal=True, window=(3, 0)), dict(keep=(j <= i) & (j >= i - 3))),
             (dict(window=2), dict(keep=np.abs(j - i) <= 2)),
             (dict(is_causal=True, softcap=2.0, scale=0.5), dict(keep=j <= i, softcap=2.0, scale=0.5)),
             (dict(mask=pt.asarray((i - j) % 3 != 1)), dict(keep=(i - j) % 3 != 1))]
    for kw, ref in cases:
        want = np_attention(*r64, **ref)
        got = pt.nn.scaled_dot_product_attention(*args, enable_gqa=True, **kw)
        jitted = pt.jit(lambda a, b, c: pt.nn.scaled_dot_product_attention(a, b, c, enable_gqa=True, **kw))(*args)
        for g in (got, jitted):
            assert g.dtype is dtype
            assert_close(g.astype(pt.float32).numpy(), want.astype(np.float32), dtype, ops=4, err_msg=str(kw))


# -- sampling -----------------------------------------------------------------------------------------
def user_top_k_top_p(logits, noise, temperature, k, p, xp):
    """Temperature, top-k, then nucleus filtering, then the Gumbel-max draw with the given noise."""
    logits = logits / temperature
    kth = xp.sort(logits, axis=-1)[:, -k][:, None]
    logits = xp.where(logits < kth, -np.inf, logits)
    desc = xp.sort(logits, axis=-1)[:, ::-1]
    e = xp.exp(desc - desc[:, :1])
    probs = e / e.sum(axis=-1, keepdims=True)
    kept = ((xp.cumsum(probs, axis=-1) - probs) < p).sum(axis=-1, keepdims=True)
    cutoff = xp.take_along_axis(desc, kept - 1, axis=-1)
    logits = xp.where(logits < cutoff, -np.inf, logits)
    return xp.argmax(logits + noise, axis=-1)


@pytest.mark.parametrize("settings", [(0.7, 5, 0.9), (1.0, 48, 0.5), (1.3, 10, 1.0)])
def test_user_written_top_k_top_p_sampler(settings):
    rng = np.random.default_rng(11)
    logits = (rng.standard_normal((4, V)) * 3).astype(np.float32)
    key = pt.random.key(3)

    def draw(logits, key):
        return user_top_k_top_p(logits, pt.random.gumbel(key, logits.shape, pt.float32), *settings, pt)

    noise = pt.random.gumbel(key, logits.shape, pt.float32).numpy()
    want = user_top_k_top_p(logits, noise, *settings, np)
    np.testing.assert_array_equal(draw(pt.asarray(logits), key).numpy(), want)
    np.testing.assert_array_equal(pt.jit(draw)(pt.asarray(logits), key).numpy(), want)


# -- int8 weights -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["int8", "q8_0", "q4_0"])
def test_quantized_swiglu_mlp_matches_dequantized_numpy(fmt):
    rng = np.random.default_rng(12)
    w1, w3 = (rng.standard_normal((96, 64)).astype(np.float32) / 8 for _ in range(2))
    w2 = rng.standard_normal((64, 96)).astype(np.float32) / 8
    q1, q3, q2 = (pt.quant.quantize(w, fmt) for w in (w1, w3, w2))
    if fmt == "int8":       # per output row: scale max|w| / 127, weights rounded to the nearest step
        s = np.abs(w1).max(1, keepdims=True) / 127
        np.testing.assert_allclose(q1.dequantize().numpy(), np.round(w1 / s) * s, rtol=1e-6, atol=1e-7)
    d1, d3, d2 = (q.dequantize().numpy().astype(np.float64) for q in (q1, q3, q2))

    def mlp(x, q1, q3, q2):
        return pt.quant.linear(pt.nn.silu(pt.quant.linear(x, q1)) * pt.quant.linear(x, q3), q2)

    for rows in (1, 24):                     # the quantized GEMV, and a prefill's dequantized matmul
        x = rng.standard_normal((2, rows, 64)).astype(np.float32)
        want = (np_silu(x @ d1.T) * (x @ d3.T)) @ d2.T
        for got in (mlp(pt.asarray(x), q1, q3, q2), pt.jit(mlp)(pt.asarray(x), q1, q3, q2)):
            assert got.dtype is pt.float32
            assert_close(got.numpy(), want.astype(np.float32), pt.float32, ops=96)


# -- KV-cache index semantics and users' mistakes -----------------------------------------------------
def np_at_set(x, pos, v, axis):
    """JAX's .at[..., pos].set: a negative position counts from the end once; one still outside is dropped."""
    out = x.copy()
    n = x.shape[axis]
    p = pos + n if pos < 0 else pos
    if 0 <= p < n:
        idx = [slice(None)] * x.ndim
        idx[axis] = p
        out[tuple(idx)] = v
    return out


@pytest.mark.parametrize("pos", [0, 3, 7, -1, -8, -9, 8, 100])
def test_at_set_with_a_traced_position(pos):
    x = np.arange(2 * 8 * 3, dtype=np.float32).reshape(2, 8, 3)
    v = np.full((2, 3), -1, np.float32)
    want = np_at_set(x, pos, v, 1)
    np.testing.assert_array_equal(pt.jit(lambda x, p: x.at[:, p].set(v))(x, pos).numpy(), want)
    np.testing.assert_array_equal(pt.asarray(x).at[:, pt.asarray(pos)].set(v).numpy(), want)
    np.testing.assert_array_equal(pt.jit(lambda x, p: x.at[:, p].add(1.0))(x, pos).numpy(),
                                  np_at_set(x, pos, x[:, pos % 8] + 1 if -8 <= pos < 8 else 0, 1))
    got = pt.vmap(lambda r, p: r.at[p].set(-1.0))(pt.asarray(x[:, :, 0]), pt.asarray(np.array([pos, 2])))
    np.testing.assert_array_equal(got.numpy(), np.stack([np_at_set(x[0, :, 0], pos, -1, 0),
                                                         np_at_set(x[1, :, 0], 2, -1, 0)]))


def test_decoder_mistakes_raise_poot_errors_naming_the_line():
    q = pt.ones((1, 4, 3, 8))
    with pytest.raises(pt.ShapeError, match="not a multiple of 3 key/value heads") as e:
        pt.nn.scaled_dot_product_attention(q, pt.ones((1, 3, 3, 8)), pt.ones((1, 3, 3, 8)), enable_gqa=True)
    assert "test_decoder_programs.py" in str(e.value)
    with pytest.raises(pt.ShapeError, match="enable_gqa=True"):
        pt.nn.scaled_dot_product_attention(q, pt.ones((1, 2, 3, 8)), pt.ones((1, 2, 3, 8)))
    cache = pt.zeros((1, 2, 8, 4), dtype=pt.float32)
    with pytest.raises(pt.DTypeError, match="start indices must be integers") as e:     # not truncated to 2
        pt.lax.dynamic_update_slice(cache, pt.ones((1, 2, 1, 4)), (0, 0, pt.asarray(2.5), 0))
    assert "test_decoder_programs.py" in str(e.value)
    with pytest.raises(pt.DTypeError, match="start indices must be integers"):
        pt.jit(lambda c, p: pt.lax.dynamic_update_slice(c, pt.ones((1, 2, 1, 4)), (0, 0, p, 0)))(cache, 2.0)
    with pytest.raises(pt.DTypeError, match="random.categorical takes a key first") as e:  # a seed for a key
        pt.random.categorical(0, pt.ones((2, V)))
    assert "test_decoder_programs.py" in str(e.value)
    with pytest.raises(pt.DTypeError, match="random.truncated_normal takes a key first"):
        pt.random.truncated_normal(None, -1.0, 1.0, (3,))

    @pt.jit
    def write(c, k, pos):
        c[:, :, pos] = k
        return c

    with pytest.raises(pt.PootError, match="out of bounds") as e:      # a position past the cache
        write(cache, pt.ones((1, 2, 4), dtype=pt.float32), pt.asarray(8)).numpy()
    assert "test_decoder_programs.py" in str(e.value)


def test_reading_the_old_cache_before_writing_the_row_stays_in_place():
    """A step that attends over the cached keys and the new one separately, then writes the new row:
    the reads of the old cache run before the write, which then updates the donated cache in place."""
    rng = np.random.default_rng(13)
    n, d = 64, 16

    @pt.jit(donate_argnums=(0, 1))
    def step(kc, vc, q, k, v, pos):
        old = pt.where(pt.arange(n) < pos, kc @ q / math.sqrt(d), -pt.inf)
        new = (k * q).sum() / math.sqrt(d)
        m = pt.maximum(old.max(), new)
        w_old, w_new = pt.exp(old - m), pt.exp(new - m)
        out = (w_old @ vc + w_new * v) / (w_old.sum() + w_new)
        return kc.at[pos].set(k), pt.lax.dynamic_update_slice(vc, v[None], (pos, 0)), out

    kc, vc = pt.zeros((n, d), dtype=pt.float32), pt.zeros((n, d), dtype=pt.float32)
    keys, values = np.zeros((n, d)), np.zeros((n, d))
    where = set()
    for pos in range(6):
        q, k, v = (rng.standard_normal(d).astype(np.float32) for _ in range(3))
        kc, vc, out = step(kc, vc, q, k, v, pos)
        keys[pos], values[pos] = k, v
        want = np_attention(q[None, None].astype(np.float64), keys[None, :pos + 1], values[None, :pos + 1])[0, 0]
        assert_close(out.numpy(), want.astype(np.float32), pt.float32, ops=32)
        if pos >= 2:
            where.add((_address(kc), _address(vc)))
    assert len(where) == 1, f"the caches were copied: {where}"
    np.testing.assert_array_equal(kc.numpy(), keys.astype(np.float32))


def test_a_negative_token_id_is_out_of_the_embedding_table():
    """A padding id of -1 fed to the embedding is an error (PyTorch's rule, and pt.nn.embedding's
    documented one), not the last row of the table."""
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(pt.nn.embedding(pt.asarray(np.array([3, 0])), table).numpy(), table[[3, 0]])
    for ids in (np.array([0, -1]), np.array([[2, 4]], np.int32)):
        with pytest.raises(pt.PootIndexError, match="out of bounds"):
            pt.nn.embedding(pt.asarray(ids), table).numpy()
        with pytest.raises(pt.PootIndexError, match="out of bounds"):
            pt.jit(pt.nn.embedding)(ids, table).numpy()
