"""The check's models: seeded random weights from configs, so no weights travel, and the default tokenizer.

The tokenizer is the one file that travels. ``prepare_tokenizer`` copies the default model's
``tokenizer.json`` from the package's cache into ``benchmarks/gpu/tokenizer/`` (git-ignored: 3.5 MB
of a third party's vocabulary is not worth a place in the history); `scripts/gpu_check.sh` runs it
where the cache is, and the folder travels with the tree to the GPU machine. The tokenizer is then
built from that file alone (`PreTrainedTokenizerFast`), which reads the same in transformers 4 and 5.
It declares no end-of-sequence token and the models have none, so every route makes exactly the
tokens asked for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Where --prepare writes the default tokenizer (git-ignored); the test suite points it into
# tests/artifacts/ so that a test run leaves the checkout as it found it.
TOKENIZER_DIR = Path(os.environ.get("LOGPROB_VIZ_GPU_TOKENIZER") or Path(__file__).resolve().parent / "tokenizer")
TOKENIZER_FILE = TOKENIZER_DIR / "tokenizer.json"
SEED = 0

# The 1B-class Llama of the issue (Llama 3.2 1B's shape with the default tokenizer's vocabulary),
# and its tiny stand-in for a CPU run: the same code, small enough for the test suite.
BIG = dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
           intermediate_size=8192, tie_word_embeddings=True)
BIG_TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=256, tie_word_embeddings=True)
# Every tiny architecture: 2 blocks, hidden 64, 4 heads (2 KV heads where the config has them).
_H, _L, _HEADS, _KV, _MLP = 64, 2, 4, 2, 128
_DECODER = dict(hidden_size=_H, num_hidden_layers=_L, num_attention_heads=_HEADS, intermediate_size=_MLP)
_GQA = dict(_DECODER, num_key_value_heads=_KV)
TINY = {  # name: (config class name in transformers, its arguments)
    "Llama": ("LlamaConfig", _GQA),
    "Mistral": ("MistralConfig", _GQA),
    "Qwen2": ("Qwen2Config", _GQA),
    "Qwen3": ("Qwen3Config", dict(_GQA, head_dim=16)),
    "Gemma 2": ("Gemma2Config", dict(_GQA, head_dim=16)),
    "Gemma 3": ("Gemma3TextConfig", dict(_GQA, head_dim=16)),
    "Phi-3": ("Phi3Config", dict(_GQA, pad_token_id=0)),
    "GPT-2": ("GPT2Config", dict(n_embd=_H, n_layer=_L, n_head=_HEADS)),
    "GPT-NeoX": ("GPTNeoXConfig", _DECODER),
    "OPT": ("OPTConfig", dict(hidden_size=_H, num_hidden_layers=_L, num_attention_heads=_HEADS, ffn_dim=_MLP,
                              word_embed_proj_dim=_H)),
    "Falcon": ("FalconConfig", dict(hidden_size=_H, num_hidden_layers=_L, num_attention_heads=_HEADS)),
    "Mamba": ("MambaConfig", dict(hidden_size=_H, num_hidden_layers=_L, state_size=8)),
}


# No BOS/EOS of a config's own (GPT-2's 50256 is outside this vocabulary): every route runs to length.
NO_SPECIAL_TOKENS = dict(bos_token_id=None, eos_token_id=None)


def prepare_tokenizer() -> Path:
    """Copy the default model's tokenizer.json into the tree (once); its path."""
    if TOKENIZER_FILE.is_file():
        return TOKENIZER_FILE
    import logprob_viz as lv

    try:
        source = Path(lv.default_model_path()) / "tokenizer.json"  # converts the default model on first use
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"{TOKENIZER_FILE} is missing and the default model is not installed here: run "
            "`scripts/gpu_check.sh --prepare` where it is, and carry benchmarks/gpu/tokenizer with the tree") from error
    TOKENIZER_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, TOKENIZER_FILE)
    return TOKENIZER_FILE


def load_tokenizer():
    """The default tokenizer, from the file `prepare_tokenizer` wrote."""
    from transformers import PreTrainedTokenizerFast

    if not TOKENIZER_FILE.is_file():
        raise FileNotFoundError(
            f"{TOKENIZER_FILE} is missing: run `scripts/gpu_check.sh --prepare` where the default model is "
            "installed, and carry benchmarks/gpu/tokenizer with the tree")
    return PreTrainedTokenizerFast(tokenizer_file=str(TOKENIZER_FILE))


def big_config(vocab_size: int, tiny: bool):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=vocab_size, max_position_embeddings=4096, **NO_SPECIAL_TOKENS,
                       **(BIG_TINY if tiny else BIG))


def tiny_config(name: str, vocab_size: int):
    import transformers

    class_name, arguments = TINY[name]
    return getattr(transformers, class_name)(vocab_size=vocab_size, **NO_SPECIAL_TOKENS, **arguments)


def build(config, device: str = "cpu", seed: int = SEED):
    """A float32 model of `config` with seeded random weights, made on `device`."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config)
    model.generation_config.eos_token_id = None
    model.generation_config.bos_token_id = None
    return model.float().eval()


def size(model) -> str:
    """The model's parameter count, as "1.17B" or "6.4M"."""
    n = sum(p.numel() for p in model.parameters())
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"
