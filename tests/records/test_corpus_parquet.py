"""Corpus as Parquet: an exact round trip (float bits, NaN and -inf included), a corpus read back
as columns (no Trace built until asked), its tables equal to the in-memory corpus's, a folder of
parts, and the faults: a truncated, a corrupted and a foreign part, raised or skipped."""

import json
import math
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import logprob_viz as lv
from logprob_viz.records.corpus.arrow import ParquetPartError
from logprob_viz.records.corpus.columns import TraceColumns
from logprob_viz.records.corpus.stats import per_token
from paths import ARTIFACTS

TEXTS = [
    "A robot may not injure a human being.",
    "Robots 🤖 say こんにちは — it’s “fine”.",
    "    def square(x):\n        return x * x",
]
NAN_PAYLOAD = np.array([0x7FC01234], dtype=np.uint32).view(np.float32)[0]  # a NaN with payload bits


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = ARTIFACTS / "parquet"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.rglob("*.parquet"):
        old.unlink()
    return folder


def hand_made_traces():
    """Traces no runner makes: alternatives listed as texts, flags, sampled-from logprobs, odd floats."""
    listed = lv.Trace(
        tokens=["Hi", " \\xe2", "\\x9c\\x93", "!"], token_bytes=[b"Hi", b" \xe2", b"\x9c\x93", b"!"],
        token_ids=[5, -1, 7, 9], logprobs=[np.nan, -0.5, NAN_PAYLOAD, -np.inf], ranks=[0, 1, 2, 3],
        entropy=[np.nan, 1.25, 0.0, 3.5],
        top_tokens=[[], ["a", "b"], ["c"], ["d", "e"]],
        top_logprobs=[[-np.inf, -np.inf], [-0.1, -2.3], [-0.7, -np.inf], [-1e-8, -30.0]],
        top_ids=[[-1, -1], [1, 2], [3, -1], [4, 5]],
        processed_logprobs=[np.nan, -0.25, -1.0, np.nan], processed_top_logprobs=[[-np.inf] * 2, [-0.05, -3.0],
                                                                                   [-0.3, -np.inf], [-np.inf] * 2],
        flags=[["first_token_unknown"], [], ["no_bytes", "collided"], []],
        prompt_len=2, meta={"source": "openai", "model": "m", "nested": {"a": [1, 2.5, None]}},
    )
    empty = lv.Trace(tokens=[], top_logprobs=np.zeros((0, 5), np.float32), meta={"source": "x"})
    return [listed, empty]


def bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def assert_same_trace(got, want):
    assert got.tokens == want.tokens and got.token_bytes == want.token_bytes
    for name in ("logprobs", "entropy", "top_logprobs"):
        np.testing.assert_array_equal(bits(getattr(got, name)), bits(getattr(want, name)), err_msg=name)
    for name in ("token_ids", "ranks", "top_ids"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
        assert getattr(got, name).dtype == getattr(want, name).dtype
    assert got.k == want.k and got.prompt_len == want.prompt_len and got.meta == want.meta
    assert [list(r) for r in got.top_tokens] == [list(r) for r in want.top_tokens]
    assert got.flagged() == want.flagged() and [list(r) for r in got.flags] == [list(r) for r in want.flags]
    assert (got.processed_logprobs is None) == (want.processed_logprobs is None)
    if want.processed_logprobs is not None:
        np.testing.assert_array_equal(bits(got.processed_logprobs), bits(want.processed_logprobs))
        np.testing.assert_array_equal(bits(got.processed_top_logprobs), bits(want.processed_top_logprobs))


@pytest.fixture(scope="module")
def corpus(runner):
    scored = runner.score(TEXTS, top_logprobs=5, progress=False)
    traces = [*scored.traces, *hand_made_traces()]
    metadata = [*scored.metadata, {"gold": "x", "score": 0.5}, {}]
    return lv.Corpus(traces, labels=["a", "b", "c", "listed", "empty"], metadata=metadata, meta=scored.meta)


def test_round_trip_is_exact(corpus, out):
    path = corpus.to_parquet(out / "one.parquet")
    back = lv.Corpus.read_parquet(path)
    assert isinstance(back.traces, TraceColumns)  # columns, not a list of traces
    assert len(back) == len(corpus) and list(back.labels) == corpus.labels
    assert [back.metadata[i] for i in range(len(back))] == corpus.metadata and back.meta == corpus.meta
    for i in range(len(corpus)):
        assert_same_trace(back[i], corpus[i])
    assert back[0].vocab is not None and back[3].vocab is None  # the local traces read their texts by id again
    assert bits(back[3].logprobs)[2] == 0x7FC01234  # the NaN's payload survives


def test_the_file_keeps_the_vocabulary_once(corpus, out):
    path = corpus.to_parquet(out / "vocab.parquet")
    table = pq.read_table(path)
    assert table.column("vocab").to_pylist() == [0, 0, 0, None, None]
    assert table.column("top_tokens").to_pylist()[:3] == [None] * 3
    assert table.column("top_tokens").to_pylist()[3] == [[], ["a", "b"], ["c"], ["d", "e"]]
    # the nested alternatives, read with pyarrow alone: row i, token j, alternative a
    assert table.column("top_logprobs")[0].as_py()[1] == pytest.approx(corpus[0].top_logprobs[1].tolist())
    assert table.column("text").to_pylist()[:3] == TEXTS


def test_the_file_stores_only_the_vocabulary_ids_its_rows_use(corpus, out):
    path = corpus.to_parquet(out / "used.parquet")
    (entry,) = json.loads(pq.ParquetFile(path).metadata.metadata[b"logprob_viz.vocabs"])
    whole = corpus[0].vocab.byte_table()  # the tokenizer's table, every id
    used = sorted({i for t in corpus.traces[:3] for i in t.top_ids.reshape(-1).tolist() if i >= 0})
    assert entry["ids"] == used and entry["size"] == len(whole) and len(used) < len(whole) / 20
    assert [bytes.fromhex(h) for h in entry["bytes_hex"]] == [whole[i] for i in used]
    back = lv.Corpus.read_parquet(path)
    assert len(back[0].vocab) == len(whole) and back[0].vocab.bytes_of(used[-1]) == whole[used[-1]]
    # written again from what was read (a table of the used ids only), then read: the same traces
    again = lv.Corpus.read_parquet(back.to_parquet(out / "used-again.parquet"))
    for i in range(len(corpus)):
        assert_same_trace(again[i], corpus[i])
    assert json.loads(pq.ParquetFile(out / "used-again.parquet").metadata.metadata[b"logprob_viz.vocabs"]) == [entry]


def test_a_vocabulary_of_texts_keeps_its_used_texts(out):
    vocab = [f"w{i}" for i in range(1000)]
    trace = lv.Trace(tokens=["a", "b"], token_bytes=[b"a", b"b"], logprobs=[np.nan, -1.0],
                     top_ids=[[7, 999], [3, -1]], top_logprobs=[[-0.5, -2.0], [-0.1, -np.inf]], vocab=vocab)
    path = lv.Corpus([trace]).to_parquet(out / "texts.parquet")
    (entry,) = json.loads(pq.ParquetFile(path).metadata.metadata[b"logprob_viz.vocabs"])
    assert entry == {"size": 1000, "ids": [3, 7, 999], "texts": ["w3", "w7", "w999"]}
    back = lv.Corpus.read_parquet(path)[0]
    assert [list(r) for r in back.top_tokens] == [["w7", "w999"], ["w3"]] and len(back.vocab) == 1000


def test_a_one_text_file_is_smaller_than_its_jsonl(runner, out):
    one = runner.score([TEXTS[1]], top_logprobs=5, progress=False)
    parquet = one.to_parquet(out / "one-text.parquet").stat().st_size
    jsonl = one.save(out / "one-text.jsonl").stat().st_size
    whole_table = sum(2 * len(b) + 4 for b in one[0].vocab.byte_table())  # hex in JSON, as the old files stored it
    assert parquet < jsonl, (parquet, jsonl)
    assert parquet < whole_table / 20  # the whole table alone was ~860 KB
    assert_same_trace(lv.Corpus.read_parquet(out / "one-text.parquet")[0], one[0])


def test_a_file_written_with_the_whole_vocabulary_still_reads(corpus, out):
    """The layout before issue 48: the whole table as {"bytes_hex": [...]}, snappy, the Arrow schema kept."""
    table = pq.read_table(corpus.to_parquet(out / "new-layout.parquet"))
    whole = corpus[0].vocab.byte_table()
    metadata = {b"logprob_viz.corpus": json.dumps({"version": 1, "meta": corpus.meta, "items": len(corpus)}),
                b"logprob_viz.vocabs": json.dumps([{"bytes_hex": [b.hex() for b in whole]}])}
    old = out / "old-layout.parquet"
    pq.write_table(table.replace_schema_metadata(metadata), old, write_page_checksum=True)
    assert old.stat().st_size > 800_000  # the whole table is there
    back = lv.Corpus.read_parquet(old)
    for i in range(len(corpus)):
        assert_same_trace(back[i], corpus[i])
    assert back[0].vocab.byte_table() == whole


def test_tables_come_from_the_columns(corpus, out):
    back = lv.Corpus.read_parquet(corpus.to_parquet(out / "tables.parquet"))
    mine, theirs = back.token_table(), corpus.token_table()
    for name in ("item", "position", "token_id", "logprob", "rank", "entropy", "is_prompt", "first"):
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)
    assert not isinstance(back.traces, list) and "token_codes" in vars(back)  # the texts are made from the codes
    codes, texts = back.token_codes
    assert texts[codes].tolist() == theirs["token"].tolist()
    assert mine["token"].tolist() == theirs["token"].tolist()
    a, b = back.to_pandas(), corpus.to_pandas()
    assert a["text"].tolist() == b["text"].tolist() and a["flags"].tolist() == b["flags"].tolist()
    np.testing.assert_array_equal(a[["tokens", "perplexity", "min_logprob"]].to_numpy(),
                                  b[["tokens", "perplexity", "min_logprob"]].to_numpy())
    for by in ("token", "class"):
        x = back.surprise_index(by=by).sort_values("group").reset_index(drop=True)
        y = corpus.surprise_index(by=by).sort_values("group").reset_index(drop=True)
        assert x["group"].tolist() == y["group"].tolist() and x["count"].tolist() == y["count"].tolist()
        np.testing.assert_allclose(x["mean_surprisal"], y["mean_surprisal"], rtol=1e-12)
    kwic = back.occurrences(" robot")
    assert kwic["left"].tolist() == ["A"] and kwic["label"].tolist() == ["a"]


