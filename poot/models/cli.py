"""`poot generate` and `poot bench decode`: the command line of poot.models (argparse only at import;
the model code is imported when a command runs)."""
from __future__ import annotations

import sys
import time


def add_commands(sub) -> None:
    g = sub.add_parser("generate", help="generate text with a Llama-family Hugging Face checkpoint "
                       "(config.json, *.safetensors, tokenizer.json); needs pip install 'poot[llm]'")
    g.add_argument("model_dir")
    g.add_argument("--prompt", required=True)
    g.add_argument("--device", default=None, help="cpu, cuda, wgpu, vulkan, rocm (default: poot's default)")
    g.add_argument("--max-tokens", type=_count(0), default=64)
    _sampling_args(g)
    g.add_argument("--capacity", type=_count(1), default=None,
                   help="KV cache length: prompt + max tokens must fit (default: min(max_position_embeddings, 4096))")
    _kv_dtype_arg(g)
    _quantize_arg(g)
    g.set_defaults(func=_cmd_generate)

    b = sub.add_parser("bench", help="benchmarks of poot.models")
    bsub = b.add_subparsers(dest="bench", required=True)
    d = bsub.add_parser("decode", help="decode tokens/s with random weights of a preset's shapes, and "
                        "the fraction of the weight-bandwidth bound")
    d.add_argument("--preset", default="qwen2.5-0.5b", help="tiny, qwen2.5-0.5b, llama-3.2-1b, llama-3-8b")
    d.add_argument("--device", default=None)
    d.add_argument("--context", type=_count(0), default=128, help="KV cache positions attended per step")
    d.add_argument("--tokens", type=_count(1), default=32, help="decode steps timed")
    d.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default=None,
                   help="weights (default: the preset's)")
    _kv_dtype_arg(d)
    _quantize_arg(d)
    _sampling_args(d)
    d.set_defaults(func=_cmd_bench_decode)


def _count(least: int):
    """An argparse type: an int of at least `least`, else argparse's one-line usage error."""
    import argparse

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {n}")
        return n

    parse.__name__ = "count"
    return parse


def _kv_dtype_arg(p) -> None:
    p.add_argument("--kv-dtype", choices=("float32", "bfloat16", "float16"), default="float32",
                   help="the KV cache's dtype (16-bit halves what each decode step reads)")


def _quantize_arg(p) -> None:
    p.add_argument("--quantize", choices=("int8", "q8_0", "q4_0"), default=None,
                   help="store the layers' matrices quantized (pt.quant; default: as loaded)")


def _sampling_args(p) -> None:
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy (default)")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--min-p", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)


def _quantize_for_the_command_line(m, fmt: str) -> None:
    """m.quantize(fmt), its error without the "(at file:line)" a Python caller gets: from the command
    line that line is runpy's, which tells the user nothing."""
    from poot.errors import PootError

    try:
        m.quantize(fmt)
    except PootError as e:
        if e.args and isinstance(e.args[0], str):
            e.args = (e.args[0].split("\n  (at ", 1)[0],) + e.args[1:]
        raise


def _cmd_generate(args) -> int:
    import os

    import poot as pt
    from poot.errors import PootError
    from poot.models import Decoder, SamplingConfig, Tokenizer
    from poot.models.config import LlamaConfig

    cfg = LlamaConfig.from_json(args.model_dir)
    s = SamplingConfig(args.temperature, args.top_k, args.top_p, args.min_p)
    tok_path = os.path.join(args.model_dir, "tokenizer.json")
    if not os.path.exists(tok_path):
        raise PootError(f"{args.model_dir} has no tokenizer.json")
    # the prompt's length and the capacity are known before the weights are read: a prompt too long
    # fails now, not after loading and compiling
    tokenizer = Tokenizer(tok_path)
    ids = tokenizer.encode(args.prompt)
    cap = args.capacity if args.capacity is not None else min(cfg.max_position_embeddings, 4096)
    if len(ids) + args.max_tokens > cap:
        raise PootError(f"the prompt ({len(ids)} tokens) + --max-tokens {args.max_tokens} exceed the KV cache "
                        f"capacity {cap}; pass a larger --capacity or a smaller --max-tokens")
    t0 = time.perf_counter()
    m = Decoder.from_pretrained(args.model_dir, device=args.device, capacity=cap)
    m.cache_dtype = getattr(pt, args.kv_dtype)
    if args.quantize:
        _quantize_for_the_command_line(m, args.quantize)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    m.generate(ids, max_tokens=min(2, args.max_tokens), sampling=s, stop_at_eos=False)      # trace and compile
    compile_s = time.perf_counter() - t0
    print(f"[{m.cfg.architecture} on {m.device}: loaded in {load_s:.1f} s, compiled in {compile_s:.1f} s]",
          file=sys.stderr)
    sys.stdout.write(args.prompt)
    sys.stdout.flush()
    # each new piece of text is the decoding of prompt + tokens so far minus what is shown: a token decoded
    # alone loses what depends on its neighbours (SentencePiece's leading space, say)
    out, shown = [], [m.tokenizer.decode(ids)]

    def on_token(t):
        out.append(t)
        text = m.tokenizer.decode(ids + out)
        if not text.endswith("\ufffd"):          # an incomplete UTF-8 sequence: wait for more
            sys.stdout.write(text[len(shown[0]):])
            sys.stdout.flush()
            shown[0] = text

    g = m.generate(ids, max_tokens=args.max_tokens, sampling=s, seed=args.seed, on_token=on_token)
    print()
    print(f"prefill: {g.prompt_tokens} tokens in {g.prefill_s * 1e3:.1f} ms ({g.prefill_tokens_per_s:.1f} tokens/s)"
          f"; decode: {max(len(g.tokens) - 1, 0)} tokens in {g.decode_s * 1e3:.1f} ms "
          f"({g.decode_tokens_per_s:.1f} tokens/s)", file=sys.stderr)
    return 0


