"""How a record reads what only the readers can parse (server responses), without importing them.

The records layer comes first (records → sources → views): turning a server's response into a
trace is the readers' work (sources/readers/, `lv.read`). A record's reading classmethods
(``Corpus.from_responses``, ``Corpus.from_pandas``, ``Corpus.read_jsonl``) are one line each,
``read_as(cls, "from_responses", ...)``, which finds the function in what `register_readers` was
given (``sources/readers/corpus.py`` registers the corpus's), as a record finds its views
(`viewable`). The package (``logprob_viz/__init__.py``) hands `load_readers_with` a loader that
imports the readers, run once before the first lookup: a record never imports a reader, and a
record's own formats (``Corpus.load``, ``Corpus.read_parquet``) need none.
"""

from __future__ import annotations

from collections.abc import Callable

from .viewable import find_registered

__all__ = ["ReaderNotRegistered", "register_readers", "load_readers_with", "read_as"]

_READERS: dict[type, dict[str, Callable]] = {}
_loader: list[Callable[[], object]] = []  # the readers' loader, until it has run


class ReaderNotRegistered(ImportError):
    """No reader is registered for this record and this input (the readers could not be loaded)."""


def register_readers(record_type: type, **readers: Callable) -> None:
    """`record_type`'s reading classmethods: ``from_responses=``, ... each a function of the class
    (and the method's arguments) returning what that method returns."""
    _READERS.setdefault(record_type, {}).update(readers)


def load_readers_with(loader: Callable[[], object]) -> None:
    """`loader` imports the module that registers the readers; it runs before the first lookup."""
    _loader[:] = [loader]


def read_as(record_type: type, how: str, *args, **kwargs):
    """`record_type`'s `how` ("from_responses", ...) from its registered reader, with the arguments."""
    found = find_registered(_READERS, _loader, record_type, how)
    if found is None:
        raise ReaderNotRegistered(
            f"{record_type.__name__} has no reader {how!r}. Import logprob_viz (which loads "
            "logprob_viz.sources.readers.corpus) first; a record type of your own registers its readers "
            "with logprob_viz.records.readable.register_readers")
    return found(record_type, *args, **kwargs)
