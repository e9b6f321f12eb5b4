"""lv.Corpus: tables against numbers computed here per trace, the surprise index against a pandas
groupby written here, an exact save/load round trip, slicing, and the ways of building one."""

import json
import math

import numpy as np
import pandas as pd
import pytest

import logprob_viz as lv
from logprob_viz.records.corpus.index import CLASSES, token_classes
from paths import FIXTURES

TEXTS = [
    "A robot may not injure a human being.",
    "The year 1984 had 366 days; 2024 did too!",
    "    def square(x):\n        return x * x",
    "Robots 🤖 say こんにちは — it’s “fine”.",
    "Paris is the capital of France. Berlin is the capital of Germany.",
]


@pytest.fixture(scope="module")
def corpus(runner):
    return runner.score(TEXTS, top_logprobs=5, progress=False)


def test_to_pandas_matches_each_trace(corpus):
    table = corpus.to_pandas()
    assert list(table.columns) == ["label", "text", "tokens", "perplexity", "mean_logprob", "min_logprob",
                                   "max_surprisal", "mean_entropy", "flags"]
    for i, trace in enumerate(corpus):
        known = [float(x) for x in trace.logprobs if not math.isnan(x)]
        row = table.iloc[i]
        assert row["tokens"] == len(trace) and row["text"] == TEXTS[i][:80]
        assert row["mean_logprob"] == pytest.approx(sum(known) / len(known), rel=1e-9)
        assert row["perplexity"] == pytest.approx(math.exp(-sum(known) / len(known)), rel=1e-9)
        assert row["min_logprob"] == pytest.approx(min(known)) and row["max_surprisal"] == pytest.approx(-min(known))
        entropies = [float(x) for x in trace.entropy if not math.isnan(x)]
        assert row["mean_entropy"] == pytest.approx(sum(entropies) / len(entropies), rel=1e-6)


def test_tokens_is_every_trace_concatenated(corpus):
    rows = corpus.tokens()
    assert len(rows) == sum(len(t) for t in corpus)
    for i, trace in enumerate(corpus):
        mine = rows[rows["item"] == i]
        assert mine["token"].tolist() == trace.tokens and mine["position"].tolist() == list(range(len(trace)))
        assert mine["token_id"].tolist() == trace.token_ids.tolist() and mine["rank"].tolist() == trace.ranks.tolist()
        np.testing.assert_array_equal(mine["logprob"].to_numpy(), trace.logprobs)
        np.testing.assert_array_equal(mine["entropy"].to_numpy(), trace.entropy)
        assert (mine["label"] == corpus.labels[i]).all()


def groupby_index(rows: pd.DataFrame, key) -> pd.DataFrame:
    """The surprise index computed the plain way: a pandas groupby over the known tokens."""
    known = rows[rows["logprob"].notna()].copy()
    known["surprisal"] = -known["logprob"].astype(float)
    known["rank_known"] = known["rank"].where(known["rank"] > 0).astype(float)
    known["over"] = (known["rank"] > 10).astype(float).where(known["rank"] > 0)
    return known.groupby(key).agg(count=("surprisal", "size"), mean_surprisal=("surprisal", "mean"),
                                  max_surprisal=("surprisal", "max"), mean_rank=("rank_known", "mean"),
                                  share_rank_over_10=("over", "mean"))


@pytest.mark.parametrize("by", ["token", "class"])
def test_surprise_index_matches_a_pandas_groupby(corpus, by):
    index = corpus.surprise_index(by=by)
    assert list(index.columns) == ["group", "count", "mean_surprisal", "max_surprisal", "mean_rank",
                                   "share_rank_over_10"]
    rows = corpus.tokens()
    if by == "class":
        table = corpus.token_table()
        rows["group"] = np.asarray(CLASSES, dtype=object)[token_classes(table["token"], table["first"])]
    else:
        rows["group"] = rows["token"]
    want = groupby_index(rows, "group")
    got = index.set_index("group").loc[want.index]
    assert len(index) == len(want)
    pd.testing.assert_frame_equal(got, want, check_dtype=False, check_names=False, rtol=1e-9)
    total = (index["count"] * index["mean_surprisal"]).to_numpy()
    assert (np.diff(total) <= 1e-9).all(), "rows are sorted by total surprisal, largest first"
    assert index["count"].sum() == int(rows["logprob"].notna().sum())


