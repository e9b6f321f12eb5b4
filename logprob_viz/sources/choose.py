"""What every runner's ``choose`` shares: its arguments, checked, and how a prompt and an option
become tokens, as lm-eval does it (``TemplateLM._encode_pair``).

- whitespace at the end of the prompt moves to the front of the option (``"Answer: "`` +
  ``"yes"`` is scored as ``"Answer:"`` + ``" yes"``, the way a BPE tokenizer writes it);
- the whole text is tokenized, and the option's tokens are the whole's tokens after as many
  tokens as the prompt alone has. Where the tokenizer merged the prompt's last bytes with the
  option's first (the whole's first tokens are not the prompt's), the option's first token
  straddles the boundary: it is flagged ``straddles_prompt`` (`logprob_viz.records.flags`), and
  `straddle_notes` says in words what was scored: the option's bytes left unscored (merged into
  the prompt's last token) and the scored text, or two options become the same tokens; a warning,
  or a ValueError with ``strict=True``.

The local runner scores all the options of a prompt in one packed forward pass
(`local.choose`); a server runner scores prompt + option token ids where the server returns
prompt logprobs (`remote.choose`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..records.choices import Choices
from ..records.tokens import display_token
from .job_lock import user_stacklevel
from .request import batch_items, check_input

__all__ = ["Pair", "ChoiceInput", "choice_inputs", "check_options", "split_pair", "fill_pairs", "input_meta",
           "mark_straddle", "straddle_note", "straddle_notes", "choices_of", "STRADDLES"]

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
    options: list[str] = field(default_factory=list)  # this prompt's options
    text: str = ""
    pairs: list[Pair] = field(default_factory=list)


def _a(value) -> str:
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _what_options_are(options) -> str:
    if isinstance(options, str):
        return f"the string {options!r} (one option is still a list: [{options!r}])"
    if isinstance(options, (list, tuple)):
        return f"an empty {type(options).__name__}"
    return "None" if options is None else _a(options)


def check_options(options) -> list[str]:
    """The options as a list of distinct non-empty strings (TypeError / ValueError otherwise); warns of
    options that are only whitespace (see `warn_whitespace`)."""
    if isinstance(options, str) or not isinstance(options, (list, tuple)) or not options:
        raise TypeError("options must be a non-empty list of strings, the answers to score after the prompt, "
                        f"e.g. [' positive', ' negative']; got {_what_options_are(options)}")
    for i, option in enumerate(options):
        if not isinstance(option, str):
            raise TypeError(f"option {i} is {option!r}, {_a(option)}: each option must be a string, "
                            "the answer's text (a missing value in a table column reads as nan or None)")
        if not option:
            raise ValueError(f"option {i} is '': each option must be a non-empty string")
    if len(set(options)) != len(options):
        repeated = sorted({o for o in options if options.count(o) > 1})
        raise ValueError(f"options must be distinct; {repeated!r} appears more than once")
    warn_whitespace(options)
    return list(options)


def warn_whitespace(options) -> None:
    """A warning, not an error, for options that are only whitespace: ``["\\n", " "]`` is a fair question
    (what does the model write next?), but ``[" ", "  "]`` is more often answers lost on the way (a
    stripped or blank column), and ``per_char`` / ``per_byte`` count such an option as 1."""
    blank = [i for i, option in enumerate(options) if not option.strip()]
    if blank:
        listed = ", ".join(f"{i} ({options[i]!r})" for i in blank)
        warnings.warn(f"option{'s' if len(blank) > 1 else ''} {listed} {'are' if len(blank) > 1 else 'is'} only "
                      "whitespace: scored as the whitespace the model writes next, not as an answer "
                      "(length='per_char' or 'per_byte' counts each as 1); if the options stand for answers, give "
                      "their text (e.g. ' yes')", UserWarning, stacklevel=user_stacklevel())


def _per_prompt(options) -> bool:
    """Whether `options` is a list of lists (each prompt's own options) rather than one list of texts."""
    return isinstance(options, (list, tuple)) and bool(options) and all(isinstance(o, (list, tuple))
                                                                        for o in options)


def choice_inputs(prompt, messages, options) -> tuple[list[ChoiceInput], list, bool]:
    """(one ChoiceInput per prompt, the options as given (checked: a list, or a list per prompt), whether
    one prompt was given rather than a list)."""
    items = batch_items(prompt, messages, None)
    single = items is None
    if single:
        check_input(prompt, messages, None)
        items = [{"text": prompt} if messages is None else {"messages": messages}]
    if not _per_prompt(options):
        options = check_options(options)
        return [ChoiceInput(item, options) for item in items], options, single
    if single or len(options) != len(items):
        raise ValueError(f"options is a list of {len(options)} lists (each prompt's own options): give as many "
                         f"prompts as lists, a list of prompts; got {'one prompt' if single else len(items)}")
    rows = []
    for i, row in enumerate(options):
        try:
            rows.append(check_options(row))
        except (TypeError, ValueError) as error:
            raise type(error)(f"prompt {i}'s options: {error}") from None
    if len({len(row) for row in rows}) > 1:
        raise ValueError("give every prompt the same number of options (the table has a column per option); got "
                         + ", ".join(f"{len(row)} for prompt {i}" for i, row in enumerate(rows)))
    return [ChoiceInput(item, row) for item, row in zip(items, rows, strict=True)], rows, single


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


def fill_pairs(item: ChoiceInput, encode, where: str = "") -> None:
    """Each of ``item.options``' pairs after ``item.text`` (already set), encoding the prompt once."""
    cache: dict[str, list[int]] = {}

    def encode_once(s: str) -> list[int]:
        if s not in cache:
            cache[s] = list(encode(s))
        return cache[s]

    item.pairs = [split_pair(encode_once, item.text, option, where) for option in item.options]


def input_meta(item: ChoiceInput) -> dict:
    """What a choose trace's ``meta`` says of its input: the prompt's text, or the messages."""
    return {"messages": item.item["messages"]} if "messages" in item.item else {"prompt": item.text}


def mark_straddle(trace, pair: Pair) -> None:
    """Flag the option's first token when it straddles the prompt's end (the trace then warns of it)."""
    if pair.straddles:
        trace.flags[len(pair.context)] = [STRADDLES]


def straddle_note(trace, prompt: str, option: str) -> str | None:
    """What was scored of an option whose first token straddles the prompt's end, in words: the bytes
    of the option left unscored (merged into the prompt's last token) or the prompt's bytes scored
    again, and the scored text; None when the option's scored bytes are its own."""
    flagged = trace.flagged().get(trace.prompt_len, ())
    if STRADDLES not in flagged:
        return None
    wanted = (prompt[len(prompt.rstrip()):] + option).encode("utf-8")  # (the prompt's end spaces move to it)
    scored = b"".join(trace.token_bytes[trace.prompt_len:])
    text = display_token(b"".join(trace.token_bytes))
    shown = repr(text if len(text) <= 60 else "…" + text[-59:])
    if len(scored) < len(wanted) and wanted.endswith(scored):
        lost = display_token(wanted[: len(wanted) - len(scored)])
        return (f"{lost!r} of option {option!r} was not scored; the scored text is {shown} (the tokenizer merged "
                "it into the prompt's last token, and the prompt keeps its own tokens, as lm-eval does)")
    if len(scored) > len(wanted) and scored.endswith(wanted):
        again = display_token(scored[: len(scored) - len(wanted)])
        return (f"the prompt's end {again!r} was scored again as the start of option {option!r}; the scored text "
                f"is {shown}")
    if scored != wanted:
        return f"option {option!r} was scored as {display_token(scored)!r}; the scored text is {shown}"
    return None


def _same_text_notes(row: list, options: list[str]) -> list[tuple[list[int], str]]:  # (a prompt's options)
    """(the options, a sentence) for each group of a prompt's options scored as the same tokens."""
    groups: dict[tuple, list[int]] = {}
    for j, trace in enumerate(row):
        groups.setdefault(tuple(trace.token_ids[trace.prompt_len:].tolist()), []).append(j)
    notes = []
    for same in groups.values():
        if len(same) > 1:
            names = " and ".join(repr(options[j]) for j in same)
            text = display_token(b"".join(row[same[0]].token_bytes))
            shown = repr(text if len(text) <= 60 else "…" + text[-59:])
            notes.append((same, f"options {names} become the same scored text {shown}: the same tokens, so the "
                                "same logprob; choosing between them says nothing"))
    return notes


def straddle_notes(inputs: list[ChoiceInput], traces: list[list], single: bool) -> list[str]:
    """The sentences of every option scored other than as written (`straddle_note`) or scored as the
    same text as another option of its prompt; each also goes into its traces' ``meta["warnings"]``."""
    notes = []
    for r, (item, row) in enumerate(zip(inputs, traces, strict=True)):
        where = "" if single else f"prompt {r}: "
        found = [(j, straddle_note(t, item.text, o)) for j, (t, o) in enumerate(zip(row, item.options, strict=True))]
        for same, note in [([j], n) for j, n in found if n] + _same_text_notes(row, item.options):
            for j in same:
                row[j].meta["warnings"] = [*row[j].meta.get("warnings", ()), note]
            notes.append(where + note)
    return notes


def choices_of(inputs: list[ChoiceInput], options: list, traces: list[list], *, length: str, gold, single: bool,
               meta: dict, strict: bool = False) -> Choices:
    """The `lv.Choices` of the traces (one row per prompt, one trace per option): each option's logprob
    is the sum of its trace's logprobs after the prompt (float64). An option scored other than as
    written (`straddle_notes`) gives a warning, or with ``strict`` a ValueError whose ``choices``
    holds the result all the same."""
    sums = [[float(np.sum(t.logprobs[t.prompt_len:], dtype=np.float64)) for t in row] for row in traces]
    notes = straddle_notes(inputs, traces, single)
    choices = Choices([c.text for c in inputs], options, traces, sums, length=length, gold=gold, single=single,
                      meta=meta)
    if notes:
        listed = "; ".join(notes[:3]) + (f"; and {len(notes) - 3} more (each trace's warnings)" if len(notes) > 3
                                         else "")
        if strict:
            error = ValueError(f"strict=True: {listed}. End the prompt with a space or start the options with one "
                               "so that no token crosses the prompt's end (the error's .choices holds the result)")
            error.choices = choices
            raise error
        warnings.warn(f"{listed}. End the prompt with a space or start the options with one, or pass strict=True "
                      "to raise", UserWarning, stacklevel=user_stacklevel())
    return choices
