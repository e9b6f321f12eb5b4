"""lv.ray.from_vllm_rows on real vLLM rows: tests/fixtures/vllm_rows/rows.json, made by vLLM 0.32's own
offline engine (`LLM.generate(texts, SamplingParams(prompt_logprobs=5, max_tokens=1))`, the project's
vLLM CPU build, the default model in float32; see make_rows.py there) in the shape ray.data.llm's vLLM
stage writes. The rows' dicts are the reference for what is flattened, and plain transformers (a
log-softmax of the default model over the same token ids) the independent check of the numbers."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import logprob_viz as lv
from logprob_viz.records.corpus.parquet import trace_table
from paths import ARTIFACTS, REPO
from vllm_live.test_vllm_live import TOL  # vLLM vs transformers per token (its comment says why)

FIXTURE = REPO / "tests" / "fixtures" / "vllm_rows" / "rows.json"


@pytest.fixture(scope="module")
def record():
    record = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for row in record["rows"]:  # JSON keys are strings; the stage's rows hold int token ids
        row["prompt_logprobs"] = [None if p is None else {int(k): v for k, v in p.items()}
                                  for p in row["prompt_logprobs"]]
    return record


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


@pytest.fixture(scope="module")
def corpus(record, tokenizer):
    """The rows as a table in the corpus schema, written as a Parquet part and read back."""
    table = lv.ray.vllm_rows_table(record["rows"], top_logprobs=record["k"], tokenizer=tokenizer)
    assert table.schema.names == trace_table([], [], []).schema.names  # the corpus schema, column for column
    out = ARTIFACTS / "vllm_rows"
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out / "part-0.parquet")
    return lv.Corpus.read_parquet(out)


def test_the_rows_fixture_is_real_vllm_output(record):
    assert record["source"].startswith("vLLM 0.") and "prompt_logprobs=5" in record["source"]
    assert len(record["rows"]) == 5 and FIXTURE.stat().st_size < 1_000_000


def test_tokens_come_from_prompt_token_ids_and_the_dicts_are_flattened(record, corpus, tokenizer):
    k = record["k"]
    assert len(corpus) == len(record["rows"])
    for row, trace in zip(record["rows"], corpus, strict=True):
        ids = row["prompt_token_ids"]
        assert trace.token_ids.tolist() == ids and trace.k == k and trace.text == row["prompt"]
        for token_id, got in zip(ids, trace.token_bytes, strict=True):
            text = tokenizer.decode([token_id])
            if "\ufffd" not in text:  # (a token that splits a character has no text of its own)
                assert got == text.encode("utf-8")
        assert b"".join(trace.token_bytes).decode("utf-8") == row["prompt"]
        assert row["prompt_logprobs"][0] is None and np.isnan(trace.logprobs[0])
        for i in range(1, len(ids)):
            entries = row["prompt_logprobs"][i]
            chosen = entries[ids[i]]
            assert trace.logprobs[i] == np.float32(chosen["logprob"]) and trace.ranks[i] == chosen["rank"]
            top = sorted((e["rank"], token_id, e["logprob"]) for token_id, e in entries.items() if e["rank"] <= k)
            assert [r for r, _, _ in top] == list(range(1, k + 1))
            assert trace.top_ids[i, :k].tolist() == [t for _, t, _ in top]
            assert trace.top_logprobs[i, :k].tolist() == [float(np.float32(lp)) for _, _, lp in top]


def test_the_chosen_logprobs_agree_with_transformers(record, corpus, reference_model):
    import torch

    worst = 0.0
    for row, trace in zip(record["rows"], corpus, strict=True):
        ids = torch.tensor([row["prompt_token_ids"]])
        with torch.no_grad():
            logits = reference_model(ids).logits[0].double()
        expected = torch.log_softmax(logits, -1)[:-1].gather(1, ids[0, 1:, None])[:, 0].numpy()
        worst = max(worst, float(np.abs(trace.logprobs[1:] - expected).max()))
        # the rank too: 1 + how many tokens transformers puts above the chosen one (ties within TOL either way)
        chosen = logits[:-1].gather(1, ids[0, 1:, None])
        above = (logits[:-1] > chosen + 2 * TOL).sum(-1).numpy()
        above_or_tied = (logits[:-1] > chosen - 2 * TOL).sum(-1).numpy()
        assert ((trace.ranks[1:] >= above + 1) & (trace.ranks[1:] <= above_or_tied + 1)).all()
    assert worst <= TOL, f"vLLM's prompt logprobs differ from transformers' by {worst:.2e}"
