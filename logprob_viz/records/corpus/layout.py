"""How a Parquet corpus file (`parquet`) is laid out beyond its schema, kept small (issue 48): the
writer's encodings (`write_options`), the nullable columns no row fills left out (`null_everywhere`),
and the vocabulary tables: only the ids the rows' alternatives use, with their exact bytes (or
texts), so a file's fixed cost follows what it holds, not the tokenizer's size (a whole 49k-token
table was ~860 KB per file).

An entry of the file's ``logprob_viz.vocabs`` list is ``{"size", "ids", "bytes_hex"}`` (or ``"texts"``
for a vocabulary of texts); a file written before holds ``{"bytes_hex"}`` (or ``{"texts"}``) for
every id, and reads as before.
"""

from __future__ import annotations

import numpy as np

from ..run_stats import SUMMARIES
from ..tokens import UsedVocabTexts, VocabTexts

__all__ = ["FLOATS", "WRITE_OPTIONS", "write_options", "null_everywhere", "vocab_entry", "note_used_ids", "vocab_of",
           "UsedTexts"]

FLOATS = ("logprobs", "entropy", "top_logprobs", "processed_logprobs", "processed_top_logprobs", "min_logprob",
          "mean_logprob", "mean_entropy")
# zstd, the floats' bytes split into streams (`write_options`): a third less than snappy's bytes at K=5.
# No dictionary pages (zstd finds the repeats; a page per column was ~700 B of a 1-text file). Statistics
# only on the per-trace numbers (a string column's min and max would repeat its longest texts in the
# footer); no Arrow schema copy in the footer (the Parquet schema reads back to the same types).
WRITE_OPTIONS = {"compression": "zstd", "write_page_checksum": True, "use_dictionary": False,
                 "write_statistics": ["prompt_len", "k", *SUMMARIES], "store_schema": False}


def write_options(schema) -> dict:
    """The ParquetWriter options for a table of `schema`: `WRITE_OPTIONS`, and the floats' bytes split
    into streams (their exponents then compress), named by their leaf paths in the Parquet schema."""
    def leaf(name, kind):
        return leaf(f"{name}.list.element", kind.value_type) if hasattr(kind, "value_type") else name

    leaves = {name: leaf(name, schema.field(name).type) for name in schema.names}
    return {**WRITE_OPTIONS, "use_byte_stream_split": [p for n, p in leaves.items() if n in FLOATS]}


def null_everywhere(traces) -> list[str]:
    """The nullable columns that no trace fills (left out of the file: ~100 bytes each of fixed cost)."""
    vocab = processed = flags = listed = False
    for t in traces:
        vocab, listed = vocab or t.vocab is not None, listed or t.vocab is None
        processed, flags = processed or t.processed_logprobs is not None, flags or t.flags_if_any is not None
    return [name for name, used in (("vocab", vocab), ("top_tokens", listed), ("processed_logprobs", processed),
                                    ("processed_top_logprobs", processed), ("flags", flags)) if not used]


def vocab_entry(vocab, used: list) -> dict:
    """The part of `vocab` a file stores: the ids its rows' alternatives use (`used`, arrays of ids) and
    their exact bytes (`VocabTexts`) or texts; a reader rebuilds it as `UsedVocabTexts`."""
    ids = np.unique(np.concatenate(used)) if used else np.zeros(0, np.int64)
    ids = ids[(ids >= 0) & (ids < len(vocab))].tolist()  # an id past the table reads "<id N>" without it
    if isinstance(vocab, VocabTexts):
        return {"size": len(vocab), "ids": ids, "bytes_hex": [vocab.bytes_of(i).hex() for i in ids]}
    return {"size": len(vocab), "ids": ids, "texts": [str(vocab[i]) for i in ids]}


def note_used_ids(traces, numbers, vocabs) -> None:
    """Add to each entry of `vocabs` (number, vocab, used) the ids that the alternatives of the traces
    numbered with it (`numbers`, one per trace) use."""
    for number, _, used in vocabs.values():
        ids = [t.top_ids.reshape(-1) for t, v in zip(traces, numbers, strict=True) if v == number]
        if ids:
            used.append(np.unique(np.concatenate(ids)))


class UsedTexts:
    """A vocabulary of texts (not bytes) of which a file stored the ids it used."""

    __slots__ = ("size", "texts")

    def __init__(self, size: int, texts: dict[int, str]):
        self.size, self.texts = size, texts

    def __getitem__(self, token_id: int) -> str:
        return self.texts.get(token_id, f"<id {token_id}>")

    def __len__(self) -> int:
        return self.size


def vocab_of(entry: dict):
    """The vocabulary an entry of a file's ``logprob_viz.vocabs`` stands for (see the module docstring)."""
    if "ids" in entry:  # the ids the rows use (written since issue 48)
        if "bytes_hex" in entry:
            return UsedVocabTexts(entry["size"], {i: bytes.fromhex(h) for i, h in zip(entry["ids"], entry["bytes_hex"],
                                                                                      strict=True)})
        return UsedTexts(entry["size"], dict(zip(entry["ids"], entry["texts"], strict=True)))
    if "bytes_hex" in entry:  # a file written with the whole table (before issue 48)
        return VocabTexts([bytes.fromhex(h) for h in entry["bytes_hex"]])
    return list(entry["texts"])
