"""The poot.models decoder against a NumPy reference of the architecture (tests/models/reference.py):
prefill logits, 16 decode steps' logits and greedy tokens, for Qwen2-, Llama-3- and Mistral-style
tiny configs, on every test device."""
import json

import numpy as np
import pytest

import poot as pt
from poot.models import GREEDY, Decoder, LlamaConfig, SamplingConfig, llama
from poot.models.weights import params_from_numpy

from .reference import Reference, random_checkpoint

# each config (and each device) is a new signature of the jitted steps
pytestmark = pytest.mark.filterwarnings("ignore::poot.RetraceWarning")

BASE = {"vocab_size": 97, "hidden_size": 48, "intermediate_size": 80, "num_hidden_layers": 2,
        "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 256,
        "torch_dtype": "float32"}
CONFIGS = {
    "qwen2": {**BASE, "architectures": ["Qwen2ForCausalLM"], "num_attention_heads": 6,
              "num_key_value_heads": 2, "head_dim": 8, "tie_word_embeddings": False},
    "llama3": {**BASE, "architectures": ["LlamaForCausalLM"], "num_attention_heads": 4,
               "num_key_value_heads": 1, "head_dim": 16, "tie_word_embeddings": True,
               "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
    "mistral": {**BASE, "architectures": ["MistralForCausalLM"], "num_attention_heads": 4,
                "num_key_value_heads": 2, "head_dim": 8, "tie_word_embeddings": False,
                "rope_scaling": {"type": "linear", "factor": 2.0}, "sliding_window": 5,
                "use_sliding_window": True},
}
PROMPT = [3, 17, 42, 5, 88, 1, 60]
PROMPT16 = (PROMPT * 3)[:16]
STEPS = 16
CAP = 40


def _setup(name, seed=0, dtype="float32"):
    hf = {**CONFIGS[name], "torch_dtype": dtype}
    tensors = random_checkpoint(hf, seed=seed)
    cfg = LlamaConfig.from_hf(hf)
    return hf, tensors, cfg, params_from_numpy(cfg, tensors, CAP)


@pytest.mark.parametrize("plen", [7, 16])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_logits_match_reference(device, name, plen):
    hf, tensors, cfg, params = _setup(name)
    ref = Reference(hf, tensors)
    rng = np.random.default_rng(1)
    prompt = (PROMPT * 3)[:plen]
    follow = rng.integers(0, hf["vocab_size"], STEPS).tolist()
    want = np.stack([ref.step(t, p) for p, t in enumerate(prompt)])
    cache = llama.new_cache(cfg, CAP)
    logits, cache = llama.prefill_all_logits(params, cache, np.array(prompt, np.int32), cfg=cfg)
    np.testing.assert_allclose(logits.numpy(), want, rtol=2e-4, atol=2e-4)
    tok = pt.asarray(np.array([prompt[-1]], np.int32))
    for i, t in enumerate(follow):
        pos = len(prompt) + i
        _, logits, cache = llama.decode_step(params, cache, np.array([t], np.int32), pos,
                                             np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
        np.testing.assert_allclose(logits.numpy(), ref.step(t, pos), rtol=2e-4, atol=2e-4,
                                   err_msg=f"decode step {i} (position {pos})")
    del tok


@pytest.mark.parametrize("name", ["qwen2", "mistral"])
def test_greedy_tokens_match_reference(device, name):
    hf, tensors, cfg, params = _setup(name, seed=2)
    ref = Reference(hf, tensors)
    for p, t in enumerate(PROMPT[:-1]):
        ref.step(t, p)
    want, tok, pos = [], PROMPT[-1], len(PROMPT) - 1
    for _ in range(STEPS + 1):
        tok = int(np.argmax(ref.step(tok, pos)))
        want.append(tok)
        pos += 1
    got = Decoder(cfg, params, CAP).generate(PROMPT, max_tokens=STEPS + 1, sampling=GREEDY)
    assert got.tokens == want


def test_bf16_weights_close_to_reference(device):
    hf, tensors, cfg, params = _setup("qwen2", seed=3, dtype="bfloat16")
    assert params["layers"][0]["w_qkv"].dtype == pt.bfloat16
    import ml_dtypes

    rounded = {k: v.astype(ml_dtypes.bfloat16).astype(np.float32) if "bias" not in k else v
               for k, v in tensors.items()}
    ref = Reference(hf, rounded, bf16_matmul=True)
    want = np.stack([ref.step(t, p) for p, t in enumerate(PROMPT16)])
    cache = llama.new_cache(cfg, CAP)
    logits, cache = llama.prefill_all_logits(params, cache, np.array(PROMPT16, np.int32), cfg=cfg)
    scale = np.abs(want).max()
    np.testing.assert_allclose(logits.numpy(), want, atol=0.03 * scale)


def test_sampled_generation_is_deterministic(device):
    _, _, cfg, params = _setup("qwen2", seed=4)
    s = SamplingConfig(temperature=0.9, top_k=40, top_p=0.95, min_p=0.02)
    m = Decoder(cfg, params, CAP)
    a = m.generate(PROMPT, max_tokens=12, sampling=s, seed=7).tokens
    assert m.generate(PROMPT, max_tokens=12, sampling=s, seed=7).tokens == a
    assert m.generate(PROMPT, max_tokens=12, sampling=s, seed=8).tokens != a
    if device != "cpu":       # the same seed gives the same tokens on the CPU
        with pt.device("cpu"):
            _, _, cfg, params = _setup("qwen2", seed=4)
            assert Decoder(cfg, params, CAP).generate(PROMPT, max_tokens=12, sampling=s, seed=7).tokens == a


def test_config_from_hf_and_errors():
    cfg = LlamaConfig.from_hf(CONFIGS["mistral"])
    assert cfg.sliding_window == 5 and cfg.rope == {"type": "linear", "factor": 2.0}
    assert LlamaConfig.from_hf(CONFIGS["qwen2"]).attention_bias
    with pytest.raises(pt.PootError, match="not supported"):
        LlamaConfig.from_hf({**CONFIGS["qwen2"], "architectures": ["GPT2LMHeadModel"]})
    with pytest.raises(pt.PootError, match="yarn"):
        LlamaConfig.from_hf({**CONFIGS["qwen2"], "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    json.dumps(CONFIGS)


@pytest.mark.parametrize("kv", ["bfloat16", "float16"])
def test_16bit_kv_cache_close_to_float32_cache(device, kv):
    """A 16-bit cache rounds each key and value once, when written; prefill attends to the same
    rounded values decode will read, so both stay within the 16-bit rounding of the float32 run."""
    hf, tensors, cfg, params = _setup("mistral", seed=5)
    ref = Reference(hf, tensors)
    want = np.stack([ref.step(t, p) for p, t in enumerate(PROMPT16)])
    scale = np.abs(want).max()
    cache = llama.new_cache(cfg, CAP, dtype=getattr(pt, kv))
    assert cache["k"][0].dtype == getattr(pt, kv)
    logits, cache = llama.prefill_all_logits(params, cache, np.array(PROMPT16, np.int32), cfg=cfg)
    tol = 0.02 if kv == "bfloat16" else 0.003
    np.testing.assert_allclose(logits.numpy(), want, atol=tol * scale)
    for i, t in enumerate([3, 9, 27]):
        pos = len(PROMPT16) + i
        _, logits, cache = llama.decode_step(params, cache, np.array([t], np.int32), pos,
                                             np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
        assert cache["k"][0].dtype == getattr(pt, kv)
        np.testing.assert_allclose(logits.numpy(), ref.step(t, pos), atol=tol * scale)
    m = Decoder(cfg, params, CAP, cache_dtype=getattr(pt, kv))
    assert len(m.generate(PROMPT, max_tokens=4, sampling=GREEDY).tokens) == 4
    with pytest.raises(pt.DTypeError, match="float32, bfloat16 or float16"):
        llama.new_cache(cfg, CAP, dtype=pt.int32)


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0"])
def test_quantized_layers_match_reference_with_the_same_weights(device, fmt):
    """Decoder.quantize stores each layer matrix with pt.quant: its logits equal the reference's run
    on the dequantized weights (float32 rounding apart), and so do its greedy tokens."""
    from poot.graph.quant import dequantize_words, quantize_words

    hf = {**CONFIGS["qwen2"], "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
          "head_dim": 16}
    tensors = random_checkpoint(hf, seed=5)
    cfg = LlamaConfig.from_hf(hf)
    m = Decoder(cfg, params_from_numpy(cfg, tensors, CAP), CAP).quantize(fmt)
    assert isinstance(m.params["layers"][0]["w_down"], pt.quant.QuantizedMatrix)
    seen = {k: dequantize_words(*quantize_words(v, fmt), fmt, v.shape) if k.endswith("proj.weight") else v
            for k, v in tensors.items()}
    ref = Reference(hf, seen)
    want = np.stack([ref.step(t, p) for p, t in enumerate(PROMPT)])
    cache = llama.new_cache(cfg, CAP)
    logits, cache = llama.prefill_all_logits(m.params, cache, np.array(PROMPT, np.int32), cfg=cfg)
    np.testing.assert_allclose(logits.numpy(), want, rtol=2e-4, atol=2e-4)
    for i, t in enumerate([5, 9, 33]):
        pos = len(PROMPT) + i
        _, logits, cache = llama.decode_step(m.params, cache, np.array([t], np.int32), pos,
                                             np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
        np.testing.assert_allclose(logits.numpy(), ref.step(t, pos), rtol=2e-4, atol=2e-4)
    ref2 = Reference(hf, seen)
    for p, t in enumerate(PROMPT[:-1]):
        ref2.step(t, p)
    expect, tok, pos = [], PROMPT[-1], len(PROMPT) - 1
    for _ in range(8):
        tok = int(np.argmax(ref2.step(tok, pos)))
        expect.append(tok)
        pos += 1
    assert m.generate(PROMPT, max_tokens=8, sampling=GREEDY).tokens == expect
