"""Per-token decode latency of the poot.models Llama-family decoder with random weights of preset
shapes, at KV contexts of 128 and 1024 positions, beside a transformers/PyTorch row where installed.

Each step is one call of the jitted decode step (`poot.models.llama.decode_step`: all layers, the LM
head and greedy sampling) plus the read of the next token, i.e. what `poot generate` pays per token.
poot attends over the whole cache (capacity = context + steps) every step. The extra_info of each
row carries ms/token, tokens/s, the weight bytes a token reads and the fraction of the weight-bandwidth
bound (those bytes / a measured device copy bandwidth).

    POOT_BENCH_DEVICE=cpu python -m pytest -q -s benchmarks/bench_decode.py \\
        --benchmark-group-by=group --benchmark-columns=min,median,rounds

env: POOT_BENCH_DEVICE (cpu, cuda, wgpu, vulkan, rocm; default cpu), POOT_BENCH_PRESETS (a comma
list; default tiny,qwen2.5-0.5b; on a GPU add llama-3.2-1b,llama-3-8b), POOT_BENCH_CONTEXTS (default
128,1024), POOT_BENCH_OUT (append one JSON record per row to this file).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

DEVICE = os.environ.get("POOT_BENCH_DEVICE", "cpu")
PRESETS = [p for p in os.environ.get("POOT_BENCH_PRESETS", "tiny,qwen2.5-0.5b").split(",") if p]
CONTEXTS = [int(c) for c in os.environ.get("POOT_BENCH_CONTEXTS", "128,1024").split(",") if c]
STEPS = 64              # decode positions available after the context (rounds + warmup stay below)
_decoders: dict = {}
_bandwidth: dict = {}


def _decoder(preset):
    import poot as pt
    from poot.models import Decoder

    if preset not in _decoders:
        try:
            pt.device(DEVICE)
        except pt.DeviceUnavailableError as e:
            pytest.skip(f"device {DEVICE} is unavailable: {e}")
        _decoders.clear()                   # one preset's weights in memory at a time
        _decoders[preset] = Decoder.random(preset, capacity=max(CONTEXTS) + STEPS, device=DEVICE)
    return _decoders[preset]


def _copy_bw():
    from poot.models.cli import copy_bandwidth

    if DEVICE not in _bandwidth:
        _bandwidth[DEVICE] = copy_bandwidth(DEVICE)
    return _bandwidth[DEVICE]


def _record(benchmark, preset, cfg, context, impl):
    ms = benchmark.stats.stats.median * 1e3
    wbytes = cfg.weight_bytes_per_token()
    bound_ms = 1e3 * wbytes / _copy_bw() if impl == "poot" else float("nan")
    info = {"preset": preset, "device": DEVICE, "impl": impl, "context": context, "ms_per_token": ms,
            "tokens_per_s": 1e3 / ms, "weight_bytes_per_token": wbytes, "bound_ms": bound_ms,
            "fraction_of_bound": bound_ms / ms}
    benchmark.extra_info.update(info)
    print(f"\n{preset} {impl} on {DEVICE} ctx {context}: {ms:.2f} ms/token, {1e3 / ms:.1f} tokens/s"
          + (f", {100 * info['fraction_of_bound']:.1f}% of the weight-bandwidth bound" if impl == "poot" else ""))
    out = os.environ.get("POOT_BENCH_OUT")
    if out:
        rows = json.load(open(out)) if os.path.exists(out) else []
        rows.append({"group": benchmark.group, **info})
        with open(out, "w") as f:
            json.dump(rows, f, indent=1)


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_decode_poot(benchmark, preset, context):
    import poot as pt
    from poot.models import GREEDY, llama

    m = _decoder(preset)
    benchmark.group = f"decode-{preset}-ctx{context}-{DEVICE}"
    key = np.zeros(2, np.uint32)
    with pt.device(m.device):
        cache = llama.new_cache(m.cfg, context + STEPS)
        state = {"tok": pt.asarray(np.array([1], np.int32)), "cache": cache, "pos": context}

        def step():
            tok, _, state["cache"] = llama.decode_step(m.params, state["cache"], state["tok"], state["pos"],
                                                       key, cfg=m.cfg, sampling=GREEDY)
            tok.numpy()
            state["tok"] = tok
            state["pos"] = context + (state["pos"] - context + 1) % (STEPS - 1)

        step()                      # trace and compile
        benchmark.pedantic(step, rounds=16 if m.cfg.num_parameters() > 1e8 else 64, warmup_rounds=2)
    _record(benchmark, preset, m.cfg, context, "poot")


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_decode_torch(benchmark, preset, context):
    """transformers with the same config (random weights, bf16/f32 as the preset) and a DynamicCache
    holding `context` positions; each round decodes one token and crops the cache back."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from poot.models import preset as get_preset
    from poot.models.weights import hf_config_dict

    cfg = get_preset(preset)
    dev = {"cpu": "cpu", "cuda": "cuda"}.get(DEVICE)
    if dev is None or (dev == "cuda" and not torch.cuda.is_available()):
        pytest.skip(f"no PyTorch backend for device {DEVICE}")
    benchmark.group = f"decode-{preset}-ctx{context}-{DEVICE}"
    hf = transformers.AutoConfig.for_model(
        "qwen2" if cfg.architecture.startswith("Qwen2") else "llama",
        **{k: v for k, v in hf_config_dict(cfg).items() if k not in ("architectures", "torch_dtype")})
    dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
    with torch.device(dev):
        try:
            model = transformers.AutoModelForCausalLM.from_config(hf, dtype=dtype)       # transformers >= 4.56
        except TypeError:
            model = transformers.AutoModelForCausalLM.from_config(hf, torch_dtype=dtype)
        model = model.to(dtype).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, context), device=dev)
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        cache = out.past_key_values
        tok = out.logits[:, -1:].argmax(-1)

        def step():
            o = model(tok, past_key_values=cache, use_cache=True)
            o.logits[:, -1].argmax(-1).item()
            cache.crop(context)

        step()
        benchmark.pedantic(step, rounds=16, warmup_rounds=2)
    _record(benchmark, preset, cfg, context, "torch")
    del model