def test_a_folder_of_parts_and_subsets(corpus, out):
    folder = out / "parts"
    folder.mkdir(exist_ok=True)
    corpus[:2].to_parquet(folder / "part-0.parquet")
    corpus[2:].to_parquet(folder / "part-1.parquet")
    back = lv.Corpus.read_parquet(folder)
    assert list(back.labels) == corpus.labels
    for i in range(len(corpus)):
        assert_same_trace(back[i], corpus[i])
    picked = back[[4, 0, 3]]
    assert isinstance(picked.traces, TraceColumns) and list(picked.labels) == ["empty", "a", "listed"]
    assert_same_trace(picked[1], corpus[0])
    assert picked.to_pandas()["tokens"].tolist() == [0, len(corpus[0]), 4]
    np.testing.assert_array_equal(picked.token_table()["logprob"], np.concatenate(
        [corpus[4].logprobs, corpus[0].logprobs, corpus[3].logprobs]))
    assert back["listed"].tokens == corpus[3].tokens
    rows = back.filter(back.to_pandas()["tokens"] == 4)
    assert list(rows.labels) == ["listed"]


# -- faults ----------------------------------------------------------------------------------


@pytest.fixture()
def damaged(corpus, out, request):
    folder = out / f"damaged-{request.node.name}"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*"):
        old.unlink()
    corpus[:2].to_parquet(folder / "a.parquet")
    corpus[2:3].to_parquet(folder / "b.parquet")
    corpus[3:].to_parquet(folder / "c.parquet")
    return folder


def test_a_truncated_part_is_named(damaged):
    part = damaged / "b.parquet"
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])  # a write cut off half-way
    with pytest.raises(lv.ParquetPartError, match=r"b\.parquet: not a readable Parquet file .*truncated"):
        lv.Corpus.read_parquet(damaged)
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable part.*b\.parquet") as caught:
        back = lv.Corpus.read_parquet(damaged, on_error="skip")
    assert list(back.labels) == ["a", "b", "listed", "empty"]
    assert [p for p, _ in back.skipped] == [str(part)]
    # issue 48 item 10: the warning does not advise on_error="skip", which was just used
    assert "on_error" not in str(caught[0].message) and "listed in corpus.skipped" in str(caught[0].message)
    with pytest.raises(ParquetPartError) as one_file:
        lv.Corpus.read_parquet(part)  # one file: nothing else to read, so no advice to skip
    assert str(one_file.value).endswith("or corrupted; write it again")


