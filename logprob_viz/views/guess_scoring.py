"""The guessing game's numbers: matching a guess to a token, and the class's bits after Shannon 1951.

Shannon (1951, "Prediction and Entropy of Printed English") had a person guess a text's next
letter until right and recorded the number of guesses each letter took. With ``q_i`` the
fraction of positions that took exactly ``i`` guesses, he bounded the entropy per symbol of the
text *as that person predicts it*:

    sum_i i * (q_i - q_{i+1}) * log2(i)   <=   H   <=   -sum_i q_i * log2(q_i)

The upper bound is the entropy of the guess-number sequence: a person who guesses the same
way given the same past turns the text into that sequence and back, so the text carries no
more information than it. This module gives each position the share of it that its own guess
number carries, ``class_bits = -log2 q_(n)`` where ``n`` is that position's number of guesses;
their mean over the positions played is exactly the upper bound. ``q`` is the game's own
distribution, so every position's class bits change as more positions are played.

Both are estimates from the game's own positions: a game of a few tokens says little (one
position found at the first guess gives 0 bits).

The model's bits of a token are its surprisal, ``-log2 p(token)``; the model's rank of the token
is the number of guesses it would need if it guessed in order of probability, so the same
bounds over the model's ranks compare model and class on the same footing.
"""

from __future__ import annotations

import math
from collections import Counter

__all__ = ["normalise", "matches", "shannon_bounds", "guess_number_bits"]


def normalise(text: str, case_sensitive: bool = True) -> str:
    """A guess or a token as compared: leading and trailing whitespace removed; casefolded unless
    case-sensitive. A whitespace-only token (a newline, a space) is the empty string, which an empty
    guess matches."""
    out = str(text).strip()
    return out if case_sensitive else out.casefold()


def matches(guess: str, token: str, case_sensitive: bool = True) -> bool:
    """Whether `guess` names `token` (see `normalise`)."""
    return normalise(guess, case_sensitive) == normalise(token, case_sensitive)


def _frequencies(numbers: list[int]) -> dict[int, float]:
    counts = Counter(numbers)
    return {i: c / len(numbers) for i, c in counts.items()}


def shannon_bounds(numbers: list[int]) -> tuple[float, float]:
    """(lower, upper) bound in bits per token from guess numbers (each >= 1), after Shannon 1951.

    upper = -sum q_i log2 q_i: the entropy of the guess numbers, an upper bound for any predictor
    that guesses the same way given the same past. lower = sum_i i (q_i - q_{i+1}) log2 i holds
    for an ideal predictor, whose first guesses are right most often (q_1 >= q_2 >= ...): NaN
    when the game's q is not so ordered (a short game seldom is). Both NaN for no positions.
    """
    if not numbers:
        return math.nan, math.nan
    q = _frequencies(numbers)
    upper = 0.0 - sum(p * math.log2(p) for p in q.values())  # (0.0 - : no "-0.0")
    top = max(q)
    ordered = all(q.get(i, 0.0) >= q.get(i + 1, 0.0) for i in range(1, top))
    lower = sum(i * (q.get(i, 0.0) - q.get(i + 1, 0.0)) * math.log2(i) for i in range(1, top + 1))
    return (lower if ordered else math.nan), upper


def guess_number_bits(numbers: list[int]) -> list[float]:
    """Per position, -log2 q(its guess number): the share of Shannon's upper bound it carries."""
    if not numbers:
        return []
    q = _frequencies(numbers)
    return [0.0 - math.log2(q[n]) for n in numbers]  # (0.0 - : no "-0.0" when q is 1)
