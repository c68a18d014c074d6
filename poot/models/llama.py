"""A Llama-family decoder (Llama 2/3, Qwen2, Mistral) written with poot's public array API.

Architecture: token embedding; per layer `x += attn(rms_norm(x))`, `x += mlp(rms_norm(x))`; a final
RMSNorm and the LM head (the embedding matrix itself when tied). Attention is grouped-query (each
key/value head serves num_attention_heads // num_key_value_heads query heads) with rotary position
embeddings in the rotate-half layout of Hugging Face checkpoints, optional q/k/v biases (Qwen2), o and MLP
biases (Llama's attention_bias, mlp_bias) and an optional sliding window (Mistral: every layer; Qwen2: the
layers the config names). The MLP is SwiGLU: down(silu(gate(x)) * up(x)).

Parameters are a pytree (dict) of poot arrays with the checkpoint's (out, in) matrices; q/k/v and
gate/up are concatenated into one matrix each at load time (one matrix-vector product instead of
three or two). Weights may be bfloat16 or float32; activations, the residual stream and the KV cache
are float32 (bfloat16 matmul inputs round the activation to bfloat16 first, as bf16 inference does).

The KV cache is a preallocated pytree {"k": [layer arrays (kv_heads, capacity, head_dim)], "v": ...}.
The decode step is one `@pt.jit` function that donates the cache and writes the new key/value row at
the traced position `pos` by assignment (`k[:, pos] = ...`, a scatter of one row), then attends over
the whole capacity with positions > pos masked out.

Token ids and positions are never counted from the end, as NumPy's negative indices are: a negative one
given as a Python int or NumPy array raises PootIndexError at the call; one held in a poot array is
made out of range, so the gather's bounds check raises KernelIndexError at the next host read.
"""
from __future__ import annotations

import functools

import numpy as np

import poot as pt

from poot.models.config import LlamaConfig, rope_inv_freq
from poot.models.sampling import sample

__all__ = ["rope_tables", "new_cache", "prefill_forward", "decode_forward", "prefill", "decode_step",
           "prefill_all_logits"]


