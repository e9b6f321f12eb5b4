"""Where the explorer's branches fork, and how the outline names each, free of widgets: a node as
a trace, its parent, its fork position, its label, and the alternatives that have a branch.

Plain Python over `Trace` and `Tree` objects, so it can be tested without a notebook.
"""

from __future__ import annotations

import math

import numpy as np

from ...records.trace import Trace
from ..toolkit import shown
from ..whitespace import WHITESPACE_MARKS, control_glyph

__all__ = ["as_trace", "parents_of", "fork_position", "visible", "branch_label", "explored", "perplexity_words"]


def as_trace(node) -> Trace:
    """A tree node as a Trace (nodes are traces; a node object holding one also works)."""
    if isinstance(node, Trace):
        return node
    trace = getattr(node, "trace", None)
    if isinstance(trace, Trace):
        return trace
    raise TypeError(f"expected a Trace (a tree node), got {type(node).__name__}")


def parents_of(tree) -> dict[int, object]:
    """{id(child): parent} over the whole tree, from `tree.children`."""
    parents: dict[int, object] = {}
    for node in tree.nodes:
        for child in tree.children(node):
            parents[id(child)] = node
    return parents


def fork_position(parent: Trace, child: Trace) -> int:
    """The first position where `child` differs from `parent` (by token id, by bytes where ids are unknown).

    ``len(parent)`` when the child only extends it, ``len(child)`` when it is a prefix of the parent.
    """
    n = min(len(parent), len(child))
    a, b = np.asarray(parent.token_ids[:n]), np.asarray(child.token_ids[:n])
    known = (a >= 0) & (b >= 0)
    differ = np.where(known, a != b, [parent.token_bytes[i] != child.token_bytes[i] for i in range(n)])
    hits = np.flatnonzero(differ)
    return int(hits[0]) if hits.size else n


def visible(token: str, limit: int = 40) -> str:
    """A token's text as the views show it (for button and list labels, which are plain text): the
    toolkit's `shown` (whitespace marked, a control or bidi character by its glyph, ``[RLO]``), cut at
    `limit` characters."""
    text = shown(token)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_MARKED_IN_WORDS = "\n\t\r"  # marked in a branch's words; a space (or no-break space) parts them


def _words(trace: Trace, start: int, limit: int = 48) -> str:
    """The first words from token `start` on, for a branch's line in the list: spaces part the words;
    a newline, tab or return shows the views' mark (``↵ → ␍``) between them, a control or bidi
    character its glyph (it must not reorder the label); runs of blanks read as one space."""
    raw = "".join(trace.tokens[start : start + 12])
    text = "".join(f" {WHITESPACE_MARKS[ch]} " if ch in _MARKED_IN_WORDS else control_glyph(ch) or ch for ch in raw)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def perplexity_words(trace: Trace, prompt_len: int) -> str:
    """The perplexity of `trace` after the root's prompt (`prompt_len` tokens), saying over which tokens
    (numbered from 1, as the view's chart numbers them): the same number for every branch of a tree."""
    ppl = trace[prompt_len:].perplexity() if len(trace) > prompt_len else math.nan
    if not math.isfinite(ppl):
        return "ppl –"
    return f"ppl {ppl:.2f} over tokens {prompt_len + 1}–{len(trace)}"


def branch_label(number: int, trace: Trace, fork: int | None, prompt_len: int) -> str:
    """One line of the tree's outline: its number (and name), the token it took where it forks from its
    parent (token numbers from 1, as in the view's chart), its perplexity and first differing words.

    The perplexity is over everything after the root's prompt (`prompt_len`), so branches compare.
    """
    name = trace.meta.get("name")
    if name:  # a person's words: spaces as spaces, anything unprintable (a bidi mark) left out
        name = " ".join("".join(ch if ch.isprintable() else " " for ch in str(name)).split())
        name = name if len(name) <= 30 else name[:29] + "…"
    head = f"#{number}" + (f" “{name}”" if name else "")
    ppl = perplexity_words(trace, prompt_len)
    if fork is None:
        return f"{head} root · {ppl} · {_words(trace, trace.prompt_len) or '(prompt only)'}"
    taken = visible(trace.tokens[fork], 16) if fork < len(trace) else "(end)"
    return f"{head} ↳ token {fork + 1} “{taken}” · {ppl} · {_words(trace, fork)}"


def explored(nodes: list, node) -> dict[str, dict[str, int]]:
    """Where `node`'s alternatives already have a branch: {position: {token id: node number}} over
    every other node that agrees with `node` before that position and takes another token there."""
    mine = as_trace(node)
    marks: dict[str, dict[str, int]] = {}
    for number, other in enumerate(nodes):
        trace = as_trace(other)
        if trace is mine:
            continue
        at = fork_position(mine, trace)
        if at < min(len(mine), len(trace)) and trace.token_ids[at] >= 0:
            marks.setdefault(str(at), {}).setdefault(str(int(trace.token_ids[at])), number)
    return marks
