"""The surprise index of a corpus: which tokens, and which kinds of token, a model finds surprising.

Everything runs over the corpus's one concatenated token table: a token's text is factorised
once per corpus (`Corpus.token_codes`, kept), each *distinct* text is classified once in Python (a
vocabulary is ~50k strings, a corpus millions of tokens), and the per-token classes and the
per-group numbers are numpy passes (`bincount`). 1M tokens take well under 2 s (benchmarks/corpus.py).

Classes (`CLASSES`), one per token, the first that applies:

- ``special``: a control token's text, ``<|...|>`` or ``<name>`` / ``</name>`` (``<s>``,
  ``<|im_end|>``, ``<start_of_turn>``): read from the text, since a trace does not say which
  ids its tokenizer calls special;
- ``whitespace``: only spaces, tabs, newlines (indentation included);
- ``digits``: digits, with or without a leading space;
- ``punctuation``: only punctuation and symbols (Unicode categories P and S);
- ``capitalised word``: letters starting a word (after a space, at the start, or after an
  opening bracket or quote) with an upper-case first letter;
- ``word-initial``: letters starting a word, lower case;
- ``continuation``: letters continuing a word the previous token began (a word piece);
- ``other``: the rest (mixed letters and digits, a piece of a split character, ...).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ..tokens import display_token

__all__ = ["CLASSES", "token_classes", "surprise_index", "group_sums", "index_frame", "occurrences"]

CLASSES = ("special", "whitespace", "digits", "punctuation", "capitalised word", "word-initial", "continuation",
           "other")
COLUMNS = ["group", "count", "mean_surprisal", "max_surprisal", "mean_rank", "share_rank_over_10"]
_SPECIAL = re.compile(r"^(<\|[^<>|]{1,40}\|>|</?[A-Za-z_][A-Za-z0-9_.-]{0,40}>)$")
_SPLIT_BYTES = re.compile(r"\\x[0-9a-f]{2}")  # how display_token shows a piece of a split character
_OPENING = {"Ps", "Pi", "Pd"}  # ( [ { “ ‘ - : after these a word begins
_KIND_WORD = len(CLASSES)  # a private code: letters, resolved by context into the three word classes


def _kind(text: str) -> tuple[int, bool, bool, bool]:
    """(class code or _KIND_WORD, starts with whitespace, first letter upper, opens a word after it)."""
    stripped = text.strip()
    last = text[-1:] or " "
    opens = last.isspace() or unicodedata.category(last) in _OPENING or last in "\"'`"
    starts_space = text[:1].isspace()
    if _SPECIAL.match(text):
        code = CLASSES.index("special")
    elif not stripped:
        code = CLASSES.index("whitespace")
    elif stripped.isdigit():
        code = CLASSES.index("digits")
    elif all(unicodedata.category(c)[0] in "PS" for c in stripped):
        code = CLASSES.index("punctuation")
    elif stripped.isalpha() and not _SPLIT_BYTES.search(text):
        code = _KIND_WORD
    else:
        code = CLASSES.index("other")
    return code, starts_space, stripped[:1].isupper(), opens


def token_classes(tokens: np.ndarray, first: np.ndarray, factorized=None) -> np.ndarray:
    """(N,) int8 index into `CLASSES` of each token; `first` marks each trace's first token.

    ``factorized``: ``pandas.factorize(tokens)`` when the caller has it already.
    """
    import pandas as pd  # optional dependency: only the index's tables need it

    codes, uniques = pd.factorize(tokens) if factorized is None else factorized
    kinds = np.array([_kind(str(u)) for u in uniques], dtype=np.int8).reshape(-1, 4)
    kind, starts_space, upper, opens = (kinds[codes, c] for c in range(4))
    after_open = np.r_[True, opens[:-1].astype(bool)] | first  # the previous token ended a word (or none)
    word_start = starts_space.astype(bool) | after_open
    out = kind.copy()
    words = kind == _KIND_WORD
    out[words & word_start & upper.astype(bool)] = CLASSES.index("capitalised word")
    out[words & word_start & ~upper.astype(bool)] = CLASSES.index("word-initial")
    out[words & ~word_start] = CLASSES.index("continuation")
    return out


def _groups(corpus, by: str):
    """(group code per token, group names) for every token of the corpus."""
    if by == "token":
        return corpus.token_codes
    if by == "class":
        table = corpus.token_table()
        classes = token_classes(table["token"], table["first"], corpus.token_codes)
        return classes.astype(np.int64), np.asarray(CLASSES, dtype=object)
    raise ValueError(f'by must be "token" or "class", got {by!r}')


def surprise_index(corpus, by: str = "token", *, prompt: bool = True):
    """See `Corpus.surprise_index`. Rows sorted by total surprisal (count x mean), largest first."""
    codes, names = _groups(corpus, by)
    table = corpus.token_table()
    return index_frame(names, group_sums(codes, table["logprob"], table["rank"], table["is_prompt"], len(names),
                                         prompt=prompt))


def group_sums(codes, logprob, rank, is_prompt, n: int, *, prompt: bool = True) -> dict[str, np.ndarray]:
    """Per group (of `n`), the sums the index is made of, over the tokens whose logprob is known:
    count, surprisal (sum), highest, rank_count, rank_sum, over_10. Sums of parts add up (the
    streamed index over Parquet parts adds them part by part)."""
    keep = ~np.isnan(logprob)
    if not prompt:
        keep &= ~is_prompt
    groups = codes[keep]
    surprisal = -logprob[keep].astype(np.float64)
    rank = rank[keep]
    ranked = rank > 0  # 0: the source gave no rank
    highest = np.full(n, -np.inf)
    np.maximum.at(highest, groups, surprisal)
    return {"count": np.bincount(groups, minlength=n), "surprisal": np.bincount(groups, weights=surprisal, minlength=n),
            "highest": highest, "rank_count": np.bincount(groups[ranked], minlength=n),
            "rank_sum": np.bincount(groups[ranked], weights=rank[ranked], minlength=n),
            "over_10": np.bincount(groups[ranked], weights=rank[ranked] > 10, minlength=n)}


def index_frame(names, sums: dict):
    """The index's DataFrame (`COLUMNS`) of per-group `group_sums`, sorted by total surprisal."""
    import pandas as pd  # optional dependency: only the index's tables need it

    count, rank_count = sums["count"], sums["rank_count"]
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = pd.DataFrame({
            "group": names,
            "count": count,
            "mean_surprisal": sums["surprisal"] / count,
            "max_surprisal": sums["highest"],
            "mean_rank": sums["rank_sum"] / rank_count,
            "share_rank_over_10": sums["over_10"] / rank_count,
        })
    stats = stats[count > 0]
    order = np.argsort(-(stats["count"].to_numpy() * stats["mean_surprisal"].to_numpy()), kind="stable")
    return stats.iloc[order].reset_index(drop=True)[COLUMNS]