def test_a_corrupted_part_is_named(damaged):
    part = damaged / "a.parquet"
    layout = pq.ParquetFile(part).metadata.row_group(0)
    chunk = next(layout.column(i) for i in range(layout.num_columns) if layout.column(i).path_in_schema.startswith(
        "logprobs"))
    data = bytearray(part.read_bytes())
    start = chunk.data_page_offset + 24  # inside the logprobs' data page, past its header
    data[start : start + 16] = bytes(16)
    part.write_bytes(bytes(data))
    with pytest.raises(ParquetPartError, match=r"a\.parquet: not a readable Parquet file"):
        lv.Corpus.read_parquet(damaged)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back = lv.Corpus.read_parquet(damaged, on_error="skip")
    assert list(back.labels) == ["c", "listed", "empty"] and len(caught) == 1
    assert_same_trace(back[0], lv.Corpus.read_parquet(damaged / "b.parquet")[0])


def test_a_jsonl_corpus_is_named_as_what_it_is(corpus, damaged, out):
    # issue 48 item 10: not "truncated or corrupted", but what the file is and what opens it
    saved = corpus.save(out / "saved.jsonl")
    with pytest.raises(ParquetPartError) as error:
        lv.Corpus.read_parquet(saved)
    assert str(error.value) == (f"{saved}: not a Parquet file but JSON lines; a JSONL corpus opens with "
                                "lv.Corpus.load")
    responses = out / "responses.jsonl"
    responses.write_text('{"choices": []}\n', encoding="utf-8")
    with pytest.raises(ParquetPartError, match=r"JSON lines; a JSONL corpus opens with lv\.Corpus\.read_jsonl"):
        lv.Corpus.read_parquet(responses)
    (damaged / "d.parquet").write_bytes(saved.read_bytes())  # a JSONL part named .parquet in a folder of parts
    with pytest.raises(ParquetPartError) as in_folder:
        lv.Corpus.read_parquet(damaged)
    assert str(in_folder.value) == (f"{damaged / 'd.parquet'}: not a Parquet file but JSON lines; a JSONL corpus "
                                    "opens with lv.Corpus.load; or read the other parts with "
                                    "read_parquet(folder, on_error='skip')")
    from logprob_viz.records.corpus.scan import surprise_index_parquet

    with pytest.raises(ParquetPartError, match=r"d\.parquet: not a Parquet file but JSON lines"):
        surprise_index_parquet(damaged)
    assert len(lv.Corpus.load(saved)) == len(corpus)


def test_a_part_of_another_schema_and_inconsistent_rows(damaged):
    pq.write_table(pa.table({"x": [1, 2]}), damaged / "d.parquet")
    with pytest.raises(ParquetPartError, match=r"d\.parquet: not corpus rows: no column token_bytes"):
        lv.Corpus.read_parquet(damaged)
    table = pq.read_table(damaged / "c.parquet")
    short = pa.array([[0.5]] + [None] * (table.num_rows - 1), pa.list_(pa.float32()))
    table = table.set_column(table.column_names.index("logprobs"), "logprobs", short)
    pq.write_table(table, damaged / "d.parquet")
    with pytest.raises(ParquetPartError, match=r"d\.parquet: row 0: logprobs has 1 entries but token_bytes has 4"):
        lv.Corpus.read_parquet(damaged)


def test_on_error_and_missing_paths(out):
    with pytest.raises(ValueError, match="on_error must be"):
        lv.Corpus.read_parquet(out, on_error="ignore")
    with pytest.raises(FileNotFoundError, match="no file or folder"):
        lv.Corpus.read_parquet(out / "nothing.parquet")
    (out / "empty-folder").mkdir(exist_ok=True)
    with pytest.raises(FileNotFoundError, match="holds no"):
        lv.Corpus.read_parquet(out / "empty-folder")


