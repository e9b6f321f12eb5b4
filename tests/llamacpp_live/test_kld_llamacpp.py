"""llama.cpp's own KL-divergence statistics, from the real llama-perplexity, against an independent computation.

The fixture ``llamacpp_kld`` (conftest.py, kld_reference.py) requantizes the default model's GGUF
file (Q4_1) to Q2_K with the real ``llama-quantize``, writes the base file with ``llama-perplexity
--kl-divergence-base`` over a ~600-token text (4 chunks of 128 tokens) and parses what
``llama-perplexity --kl-divergence`` prints for the requantized file.

The independent computation (here, float64): both GGUF files loaded in transformers (which
dequantizes them: the same stored weights), run over exactly the tokens llama.cpp scored, read from
its base file's header, with the definitions of ``tools/perplexity/perplexity.cpp``: in each chunk
of n_ctx tokens the positions n_ctx/2 .. n_ctx-2 predict the next token (63 per chunk, 252 in all);
KLD(base ‖ requant) sums over the base tokens whose log-prob is above -16; "same top" compares the
two argmaxes; ln(PPL(Q)/PPL(base)) is the mean difference of the chosen tokens' negative log-probs.

TOLERANCES (why the figures cannot be equal): llama.cpp never dequantizes the weights; before each
product with quantized weights it rounds the activations to 8 bits per block, keeps attention in float16
(``test_llamacpp_live.py`` measured 0.01-0.06 nats median per log-prob against float32 on this
model), and the base file stores log-probs in 16 bits over 16 nats (a step of 2.4e-4 nats). Both
models see the same roundings, so much of it cancels in their difference; what is left is measured
below (MEASURED) and the bounds sit above it with the reason each is what it is.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llamacpp_live.kld_reference import read_header, scored_span
from logprob_viz.servers import llamacpp_tools


def test_base_file_holds_the_text_as_llamacpp_tokenized_it(llamacpp_kld):
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    header = read_header(llamacpp_kld.base_kld)
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    assert (header.n_ctx, header.n_chunk, header.n_vocab) == (llamacpp_kld.n_ctx, llamacpp_kld.chunks, len(tokenizer))
    # llama.cpp's tokenization of the text is the tokenizer's (no BOS: add_bos_token is false), so
    # the tokens scored are the text's first n_chunk * n_ctx tokens
    ids = tokenizer(llamacpp_kld.text.read_text())["input_ids"]
    assert len(ids) >= header.n_chunk * header.n_ctx
    assert header.tokens.reshape(-1).tolist() == ids[:header.n_chunk * header.n_ctx]


def test_parsed_statistics_hold_together(llamacpp_kld):
    """Relations between the printed lines that the parse must keep (fractions, signs, the token count)."""
    s = llamacpp_kld.stats
    assert set(llamacpp_tools.REQUIRED_KEYS) <= set(s)
    _, per_chunk = scored_span(read_header(llamacpp_kld.base_kld))
    assert s["tokens"] == llamacpp_kld.chunks * per_chunk == 252
    order = ["kld_min", "kld_0_1", "kld_1", "kld_5", "kld_10", "median_kld", "kld_90", "kld_95", "kld_99", "kld_99_9",
             "kld_max"]
    assert [s[k] for k in order] == sorted(s[k] for k in order), {k: s[k] for k in order}
    assert 0 < s["mean_kld"] and 0 < s["same_top"] < 1 and 0 < s["rms_delta_p"] < 1
    # printed with 6 decimals: the ratio is exp of the mean log ratio, and PPL(Q) / PPL(base)
    assert s["ppl_ratio"] == pytest.approx(math.exp(s["mean_ln_ppl_ratio"]), abs=2e-6)
    assert s["ppl_ratio"] == pytest.approx(s["ppl_q"] / s["ppl_base"], rel=1e-5)
    # "same top p" is a count over the scored tokens (its ± is sqrt(p(1-p)/(N-1)) with llama.cpp's N),
    # which checks both the percent-to-fraction reading and the token count
    n_same = s["same_top"] * s["tokens"]
    assert abs(n_same - round(n_same)) < s["tokens"] * 5e-6
    p = s["same_top"]
    assert s["same_top_err"] == pytest.approx(math.sqrt(p * (1 - p) / (s["tokens"] - 1)), abs=1e-5)


def test_parse_errors_name_what_is_missing(llamacpp_kld):
    output = llamacpp_kld.output
    before_statistics = output.split("====== Perplexity statistics")[0]
    with pytest.raises(llamacpp_tools.LlamaCppToolError, match="no KL-divergence statistics.*4 chunk rows.*100"):
        llamacpp_tools.parse_kl_divergence(before_statistics, n_ctx=llamacpp_kld.n_ctx)
    without_same_top = "\n".join(line for line in output.splitlines() if not line.startswith("Same top p"))
    with pytest.raises(llamacpp_tools.LlamaCppToolError, match="lack same_top, same_top_err"):
        llamacpp_tools.parse_kl_divergence(without_same_top, n_ctx=llamacpp_kld.n_ctx)


def test_llamacpp_statistics_match_float64_transformers(llamacpp_kld, float64_figures):
    """llama.cpp's printed figures against the same definitions computed here in float64.

    MEASURED (2-core x86-64, llama.cpp 0c1e570 from the llama-cpp-python 0.3.36 sdist, 252 tokens):
    mean KLD 0.394174 (llama.cpp) vs 0.387008 (here), +1.8 %; same top 159 vs 158 of 252 tokens;
    ln(PPL(Q)/PPL(base)) 0.3036 vs 0.2953; ln PPL(base) and ln PPL(Q) each 0.004 nats apart;
    RMS Δp 0.11618 vs 0.11396; median KLD 0.3616 vs 0.3457. Identical on a rerun.
    """
    s, f = llamacpp_kld.stats, float64_figures
    n = f["kld"].size
    assert n == s["tokens"]
    context = f"\nllama-perplexity printed:\n{llamacpp_kld.output}"
    # Each model's mean negative log-prob: llama.cpp's roundings move a log-prob by 0.01-0.06 nats
    # (median, test_llamacpp_live.py) in either direction; over 252 tokens that averages to a
    # standard error of 0.06 / sqrt(252) = 0.004 nats; 0.02 is five of them.
    assert math.log(s["ppl_base"]) == pytest.approx(f["nll_base"].mean(), abs=0.02), context
    assert math.log(s["ppl_q"]) == pytest.approx(f["nll_q"].mean(), abs=0.02), context
    # Their difference: two such errors, partly independent: 0.03 nats (sqrt(2) x 0.004 x 5).
    ln_ratio = (f["nll_q"] - f["nll_base"]).mean()
    assert s["mean_ln_ppl_ratio"] == pytest.approx(ln_ratio, abs=0.03), context
    assert math.log(s["ppl_ratio"]) == pytest.approx(ln_ratio, abs=0.03), context
    # Mean KLD: roundings that differ between the two models add divergence of their own (a small
    # positive bias, measured +1.8 %), and the 16-bit base file moves each token's KLD by at most
    # 1.2e-4 nats (half a step of 16/65535 in every log-prob, weighted by probabilities summing to 1).
    assert s["mean_kld"] == pytest.approx(f["kld"].mean(), rel=0.05, abs=1.2e-4), context
    assert s["median_kld"] == pytest.approx(np.median(f["kld"]), rel=0.10), context  # one token's value: noisier
    # RMS Δp: the chosen token's probabilities move by p x (0.01-0.06) under the roundings: 10 %.
    assert s["rms_delta_p"] == pytest.approx(np.sqrt(np.mean(f["delta_p"] ** 2)), rel=0.10), context
    # Same top: an engine can only turn a top-1 where one model's two best tokens are within its
    # roundings (0.05 nats, the upper median above); there are that many tokens the count may differ by.
    near_ties = int((f["margin"] < 0.05).sum())
    assert abs(s["same_top"] * n - f["same_top"].sum()) <= near_ties, (near_ties, context)


def test_bad_inputs_give_llamacpps_reason(llamacpp_kld, tmp_path):
    """llama-perplexity exits 0 on these; the error lines it prints become the error raised."""
    short = tmp_path / "short.txt"
    short.write_text("A text of five tokens.")
    with pytest.raises(llamacpp_tools.LlamaCppToolError, match="you need at least 256 tokens"):
        llamacpp_tools.save_base_logits(llamacpp_kld.base_gguf, short, tmp_path / "short.kld", n_ctx=128, threads=2)
    # a base file whose header is right and whose records are cut short: llama.cpp's own check
    cut = tmp_path / "cut.kld"
    cut.write_bytes(llamacpp_kld.base_kld.read_bytes()[:100_000])
    with pytest.raises(llamacpp_tools.LlamaCppToolError, match="failed reading log-probs for chunk"):
        llamacpp_tools.kl_divergence(llamacpp_kld.requant_gguf, cut, threads=2)
    not_a_base_file = tmp_path / "text.kld"
    not_a_base_file.write_text("plain text, not llama-perplexity's logits")
    with pytest.raises(llamacpp_tools.LlamaCppToolError, match="not a llama-perplexity base file"):
        llamacpp_tools.kl_divergence(llamacpp_kld.requant_gguf, not_a_base_file, threads=2)


def test_one_call_gives_the_same_statistics(llamacpp_kld):
    """`kl_divergence` (context read from the base file's header) reproduces the fixture's run exactly."""
    assert llamacpp_tools.base_file_context(llamacpp_kld.base_kld) == llamacpp_kld.n_ctx
    again = llamacpp_tools.kl_divergence(llamacpp_kld.requant_gguf, llamacpp_kld.base_kld, threads=2)
    assert again == llamacpp_kld.stats