def copy_bandwidth(device, nbytes: int = 256 << 20, reps: int = 5) -> float:
    """Bytes/s of a device copy (read + write) of an nbytes float32 array, best of `reps`."""
    import poot as pt

    with pt.device(device):
        x = pt.ones((nbytes // 4,), dtype=pt.float32)
        pt.realize(x)

        @pt.jit
        def copy(a):
            return a + 0.0

        copy(x).numpy()[:1]
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            y = copy(x)
            pt.realize(y)
            float(y[0])
            best = min(best, time.perf_counter() - t0)
            del y
    return 2 * nbytes / best


def bench_decode(preset: str, device=None, context: int = 128, tokens: int = 32, dtype=None,
                 out=None, kv_dtype: str = "float32", sampling=None, seed: int = 0, quantize=None) -> dict:
    """Decode `tokens` steps after a prompt of `context` random tokens (over a cache of context + tokens + 1
    positions), with random weights of `preset`'s shapes, the way `poot generate` does (each step launched
    before the last token is read), sampling with `sampling` (a SamplingConfig; default greedy), with the
    layers' matrices quantized to `quantize` if given. Returns the numbers it prints."""
    import numpy as np

    import poot as pt

    from poot.models import GREEDY, Decoder, preset as get_preset
    from poot.models.weights import bytes_per_token

    sampling = sampling or GREEDY
    cfg = get_preset(preset)
    if dtype:
        cfg = cfg.replace(dtype=dtype)
    cap = max(context, 1) + tokens + 1
    t0 = time.perf_counter()
    m = Decoder.random(cfg, capacity=cap, device=device)
    m.cache_dtype = getattr(pt, kv_dtype)
    if quantize:
        m.quantize(quantize)
    init_s = time.perf_counter() - t0
    dev = m.device
    prompt = np.random.default_rng(0).integers(0, cfg.vocab_size, max(context, 1))    # generate needs one
    with pt.device(dev):
        t0 = time.perf_counter()
        m.generate(prompt, max_tokens=2, sampling=sampling, stop_at_eos=False)   # traces and compiles both steps
        compile_s = time.perf_counter() - t0
        g = m.generate(prompt, max_tokens=tokens + 1, sampling=sampling, seed=seed, stop_at_eos=False)
    ms = 1e3 * g.decode_s / (len(g.tokens) - 1)
    bw = copy_bandwidth(dev)
    wbytes = bytes_per_token(m.params, cfg)
    bound_ms = 1e3 * wbytes / bw
    r = {"preset": preset, "device": str(dev), "dtype": cfg.dtype, "quantize": quantize, "context": context,
         "sampling": str(sampling),
         "params": cfg.num_parameters(), "init_s": init_s, "compile_s": compile_s,
         "ms_per_token": ms, "tokens_per_s": 1e3 / ms, "weight_bytes_per_token": wbytes,
         "copy_bandwidth_GBps": bw / 1e9, "bound_ms": bound_ms, "fraction_of_bound": bound_ms / ms}
    print(f"{preset} ({cfg.num_parameters() / 1e6:.0f}M params, {quantize or cfg.dtype}) on {dev}, context {context}, "
          f"{sampling}: "
          f"{r['tokens_per_s']:.1f} tokens/s, {ms:.2f} ms/token (over {tokens} tokens); "
          f"weights {wbytes / 1e6:.3g} MB/token at a measured copy bandwidth of {bw / 1e9:.1f} GB/s "
          f"-> bound {bound_ms:.2f} ms/token, {100 * r['fraction_of_bound']:.1f}% of the bound "
          f"[random init {init_s:.1f} s, first generate (trace+compile) {compile_s:.1f} s]", file=out or sys.stdout)
    return r


def _cmd_bench_decode(args) -> int:
    from poot.models import SamplingConfig

    s = SamplingConfig(args.temperature, args.top_k, args.top_p, args.min_p)
    bench_decode(args.preset, args.device, args.context, args.tokens, args.dtype, kv_dtype=args.kv_dtype,
                 sampling=s, seed=args.seed, quantize=args.quantize)
    return 0
