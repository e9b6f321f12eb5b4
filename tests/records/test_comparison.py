"""lv.compare: traces of the same text from two real tokenizers, aligned by bytes.

The second model is built here without downloads: a byte-level BPE tokenizer trained on a text
at run time (the `tokenizers` library) under a small randomly initialised (seeded) Llama. Its
token boundaries really differ from SmolLM2's, and it splits multi-byte characters across
tokens. Every expected number is computed here from the traces' own tokens, independently of
compare.py (plain Python sets and sums).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import logprob_viz as lv
import paths
import wire
from logprob_viz import ComparisonWarning, compare

FIXTURES = paths.FIXTURES / "vllm"
TEXT = "Größe, café — naïve 東京 日本 🙂🦀. A robot may not injure a human being, or allow harm.\n"
TRAINING_TEXT = (
    "A robot may not injure a human being or, through inaction, allow a human being to come to harm. "
    "Größe café — naïve 東京 🙂 über straße. The quick brown fox jumps over the lazy dog.\n"
) * 4


def tiny_model(text: str = TRAINING_TEXT, vocab_size: int = 400, seed: int = 0):
    """A (model, tokenizer) pair made here: byte-level BPE trained on `text`, a seeded random Llama."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]
    )
    tok.train_from_iterator([text], trainer)
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(hf_tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512)
    return LlamaForCausalLM(config).eval(), hf_tok


@pytest.fixture(scope="module")
def tiny_runner():
    return lv.load(tiny_model())


@pytest.fixture(scope="module")
def pair(runner, tiny_runner):
    """The same text scored by SmolLM2 and by the tiny model."""
    return runner.score(TEXT, top_logprobs=3), tiny_runner.score(TEXT, top_logprobs=3)


# ---- independent computations ---------------------------------------------------------------


def token_ranges(trace) -> list[tuple[int, int]]:
    out, at = [], 0
    for b in trace.token_bytes:
        out.append((at, at + len(b)))
        at += len(b)
    return out


def expected_cuts(traces) -> list[int]:
    """Byte offsets where every trace has a token boundary (start of a token or end of the text)."""
    sets = []
    for tr in traces:
        ranges = token_ranges(tr)
        sets.append({a for a, _ in ranges} | {ranges[-1][1]})
    text = traces[0].text.encode()
    # a cut never falls inside a UTF-8 character (not before a continuation byte 0b10xxxxxx)
    return sorted(c for c in set.intersection(*sets) if c == len(text) or text[c] >> 6 != 0b10)


def expected_span_logprobs(trace, cuts) -> list[float]:
    """Per span: the sum of the logprobs of the trace's tokens starting in it; NaN if any is NaN."""
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        values = [float(lp) for (s, _), lp in zip(token_ranges(trace), trace.logprobs, strict=False) if a <= s < b]
        out.append(math.nan if any(math.isnan(v) for v in values) else sum(values))
    return out


# ---- alignment across tokenizers ------------------------------------------------------------


def test_the_two_tokenizers_really_differ_and_split_characters(pair):
    smol, tiny = pair
    assert smol.text == tiny.text == TEXT
    assert token_ranges(smol) != token_ranges(tiny)
    # the tiny tokenizer cuts some multi-byte character between two tokens
    splits = [b for b in tiny.token_bytes if b and not _is_utf8(b)]
    assert splits, tiny.token_bytes


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_spans_cover_every_byte_once_on_common_boundaries(pair):
    smol, tiny = pair
    cmp = compare([smol, tiny], labels=["smol", "tiny"])
    starts, ends = cmp.span_starts.tolist(), cmp.span_ends.tolist()
    assert starts[0] == 0 and ends[-1] == len(TEXT.encode())
    assert starts[1:] == ends[:-1]  # contiguous: every byte in exactly one span
    assert all(a < b for a, b in zip(starts, ends, strict=False))
    # the coarsest pieces: the cuts are exactly the boundaries both tokenizations share
    assert [*starts, ends[-1]] == expected_cuts([smol, tiny])
    assert len(cmp) < min(len(smol), len(tiny))
    joined = b"".join(TEXT.encode()[a:b] for a, b in zip(starts, ends, strict=False))
    assert joined == TEXT.encode()
    # a span holding a split character shows it whole: span texts joined give the text back
    assert "".join(cmp.span_texts) == TEXT
    # both tokenizers cut "日" and "🦀" into bytes at the same places: the spans keep them whole
    crab = TEXT.encode().index("🦀".encode())
    assert crab in starts and crab + 4 in ends and crab + 1 not in starts
    assert {b for b in smol.token_bytes if not _is_utf8(b)} and {b for b in tiny.token_bytes if not _is_utf8(b)}
    df = cmp.to_pandas()
    assert list(df.columns) == ["start", "end", "text", "logprob:smol", "logprob:tiny", "tokens:smol", "tokens:tiny"]
    assert df["tokens:smol"].sum() == len(smol) and df["tokens:tiny"].sum() == len(tiny)


