"""The poot.models decoder against Hugging Face transformers' model of the same config holding the same
random bfloat16 weights: prefill and decode logits within bfloat16 tolerance, and 32 greedy tokens
equal (up to a genuine tie: see `_assert_same_greedy_tokens`). transformers runs in float32 on weights that are exactly the bfloat16 values poot holds, so the
only differences are poot's bfloat16 roundings of the activations before each matmul (what bf16
inference does). Runs where torch and transformers are installed: on CUDA where both torch and poot see
a GPU, else on the CPU."""
import numpy as np
import pytest

import poot as pt
from poot.models import GREEDY, Decoder, LlamaConfig, llama
from poot.models.weights import params_from_numpy

from .reference import random_checkpoint

torch = pytest.importorskip("torch", reason="the transformers comparison needs torch")
transformers = pytest.importorskip("transformers", reason="the transformers comparison needs transformers")

pytestmark = pytest.mark.filterwarnings("ignore::poot.RetraceWarning")

BASE = {"vocab_size": 512, "hidden_size": 128, "intermediate_size": 320, "num_hidden_layers": 3,
        "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 256,
        "torch_dtype": "bfloat16"}
CONFIGS = {
    "qwen2": {**BASE, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_attention_heads": 8,
              "num_key_value_heads": 2, "head_dim": 16, "tie_word_embeddings": True},
    "llama": {**BASE, "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 32, "tie_word_embeddings": False},
}
PROMPT = [11, 300, 7, 42, 199, 5, 77, 480, 3, 250, 64, 91]
TOKENS = 32
CAP = 64


def _where():
    if torch.cuda.is_available():
        try:
            pt.device("cuda")
            return "cuda", "cuda"
        except pt.DeviceUnavailableError:
            pass
    return "cpu", "cpu"


def _models(name):
    hf = CONFIGS[name]
    tensors = random_checkpoint(hf, seed=4, scale=0.08)   # no near-tie in 32 greedy steps
    import ml_dtypes

    tensors = {k: v.astype(ml_dtypes.bfloat16) for k, v in tensors.items()}     # the weights both hold
    cfg = LlamaConfig.from_hf(hf)
    device, where = _where()
    params = params_from_numpy(cfg, tensors, CAP, device=device)
    kwargs = {k: v for k, v in hf.items() if k not in ("architectures", "model_type", "torch_dtype")}
    model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(hf["model_type"],
                                                                                             **kwargs))
    state = {k: torch.from_numpy(v.astype(np.float32)) for k, v in tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all("rotary" in k or k == "lm_head.weight" for k in missing), (missing, unexpected)
    return cfg, params, model.float().to(where).eval(), device, where


@pytest.mark.parametrize("name", list(CONFIGS))
def test_logits_and_greedy_tokens_match_transformers(name):
    cfg, params, model, device, where = _models(name)
    ids = torch.tensor([PROMPT], device=where)
    with torch.inference_mode():
        want = model(ids).logits[0].float().cpu().numpy()
        hf_tokens = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=TOKENS,
                                   min_new_tokens=TOKENS, do_sample=False, pad_token_id=0)[0, len(PROMPT):]
        hf_tokens = hf_tokens.cpu().tolist()
        want_steps = model(torch.tensor([PROMPT + hf_tokens], device=where)).logits[0].float().cpu().numpy()
    scale = float(np.abs(want).max())
    with pt.device(device):
        cache = llama.new_cache(cfg, CAP)
        logits, cache = llama.prefill_all_logits(params, cache, np.array(PROMPT, np.int32), cfg=cfg)
        got = logits.numpy()
        # bfloat16 rounding of the activations entering each matmul: a few parts in a thousand of the
        # logits' range, accumulated over the layers
        np.testing.assert_allclose(got, want, rtol=0, atol=0.03 * scale)
        err = float(np.abs(got - want).max())
        assert (np.argmax(got, -1) == np.argmax(want, -1)).mean() >= 0.9
        for i, t in enumerate(hf_tokens[:8]):            # decode steps over the cache the prefill wrote
            pos = len(PROMPT) + i
            _, logits, cache = llama.decode_step(params, cache, np.array([t], np.int32), pos,
                                                 np.zeros(2, np.uint32), cfg=cfg, sampling=GREEDY)
            step = logits.numpy()
            np.testing.assert_allclose(step, want_steps[pos], rtol=0, atol=0.03 * scale,
                                       err_msg=f"decode step {i} (position {pos})")
            err = max(err, float(np.abs(step - want_steps[pos]).max()))
        tokens = Decoder(cfg, params, CAP).generate(PROMPT, max_tokens=TOKENS, sampling=GREEDY,
                                                    stop_at_eos=False).tokens
    _assert_same_greedy_tokens(tokens, hf_tokens, want_steps[len(PROMPT) - 1:], 2 * err)


def _assert_same_greedy_tokens(got, want, want_logits, near):
    """poot's greedy tokens equal transformers' at every step, except that at a step where transformers'
    best two logits are within `near` (twice the largest logit difference seen) poot may take the
    second: bfloat16 rounding decides such a tie; the sequences part there, so checking stops."""
    for i, (a, b) in enumerate(zip(got, want)):
        if a == b:
            continue
        top2 = np.sort(want_logits[i])[-2:]
        assert a == int(np.argsort(want_logits[i])[-2]) and top2[1] - top2[0] < near, \
            f"greedy token {i}: poot {a}, transformers {b} (their top two logits {top2}, tie margin {near:.3g})"
        return
    assert len(got) == len(want) == TOKENS
