"""What every runner's ``choose`` shares: its arguments, checked, and how a prompt and an option
become tokens, as lm-eval does it (``TemplateLM._encode_pair``).

- whitespace at the end of the prompt moves to the front of the option (``"Answer: "`` +
  ``"yes"`` is scored as ``"Answer:"`` + ``" yes"``, the way a BPE tokenizer writes it);
- the whole text is tokenized, and the option's tokens are the whole's tokens after as many
  tokens as the prompt alone has. Where the tokenizer merged the prompt's last bytes with the
  option's first (the whole's first tokens are not the prompt's), the option's first token
  straddles the boundary: it is flagged ``straddles_prompt`` (`logprob_viz.records.flags`).

The local runner scores all the options of a prompt in one packed forward pass
(`local.choose`); a server runner scores prompt + option token ids where the server returns
prompt logprobs (`remote.choose`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..records.choices import Choices
from .request import batch_items, check_input

__all__ = ["Pair", "ChoiceInput", "choice_inputs", "check_options", "split_pair", "fill_pairs", "input_meta",
           "mark_straddle", "choices_of", "STRADDLES"]

STRADDLES = "straddles_prompt"


@dataclass
class Pair:
    """One prompt's tokens and one option's tokens after it (lm-eval's split)."""

    context: list[int]
    option: list[int]
    straddles: bool  # the whole's first tokens differ from the prompt's: the option's first token straddles


@dataclass
class ChoiceInput:
    """One prompt of a choose call: its text (chat-templated for messages) and each option's pair."""

    item: dict  # {"text": ...} or {"messages": [...]}
    text: str = ""
    pairs: list[Pair] = field(default_factory=list)


def check_options(options) -> list[str]:
    if isinstance(options, str) or not isinstance(options, (list, tuple)) or not options:
        raise TypeError("options must be a non-empty list of strings, the answers to score after the prompt, "
                        f"e.g. [' positive', ' negative']; got {type(options).__name__}")
    for i, option in enumerate(options):
        if not isinstance(option, str) or not option:
            raise ValueError(f"option {i} is {option!r}: each option must be a non-empty string")
    if len(set(options)) != len(options):
        repeated = sorted({o for o in options if options.count(o) > 1})
        raise ValueError(f"options must be distinct; {repeated!r} appears more than once")
    return list(options)


def choice_inputs(prompt, messages, options) -> tuple[list[ChoiceInput], list[str], bool]:
    """(one ChoiceInput per prompt, the options, whether one prompt was given rather than a list)."""
    options = check_options(options)
    items = batch_items(prompt, messages, None)
    single = items is None
    if single:
        check_input(prompt, messages, None)
        items = [{"text": prompt} if messages is None else {"messages": messages}]
    return [ChoiceInput(item) for item in items], options, single


def split_pair(encode, context: str, option: str, where: str = "") -> Pair:
    """lm-eval's split of `context` + `option` into tokens; `encode(text)` is the runner's tokenizer."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        option = context[-spaces:] + option
        context = context[:-spaces]
    if not context:
        raise ValueError(f"{where}the prompt is empty (or only whitespace): give the text the options follow")
    context_ids = list(encode(context))
    whole = list(encode(context + option))
    option_ids = whole[len(context_ids):]
    if not option_ids:
        raise ValueError(f"{where}the option {option!r} adds no token after the prompt (the tokenizer merged it into "
                         "the prompt's last token); end the prompt with a space or start the option with one")
    return Pair(context_ids, option_ids, whole[: len(context_ids)] != context_ids)


def fill_pairs(item: ChoiceInput, options: list[str], encode, where: str = "") -> None:
    """Each option's pair after ``item.text`` (already set), encoding the prompt once."""
    cache: dict[str, list[int]] = {}

    def encode_once(s: str) -> list[int]:
        if s not in cache:
            cache[s] = list(encode(s))
        return cache[s]

    item.pairs = [split_pair(encode_once, item.text, option, where) for option in options]


def input_meta(item: ChoiceInput) -> dict:
    """What a choose trace's ``meta`` says of its input: the prompt's text, or the messages."""
    return {"messages": item.item["messages"]} if "messages" in item.item else {"prompt": item.text}


def mark_straddle(trace, pair: Pair) -> None:
    """Flag the option's first token when it straddles the prompt's end (the trace then warns of it)."""
    if pair.straddles:
        trace.flags[len(pair.context)] = [STRADDLES]


def choices_of(inputs: list[ChoiceInput], options: list[str], traces: list[list], *, length: str, gold, single: bool,
               meta: dict) -> Choices:
    """The `lv.Choices` of the traces (one row per prompt, one trace per option): each option's logprob
    is the sum of its trace's logprobs after the prompt (float64)."""
    sums = [[float(np.sum(t.logprobs[t.prompt_len:], dtype=np.float64)) for t in row] for row in traces]
    return Choices([c.text for c in inputs], options, traces, sums, length=length, gold=gold, single=single,
                   meta=meta)
