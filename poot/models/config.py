"""Llama-family decoder configurations: parsed from a Hugging Face `config.json` or taken from a named
preset (the shapes of published checkpoints, for random-weight runs and benchmarks)."""
from __future__ import annotations

import dataclasses
import json
import math
import os

import numpy as np

from poot.errors import PootError

SUPPORTED_ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM")
ROPE_TYPES = ("default", "linear", "llama3")
DTYPES = ("bfloat16", "float16", "float32")
ACTIVATIONS = ("silu", "swish")


class ModelConfigError(PootError):
    """A model configuration poot's decoder cannot run (unknown architecture, RoPE variant, shapes)."""


@dataclasses.dataclass(frozen=True)
class LlamaConfig:
    """The hyperparameters of a Llama-family decoder (Llama, Qwen2, Mistral). Frozen and hashable:
    the jitted forward functions take it as a static argument."""
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: tuple | None = None        # sorted (key, value) items of the HF dict, or None
    max_position_embeddings: int = 4096
    tie_word_embeddings: bool = False
    attention_bias: bool = False             # q/k/v projections carry biases (Qwen2)
    sliding_window: int | None = None        # Mistral: keys further back than this are masked
    dtype: str = "bfloat16"                  # weight dtype: "bfloat16", "float16" or "float32"
    bos_token_id: int | None = None
    eos_token_ids: tuple = ()
    architecture: str = "LlamaForCausalLM"
    o_bias: bool = False                     # the attention output projection carries a bias (Llama attention_bias)
    mlp_bias: bool = False                   # gate/up/down projections carry biases (Llama mlp_bias)
    # one entry a layer, the window of that layer (None: full attention), where the window does not apply
    # to every layer (Qwen2's max_window_layers, `layer_types`); None: `sliding_window` applies to all
    layer_windows: tuple | None = None

    def __post_init__(self):
        _check_values(self)
        if self.num_attention_heads % self.num_key_value_heads:
            raise ModelConfigError(f"num_attention_heads ({self.num_attention_heads}) must be a multiple "
                                   f"of num_key_value_heads ({self.num_key_value_heads})")
        if self.head_dim % 2:
            raise ModelConfigError(f"head_dim must be even for RoPE, got {self.head_dim}")
        if self.dtype not in DTYPES:
            raise ModelConfigError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.layer_windows is not None:     # a tuple: the config is a static argument, hashed
            object.__setattr__(self, "layer_windows", tuple(self.layer_windows))
        if self.layer_windows is not None and len(self.layer_windows) != self.num_hidden_layers:
            raise ModelConfigError(f"layer_windows has {len(self.layer_windows)} entries for "
                                   f"{self.num_hidden_layers} layers")
        rope_type = self.rope.get("rope_type", self.rope.get("type", "default"))
        if rope_type not in ROPE_TYPES:
            raise ModelConfigError(f"RoPE scaling type {rope_type!r} is not supported (supported: "
                                   f"{', '.join(ROPE_TYPES)})")
        _check_rope_scaling(rope_type, self.rope)

    def window(self, layer: int) -> int | None:
        """The sliding window of layer `layer` (None: it attends to every earlier position)."""
        w = self.sliding_window if self.layer_windows is None else self.layer_windows[layer]
        return w or None

    @property
    def rope(self) -> dict:
        return dict(self.rope_scaling or ())

    @property
    def q_size(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_key_value_heads * self.head_dim

    def replace(self, **changes) -> "LlamaConfig":
        if isinstance(changes.get("rope_scaling"), dict):
            changes["rope_scaling"] = _freeze(changes["rope_scaling"])
        return dataclasses.replace(self, **changes)

    def num_parameters(self) -> int:
        h, i, layers = self.hidden_size, self.intermediate_size, self.num_hidden_layers
        attn = h * (self.q_size + 2 * self.kv_size) + self.q_size * h
        attn += (self.q_size + 2 * self.kv_size) if self.attention_bias else 0
        attn += h if self.o_bias else 0
        per_layer = attn + 3 * h * i + 2 * h + ((2 * i + h) if self.mlp_bias else 0)
        head = 0 if self.tie_word_embeddings else self.vocab_size * h
        return self.vocab_size * h + layers * per_layer + h + head

    @classmethod
    def from_hf(cls, cfg: dict) -> "LlamaConfig":
        """From the dict of a Hugging Face `config.json`."""
        archs = cfg.get("architectures") or ["LlamaForCausalLM"]
        arch = archs[0]
        if arch not in SUPPORTED_ARCHITECTURES:
            raise ModelConfigError(f"architecture {arch!r} is not supported (supported: "
                                   f"{', '.join(SUPPORTED_ARCHITECTURES)})")
        heads = cfg["num_attention_heads"]
        hidden = cfg["hidden_size"]
        layers = cfg["num_hidden_layers"]
        eos = cfg.get("eos_token_id")
        eos = () if eos is None else tuple(eos) if isinstance(eos, list) else (eos,)
        act = cfg.get("hidden_act", "silu")
        if act not in ACTIVATIONS:
            raise ModelConfigError(f"hidden_act {act!r} is not supported (the MLP is SwiGLU: silu)")
        theta, scaling = _rope_from_hf(cfg)
        if arch == "Qwen2ForCausalLM":
            bias, o_bias, mlp_bias = True, False, False
        elif arch == "MistralForCausalLM":
            bias = o_bias = mlp_bias = False
        else:
            bias = o_bias = bool(cfg.get("attention_bias", False))     # HF Llama: q, k, v and o
            mlp_bias = bool(cfg.get("mlp_bias", False))
        window, layer_windows = _windows_from_hf(cfg, arch, layers)
        return cls(vocab_size=cfg["vocab_size"], hidden_size=hidden,
                   intermediate_size=cfg["intermediate_size"],
                   num_hidden_layers=layers, num_attention_heads=heads,
                   num_key_value_heads=cfg.get("num_key_value_heads") or heads,
                   head_dim=cfg.get("head_dim") or (hidden // heads if _is_int(heads) and heads > 0 else 0),
                   rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
                   rope_theta=theta, rope_scaling=scaling,
                   max_position_embeddings=int(cfg.get("max_position_embeddings", 4096)),
                   tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
                   attention_bias=bias, o_bias=o_bias, mlp_bias=mlp_bias, sliding_window=window,
                   layer_windows=layer_windows, dtype=_dtype_from_hf(cfg),
                   bos_token_id=cfg.get("bos_token_id"), eos_token_ids=eos, architecture=arch)

    @classmethod
    def from_json(cls, path) -> "LlamaConfig":
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
        try:
            with open(path) as f:
                return cls.from_hf(json.load(f))
        except FileNotFoundError:
            raise ModelConfigError(f"no config.json at {path}") from None
        except (KeyError, json.JSONDecodeError) as e:
            raise ModelConfigError(f"{path}: not a Llama-family config.json ({type(e).__name__}: {e})") from None


_SIZES = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
          "num_key_value_heads", "head_dim", "max_position_embeddings")


def _is_int(x) -> bool:
    """An integer that is not a bool (True would pass as 1 and hide a mistaken argument)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _check_window(name: str, w) -> None:
    """A sliding window is None or 0 (no window) or a positive int: a negative one would mask every key,
    so attention would silently contribute nothing."""
    if w is not None and not (_is_int(w) and w >= 0):
        raise ModelConfigError(f"{name} must be None (no window) or an int >= 1, got {w!r}")


def _check_values(cfg: "LlamaConfig") -> None:
    """Refuse values the forward would turn into NaN, empty arrays or a division by zero, before any of
    them runs: sizes are positive ints, rope_theta a finite number > 0, rms_norm_eps finite and >= 0."""
    for name in _SIZES:
        v = getattr(cfg, name)
        if not (_is_int(v) and v >= 1):
            raise ModelConfigError(f"{name} must be an int >= 1, got {v!r}")
    if not (_is_real(cfg.rope_theta) and math.isfinite(cfg.rope_theta) and cfg.rope_theta > 0):
        raise ModelConfigError(f"rope_theta must be a finite number > 0 (the RoPE base), got {cfg.rope_theta!r}")
    if not (_is_real(cfg.rms_norm_eps) and math.isfinite(cfg.rms_norm_eps) and cfg.rms_norm_eps >= 0):
        raise ModelConfigError(f"rms_norm_eps must be a finite number >= 0, got {cfg.rms_norm_eps!r}")
    if cfg.architecture not in SUPPORTED_ARCHITECTURES:
        raise ModelConfigError(f"architecture {cfg.architecture!r} is not supported (supported: "
                               f"{', '.join(SUPPORTED_ARCHITECTURES)})")
    _check_window("sliding_window", cfg.sliding_window)
    for i, w in enumerate(cfg.layer_windows or ()):
        _check_window(f"layer_windows[{i}]", w)


def _scaling_number(r: dict, key: str, default=None, positive=True) -> float:
    """The RoPE scaling entry `key` as a finite float (> 0 when `positive`), or ModelConfigError naming it."""
    v = r.get(key, default)
    if v is None:
        raise ModelConfigError(f"RoPE scaling {r.get('rope_type', r.get('type'))!r} needs {key!r}, got "
                               f"{dict(r)}")
    if not (_is_real(v) and math.isfinite(v) and (v > 0 or not positive)):
        raise ModelConfigError(f"RoPE scaling {key!r} must be a finite number{' > 0' if positive else ''}, "
                               f"got {v!r}")
    return float(v)


def _check_rope_scaling(kind: str, r: dict) -> None:
    """The scaling entries `rope_inv_freq` reads, checked where the config is made: a missing factor or
    a string in its place would otherwise fail as a KeyError or ValueError deep in the forward."""
    if kind not in ("linear", "llama3"):
        return
    _scaling_number(r, "factor")
    if kind == "llama3":
        low = _scaling_number(r, "low_freq_factor", 1.0)
        high = _scaling_number(r, "high_freq_factor", 4.0)
        _scaling_number(r, "original_max_position_embeddings", 8192)
        if high <= low:
            raise ModelConfigError(f"RoPE scaling 'high_freq_factor' ({high}) must be above 'low_freq_factor' "
                                   f"({low})")


def _dtype_from_hf(cfg: dict) -> str:
    """The weight dtype: float32, float16 and bfloat16 as stored (float16 stays float16: rounding it to
    bfloat16 would drop 3 mantissa bits); anything else (float64, unset) runs as bfloat16."""
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16").removeprefix("torch.")
    dtype = {"float": "float32", "half": "float16"}.get(dtype, dtype)
    return dtype if dtype in DTYPES else "bfloat16"


def _rope_from_hf(cfg: dict) -> tuple:
    """(rope_theta, frozen scaling or None) from either form: transformers v5 writes one `rope_parameters`
    dict (rope_theta, rope_type and the scaling's own keys); earlier versions top-level `rope_theta` and a
    `rope_scaling` dict (None when unscaled)."""
    params = cfg.get("rope_parameters")
    if isinstance(params, dict):
        params = dict(params)
        theta = params.pop("rope_theta", cfg.get("rope_theta", 10000.0))
        scaling = params
    else:
        theta, scaling = cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling")
    scaling = dict(scaling or {})
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind not in ROPE_TYPES:
        raise ModelConfigError(f"RoPE scaling type {kind!r} is not supported (supported: {', '.join(ROPE_TYPES)})")
    if kind == "default":
        scaling = {}     # an unscaled RoPE, however it is written
    return float(theta), _freeze(scaling)


def _windows_from_hf(cfg: dict, arch: str, layers: int) -> tuple:
    """(sliding_window, layer_windows), as transformers applies the window: Mistral's to every layer;
    Qwen2's (when use_sliding_window) to the layers >= max_window_layers, or to those `layer_types`
    marks "sliding_attention"; Llama has none."""
    window = cfg.get("sliding_window")
    if arch == "LlamaForCausalLM" or not window or (arch == "Qwen2ForCausalLM" and not cfg.get("use_sliding_window")):
        return None, None
    types = cfg.get("layer_types")
    if types is not None:
        if len(types) != layers:
            raise ModelConfigError(f"layer_types has {len(types)} entries for {layers} layers")
        bad = sorted(set(types) - {"sliding_attention", "full_attention"})
        if bad:
            raise ModelConfigError(f"layer_types {bad} are not supported (sliding_attention, full_attention)")
        per = [window if t == "sliding_attention" else None for t in types]
    elif arch == "Qwen2ForCausalLM":
        first = int(cfg.get("max_window_layers", 28))
        per = [window if i >= first else None for i in range(layers)]
    else:
        per = [window] * layers
    if all(w == window for w in per):
        return int(window), None
    if not any(per):
        return None, None
    return int(window), tuple(per)


def _freeze(d):
    if not d:
        return None
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in d.items()))


def rope_inv_freq(cfg: LlamaConfig) -> np.ndarray:
    """The RoPE inverse frequencies (head_dim // 2,) in float64, with the config's scaling applied
    (the formulas of Hugging Face's `_compute_default/linear/llama3_parameters`)."""
    d = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    r = cfg.rope
    kind = r.get("rope_type", r.get("type", "default"))
    if kind == "linear":
        inv = inv / float(r["factor"])
    elif kind == "llama3":
        factor = float(r["factor"])
        low, high = float(r.get("low_freq_factor", 1.0)), float(r.get("high_freq_factor", 4.0))
        old = float(r.get("original_max_position_embeddings", 8192))
        low_wl, high_wl = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= high_wl) & (wavelen <= low_wl)
        inv = np.where(medium, smoothed, scaled)
    return inv


PRESETS = {
    "tiny": LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                        rope_theta=10000.0, max_position_embeddings=512, tie_word_embeddings=False,
                        attention_bias=True, dtype="float32", eos_token_ids=(),
                        architecture="Qwen2ForCausalLM"),
    "qwen2.5-0.5b": LlamaConfig(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                                num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                                head_dim=64, rms_norm_eps=1e-6, rope_theta=1000000.0,
                                max_position_embeddings=32768, tie_word_embeddings=True,
                                attention_bias=True, dtype="bfloat16", bos_token_id=151643,
                                eos_token_ids=(151643,), architecture="Qwen2ForCausalLM"),
    "llama-3.2-1b": LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192,
                                num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                                head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
                                rope_scaling=_freeze({"rope_type": "llama3", "factor": 32.0,
                                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                      "original_max_position_embeddings": 8192}),
                                max_position_embeddings=131072, tie_word_embeddings=True,
                                dtype="bfloat16", bos_token_id=128000, eos_token_ids=(128001,)),
    "llama-3-8b": LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                              num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                              head_dim=128, rms_norm_eps=1e-5, rope_theta=500000.0,
                              max_position_embeddings=8192, tie_word_embeddings=False,
                              dtype="bfloat16", bos_token_id=128000, eos_token_ids=(128001,)),
}


def preset(name: str) -> LlamaConfig:
    try:
        return PRESETS[name.lower()]
    except KeyError:
        raise ModelConfigError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}") from None
