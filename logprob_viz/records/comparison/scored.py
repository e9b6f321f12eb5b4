"""The numbers of a comparison, each with the part of the text it is computed over.

A comparison has three parts a number can be taken over (`Comparison.scored(over=...)`):

- ``"aligned"``: the aligned spans every row has a logprob for. The same bytes for every row, so
  bits per byte there is fair across tokenizers; but where the rows are branches of one model,
  the aligned part is their shared prefix and every row's number is the same.
- ``"own"``: each row's own continuation, the bytes after the part every row shares (its *tail*).
  This is where branches, samples and prompts differ; the rows cover different bytes.
- ``"text"``: each row's whole text.

Tokens whose logprob is unknown (the first token of a text: nothing comes before it) are left out
and counted in ``skipped``. When nothing is left, the number is NaN and ``reason`` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..tokens import display_token

__all__ = ["PARTS", "Scored", "scored_aligned", "scored_rows"]

_LN2 = math.log(2.0)
PARTS = ("aligned", "own", "text")


@dataclass(frozen=True)
class Scored:
    """One row's numbers over one part of its text.

    Attributes
    ----------
    over : str
        ``"aligned"``, ``"own"`` or ``"text"`` (see the module's docstring).
    start, end : int
        The part's byte range in the row's text (for ``"aligned"``: the aligned bytes, of which
        ``bytes`` are counted).
    tokens, bytes : int
        The tokens counted (each with a known logprob) and the bytes they cover.
    skipped : int
        Tokens of the part without a known logprob, not counted.
    bits : float
        −Σ log2 p over the tokens counted.
    reason : str
        Why nothing is counted ("" when something is).
    """

    over: str
    start: int
    end: int
    tokens: int
    bytes: int
    skipped: int
    bits: float
    reason: str = ""

    @property
    def bits_per_byte(self) -> float:
        return self.bits / self.bytes if self.bytes else math.nan

    @property
    def perplexity(self) -> float:
        """exp(−mean logprob) over the tokens counted: 2 ** (bits / tokens)."""
        return 2.0 ** (self.bits / self.tokens) if self.tokens else math.nan

    def describe(self) -> str:
        """Over what the numbers are computed, in words."""
        if self.reason:
            return self.reason
        if self.over == "aligned":
            return (f"over the {self.bytes} bytes of aligned spans every row knows (of bytes 0–{self.end}), "
                    f"{self.tokens} tokens of this row")
        skipped = f"; {self.skipped} token(s) without a logprob left out" if self.skipped else ""
        part = "its own continuation" if self.over == "own" else "its text"
        return f"over {part}: {self.tokens} tokens, {self.bytes} bytes (bytes {self.start}–{self.end}{skipped})"

    def to_dict(self) -> dict:
        """JSON-safe (NaN as None), with the derived numbers, for a view's trait."""

        def finite(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {
            "over": self.over, "start": self.start, "end": self.end, "tokens": self.tokens, "bytes": self.bytes,
            "skipped": self.skipped, "bits": finite(self.bits), "bits_per_byte": finite(self.bits_per_byte),
            "perplexity": finite(self.perplexity), "reason": self.reason,
        }


def _sum_bits(logprobs: np.ndarray) -> float:
    return float(-logprobs.astype(np.float64).sum() / _LN2)


def scored_aligned(cmp) -> list[Scored]:
    """Per row: over the aligned spans every row knows (the same bytes for every row)."""
    known = cmp.known
    n_bytes = int((cmp.span_ends - cmp.span_starts)[known].sum())
    reason = "" if n_bytes else _nothing_aligned(cmp)
    out = []
    for r, (tr, row) in enumerate(zip(cmp.traces, cmp.aligned_rows, strict=True)):
        span_of = row.span_of[: row.tail_from]
        mine = known[span_of] if span_of.size else np.zeros(0, dtype=bool)
        lps = tr.logprobs[: row.tail_from][mine]
        out.append(Scored(
            over="aligned", start=0, end=cmp.shared_bytes, tokens=int(lps.size), bytes=n_bytes,
            skipped=int(row.tail_from - lps.size), bits=_sum_bits(cmp.span_logprobs[r][known]) if n_bytes else math.nan,
            reason=reason,
        ))
    return out


def _nothing_aligned(cmp) -> str:
    shared = display_token(cmp.byte_texts[0][: cmp.shared_bytes])
    unknown_rows = [cmp.labels[r] for r in range(len(cmp.traces)) if np.isnan(cmp.span_logprobs[r]).any()]
    where = (
        f"the rows share only their first {cmp.shared_bytes} bytes ({shared!r}), and "
        if not cmp.same_text
        else "every aligned span has a token without a logprob in some row, and "
    )
    return (
        f"nothing aligned can be compared: {where}no logprob there is known to every row "
        f"(unknown in {', '.join(unknown_rows)}; the first token of a text has none: nothing comes before it). "
        + (
            f"The texts differ from byte {cmp.common_prefix}: compare each row's own continuation, "
            "cmp.bits_per_byte(over='own'), or texts with a longer common beginning."
            if not cmp.same_text
            else "Give traces with logprobs for the same tokens (e.g. score the text with every model)."
        )
    )


def scored_rows(cmp, over: str) -> list[Scored]:
    """Per row: over its own continuation (``"own"``) or its whole text (``"text"``)."""
    out = []
    for label, tr, row, text in zip(cmp.labels, cmp.traces, cmp.aligned_rows, cmp.byte_texts, strict=True):
        first = row.tail_from if over == "own" else 0
        start = cmp.shared_bytes if over == "own" else 0
        lps = tr.logprobs[first:]
        known = ~np.isnan(lps)
        n_bytes = sum(len(b) for b, k in zip(tr.token_bytes[first:], known.tolist(), strict=True) if k)
        reason = ""
        if not known.any():
            if first == len(tr):
                reason = (
                    f"{label} has no continuation of its own: its whole text is the {cmp.shared_bytes} bytes every "
                    "row shares"
                )
            else:
                reason = f"no token of {label}'s {'own continuation' if over == 'own' else 'text'} has a logprob"
        elif n_bytes == 0:
            reason = f"the tokens of {label} with a logprob there have no bytes (special tokens only)"
        bits = _sum_bits(lps[known]) if known.any() else math.nan
        out.append(Scored(
            over=over, start=start, end=len(text), tokens=int(known.sum()), bytes=n_bytes,
            skipped=int((~known).sum()), bits=bits, reason=reason,
        ))
    return out
