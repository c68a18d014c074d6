"""Parameters for the decoder: loaded from a Hugging Face checkpoint directory (`config.json` and
`*.safetensors`, read with the `safetensors` package's NumPy API) or made at random from a config.

The parameter pytree (see llama.py): {"embed", "norm", ["lm_head"], "rope_cos", "rope_sin",
"layers": [{"attn_norm", "w_qkv", ["b_qkv"], "w_o", ["b_o"], "mlp_norm", "w_gate_up", ["b_gate_up"], "w_down",
["b_down"]}]} (the biases where the config has them; always float32).

Loading refuses a checkpoint with tensors the model would not use (an o_proj bias of a config without
one, say): ignoring them would run a different model than the one saved, silently.
"""
from __future__ import annotations

import dataclasses
import glob
import json
import os

import numpy as np

import poot as pt

from poot.errors import PootError
from poot.models.config import LlamaConfig, ModelConfigError, rope_inv_freq
from poot.models.llama import rope_tables

_INSTALL = "pip install 'poot[llm]'"


class CheckpointError(PootError):
    """A checkpoint directory poot cannot load (missing files, tensors or the `llm` extra)."""


def require(module: str):
    """Import `module` (safetensors, tokenizers), or raise CheckpointError naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise CheckpointError(f"loading Hugging Face checkpoints needs the '{module.split('.')[0]}' "
                              f"package ({e}); install it with: {_INSTALL}") from None


# tensors a checkpoint may hold that the model does not need: RoPE tables older transformers saved
_HARMLESS = ("rotary_emb.inv_freq",)


def _np_dtype(cfg: LlamaConfig):
    import ml_dtypes

    return {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(cfg.dtype, np.float32)


def _dev_dtype(cfg: LlamaConfig):
    return {"bfloat16": pt.bfloat16, "float16": pt.float16}.get(cfg.dtype, pt.float32)


def _rope_params(cfg, capacity, device):
    cos, sin = rope_tables(cfg, capacity)
    return {"rope_cos": pt.asarray(cos, device=device), "rope_sin": pt.asarray(sin, device=device)}


def params_from_numpy(cfg: LlamaConfig, tensors: dict, capacity: int, device=None) -> dict:
    """The parameter pytree on `device` from Hugging Face tensor names -> NumPy arrays (any float
    dtype; converted to the config's weight dtype)."""
    wd = _np_dtype(cfg)
    used = set()

    def get(name, required=True):
        for n in (name, name[6:] if name.startswith("model.") else None):   # saved without "model."
            if n is not None and n in tensors:
                used.add(n)
                return tensors[n]
        if required:
            raise CheckpointError(f"the checkpoint has no tensor {name!r}")
        return None

    def put(a):
        return pt.asarray(np.ascontiguousarray(np.asarray(a).astype(wd)), device=device)

    def bias(*names):
        return pt.asarray(np.concatenate([get(n) for n in names]).astype(np.float32), device=device)

    layers = []
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        qkv = [get(p + f"self_attn.{n}_proj.weight") for n in "qkv"]
        layer = {"attn_norm": put(get(p + "input_layernorm.weight")),
                 "w_qkv": put(np.concatenate(qkv, axis=0)),
                 "w_o": put(get(p + "self_attn.o_proj.weight")),
                 "mlp_norm": put(get(p + "post_attention_layernorm.weight")),
                 "w_gate_up": put(np.concatenate([get(p + "mlp.gate_proj.weight"),
                                                  get(p + "mlp.up_proj.weight")], axis=0)),
                 "w_down": put(get(p + "mlp.down_proj.weight"))}
        if cfg.attention_bias:
            layer["b_qkv"] = bias(*[p + f"self_attn.{n}_proj.bias" for n in "qkv"])
        if cfg.o_bias:
            layer["b_o"] = bias(p + "self_attn.o_proj.bias")
        if cfg.mlp_bias:
            layer["b_gate_up"] = bias(p + "mlp.gate_proj.bias", p + "mlp.up_proj.bias")
            layer["b_down"] = bias(p + "mlp.down_proj.bias")
        layers.append(layer)
    params = {"embed": put(get("model.embed_tokens.weight")), "norm": put(get("model.norm.weight")),
              "layers": layers, **_rope_params(cfg, capacity, device)}
    head = get("lm_head.weight", required=False)     # tied checkpoints may still hold a copy
    if not cfg.tie_word_embeddings:
        params["lm_head"] = put(head if head is not None else get("model.embed_tokens.weight"))
    unused = sorted(n for n in tensors if n not in used and not n.endswith(_HARMLESS))
    if unused:
        shown = ", ".join(unused[:4]) + (f" and {len(unused) - 4} more" if len(unused) > 4 else "")
        raise CheckpointError(f"the checkpoint has {len(unused)} tensors this {cfg.architecture} config does not "
                              f"use: {shown} (a config flag poot does not read, e.g. a bias or another layer "
                              f"count, or weights of another architecture)")
    return params


def load_checkpoint(path: str, capacity: int | None = None, device=None):
    """(config, params) from a Hugging Face checkpoint directory. `capacity`: the longest sequence
    (prompt + generated tokens) the RoPE tables cover; default: min(max_position_embeddings, 4096)."""
    if not os.path.isdir(path):
        raise CheckpointError(f"{path} is not a directory (expected a Hugging Face checkpoint with "
                              f"config.json and *.safetensors)")
    cfg = LlamaConfig.from_json(path)
    files = sorted(glob.glob(os.path.join(path, "*.safetensors")))
    if not files:
        raise CheckpointError(f"no *.safetensors files in {path}")
    st = require("safetensors.numpy")
    tensors = {}
    for f in files:
        try:
            tensors.update(st.load_file(f))
        except Exception as e:   # noqa: BLE001 (safetensors raises its own error types)
            raise CheckpointError(f"{f}: cannot read it with safetensors ({type(e).__name__}: {e}); "
                                  f"bfloat16 checkpoints need safetensors >= 0.4.3") from None
    capacity = capacity or min(cfg.max_position_embeddings, 4096)
    return cfg, params_from_numpy(cfg, tensors, capacity, device)


def random_params(cfg: LlamaConfig, capacity: int, seed: int = 0, device=None, scale: float = 0.02,
                  block: int = 1 << 20) -> dict:
    """Random parameters with the config's shapes and weight dtype, made on `device` with pt.random
    (uniform in [-scale*sqrt(3), scale*sqrt(3)], norm weights 1): for benchmarks and tests. A matrix
    larger than `block` elements repeats a random block of rows (Threefry over every element of a
    billion-parameter model takes minutes on a CPU; benchmarks only need the shapes and bytes)."""
    d = _dev_dtype(cfg)
    base = pt.random.key(seed, device=device)
    counter = [0]
    a = scale * 3 ** 0.5

    def rnd(rows, cols):
        counter[0] += 1
        k = pt.random.fold_in(base, counter[0])
        r = min(rows, max(1, block // cols))
        w = pt.random.uniform(k, (r, cols), dtype=pt.float32, minval=-a, maxval=a).astype(d)
        if r < rows:
            w = pt.tile(w, (-(-rows // r), 1))[:rows]
        pt.realize(w)
        return w

    def ones(n):
        return pt.ones((n,), dtype=d, device=device)

    h, i = cfg.hidden_size, cfg.intermediate_size
    qkv = cfg.q_size + 2 * cfg.kv_size
    layers = []
    for _ in range(cfg.num_hidden_layers):
        layer = {"attn_norm": ones(h), "w_qkv": rnd(qkv, h), "w_o": rnd(h, cfg.q_size),
                 "mlp_norm": ones(h), "w_gate_up": rnd(2 * i, h), "w_down": rnd(h, i)}
        for j, (name, n, on) in enumerate((("b_qkv", qkv, cfg.attention_bias), ("b_o", h, cfg.o_bias),
                                           ("b_gate_up", 2 * i, cfg.mlp_bias), ("b_down", h, cfg.mlp_bias))):
            if on:
                k = pt.random.fold_in(base, (j + 1) * 10**6 + len(layers))
                layer[name] = pt.random.uniform(k, (n,), dtype=pt.float32, minval=-a, maxval=a)
        layers.append(layer)
    params = {"embed": rnd(cfg.vocab_size, h), "norm": ones(h), "layers": layers,
              **_rope_params(cfg, capacity, device)}
    if not cfg.tie_word_embeddings:
        params["lm_head"] = rnd(cfg.vocab_size, h)
    pt.realize(*[x for x in _leaves(params)])
    return params


QUANTIZED = ("w_qkv", "w_o", "w_gate_up", "w_down")   # the layer matrices `quantize_params` converts


def quantize_params(params: dict, fmt: str) -> dict:
    """`params` with every layer's matrices stored in `fmt` ("int8", "q8_0" or "q4_0", pt.quant's formats);
    the embedding, the LM head and the norms stay as they are. Quantizing runs on the host, once."""
    layers = [{k: (pt.quant.quantize(v, fmt) if k in QUANTIZED and not isinstance(v, pt.quant.QuantizedMatrix)
                   else v) for k, v in layer.items()} for layer in params["layers"]]
    out = {**params, "layers": layers}
    pt.realize(*[x for x in _leaves(out)])
    return out


def bytes_per_token(params: dict, cfg) -> int:
    """Bytes of weights one decode step reads, as stored: every layer matrix once (its integers and
    scales where quantized), the norms, one embedding row, and the LM head (the embedding when tied)."""
    total = 0
    for layer in params["layers"]:
        total += sum(v.nbytes for v in layer.values())
    head = params["embed"] if cfg.tie_word_embeddings else params["lm_head"]
    row = params["embed"].nbytes // params["embed"].shape[0]
    return total + params["norm"].nbytes + row + head.nbytes


def _leaves(tree):
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    elif isinstance(tree, pt.quant.QuantizedMatrix):
        yield tree.words
        yield tree.scales
    else:
        yield tree


def to_hf_tensors(cfg: LlamaConfig, params: dict) -> dict:
    """Hugging Face tensor names -> NumPy arrays from a parameter pytree (inverse of
    params_from_numpy): for writing a checkpoint with safetensors."""
    out = {"model.embed_tokens.weight": params["embed"].numpy(), "model.norm.weight": params["norm"].numpy()}
    if not cfg.tie_word_embeddings:
        out["lm_head.weight"] = params["lm_head"].numpy()
    q, kv, i = cfg.q_size, cfg.kv_size, cfg.intermediate_size
    for n, layer in enumerate(params["layers"]):
        p = f"model.layers.{n}."
        w = layer["w_qkv"].numpy()
        out[p + "self_attn.q_proj.weight"] = w[:q]
        out[p + "self_attn.k_proj.weight"] = w[q:q + kv]
        out[p + "self_attn.v_proj.weight"] = w[q + kv:]
        if "b_qkv" in layer:
            b = layer["b_qkv"].numpy()
            out[p + "self_attn.q_proj.bias"] = b[:q]
            out[p + "self_attn.k_proj.bias"] = b[q:q + kv]
            out[p + "self_attn.v_proj.bias"] = b[q + kv:]
        out[p + "self_attn.o_proj.weight"] = layer["w_o"].numpy()
        gu = layer["w_gate_up"].numpy()
        out[p + "mlp.gate_proj.weight"] = gu[:i]
        out[p + "mlp.up_proj.weight"] = gu[i:]
        out[p + "mlp.down_proj.weight"] = layer["w_down"].numpy()
        if "b_o" in layer:
            out[p + "self_attn.o_proj.bias"] = layer["b_o"].numpy()
        if "b_gate_up" in layer:
            b = layer["b_gate_up"].numpy()
            out[p + "mlp.gate_proj.bias"], out[p + "mlp.up_proj.bias"] = b[:i], b[i:]
            out[p + "mlp.down_proj.bias"] = layer["b_down"].numpy()
        out[p + "input_layernorm.weight"] = layer["attn_norm"].numpy()
        out[p + "post_attention_layernorm.weight"] = layer["mlp_norm"].numpy()
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def hf_config_dict(cfg: LlamaConfig) -> dict:
    """A Hugging Face config.json dict for `cfg`."""
    d = {"architectures": [cfg.architecture], "vocab_size": cfg.vocab_size,
         "hidden_size": cfg.hidden_size, "intermediate_size": cfg.intermediate_size,
         "num_hidden_layers": cfg.num_hidden_layers, "num_attention_heads": cfg.num_attention_heads,
         "num_key_value_heads": cfg.num_key_value_heads, "head_dim": cfg.head_dim,
         "rms_norm_eps": cfg.rms_norm_eps, "rope_theta": cfg.rope_theta,
         "rope_scaling": cfg.rope or None, "max_position_embeddings": cfg.max_position_embeddings,
         "tie_word_embeddings": cfg.tie_word_embeddings, "torch_dtype": cfg.dtype,
         "bos_token_id": cfg.bos_token_id, "eos_token_id": list(cfg.eos_token_ids) or None}
    if cfg.architecture == "LlamaForCausalLM":
        if cfg.attention_bias != cfg.o_bias:
            raise ModelConfigError("a Llama config.json has one attention_bias, for q, k, v and o alike")
        d["attention_bias"] = cfg.attention_bias
        d["mlp_bias"] = cfg.mlp_bias
    if cfg.sliding_window:
        d["sliding_window"] = cfg.sliding_window
        d["use_sliding_window"] = True
        if cfg.architecture == "Qwen2ForCausalLM":
            d["max_window_layers"] = 0          # every layer (transformers' default is 28)
        if cfg.layer_windows is not None:
            d["layer_types"] = ["sliding_attention" if w else "full_attention" for w in cfg.layer_windows]
    _check_round_trip(cfg, d)
    return d


def _effective(cfg: LlamaConfig) -> dict:
    """What the decoder computes with, field by field: two configs equal here run the same model (a window
    of 0 and None alike, per-layer windows as each layer sees them, RoPE by its inverse frequencies)."""
    out = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
           if f.name not in ("sliding_window", "layer_windows", "rope_scaling", "rope_theta", "eos_token_ids")}
    out["eos_token_ids"] = tuple(cfg.eos_token_ids)
    out["sliding_window (per layer)"] = tuple(cfg.window(i) for i in range(cfg.num_hidden_layers))
    out["rope_theta, rope_scaling"] = tuple(rope_inv_freq(cfg).tolist())
    return out


def _check_round_trip(cfg: LlamaConfig, d: dict) -> None:
    """Refuse a config that config.json cannot express: transformers (and `load_checkpoint`) would read
    the file back as another model (Llama has no sliding window; Qwen2 always has q/k/v biases and
    Mistral none), so saving it would either change the model silently or write a checkpoint that
    cannot be loaded."""
    try:
        back = LlamaConfig.from_hf(json.loads(json.dumps(d)))
    except ModelConfigError as e:
        raise ModelConfigError(f"this {cfg.architecture} config cannot be written as a config.json that loads "
                               f"back ({e})") from None
    want, got = _effective(cfg), _effective(back)
    diff = [f"{k} {want[k]!r} would load as {got[k]!r}" for k in want if want[k] != got[k]]
    if diff:
        raise ModelConfigError(f"a {cfg.architecture} config.json cannot express this config: "
                               f"{'; '.join(diff)} (transformers' {cfg.architecture} reads these settings "
                               f"differently or not at all; choose an architecture that has them, or change "
                               f"the config)")


def save_checkpoint(path: str, cfg: LlamaConfig, params: dict) -> None:
    """Write config.json and model.safetensors for (cfg, params) into directory `path`. A config that
    config.json cannot express raises ModelConfigError before anything is written."""
    st = require("safetensors.numpy")
    hf = hf_config_dict(cfg)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(hf, f, indent=1)
    st.save_file(to_hf_tensors(cfg, params), os.path.join(path, "model.safetensors"))