def occurrences(corpus, group: str, by: str | None = None, *, width: int = 30, limit: int | None = 1000):
    """See `Corpus.occurrences`. The most surprising occurrences first."""
    import pandas as pd  # optional dependency: only the index's tables need it

    if by is None:
        by = "class" if group in CLASSES else "token"
    codes, names = _groups(corpus, by)
    where = np.flatnonzero(names == group)
    if not where.size:
        known = ", ".join(map(repr, CLASSES)) if by == "class" else f"token texts such as {list(names[:5])}"
        raise KeyError(f"no {by} group {group!r} in this corpus; the groups are {known}")
    table = corpus.token_table()
    rows = np.flatnonzero((codes == where[0]) & ~np.isnan(table["logprob"]))
    rows = rows[np.argsort(table["logprob"][rows], kind="stable")]  # most surprising first
    if limit is not None:
        rows = rows[:limit]
    left, right = [], []
    for item, pos in zip(table["item"][rows].tolist(), table["position"][rows].tolist(), strict=True):
        pieces = corpus.traces[item].token_bytes
        left.append(display_token(b"".join(pieces[max(0, pos - width) : pos]))[-width:])
        right.append(display_token(b"".join(pieces[pos + 1 : pos + 1 + width]))[:width])
    items = table["item"][rows]
    return pd.DataFrame({
        "item": items, "label": np.asarray(corpus.labels, dtype=object)[items], "position": table["position"][rows],
        "left": left, "token": table["token"][rows], "right": right,
        "logprob": table["logprob"][rows], "rank": table["rank"][rows],
    })
