"""The Attribution record without a model: words and sentences from token bytes, exports, escaping."""

from __future__ import annotations

import html

import numpy as np
import pytest

from logprob_viz.records.attribution import Attribution, sentence_spans, word_spans

TOKENS = [b"Q", b":", b" What", b" is", b" Nept", b"une", b"?", b"\n", b"A", b":", b" <script>", b"alert", b"(1)",
          b" \xc3", b"\xa9t\xc3\xa9."]


def record(scores=None) -> Attribution:
    scores = np.arange(1, len(TOKENS) + 1, dtype=float) * np.where(np.arange(len(TOKENS)) % 2, -1, 1) / 10 \
        if scores is None else scores
    return Attribution(scores=scores, token_ids=np.arange(len(TOKENS)), token_bytes=TOKENS, position=len(TOKENS),
                       target_id=99, target_bytes=b" Jupiter", method="occlusion", value=0.25,
                       contrast_id=98, contrast_bytes=b" Neptune", meta={})


def test_words_follow_the_bytes_and_sum_their_tokens():
    spans = word_spans(TOKENS)
    words = [b"".join(TOKENS[a:b]) for a, b in spans]
    # a word starts at whitespace or where letters meet punctuation; it never splits a token
    assert words == [b"Q", b":", b" What", b" is", b" Neptune", b"?", b"\n", b"A", b":", b" <script>", b"alert",
                     b"(1)", b" \xc3\xa9t\xc3\xa9."]
    # the spans cover every token once, in order
    assert [a for a, _ in spans][1:] == [b for _, b in spans][:-1] and spans[0][0] == 0 and spans[-1][1] == len(TOKENS)
    assert b" Neptune" in words and b" What" in words and b"?" in words
    assert b" \xc3\xa9t\xc3\xa9." in words  # a character split across tokens stays in one word
    a = record()
    by_word = a.by_word()
    for text, score, start, end in zip(by_word.texts, by_word.scores, by_word.starts, by_word.ends, strict=True):
        assert score == pytest.approx(sum(a.scores[start:end]))
        assert text == b"".join(TOKENS[start:end]).decode("utf-8")
    assert by_word.scores.sum() == pytest.approx(a.scores.sum())


def test_sentences_end_at_marks_and_newlines():
    spans = sentence_spans(TOKENS)
    assert [b"".join(TOKENS[a:b]) for a, b in spans] == [b"Q: What is Neptune?", b"\n",
                                                         b"A: <script>alert(1) \xc3\xa9t\xc3\xa9."]
    by_sentence = record().by_sentence()
    assert len(by_sentence) == 3 and by_sentence.scores.sum() == pytest.approx(record().scores.sum())


def test_to_pandas_and_top():
    a = record()
    frame = a.to_pandas()
    assert frame["score"].tolist() == a.scores.tolist() and frame["token"].tolist() == a.tokens
    top = a.by_word().top(2)
    best = sorted(a.by_word(), key=lambda pair: -pair[1])[:2]
    assert top == best
    assert a.quantity == "log p(' Jupiter') - log p(' Neptune')"


def test_hostile_token_text_is_shown_escaped_never_as_markup():
    a = record()
    page = a._repr_html_()
    assert "<script>" not in page and html.escape(" <script>") in page
    assert "<script>" not in a.by_word()._repr_html_()
    # every token is there, in order, coloured: positive and negative scores get the two hues
    assert page.count("<span title=") == len(TOKENS)
    assert "rgba(214, 39, 40" in page and "rgba(31, 119, 180" in page


def test_a_record_whose_lengths_disagree_says_so():
    with pytest.raises(ValueError, match="one score per token before position"):
        record(scores=np.zeros(3))