def test_span_logprobs_add_up_to_each_trace_total(pair):
    smol, tiny = pair
    cmp = compare([smol, tiny])
    cuts = expected_cuts([smol, tiny])
    for r, tr in enumerate([smol, tiny]):
        expected = expected_span_logprobs(tr, cuts)
        got = cmp.span_logprobs[r].tolist()
        assert [math.isnan(x) for x in got] == [math.isnan(x) for x in expected]
        assert np.allclose([x for x in got if not math.isnan(x)], [x for x in expected if not math.isnan(x)], atol=1e-5)
        total = sum(float(x) for x in tr.logprobs if not math.isnan(x))
        assert math.isclose(np.nansum(cmp.span_logprobs[r]), total, abs_tol=1e-4)
        # the unknown first token (no context) keeps the first span unknown
        assert math.isnan(tr.logprobs[0]) and math.isnan(got[0])


def test_bits_per_byte_agrees_with_an_independent_sum(pair):
    smol, tiny = pair
    cmp = compare([smol, tiny], labels=["smol", "tiny"])
    cuts = expected_cuts([smol, tiny])
    spans = [expected_span_logprobs(tr, cuts) for tr in (smol, tiny)]
    known = [i for i in range(len(cuts) - 1) if not any(math.isnan(s[i]) for s in spans)]
    n_bytes = sum(cuts[i + 1] - cuts[i] for i in known)
    for label, s in zip(["smol", "tiny"], spans, strict=False):
        expected = -sum(s[i] for i in known) / math.log(2) / n_bytes
        assert abs(cmp.bits_per_byte()[label] - expected) < 1e-6
    # perplexity per label: over each trace's tokens in those spans
    for label, tr in zip(["smol", "tiny"], [smol, tiny], strict=False):
        lps = [float(lp) for (a, _), lp in zip(token_ranges(tr), tr.logprobs, strict=False)
               if any(cuts[i] <= a < cuts[i + 1] for i in known)]
        assert math.isclose(cmp.perplexity()[label], math.exp(-sum(lps) / len(lps)), rel_tol=1e-6)


def test_recorded_vllm_prompt_logprobs_against_the_local_model(runner):
    """The same model behind vLLM (a recorded response) and in the kernel: the same tokens, close logprobs."""
    body = json.loads(json.loads((FIXTURES / "completions_prompt_logprobs.json").read_text())["body"])
    served = lv.from_openai(body)
    local = runner.score("A robot may not injure a human being", top_logprobs=5)
    # vLLM does not say what the first prompt token was: its text starts later, and compare says so
    with pytest.raises(ValueError, match="first_token_unknown"):
        compare([local, served])
    cmp = compare([local[1:], served[1:]], labels=["local", "vllm"])
    assert cmp.same_text and len(cmp) == len(served) - 1  # one tokenizer: one span per token
    assert np.allclose(cmp.span_logprobs[0], cmp.span_logprobs[1], atol=0.02)
    bpb = cmp.bits_per_byte()
    assert abs(bpb["local"] - bpb["vllm"]) < 0.01


