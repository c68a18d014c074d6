"""Per-token decode latency as a pytest-benchmark suite: poot's Llama-family decoder (random weights of
a preset's shapes) at KV contexts 128, 1k and 4k, beside transformers' model of the same config on the
same device where torch and transformers are installed.

One benchmarked call is one token in the steady state of a decode loop:
- poot: `Decoder.generate`'s loop (poot/models/generate.py): the jitted step for token n + 1 is launched
  from token n on the device, then token n is read on the host;
- transformers: one forward of one token over a DynamicCache of `context` positions (cropped back after
  each call), and the argmax read on the host.

    python -m pytest benchmarks/suites/test_decode.py --presets qwen2.5-0.5b --devices cuda \\
        --contexts 128,1024,4096 --benchmark-json decode.json
"""
from __future__ import annotations

import numpy as np
import pytest

STEPS = 64              # positions a benchmark cycles through after the context


class PootDecodeLoop:
    """A decode loop one token ahead, as generate's: each call launches a step and reads the token of
    the step launched by the call before; positions cycle through [context, context + STEPS)."""

    def __init__(self, preset: str, device: str, context: int):
        import poot as pt
        from poot.models import GREEDY, Decoder, llama

        self.pt, self.llama, self.greedy = pt, llama, GREEDY
        self.model = Decoder.random(preset, capacity=context + STEPS, device=device)
        self.context, self.step_no = context, 0
        self.key = np.zeros(2, np.uint32)
        with pt.device(self.model.device):
            self.cache = self.model.new_cache()
            self.ahead = self._launch(pt.asarray(np.array([1], np.int32)))

    def _launch(self, tok):
        pos = self.context + self.step_no % STEPS
        self.step_no += 1
        tok, _, self.cache = self.llama.decode_step(self.model.params, self.cache, tok, pos, self.key,
                                                    cfg=self.model.cfg, sampling=self.greedy)
        return tok.copy_to_host_async()

    def __call__(self) -> int:
        with self.pt.device(self.model.device):
            nxt = self._launch(self.ahead)
            token = int(self.ahead.numpy()[0])
            self.ahead = nxt
        return token


def _poot_available(device: str):
    import poot as pt

    try:
        pt.device(device)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device {device} is unavailable here: {e}")


def test_poot_decode_token(benchmark, preset, context, device):
    from poot.models.weights import bytes_per_token

    _poot_available(device)
    loop = PootDecodeLoop(preset, device, context)
    benchmark.extra_info.update(preset=preset, context=context, device=device,
                                weight_bytes=bytes_per_token(loop.model.params, loop.model.cfg))
    token = benchmark.pedantic(loop, rounds=32, iterations=1, warmup_rounds=4)
    assert 0 <= token < loop.model.cfg.vocab_size


def test_transformers_decode_token(benchmark, preset, context, device):
    torch = pytest.importorskip("torch", reason="the transformers row needs torch")
    pytest.importorskip("transformers", reason="the transformers row needs transformers")
    where = {"cpu": "cpu", "cuda": "cuda"}.get(device)
    if where is None or (where == "cuda" and not torch.cuda.is_available()):
        pytest.skip(f"transformers does not run on {device} here")
    from benchmarks.bench_decode import _hf_model

    model, cfg, _ = _hf_model(preset, where)
    ids = torch.randint(0, cfg.vocab_size, (1, context), device=where)
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        cache, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)

        def step() -> int:
            o = model(tok, past_key_values=cache, use_cache=True)
            token = int(o.logits[:, -1].argmax(-1).item())
            cache.crop(-1)        # every call decodes at `context`
            return token

        benchmark.extra_info.update(preset=preset, context=context, device=device, baseline="transformers")
        token = benchmark.pedantic(step, rounds=16, iterations=1, warmup_rounds=2)
    assert 0 <= token < cfg.vocab_size
