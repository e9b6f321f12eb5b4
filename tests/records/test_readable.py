"""How a record reads server responses (records/readable.py): a table sources/readers/corpus.py fills,
looked up by type, so that records/ imports nothing above it."""

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.records.readable import ReaderNotRegistered, read_as
from tests.test_import_cycles import import_graph


def _trace():
    return lv.Trace(tokens=["a", "b"], token_ids=[1, 2], logprobs=[np.nan, -1.0], prompt_len=1)


def test_a_record_type_with_no_reader_says_so_and_how_to_register_one():
    class Unread:
        pass

    with pytest.raises(ReaderNotRegistered, match=r"Unread has no reader 'from_responses'.*register_readers"):
        read_as(Unread, "from_responses", [])


def test_a_subclass_of_corpus_reads_through_the_corpus_reader_and_stays_itself():
    class MyCorpus(lv.Corpus):
        pass

    read = MyCorpus.from_responses([_trace(), _trace().to_dict()], labels=["x", "y"])
    assert type(read) is MyCorpus and read.labels == ["x", "y"] and read[1].tokens == ["a", "b"]


def test_the_records_import_nothing_from_sources():
    graph = import_graph()
    upward = sorted((m, t) for m, ts in graph.items() if m.startswith("logprob_viz.records")
                    for t in ts if t.startswith(("logprob_viz.sources", "logprob_viz.views")))
    assert not upward, f"records import a layer above them: {upward}"
