"""Per-token decode latency of the poot.models Llama-family decoder with random weights of preset shapes, at
KV contexts of 128 and 1024 positions, beside transformers/PyTorch with the same config where installed.

poot's figure is what `poot generate` pays per token: `Decoder.generate` of STEPS tokens after a prompt of
`context` random tokens, its decode time over the tokens decoded (each a call of the jitted decode step:
all layers, the LM head and greedy sampling, launched one step ahead of the token's read); it attends
over the whole cache (capacity = context + steps) every step. transformers runs the same config (random
weights, the preset's dtype) with a DynamicCache holding `context` positions; each step decodes one token
and crops the cache back ("torch"); on CUDA also `generate` with a static cache, which compiles its
decoding forward with torch.compile and CUDA graphs ("torch_compile"). `--sampling top-p` draws every
token after temperature 0.8 and top-p 0.9 on both sides (poot: `pt.nn.sample`, one kernel; transformers
eager: softmax, sort, cumsum and torch.multinomial as its samplers do; `generate(do_sample=True)`)
instead of greedy argmax. Rows carry the weight bytes a
token reads (`bytes`) and, on every device, the weight-bandwidth bound (`bound_s`: those bytes over the
device's measured copy bandwidth).

    python -m benchmarks.bench_decode --presets tiny --contexts 128 --json out.json
    python -m benchmarks.bench_decode --devices cuda --presets qwen2.5-0.5b,llama-3.2-1b,llama-3-8b
    python -m benchmarks.bench_decode --devices cuda --presets qwen2.5-0.5b --sampling greedy,top-p
"""
from __future__ import annotations

import itertools

import numpy as np

from benchmarks import common as C

STEPS = 64              # decode positions available after the context
SAMPLINGS = {"greedy": {}, "top-p": {"temperature": 0.8, "top_p": 0.9}}   # name -> settings


def _config(sampling: str):
    from poot.models import SamplingConfig
    from poot.models.sampling import GREEDY

    return SamplingConfig(**SAMPLINGS[sampling]) if SAMPLINGS[sampling] else GREEDY


def poot_step_s(args, preset: str, device: str, context: int, sampling: str = "greedy"):
    import poot as pt
    from poot.models import Decoder
    from poot.models.weights import bytes_per_token

    m = Decoder.random(preset, capacity=context + STEPS, device=device)
    prompt = np.random.default_rng(0).integers(0, m.cfg.vocab_size, context)
    cfg = _config(sampling)
    with pt.device(m.device):
        m.generate(prompt, max_tokens=4, sampling=cfg, stop_at_eos=False)          # traces and compiles
        per_token = []
        for i in range(max(args.warmup, 1) + args.repeat):
            g = m.generate(prompt, max_tokens=STEPS, sampling=cfg, seed=i, stop_at_eos=False)
            per_token.append(g.decode_s / (len(g.tokens) - 1))
    return C.median(per_token[max(args.warmup, 1):]), bytes_per_token(m.params, m.cfg)


def _hf_model(preset: str, where: str):
    """transformers' model of the preset's config (random weights, the preset's dtype) on `where`."""
    import torch
    import transformers

    from poot.models import preset as get_preset
    from poot.models.weights import hf_config_dict

    cfg = get_preset(preset)
    hf = transformers.AutoConfig.for_model(
        "qwen2" if cfg.architecture.startswith("Qwen2") else "llama",
        **{k: v for k, v in hf_config_dict(cfg).items() if k not in ("architectures", "torch_dtype")})
    dtype = torch.bfloat16 if cfg.dtype == "bfloat16" else torch.float32
    with torch.device(where):
        try:
            model = transformers.AutoModelForCausalLM.from_config(hf, dtype=dtype)       # transformers >= 4.56
        except TypeError:
            model = transformers.AutoModelForCausalLM.from_config(hf, torch_dtype=dtype)
        return model.to(dtype).eval(), cfg, dtype


def _torch_where(device: str):
    torch, transformers = C.optional("torch"), C.optional("transformers")
    where = {"cpu": "cpu", "cuda": "cuda"}.get(device)
    if torch is None or transformers is None or where is None or (where == "cuda" and not torch.cuda.is_available()):
        C.note_once(f"skipping baseline torch on {device}: transformers/PyTorch (with that device) is not installed")
        return None
    return where


