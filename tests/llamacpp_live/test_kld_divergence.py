"""lv.read_kld and lv.divergence on the real llama-perplexity's files and figures (issue 44).

The base file is the one the real ``llama-perplexity --kl-divergence-base`` wrote (fixture
``llamacpp_kld``); the candidate is the requantized GGUF file loaded in transformers (float32, as
``lv.load`` runs it). Two independent references: llama.cpp's printed statistics (its own kernels),
and both GGUF files run here in float64 by plain transformers (``float64_figures``, kld_reference.py).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live.kld_reference import read_header, scored_span


@pytest.fixture(scope="module")
def file_divergence(llamacpp_kld):
    """lv.divergence(the real base file, the requantized model in transformers)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    torch.set_num_threads(1)
    requant = llamacpp_kld.requant_gguf
    model = AutoModelForCausalLM.from_pretrained(str(requant.parent), gguf_file=requant.name, dtype=torch.float32)
    candidate = lv.load((model.eval(), AutoTokenizer.from_pretrained(default_model_path())))
    return lv.divergence(lv.read_kld(llamacpp_kld.base_kld), candidate, progress=False)


def _scored_values(d, name):
    """The divergence's per-token values at the positions it scored (NaN elsewhere), in order."""
    values = np.concatenate([np.asarray(getattr(one, name), dtype=float) for one in _texts(d)])
    return values[~np.isnan(values)]


def _texts(d):
    return list(d) if isinstance(d, lv.Divergences) else [d]


def test_read_kld_scores_llamacpps_positions(llamacpp_kld, file_divergence):
    header = read_header(llamacpp_kld.base_kld)
    first, per_chunk = scored_span(header)
    assert file_divergence.summary()["tokens"] == header.n_chunk * per_chunk == llamacpp_kld.stats["tokens"]


def _decoded_base(path, header, first, per_chunk):
    """The base file's log-probs, decoded here by reading the bytes one record at a time (llama.cpp's
    perplexity.cpp: after the header, per scored position two float32 (scale, min log-prob) and
    n_vocab uint16 codes padded to an even count; log p = scale * code + min)."""
    n_vocab = header.n_vocab
    record = 8 + 2 * (n_vocab + n_vocab % 2)
    offset = 8 + 12 + 4 * header.n_ctx * header.n_chunk
    data = path.read_bytes()
    rows = []
    for r in range(header.n_chunk * per_chunk):
        start = offset + r * record
        scale, low = struct.unpack_from("<ff", data, start)
        codes = np.frombuffer(data, dtype="<u2", count=n_vocab, offset=start + 8)
        rows.append(np.float32(scale) * codes.astype(np.float32) + np.float32(low))
    assert offset + header.n_chunk * per_chunk * record == len(data)
    return np.array(rows, dtype=np.float64)


def test_per_token_values_equal_the_file_against_float64_transformers(llamacpp_kld, file_divergence):
    """Per token, against the same sums computed here: the base log-probs decoded from the real file's
    bytes, the candidate in float64 (plain transformers), llama.cpp's -16 nats cutoff. The candidate
    runs in float32 in lv.divergence: 1e-4 nats bounds what float32 moves in a KL and a log-prob."""
    import torch
    from transformers import AutoModelForCausalLM

    header = read_header(llamacpp_kld.base_kld)
    first, per_chunk = scored_span(header)
    lp = _decoded_base(llamacpp_kld.base_kld, header, first, per_chunk)
    requant = llamacpp_kld.requant_gguf
    model = AutoModelForCausalLM.from_pretrained(str(requant.parent), gguf_file=requant.name,
                                                 dtype=torch.float32).to(torch.float64).eval()
    with torch.no_grad():
        logits = model(torch.tensor(header.tokens, dtype=torch.long)).logits[:, first:first + per_chunk]
    lq = torch.log_softmax(logits.double(), -1).flatten(0, 1).numpy()
    targets = header.tokens[:, first + 1:].reshape(-1)
    rows = np.arange(targets.size)
    kld = np.where(lp > -16.0, np.exp(lp) * (lp - lq), 0.0).sum(-1)
    delta_p = np.exp(lq[rows, targets]) - np.exp(lp[rows, targets])
    ours_kld, ours_dp = _scored_values(file_divergence, "kld"), _scored_values(file_divergence, "delta_p")
    assert ours_kld.size == kld.size
    assert np.abs(ours_kld - kld).max() < 1e-4
    assert np.abs(ours_dp - delta_p).max() < 1e-4
    assert np.array_equal(_scored_values(file_divergence, "same_top").astype(bool), lp.argmax(-1) == lq.argmax(-1))


def test_summary_agrees_with_llamacpps_printed_statistics(llamacpp_kld, file_divergence, float64_figures):
    """Tolerances as in test_kld_llamacpp.py (llama.cpp's kernels against transformers', same weights)."""
    s, ours = llamacpp_kld.stats, file_divergence.summary()
    context = f"\nours: {ours}\nllama-perplexity printed:\n{llamacpp_kld.output}"
    assert ours["mean_kld"] == pytest.approx(s["mean_kld"], rel=0.05, abs=1.2e-4), context
    assert ours["median_kld"] == pytest.approx(s["median_kld"], rel=0.10), context
    assert ours["rms_delta_p"] == pytest.approx(s["rms_delta_p"], rel=0.10), context
    assert ours["mean_ln_ppl_ratio"] == pytest.approx(s["mean_ln_ppl_ratio"], abs=0.03), context
    assert math.log(ours["ppl_ratio"]) == pytest.approx(math.log(s["ppl_ratio"]), abs=0.03), context
    near_ties = int((float64_figures["margin"] < 0.05).sum())
    assert abs(ours["same_top"] - s["same_top"]) * s["tokens"] <= near_ties, context
