"""poot.models refuses what it cannot run where the value enters (configs, checkpoints, generate, the
jitted steps, SamplingConfig, the command line), with a PootError naming the argument and the value."""
import json

import numpy as np
import pytest

import poot as pt
from poot.cli import main
from poot.models import GREEDY, Decoder, LlamaConfig, SamplingConfig, llama, preset, random_params, save_checkpoint
from poot.models.config import ModelConfigError

from .test_cli import _checkpoint_with_metaspace_tokenizer

pytestmark = pytest.mark.filterwarnings("ignore::poot.RetraceWarning")

SMALL = LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=80, num_hidden_layers=2, num_attention_heads=6,
                    num_key_value_heads=2, head_dim=8, dtype="float32")
PROMPT = [5, 17, 33, 2, 90, 11, 7]


def _tiny(capacity=16):
    return Decoder.random(preset("tiny"), capacity=capacity)


# -- checkpoints: what is saved loads back as the same model, or is refused before anything is written ----

@pytest.mark.parametrize("changes, field", [
    (dict(sliding_window=3), "sliding_window"),
    (dict(architecture="Qwen2ForCausalLM", attention_bias=False), "attention_bias"),
    (dict(architecture="MistralForCausalLM", attention_bias=True), "attention_bias"),
    (dict(architecture="MistralForCausalLM", mlp_bias=True), "mlp_bias"),
    (dict(architecture="MistralForCausalLM", layer_windows=(3, 5), sliding_window=3), "sliding_window"),
])
def test_save_refuses_a_config_that_would_load_as_another_model(tmp_path, changes, field):
    pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    cfg = SMALL.replace(**changes)
    params = random_params(cfg, 16, seed=3, scale=0.3)
    with pytest.raises(ModelConfigError, match=field) as e:
        save_checkpoint(str(tmp_path / "ck"), cfg, params)
    assert cfg.architecture in str(e.value)
    assert not (tmp_path / "ck").exists()


def test_a_saved_window_loads_back_as_the_same_model(device, tmp_path):
    pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    cfg = SMALL.replace(architecture="MistralForCausalLM", sliding_window=3)
    params = random_params(cfg, 32, seed=3, scale=0.3)
    save_checkpoint(str(tmp_path), cfg, params)
    back = Decoder.from_pretrained(str(tmp_path), capacity=32)
    assert back.cfg.window(0) == back.cfg.window(1) == 3
    want = Decoder(cfg, params, 32).generate(PROMPT, max_tokens=6).tokens
    full = Decoder(cfg.replace(sliding_window=None), params, 32).generate(PROMPT, max_tokens=6).tokens
    assert back.generate(PROMPT, max_tokens=6).tokens == want != full


# -- configs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, name", [
    (dict(rope_theta=0.0), "rope_theta"), (dict(rope_theta=-1.0), "rope_theta"),
    (dict(rope_theta=float("nan")), "rope_theta"), (dict(rope_theta="1e4"), "rope_theta"),
    (dict(sliding_window=-2), "sliding_window"), (dict(sliding_window=2.5), "sliding_window"),
    (dict(layer_windows=(None, -1)), r"layer_windows\[1\]"),
    (dict(num_key_value_heads=0), "num_key_value_heads"), (dict(num_attention_heads=0), "num_attention_heads"),
    (dict(vocab_size=0), "vocab_size"), (dict(hidden_size=48.0), "hidden_size"),
    (dict(rms_norm_eps=float("inf")), "rms_norm_eps"),
    (dict(rope_scaling={"rope_type": "linear"}), "factor"),
    (dict(rope_scaling={"rope_type": "llama3", "factor": "x"}), "factor"),
    (dict(rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0}), "high_freq_factor"),
])
def test_config_values_that_cannot_run_are_refused(changes, name):
    with pytest.raises(ModelConfigError, match=name):
        SMALL.replace(**changes)


def test_config_json_without_a_scaling_factor_is_refused():
    hf = {"architectures": ["LlamaForCausalLM"], "vocab_size": 97, "hidden_size": 48, "intermediate_size": 80,
          "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2,
          "rope_scaling": {"rope_type": "linear"}}
    with pytest.raises(ModelConfigError, match="factor"):
        LlamaConfig.from_hf(hf)
    with pytest.raises(ModelConfigError, match="num_attention_heads"):
        LlamaConfig.from_hf({**hf, "rope_scaling": None, "num_attention_heads": 0})


