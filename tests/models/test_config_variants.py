"""Config forms and checkpoint variants: transformers v5 `rope_parameters`, RoPE types poot refuses,
Llama o/MLP biases, Qwen2 windows on some layers only, float16 weights, tensors the model would not
use, and the refusal of negative token ids and positions."""
import numpy as np
import pytest

import poot as pt
from poot.models import GREEDY, CheckpointError, Decoder, LlamaConfig, ModelConfigError, llama
from poot.models.weights import hf_config_dict, params_from_numpy, random_params, to_hf_tensors

from .reference import Reference, random_checkpoint
from .test_llama import CAP, CONFIGS, PROMPT

pytestmark = pytest.mark.filterwarnings("ignore::poot.RetraceWarning")

LLAMA3_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 64}
VARIANTS = {
    "llama-biases": {**CONFIGS["llama3"], "attention_bias": True, "mlp_bias": True},
    # layer 0 attends to everything, layer 1 through a window of 3 (transformers' max_window_layers)
    "qwen2-window-layers": {**CONFIGS["qwen2"], "use_sliding_window": True, "sliding_window": 3,
                            "max_window_layers": 1},
    "qwen2-layer-types": {**CONFIGS["qwen2"], "use_sliding_window": True, "sliding_window": 3,
                          "layer_types": ["sliding_attention", "full_attention"]},
}


def test_rope_parameters_of_transformers_v5():
    old = LlamaConfig.from_hf({**CONFIGS["llama3"], "rope_theta": 500000.0})
    v5 = {k: v for k, v in CONFIGS["llama3"].items() if k not in ("rope_theta", "rope_scaling")}
    new = LlamaConfig.from_hf({**v5, "rope_parameters": {"rope_theta": 500000.0, **LLAMA3_ROPE}})
    assert new == old and new.rope_theta == 500000.0 and new.rope["rope_type"] == "llama3"
    plain = LlamaConfig.from_hf({**v5, "rope_parameters": {"rope_theta": 1e6, "rope_type": "default"}})
    assert plain.rope_theta == 1e6 and plain.rope_scaling is None


@pytest.mark.parametrize("kind", ["yarn", "dynamic", "longrope"])
def test_unsupported_rope_types_name_the_type(kind):
    v5 = {k: v for k, v in CONFIGS["llama3"].items() if k not in ("rope_theta", "rope_scaling")}
    with pytest.raises(ModelConfigError, match=kind):
        LlamaConfig.from_hf({**v5, "rope_parameters": {"rope_theta": 1e4, "rope_type": kind, "factor": 4.0}})
    with pytest.raises(ModelConfigError, match=kind):
        LlamaConfig.from_hf({**CONFIGS["llama3"], "rope_scaling": {"type": kind, "factor": 4.0}})


def test_other_config_flags():
    with pytest.raises(ModelConfigError, match="gelu"):
        LlamaConfig.from_hf({**CONFIGS["llama3"], "hidden_act": "gelu"})
    assert LlamaConfig.from_hf({**CONFIGS["llama3"], "torch_dtype": "float16"}).dtype == "float16"
    assert LlamaConfig.from_hf({**CONFIGS["llama3"], "torch_dtype": "bfloat16"}).dtype == "bfloat16"