# ---- texts that differ ----------------------------------------------------------------------


def test_different_prompts_align_on_their_common_prefix(runner):
    a = runner.score("The capital of France is Paris.", top_logprobs=2)
    b = runner.score("The capital of Germany is Berlin.", top_logprobs=2)
    cmp = compare([a, b], labels=["fr", "de"])
    assert not cmp.same_text
    prefix = len(b"The capital of ")
    assert cmp.common_prefix == prefix
    assert cmp.shared_bytes == cmp.span_ends[-1] <= prefix
    tails = cmp.tails
    assert a.text[: cmp.shared_bytes] + tails["fr"].text == a.text
    assert b.text[: cmp.shared_bytes] + tails["de"].text == b.text
    assert cmp.summary().loc["fr", "tail_bytes"] == len(a.text.encode()) - cmp.shared_bytes
    # nothing lost: each trace's tokens are in a span or in its tail
    for label, tr in zip(cmp.labels, cmp.traces, strict=False):
        assert cmp.span_tokens[cmp.labels.index(label)].sum() + len(tails[label]) == len(tr)


def test_empty_tokens_and_unknown_logprobs_are_kept():
    nan = float("nan")
    a = lv.Trace(tokens=["", "ab", "c", "d"], logprobs=[-0.5, -1.0, nan, -2.0])
    b = lv.Trace(tokens=["a", "bc", "d", ""], logprobs=[nan, -0.25, -0.5, -0.125])
    cmp = compare([a, b], labels=["a", "b"])
    assert cmp.span_starts.tolist() == [0, 3] and cmp.span_ends.tolist() == [3, 4]
    assert cmp.span_tokens.tolist() == [[3, 1], [2, 2]]  # the empty tokens belong to a span too
    assert math.isnan(cmp.span_logprobs[0, 0]) and math.isnan(cmp.span_logprobs[1, 0])
    assert cmp.span_logprobs[0, 1] == -2.0 and cmp.span_logprobs[1, 1] == -0.625
    assert cmp.known.tolist() == [False, True]
    assert cmp.bits_per_byte() == {"a": 2.0 / math.log(2), "b": 0.625 / math.log(2)}


# ---- bad input ------------------------------------------------------------------------------


def test_bad_input_says_what_was_compared():
    t = lv.Trace(tokens=["a", "b"], logprobs=[-1.0, -2.0])
    with pytest.raises(TypeError, match="one Trace"):
        compare(t)
    with pytest.raises(ValueError, match="two or more traces.*got 1"):
        compare([t])
    with pytest.raises(TypeError, match="item 1 is a str"):
        compare([t, "ab"])
    with pytest.raises(ValueError, match="trace 1 has no known logprob"):
        compare([t, lv.Trace(tokens=["ab"])])
    with pytest.raises(ValueError, match="nothing in common.*differ from the first byte"):
        compare([t, lv.Trace(tokens=["x", "y"], logprobs=[-1.0, -1.0])])
    with pytest.raises(ValueError, match="no token boundary"):
        compare([lv.Trace(tokens=["ab"], logprobs=[-1.0]), lv.Trace(tokens=["ac"], logprobs=[-1.0])])
    with pytest.raises(ValueError, match="one label per trace"):
        compare([t, t], labels=["only one"])
    with pytest.raises(ValueError, match="distinct"):
        compare([t, t], labels=["x", "x"])


