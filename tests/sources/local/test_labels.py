"""score(texts, labels=, metadata=) on the real default model: a corpus whose items carry the labels and
metadata given, in input order, whatever order the batches ran in."""

import pytest

TEXTS = ["A much longer text than the others, so that the batches are reordered by length.", "Short.", "Mid text."]


def test_labels_and_metadata_follow_their_items(runner):
    corpus = runner.score(TEXTS, labels=["long", "short", "mid"], metadata=[{"gold": 1}, {"gold": 0}, {"gold": 2}],
                          batch_tokens=24, progress=False)
    assert corpus.labels == ["long", "short", "mid"]
    assert [t.text for t in corpus] == TEXTS
    assert [m["gold"] for m in corpus.metadata] == [1, 0, 2] and [m["index"] for m in corpus.metadata] == [0, 1, 2]
    assert corpus["short"].text == "Short."
    assert corpus.to_pandas()["label"].tolist() == ["long", "short", "mid"]


def test_wrong_counts_and_one_text_say_what_to_give(runner):
    with pytest.raises(ValueError, match="one entry per item: 3 items, 2 given"):
        runner.score(TEXTS, labels=["a", "b"], progress=False)
    with pytest.raises(TypeError, match="list of dicts"):
        runner.score(TEXTS, metadata=[1, 2, 3], progress=False)
    with pytest.raises(ValueError, match="label the items of a list"):
        runner.score("one text", labels=["a"])