def test_qwen2_window_applies_from_max_window_layers():
    cfg = LlamaConfig.from_hf(VARIANTS["qwen2-window-layers"])
    assert [cfg.window(i) for i in range(2)] == [None, 3]
    assert LlamaConfig.from_hf(VARIANTS["qwen2-layer-types"]).layer_windows == (3, None)
    # transformers' default max_window_layers (28) is beyond these 2 layers: no layer is windowed
    hf = {**CONFIGS["qwen2"], "use_sliding_window": True, "sliding_window": 3}
    assert LlamaConfig.from_hf(hf).window(1) is None
    mistral = LlamaConfig.from_hf(CONFIGS["mistral"])
    assert mistral.layer_windows is None and [mistral.window(i) for i in range(2)] == [5, 5]
    again = LlamaConfig.from_hf(hf_config_dict(cfg))
    assert [again.window(i) for i in range(2)] == [None, 3]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_logits_match_reference(device, name):
    hf = VARIANTS[name]
    tensors = random_checkpoint(hf, seed=3)
    cfg = LlamaConfig.from_hf(hf)
    params = params_from_numpy(cfg, tensors, CAP)
    ref = Reference(hf, tensors)
    prompt = PROMPT + PROMPT[:3]
    want = np.stack([ref.step(t, p) for p, t in enumerate(prompt)])
    cache = llama.new_cache(cfg, CAP)
    logits, cache = llama.prefill_all_logits(params, cache, np.array(prompt, np.int32), cfg=cfg)
    np.testing.assert_allclose(logits.numpy(), want, rtol=2e-4, atol=2e-4)
    for i, t in enumerate([4, 9, 50, 2, 11]):
        pos = len(prompt) + i
        _, logits, cache = llama.decode_step(params, cache, np.array([t], np.int32), pos,
                                             np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
        np.testing.assert_allclose(logits.numpy(), ref.step(t, pos), rtol=2e-4, atol=2e-4,
                                   err_msg=f"decode position {pos}")


def test_unused_tensors_are_refused():
    hf = CONFIGS["llama3"]
    cfg = LlamaConfig.from_hf(hf)
    t = random_checkpoint({**hf, "attention_bias": True, "mlp_bias": True})   # biases the config lacks
    with pytest.raises(CheckpointError, match=r"14 tensors .* does not use: model.layers.0.mlp.down_proj.bias"):
        params_from_numpy(cfg, t, 16)
    t = random_checkpoint(hf)
    t["model.layers.0.self_attn.rotary_emb.inv_freq"] = np.ones(8, np.float32)   # harmless: a RoPE table
    t["lm_head.weight"] = t["model.embed_tokens.weight"]                          # a tied head's copy
    params_from_numpy(cfg, t, 16)


def test_random_params_round_trip_with_biases():
    cfg = LlamaConfig.from_hf({**VARIANTS["llama-biases"], "num_hidden_layers": 1})
    params = random_params(cfg, 16, seed=1)
    assert {"b_qkv", "b_o", "b_gate_up", "b_down"} <= set(params["layers"][0])
    tensors = to_hf_tensors(cfg, params)
    again = params_from_numpy(LlamaConfig.from_hf(hf_config_dict(cfg)), tensors, 16)
    np.testing.assert_array_equal(again["layers"][0]["b_o"].numpy(), params["layers"][0]["b_o"].numpy())
    assert cfg.num_parameters() == sum(v.size for k, v in tensors.items())


def test_float16_weights_run_as_float16():
    hf = {**CONFIGS["qwen2"], "torch_dtype": "float16"}
    tensors = random_checkpoint(hf, seed=5)
    cfg = LlamaConfig.from_hf(hf)
    params = params_from_numpy(cfg, tensors, CAP)
    assert params["layers"][0]["w_qkv"].dtype == pt.float16
    rounded = {k: v.astype(np.float16).astype(np.float32) if "bias" not in k else v for k, v in tensors.items()}
    ref = Reference(hf, rounded)
    want = np.stack([ref.step(t, p) for p, t in enumerate(PROMPT)])
    logits, _ = llama.prefill_all_logits(params, llama.new_cache(cfg, CAP), np.array(PROMPT, np.int32), cfg=cfg)
    np.testing.assert_allclose(logits.numpy(), want, atol=0.01 * np.abs(want).max())


def test_max_tokens_zero_and_negative():
    m = Decoder.random(LlamaConfig.from_hf(CONFIGS["qwen2"]), capacity=CAP)
    g = m.generate([1, 2], max_tokens=0)
    assert g.tokens == [] and g.prompt_tokens == 2
    with pytest.raises(pt.PootError, match="max_tokens"):
        m.generate([1, 2], max_tokens=-3)


def test_negative_token_ids_and_positions_are_refused():
    cfg = LlamaConfig.from_hf(CONFIGS["qwen2"])
    m = Decoder.random(cfg, capacity=CAP)
    with pytest.raises(pt.PootIndexError, match="-1"):
        m.generate([-1, 3], max_tokens=2)
    with pytest.raises(pt.PootIndexError, match="vocabulary"):
        m.generate([cfg.vocab_size, 3], max_tokens=2)
    # eager: a Python int or NumPy array is checked at the call
    with pytest.raises(pt.PootIndexError, match="position"):
        llama.decode_forward(m.params, m.new_cache(), np.array([1]), -1, cfg)
    with pytest.raises(pt.PootIndexError, match="token ids"):
        llama.decode_forward(m.params, m.new_cache(), np.array([-2]), 0, cfg)
    # traced: the position and the token are out of range for the gathers, which report it by the next read
    for token, pos in (([1], -1), ([-1], 0)):
        with pytest.raises(pt.PootIndexError, match="out of bounds"):
            tok, _, _ = llama.decode_step(m.params, m.new_cache(), np.array(token, np.int32), pos,
                                          np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
            tok.numpy()
