"""Traces whose alternatives' texts come from a shared vocabulary table (lighter traces)."""

from __future__ import annotations

import numpy as np
import pytest

from logprob_viz.records.trace import Trace

VOCAB = [f"<{i}>" for i in range(100)]


def _trace(n=6, k=3, **kw):
    rng = np.random.default_rng(1)
    ids = rng.integers(0, len(VOCAB), (n, k)).astype(np.int32)
    ids[2, 2] = -1  # a padded slot: no alternative there
    lp = np.sort(-rng.random((n, k)).astype(np.float32) * 4, axis=1)[:, ::-1]
    lp[2, 2] = -np.inf
    chosen = ids[:, 0]
    return ids, Trace(
        tokens=[VOCAB[i] for i in chosen], token_ids=chosen, logprobs=lp[:, 0], top_ids=ids, top_logprobs=lp, **kw
    )


def test_top_tokens_read_from_the_vocabulary_equal_the_listed_form():
    ids, t = _trace(vocab=VOCAB)
    listed = [[VOCAB[i] for i in row if i >= 0] for row in ids.tolist()]
    assert t.top_tokens == listed and list(t.top_tokens) == listed
    assert t.top_tokens[2] == listed[2] and len(t.top_tokens[2]) == 2
    assert t[1:4].top_tokens == listed[1:4]
    plain = Trace.from_dict(t.to_dict())  # the JSON form lists the texts: no vocabulary needed to read it back
    assert plain.vocab is None and plain.top_tokens == listed
    assert list(t.to_pandas()["top_tokens"]) == listed


def test_vocab_needs_ids_and_matching_columns():
    with pytest.raises(ValueError, match="give top_ids too"):
        Trace(tokens=["a"], top_logprobs=[[-1.0]], vocab=VOCAB)
    with pytest.raises(ValueError, match="columns"):
        Trace(tokens=["a"], top_ids=[[1, 2]], top_logprobs=[[-1.0]], vocab=VOCAB)
    with pytest.raises(TypeError, match="vocab must be a sequence"):
        Trace(tokens=["a"], top_ids=[[1]], top_logprobs=[[-1.0]], vocab="abc")


def test_empty_flag_rows_are_shared_and_refuse_in_place_changes():
    _, t = _trace()
    assert t.flags[0] == [] and t.flags[0] is t.flags[1]
    with pytest.raises(TypeError, match="assign a new list"):
        t.flags[0].append("collided")
    t.flags[0] = ["collided"]
    assert t.flags[0] == ["collided"] and t.flags[1] == []
