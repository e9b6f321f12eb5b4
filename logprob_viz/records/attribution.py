"""Why this token: how much each earlier token pushed the model towards its choice (`runner.attribute`).

An `Attribution` holds one score per token before position ``position`` for one quantity,
``log p(target)`` or ``log p(target) - log p(contrast)``. The scores are computed model-side
(`sources/local/attribution.py`); this record holds them, sums them to words and sentences and
shows them, so it needs no torch. Scores are additive (gradient x input, integrated gradients
and occlusion all split the quantity into per-token parts), so a word's score is the sum of its
tokens' scores.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np

from .tokens import display_token

__all__ = ["Attribution", "Spans", "word_spans", "sentence_spans"]

_SENTENCE_END = (b".", b"!", b"?")


def _kind(byte: int) -> str:
    """A byte's class for word breaks: space, word (letters, digits, any non-ASCII) or mark."""
    if byte in b" \t\r\n\x0b\x0c":
        return "space"
    if byte >= 0x80 or chr(byte).isalnum() or byte == ord("_"):
        return "word"
    return "mark"


def word_spans(token_bytes: list[bytes]) -> list[tuple[int, int]]:
    """[start, end) token ranges of words: a word starts at a token that begins with whitespace,
    or where letters meet punctuation (" system" + "?" are two words; "Nept" + "une" one)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(token_bytes)):
        prev, cur = token_bytes[i - 1], token_bytes[i]
        if not cur or not prev:
            continue
        first, last = _kind(cur[0]), _kind(prev[-1])
        if first == "space" or first != last or (first == "mark" and last == "mark"):
            spans.append((start, i))
            start = i
    if token_bytes:
        spans.append((start, len(token_bytes)))
    return spans


def sentence_spans(token_bytes: list[bytes]) -> list[tuple[int, int]]:
    """[start, end) token ranges of sentences: one ends after a token ending in . ! ? (before
    trailing whitespace) or holding a newline."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i, raw in enumerate(token_bytes):
        if b"\n" in raw or raw.rstrip().endswith(_SENTENCE_END):
            spans.append((start, i + 1))
            start = i + 1
    if start < len(token_bytes):
        spans.append((start, len(token_bytes)))
    return spans


def _color(score: float, scale: float) -> str:
    """Diverging palette, its own (not the probability colours): red pushed towards the target,
    blue against it; the strength is |score| / the largest |score|."""
    strength = 0.0 if scale <= 0 or not math.isfinite(score) else min(abs(score) / scale, 1.0)
    rgb = (214, 39, 40) if score > 0 else (31, 119, 180)
    return f"rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {0.08 + 0.72 * strength:.2f})"


def _html_pieces(texts: list[str], scores: np.ndarray) -> str:
    finite = np.abs(scores[np.isfinite(scores)])
    scale = float(finite.max()) if finite.size else 0.0
    pieces = []
    for text, score in zip(texts, scores.tolist(), strict=True):
        shown = html.escape(text.replace("\n", "\u21b5\n"))  # token text is data, never markup
        pieces.append(
            f'<span title="{html.escape(f"{score:+.4f}", quote=True)}" '
            f'style="background:{_color(score, scale)};white-space:pre-wrap">{shown}</span>'
        )
    return "".join(pieces)


@dataclass
class Spans:
    """Scores summed over words or sentences: ``texts[n]`` covers tokens ``starts[n]:ends[n]``."""

    unit: str
    texts: list[str]
    scores: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self):
        return iter(zip(self.texts, self.scores.tolist(), strict=True))

    def top(self, n: int = 5) -> list[tuple[str, float]]:
        """The `n` spans with the largest scores (those that pushed most towards the target)."""
        order = np.argsort(-self.scores, kind="stable")[:n]
        return [(self.texts[i], float(self.scores[i])) for i in order]

    def to_pandas(self):
        import pandas as pd  # optional dependency: only the table needs it

        return pd.DataFrame({self.unit: self.texts, "score": self.scores, "start": self.starts, "end": self.ends})

    def _repr_html_(self) -> str:
        return f"<div style='font-family:monospace;line-height:1.8'>{_html_pieces(self.texts, self.scores)}</div>"


