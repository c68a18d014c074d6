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


def _checkpoint_with_metaspace_tokenizer(path):
    """A tiny checkpoint whose tokenizer marks a word's leading space on the token (SentencePiece's ▁),
    and whose model always continues with "▁Paris" (the LM head scores only that token)."""
    st = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    tk = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    hf = {**CONFIGS["qwen2"], "eos_token_id": None}
    (path / "config.json").write_text(json.dumps(hf))
    t = random_checkpoint(hf, seed=5)
    t["lm_head.weight"][:] = 0
    t["lm_head.weight"][4] = 1.0
    t["model.norm.weight"][:] = 1.0
    st.save_file(t, str(path / "model.safetensors"))
    vocab = {"<unk>": 0, "\u2581The": 1, "\u2581capital": 2, "\u2581is": 3, "\u2581Paris": 4}
    tok = tk.Tokenizer(tk.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tk.pre_tokenizers.Metaspace()
    tok.decoder = tk.decoders.Metaspace()
    tok.save(str(path / "tokenizer.json"))


def test_generate_keeps_the_leading_space_of_streamed_tokens(tmp_path, capsys):
    _checkpoint_with_metaspace_tokenizer(tmp_path)
    assert main(["generate", str(tmp_path), "--prompt", "The capital is", "--max-tokens", "2",
                 "--device", "cpu"]) == 0
    assert capsys.readouterr().out == "The capital is Paris Paris\n"
    assert main(["generate", str(tmp_path), "--prompt", "The capital is", "--max-tokens", "0",
                 "--device", "cpu"]) == 0
    assert capsys.readouterr().out == "The capital is\n"


def test_generate_checks_max_tokens_and_capacity_first(tmp_path, capsys, monkeypatch):
    _checkpoint_with_metaspace_tokenizer(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["generate", str(tmp_path), "--prompt", "The", "--max-tokens", "-3"])
    assert exit_.value.code == 2
    assert "argument --max-tokens: must be at least 0, got -3" in capsys.readouterr().err
    from poot.models import Decoder

    def never(*a, **k):
        raise AssertionError("loaded the weights before checking the capacity")

    monkeypatch.setattr(Decoder, "from_pretrained", never)
    assert main(["generate", str(tmp_path), "--prompt", "The capital is", "--max-tokens", "9",
                 "--capacity", "8"]) == 1
    err = capsys.readouterr().err
    assert "--max-tokens 9" in err and "capacity 8" in err


@pytest.mark.parametrize("flag, value, message", [("--tokens", "0", "must be at least 1, got 0"),
                                                  ("--tokens", "-1", "must be at least 1, got -1"),
                                                  ("--context", "-5", "must be at least 0, got -5"),
                                                  ("--context", "x", "expected an integer, got 'x'")])
def test_bench_decode_refuses_bad_counts_in_one_line(capsys, flag, value, message):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "decode", "--preset", "tiny", "--device", "cpu", flag, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: {message}" in err and "Traceback" not in err
