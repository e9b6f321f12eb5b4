"""`Trace.concat`, the one join every caller uses (a view's appends, server streams, manual
decoding), and `Trace.warnings`, derived from the flags when asked.

Every expected array is written out by hand here, fills included, not produced by the code.
"""

import json

import numpy as np
import pytest

from logprob_viz import Trace

NAN, INF = np.nan, np.inf


def scored_prompt() -> Trace:
    """Three prompt tokens, K=2, no sampled-from logprobs, one flag, one note of the source's."""
    return Trace(
        tokens=["A", " robot", " may"],
        token_ids=[1, 2, 3],
        logprobs=[NAN, -2.0, -1.5],
        ranks=[0, 4, 2],
        entropy=[NAN, 3.0, 2.0],
        top_tokens=[[], [" cat", " dog"], [" can", " may"]],
        top_logprobs=[[-INF, -INF], [-1.0, -1.2], [-0.7, -1.5]],
        top_ids=[[-1, -1], [7, 8], [9, 3]],
        flags=[[], ["collided"], []],
        prompt_len=3,
        meta={"model": "m", "mode": "score", "warnings": ["echo: the prompt's length is unknown"]},
    )


def sampled_completion() -> Trace:
    """Two generated tokens, K=3, sampled at a temperature (so with processed logprobs), no ids."""
    return Trace(
        tokens=[" not", "!"],
        logprobs=[-0.1, -3.0],
        ranks=[1, 5],
        entropy=[0.5, 2.5],
        top_tokens=[[" not", " also", " be"], [".", ","]],
        top_logprobs=[[-0.1, -2.5, -3.5], [-0.4, -1.3, -INF]],
        processed_logprobs=[-0.05, -4.0],
        processed_top_logprobs=[[-0.05, -3.0, -4.5], [-0.2, -1.6, -INF]],
        flags=[[], ["no_bytes"]],
        meta={"temperature": 0.7, "finish_reason": "length"},
    )


def test_a_scored_prompt_and_a_sampled_completion_join_with_every_fill_in_place():
    joined = Trace.concat(scored_prompt(), sampled_completion())
    assert joined.tokens == ["A", " robot", " may", " not", "!"] and joined.prompt_len == 3
    np.testing.assert_array_equal(joined.token_ids, np.array([1, 2, 3, -1, -1], np.int32))
    np.testing.assert_array_equal(joined.logprobs, np.array([NAN, -2.0, -1.5, -0.1, -3.0], np.float32))
    np.testing.assert_array_equal(joined.ranks, np.array([0, 4, 2, 1, 5], np.int32))
    np.testing.assert_array_equal(joined.entropy, np.array([NAN, 3.0, 2.0, 0.5, 2.5], np.float32))
    # K grows to 3: the prompt's rows are padded with -inf and id -1
    want_top = [[-INF, -INF, -INF], [-1.0, -1.2, -INF], [-0.7, -1.5, -INF], [-0.1, -2.5, -3.5], [-0.4, -1.3, -INF]]
    np.testing.assert_array_equal(joined.top_logprobs, np.array(want_top, np.float32))
    np.testing.assert_array_equal(joined.top_ids, [[-1, -1, -1], [7, 8, -1], [9, 3, -1], [-1, -1, -1], [-1, -1, -1]])
    assert joined.top_tokens == [[], [" cat", " dog"], [" can", " may"], [" not", " also", " be"], [".", ","]]
    # the completion's sampled-from logprobs are kept; the prompt, where nothing was sampled, is unknown
    np.testing.assert_array_equal(joined.processed_logprobs, np.array([NAN, NAN, NAN, -0.05, -4.0], np.float32))
    want_processed = [[-INF] * 3] * 3 + [[-0.05, -3.0, -4.5], [-0.2, -1.6, -INF]]
    np.testing.assert_array_equal(joined.processed_top_logprobs, np.array(want_processed, np.float32))
    assert joined.flags == [[], ["collided"], [], [], ["no_bytes"]]
    assert joined.meta["model"] == "m" and joined.meta["temperature"] == 0.7 and joined.meta["mode"] == "score"
    # the flags' words follow the joined positions; the source's note is kept once
    assert joined.meta["warnings"] == ["echo: the prompt's length is unknown"]
    assert joined.warnings[0] == "echo: the prompt's length is unknown"
    assert [w.split(":")[0] for w in joined.warnings[1:]] == ["1 token(s) at 4", "1 token(s) at 1"]


def test_more_than_two_parts_and_an_empty_part():
    parts = [scored_prompt()[:1], scored_prompt()[1:3], sampled_completion()[:0], sampled_completion()]
    joined = Trace.concat(*parts)
    assert joined.tokens == ["A", " robot", " may", " not", "!"] and joined.prompt_len == 3 and joined.k == 3
    np.testing.assert_array_equal(joined.ranks, [0, 4, 2, 1, 5])


class Vocab(list):
    """A token-text table indexed by id, as a runner shares it between its traces."""


def by_id(vocab, ids, top_ids, prompt_len=0) -> Trace:
    n = len(ids)
    return Trace(tokens=[vocab[i] for i in ids], token_ids=ids, logprobs=[-1.0] * n,
                 top_ids=top_ids, top_logprobs=np.where(np.array(top_ids) >= 0, -1.0, -INF),
                 vocab=vocab, prompt_len=prompt_len)


def test_the_shared_vocabulary_is_kept_only_when_both_parts_read_from_the_same_one():
    vocab = Vocab(["a", "b", "c", "d"])
    head, tail = by_id(vocab, [0, 1], [[2, 3], [1, -1]], prompt_len=2), by_id(vocab, [3], [[0, 2]])
    joined = Trace.concat(head, tail)
    assert joined.vocab is vocab and joined.top_tokens == [["c", "d"], ["b"], ["a", "c"]]
    np.testing.assert_array_equal(joined.top_ids, [[2, 3], [1, -1], [0, 2]])
    other = Vocab(["w", "x", "y", "z"])  # another tokenizer's table: the texts are copied, ids kept
    mixed = Trace.concat(head, by_id(other, [3], [[0, 2]]))
    assert mixed.vocab is None and mixed.top_tokens == [["c", "d"], ["b"], ["w", "y"]]
    assert mixed.tokens == ["a", "b", "z"]
    listed = Trace(tokens=["q"], top_tokens=[["r"]], top_logprobs=[[-0.5]])  # no vocabulary at all
    assert Trace.concat(head, listed).top_tokens == [["c", "d"], ["b"], ["r"]]


def test_a_prompt_after_generated_tokens_is_refused():
    generated = sampled_completion()
    with pytest.raises(ValueError, match="a prompt of 3 tokens after generated tokens"):
        Trace.concat(generated, scored_prompt())
    with pytest.raises(TypeError, match="one or more Traces"):
        Trace.concat(generated, "text")


def test_warnings_follow_a_slice_and_survive_the_json_round_trip():
    trace = Trace.concat(scored_prompt(), sampled_completion())
    tail = trace[2:]
    assert tail.warnings[1:] == ["1 token(s) at 2: " + tail.warnings[1].split(": ", 1)[1]]
    assert "collided" not in json.dumps(tail.warnings)  # the collided token (position 1) is not in the slice
    d = json.loads(json.dumps(trace.to_dict()))
    assert d["meta"]["warnings"] == trace.warnings  # the JSON says it in words for readers without logprob_viz
    back = Trace.from_dict(d)
    assert back.meta == trace.meta and back.warnings == trace.warnings  # no sentence twice
