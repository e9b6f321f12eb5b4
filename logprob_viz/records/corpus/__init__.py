"""The corpus: many traces read as tables (`lv.Corpus`), one record over these modules.

    record.py   `Corpus`, the façade: building, saving, slicing, the token table and its codes, the views
    labels.py   labels and metadata given after the corpus was made (`Corpus.labelled`)
    stats.py    per-trace statistics (`Corpus.to_pandas`, the corpus view's table)
    index.py    the surprise index and the occurrences in context; the token classes
    compare.py  two models over the same texts (`lv.compare_corpora`, `Corpus.compare`)
    columns.py  a corpus backed by Arrow columns: items built only when asked for
    one_row.py  one item read from its own row group, not from the part's whole columns
    parquet.py  the Parquet schema: writing, reading parts (`Corpus.to_parquet`, `Corpus.read_parquet`)
    layout.py   a Parquet file's encodings, its columns left out, the vocabulary ids its rows use
    scan.py     the surprise index streamed from Parquet parts, never loaded whole
    arrow.py    what columns.py, parquet.py and scan.py share: `ParquetPartError`, token texts numbered by Arrow
    from_divergence.py  divergences and rollouts as a corpus: a row per text, their figures as columns

The modules below the façade take a corpus as an argument and never import `record`, so the façade
imports them all at the top.
"""

from __future__ import annotations

from .arrow import ParquetPartError
from .compare import CorpusComparison, compare_corpora
from .record import Corpus

__all__ = ["Corpus", "ParquetPartError", "compare_corpora", "CorpusComparison"]
