"""A corpus from server responses, a pandas column or a JSONL file, each item through `lv.read`.

``lv.Corpus.from_responses``, ``from_pandas`` and ``read_jsonl`` are these functions: the record
delegates to them through records/readable.py (registered below), since reading a server's
response is this layer's work and records import nothing above them. A `Trace`, or a dict as
`Trace.to_dict` writes it, is taken as it is; anything else is a response for `lv.read`.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...records.corpus import Corpus
from ...records.corpus.record import FORMAT
from ...records.readable import register_readers
from ...records.trace import Trace
from .reader import read

__all__ = ["from_responses", "from_pandas", "read_jsonl", "as_traces"]


def from_responses(cls, responses, labels=None, metadata=None, **read_options):
    """`Corpus.from_responses`: a trace per response (a trace per choice of one with several)."""
    traces = []
    for i, response in enumerate(responses):
        traces.extend(as_traces(response, f"response {i}", read_options))
    return cls(traces, labels, metadata)


def from_pandas(cls, column, labels=None, **read_options):
    """`Corpus.from_pandas`: a trace per row, labelled by the Series' index unless `labels` is given."""
    labels = column.index.astype(str).tolist() if labels is None else [str(x) for x in list(labels)]
    values = column.tolist()
    traces = [t for i, value in enumerate(values) for t in as_traces(value, f"row {i}", read_options)]
    if len(traces) != len(values):
        raise ValueError(f"{len(values)} rows gave {len(traces)} traces (a response with several choices); "
                         "use lv.Corpus.from_responses(column) for one trace per choice")
    return cls(traces, labels)


def read_jsonl(cls, path, **read_options):
    """`Corpus.read_jsonl`: a JSONL file of responses or trace dicts; one written by `Corpus.save` is loaded."""
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if line.strip()]
    if lines and FORMAT in json.loads(lines[0][1]):
        return cls.load(path)
    traces = []
    for n, line in lines:
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{n}: not JSON ({error}); a JSONL file has one JSON value per line") from None
        traces.extend(as_traces(value, f"{path}:{n}", read_options))
    return cls(traces)


def as_traces(value, where: str, read_options) -> list[Trace]:
    """A Trace, a `Trace.to_dict` dict, or a server response (through `lv.read`) as its traces."""
    if isinstance(value, Trace):
        return [value]
    if isinstance(value, dict) and "tokens" in value and "token_bytes" in value and "prompt_len" in value:
        try:
            return [Trace.from_dict(value)]
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{where}: a trace dict as Trace.to_dict writes it was expected; "
                             f"{'missing the field ' if isinstance(error, KeyError) else ''}{error}") from None
    try:
        read_back = read(value, **read_options)
    except (ValueError, TypeError, RuntimeError) as error:
        error.args = (f"{where}: {error}", *error.args[1:])  # the same error (and type), saying which item
        raise
    return list(read_back) if isinstance(read_back, list) else [read_back]


register_readers(Corpus, from_responses=from_responses, from_pandas=from_pandas, read_jsonl=read_jsonl)
