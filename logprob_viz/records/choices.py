"""The probability of given answers: `lv.Choices`, what ``runner.choose(prompt, options)`` returns.

For each prompt (one, or a row per prompt of a list) and each option, the option's tokens were
scored teacher-forced after the prompt; the record keeps each option's trace and the sum of its
tokens' logprobs, and derives the rest: ``probs`` is a softmax over the options of the sums
(``length="sum"``: the probability of the whole option, renormalised over the options given) or
of the length-normalised scores (``"per_token"``: the sum over the option's token count;
``"per_char"``: over its characters, lm-eval's ``acc_norm``; ``"per_byte"``: over its UTF-8
bytes, lm-eval's ``acc_bytes``; both without the option's leading whitespace, the separator
lm-eval's ``target_delimiter`` adds and does not count). The two differ for non-ASCII options
("Kraków" is 6 characters, 7 bytes). With ``gold`` (the right option of each prompt) it knows which
rows were answered right, and `calibration` bins the confidence against that.

The options are the same for every prompt (a list of texts), or each prompt's own (a list of lists,
as many options for each prompt). ``with_length`` changes the rule from the stored sums and
lengths, without scoring anything again.
"""

from __future__ import annotations

import numpy as np

from .calibration import calibration
from .corpus import Corpus
from .trace import Trace
from .trace_fields import is_int
from .viewable import Viewable, show

__all__ = ["Choices", "LENGTHS", "check_length", "option_bytes", "option_chars"]

# how options of different lengths are compared (the `length=` of runner.choose)
LENGTHS = ("sum", "per_token", "per_char", "per_byte")


def check_length(length) -> str:
    if length not in LENGTHS:
        raise ValueError(f"length must be one of {', '.join(map(repr, LENGTHS))} (how options of different lengths "
                         "compare: the whole option's logprob, per token, per character as lm-eval's acc_norm, per "
                         f"UTF-8 byte as its acc_bytes), got {length!r}")
    return length


def option_chars(option: str) -> int:
    """The characters `per_char` divides by: the option's characters (code points, Python's ``len``)
    without its leading whitespace, as lm-eval 0.4.13's acc_norm divides by ``len(choice)``, the choice
    without the ``target_delimiter`` (a space) put before it; at least 1."""
    return max(len(option.lstrip()), 1)


def option_bytes(option: str) -> int:
    """The bytes `per_byte` divides by: the option's UTF-8 bytes without its leading whitespace, as
    lm-eval 0.4.13's acc_bytes divides by ``len(choice.encode("utf-8"))``; at least 1."""
    return max(len(option.lstrip().encode("utf-8")), 1)