def test_a_window_of_zero_is_no_window():
    assert SMALL.replace(sliding_window=0).window(0) is None
    assert SMALL.replace(sliding_window=4).window(1) == 4


# -- generate ----------------------------------------------------------------------------------

@pytest.mark.parametrize("prompt", [[1.7, 2.2], [1, 2.0], [True, 2], np.array([1.0, 2.0]), [np.float32(1), 2]])
def test_float_or_bool_token_ids_are_refused(device, prompt):
    with pytest.raises(pt.DTypeError, match="integers"):
        _tiny().generate(prompt, max_tokens=2)


def test_integer_ids_of_any_integer_type_give_the_same_tokens(device):
    m = _tiny()
    want = m.generate([1, 2], max_tokens=3).tokens
    assert m.generate([np.int64(1), np.int32(2)], max_tokens=3).tokens == want
    assert m.generate(np.array([1, 2], np.uint16), max_tokens=3).tokens == want
    assert m.generate((1, 2), max_tokens=3).tokens == want


@pytest.mark.parametrize("prompt, error", [([[1, 2, 3], [4, 5]], pt.ShapeError),
                                           (np.ones((2, 3), np.int64), pt.ShapeError),
                                           (None, pt.ArgumentError), (5, pt.ArgumentError)])
def test_a_prompt_that_is_not_one_sequence_of_ids_is_refused(prompt, error):
    with pytest.raises(error, match="prompt"):
        _tiny().generate(prompt, max_tokens=2)


@pytest.mark.parametrize("max_tokens", [2.0, None, True, "3"])
def test_max_tokens_must_be_an_int(max_tokens):
    with pytest.raises(pt.ArgumentError, match="max_tokens"):
        _tiny().generate([1], max_tokens=max_tokens)


def test_max_tokens_below_zero_is_a_value_error():
    with pytest.raises(pt.ArgumentValueError, match="max_tokens must be >= 0, got -1"):
        _tiny().generate([1], max_tokens=-1)


def test_sampling_must_be_a_sampling_config():
    with pytest.raises(pt.ArgumentError, match="sampling must be a SamplingConfig"):
        _tiny().generate([1], max_tokens=2, sampling=0.5)


def test_decoder_random_checks_its_arguments():
    with pytest.raises(pt.ArgumentError, match="cfg must be a LlamaConfig"):
        Decoder.random(5)
    for cap in (0, -3):
        with pytest.raises(pt.ArgumentValueError, match=f"capacity must be >= 1.*got {cap}"):
            Decoder.random("tiny", capacity=cap)
    with pytest.raises(pt.ArgumentError, match="capacity"):
        Decoder.random("tiny", capacity=8.0)


def test_quantize_refuses_an_unknown_format():
    with pytest.raises(pt.ArgumentValueError, match="unknown format 'q3_k'"):
        _tiny().quantize("q3_k")


# -- the jitted steps ----------------------------------------------------------------------------

def _step(m, token, pos, cache=None):
    return llama.decode_step(m.params, cache or m.new_cache(), token, pos, np.zeros(2, np.uint32), cfg=m.cfg,
                             sampling=GREEDY)


@pytest.mark.parametrize("pos", [3.0, 3.5, np.float32(2), True])
def test_a_float_position_is_refused(device, pos):
    m = _tiny()
    with pytest.raises(pt.DTypeError, match="position"):
        _step(m, np.array([1], np.int32), pos)
    with pytest.raises(pt.DTypeError, match="position"):
        llama.decode_forward(m.params, m.new_cache(), np.array([1]), pos, m.cfg)


def test_float_token_arrays_are_refused(device):
    m = _tiny()
    with pytest.raises(pt.DTypeError, match="token ids"):
        _step(m, np.array([1.0], np.float32), 0)
    with pytest.raises(pt.DTypeError, match="token ids"):
        _step(m, pt.asarray(np.array([1.0], np.float32)), 0)


@pytest.mark.parametrize("token, pos, what", [([1], 16, "position"), ([1], -1, "position"),
                                               ([-3], 0, "token ids"), ([256], 0, "token ids")])