def _torch_next(torch, logits, sampling: str):
    """The next token from a row of logits as transformers' samplers draw it (greedy: argmax)."""
    if not SAMPLINGS[sampling]:
        return logits.argmax(-1)
    x = logits / SAMPLINGS[sampling]["temperature"]
    s, i = torch.sort(x, descending=True)
    p = torch.softmax(s, -1)
    drop = p.cumsum(-1) - p > SAMPLINGS[sampling]["top_p"]
    x = torch.full_like(x, -float("inf")).scatter(-1, i, s.masked_fill(drop, -float("inf")))
    return torch.multinomial(torch.softmax(x, -1), 1)[..., 0]


def torch_step_s(args, preset: str, device: str, context: int, sampling: str = "greedy"):
    """transformers eager with a DynamicCache: one token decoded, then the cache cropped back."""
    where = _torch_where(device)
    if where is None:
        return None
    import torch

    model, cfg, _ = _hf_model(preset, where)
    ids = torch.randint(0, cfg.vocab_size, (1, context), device=where)
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        cache, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)

        def step():
            o = model(tok, past_key_values=cache, use_cache=True)
            _torch_next(torch, o.logits[:, -1], sampling).item()
            cache.crop(-1)        # drop the step's token: every step decodes at `context`

        return C.median(C.time_call(step, repeat=args.repeat, number=1, warmup=2))


def torch_compiled_step_s(args, preset: str, device: str, context: int, sampling: str = "greedy"):
    """transformers' own fastest decode: `generate` with `cache_implementation="static"`, which compiles
    the decoding forward with torch.compile (CUDA graphs) by itself. Per token: the time of a generate of
    1 + STEPS tokens less that of one token (the prefill and the first token), over STEPS; every token is
    greedy or drawn (`sampling`) and EOS cannot end it early (min_new_tokens)."""
    where = _torch_where(device)
    if where is None or where != "cuda":
        return None
    import time

    import torch

    model, cfg, _ = _hf_model(preset, where)
    ids = torch.randint(0, cfg.vocab_size, (1, context), device=where)
    draw = dict(do_sample=True, top_k=0, **SAMPLINGS[sampling]) if SAMPLINGS[sampling] else dict(do_sample=False)

    def generate(new: int) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                       cache_implementation="static", pad_token_id=0, **draw)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    with torch.inference_mode():
        for _ in range(2):                    # compiles (the first generate) and warms the CUDA graphs
            generate(1 + STEPS)
        per_token = [(generate(1 + STEPS) - generate(1)) / STEPS for _ in range(max(args.repeat // 2, 2))]
    return C.median(per_token)


def main(argv=None) -> dict:
    ap = C.parser(__doc__, repeat=16)
    ap.add_argument("--presets", type=C.comma_list, default=["tiny", "qwen2.5-0.5b"],
                    help="poot.models presets (on a GPU add llama-3.2-1b, llama-3-8b)")
    ap.add_argument("--contexts", type=lambda t: [int(c) for c in C.comma_list(t)], default=[128, 1024])
    ap.add_argument("--sampling", type=C.comma_list, default=["greedy"],
                    help=f"how each token is chosen, of {', '.join(SAMPLINGS)}")
    ap.add_argument("--no-torch", action="store_true", help="skip the transformers/PyTorch baselines")
    ap.add_argument("--no-compile", action="store_true",
                    help="skip the torch.compile + StaticCache baseline (CUDA; compiling takes a minute)")
    args = ap.parse_args(argv)
    from poot.models.cli import copy_bandwidth

    rows = []
    for device in C.available(args.devices):
        bandwidth = copy_bandwidth(device)
        for preset in args.presets:
            for context, sampling in itertools.product(args.contexts, args.sampling):
                if sampling not in SAMPLINGS:
                    ap.error(f"--sampling: {sampling!r} is none of {', '.join(SAMPLINGS)}")
                at = (args, preset, device, context, sampling)
                poot_s, wbytes = poot_step_s(*at)
                base = {} if args.no_torch else {
                    "torch": torch_step_s(*at),
                    "torch_compile": None if args.no_compile else torch_compiled_step_s(*at)}
                rows += C.rows_against("decode-token", {"preset": preset, "context": context, "sampling": sampling},
                                       device, poot_s, base, bytes=wbytes, bound_s=wbytes / bandwidth, unit="s/token")
    return C.finish(args, "bench_decode", rows)


if __name__ == "__main__":
    main()
