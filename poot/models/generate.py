"""`Decoder`: parameters, config, optional tokenizer and the prefill/decode loop with timing."""
from __future__ import annotations

import dataclasses
import os
import time

import numpy as np

import poot as pt

from poot.errors import ArgumentError, ArgumentValueError, DTypeError, PootError, ShapeError
from poot.models import llama
from poot.models.config import LlamaConfig, preset
from poot.models.sampling import GREEDY, SamplingConfig
from poot.models.weights import CheckpointError, load_checkpoint, quantize_params, random_params, require


@dataclasses.dataclass
class Generation:
    """The generated token ids (prompt excluded) and timings in seconds."""
    tokens: list
    prompt_tokens: int
    prefill_s: float
    decode_s: float
    first_call_s: float = 0.0        # traces and compiles, not in the rates

    @property
    def prefill_tokens_per_s(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s else float("nan")

    @property
    def decode_tokens_per_s(self) -> float:
        n = len(self.tokens) - 1      # the first token comes from the prefill
        return n / self.decode_s if n > 0 and self.decode_s else float("nan")


class Tokenizer:
    """A Hugging Face `tokenizer.json`, through the `tokenizers` package."""

    def __init__(self, path: str):
        tk = require("tokenizers")
        self._tok = tk.Tokenizer.from_file(path)

    def encode(self, text: str) -> list:
        return list(self._tok.encode(text).ids)

    def decode(self, ids) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=True)


def _bucket(n: int, capacity: int) -> int:
    """The prompt length padded to a power of two (>= 16), so prompts of similar lengths share one
    compiled prefill; never beyond the cache capacity."""
    b = 16
    while b < n:
        b *= 2
    return b if b <= capacity else n


