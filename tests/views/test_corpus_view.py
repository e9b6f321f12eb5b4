"""The corpus view's wire, its selection sync and its offline page, on a corpus the real default model scored.

The payload is read with the suite's own reader of the wire format (`tests/wire.py`) and each
column is compared with numbers computed here from the traces' arrays (pandas / numpy written
in the test), never with `Corpus.to_pandas`' output.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import logprob_viz as lv
import wire
from logprob_viz.views.corpus.view import CorpusView

HOSTILE = "<img src=x onerror=alert(1)>"
TEXTS = [
    "The capital of France is Paris.",
    f"A label can be hostile: {HOSTILE}",
    "Two plus two is four, and 1234 + 1 = 1235.",
    "Once upon a time there was a robot. " * 6,  # longer than the sparkline's 64 points
]


@pytest.fixture(scope="module")
def corpus(runner):
    return runner.score(TEXTS, top_logprobs=3, progress=False)


@pytest.fixture()
def view(corpus):
    labelled = lv.Corpus(corpus.traces, labels=["paris", HOSTILE, "sums", "robot"])
    v = CorpusView(labelled)
    yield v
    v.logprob_view.close()
    v.table.close()
    v.close()


def _expected_rows(traces) -> pd.DataFrame:
    rows = []
    for tr in traces:
        lp = np.asarray(tr.logprobs, dtype=np.float64)
        lp = lp[~np.isnan(lp)]
        rows.append({"tokens": len(tr), "perplexity": float(np.exp(-lp.mean())), "min_logprob": float(lp.min()),
                     "mean_entropy": float(np.nanmean(np.asarray(tr.entropy, dtype=np.float64)))})
    return pd.DataFrame(rows)


def test_the_table_payload_holds_each_traces_numbers_and_sparkline(view, corpus):
    payload = view.table._payload
    assert payload["n"] == len(TEXTS)
    assert wire.texts(payload["label"]) == ["paris", HOSTILE, "sums", "robot"]
    assert wire.texts(payload["text"]) == [tr.text for tr in corpus.traces]
    expected = _expected_rows(corpus.traces)
    np.testing.assert_array_equal(wire.array(payload["tokens"], "int32"), expected["tokens"])
    for name in ("perplexity", "min_logprob", "mean_entropy"):
        np.testing.assert_allclose(wire.array(payload[name], "float32"), expected[name], rtol=1e-5)
    np.testing.assert_allclose(wire.array(payload["max_surprisal"], "float32"), -expected["min_logprob"], rtol=1e-5)
    spark, offsets = wire.array(payload["spark"], "float32"), wire.array(payload["spark_offsets"], "uint32")
    assert offsets[0] == 0 and offsets[-1] == spark.size and len(offsets) == len(TEXTS) + 1
    for i, tr in enumerate(corpus.traces):
        own = spark[offsets[i] : offsets[i + 1]]
        surprisal = -np.asarray(tr.logprobs, dtype=np.float32)
        if len(tr) <= 64:
            np.testing.assert_array_equal(own, surprisal)  # NaN where the logprob is unknown
        else:  # 64 equal bins, the largest surprisal of each (unknown values skipped)
            bins = [surprisal[(b * len(tr)) // 64 : ((b + 1) * len(tr)) // 64] for b in range(64)]
            np.testing.assert_array_equal(own, [np.nanmax(x) if (~np.isnan(x)).any() else np.nan for x in bins])
    assert payload["spark_max"] == pytest.approx(float(np.nanmax(-corpus.token_table()["logprob"])))


def test_a_corpus_read_from_parquet_gives_the_same_table_payload_without_a_trace_per_item(corpus, tmp_path,
                                                                                          monkeypatch):
    from logprob_viz.records.corpus import columns as corpus_columns
    from logprob_viz.views.corpus.payload import encode_corpus

    labelled = lv.Corpus(corpus.traces, labels=["paris", HOSTILE, "sums", "robot"])
    labelled.to_parquet(tmp_path / "c.parquet")
    read = lv.Corpus.read_parquet(tmp_path / "c.parquet")
    built = []
    real = corpus_columns.TraceColumns.row
    monkeypatch.setattr(corpus_columns.TraceColumns, "row", lambda self, i: built.append(i) or real(self, i))
    from_columns = encode_corpus(read)
    assert built == []  # the text, the lengths and the numbers come from the columns
    assert wire.texts(from_columns["text"]) == [tr.text for tr in corpus.traces]
    spark, offsets = wire.array(from_columns["spark"], "float32"), wire.array(from_columns["spark_offsets"], "uint32")
    for i, tr in enumerate(corpus.traces[:3]):  # (the fourth is binned: the test above checks the bins)
        np.testing.assert_array_equal(spark[offsets[i] : offsets[i + 1]], -np.asarray(tr.logprobs, dtype=np.float32))
    np.testing.assert_array_equal(wire.array(from_columns["tokens"], "int32"), [len(tr) for tr in corpus.traces])


def test_the_text_ranks_order_whole_texts_by_code_points_and_tie_equal_texts(corpus, tmp_path):
    from logprob_viz.views.corpus.payload import text_ranks

    texts = ["b", "a", "b", "é", "", "a", "\uffff", "\U0001F600", "ab", "x\ud800"]  # a lone surrogate: no Arrow
    distinct = sorted(set(texts))  # Python orders str by code points
    assert text_ranks(texts).tolist() == [distinct.index(t) for t in texts]
    assert text_ranks([]).tolist() == []
    doubled = lv.Corpus(corpus.traces + corpus.traces)
    doubled.to_parquet(tmp_path / "d.parquet")
    payload_ranks = wire.array(CorpusView(lv.Corpus.read_parquet(tmp_path / "d.parquet")).table._payload["text_rank"],
                               "uint32")
    whole = [tr.text for tr in doubled.traces]
    assert payload_ranks.tolist() == [sorted(set(whole)).index(t) for t in whole]


def test_answers_come_with_the_items_that_carry_a_predicted_option(corpus, tmp_path):
    from logprob_viz.views.corpus.payload import encode_corpus

    metadata = [{"topic": "predicted"}, {"predicted": " yes", "gold": " no", "correct": False}, {}, {}]
    lv.Corpus(corpus.traces, metadata=metadata).to_parquet(tmp_path / "a.parquet")
    lv.Corpus(corpus.traces, metadata=[{"topic": "predicted"}] * 4).to_parquet(tmp_path / "b.parquet")
    answers = encode_corpus(lv.Corpus.read_parquet(tmp_path / "a.parquet"))["answers"]
    assert wire.texts(answers["predicted"]) == ["", " yes", "", ""]
    assert wire.array(answers["correct"], "uint8").tolist() == [255, 0, 255, 255]
    assert "answers" not in encode_corpus(lv.Corpus.read_parquet(tmp_path / "b.parquet"))  # a value is not a key


def test_the_index_payload_is_a_groupby_of_every_known_token(view, corpus):
    rows = [(tok, -float(lp), int(rank)) for tr in corpus.traces
            for tok, lp, rank in zip(tr.tokens, tr.logprobs, tr.ranks, strict=True) if not np.isnan(lp)]
    frame = pd.DataFrame(rows, columns=["group", "surprisal", "rank"])
    expected = frame.groupby("group").agg(count=("surprisal", "size"), mean_surprisal=("surprisal", "mean"),
                                          max_surprisal=("surprisal", "max"), mean_rank=("rank", "mean"))
    index = view.table._index["token"]  # (a small corpus: in the view from the start)
    got = pd.DataFrame({"count": wire.array(index["count"], "int32"),
                        "mean_surprisal": wire.array(index["mean_surprisal"], "float32"),
                        "max_surprisal": wire.array(index["max_surprisal"], "float32"),
                        "mean_rank": wire.array(index["mean_rank"], "float32")},
                       index=wire.texts(index["group"])).sort_index()
    expected = expected.sort_index()
    assert list(got.index) == list(expected.index)
    np.testing.assert_array_equal(got["count"], expected["count"])
    np.testing.assert_allclose(got[["mean_surprisal", "max_surprisal", "mean_rank"]],
                               expected[["mean_surprisal", "max_surprisal", "mean_rank"]], rtol=1e-5)
    assert len(wire.texts(view.table._index["class"]["group"])) >= 3


def test_a_large_corpus_makes_its_index_only_when_its_tab_is_opened(corpus, monkeypatch, tmp_path):
    from logprob_viz.views.corpus import view as corpus_view

    monkeypatch.setattr(corpus_view, "EAGER_INDEX_TRACES", len(TEXTS) - 1)  # (a corpus "larger" than that)
    v = CorpusView(corpus)
    assert v.table._index == {} and "index" not in v.table._payload
    v.table.tab = "index"  # as the browser's tab button sets it
    groups = wire.texts(v.table._index["token"]["group"])
    assert sorted(groups) == sorted({tok for tr in corpus.traces for tok, lp in zip(tr.tokens, tr.logprobs,
                                                                                    strict=True) if not np.isnan(lp)})
    fresh = CorpusView(corpus)
    fresh.to_html(tmp_path / "c.html")  # the page has no kernel to ask: the index goes with it
    assert wire.texts(fresh.table._index["token"]["group"]) == groups


def test_labels_are_ranked_in_natural_order_as_the_browser_would_sort_them():
    from logprob_viz.views.corpus.payload import natural_ranks

    labels = ["doc 10", "Doc 9", "doc5", "doc 1", "a", "ab", "a1", "a 1", "x2y3", "x2y10", "", "007", "7", "a1b2c3d4",
              "doc 1", "é9", "Z", "a1b2c3d4e5", "n" + "1" * 16, "n" + "1" * 17, "n2", "9é9"]  # (16+ digits: kept)

    def key(s):  # js/corpus/data.js naturalKey
        return re.sub(r"[0-9]+", lambda m: m.group().zfill(16), s.lower())

    def expected(labels):
        distinct = sorted({key(x) for x in labels})
        return [distinct.index(key(x)) for x in labels]

    assert natural_ranks(labels).tolist() == expected(labels)
    assert natural_ranks([]).tolist() == [] and natural_ranks(["B", "a"]).tolist() == [1, 0]  # (no digit)
    rng = np.random.default_rng(0)
    for alphabet in ("ab1 9é0Z", "0", "12", "x"):  # random labels, and as Arrow chunks and a slice (a table's subset)
        many = ["".join(rng.choice(list(alphabet), rng.integers(0, 25))) for _ in range(3000)]
        assert natural_ranks(many).tolist() == expected(many)
        chunked = pa.chunked_array([pa.array(many[:700]), pa.array(many[700:])])
        assert natural_ranks(chunked).tolist() == expected(many)
        assert natural_ranks(pa.array(many)[13:2000]).tolist() == expected(many[13:2000])
    assert natural_ranks(pa.array(["a", None])) is None  # the browser ranks them


def test_whole_texts_are_ranked_by_their_bytes_as_python_orders_them():
    from logprob_viz.views.corpus.payload import text_ranks

    rng = np.random.default_rng(1)
    # few letters, long shared beginnings, NUL bytes (a string that ends sorts before one going on with
    # zeros), texts shorter than a round's bytes and many times longer, 2- to 4-byte characters
    for alphabet, longest in (("ab", 40), ("a", 60), ("abc\x00", 30), ("\x00", 12), ("éa😀b", 9), ("xy ", 300)):
        many = ["".join(rng.choice(list(alphabet), rng.integers(0, longest))) for _ in range(3000)]
        for texts in (many, many[5:2500]):
            distinct = sorted(set(texts))
            assert text_ranks(pa.array(texts)).tolist() == [distinct.index(t) for t in texts]
        assert text_ranks(pa.array(many)[5:2500]).tolist() == text_ranks(many[5:2500]).tolist()  # (a sliced array)


def test_selecting_a_row_or_an_occurrence_sets_the_one_logprob_view(view, corpus):
    lpv = view.logprob_view
    assert lpv.trace is view.corpus[0] and view.table._shown_item == 0
    view.table.selected_item = 2  # as a click in the browser sets it
    assert lpv.trace is view.corpus[2] and view.table._shown_item == 2 and view.pinned == -1
    assert view.children == (view.table, lpv)  # the same LogprobView, its trace replaced
    view.select(3, 5)  # an occurrence: item and token
    assert (lpv.trace is view.corpus[3], lpv.selected, view.selected_item, view.pinned) == (True, 5, 3, 5)
    lpv.selected = 7  # a click on a token of the LogprobView: the table's pinned follows
    assert view.pinned == 7
    view.select(0, 999)  # beyond the trace: nothing pinned, said back to the browser
    assert lpv.trace is view.corpus[0] and lpv.selected == -1 and view.pinned == -1
    with pytest.raises(ValueError, match="selected_item must be an item between 0 and 3"):
        view.selected_item = 4


def test_a_groups_occurrences_come_back_in_context_and_an_unknown_group_says_so(view, corpus):
    token = corpus.traces[0].tokens[5]
    view.table.index_group = token
    got = view.table._occurrences
    expected = [(i, p) for i, tr in enumerate(corpus.traces) for p, tok in enumerate(tr.tokens)
                if tok == token and not np.isnan(tr.logprobs[p])]
    assert got["group"] == token and got["error"] is None
    assert sorted((r["item"], r["position"]) for r in got["rows"]) == sorted(expected)
    for r in got["rows"]:
        tr = corpus.traces[r["item"]]
        assert r["token"] == token and r["logprob"] == pytest.approx(float(tr.logprobs[r["position"]]))
        assert tr.text.find(r["left"] + token + r["right"]) >= 0  # the context is the trace's own text
    view.table.index_by = "class"
    view.table.index_group = "no such class"
    failed = view.table._occurrences
    assert failed["rows"] == [] and "no class group 'no such class'" in failed["error"]


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="CorpusView shows an lv.Corpus, got list"):
        CorpusView([1, 2])
    with pytest.raises(ValueError, match="no traces"):
        CorpusView(lv.Corpus([]))


def _states(page: str) -> list[dict]:
    blobs = re.findall(r'<script type="application/vnd.logprob-viz.state\+base64">([^<]*)</script>', page)
    return [json.loads(base64.b64decode(b)) for b in blobs]


def test_the_offline_page_holds_the_table_and_the_pinned_trace_and_escapes_every_text(corpus, tmp_path):
    labelled = lv.Corpus(corpus.traces, labels=["paris", HOSTILE, "sums", "robot"])
    path = labelled.to_html(tmp_path / "corpus.html", selected_item=1, pinned=4)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "default-src 'none'" in page
    assert HOSTILE not in page  # as base64 in the state, or escaped in the fallback text
    table, detail = _states(page)
    assert table["state"]["selected_item"] == 1 and table["state"]["_shown_item"] == 1
    assert table["state"]["pinned"] == 4 and detail["state"]["selected"] == 4
    assert detail["state"]["_payload"]["n"] == len(corpus.traces[1])
    bundle = CorpusView(labelled)._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data and 'class="lvx-standalone"' in data["text/html"]
    assert lv.to_html(labelled).startswith("<!doctype html>")  # lv.to_html goes through Corpus.to_html
