"""Two models over one corpus (`lv.compare_corpora`, `corpus.compare`): where the second gains bits.

Each pair of traces (item i of each corpus) is aligned by bytes with `lv.compare`, so models
with different tokenizers are measured on the same bytes. Per item and per class of aligned
span (the classes of `index`, applied to each span's text), the report gives both models'
bits per byte and the *gain* of the second: bits per byte of the first minus the second's
(positive: the second model needs fewer bits). Intervals are a percentile bootstrap over items
(the items are the independent units; spans inside one text are not), seeded, so a report is
reproducible.
"""

from __future__ import annotations

import math

import numpy as np

from ..comparison import compare
from ..trace_fields import is_int
from .index import CLASSES, token_classes

__all__ = ["compare_corpora", "CorpusComparison", "bootstrap_ratio"]

_LN2 = math.log(2.0)
_BOOT_CHUNK = 256  # resamples drawn at once: (chunk, items) weights stay a few MB


def bootstrap_ratio(numerators, denominators, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95):
    """Percentile bootstrap over items of sum(numerators) / sum(denominators), per column.

    numerators, denominators: (items,) or (items, groups). Returns (estimate, low, high), each
    of shape (groups,) (or scalars for 1-d input); NaN where a resample has no denominator.
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    one = num.ndim == 1
    num, den = (num[:, None], den[:, None]) if one else (num, den)
    n = num.shape[0]
    if n == 0:
        raise ValueError("a bootstrap over items needs at least one item")
    if not (is_int(n_boot) and n_boot >= 10):
        raise ValueError(f"n_boot must be an int >= 10 (bootstrap resamples), got {n_boot!r}")
    rng = np.random.default_rng(seed)
    stats = []
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = num.sum(0) / den.sum(0)
        for start in range(0, n_boot, _BOOT_CHUNK):
            weights = rng.multinomial(n, np.full(n, 1.0 / n), size=min(_BOOT_CHUNK, n_boot - start)).astype(float)
            stats.append((weights @ num) / (weights @ den))  # (chunk, groups)
    stats = np.concatenate(stats)
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(stats, tail, axis=0), np.nanpercentile(stats, 100 - tail, axis=0)
    return (estimate[0], low[0], high[0]) if one else (estimate, low, high)


def compare_corpora(a, b, labels=("a", "b"), *, n_boot: int = 1000, seed: int = 0) -> CorpusComparison:
    """Align item i of corpus `a` with item i of `b` by bytes; report where `b` gains bits per byte.

    Parameters
    ----------
    a, b : Corpus
        The same texts (in the same order) under two models or settings; texts that differ
        are aligned on their common beginning, as `lv.compare` does. An unscored control token
        at the start of a trace (Gemma's ``<bos>``) is left out, since the other text lacks its bytes.
    labels : (str, str)
        Names of the two, used in the column names.
    n_boot, seed : int
        Bootstrap resamples over items for the intervals, and the seed that makes them reproducible.
    """
    if not (_is_corpus(a) and _is_corpus(b)):
        raise TypeError(f"compare_corpora compares two lv.Corpus objects, got {type(a).__name__} and "
                        f"{type(b).__name__}; make them with runner.score([...]) on each model")
    if len(a) != len(b):
        raise ValueError(f"the corpora pair item by item, but a has {len(a)} items and b has {len(b)}; "
                         "score the same list of texts with both models")
    if len(a) == 0:
        raise ValueError("the corpora are empty: there is nothing to compare")
    labels = [str(x) for x in labels]
    if len(labels) != 2 or labels[0] == labels[1]:
        raise ValueError(f"labels must be two distinct names, got {labels}")
    n_classes = len(CLASSES)
    bits = np.zeros((2, len(a), n_classes))  # per model, item and class: bits over spans both know
    n_bytes = np.zeros((len(a), n_classes))
    comparisons = []
    for i, (ta, tb) in enumerate(zip(a.traces, b.traces, strict=True)):
        try:
            cmp = compare([_without_bos(ta), _without_bos(tb)], labels=labels)
        except ValueError as error:
            raise ValueError(f"item {i} ({a.labels[i]!r}): {error}") from None
        comparisons.append(cmp)
        known = cmp.known
        texts = np.asarray(cmp.span_texts, dtype=object)
        classes = token_classes(texts, np.arange(len(texts)) == 0)[known]
        sizes = (cmp.span_ends - cmp.span_starts)[known].astype(np.float64)
        n_bytes[i] = np.bincount(classes, weights=sizes, minlength=n_classes)
        for m in range(2):
            bits[m, i] = np.bincount(classes, weights=-cmp.span_logprobs[m][known] / _LN2, minlength=n_classes)
    return CorpusComparison(a, b, labels, comparisons, bits, n_bytes, n_boot, seed)


def _without_bos(trace):
    """The trace without an unscored leading control token (Gemma's ``<bos>``): it has bytes
    ("<bos>") that the other model's text lacks, so the texts would differ from the first byte."""
    first = trace.tokens[:1]
    if len(trace) > 1 and np.isnan(trace.logprobs[0]) and token_classes(np.asarray(first, dtype=object),
                                                                       np.array([True]))[0] == 0:
        return trace[1:]
    return trace


def _is_corpus(x) -> bool:
    # What a corpus has that this reads (not an isinstance of Corpus: record.py imports this module
    # for Corpus.compare, and a module pair that imports each other is a cycle)
    return all(hasattr(x, name) for name in ("traces", "labels", "metadata")) and not isinstance(x, type)


class CorpusComparison:
    """Two corpora aligned item by item (made by `compare_corpora`).

    Attributes
    ----------
    items : DataFrame
        One row per item: label, bytes, ``bits_per_byte:<a>``, ``bits_per_byte:<b>``, gain
        (a − b: positive where the second model needs fewer bits).
    by_class : DataFrame
        One row per span class, then "all": group, bytes, both bits per byte, gain, and its
        bootstrap interval over items (gain_low, gain_high).
    comparisons : list of Comparison
        The per-item alignments (`lv.compare`), for a closer look at one item.
    """

    def __init__(self, a, b, labels, comparisons, bits, n_bytes, n_boot, seed):
        import pandas as pd  # optional dependency: only the report's tables need it

        self.a, self.b, self.labels, self.comparisons = a, b, labels, comparisons
        self.n_boot, self.seed = n_boot, seed
        la, lb = labels
        item_bytes = n_bytes.sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            bpb = bits.sum(2) / item_bytes  # (2, items)
        self.items = pd.DataFrame({
            "label": a.labels, "bytes": item_bytes.astype(np.int64), f"bits_per_byte:{la}": bpb[0],
            f"bits_per_byte:{lb}": bpb[1], "gain": bpb[0] - bpb[1],
        }).rename_axis("item")
        groups = [*CLASSES, "all"]
        num = np.concatenate([bits[0] - bits[1], (bits[0] - bits[1]).sum(1, keepdims=True)], axis=1)
        den = np.concatenate([n_bytes, item_bytes[:, None]], axis=1)
        present = den.sum(0) > 0  # classes no item has are left out of the table
        gain, low, high = (np.full(len(groups), np.nan) for _ in range(3))
        gain[present], low[present], high[present] = bootstrap_ratio(num[:, present], den[:, present],
                                                                     n_boot=n_boot, seed=seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_class = [np.concatenate([bits[m], bits[m].sum(1, keepdims=True)], 1).sum(0) / den.sum(0)
                         for m in range(2)]
        table = pd.DataFrame({
            "group": groups, "bytes": den.sum(0).astype(np.int64), f"bits_per_byte:{la}": per_class[0],
            f"bits_per_byte:{lb}": per_class[1], "gain": gain, "gain_low": low, "gain_high": high,
        })
        self.by_class = table[present].reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.comparisons)

    def __repr__(self) -> str:
        row = self.by_class.iloc[-1]
        la, lb = self.labels
        return (f"<CorpusComparison of {len(self)} items: {la} {row[f'bits_per_byte:{la}']:.3f}, {lb} "
                f"{row[f'bits_per_byte:{lb}']:.3f} bits/byte; gain of {lb} {row['gain']:+.3f} "
                f"[{row['gain_low']:+.3f}, {row['gain_high']:+.3f}] ({self.n_boot} resamples over items)>")

    def _repr_mimebundle_(self, **kwargs):
        # The corpus view is not built yet: the two tables stand in for it.
        html = self.by_class._repr_html_() + self.items.sort_values("gain")._repr_html_()
        return {"text/plain": repr(self), "text/html": html}