@dataclass
class Attribution:
    """Scores for one token: how much each earlier token pushed the model towards it.

    Attributes
    ----------
    scores : float64 array [position]
        One score per token before ``position`` (prompt and generated tokens, in order);
        positive: that token raised the quantity.
    token_ids, token_bytes, tokens : the tokens scored (ids, exact bytes, display text).
    position : int
        The index of the target token in the trace.
    target, target_id : the token at ``position`` (display text, id).
    contrast, contrast_id : the alternative compared against (None without one).
    method : str
        ``"gradient_x_input"``, ``"integrated_gradients"`` or ``"occlusion"``.
    quantity : str
        What the scores split up: ``log p(' Neptune')`` or ``log p(' Neptune') - log p(' Jupiter')``.
    value : float
        The quantity on the real input.
    meta : dict
        The model, the seconds taken, and per method its settings; integrated gradients add
        ``baseline``, ``n_steps``, ``steps``, ``baseline_value``, ``completeness_error``
        (sum of scores - (value - baseline_value)), ``relative_error`` and ``converged``.
    """

    scores: np.ndarray
    token_ids: np.ndarray
    token_bytes: list[bytes]
    position: int
    target_id: int
    target_bytes: bytes
    method: str
    value: float
    contrast_id: int | None = None
    contrast_bytes: bytes | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.scores = np.asarray(self.scores, dtype=np.float64)
        self.token_ids = np.asarray(self.token_ids, dtype=np.int64)
        if not len(self.scores) == len(self.token_ids) == len(self.token_bytes) == self.position:
            raise ValueError(
                f"an attribution has one score per token before position {self.position}: got "
                f"{len(self.scores)} scores, {len(self.token_ids)} ids and {len(self.token_bytes)} tokens"
            )
        self.tokens = [display_token(b) for b in self.token_bytes]
        self.target = display_token(self.target_bytes)
        self.contrast = None if self.contrast_bytes is None else display_token(self.contrast_bytes)

    @property
    def quantity(self) -> str:
        base = f"log p({self.target!r})"
        return base if self.contrast is None else f"{base} - log p({self.contrast!r})"

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        return f"<Attribution {self.method} of {self.quantity} = {self.value:.3f} over {len(self)} tokens>"

    def _spans(self, unit: str, ranges: list[tuple[int, int]]) -> Spans:
        texts = [display_token(b"".join(self.token_bytes[a:b])) for a, b in ranges]
        scores = np.array([self.scores[a:b].sum() for a, b in ranges], dtype=np.float64)
        starts = np.array([a for a, _ in ranges], dtype=np.int64)
        ends = np.array([b for _, b in ranges], dtype=np.int64)
        return Spans(unit, texts, scores, starts, ends)

    def by_word(self) -> Spans:
        """Scores summed over words (from the token bytes: a word starts at whitespace or where
        letters meet punctuation)."""
        return self._spans("word", word_spans(self.token_bytes))

    def by_sentence(self) -> Spans:
        """Scores summed over sentences (ending in . ! ? or at a newline)."""
        return self._spans("sentence", sentence_spans(self.token_bytes))

    def to_pandas(self):
        """One row per earlier token: position, token, id, score."""
        import pandas as pd  # optional dependency: only the table needs it

        return pd.DataFrame({
            "position": np.arange(len(self)), "token": self.tokens, "token_id": self.token_ids, "score": self.scores,
        })

    def _repr_html_(self) -> str:
        head = f"{self.method}: {self.quantity} = {self.value:.3f}"
        error = self.meta.get("completeness_error")
        if error is not None:
            head += f"; completeness error {error:+.4f}"
            if not self.meta.get("converged", True):
                head += " (not converged: use more n_steps)"
        legend = (
            "<span style='background:rgba(214, 39, 40, 0.6)'>&nbsp;raised it&nbsp;</span> "
            "<span style='background:rgba(31, 119, 180, 0.6)'>&nbsp;lowered it&nbsp;</span>"
        )
        target = html.escape(self.target)
        return (
            f"<div><div style='font-size:90%'>{html.escape(head)} {legend}</div>"
            f"<div style='font-family:monospace;line-height:1.8'>{_html_pieces(self.tokens, self.scores)}"
            f"<span style='outline:2px solid currentColor;white-space:pre-wrap'>{target}</span></div></div>"
        )