def rope_tables(cfg: LlamaConfig, length: int):
    """(cos, sin), each float32 (length, head_dim // 2): angle position * inv_freq, in float64 first."""
    ang = np.arange(length, dtype=np.float64)[:, None] * rope_inv_freq(cfg)[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def new_cache(cfg: LlamaConfig, capacity: int, device=None, dtype=pt.float32):
    """A zeroed KV cache for `capacity` positions, of `dtype` (float32, or bfloat16/float16 to halve the
    bytes each decode step reads: keys and values are rounded once, when written)."""
    if not any(dtype == d for d in (pt.float32, pt.bfloat16, pt.float16)):
        raise pt.DTypeError(f"new_cache: the KV cache holds float32, bfloat16 or float16, not {dtype}")
    shape = (cfg.num_key_value_heads, capacity, cfg.head_dim)
    z = lambda: pt.zeros(shape, dtype=dtype, device=device)  # noqa: E731
    return {"k": [z() for _ in range(cfg.num_hidden_layers)],
            "v": [z() for _ in range(cfg.num_hidden_layers)]}


# -- building blocks ------------------------------------------------------------------------------

def _linear(x, w, b=None):
    """x @ w.T (+ b) in float32, for w of shape (out, in); a 1-D x is a matrix-vector product w @ x.
    A quantized w (pt.quant.QuantizedMatrix) goes to pt.quant.linear, whose kernel reads it as stored."""
    if isinstance(w, pt.quant.QuantizedMatrix):
        return pt.quant.linear(x, w, b)
    if w.dtype != pt.float32:
        x = x.astype(w.dtype)
    # (w @ x.T).T rather than x @ w.T: the transposes are of the activations, never of the weights
    y = (w @ x) if x.ndim == 1 else pt.matrix_transpose(pt.matmul(w, pt.matrix_transpose(x)))
    y = y.astype(pt.float32)
    if b is not None:
        y = y + b.astype(pt.float32)
    return y


def _rope(x, cos, sin):
    """Rotate-half RoPE on the last axis of x (..., head_dim) with cos/sin broadcastable to
    (..., head_dim // 2)."""
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return pt.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def _norm(x, w, cfg):
    return pt.nn.rms_norm(x, w.astype(pt.float32), eps=cfg.rms_norm_eps)


def _mlp(x, layer, cfg):
    gu = _linear(x, layer["w_gate_up"], layer.get("b_gate_up"))
    i = cfg.intermediate_size
    return _linear(pt.nn.silu(gu[..., :i]) * gu[..., i:], layer["w_down"], layer.get("b_down"))


def _qkv(x, layer, cfg):
    qkv = _linear(x, layer["w_qkv"], layer.get("b_qkv"))
    q, kv = cfg.q_size, cfg.kv_size
    return qkv[..., :q], qkv[..., q:q + kv], qkv[..., q + kv:]


def _index(index, n: int, what: str):
    """`index` (token ids or a position) checked as an index into an axis of n: an integer (a float one
    is refused, as NumPy refuses float indices, rather than truncated) and, for a Python int or NumPy
    array, in [0, n) now; one held in a poot array has its negative entries replaced by n, out of range,
    which the gather's bounds check reports."""
    if isinstance(index, pt.Array):
        if index.dtype.kind not in "iu":
            raise pt.DTypeError(f"{what} must be integers, got an array of {index.dtype}")
        return pt.where(index < 0, n, index)
    _check_host_index(index, n, what)
    return index


def _check_host_index(index, n: int, what: str) -> None:
    """A Python int or NumPy value used as an index into an axis of n: integers in [0, n), else
    DTypeError or PootIndexError naming it (negative values are not counted from the end)."""
    a = np.asarray(index)
    if a.dtype.kind not in "iu":
        raise pt.DTypeError(f"{what} must be integers, got {index!r} ({a.dtype})")
    if a.size and (a.min() < 0 or a.max() >= n):
        bad = a.min() if a.min() < 0 else a.max()
        raise pt.PootIndexError(f"{what} must be in [0, {n}), got {bad} (out of bounds; negative values are "
                                f"not counted from the end)")


def _embed(params, tokens):
    tokens = _index(tokens, params["embed"].shape[0], "token ids")
    return pt.take(params["embed"], tokens, axis=0).astype(pt.float32)


def _positions(params, cache) -> int:
    """How many positions a step can use: the KV cache's capacity, within the RoPE tables' length."""
    return min(cache["k"][0].shape[1], params["rope_cos"].shape[0])


def _check_prompt_length(params, cache, t: int) -> None:
    """A prompt longer than the cache would fail as a broadcast of mismatched shapes deep in the
    forward; name the lengths instead."""
    cap = _positions(params, cache)
    if t > cap:
        raise pt.ShapeError(f"the prompt ({t} tokens) is longer than the KV cache capacity {cap} (positions the "
                            f"cache and RoPE tables hold); make the cache larger or the prompt shorter")


def _window_masks(cfg, causal, dist):
    """The visibility mask of each layer: `causal` where the layer has no sliding window, else also
    `dist` (query position - key position) below the window; layers of one window share the mask."""
    masks = {}
    for li in range(cfg.num_hidden_layers):
        w = cfg.window(li)
        if w not in masks:
            masks[w] = causal if not w else causal & (dist < w)
    return [masks[cfg.window(li)] for li in range(cfg.num_hidden_layers)]


def _logits(params, h, cfg):
    h = _norm(h, params["norm"], cfg)
    head = params["embed"] if cfg.tie_word_embeddings else params["lm_head"]
    return _linear(h, head)


# -- decode: one token at traced position pos ----------------------------------------------------

def decode_forward(params, cache, token, pos, cfg: LlamaConfig):
    """Logits (vocab,) float32 for `token` (int array of shape (1,)) at position `pos` (a traced or
    Python int), and the cache with this position's keys and values written."""
    nh, nkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    cap = cache["k"][0].shape[1]
    pos = _index(pos, _positions(params, cache), "the position")
    pos = pt.asarray(pos).astype(pt.int64) if not isinstance(pos, int) else pt.asarray(pos)
    cos = pt.take(params["rope_cos"], pos, axis=0)          # (d/2,)
    sin = pt.take(params["rope_sin"], pos, axis=0)
    keys = pt.arange(cap, device=cos.device)
    masks = _window_masks(cfg, keys <= pos, pos - keys)
    scale = 1.0 / float(np.sqrt(d))
    x = _embed(params, token).reshape((cfg.hidden_size,))
    ks, vs = list(cache["k"]), list(cache["v"])
    for li, layer in enumerate(params["layers"]):
        q, k, v = _qkv(_norm(x, layer["attn_norm"], cfg), layer, cfg)
        q = _rope(q.reshape((nh, d)), cos, sin)
        k = _rope(k.reshape((nkv, d)), cos, sin)
        kc, vc = ks[li], vs[li]
        kc[:, pos] = k
        vc[:, pos] = v.reshape((nkv, d))
        ks[li], vs[li] = kc, vc
        # one query per head over the whole cache, the positions not written yet masked off: the
        # split-key decode attention kernel
        qh = q.reshape((nh, 1, d)).astype(kc.dtype)             # products in the cache's dtype
        o = pt.nn.scaled_dot_product_attention(qh, kc, vc, mask=masks[li], scale=scale, enable_gqa=True)
        x = x + _linear(o.astype(pt.float32).reshape((nh * d,)), layer["w_o"], layer.get("b_o"))
        x = x + _mlp(_norm(x, layer["mlp_norm"], cfg), layer, cfg)
    return _logits(params, x, cfg), {"k": ks, "v": vs}


# -- prefill: a prompt of T tokens at positions 0..T-1 ---------------------------------------------

def prefill_forward(params, cache, tokens, cfg: LlamaConfig, last=None):
    """Run the prompt `tokens` (int array (T,)) from position 0, filling cache positions 0..T-1.
    Returns (logits, cache): logits (T, vocab) for every position when `last` is None, else (vocab,)
    for position `last` (a traced or Python int: the last real token of a padded prompt)."""
    nh, nkv, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    t = tokens.shape[0]
    _check_prompt_length(params, cache, t)
    cos = params["rope_cos"][:t][:, None, :]                # (T, 1, d/2)
    sin = params["rope_sin"][:t][:, None, :]
    qi = pt.arange(t, device=tokens.device)
    masks = _window_masks(cfg, qi[None, :] <= qi[:, None], qi[:, None] - qi[None, :])   # (T query, T key)
    scale = 1.0 / float(np.sqrt(d))
    x = _embed(params, tokens)                              # (T, hidden)
    ks, vs = list(cache["k"]), list(cache["v"])
    for li, layer in enumerate(params["layers"]):
        q, k, v = _qkv(_norm(x, layer["attn_norm"], cfg), layer, cfg)
        q = _rope(q.reshape((t, nh, d)), cos, sin)
        k = _rope(k.reshape((t, nkv, d)), cos, sin)
        k = pt.permute_dims(k, (1, 0, 2))                   # (nkv, T, d)
        v = pt.permute_dims(v.reshape((t, nkv, d)), (1, 0, 2))
        kc, vc = ks[li], vs[li]
        kc[:, :t] = k
        vc[:, :t] = v
        ks[li], vs[li] = kc, vc
        k, v = k.astype(kc.dtype).astype(pt.float32), v.astype(vc.dtype).astype(pt.float32)   # as cached
        qh = pt.permute_dims(q, (1, 0, 2))                   # (nh, T, d)
        o = pt.nn.scaled_dot_product_attention(qh, k, v, mask=masks[li], scale=scale, enable_gqa=True)
        o = pt.permute_dims(o, (1, 0, 2)).reshape((t, nh * d))
        x = x + _linear(o, layer["w_o"], layer.get("b_o"))
        x = x + _mlp(_norm(x, layer["mlp_norm"], cfg), layer, cfg)
    if last is not None:
        x = pt.take(x, pt.asarray(_index(last, t, "the last position")), axis=0)
    return _logits(params, x, cfg), {"k": ks, "v": vs}


# -- jitted entry points ---------------------------------------------------------------------------

def _check_call(params, cache, tokens, pos, what: str) -> None:
    """Checks of the host values (Python ints, NumPy arrays) a jitted step is called with, made at the
    call: inside the trace they are arrays, whose bad entries would surface only at the next read, as an
    index error about a gather the caller never wrote. `what`: "prompt" (pos is the last real token) or
    "decode" (pos is the position written)."""
    if not isinstance(tokens, pt.Array):
        _check_host_index(tokens, params["embed"].shape[0], "token ids")
        if what == "prompt" and np.ndim(tokens):
            _check_prompt_length(params, cache, np.shape(tokens)[0])
    if pos is None or isinstance(pos, pt.Array):
        return
    if what == "decode":
        _check_host_index(pos, _positions(params, cache), "the position")
    elif np.ndim(tokens):
        _check_host_index(pos, np.shape(tokens)[0], "the last position")


@functools.partial(pt.jit, static_argnames=("cfg", "sampling"), donate_argnums=(1,))
def _prefill(params, cache, tokens, last, key, cfg, sampling):
    logits, cache = prefill_forward(params, cache, tokens, cfg, last=last)
    return sample(logits, key, sampling).astype(pt.int32).reshape((1,)), logits, cache


def prefill(params, cache, tokens, last, key, cfg, sampling):
    """Prompt (padded to a bucket length) -> (next token (1,) int32, logits at `last`, cache). Jitted;
    the cache is donated."""
    _check_call(params, cache, tokens, last, "prompt")
    return _prefill(params, cache, tokens, last, key, cfg=cfg, sampling=sampling)


@functools.partial(pt.jit, static_argnames=("cfg", "sampling"), donate_argnums=(1,))
def _decode_step(params, cache, token, pos, key, cfg, sampling):
    logits, cache = decode_forward(params, cache, token, pos, cfg)
    return sample(logits, key, sampling).astype(pt.int32).reshape((1,)), logits, cache


def decode_step(params, cache, token, pos, key, cfg, sampling):
    """One decode step: (next token (1,) int32, logits (vocab,), cache with position pos written). Jitted;
    the cache is donated."""
    _check_call(params, cache, token, pos, "decode")
    return _decode_step(params, cache, token, pos, key, cfg=cfg, sampling=sampling)


@functools.partial(pt.jit, static_argnames=("cfg",), donate_argnums=(1,))
def _prefill_all_logits(params, cache, tokens, cfg):
    return prefill_forward(params, cache, tokens, cfg)


def prefill_all_logits(params, cache, tokens, cfg):
    """Prompt -> (logits (T, vocab) of every position, cache). Jitted; the cache is donated."""
    _check_call(params, cache, tokens, None, "prompt")
    return _prefill_all_logits(params, cache, tokens, cfg=cfg)