def test_save_with_a_parquet_name_writes_parquet(corpus, out):
    back = lv.Corpus.read_parquet(corpus.save(out / "saved.parquet"))
    assert math.isnan(back[3].logprobs[0]) and list(back.labels) == corpus.labels


def test_the_streamed_index_equals_the_loaded_one(corpus, out):
    folder = out / "scan"
    folder.mkdir(exist_ok=True)
    corpus[:2].to_parquet(folder / "part-0.parquet")
    corpus[2:].to_parquet(folder / "part-1.parquet")
    for by in ("token", "class"):
        for prompt in (True, False):
            # batches of 1 row: the sums of many batches, and of two parts, add up to the whole corpus's
            from logprob_viz.records.corpus.scan import surprise_index_parquet

            streamed = surprise_index_parquet(folder, by=by, prompt=prompt, batch_rows=1)
            whole = corpus.surprise_index(by=by, prompt=prompt)
            a = streamed.sort_values("group").reset_index(drop=True)
            b = whole.sort_values("group").reset_index(drop=True)
            assert a["group"].tolist() == b["group"].tolist() and a["count"].tolist() == b["count"].tolist()
            for name in ("mean_surprisal", "max_surprisal", "mean_rank", "share_rank_over_10"):
                np.testing.assert_allclose(a[name], b[name], rtol=1e-12, err_msg=f"{by} {prompt} {name}")
    assert lv.Corpus.surprise_index_parquet(folder)["group"].tolist() == corpus.surprise_index()["group"].tolist()


def test_the_token_columns_are_read_when_first_asked_for_and_checked_then(corpus, out):
    path = corpus.to_parquet(out / "later.parquet")
    back = lv.Corpus.read_parquet(path)
    block = back.traces.blocks[0]
    assert "logprobs" in block.table.column_names and "tokens" not in block.table.column_names
    back.to_pandas()  # the table's numbers need the logprobs and entropy only
    assert not {"tokens", "token_bytes", "top_logprobs"} & set(block.table.column_names)
    assert_same_trace(back[1], corpus[1])
    # one trace reads its own row group's token columns (one_row.py), not the whole part's
    assert not {"tokens", "token_bytes", "top_logprobs"} & set(block.table.column_names)
    assert {"tokens", "token_bytes", "top_logprobs"} <= set(block._one_group[0].table.column_names)
    assert block.column("tokens") is not None  # asked for whole (the surprise index): read whole
    assert {"tokens"} <= set(block.table.column_names)
    layout = pq.ParquetFile(path).metadata.row_group(0)
    chunk = next(layout.column(i) for i in range(layout.num_columns) if layout.column(i).path_in_schema.startswith(
        "token_ids"))
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + 24 : chunk.data_page_offset + 40] = bytes(16)  # inside its data page
    path.write_bytes(bytes(data))
    damaged = lv.Corpus.read_parquet(path)  # (the columns read now are whole)
    with pytest.raises(ParquetPartError, match=r"later\.parquet: its columns .*token_ids.* \(the row group of row "
                                               r"0\), read when first needed, are not readable.*the file is "
                                               r"corrupted: write it again"):
        damaged[0]
    with pytest.raises(ParquetPartError, match=r"later\.parquet: its column token_ids, read when first needed.*"
                                               r"the file is corrupted: write it again"):
        damaged.traces.blocks[0].column("token_ids")


def test_a_file_gone_or_changed_since_the_corpus_was_opened_says_so(corpus, out):
    # issue 48 item 10: not "changed or corrupted", but what happened to the file
    path = corpus.to_parquet(out / "gone.parquet")
    back = lv.Corpus.read_parquet(path)
    back.to_pandas()  # the table reads the columns read at once
    path.unlink()
    with pytest.raises(ParquetPartError) as gone:
        back[1]
    assert str(gone.value).startswith(f"{path}: the file is gone since the corpus was opened, and its column ")
    assert str(gone.value).endswith("is read only when first needed; keep the files as they are while the corpus "
                                    "is in use, or open it again with lv.Corpus.read_parquet")
    other = corpus.to_parquet(out / "changed.parquet")
    reopened = lv.Corpus.read_parquet(other)
    corpus[::-1].to_parquet(other)  # written again under the same name: the later columns would not match
    with pytest.raises(ParquetPartError, match=r"changed\.parquet: the file changed \(its size or time differs\) "
                                               "since the corpus was opened"):
        reopened[1]
    assert_same_trace(lv.Corpus.read_parquet(other)[1], corpus[3])


