"""The guessing game's numbers: matching a guess to a token, and Shannon's 1951 bounds on entropy.

Shannon (1951, "Prediction and Entropy of Printed English") had a person guess a text's next
letter until right and recorded the number of guesses each letter took. With ``q_i`` the
fraction of positions that took exactly ``i`` guesses, he bounded the entropy per symbol of the
text as that guesser predicts it:

    sum_i i * (q_i - q_{i+1}) * log2(i)   <=   H   <=   -sum_i q_i * log2(q_i)

The upper bound is the entropy of the guess-number sequence: a guesser who guesses the same way
given the same past turns the text into that sequence and back, so the text carries no more
information than it. The lower bound is Shannon's for an ideal guesser (one whose i-th guess is
the i-th likeliest, so that q_1 >= q_2 >= ...): where a game's q is not so ordered it is not given;
for a person it is an estimate.

Class and model are scored the same way, on the same tokens: the class's guess number of a
token is how many guesses it took; the model's is the token's rank, the number of guesses a
model needs that guesses in order of probability. A token the class gave up on (revealed after
k wrong guesses) took *more than k* guesses: it is not dropped. In the lower bound it counts at
k + 1 guesses, the fewest it could have taken (the bound grows with every guess number, so this
keeps it low); in the upper bound its outcome, "more than k", is a value of its own in ``q``
(what naming the revealed token would add is not counted).

Both bounds are estimates from the game's own tokens: Shannon used hundreds of letters, and a
game of a few tokens says little (`FEW_TOKENS`).
"""

from __future__ import annotations

import math
from collections import Counter

__all__ = ["normalise", "matches", "shannon_bounds", "guessing_bits", "FEW_TOKENS"]

FEW_TOKENS = 20  # under this many found tokens the bounds are said to mean little


def normalise(text: str, case_sensitive: bool = True) -> str:
    """A guess or a token as compared: leading and trailing whitespace removed; casefolded unless
    case-sensitive. A whitespace-only token (a newline, a space) is the empty string, which an empty
    guess matches."""
    out = str(text).strip()
    return out if case_sensitive else out.casefold()


def matches(guess: str, token: str, case_sensitive: bool = True) -> bool:
    """Whether `guess` names `token` (see `normalise`)."""
    return normalise(guess, case_sensitive) == normalise(token, case_sensitive)


def _entropy(outcomes: list) -> float:
    """-sum q log2 q over the outcomes' frequencies q."""
    counts = Counter(outcomes)
    n = len(outcomes)
    return 0.0 - sum(c / n * math.log2(c / n) for c in counts.values())  # (0.0 - : no "-0.0")


def _lower(numbers: list[int]) -> float:
    """sum_i i (q_i - q_{i+1}) log2 i over the frequencies q of the guess numbers (each >= 1); NaN
    unless q_1 >= q_2 >= ...: Shannon's bound is an ideal guesser's, whose first guess is right most
    often, its second next most often, and so on (a short game's seldom are, a model's ranks neither:
    one rank of 120 among ten 1s would give a "lower bound" above the upper one)."""
    counts = Counter(numbers)
    q = [counts.get(i, 0) / len(numbers) for i in range(max(numbers) + 2)]  # q[0] unused, q[top + 1] = 0
    if any(q[i] < q[i + 1] for i in range(1, len(q) - 1)):
        return math.nan
    return sum(i * (q[i] - q[i + 1]) * math.log2(i) for i in range(1, len(q) - 1))


def shannon_bounds(numbers: list[int], revealed_after: list[int] = ()) -> tuple[float, float]:
    """(lower, upper) bound in bits per token, after Shannon 1951 (see the module's docstring).

    `numbers`: the guess number of each token found (each >= 1); `revealed_after`: for each token
    revealed, the wrong guesses made before (k >= 0: it took more than k). Both NaN for no tokens;
    the lower one NaN where the guess numbers are not most often 1, then 2, ... (see `_lower`).
    """
    revealed_after = list(revealed_after)
    if not numbers and not revealed_after:
        return math.nan, math.nan
    lower = _lower([*numbers, *(k + 1 for k in revealed_after)])
    upper = _entropy([*numbers, *((">", k) for k in revealed_after)])
    return lower, upper


def guessing_bits(numbers: list[int]) -> float:
    """What a game scores: the mean of log2(guesses) per token found, in bits. 0 when every token took
    one guess, 1 when each took two; fewer guesses is always less (Shannon's bounds are not a score: a
    class needing exactly 3 guesses at every token has an upper bound of 0 bits). Revealed tokens are
    not scored (counted at any number of guesses, revealing would pay); the caller says how many
    there were. NaN for no tokens."""
    return sum(math.log2(g) for g in numbers) / len(numbers) if numbers else math.nan