def test_compare_view_payload_and_limits(pair):
    from logprob_viz.views.compare.view import CompareView

    smol, tiny = pair
    view = compare([smol, tiny], labels=["smol", "tiny"]).view(color_mode="difference")
    assert isinstance(view, CompareView) and view.labels == ["smol", "tiny"]
    p = wire.comparison(view._payload)  # the suite's own reader of the wire format
    assert np.allclose(p["span_logprobs"], view.comparison.span_logprobs, equal_nan=True, atol=1e-5)
    for row, tr in zip(p["rows"], [smol, tiny], strict=True):
        assert row["tokens"] == tr.tokens
        # what the row shows: split characters whole on the token that completes them; joined, the text
        members = list(row["split"])
        shown = [row["split"].get(i, text) for i, text in enumerate(row["tokens"])]
        assert members and "".join(shown) == TEXT
    with pytest.raises(Exception, match="span index"):
        view.selected = len(view.comparison)
    with pytest.raises(Exception, match="two different row"):
        view.diff_rows = [1, 1]
    t = lv.Trace(tokens=["a", "b"], logprobs=[-1.0, -2.0])
    with pytest.raises(ValueError, match="2 to 8"):
        CompareView([t] * 9, labels=[str(i) for i in range(9)])


def test_the_view_carries_static_html_for_nbconvert():
    hostile = "<script>window.__pwned=1</script>"
    a = lv.Trace(tokens=["A", hostile], logprobs=[float("nan"), -0.5])
    b = lv.Trace(tokens=["A<script>", "window.__pwned=1</script>"], logprobs=[-1.0, -2.0])
    data, _ = compare([a, b], labels=["<b>a</b>", "b"]).view()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    page = data["text/html"]
    assert "<script" not in page and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "&lt;b&gt;a&lt;/b&gt;" in page and "<b>a</b>" not in page


# ---- each row's own continuation, and why a number is missing --------------------------------


def own_expected(trace, shared: int) -> tuple[float, int, int]:
    """−Σ log2 p, tokens and bytes over the trace's tokens that start at or after byte `shared` (logprob known)."""
    bits, tokens, n_bytes = 0.0, 0, 0
    for (start, end), lp in zip(token_ranges(trace), trace.logprobs.tolist(), strict=True):
        if start >= shared and not math.isnan(lp):
            bits, tokens, n_bytes = bits - lp / math.log(2), tokens + 1, n_bytes + (end - start)
    return bits, tokens, n_bytes


def test_two_branches_get_their_own_continuations_scored(runner):
    root = runner.generate("A robot may not injure a human being", max_new_tokens=8, top_logprobs=3)
    tree = lv.Tree(root, runner=runner)
    at = root.prompt_len + 2
    other = next(int(i) for i in root.top_ids[at] if i >= 0 and i != root.token_ids[at])
    branch = tree.branch(at=at, token=other, max_new_tokens=8, progress=False)
    cmp = compare([root, branch], labels=["#0", "#1"])
    # the shared part: the bytes of the tokens before the fork (the same model, the same tokens)
    shared = sum(len(b) for b in root.token_bytes[:at])
    assert cmp.shared_bytes == shared and not cmp.same_text
    with pytest.warns(ComparisonWarning, match=rf"covers only the {shared} bytes every row shares.*over='own'"):
        aligned = cmp.bits_per_byte()  # (the default says what it covers: issue 49, lesson 5)
    assert aligned == cmp.bits_per_byte(over="aligned")
    assert aligned["#0"] == aligned["#1"]  # the shared prefix: the same number in both rows
    own, ppl, scored = cmp.bits_per_byte(over="own"), cmp.perplexity(over="own"), cmp.scored("own")
    for label, tr in zip(cmp.labels, (root, branch), strict=True):
        bits, tokens, n_bytes = own_expected(tr, shared)
        assert tokens == len(tr) - at and n_bytes == len(tr.text.encode()) - shared
        assert scored[label].tokens == tokens and scored[label].bytes == n_bytes
        assert scored[label].start == shared and scored[label].end == len(tr.text.encode())
        assert math.isclose(own[label], bits / n_bytes, rel_tol=1e-9)
        assert math.isclose(ppl[label], 2 ** (bits / tokens), rel_tol=1e-9)
        assert f"{tokens} tokens, {n_bytes} bytes" in scored[label].describe()
    assert own["#0"] != own["#1"]  # where the branches differ, their numbers differ
    summary = cmp.summary()
    assert summary.loc["#1", "own_bits_per_byte"] == own["#1"] and summary.loc["#1", "own_bytes"] == scored["#1"].bytes
    assert "own (" in repr(cmp)


