"""Loading a Hugging Face-style checkpoint directory (config.json + safetensors + tokenizer.json)."""
import json
import sys

import numpy as np
import pytest

import poot as pt
from poot.models import CheckpointError, Decoder, LlamaConfig, llama
from poot.models.weights import load_checkpoint, params_from_numpy, require

from .reference import Reference, random_checkpoint
from .test_llama import CONFIGS, PROMPT16

# each config (and each device) is a new signature of the jitted steps
pytestmark = pytest.mark.filterwarnings("ignore::poot.RetraceWarning")


def _write(tmp_path, hf, tensors):
    st = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed (pip install 'poot[llm]')")
    (tmp_path / "config.json").write_text(json.dumps(hf))
    names = sorted(tensors)
    half = len(names) // 2                     # two shards, as large checkpoints come
    st.save_file({k: tensors[k] for k in names[:half]}, str(tmp_path / "model-00001-of-00002.safetensors"))
    st.save_file({k: tensors[k] for k in names[half:]}, str(tmp_path / "model-00002-of-00002.safetensors"))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_load_checkpoint_matches_reference(device, tmp_path, dtype):
    import ml_dtypes

    hf = {**CONFIGS["qwen2"], "torch_dtype": dtype}
    tensors = random_checkpoint(hf, seed=9)
    if dtype == "bfloat16":
        tensors = {k: v.astype(ml_dtypes.bfloat16) for k, v in tensors.items()}
    _write(tmp_path, hf, tensors)
    cfg, params = load_checkpoint(str(tmp_path), capacity=32)
    assert cfg == LlamaConfig.from_hf(hf)
    want_dtype = pt.bfloat16 if dtype == "bfloat16" else pt.float32
    assert params["layers"][1]["w_down"].dtype == want_dtype
    ref = Reference(hf, {k: v.astype(np.float32) for k, v in tensors.items()}, bf16_matmul=dtype == "bfloat16")
    want = np.stack([ref.step(t, p) for p, t in enumerate(PROMPT16)])
    logits, _ = llama.prefill_all_logits(params, llama.new_cache(cfg, 32), np.array(PROMPT16, np.int32), cfg=cfg)
    tol = 2e-4 if dtype == "float32" else 0.03 * np.abs(want).max()
    np.testing.assert_allclose(logits.numpy(), want, rtol=tol, atol=tol)


def test_from_pretrained_with_tokenizer(tmp_path):
    pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    tk = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    hf = CONFIGS["qwen2"]
    _write(tmp_path, hf, random_checkpoint(hf, seed=1))
    vocab = {chr(ord("a") + i): i for i in range(26)} | {"[UNK]": 26}
    tok = tk.Tokenizer(tk.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tk.pre_tokenizers.Split("", "isolated")
    tok.save(str(tmp_path / "tokenizer.json"))
    m = Decoder.from_pretrained(str(tmp_path), capacity=64)
    assert m.tokenizer.encode("abc") == [0, 1, 2]
    g = m.generate("hello", max_tokens=5)
    assert len(g.tokens) == 5 and g.prompt_tokens == 5


def test_missing_files_and_extra(tmp_path, monkeypatch):
    with pytest.raises(CheckpointError, match="not a directory"):
        load_checkpoint(str(tmp_path / "nope"))
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS["qwen2"]))
    with pytest.raises(CheckpointError, match="no \\*.safetensors"):
        load_checkpoint(str(tmp_path))
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(CheckpointError, match=r"pip install 'poot\[llm\]'"):
        require("safetensors.numpy")


def test_missing_tensor(tmp_path):
    hf = CONFIGS["qwen2"]
    t = random_checkpoint(hf)
    del t["model.layers.1.mlp.up_proj.weight"]
    with pytest.raises(CheckpointError, match="up_proj"):
        params_from_numpy(LlamaConfig.from_hf(hf), t, 16)