def test_the_first_tokens_logprob_is_nan_so_exact_comparison_needs_equal_nan(corpus, out):
    # docs/scale.md says so: nothing comes before the first token to predict it
    back = lv.Corpus.read_parquet(corpus.to_parquet(out / "nan.parquet"))
    assert math.isnan(back[0].logprobs[0]) and math.isnan(corpus[0].logprobs[0])
    assert not np.array_equal(back[0].logprobs, corpus[0].logprobs)
    assert np.array_equal(back[0].logprobs, corpus[0].logprobs, equal_nan=True)


def test_each_row_stores_its_summaries_and_a_file_without_them_opens_with_the_same_numbers(corpus, out):
    path = corpus.to_parquet(out / "summaries.parquet")
    table = pq.read_table(path)
    for i, (lps, ents) in enumerate(zip(table.column("logprobs").to_pylist(), table.column("entropy").to_pylist(),
                                        strict=True)):
        lp = np.array(lps, dtype=np.float64)
        lp = lp[~np.isnan(lp)]  # (the summaries are over the known logprobs; NaN where none is)
        ent = np.array(ents, dtype=np.float64)
        ent = ent[~np.isnan(ent)]
        stored = {name: table.column(name)[i].as_py() for name in ("mean_logprob", "min_logprob", "mean_entropy")}
        np.testing.assert_allclose(stored["mean_logprob"], lp.mean() if lp.size else np.nan, rtol=1e-12)
        np.testing.assert_array_equal(stored["min_logprob"], lp.min() if lp.size else np.nan)
        np.testing.assert_allclose(stored["mean_entropy"], ent.mean() if ent.size else np.nan, rtol=1e-12)
    assert table.column("min_logprob")[3].as_py() == -math.inf and math.isnan(table.column("mean_logprob")[4].as_py())
    # a file from before the summaries: the same numbers, reduced from its token columns on read
    old = out / "no-summaries.parquet"
    pq.write_table(table.drop_columns(["mean_logprob", "min_logprob", "mean_entropy"]), old)
    new_back, old_back = lv.Corpus.read_parquet(path), lv.Corpus.read_parquet(old)
    assert "entropy" not in new_back.traces.blocks[0].table.column_names  # (the table reads the summaries)
    assert "entropy" in old_back.traces.blocks[0].table.column_names
    numbers = ["tokens", "perplexity", "mean_logprob", "min_logprob", "max_surprisal", "mean_entropy"]
    a, b, c = new_back.to_pandas(), old_back.to_pandas(), corpus.to_pandas()
    np.testing.assert_array_equal(a[numbers].to_numpy(), b[numbers].to_numpy())
    np.testing.assert_array_equal(a[numbers].to_numpy(), c[numbers].to_numpy())
    np.testing.assert_allclose(a["mean_logprob"].to_numpy()[:3], [np.nanmean(np.asarray(t.logprobs, np.float64))
                                                                  for t in corpus.traces[:3]], rtol=1e-12)
    assert_same_trace(new_back[3], corpus[3])  # (entropy, read on access, is whole)


def test_a_few_rows_of_many_read_their_own_values_and_row_groups(corpus, out):
    # the corpus view's window: 3 rows of 100 in two parts read row by row (columns.py `flat`), and a trace
    # from its own row group (one_row.py), equal to the whole corpus's
    many = lv.Corpus([corpus.traces[i % len(corpus)] for i in range(100)])
    (out / "many").mkdir(exist_ok=True)
    many[:60].to_parquet(out / "many" / "part-0.parquet", row_group_size=7)
    many[60:].to_parquet(out / "many" / "part-1.parquet", row_group_size=7)
    back = lv.Corpus.read_parquet(out / "many")
    picked = [97, 3, 64, 0]
    for name in ("logprobs", "entropy", "ranks", "token_ids"):
        few = per_token(back[picked], name, np.float64)
        whole = np.concatenate([np.asarray(getattr(many[i], name), np.float64) for i in picked])
        np.testing.assert_array_equal(few, whole, err_msg=name)
    for i in picked:
        assert_same_trace(back[i], many[i])