class Choices(Viewable):
    """Given options after one prompt or each of many: their logprobs, probabilities and traces.

    Made by ``runner.choose(prompt, options)``. For one prompt, ``logprobs`` and ``probs`` are
    dicts option -> float and ``traces`` a list (one trace per option); for a list of prompts, the
    dicts hold an array per option (one value per prompt), ``traces`` a list per prompt, and
    ``choices[i]`` is prompt ``i``'s own `Choices`. With each prompt's own options
    (``choose(prompts, options=[[...], [...]])``), ``logprobs`` and ``probs`` are a list of dicts, one
    per prompt; ``logprob_table`` and ``prob_table`` are (R, N) either way.

    Attributes
    ----------
    options : list of str, or list of lists of str
        The options as given: one list for every prompt, or a list per prompt (``per_prompt``).
    option_rows : list of lists of str
        Each prompt's options ([R][N]), whichever way they were given.
    prompts : list of str
        Each prompt's text (the chat-templated text for ``messages``).
    length : str
        What ``probs`` normalised: ``"sum"``, ``"per_token"``, ``"per_char"`` or ``"per_byte"``.
    gold : numpy int array [R] or None
        The index of each prompt's right option, when given.
    meta : dict
        Model, source, timing.
    """

    def __init__(self, prompts, options, traces, sums, *, length: str = "sum", gold=None, single: bool = False,
                 meta: dict | None = None):
        self.prompts = [str(p) for p in prompts]
        self.option_rows = option_rows_of(options, len(self.prompts))  # [R][N] each prompt's options
        self.per_prompt = not (options and all(isinstance(o, str) for o in options))
        self.trace_rows = [list(row) for row in traces]  # [R][N]
        n = len(self.option_rows[0]) if self.option_rows else 0
        self._sums = np.asarray(sums, dtype=np.float64).reshape(len(self.prompts), n)  # (R, N)
        if any(len(row) != n for row in self.trace_rows) or len(self.trace_rows) != len(self.prompts):
            raise ValueError("give one trace per prompt and option")
        if any(not isinstance(t, Trace) for row in self.trace_rows for t in row):
            raise TypeError("Choices holds Traces, one per prompt and option")
        self.length = check_length(length)
        self.gold = None if gold is None else check_gold(gold, self.option_rows, len(self.prompts))
        self._single = bool(single) and len(self.prompts) == 1
        self.meta = dict(meta or {})

    # -- numbers -------------------------------------------------------------------------

    @property
    def n_tokens(self) -> np.ndarray:
        """(R, N) how many tokens each option has after its prompt."""
        return np.array([[len(t) - t.prompt_len for t in row] for row in self.trace_rows], dtype=np.int64)

    @property
    def scores(self) -> np.ndarray:
        """(R, N) what ``probs`` is a softmax of: the sums, or the sums per token / character / byte."""
        if self.length == "per_token":
            if self.meta.get("tokens") is False:  # (lv.read_lm_eval: lm-eval keeps no tokens)
                raise ValueError(f"length='per_token' needs each option's tokens, which {self.meta.get('source')} "
                                 "did not record; use 'sum', 'per_char' or 'per_byte', or score the options again "
                                 "with runner.choose")
            return self._sums / self.n_tokens
        if self.length in ("per_char", "per_byte"):
            count = option_chars if self.length == "per_char" else option_bytes
            return self._sums / np.array([[count(o) for o in row] for row in self.option_rows], dtype=np.float64)
        return self._sums

    @property
    def options(self) -> list:
        """The options as given: a list of texts, or a list of texts per prompt (`per_prompt`)."""
        if self.per_prompt and not self._single:
            return [list(row) for row in self.option_rows]
        return list(self.option_rows[0]) if self.option_rows else []

    def with_length(self, length: str) -> Choices:
        """The same choices with probabilities by another `length` rule (``"sum"``, ``"per_token"``,
        ``"per_char"``, ``"per_byte"``): from the stored sums, token counts and option texts, with no
        forward pass (the traces are shared, not copied)."""
        return Choices(self.prompts, self.option_rows if self.per_prompt else self.option_rows[0], self.trace_rows,
                       self._sums, length=check_length(length), gold=self.gold, single=self._single,
                       meta=self.meta)

    @property
    def prob_table(self) -> np.ndarray:
        """(R, N) each row's softmax of `scores` over the options (rows sum to 1)."""
        scores = self.scores
        shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    @property
    def logprob_table(self) -> np.ndarray:
        """(R, N) each option's sum of token logprobs after its prompt."""
        return self._sums.copy()

    @property
    def logprobs(self) -> dict:
        """option -> the sum of its tokens' logprobs (a float; an array over the prompts for a list; a list
        of dicts, one per prompt, where each prompt has its own options)."""
        return self._by_option(self._sums)

    @property
    def probs(self) -> dict:
        """option -> its probability normalised over the options (a float, or an array over the prompts; a
        list of dicts, one per prompt, where each prompt has its own options)."""
        return self._by_option(self.prob_table)

    @property
    def predicted(self):
        """The most likely option (per prompt for a list)."""
        best = [row[j] for row, j in zip(self.option_rows, self.prob_table.argmax(axis=1), strict=True)]
        return best[0] if self._single else best

    @property
    def confidence(self):
        """The probability of the predicted option (per prompt for a list)."""
        top = self.prob_table.max(axis=1)
        return float(top[0]) if self._single else top

    @property
    def correct(self):
        """Whether the predicted option is the gold one (per prompt); None without gold."""
        if self.gold is None:
            return None
        right = self.prob_table.argmax(axis=1) == self.gold
        return bool(right[0]) if self._single else right

    @property
    def traces(self) -> list:
        """One trace per option (prompt + option, ``prompt_len`` marks the prompt); a list per prompt for a list."""
        return list(self.trace_rows[0]) if self._single else [list(row) for row in self.trace_rows]

    def _by_option(self, table: np.ndarray):
        if self._single:
            return {o: float(table[0, j]) for j, o in enumerate(self.option_rows[0])}
        if self.per_prompt:
            return [{o: float(table[r, j]) for j, o in enumerate(row)} for r, row in enumerate(self.option_rows)]
        return {o: table[:, j].copy() for j, o in enumerate(self.option_rows[0])}

    def calibration(self, bins: int = 10):
        """The reliability of the confidence against the gold answers (`lv.calibration`); needs ``gold``."""
        if self.gold is None:
            raise ValueError("calibration compares the confidence with the right answers: give them, "
                             "runner.choose(prompts, options, gold=[...])")
        return calibration(np.atleast_1d(self.confidence), np.atleast_1d(self.correct), bins=bins, items=self)

    # -- sequence and tables -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.prompts)

    def __getitem__(self, i) -> Choices:
        """Prompt ``i``'s own Choices (a slice or a list of rows gives a Choices of those rows)."""
        if is_int(i):
            rows = [range(len(self))[i]]
            single = True
        else:
            rows = list(range(len(self))[i]) if isinstance(i, slice) else [int(r) for r in i]
            single = False
        # a prompt's own options, or the options shared by all (one prompt's row is a plain list)
        if not self.per_prompt:
            options = self.option_rows[0]
        else:
            options = self.option_rows[rows[0]] if single else [self.option_rows[r] for r in rows]
        return Choices([self.prompts[r] for r in rows], options,
                       [self.trace_rows[r] for r in rows], self._sums[rows], length=self.length, single=single,
                       meta=self.meta, gold=None if self.gold is None else self.gold[rows])

    def to_pandas(self):
        """One row per prompt: prompt, a probability column per option (named by its text),
        predicted, confidence, and gold and correct when gold was given. Where each prompt has its own
        options, the options are numbered: ``option_0``, ``p_0``, ``option_1``, ``p_1``, ... (each
        option's text, then its probability), then predicted, confidence, gold and correct as texts."""
        import pandas as pd  # optional dependency: only the table needs it

        table = self.prob_table
        columns = {"prompt": self.prompts}
        for j in range(table.shape[1]):
            if self.per_prompt:
                columns[f"option_{j}"] = [row[j] for row in self.option_rows]
                columns[f"p_{j}"] = table[:, j]
            else:
                columns[self.option_rows[0][j]] = table[:, j]
        columns["predicted"] = [row[j] for row, j in zip(self.option_rows, table.argmax(axis=1), strict=True)]
        columns["confidence"] = table.max(axis=1)
        if self.gold is not None:
            columns["gold"] = [row[g] for row, g in zip(self.option_rows, self.gold, strict=True)]
            columns["correct"] = table.argmax(axis=1) == self.gold
        return pd.DataFrame(columns).rename_axis("item")

    def to_corpus(self):
        """An `lv.Corpus` with a trace per prompt (its predicted option's), labelled by the gold option
        (or the predicted one without gold), with predicted, confidence, gold and correct as metadata:
        the corpus view sorts and filters by them."""
        table = self.prob_table
        best = table.argmax(axis=1)
        metadata = []
        for r in range(len(self)):
            options = self.option_rows[r]
            row = {"index": r, "predicted": options[best[r]], "confidence": float(table[r, best[r]])}
            if self.gold is not None:
                row.update(gold=options[self.gold[r]], correct=bool(best[r] == self.gold[r]))
            metadata.append(row)
        labels = [m.get("gold", m["predicted"]) for m in metadata]
        return Corpus([self.trace_rows[r][best[r]] for r in range(len(self))], labels=labels, metadata=metadata,
                      meta={"mode": "choose", **self.meta})

    # -- display ---------------------------------------------------------------------------

    def view(self, **traits):
        """The choices view: the options as bars (per prompt), each opening its tokens in a LogprobView."""
        return show(self, "view", **traits)

    def __repr__(self) -> str:
        if self._single:
            shown = ", ".join(f"{o!r}: {p:.3f}" for o, p in self.probs.items())
            return f"<Choices {{{shown}}} length={self.length}>"
        right = "" if self.gold is None else f", accuracy={float(np.mean(self.correct)):.3f}"
        own = " (each prompt its own)" if self.per_prompt else ""
        return (f"<Choices of {len(self)} prompts x {self._sums.shape[1]} options{own}, "
                f"length={self.length}{right}>")