def _is_int(x) -> bool:
    """An integer that is not a bool (True as a token id or count is a mistaken argument, not 1)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _token_id(t, i: int) -> int:
    """Entry i of a prompt as a Python int: a float id is refused, as NumPy refuses float indices (int()
    would truncate 1.7 to 1 and run another prompt), and a nested sequence is a batch, which generate
    does not take."""
    if _is_int(t):
        return int(t)
    if isinstance(t, (list, tuple, np.ndarray)):
        raise ShapeError(f"generate: prompt entry {i} is a sequence ({t!r}): generate takes one prompt (a 1-D "
                         f"sequence of token ids); call it once per prompt")
    raise DTypeError(f"generate: token ids must be integers, got {t!r} ({type(t).__name__}) at prompt entry {i}")


def _prompt_ids(prompt) -> list:
    """The token ids of a prompt given as a 1-D list, tuple or integer array (not text)."""
    if isinstance(prompt, pt.Array):
        prompt = prompt.numpy()
    if isinstance(prompt, np.ndarray):
        if prompt.ndim != 1:
            raise ShapeError(f"generate: the prompt must be 1-D token ids, got an array of shape {prompt.shape} "
                             f"(generate takes one prompt; call it once per prompt)")
        if prompt.dtype.kind not in "iu":
            raise DTypeError(f"generate: token ids must be integers, got an array of {prompt.dtype}")
        return [int(t) for t in prompt]
    if not isinstance(prompt, (list, tuple, range)):
        raise ArgumentError(f"generate: prompt must be text or a 1-D sequence of token ids (list, tuple or "
                            f"integer array), got {prompt!r} ({type(prompt).__name__})")
    return [_token_id(t, i) for i, t in enumerate(prompt)]


def _max_tokens(n) -> int:
    if not _is_int(n):
        raise ArgumentError(f"generate: max_tokens must be an int >= 0, got {n!r} ({type(n).__name__})")
    if n < 0:
        raise ArgumentValueError(f"generate: max_tokens must be >= 0, got {n}")
    return int(n)


def _check_capacity(capacity, where: str, optional: bool = False):
    """capacity (the KV cache's positions) as a positive int; None passes where it has a default."""
    if capacity is None and optional:
        return None
    if not _is_int(capacity):
        raise ArgumentError(f"{where}: capacity must be an int >= 1, got {capacity!r} ({type(capacity).__name__})")
    if capacity < 1:
        raise ArgumentValueError(f"{where}: capacity must be >= 1 (positions in the KV cache), got {capacity}")
    return int(capacity)


class Decoder:
    """A Llama-family decoder on a device. `Decoder.from_pretrained(dir)` or `Decoder.random(cfg)`."""

    def __init__(self, cfg: LlamaConfig, params: dict, capacity: int, device=None, tokenizer=None,
                 cache_dtype=pt.float32):
        self.cfg, self.params, self.capacity, self.tokenizer = cfg, params, capacity, tokenizer
        self.cache_dtype = cache_dtype      # the KV cache's dtype (llama.new_cache)
        self.device = device if device is not None else params["embed"].device

    @classmethod
    def from_pretrained(cls, path: str, device=None, capacity: int | None = None) -> "Decoder":
        capacity = _check_capacity(capacity, "Decoder.from_pretrained", optional=True)
        with pt.device(device) if device else _nullctx():
            cfg, params = load_checkpoint(path, capacity=capacity)
        tok_path = os.path.join(path, "tokenizer.json")
        tokenizer = Tokenizer(tok_path) if os.path.exists(tok_path) else None
        cap = params["rope_cos"].shape[0]
        return cls(cfg, params, cap, device=params["embed"].device, tokenizer=tokenizer)

    @classmethod
    def random(cls, cfg, capacity: int = 512, seed: int = 0, device=None) -> "Decoder":
        """Random weights with the shapes of `cfg` (a LlamaConfig or a preset name)."""
        if isinstance(cfg, str):
            cfg = preset(cfg)
        if not isinstance(cfg, LlamaConfig):
            raise ArgumentError(f"Decoder.random: cfg must be a LlamaConfig or a preset name, got {cfg!r} "
                                f"({type(cfg).__name__})")
        capacity = _check_capacity(capacity, "Decoder.random")
        with pt.device(device) if device else _nullctx():
            params = random_params(cfg, capacity, seed=seed)
        return cls(cfg, params, capacity, device=params["embed"].device)

    def quantize(self, fmt: str) -> "Decoder":
        """Store every layer's matrices in `fmt` ("int8", "q8_0" or "q4_0"; see pt.quant): a decode step then
        reads 0.56x (q8_0: 36 bytes a block of 32) or 0.31x (q4_0: 20 bytes) the bytes of their bf16 form.
        Returns self."""
        if fmt not in pt.quant.FORMATS:
            raise ArgumentValueError(f"Decoder.quantize: unknown format {fmt!r} (one of "
                                     f"{', '.join(pt.quant.FORMATS)})")
        with pt.device(self.device):
            self.params = quantize_params(self.params, fmt)
        return self

    def new_cache(self):
        with pt.device(self.device):
            cache = llama.new_cache(self.cfg, self.capacity, dtype=self.cache_dtype)
            pt.realize(*cache["k"], *cache["v"])
            return cache

    def _keys(self, seed: int, n: int):
        with pt.device(self.device):
            return np.asarray(pt.random.split(pt.random.key(seed), max(n, 1)).numpy())

    def generate(self, prompt, max_tokens: int = 32, sampling: SamplingConfig = GREEDY, seed: int = 0,
                 on_token=None, stop_at_eos: bool = True) -> Generation:
        """Generate up to `max_tokens` tokens after `prompt` (token ids, or text with a tokenizer).
        `on_token(token_id)` is called as each token arrives (for streaming). max_tokens 0 runs nothing
        and gives no tokens."""
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise PootError("this model has no tokenizer (tokenizer.json); pass token ids")
            prompt = self.tokenizer.encode(prompt)
        prompt = _prompt_ids(prompt)
        if not isinstance(sampling, SamplingConfig):
            raise ArgumentError(f"generate: sampling must be a SamplingConfig (poot.models.SamplingConfig(...), "
                                f"or GREEDY), got {sampling!r} ({type(sampling).__name__})")
        if not prompt:
            raise PootError("the prompt is empty")
        bad = [t for t in prompt if not 0 <= t < self.cfg.vocab_size]
        if bad:
            raise pt.PootIndexError(f"token id {bad[0]} of the prompt is outside the vocabulary "
                                    f"[0, {self.cfg.vocab_size})")
        max_tokens = _max_tokens(max_tokens)
        n = len(prompt)
        if n + max_tokens > self.capacity:
            raise PootError(f"prompt ({n} tokens) + max_tokens ({max_tokens}) exceed the cache "
                            f"capacity {self.capacity}; raise the capacity")
        if max_tokens == 0:
            return Generation([], n, 0.0, 0.0)
        eos = set(self.cfg.eos_token_ids) if stop_at_eos else set()
        keys = self._keys(seed, max_tokens + 1)
        with pt.device(self.device):
            cache = self.new_cache()
            t = _bucket(n, self.capacity)
            toks = np.zeros(t, np.int32)
            toks[:n] = prompt
            t0 = time.perf_counter()
            tok, _, cache = llama.prefill(self.params, cache, toks, n - 1, keys[0], cfg=self.cfg,
                                          sampling=sampling)
            first = int(tok.numpy()[0])
            prefill_s = time.perf_counter() - t0
            out = [first]
            if on_token:
                on_token(first)
            t1 = time.perf_counter()
            # one step ahead: step i + 1 is launched (from step i's token on the device) before step
            # i's token is read, so the host's work for a step overlaps the device's for the one
            # before; a step launched past the end (EOS, max_tokens) is dropped unread
            launched = n            # positions decoded so far
            ahead = []              # tokens on the device, each with its host copy started

            def launch(tok):
                nonlocal cache, launched
                tok, _, cache = llama.decode_step(self.params, cache, tok, launched, keys[launched - n + 1],
                                                  cfg=self.cfg, sampling=sampling)
                launched += 1
                ahead.append(tok.copy_to_host_async())
                return tok

            if max_tokens > 1 and first not in eos:
                last = launch(tok)
                while ahead:
                    if len(out) + len(ahead) < max_tokens:
                        last = launch(last)
                    out.append(int(ahead.pop(0).numpy()[0]))
                    if on_token:
                        on_token(out[-1])
                    if out[-1] in eos:
                        break
            decode_s = time.perf_counter() - t1
        return Generation(out, n, prefill_s, decode_s)

    def warmup(self, prompt_len: int = 8, sampling: SamplingConfig = GREEDY):
        """Trace and compile the prefill (for this prompt bucket) and the decode step once."""
        t0 = time.perf_counter()
        self.generate([1] * prompt_len, max_tokens=2, sampling=sampling, stop_at_eos=False)
        return time.perf_counter() - t0


class _nullctx:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


__all__ = ["Decoder", "Generation", "Tokenizer", "CheckpointError"]