def test_bad_host_indices_are_refused_at_the_call(device, token, pos, what):
    m = _tiny(16)
    with pytest.raises(pt.PootIndexError, match=what) as e:
        _step(m, np.array(token, np.int32), pos)          # raised here, before any host read
    assert not isinstance(e.value, pt.KernelIndexError) and "mode=" not in str(e.value)


def test_the_last_position_of_the_capacity_is_usable(device):
    m = _tiny(16)
    tok, logits, _ = _step(m, np.array([1], np.int32), 15)
    assert tok.numpy().shape == (1,) and np.isfinite(logits.numpy()).all()


def test_a_prompt_longer_than_the_cache_names_both_lengths(device):
    m = _tiny(16)
    toks = np.arange(20, dtype=np.int32)
    with pytest.raises(pt.ShapeError, match=r"prompt \(20 tokens\) is longer than the KV cache capacity 16"):
        llama.prefill_all_logits(m.params, m.new_cache(), toks, cfg=m.cfg)
    with pytest.raises(pt.ShapeError, match=r"prompt \(20 tokens\).*capacity 16"):
        llama.prefill(m.params, m.new_cache(), toks, 19, np.zeros(2, np.uint32), cfg=m.cfg, sampling=GREEDY)
    with pytest.raises(pt.ShapeError, match=r"prompt \(20 tokens\).*capacity 16"):
        llama.prefill_forward(m.params, m.new_cache(), pt.asarray(toks), m.cfg)


def test_prefill_refuses_a_last_position_outside_the_prompt(device):
    m = _tiny(16)
    with pytest.raises(pt.PootIndexError, match="last position"):
        llama.prefill(m.params, m.new_cache(), np.arange(8, dtype=np.int32), 8, np.zeros(2, np.uint32), cfg=m.cfg,
                      sampling=GREEDY)


# -- sampling settings -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, name", [(dict(temperature="hot"), "temperature"), (dict(temperature=None), "temperature"),
                                      (dict(top_k=None), "top_k"), (dict(top_k=2.5), "top_k"),
                                      (dict(top_k=True), "top_k"), (dict(top_p="0.9"), "top_p"),
                                      (dict(min_p=[0.1]), "min_p")])
def test_sampling_config_refuses_values_of_the_wrong_type(kw, name):
    with pytest.raises(pt.SamplingError, match=name):
        SamplingConfig(**kw)


def test_sampling_config_stores_plain_numbers():
    s = SamplingConfig(np.float32(0.5), np.int64(3), np.float64(0.9), 0)
    assert (type(s.temperature), type(s.top_k), type(s.top_p), type(s.min_p)) == (float, int, float, float)
    assert s == SamplingConfig(0.5, 3, 0.9, 0.0) and hash(s) == hash(SamplingConfig(0.5, 3, 0.9, 0.0))


@pytest.mark.parametrize("top_k", [5, 2**32, 2**70])
def test_a_top_k_of_the_vocabulary_or_more_keeps_every_token(device, top_k):
    l = np.random.default_rng(2).standard_normal((64, 5)).astype(np.float32)
    key = pt.random.key(4)
    want = pt.nn.sample(pt.asarray(l), key, top_k=0).numpy()
    np.testing.assert_array_equal(pt.nn.sample(pt.asarray(l), key, top_k=top_k).numpy(), want)


# -- the command line ----------------------------------------------------------------------------

@pytest.mark.parametrize("capacity", ["0", "-5"])
def test_generate_refuses_a_capacity_below_one(tmp_path, capsys, capacity):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    with pytest.raises(SystemExit) as exit_:
        main(["generate", str(tmp_path), "--prompt", "x", "--capacity", capacity])
    assert exit_.value.code == 2
    assert f"argument --capacity: must be at least 1, got {capacity}" in capsys.readouterr().err


def test_generate_quantize_error_has_no_runpy_location(tmp_path, capsys):
    _checkpoint_with_metaspace_tokenizer(tmp_path)      # hidden size 48: not a multiple of 32
    assert main(["generate", str(tmp_path), "--prompt", "The capital is", "--max-tokens", "2", "--device", "cpu",
                 "--quantize", "q8_0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("poot: error:") and "(at " not in err and "32" in err