def test_token_classes_of_hand_labelled_tokens():
    tokens = np.array(["<|im_start|>", "user", "\n", "    ", "The", " robot", "ized", " 1984", ",", " (",
                       "Paris", "\\xf0\\x9f", " x2", "<bos>", " Über", "’s"], dtype=object)
    first = np.zeros(len(tokens), dtype=bool)
    first[0] = True
    want = ["special", "continuation", "whitespace", "whitespace", "capitalised word", "word-initial",
            "continuation", "digits", "punctuation", "punctuation", "capitalised word", "other", "other", "special",
            "capitalised word", "other"]
    got = [CLASSES[c] for c in token_classes(tokens, first)]
    assert got == want
    # "user" follows "<|im_start|>" (not an opening character): a continuation, as the tokenizer glued it


def test_occurrences_are_keyword_in_context(corpus):
    occ = corpus.occurrences(" capital")
    assert list(occ.columns) == ["item", "label", "position", "left", "token", "right", "logprob", "rank"]
    assert len(occ) == 2 and (occ["item"] == 4).all()
    assert sorted(occ["logprob"].tolist()) == occ["logprob"].tolist(), "the most surprising first"
    for row in occ.itertuples():
        trace = corpus[row.item]
        assert trace.tokens[row.position] == " capital"
        text = trace.text
        start = len("".join(trace.tokens[: row.position]))
        assert text[:start].endswith(row.left) and text[start + len(" capital") :].startswith(row.right)
    digits = corpus.occurrences("digits")
    assert len(digits) == int(corpus.surprise_index("class").set_index("group").loc["digits", "count"])
    with pytest.raises(KeyError, match="no token group ' Jupiter'"):
        corpus.occurrences(" Jupiter")


def assert_same(a: lv.Trace, b: lv.Trace):
    assert a.tokens == b.tokens and a.token_bytes == b.token_bytes and a.prompt_len == b.prompt_len
    for name in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert list(map(list, a.top_tokens)) == list(map(list, b.top_tokens)) and a.flags == b.flags
    assert a.meta == b.meta
    if a.processed_logprobs is not None:
        np.testing.assert_array_equal(a.processed_logprobs, b.processed_logprobs)
        np.testing.assert_array_equal(a.processed_top_logprobs, b.processed_top_logprobs)


def test_save_and_load_round_trip_is_exact(runner, corpus, tmp_path):
    sampled = runner.generate(TEXTS[:2], max_new_tokens=5, temperature=0.7, seed=1, progress=False)
    flagged = lv.Trace(tokens=["a", "\\xe2"], token_bytes=[b"a", b"\xe2"], logprobs=[np.nan, -np.inf],
                       flags=[[], ["no_bytes"]], meta={"source": "test"})
    every = lv.Corpus([*corpus, *sampled, flagged], labels=[f"item {i}" for i in range(8)],
                      metadata=[{"gold": i, "why": "x" * i} for i in range(8)], meta={"made": "here"})
    path = every.save(tmp_path / "corpus.jsonl")
    back = lv.Corpus.load(path)
    assert back.labels == every.labels and back.metadata == every.metadata and back.meta == every.meta
    for a, b in zip(every, back, strict=True):
        assert_same(a, b)
    assert lv.Corpus.read_jsonl(path).labels == every.labels, "read_jsonl knows a saved corpus"
    parquet = lv.Corpus.read_parquet(every.save(tmp_path / "corpus.parquet"))  # a .parquet name: Parquet
    assert list(parquet.labels) == every.labels and parquet.meta == every.meta
    for a, b in zip(every, parquet, strict=True):
        assert_same(a, b)


