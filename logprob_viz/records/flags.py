"""The per-token flag vocabulary of a `Trace`: what a source lost or left ambiguous.

A trace's ``flags[i]`` lists codes from `TOKEN_FLAGS` for token ``i``. Producers (adapters,
runners) add codes; views mark the tokens and say what each code means. `Trace.warnings` derives
the words from the codes (`flag_warnings`) when asked, so they follow slices and joins; code that
needs to know what was lost reads the codes, never the words.
"""

from __future__ import annotations

__all__ = ["TOKEN_FLAGS", "SHOWN_BY_THE_CHART", "flag_warnings", "order_flags"]

# code -> what it means, in the order a view lists them
TOKEN_FLAGS = {
    "no_bytes": "the source gave no text or bytes for this token (a piece of a character split across tokens, "
    "whose whole character is shown on a later token, or a special token)",
    "replacement_char": "the source replaced undecodable bytes by U+FFFD; the token's real bytes are lost",
    "no_text": "the source gave only the token's id (token_id:N); pass tokenizer= to see its text",
    "collided": "alternatives collided on the same string key; some of them (and their logprobs) were lost",
    "outside_top_k": "the chosen token was not among the top K alternatives; its rank is > K",
    "alternatives_incomplete": "the server listed the chosen token first and cut the list at K: the K-th most "
    "likely alternative may be missing",
    "first_token_unknown": "the source does not say what the first prompt token was",
    "pieces_merged": "the server merged the pieces of a character split across tokens into this one entry; its "
    "logprob and alternatives are those of the last piece, the earlier pieces' logprobs are lost",
    "straddles_prompt": "this option token's bytes begin in the prompt: the tokenizer merged the prompt's end with "
    "the option's start, so (as lm-eval does) the whole text was tokenized and split at the prompt's own token count",
}

# Not a loss: the alternatives chart already shows a chosen token outside the top K.
SHOWN_BY_THE_CHART = frozenset({"outside_top_k"})

_ORDER = {code: i for i, code in enumerate(TOKEN_FLAGS)}


def order_flags(codes) -> list[str]:
    """One token's codes without repeats, in the vocabulary's order (unknown codes last)."""
    return sorted(set(codes), key=lambda c: (_ORDER.get(c, len(_ORDER)), c))


def flag_warnings(flags: list[list[str]]) -> list[str]:
    """`Trace.warnings` sentences for a trace's flags: one per lost kind, with positions."""
    warnings = []
    for code, meaning in TOKEN_FLAGS.items():
        if code in SHOWN_BY_THE_CHART:
            continue
        where = [i for i, row in enumerate(flags) if code in row]
        if where:
            shown = ", ".join(map(str, where[:12])) + (" ..." if len(where) > 12 else "")
            warnings.append(f"{len(where)} token(s) at {shown}: {meaning}")
    return warnings
