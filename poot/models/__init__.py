"""`poot.models`: language models built on poot's public array API (nothing in poot imports this).

    from poot.models import Decoder, SamplingConfig
    m = Decoder.from_pretrained("Qwen2.5-0.5B-Instruct", device="cpu")   # or Decoder.random("tiny")
    g = m.generate("The capital of France is", max_tokens=32, sampling=SamplingConfig(0.7, top_p=0.9))
    print(m.tokenizer.decode(g.tokens), g.decode_tokens_per_s)

Loading checkpoints needs the `llm` extra (safetensors, tokenizers): pip install 'poot[llm]'.
"""
from poot.models.config import PRESETS, LlamaConfig, ModelConfigError, preset
from poot.models.generate import Decoder, Generation, Tokenizer
from poot.models.sampling import GREEDY, SamplingConfig, SamplingError
from poot.models.weights import CheckpointError, load_checkpoint, random_params, save_checkpoint

__all__ = ["Decoder", "Generation", "Tokenizer", "LlamaConfig", "PRESETS", "preset", "SamplingConfig",
           "GREEDY", "ModelConfigError", "SamplingError", "CheckpointError", "load_checkpoint",
           "random_params", "save_checkpoint"]