def option_rows_of(options, n: int) -> list[list[str]]:
    """Each of the `n` prompts' options: the same list for every prompt, or a list per prompt (as many
    options each)."""
    options = list(options)
    if not options or all(isinstance(o, str) for o in options):
        return [[str(o) for o in options] for _ in range(n)]
    rows = [[str(o) for o in row] for row in options]
    if len(rows) != n:
        raise ValueError(f"give one list of options per prompt: {n} prompts, {len(rows)} lists of options")
    if len({len(row) for row in rows}) > 1:
        raise ValueError("give every prompt the same number of options (the table has one column per option); "
                         f"the prompts have {sorted({len(row) for row in rows})} options")
    return rows


def check_gold(gold, option_rows: list[list[str]], n: int) -> np.ndarray:
    """Gold answers as option indices: an option's text or index per prompt (one value for one prompt)."""
    values = [gold] if isinstance(gold, (str, int, np.integer)) else list(gold)
    if len(values) != n:
        raise ValueError(f"give one gold answer per prompt: {n} prompts, {len(values)} gold answers")
    out = []
    for i, (g, options) in enumerate(zip(values, option_rows, strict=True)):
        if isinstance(g, str):
            if g not in options:
                raise ValueError(f"gold answer {i} is {g!r}, which is not one of the options {options!r}; "
                                 "give an option's text or its index")
            out.append(options.index(g))
        elif is_int(g) and 0 <= g < len(options):
            out.append(int(g))
        else:
            raise ValueError(f"gold answer {i} is {g!r}: give an option's text or its index (0 to {len(options) - 1})")
    return np.array(out, dtype=np.int64)
