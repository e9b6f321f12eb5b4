"""A large corpus's table sorted and filtered in the kernel, a window of rows at a time (views/corpus/window.py).

The corpus: a real vLLM trace of mpt-7b (the shared fixture) replicated and perturbed into 3,000 traces
(benchmarks/corpus_replicas.py), read from Parquet. Each order and window is checked against the file
read with pyarrow and reduced here (float64 perplexity over the known logprobs, rounded to float32 as
the table holds it; Python's stable sort; `str.casefold` for "contains" in any case)."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pytest

import logprob_viz as lv
from benchmarks.corpus_replicas import write_replicas
from logprob_viz.views.codec import DTYPES
from logprob_viz.views.corpus.window import WINDOW_ROWS
from logprob_viz.views.page import STATE_TYPE

N = 3_000


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    import pyarrow.parquet as pq

    path = write_replicas(tmp_path_factory.mktemp("window") / "c.parquet", N)
    table = pq.read_table(path, columns=["label", "text", "logprobs"])
    ppl = [math.exp(-np.mean([x for x in row if x is not None and not math.isnan(x)]))
           for row in table.column("logprobs").to_pylist()]
    expected = {"label": table.column("label").to_pylist(), "text": table.column("text").to_pylist(),
                "perplexity": [float(np.float32(p)) for p in ppl]}
    return lv.CorpusView(lv.Corpus.read_parquet(path), windowed=True), expected


def shown(view) -> tuple[int, int, list[int], dict]:
    rows = view.table._rows
    items = rows["rows"]["items"]
    return rows["start"], rows["total"], np.frombuffer(items["buffer"], DTYPES[items["dtype"]]).tolist(), rows["rows"]


def test_the_first_window_is_in_the_state_and_small(large):
    view, _ = large
    start, total, items, _ = shown(view)
    assert (start, total, items) == (0, N, list(range(WINDOW_ROWS)))
    assert view.table._payload["windowed"] and "text" not in view.table._payload  # (no column travels whole)
    assert view.table._payload["empty"] == ["mean_entropy", "flags"]  # a server's trace: no entropy; nothing lost


def test_sorts_follow_the_browser_s_rules(large):
    view, expected = large
    ppl = expected["perplexity"]
    view.table.sort = {"column": "perplexity", "descending": True}
    view.table._view_rows = {"start": 1000, "count": WINDOW_ROWS}
    start, _, items, payload = shown(view)
    want = sorted(range(N), key=lambda i: (-ppl[i], i))
    assert start == 1000 and items == want[1000 : 1000 + WINDOW_ROWS]
    got = np.frombuffer(payload["perplexity"]["buffer"], np.float32).tolist()
    assert got == [ppl[i] for i in items]
    view.table.sort = {"column": "label", "descending": False}  # natural order: doc 2 before doc 10
    view.table._view_rows = {"start": 0, "count": 12}
    assert shown(view)[2] == list(range(12))
    view.table.sort = {"column": "text", "descending": True}
    want = sorted(range(N), key=lambda i: expected["text"][i].encode(), reverse=True)  # (reverse keeps ties' order)
    assert shown(view)[2] == sorted(want[:12], key=lambda i: (want.index(i)))
    view.table._view_rows = {"start": N + 50, "count": WINDOW_ROWS}  # past the end: the last rows
    start, total, items, _ = shown(view)
    assert (start, total, len(items)) == (N - WINDOW_ROWS, N, WINDOW_ROWS)


def test_filters_contain_in_any_case_and_a_perplexity_range_drops_unknowns(large):
    view, expected = large
    view.table.sort = {"column": "", "descending": False}
    view.table._view_rows = {"start": 0, "count": WINDOW_ROWS}
    view.table.filters = {**view.table.filters, "text": "HUMAN BEING TO COME", "ppl_min": 1.3, "ppl_max": 1.5}
    keep = [i for i in range(N) if "human being to come" in expected["text"][i].casefold()
            and 1.3 <= expected["perplexity"][i] <= 1.5]
    _, total, items, _ = shown(view)
    assert 0 < total == len(keep) < N and items == keep[:WINDOW_ROWS]
    view.table.filters = {**view.table.filters, "text": "", "ppl_min": None, "ppl_max": None, "label": "doc 29"}
    keep = [i for i in range(N) if "doc 29" in expected["label"][i]]
    assert shown(view)[1:3] == (len(keep), keep)


def test_the_offline_page_of_a_large_view_holds_every_row(large):
    view, _ = large
    page = view.to_html()  # (no kernel to send rows there: the whole table)
    state = re.search(f'<script type="{re.escape(STATE_TYPE)}">([^<]+)</script>', page).group(1)
    payload = json.loads(base64.b64decode(state))["state"]["_payload"]
    assert payload["n"] == N and "windowed" not in payload and "text_rank" in payload
