"""`poot generate` and `poot bench decode` end to end on the CPU (a tiny checkpoint, the tiny preset)."""
import json

import pytest

from poot.cli import main

from .reference import random_checkpoint
from .test_llama import CONFIGS


def test_generate_streams_and_reports_rates(tmp_path, capsys):
    st = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    tk = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    hf = {**CONFIGS["qwen2"], "eos_token_id": None}
    (tmp_path / "config.json").write_text(json.dumps(hf))
    st.save_file(random_checkpoint(hf, seed=5), str(tmp_path / "model.safetensors"))
    vocab = {chr(ord("a") + i): i for i in range(26)} | {"[UNK]": 26}
    tok = tk.Tokenizer(tk.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tk.pre_tokenizers.Split("", "isolated")
    tok.save(str(tmp_path / "tokenizer.json"))
    assert main(["generate", str(tmp_path), "--prompt", "hello", "--max-tokens", "6", "--device", "cpu",
                 "--temperature", "0.8", "--top-p", "0.9", "--seed", "3"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("hello")
    assert "prefill: 5 tokens" in out.err and "decode: 5 tokens" in out.err and "tokens/s" in out.err


def test_bench_decode_tiny(capsys):
    assert main(["bench", "decode", "--preset", "tiny", "--device", "cpu", "--context", "16",
                 "--tokens", "4"]) == 0
    out = capsys.readouterr().out
    assert "tokens/s" in out and "ms/token" in out and "of the bound" in out and "greedy" in out
    assert main(["bench", "decode", "--preset", "tiny", "--device", "cpu", "--context", "16", "--tokens", "4",
                 "--temperature", "0.8", "--top-p", "0.9", "--seed", "3"]) == 0
    assert "temperature 0.8, top-p 0.9" in capsys.readouterr().out
    assert main(["bench", "decode", "--preset", "tiny", "--device", "cpu", "--context", "16", "--tokens", "4",
                 "--quantize", "q4_0"]) == 0
    assert "q4_0) on cpu" in capsys.readouterr().out


def test_generate_missing_dir(tmp_path, capsys):
    assert main(["generate", str(tmp_path / "none"), "--prompt", "x"]) == 1
    assert "config.json" in capsys.readouterr().err
