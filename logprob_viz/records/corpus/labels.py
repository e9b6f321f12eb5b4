"""Labels and metadata given to a corpus after it was made (`Corpus.labelled`, ``score(labels=...)``)."""

from __future__ import annotations

__all__ = ["labelled"]


def labelled(corpus, labels=None, metadata=None):
    """`corpus` with `labels` (one per item asked for) and/or `metadata` (a dict per item, added to each
    item's own); itself when neither is. Items dropped by an interrupt keep their own by index."""
    if labels is None and metadata is None:
        return corpus
    n_asked = int(corpus.meta.get("items_asked", len(corpus)))
    kept = [int(m.get("index", i)) for i, m in enumerate(corpus.metadata)]
    for name, values in (("labels", labels), ("metadata", metadata)):
        if values is not None and (isinstance(values, (str, dict)) or len(values) != n_asked):
            given = "one value" if isinstance(values, (str, dict)) else f"{len(values)}"
            raise ValueError(f"{name}= needs one entry per item: {n_asked} items, {given} given")
    if metadata is not None and not all(isinstance(m, dict) for m in metadata):
        raise TypeError("metadata= is a list of dicts, one per item (e.g. [{'source': 'a'}, ...])")
    new_labels = corpus.labels if labels is None else [str(list(labels)[i]) for i in kept]
    new_metadata = [dict(own, **({} if metadata is None else list(metadata)[i]))
                    for own, i in zip(corpus.metadata, kept, strict=True)]
    return type(corpus)(corpus.traces, new_labels, new_metadata, corpus.meta)
