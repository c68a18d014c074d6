"""A plain NumPy Llama-family decoder, written from the published architecture (Llama / Qwen2 /
Mistral as released with Hugging Face `transformers`), over tensors named as in HF checkpoints.
float64 throughout unless `bf16_matmul` rounds matmul inputs to bfloat16."""
import math

import ml_dtypes
import numpy as np


def inv_freq(head_dim, theta, scaling):
    inv = 1.0 / theta ** (np.arange(0, head_dim, 2) / head_dim)
    scaling = scaling or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))   # "type": the older key
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "llama3":
        f, lo, hi = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        out = []
        for w in inv:
            wavelen = 2 * math.pi / w
            if wavelen < old / hi:
                out.append(w)
            elif wavelen > old / lo:
                out.append(w / f)
            else:
                s = (old / wavelen - lo) / (hi - lo)
                out.append((1 - s) * w / f + s * w)
        return np.array(out)
    return inv


class Reference:
    def __init__(self, hf: dict, t: dict, bf16_matmul=False):
        self.c, self.t, self.bf16 = hf, {k: np.asarray(v, np.float64) for k, v in t.items()}, bf16_matmul
        c = hf
        self.nh, self.nkv, self.d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.inv = inv_freq(self.d, c["rope_theta"], c.get("rope_scaling"))
        self.windows = _windows(c)
        self.k_cache = [[] for _ in range(c["num_hidden_layers"])]
        self.v_cache = [[] for _ in range(c["num_hidden_layers"])]
        self.bias = c["architectures"][0] == "Qwen2ForCausalLM" or c.get("attention_bias", False)
        llama = c["architectures"][0] == "LlamaForCausalLM"
        self.o_bias = llama and c.get("attention_bias", False)
        self.mlp_bias = llama and c.get("mlp_bias", False)

    def lin(self, x, name, bias=None):
        w = self.t[name]
        if self.bf16:
            x = x.astype(ml_dtypes.bfloat16).astype(np.float64)
        y = x @ w.T
        if self.bf16:
            y = y.astype(ml_dtypes.bfloat16).astype(np.float64)
        if bias is not None:
            y = y + self.t[bias]
        return y

    def rms(self, x, name):
        return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + self.c["rms_norm_eps"]) * self.t[name]

    def rope(self, x, pos):     # x (heads, d), rotate-half
        a = pos * self.inv
        cos, sin = np.concatenate([np.cos(a)] * 2), np.concatenate([np.sin(a)] * 2)
        h = self.d // 2
        rot = np.concatenate([-x[:, h:], x[:, :h]], -1)
        return x * cos + rot * sin

    def step(self, token, pos):
        """Logits after feeding `token` at position `pos` (tokens must come in order 0, 1, ...)."""
        c = self.c
        x = self.t["model.embed_tokens.weight"][token]
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self.rms(x, p + "input_layernorm.weight")
            b = (lambda n: p + f"self_attn.{n}_proj.bias") if self.bias else (lambda n: None)
            q = self.lin(h, p + "self_attn.q_proj.weight", b("q")).reshape(self.nh, self.d)
            k = self.lin(h, p + "self_attn.k_proj.weight", b("k")).reshape(self.nkv, self.d)
            v = self.lin(h, p + "self_attn.v_proj.weight", b("v")).reshape(self.nkv, self.d)
            q, k = self.rope(q, pos), self.rope(k, pos)
            self.k_cache[i].append(k)
            self.v_cache[i].append(v)
            K = np.stack(self.k_cache[i], 1)            # (nkv, pos+1, d)
            V = np.stack(self.v_cache[i], 1)
            rep = self.nh // self.nkv
            K, V = np.repeat(K, rep, 0), np.repeat(V, rep, 0)   # head j uses kv head j // rep
            s = np.einsum("hd,hsd->hs", q, K) / math.sqrt(self.d)
            if self.windows[i]:
                s[:, : max(0, pos + 1 - self.windows[i])] = -np.inf
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = np.einsum("hs,hsd->hd", s, V).reshape(-1)
            mb = (lambda n: p + f"mlp.{n}_proj.bias") if self.mlp_bias else (lambda n: None)
            x = x + self.lin(o, p + "self_attn.o_proj.weight", p + "self_attn.o_proj.bias" if self.o_bias else None)
            h = self.rms(x, p + "post_attention_layernorm.weight")
            g = self.lin(h, p + "mlp.gate_proj.weight", mb("gate"))
            u = self.lin(h, p + "mlp.up_proj.weight", mb("up"))
            x = x + self.lin(g / (1 + np.exp(-g)) * u, p + "mlp.down_proj.weight", mb("down"))
        x = self.rms(x, "model.norm.weight")
        head = "model.embed_tokens.weight" if c["tie_word_embeddings"] else "lm_head.weight"
        return self.lin(x, head)


def _windows(c):
    """Each layer's sliding window (None: full attention), as transformers' Mistral and Qwen2 set it."""
    arch, n, w = c["architectures"][0], c["num_hidden_layers"], c.get("sliding_window")
    if arch == "LlamaForCausalLM" or (arch == "Qwen2ForCausalLM" and not c.get("use_sliding_window")):
        return [None] * n
    if "layer_types" in c:
        return [w if t == "sliding_attention" else None for t in c["layer_types"]]
    if arch == "Qwen2ForCausalLM":
        return [w if i >= c.get("max_window_layers", 28) else None for i in range(n)]
    return [w] * n


def random_checkpoint(hf: dict, seed=0, scale=0.2):
    """HF-named random tensors (float32) for config dict `hf`."""
    rng = np.random.default_rng(seed)
    h, i, v = hf["hidden_size"], hf["intermediate_size"], hf["vocab_size"]
    q, kv = hf["num_attention_heads"] * hf["head_dim"], hf["num_key_value_heads"] * hf["head_dim"]
    w = lambda *s: (rng.standard_normal(s) * scale).astype(np.float32)  # noqa: E731
    t = {"model.embed_tokens.weight": w(v, h), "model.norm.weight": 1 + w(h)}
    if not hf["tie_word_embeddings"]:
        t["lm_head.weight"] = w(v, h)
    bias = hf["architectures"][0] == "Qwen2ForCausalLM" or hf.get("attention_bias", False)
    for n in range(hf["num_hidden_layers"]):
        p = f"model.layers.{n}."
        t[p + "self_attn.q_proj.weight"] = w(q, h)
        t[p + "self_attn.k_proj.weight"] = w(kv, h)
        t[p + "self_attn.v_proj.weight"] = w(kv, h)
        if bias:
            for nm, size in (("q", q), ("k", kv), ("v", kv)):
                t[p + f"self_attn.{nm}_proj.bias"] = w(size)
        t[p + "self_attn.o_proj.weight"] = w(h, q)
        t[p + "mlp.gate_proj.weight"] = w(i, h)
        t[p + "mlp.up_proj.weight"] = w(i, h)
        t[p + "mlp.down_proj.weight"] = w(h, i)
        if hf["architectures"][0] == "LlamaForCausalLM":
            if hf.get("attention_bias", False):
                t[p + "self_attn.o_proj.bias"] = w(h)
            if hf.get("mlp_bias", False):
                for nm, size in (("gate", i), ("up", i), ("down", h)):
                    t[p + f"mlp.{nm}_proj.bias"] = w(size)
        t[p + "input_layernorm.weight"] = 1 + w(h)
        t[p + "post_attention_layernorm.weight"] = 1 + w(h)
    return t