def test_two_prompts_sharing_only_a_first_token_say_why_nothing_aligned(runner):
    a, b = runner.score("The cat sat down.", top_logprobs=2), runner.score("The dog ran off.", top_logprobs=2)
    cmp = compare([a, b], labels=["cat", "dog"])
    assert cmp.shared_bytes == len(b"The") and len(cmp) == 1  # one span: the first token, whose logprob is unknown
    with pytest.warns(ComparisonWarning, match=r"nothing aligned can be compared.*first 3 bytes \('The'\).*over='own'"):
        aligned = cmp.bits_per_byte(over="aligned")
    assert all(math.isnan(v) for v in aligned.values())
    with pytest.warns(ComparisonWarning, match="nothing aligned"):
        cmp.perplexity()
    assert cmp.summary()["note"].str.contains("nothing aligned").all()  # the table says why in its note column
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # over their own continuations, numbers without a word of warning
        own = cmp.bits_per_byte(over="own")
        text = cmp.bits_per_byte(over="text")
    for label, tr in zip(cmp.labels, (a, b), strict=True):
        bits, _, n_bytes = own_expected(tr, 3)
        assert math.isclose(own[label], bits / n_bytes, rel_tol=1e-9)
        bits, _, n_bytes = own_expected(tr, 0)  # the whole text: every token with a logprob
        assert math.isclose(text[label], bits / n_bytes, rel_tol=1e-9)
    assert "nothing to compare" in repr(cmp)
    # the static copy (nbconvert, viewers) gives the continuations' numbers and no "?"
    page = cmp.view()._repr_mimebundle_()[0]["text/html"]
    assert "nothing to compare" in page and ">?<" not in page and f"{own['cat']:.4f}" in page
    with pytest.raises(ValueError, match="over must be one of 'aligned', 'own', 'text'"):
        cmp.scored("tail")


def test_a_row_with_no_continuation_of_its_own_says_so():
    nan = float("nan")
    short = lv.Trace(tokens=["A", " cat"], logprobs=[nan, -1.0])
    longer = lv.Trace(tokens=["A", " cat", " sat"], logprobs=[nan, -1.0, -2.0])
    cmp = compare([short, longer], labels=["short", "long"])
    with pytest.warns(ComparisonWarning, match="short has no continuation of its own"):
        own = cmp.bits_per_byte(over="own")
    assert math.isnan(own["short"]) and math.isclose(own["long"], 2 / math.log(2) / 4)


def test_the_difference_scale_follows_the_data_unless_given():
    from logprob_viz.views.compare.view import auto_range

    toks = [f" w{i}" for i in range(10)]
    lp_a = [-1.0] * 10
    offsets = [0.02 * (i + 1) for i in range(10)]  # |a - b| from 0.02 to 0.2 nats
    a = lv.Trace(tokens=toks, logprobs=lp_a)
    b = lv.Trace(tokens=toks, logprobs=[x - d for x, d in zip(lp_a, offsets, strict=True)])
    c = lv.Trace(tokens=toks, logprobs=[x - 10 * d for x, d in zip(lp_a, offsets, strict=True)])
    cmp = compare([a, b, c], labels=["a", "b", "c"])
    # the 90th percentile of |a - b| (0.182 here, by numpy's linear rule), rounded up to 0.25 nats
    assert float(np.quantile(offsets, 0.9)) <= 0.25 and auto_range(cmp, 0, 1) == 0.25
    assert auto_range(cmp, 0, 2) == 2.0  # ten times larger: 1.82 -> 2
    view = cmp.view()
    assert view.diff_range == 0.25
    view.diff_rows = [0, 2]
    assert view.diff_range == 2.0  # follows the rows compared
    view.diff_range = 1.0
    view.diff_rows = [0, 1]
    assert view.diff_range == 1.0  # set by the person: kept
    assert cmp.view(diff_range=3.0).diff_range == 3.0
    assert auto_range(compare([a, a], labels=["x", "y"])) == 4.0  # no difference at all: the default scale