def test_slicing_and_filtering_give_corpora(corpus):
    assert isinstance(corpus[0], lv.Trace) and corpus[-1] is corpus.traces[-1]
    part = corpus[1:3]
    assert isinstance(part, lv.Corpus) and part.labels == ["1", "2"] and part.traces == corpus.traces[1:3]
    assert corpus[[4, 0]].labels == ["4", "0"]
    table = corpus.to_pandas()
    high = corpus.filter(table["perplexity"] > table["perplexity"].median())
    assert high.labels == table.index[table["perplexity"] > table["perplexity"].median()].astype(str).tolist()
    assert corpus.filter(lambda t: "robot" in t.text.lower()).labels == ["0", "3"]
    assert corpus["2"] is corpus.traces[2]
    with pytest.raises(IndexError, match="one value per item"):
        corpus[np.array([True, False])]
    with pytest.raises(TypeError, match="index a corpus with"):
        corpus[1.5]


def test_built_from_responses_jsonl_and_a_pandas_column(tmp_path):
    bodies = [json.loads((FIXTURES / "vllm" / name).read_text())["body"]
              for name in ("completions_greedy_k5.json", "chat_eos.json", "completions_n2.json")]
    from_responses = lv.Corpus.from_responses(bodies)
    want = [lv.read(bodies[0]), lv.read(bodies[1]), *lv.read(bodies[2])]
    assert len(from_responses) == 4, "a response with n=2 gives a trace per choice"
    for a, b in zip(from_responses, want, strict=True):
        assert_same(a, b)
    path = tmp_path / "responses.jsonl"
    path.write_text("\n".join(json.dumps(b) for b in bodies) + "\n")
    assert [t.text for t in lv.Corpus.read_jsonl(path)] == [t.text for t in want]
    dicts = tmp_path / "traces.jsonl"
    dicts.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in want))
    for a, b in zip(lv.Corpus.read_jsonl(dicts), want, strict=True):
        assert_same(a, b)
    column = pd.Series(bodies[:2], index=["greedy", "chat"])
    assert lv.Corpus.from_pandas(column).labels == ["greedy", "chat"]
    column = pd.Series([t.to_dict() for t in want], index=list("abcd"))
    assert [t.text for t in lv.Corpus.from_pandas(column)] == [t.text for t in want]


def test_bad_inputs_are_clear_errors(tmp_path, corpus):
    with pytest.raises(TypeError, match="item 1 is a str, not a Trace"):
        lv.Corpus([corpus[0], "text"])
    with pytest.raises(ValueError, match="one label per trace"):
        lv.Corpus(corpus.traces, labels=["x"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(corpus[0].to_dict()) + "\nnot json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not JSON"):
        lv.Corpus.read_jsonl(bad)
    bad.write_text('{"tokens": ["a"], "token_bytes": ["61"], "prompt_len": 0}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: a trace dict .* missing the field 'token_ids'"):
        lv.Corpus.read_jsonl(bad)
    with pytest.raises(ValueError, match="is not a saved corpus"):
        lv.Corpus.load(bad)
    with pytest.raises(lv.LogprobFormatError, match="response 1"):
        lv.Corpus.from_responses([json.loads((FIXTURES / "vllm" / "chat_eos.json").read_text())["body"], {"x": 1}])
    with pytest.raises(ValueError, match='by must be "token" or "class"'):
        corpus.surprise_index(by="word")


def test_repr_is_the_corpus_view_and_an_empty_corpus_its_table(corpus):
    bundle = corpus._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data and 'class="lvx-standalone"' in data["text/html"]
    assert data["text/plain"].startswith("<Corpus of 5 traces")
    empty = lv.Corpus([])._repr_mimebundle_()  # nothing to view: the (empty) table of traces
    assert "<table" in empty["text/html"] and "perplexity" in empty["text/html"]
